// Node.js under the interposer: libuv's thread pool (crypto and zlib work
// handed to its threads through a pthread mutex, condition variable and
// semaphore), then worker threads with a timed Atomics.wait. Any wrong
// result throws and the process exits non-zero; "done" at the end.
'use strict';
const assert = require('assert');
const crypto = require('crypto');
const zlib = require('zlib');
const { Worker } = require('worker_threads');

function pbkdf2(i) {
  return new Promise((resolve, reject) =>
    crypto.pbkdf2('p' + i, 's', 2000, 32, 'sha256', (e, k) => (e ? reject(e) : resolve(k))));
}

function gzipRoundTrip(buf) {
  return new Promise((resolve, reject) =>
    zlib.gzip(buf, (e, z) => (e ? reject(e) : zlib.gunzip(z, (e2, b) => (e2 ? reject(e2) : resolve(b))))));
}

function worker() {
  const code = `
    const { parentPort } = require('worker_threads');
    const word = new Int32Array(new SharedArrayBuffer(4));
    const t0 = Date.now();
    const r = Atomics.wait(word, 0, 0, 50);
    let s = 0;
    for (let i = 0; i < 1e6; i++) s += i;
    parentPort.postMessage({ r, waited: Date.now() - t0, s });`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true });
    w.on('message', resolve);
    w.on('error', reject);
  });
}

(async () => {
  const keys = await Promise.all(Array.from({ length: 64 }, (_, i) => pbkdf2(i)));
  assert.strictEqual(new Set(keys.map((k) => k.toString('hex'))).size, 64);
  console.log('ok thread pool: 64 pbkdf2');
  const buf = crypto.randomBytes(4 << 20);
  const back = await Promise.all(Array.from({ length: 16 }, () => gzipRoundTrip(buf)));
  back.forEach((b) => assert.ok(b.equals(buf)));
  console.log('ok thread pool: 16 gzip round trips of 4 MiB');
  const results = await Promise.all(Array.from({ length: 8 }, worker));
  for (const m of results) {
    assert.strictEqual(m.r, 'timed-out');
    assert.ok(m.waited >= 49, `Atomics.wait(50) returned after ${m.waited} ms`);
    assert.strictEqual(m.s, 499999500000);
  }
  console.log('ok 8 worker threads with a timed Atomics.wait');
  console.log('done');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
