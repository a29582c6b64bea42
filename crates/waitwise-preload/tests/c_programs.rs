//! C programs under `tests/c/` run with `LD_PRELOAD=libwaitwise_preload.so`:
//! POSIX behavior of every replaced function, under every policy.

mod common;

use common::{
    compile, compile_with, native, preload_so, preloaded, read_profile, run_ok, run_ok_within,
    scratch_dir, total_waits,
};
use std::process::Command;

/// Every `WAITWISE_POLICY`; the stress programs run under each.
const POLICIES: [&str; 4] = ["two-phase", "spin", "block", "randomized"];

/// Runs `program MODE` under each policy.
fn under_every_policy(program: &str, args: &[&str]) {
    under_policies(program, args, &POLICIES);
}

fn under_policies(program: &str, args: &[&str], policies: &[&str]) {
    let exe = compile(program);
    for &policy in policies {
        let out = run_ok(preloaded(&exe).args(args).env("WAITWISE_POLICY", policy));
        assert!(
            out.stderr.is_empty(),
            "{program} {args:?} under {policy}: unexpected stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn every_function_binds_to_the_interposer() {
    // nm -D shows versioned references such as pthread_cond_wait@GLIBC_2.3.2
    // in the program; they must resolve to the preloaded object.
    let out = run_ok(&mut preloaded(compile("binding")));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "bound");
}

#[test]
fn mutex_mutual_exclusion_4_threads() {
    under_every_policy("mutex", &["exclusion"]);
}

#[test]
fn mutex_errorcheck() {
    run_ok(preloaded(compile("mutex")).arg("errorcheck"));
}

#[test]
fn mutex_recursive() {
    run_ok(preloaded(compile("mutex")).arg("recursive"));
}

#[test]
fn mutex_timed_lock_times_out_or_not() {
    under_every_policy("mutex", &["timed"]);
}

#[test]
fn mutex_static_initializers() {
    run_ok(preloaded(compile("mutex")).arg("static"));
}

#[test]
fn lock_owner_ids_are_glibcs_even_after_a_raw_clone() {
    // The ids glibc itself records (checked natively), which a program
    // cloned without glibc's fork reads back and corrects (Chromium's
    // zygote does, for every renderer): tests/c/owner_id.c.
    let exe = compile("owner_id");
    for mut cmd in [native(&exe), preloaded(&exe)] {
        let out = run_ok(&mut cmd);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "owner ids as glibc's"
        );
    }
    under_every_policy("owner_id", &[]);
}

#[test]
fn c11_mutexes_and_condition_variables_under_every_policy() {
    // C11's mtx_* and cnd_*, which glibc runs on its internal pthread entry
    // points: the interposer defines them, and their waits are its own.
    // glibc passes the program too: it checks C11's behavior, not ours.
    run_ok(&mut native(compile("c11")));
    under_every_policy("c11", &[]);
    let p = scratch_dir().join(format!("profile-c11-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&p);
    run_ok(preloaded(compile("c11")).env("WAITWISE_PROFILE", &p));
    let objects = read_profile(&p);
    for kind in ["mutex", "cond"] {
        assert!(
            total_waits(objects.iter().filter(|o| o["kind"] == kind)) > 0,
            "no {kind} waits recorded for the C11 objects: {objects:?}"
        );
    }
    let _ = std::fs::remove_file(&p);
}

#[test]
fn cond_producer_consumer() {
    under_every_policy("cond", &["producer-consumer"]);
}

#[test]
fn cond_broadcast() {
    run_ok(preloaded(compile("cond")).arg("broadcast"));
}

#[test]
fn cond_turns_with_more_waiters_than_cpus() {
    // 8 threads take turns through one mutex and condvar: on 2 CPUs the
    // waiters poll by yield (crowding).
    under_policies(
        "cond",
        &["turns", "2000"],
        &["two-phase", "block", "randomized"],
    );
    // Under spin they poll with PAUSE, up to SPIN_TIMEOUT per wait.
    under_policies("cond", &["turns", "50"], &["spin"]);
}

#[test]
fn programs_with_real_time_threads() {
    // SCHED_FIFO threads poll by yield (a PAUSE poller there keeps its CPU
    // from every thread of its priority queued behind it): turn-taking,
    // semaphore hand-offs and a barrier with more parties than 2 CPUs.
    // Skipped where real-time priority is refused (no CAP_SYS_NICE).
    let allowed = std::process::Command::new("chrt")
        .args(["-f", "1", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !allowed {
        eprintln!("skipped: `chrt -f 1` is refused here");
        return;
    }
    for (program, args) in [
        ("cond", &["turns", "2000"][..]),
        ("sem", &[][..]),
        ("barrier", &["4", "10000"][..]),
    ] {
        let exe = compile(program);
        run_ok_within(
            preloaded("chrt").args(["-f", "1"]).arg(&exe).args(args),
            std::time::Duration::from_secs(300),
        );
    }
}

#[test]
fn cond_timed_waits_both_clocks() {
    under_every_policy("cond", &["timed"]);
}

#[test]
fn cond_wait_without_the_errorcheck_mutex_is_eperm() {
    run_ok(preloaded(compile("cond")).arg("not-owner"));
}

#[test]
fn barrier_one_serial_thread_per_episode() {
    // 10,000 episodes of 4 threads (oversubscribed on 2 CPUs: waiters
    // poll by yield) and of 2 threads (waiters poll with PAUSE).
    under_every_policy("barrier", &["2", "10000"]);
    under_policies(
        "barrier",
        &["4", "10000"],
        &["two-phase", "block", "randomized"],
    );
    // Spinning while oversubscribed loses up to SPIN_TIMEOUT per episode.
    under_policies("barrier", &["4", "500"], &["spin"]);
}

#[test]
fn barrier_with_more_threads_than_parties() {
    // Threads arrive for the next episode while its predecessor completes:
    // an arrival there was lost (an episode let COUNT + 1 threads through,
    // and the last thread then had no partner) or left with the wrong
    // episode. Both failed within 200,000 calls on 2 CPUs under most
    // policies before the arrival counter and episode shared one word.
    under_every_policy("barrier_reuse", &["2", "3", "200000"]);
    under_every_policy("barrier_reuse", &["2", "8", "200000"]);
    // Three parties on 2 CPUs: no spinning (see the test above).
    under_policies(
        "barrier_reuse",
        &["3", "7", "30000"],
        &["two-phase", "block", "randomized"],
    );
}

#[test]
fn semaphores() {
    under_every_policy("sem", &[]);
}

#[test]
fn semaphores_posted_from_signal_handlers() {
    // sem_post is async-signal-safe: private and process-shared
    // (forwarded) semaphores posted from handlers that interrupt a thread
    // in malloc; glibc passes it too.
    run_ok(native(compile("sem")).arg("handler-post"));
    under_every_policy("sem", &["handler-post"]);
}

#[test]
fn semaphore_waits_end_with_eintr_on_a_signal() {
    // glibc's behaviour (the kernel's rule for an untimed / timed futex
    // wait): sem_wait fails with EINTR unless the handler has SA_RESTART,
    // sem_timedwait always. The interposer retried and never returned.
    under_every_policy("sem", &["eintr"]);
}

#[test]
fn spinlocks() {
    run_ok(&mut preloaded(compile("spin")));
}

#[test]
fn spinlock_words_hold_glibcs_values() {
    // The lock word after init, lock, trylock and unlock, private and
    // process-shared: the interposer's values are glibc's, which the same
    // program prints natively.
    let exe = compile("spin");
    let glibc = run_ok(native(&exe).arg("values")).stdout;
    let ours = run_ok(preloaded(&exe).arg("values")).stdout;
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&glibc),
        "lock word values under the interposer (left) and glibc (right)"
    );
}

#[test]
fn process_shared_spinlock_between_a_preloaded_and_a_native_process() {
    // Two processes take turns on one spin lock in shared memory, one
    // under the interposer and one on glibc's functions, each way round;
    // different lock word values make each see the other's free lock as
    // held (a hang, turned into a failure by the limit).
    let exe = compile("spin");
    let limit = std::time::Duration::from_secs(60);
    let preloaded_parent = run_ok_within(preloaded(&exe).arg("mixed"), limit);
    let native_parent = run_ok_within(
        native(&exe)
            .arg("mixed")
            .env("SPIN_CHILD_PRELOAD", preload_so()),
        limit,
    );
    for out in [preloaded_parent, native_parent] {
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
    }
}

#[test]
fn edge_case_results_are_glibcs() {
    // tests/c/edge_cases.c prints a line per call: destroying a held
    // rwlock, barrier counts near the limit, a contended timed mutex lock
    // with a bad or negative time, timed semaphore waits with a bad time
    // or clock on an available and an empty semaphore. The interposer's
    // lines must be glibc's.
    let exe = compile("edge_cases");
    let glibc = String::from_utf8(run_ok(&mut native(&exe)).stdout).unwrap();
    let ours = String::from_utf8(run_ok(&mut preloaded(&exe)).stdout).unwrap();
    let differ: Vec<String> = glibc
        .lines()
        .zip(ours.lines())
        .filter(|(g, o)| g != o)
        .map(|(g, o)| format!("glibc:       {g}\ninterposer:  {o}"))
        .collect();
    assert!(differ.is_empty(), "results differ:\n{}", differ.join("\n"));
    assert_eq!(glibc.lines().count(), ours.lines().count(), "{ours}");
}

#[test]
fn process_shared_robust_and_pi_objects_are_forwarded() {
    run_ok(&mut preloaded(compile("pshared")));
}

#[test]
fn profile_records_every_kind_and_parses() {
    let dir = scratch_dir();
    let path = dir.join(format!("profile-c-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    for (program, args) in [
        ("cond", vec!["producer-consumer"]),
        ("barrier", vec!["2", "1000"]),
        // Read and write locks that time out under a holder: waits that
        // sleep.
        ("rwlock", vec!["timed"]),
    ] {
        let p = path.with_extension(format!("{program}.json"));
        run_ok(
            preloaded(compile(program))
                .args(&args)
                .env("WAITWISE_PROFILE", &p)
                .env("WAITWISE_BLOCK_NS", "20000"),
        );
        let objects = read_profile(&p);
        let kinds: Vec<&str> = objects.iter().filter_map(|o| o["kind"].as_str()).collect();
        assert!(kinds.contains(&program), "{program}: kinds {kinds:?}");
        let of_kind = || objects.iter().filter(|o| o["kind"] == program);
        assert!(total_waits(of_kind()) > 0, "{program}: {objects:?}");
        if program == "rwlock" {
            let blocks: u64 = of_kind().filter_map(|o| o["blocks"].as_u64()).sum();
            assert!(
                blocks > 0,
                "no rwlock wait slept, though some timed out: {objects:?}"
            );
        }
        // The B it started from, and the B in force at exit: the learned
        // one once enough wake-ups were sampled, else still the start.
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["block_start_ns"], 20000, "{v}");
        assert_eq!(v["block_start_source"], "environment", "{v}");
        match v["block_learned_ns"].as_u64() {
            Some(learned) => {
                assert_eq!(v["block_cost_ns"].as_u64(), Some(learned), "{v}");
                assert!(v["block_learned_samples"].as_u64().unwrap() >= 16, "{v}");
            }
            None => assert_eq!(v["block_cost_ns"], 20000, "{v}"),
        }
    }
}

#[test]
fn profile_off_writes_nothing() {
    let path = scratch_dir().join(format!("profile-off-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    run_ok(preloaded(compile("barrier")).args(["2", "100"]));
    assert!(!path.exists());
}

#[test]
fn process_shared_condvar_with_a_native_mutex_keeps_glibc_owner_field() {
    // glibc's forwarded condvar re-locks the native mutex internally and
    // asserts `__owner == 0`; the interposer's unlock must clear it.
    under_every_policy("pshared_cond_private_mutex", &[]);
}

#[test]
fn rwlock_many_readers_hold_it_at_once() {
    under_every_policy("rwlock", &["readers"]);
}

#[test]
fn rwlock_writer_exclusion_4_threads() {
    under_every_policy("rwlock", &["exclusion"]);
}

#[test]
fn rwlock_mixed_readers_and_writers_every_variant() {
    under_every_policy("rwlock", &["mixed"]);
}

#[test]
fn rwlock_trylock_is_ebusy() {
    run_ok(preloaded(compile("rwlock")).arg("try"));
}

#[test]
fn rwlock_timed_and_clock_variants_time_out_or_succeed() {
    under_every_policy("rwlock", &["timed"]);
}

#[test]
fn rwlock_edeadlk_after_own_write_lock() {
    run_ok(preloaded(compile("rwlock")).arg("edeadlk"));
}

#[test]
fn rwlock_unlock_not_held_is_eperm() {
    run_ok(preloaded(compile("rwlock")).arg("eperm"));
}

#[test]
fn rwlock_reader_preferring_recursive_read_lock_does_not_deadlock() {
    under_every_policy("rwlock", &["recursive"]);
}

#[test]
fn rwlock_writer_preferring_kind_holds_new_readers_back() {
    under_every_policy("rwlock", &["writer-preferring"]);
}

#[test]
fn rwlock_static_initializers() {
    run_ok(preloaded(compile("rwlock")).arg("static"));
}

#[test]
fn rwlock_process_shared_is_forwarded() {
    run_ok(preloaded(compile("rwlock")).arg("pshared"));
}

#[test]
fn rwlock_functions_bind_to_the_interposer() {
    let out = run_ok(preloaded(compile("rwlock")).arg("binding"));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "bound");
}

#[test]
fn rwlock_reader_count_overflow_is_eagain() {
    run_ok(preloaded(compile("rwlock")).arg("overflow"));
}

#[test]
fn rwlock_forked_child_records_its_own_thread_id() {
    run_ok(preloaded(compile("rwlock")).arg("fork-tid"));
}

#[test]
fn rwlock_unwound_waiting_writer_lets_readers_in() {
    // A writer waiting on a writer-preferring lock keeps new readers out;
    // ended by its signal handler's pthread_exit or by an asynchronous
    // cancellation, it must stop doing so (glibc keeps counting it).
    for mode in ["unwound-writer-signal", "unwound-writer-async"] {
        under_every_policy("rwlock", &[mode]);
    }
}

/// The lines of `stderr` the interposer printed (they start `waitwise:`).
fn interposer_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.starts_with("waitwise:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn thread_sanitizer_behind_the_interposer_is_told_to_come_first() {
    // gcc's ThreadSanitizer runtime is a shared object (libtsan, which
    // comes with gcc) that the program loads after the preloaded
    // interposer: its interceptors never see a lock operation, so the
    // interposer says so at load. Preloaded first, or linked into the
    // executable, the runtime's interceptors come first and call the
    // interposer: no warning, and no race reported.
    let behind = [
        "ThreadSanitizer's runtime is loaded after the interposer",
        "LD_PRELOAD=libtsan.so.2:libwaitwise_preload.so",
    ];
    let dynamic = compile_with("cond", &["-fsanitize=thread"]);
    let out = preloaded(&dynamic)
        .arg("producer-consumer")
        .output()
        .expect("run the ThreadSanitizer program");
    let lines = interposer_lines(&out.stderr);
    assert!(
        lines.len() == 1 && behind.iter().all(|p| lines[0].contains(p)),
        "expected the one warning, got {lines:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let runtime = Command::new(&cc)
        .arg("-print-file-name=libtsan.so")
        .output()
        .expect("ask the compiler for libtsan");
    let runtime = String::from_utf8_lossy(&runtime.stdout).trim().to_string();
    let first = format!("{runtime}:{}", preload_so().display());
    let linked = compile_with("cond", &["-fsanitize=thread", "-static-libtsan"]);
    for (exe, preload) in [
        (&dynamic, first),
        (&linked, preload_so().display().to_string()),
    ] {
        let out = run_ok(
            preloaded(exe)
                .arg("producer-consumer")
                .env("LD_PRELOAD", &preload),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            interposer_lines(&out.stderr).is_empty() && !stderr.contains("data race"),
            "{} with LD_PRELOAD={preload}:\n{stderr}",
            exe.display()
        );
    }
}
