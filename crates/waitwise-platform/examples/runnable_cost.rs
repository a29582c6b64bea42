//! What each candidate "is a CPU idle?" signal costs per read, for
//! `waitwise::policy::idle_extension`: the machine's runnable count from
//! `/proc/loadavg` (the one used), the calling thread's involuntary
//! context switches (`getrusage(RUSAGE_THREAD)`), this process's thread
//! count from `/proc/self/stat`, and one atomic read-modify-write (what a
//! process-wide count kept at block/unblock would add per block).
//!
//! Then its accuracy: the runnable count read while 0, 1, 2, ... threads
//! of this process spin (the reader is one more), up to the CPUs online;
//! on a quiet machine the count follows the spinners plus one, and
//! "fits" holds up to `CPUs - 1` spinners.
//!
//! `cargo run --release -p waitwise-platform --example runnable_cost`
//! (medians of 11 batches of 2,000 reads; on a loaded machine they grow
//! with the load: run it on a quiet one).

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;
use waitwise_platform::runnable::{online_cpus, runnable_threads};

const BATCHES: usize = 11;
const READS: u32 = 2_000;

/// The median over batches of the mean ns per call of `f`.
fn median_ns(mut f: impl FnMut()) -> f64 {
    let mut per: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..READS {
                f();
            }
            t.elapsed().as_nanos() as f64 / f64::from(READS)
        })
        .collect();
    per.sort_by(f64::total_cmp);
    per[BATCHES / 2]
}

fn main() {
    println!(
        "runnable now: {:?} of {} CPUs online",
        runnable_threads(),
        online_cpus()
    );
    let loadavg = median_ns(|| {
        std::hint::black_box(runnable_threads());
    });
    let rusage = median_ns(|| {
        // SAFETY: an all-zero rusage is a valid value to overwrite.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a valid writable rusage.
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        std::hint::black_box(ru.ru_nivcsw);
    });
    // SAFETY: NUL-terminated literal path.
    let fd = unsafe {
        libc::open(
            c"/proc/self/stat".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    let stat = median_ns(|| {
        let mut buf = [0u8; 512];
        // SAFETY: `buf` is writable for its length; a bad `fd` only fails.
        let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        std::hint::black_box(n);
    });
    let counter = AtomicU32::new(0);
    let rmw = median_ns(|| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    println!("/proc/loadavg nr_running (pread, kept fd): {loadavg:>8.0} ns");
    println!("getrusage(RUSAGE_THREAD) ru_nivcsw:        {rusage:>8.0} ns");
    println!("/proc/self/stat num_threads (pread):       {stat:>8.0} ns");
    println!("atomic read-modify-write (uncontended):    {rmw:>8.1} ns");
    accuracy();
}

/// The runnable count (median of 101 reads 1 ms apart) with `k` spinning
/// threads, for `k` from 0 to the CPUs online.
fn accuracy() {
    use std::sync::atomic::AtomicBool;
    use waitwise_platform::runnable::fits;
    let cpus = online_cpus();
    for k in 0..=cpus {
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..k {
                s.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            let mut counts: Vec<u32> = (0..101)
                .filter_map(|_| {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    runnable_threads()
                })
                .collect();
            stop.store(true, Ordering::Relaxed);
            counts.sort_unstable();
            if let Some(&median) = counts.get(counts.len() / 2) {
                let idle = counts.iter().filter(|&&n| fits(n, cpus)).count();
                println!(
                    "{k} spinning + the reader: runnable median {median} (expected {}), \
                     'fits on {cpus} CPUs' in {idle}/{} reads",
                    k + 1,
                    counts.len()
                );
            }
        });
    }
}
