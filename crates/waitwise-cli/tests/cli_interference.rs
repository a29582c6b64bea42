//! `waitwise interference` end to end: the JSON the simulator reads, every
//! placement listed (measured or n/a with a reason), and `--only` checked.

use std::process::Command;

fn waitwise() -> Command {
    Command::new(env!("CARGO_BIN_EXE_waitwise"))
}

#[test]
fn interference_json_lists_every_placement_and_measures_the_rows() {
    let out = waitwise()
        .args([
            "interference",
            "--window-ms",
            "1",
            "--windows",
            "2",
            "--only",
            "spin",
            "--only",
            "block",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let placements = v["placements"].as_array().unwrap();
    assert_eq!(placements.len(), 4);
    for p in placements {
        assert!(
            p["cpus"].is_array() || p["reason"].is_string(),
            "a placement is measured or says why not: {p}"
        );
    }
    let cells = v["cells"].as_array().unwrap();
    assert!(!cells.is_empty());
    for c in cells {
        let m = c["mechanism"].as_str().unwrap();
        assert!(m == "spin" || m == "block", "{m}");
        assert!(c["wakeup_ns"]["median"].is_number());
        assert!(c["slowdown_pct"].is_number());
    }
    assert!(v["smt"].as_array().unwrap().len() == 5);
    assert!(v["sibling_slowdown_factors"].is_array());
}

#[test]
fn an_unknown_mechanism_is_a_usage_error() {
    let out = waitwise()
        .args(["interference", "--only", "warp-drive"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("warp-drive"));
}

/// `s//inf`'s normalized runtime on a simulated barrier for a poller with
/// the given `simulate` options.
fn spin_runtime(extra: &[&str]) -> f64 {
    let mut args = vec![
        "simulate",
        "--processors",
        "4",
        "--kind",
        "barrier",
        "--threads-per-context",
        "1",
        "--iterations",
        "30",
        "--algorithms",
        "s//inf",
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = waitwise().args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["report"]["algorithm"]
                .as_str()
                .is_some_and(|a| a.contains("inf"))
        })
        .and_then(|r| r["report"]["normalized_runtime"].as_f64())
        .unwrap_or_else(|| panic!("no s//inf row in {v}"))
}

#[test]
fn the_simulator_charges_pollers_their_mechanisms_interference() {
    let full_share = spin_runtime(&[]);
    let spin = spin_runtime(&["--poll-mechanism", "spin"]);
    let delay = spin_runtime(&["--poll-mechanism", "delay-miss"]);
    assert!(
        full_share > spin && spin > delay,
        "{full_share} {spin} {delay}"
    );
    let dir = std::env::temp_dir().join(format!("ww-interf-{}.json", std::process::id()));
    std::fs::write(&dir, r#"{"sibling_slowdown_factors": [["pause", 1.0]]}"#).unwrap();
    let from_file = spin_runtime(&[
        "--poll-mechanism",
        "pause",
        "--interference",
        dir.to_str().unwrap(),
    ]);
    assert!(from_file < spin, "{from_file} {spin}");
    let _ = std::fs::remove_file(&dir);
    let out = waitwise()
        .args(["simulate", "--poll-mechanism", "warp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
