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
