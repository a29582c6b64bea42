//! `waitwise probe` end to end: the documented JSON keys, and environment
//! errors reported with the variable's name.

use std::process::Command;

fn waitwise() -> Command {
    Command::new(env!("CARGO_BIN_EXE_waitwise"))
}

#[test]
fn probe_json_has_the_stable_keys() {
    let out = waitwise()
        .args(["probe", "--json"])
        .env_remove("WAITWISE_DISABLE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let get = |path: &str| {
        path.split('.')
            .try_fold(&v, |node, key| node.get(key))
            .unwrap_or_else(|| panic!("missing key {path}"))
    };
    for key in ["cpu.model", "cpu.vendor"] {
        assert!(get(key).is_string(), "{key}");
    }
    for key in [
        "features.waitpkg",
        "features.monitorx",
        "features.invariant_tsc",
    ] {
        assert!(get(key).is_boolean(), "{key}");
    }
    for key in [
        "topology.cpus",
        "topology.cores",
        "topology.packages",
        "topology.numa_nodes",
        "clock.tsc_hz",
        "clock.read_overhead_ns",
        "costs.pause_ns",
        "costs.yield_ns",
        "costs.futex_wake_no_waiter_ns",
        "costs.block_ns",
    ] {
        assert!(get(key).as_f64().is_some_and(|x| x >= 0.0), "{key}");
    }
    // Round trips are numbers, or null when the partner thread could not run.
    for key in ["costs.spin_round_trip_ns", "costs.futex_round_trip_ns"] {
        assert!(get(key).is_number() || get(key).is_null(), "{key}");
    }
    assert!(get("topology.smt_siblings").is_array());
    // How far the measured B can be trusted.
    let stability = get("costs.block_stability");
    assert!(stability["measurements"]
        .as_array()
        .is_some_and(|m| !m.is_empty()));
    assert!(stability["spread"].as_f64().is_some_and(|s| s >= 1.0));
    assert!(stability["instability"].is_null() || stability["instability"].is_string());
    assert!(get("costs.block_ns").as_f64().unwrap() > 0.0);
    for kind in ["producer-consumer", "barrier", "mutex", "unknown"] {
        assert!(
            get("policy.poll_limit_ns").get(kind).is_some(),
            "poll limit for {kind}"
        );
    }
    // Where woken threads ran: counts, or null on one allowed CPU.
    let placement = get("wake_placement");
    if !placement.is_null() {
        let counted = placement["counted"].as_u64().unwrap();
        let beside = placement["beside_waker"].as_u64().unwrap();
        assert!(
            0 < counted && counted <= 16 && beside <= counted,
            "{placement}"
        );
    }
    let mechanisms = get("mechanisms").as_object().unwrap();
    for name in [
        "spin", "pause", "backoff", "yield", "block", "umwait", "tpause", "mwaitx",
    ] {
        let m = &mechanisms[name];
        assert!(m["available"].is_boolean(), "{name}");
        if m["available"] == false {
            assert!(m["fallback"].is_string(), "{name} has no fallback");
        }
    }
    // The CPU count agrees with the kernel's list of online CPUs.
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cpus = waitwise_platform::topology::parse_cpu_list(&online)
        .unwrap()
        .len() as u64;
    assert_eq!(get("topology.cpus").as_u64(), Some(cpus));
}

#[test]
fn probe_text_says_what_is_not_available() {
    let out = waitwise().arg("probe").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "B measured now",
        "B started from",
        "B learned",
        "B in force",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    let f = waitwise_platform::features::cpu();
    if !f.waitpkg {
        assert!(
            text.contains("not available on this CPU: CPU lacks WAITPKG"),
            "{text}"
        );
    }
    if !f.monitorx {
        assert!(
            text.contains("not available on this CPU: CPU lacks MONITORX"),
            "{text}"
        );
    }
}

/// A bad `WAITWISE_DISABLE` is treated as every other variable: one line
/// on stderr, the default (nothing disabled), and the command runs on.
#[test]
fn unknown_disable_name_warns_once_and_disables_nothing() {
    let run = |disable: Option<&str>| {
        let mut cmd = waitwise();
        cmd.args(["probe", "--json"]).env_remove("WAITWISE_DISABLE");
        if let Some(v) = disable {
            cmd.env("WAITWISE_DISABLE", v);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (String::from_utf8_lossy(&out.stderr).into_owned(), v)
    };
    let (err, bad) = run(Some("umwait,warp"));
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("WAITWISE_DISABLE"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    for part in [
        "\"umwait,warp\"",
        "\"warp\"",
        "umwait, tpause, mwaitx or all",
        "nothing disabled",
    ] {
        assert!(lines[0].contains(part), "{part}: {err}");
    }
    let errors = bad["env_errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0]
            .as_str()
            .map(|e| format!("waitwise: {e}"))
            .as_deref(),
        Some(lines[0])
    );
    let (_, unset) = run(None);
    for name in ["umwait", "tpause", "mwaitx"] {
        assert_eq!(
            bad["mechanisms"][name]["available"], unset["mechanisms"][name]["available"],
            "{name}: the default disables nothing"
        );
    }
}

#[test]
fn disabling_forces_the_fallback_in_the_report() {
    let out = waitwise()
        .args(["probe", "--json"])
        .env("WAITWISE_DISABLE", "all")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for name in ["umwait", "tpause", "mwaitx"] {
        assert_eq!(v["mechanisms"][name]["available"], false, "{name}");
    }
}

#[test]
fn malformed_overrides_are_rejected_with_the_variable_name() {
    let vars = [
        ("WAITWISE_POLICY", "fastest"),
        ("WAITWISE_ALPHA", "lots"),
        ("WAITWISE_BLOCK_NS", "-3"),
        ("WAITWISE_DISABLE", "foo"),
    ];
    let out = waitwise()
        .args(["probe", "--json"])
        .envs(vars)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "a bad value keeps the default, it does not stop the program"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for (var, value) in vars {
        let lines: Vec<&str> = err.lines().filter(|l| l.contains(var)).collect();
        assert_eq!(lines.len(), 1, "one line for {var}:\n{err}");
        assert!(lines[0].contains(&format!("{value:?}")), "{err}");
        assert!(lines[0].contains("using the default"), "{err}");
    }
    assert_eq!(err.lines().count(), vars.len(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(v["costs"]["block_start_source"], "environment");
    let errors: Vec<&str> = v["env_errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(errors.len(), vars.len(), "{errors:?}");
    for ((var, _), e) in vars.iter().zip(&errors) {
        assert!(e.starts_with(var), "{errors:?}");
    }
}

#[test]
fn block_ns_override_is_where_b_starts() {
    let out = waitwise()
        .args(["probe", "--json"])
        .env("WAITWISE_BLOCK_NS", "12345")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &v["costs"];
    assert_eq!(c["block_start_ns"], 12345.0);
    assert_eq!(c["block_start_source"], "environment");
    // In force: the start, or what the probe's own wake-ups taught.
    match c["block_source"].as_str().unwrap() {
        "environment" => assert_eq!(c["block_ns"], 12345.0),
        "learned" => {
            assert_eq!(c["block_ns"], c["block_learned_ns"]);
            assert!(c["block_learned_samples"].as_u64().unwrap() >= 16);
        }
        other => panic!("B in force from {other}"),
    }
}

/// `probe --save` writes the machine profile; a later process starts from it.
#[test]
fn a_saved_machine_profile_is_where_b_starts() {
    let cache = std::env::temp_dir().join(format!("waitwise-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let out = waitwise()
        .args(["probe", "--json", "--save", "--force"])
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("WAITWISE_BLOCK_NS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let saved: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let measured = saved["costs"]["block_measured_ns"].as_f64().unwrap();
    let files: Vec<_> = std::fs::read_dir(cache.join("waitwise")).unwrap().collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let out = waitwise()
        .args(["probe", "--json"])
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("WAITWISE_BLOCK_NS")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["costs"]["block_start_source"], "machine_profile");
    assert_eq!(
        v["costs"]["block_start_ns"].as_f64().unwrap(),
        measured.round()
    );
    let _ = std::fs::remove_dir_all(&cache);
}

/// `probe --save` keeps a stable B and refuses an unstable one unless
/// forced: either it saved (and said B was stable), or it failed naming
/// `--force` and wrote nothing.
#[test]
fn save_refuses_an_unstable_b_unless_forced() {
    let cache =
        std::env::temp_dir().join(format!("waitwise-cache-unstable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let out = waitwise()
        .args(["probe", "--json", "--save"])
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("WAITWISE_BLOCK_NS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let saved = cache.join("waitwise").read_dir().map_or(0, |d| d.count());
    if out.status.success() {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            v["costs"]["block_stability"]["instability"].is_null(),
            "{stderr}"
        );
        assert_eq!(saved, 1);
    } else {
        assert!(
            stderr.contains("unstable") && stderr.contains("--force"),
            "{stderr}"
        );
        assert_eq!(saved, 0);
    }
    let _ = std::fs::remove_dir_all(&cache);
}
