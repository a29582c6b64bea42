//! Pinning the calling thread. Every test runs in its own spawned thread so
//! that narrowing the mask cannot leak into other tests.

use std::thread;

use waitwise_platform::affinity::{
    allowed_cpus, current_cpu, pin_current_thread, process_cpu_count, process_cpus,
    process_cpus_count, set_current_thread_affinity, AffinityError, CPU_SETSIZE,
};

/// Run `f` on a fresh thread and propagate its panic.
fn on_new_thread(f: impl FnOnce() + Send + 'static) {
    thread::spawn(f).join().unwrap();
}

#[test]
fn allowed_is_nonempty_and_sorted() {
    on_new_thread(|| {
        let allowed = allowed_cpus().unwrap();
        assert!(!allowed.is_empty());
        assert!(allowed.windows(2).all(|w| w[0] < w[1]));
    });
}

#[test]
fn pin_to_each_allowed_cpu() {
    on_new_thread(|| {
        let allowed = allowed_cpus().unwrap();
        for &cpu in &allowed {
            set_current_thread_affinity(&allowed).unwrap();
            pin_current_thread(cpu).unwrap();
            assert_eq!(allowed_cpus().unwrap(), [cpu]);
            // Pinned: the scheduler must have moved us there.
            assert_eq!(current_cpu(), Some(cpu));
        }
        set_current_thread_affinity(&allowed).unwrap();
        assert_eq!(allowed_cpus().unwrap(), allowed);
    });
}

#[test]
fn pin_out_of_range_fails() {
    on_new_thread(|| {
        let before = allowed_cpus().unwrap();
        for cpu in [CPU_SETSIZE, 100_000, usize::MAX] {
            let err = pin_current_thread(cpu).unwrap_err();
            assert!(
                matches!(err, AffinityError::OutOfRange { cpu: c } if c == cpu),
                "{err:?}"
            );
        }
        assert_eq!(
            allowed_cpus().unwrap(),
            before,
            "failed pin changed the mask"
        );
    });
}

#[test]
fn pin_outside_current_mask_fails() {
    on_new_thread(|| {
        let allowed = allowed_cpus().unwrap();
        if allowed.len() < 2 {
            eprintln!("skipped: needs two allowed CPUs");
            return;
        }
        // After pinning to the first CPU, the second exists but is no
        // longer in this thread's mask.
        pin_current_thread(allowed[0]).unwrap();
        let err = pin_current_thread(allowed[1]).unwrap_err();
        match err {
            AffinityError::NotAllowed { cpu, allowed: now } => {
                assert_eq!(cpu, allowed[1]);
                assert_eq!(now, [allowed[0]]);
            }
            other => panic!("unexpected error {other:?}"),
        }
        assert_eq!(allowed_cpus().unwrap(), [allowed[0]]);
    });
}

#[test]
fn set_affinity_rejects_bad_input() {
    on_new_thread(|| {
        assert!(matches!(
            set_current_thread_affinity(&[]),
            Err(AffinityError::Empty)
        ));
        assert!(matches!(
            set_current_thread_affinity(&[0, 100_000]),
            Err(AffinityError::OutOfRange { cpu: 100_000 })
        ));
    });
}

#[test]
fn set_affinity_to_unusable_cpus_is_an_os_error() {
    on_new_thread(|| {
        let allowed = allowed_cpus().unwrap();
        // A CPU number below CPU_SETSIZE that no machine here has online.
        let absent = CPU_SETSIZE - 1;
        if allowed.contains(&absent) {
            return;
        }
        let err = set_current_thread_affinity(&[absent]).unwrap_err();
        assert!(matches!(err, AffinityError::Os { .. }), "{err:?}");
        assert_eq!(allowed_cpus().unwrap(), allowed);
    });
}

/// A worker that pinned itself still reads the process's CPUs (the main
/// thread's mask, which no test narrows): a pinned first caller must not
/// make the whole process look like one CPU.
#[test]
fn a_pinned_thread_still_reads_the_process_cpus() {
    let process = process_cpus().unwrap();
    let count = process_cpu_count();
    assert!(count >= 1);
    assert!(count <= process.len());
    on_new_thread(move || {
        let allowed = allowed_cpus().unwrap();
        pin_current_thread(allowed[0]).unwrap();
        assert_eq!(allowed_cpus().unwrap(), [allowed[0]]);
        assert_eq!(process_cpus().unwrap(), process);
        assert_eq!(process_cpus_count(), Some(process.len()));
        assert_eq!(process_cpu_count(), count);
    });
}
