//! `waitwise helpers` run as a user would: bad names are refused before
//! anything runs, and a narrowed run (2 and 3 Dijkstra helpers) prints
//! every asked row as JSON.

use std::process::{Command, Output};

/// Exit status of a rejected command line.
const USAGE: i32 = 2;

fn waitwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_waitwise"))
        .args(args)
        // A fixed B skips the measurement.
        .env("WAITWISE_BLOCK_NS", "2000")
        .output()
        .expect("run waitwise")
}

#[test]
fn unknown_names_are_refused_before_anything_runs() {
    for (args, needle) in [
        (
            &["helpers", "--app", "bt"][..],
            "spmv, lu, closure, dijkstra",
        ),
        (&["helpers", "--family", "tree"][..], "grid, random, rmat"),
        (&["helpers", "--wait", "nap"][..], "nap"),
    ] {
        let o = waitwise(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(USAGE), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("[helpers] 1/"), "{args:?} ran: {err}");
    }
}

#[test]
fn a_narrowed_run_prints_its_rows_as_json() {
    let o = waitwise(&[
        "helpers",
        "--app",
        "dijkstra",
        "--family",
        "grid",
        "--vertices",
        "2000",
        "--helpers",
        "2",
        "--helpers",
        "3",
        "--wait",
        "block",
        "--runs",
        "1",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    for (row, helpers) in rows.iter().zip([2, 3]) {
        assert_eq!(row["wait"], "block");
        assert_eq!(row["workload"]["helpers"], helpers);
        assert!(row["speedup"]["median"].as_f64().unwrap() > 0.0);
        assert!(row["kept_fraction"].is_number());
        // Where the time went: the serial run's and the main thread's phases.
        for split in ["serial_split", "main_split"] {
            assert!(row[split]["ns"][1].as_u64().unwrap() > 0, "{split} pops");
        }
    }
}
