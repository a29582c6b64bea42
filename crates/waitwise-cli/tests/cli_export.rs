//! Machine-readable output of the built binary: `--export-json FILE` and
//! `--export-csv FILE` beside the table on stdout, and CSV columns that hold
//! numbers only.

use std::path::PathBuf;
use std::process::{Command, Output};

fn waitwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_waitwise"))
        .args(args)
        .env("WAITWISE_BLOCK_NS", "2000")
        .output()
        .expect("run waitwise")
}

fn ok(args: &[&str]) -> String {
    let o = waitwise(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "waitwise {args:?}: {err}");
    assert!(!err.contains("panicked"), "waitwise {args:?}: {err}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_export")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read(p: &std::path::Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// The records of one `# name` CSV section, split into fields. Only the
/// last field (the note) may be quoted here, so splitting at the first
/// `columns - 1` commas is exact.
fn records(csv: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = csv.lines().filter(|l| !l.starts_with("# "));
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    let rows = lines
        .map(|l| l.splitn(header.len(), ',').map(str::to_owned).collect())
        .collect();
    (header, rows)
}

#[test]
fn exports_are_written_beside_the_table_on_stdout() {
    let dir = scratch("curves");
    let (json, csv) = (dir.join("curves.json"), dir.join("curves.csv"));
    let base = ["model", "curves", "--dist", "uniform"];
    let mut args = base.to_vec();
    args.extend(["--export-json", json.to_str().unwrap()]);
    args.extend(["--export-csv", csv.to_str().unwrap()]);
    let text = ok(&args);
    assert!(text.contains("every 5th"), "stdout keeps the table: {text}");
    // The files hold what --json and --csv print.
    let mut json_args = base.to_vec();
    json_args.push("--json");
    assert_eq!(read(&json), ok(&json_args));
    let mut csv_args = base.to_vec();
    csv_args.push("--csv");
    assert_eq!(read(&csv), ok(&csv_args));
    let parsed: serde_json::Value = serde_json::from_str(&read(&json)).unwrap();
    assert_eq!(parsed["dist"], "uniform");

    // An experiment command, with --csv on stdout and JSON to a file.
    let sim_json = dir.join("simulate.json");
    let out = ok(&[
        "simulate",
        "--processors",
        "2",
        "--contexts",
        "2",
        "--kind",
        "barrier",
        "--iterations",
        "10",
        "--csv",
        "--export-json",
        sim_json.to_str().unwrap(),
    ]);
    assert!(out.starts_with("# simulate"), "{out}");
    let parsed: serde_json::Value = serde_json::from_str(&read(&sim_json)).unwrap();
    assert!(!parsed["rows"].as_array().unwrap().is_empty());
}

#[test]
fn csv_number_columns_hold_numbers_and_reasons_go_to_the_note() {
    let dir = scratch("fit");
    // One object with waits, one without: its figures are missing.
    let profile = dir.join("profile.json");
    std::fs::write(
        &profile,
        serde_json::json!({ "objects": [
            { "kind": "mutex", "buckets": [0, 0, 5, 20, 40, 20, 5], "total_waits": 90 },
            { "kind": "barrier", "buckets": [], "total_waits": 0 }
        ]})
        .to_string(),
    )
    .unwrap();
    let csv = ok(&["model", "fit", profile.to_str().unwrap(), "--csv"]);
    let (header, rows) = records(&csv);
    assert_eq!(rows.len(), 2, "{csv}");
    let text_columns = ["object", "kind", "best", "note"];
    for row in &rows {
        for (key, field) in header.iter().zip(row) {
            if !text_columns.contains(&key.as_str()) {
                assert!(
                    field.is_empty() || field.parse::<f64>().is_ok(),
                    "{key} holds {field:?}: {csv}"
                );
            }
        }
    }
    let empty = &rows[1];
    assert!(empty[2..].iter().any(String::is_empty), "{csv}");
    assert!(empty.last().unwrap().contains("no waits"), "{csv}");
}

/// `oversub --confirm-runs N` judges `adapt/b` on N fresh rounds beside the
/// best static choice (times the loop's run scale); 0 judges it on the
/// measured runs.
#[test]
fn oversub_judges_adapt_b_on_the_confirmation_rounds_asked_for() {
    let base = [
        "oversub",
        "--loop",
        "barrier",
        "--multiplier",
        "1",
        "--iterations",
        "20",
        "--runs",
        "2",
        "--work-us",
        "2",
        "--json",
    ];
    let check = |confirm: &str| {
        let mut args = base.to_vec();
        args.extend(["--confirm-runs", confirm]);
        let v: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
        let c = v["adaptive"][0].clone();
        (
            c["fresh_rounds"].as_bool().unwrap(),
            c["paired_rounds"].as_u64().unwrap(),
        )
    };
    assert_eq!(check("3"), (true, 3));
    let (fresh, rounds) = check("0");
    assert!(!fresh);
    assert!(rounds >= 2, "the measured runs: {rounds}");
}

/// `peers` end to end with the quick grid of one primitive, in 2 ms runs:
/// a table row per cell, the forced-B cell run in a child process (its B
/// column says the forced value), and an `--only` that names no primitive
/// refused.
#[test]
fn peers_runs_its_forced_b_cells_in_a_child() {
    let csv = ok(&[
        "peers", "--only", "event", "--rounds", "2", "--run-ms", "2", "--csv",
    ]);
    assert!(csv.starts_with("# peers_event"), "{csv}");
    let (header, rows) = records(&csv);
    assert_eq!(rows.len(), 5, "{csv}");
    let col = |key: &str| header.iter().position(|h| h == key).unwrap();
    let (block, b) = (col("block_cost"), col("b_ns"));
    let low = rows
        .iter()
        .find(|r| r[block] == "low")
        .expect("a low-B row");
    assert_eq!(low[b], "1000", "{csv}");
    let settled = rows.iter().find(|r| r[block] == "settled").unwrap();
    assert_eq!(settled[b], "2000", "{csv}");
    let o = waitwise(&["peers", "--only", "semaphore"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("matches no primitive"));
}
