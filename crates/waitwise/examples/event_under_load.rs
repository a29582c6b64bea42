//! Event ping-pong (two threads, two events) under several policies
//! against a plain futex hand-off, run after run in the same process, on
//! the machine as it is (run it beside other programs to see a busy
//! machine): round trips per second and CPU per round trip.
//!
//! ```text
//! cargo run -p waitwise --release --example event_under_load [-- --ms 300 --runs 5]
//! ```

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use waitwise::{Event, Policy};
use waitwise_platform::cpu_time::process_cpu_secs;
use waitwise_platform::futex::Futex;

fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

trait Pair: Send + Sync {
    fn wait(&self);
    fn notify(&self);
}

struct Ev(Event);
impl Pair for Ev {
    fn wait(&self) {
        self.0.wait();
    }
    fn notify(&self) {
        self.0.notify();
    }
}

/// A one-shot flag with futex sleep, as the peers' futex hand-off.
struct Fx(Futex);
impl Pair for Fx {
    fn wait(&self) {
        while self.0.value().swap(0, Ordering::Acquire) == 0 {
            self.0.wait(0, None);
        }
    }
    fn notify(&self) {
        self.0.value().store(1, Ordering::Release);
        self.0.wake_one();
    }
}

fn run(make: &dyn Fn() -> Box<dyn Pair>, ms: u64) -> (f64, f64) {
    let ping: Arc<dyn Pair> = Arc::from(make());
    let pong: Arc<dyn Pair> = Arc::from(make());
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU32::new(0));
    let responder = {
        let (ping, pong, stop) = (ping.clone(), pong.clone(), stop.clone());
        std::thread::spawn(move || loop {
            ping.wait();
            if stop.load(Ordering::Relaxed) {
                break;
            }
            pong.notify();
        })
    };
    let cpu0 = process_cpu_secs();
    let t = Instant::now();
    let mut n = 0u64;
    while t.elapsed() < Duration::from_millis(ms) {
        ping.notify();
        pong.wait();
        n += 1;
    }
    let wall = t.elapsed().as_secs_f64();
    let cpu = process_cpu_secs() - cpu0;
    stop.store(true, Ordering::Relaxed);
    ping.notify();
    responder.join().unwrap();
    count.fetch_add(1, Ordering::Relaxed);
    (n as f64 / wall, cpu * 1e9 / n.max(1) as f64)
}

/// `--hog`: a busy loop until killed.
fn hog() -> ! {
    let mut x = 0u64;
    loop {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}

fn main() {
    if std::env::args().any(|a| a == "--hog") {
        hog();
    }
    let hogs: Vec<std::process::Child> = (0..arg("--hogs", 0usize))
        .map(|_| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .arg("--hog")
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let ms = arg("--ms", 300u64);
    let runs = arg("--runs", 5usize);
    type Make = Box<dyn Fn() -> Box<dyn Pair>>;
    let contenders: Vec<(&str, Make)> = vec![
        (
            "futex hand-off",
            Box::new(|| Box::new(Fx(Futex::new(0))) as Box<dyn Pair>),
        ),
        (
            "Event default",
            Box::new(|| Box::new(Ev(Event::new())) as Box<dyn Pair>),
        ),
        (
            "Event s/b/0.54",
            Box::new(|| Box::new(Ev(Event::with_policy(Policy::two_phase(0.54)))) as Box<dyn Pair>),
        ),
        (
            "Event /b/0",
            Box::new(|| Box::new(Ev(Event::with_policy(Policy::always_block()))) as Box<dyn Pair>),
        ),
    ];
    use waitwise::policy::idle_extension::{force_demand, CpuDemand};
    let mut results: Vec<Vec<(f64, f64)>> = vec![Vec::new(); contenders.len()];
    let mut no_ext = Vec::new();
    for _ in 0..runs {
        for (i, (_, make)) in contenders.iter().enumerate() {
            results[i].push(run(make.as_ref(), ms));
        }
        force_demand(Some(CpuDemand::Busy));
        no_ext.push(run(contenders[1].1.as_ref(), ms));
        force_demand(None);
    }
    results.push(no_ext);
    // What the default's objects learned, in a last run kept for a look.
    let ping = Event::new();
    let pong = Event::new();
    {
        let stop = AtomicBool::new(false);
        std::thread::scope(|sc| {
            sc.spawn(|| loop {
                ping.wait();
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                pong.notify();
            });
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(ms) {
                ping.notify();
                pong.wait();
            }
            stop.store(true, Ordering::Relaxed);
            ping.notify();
        });
    }
    for (name, e) in [("ping", &ping), ("pong", &pong)] {
        let s = e.adaptive_summary();
        eprintln!(
            "{name}: arm {} ({}), B {:.0} ns, scores {:?}, longest limit {:.0} ns",
            s.arm(),
            waitwise::policy::adaptive::arm_name(s.arm()),
            s.block_ns(waitwise::policy::block_cost::block_ns()),
            s.scores(),
            s.longest_poll_limit_ns(waitwise::policy::block_cost::block_ns())
        );
    }
    println!(
        "{:<18} {:>12} {:>14}",
        "contender", "trips/s", "cpu ns/trip"
    );
    let names: Vec<&str> = contenders
        .iter()
        .map(|c| c.0)
        .chain(["Event default, no extension"])
        .collect();
    for (i, name) in names.iter().enumerate() {
        let mut r = results[i].clone();
        r.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (tp, cpu) = r[r.len() / 2];
        println!("{name:<28} {tp:>12.0} {cpu:>14.0}");
    }
    for mut h in hogs {
        let _ = h.kill();
        let _ = h.wait();
    }
}
