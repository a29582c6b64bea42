//! `waitwise model`, `waitwise simulate` and `waitwise profile` run as a
//! user would: the built binary, its stdout, its exit status.

use std::path::PathBuf;
use std::process::{Command, Output};

fn waitwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_waitwise"))
        .args(args)
        // A fixed B keeps the fits deterministic and skips the measurement.
        .env("WAITWISE_BLOCK_NS", "2000")
        .output()
        .expect("run waitwise")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(args: &[&str]) -> String {
    let o = waitwise(args);
    assert!(
        o.status.success(),
        "waitwise {args:?} failed: {}",
        stderr(&o)
    );
    stdout(&o)
}

/// Fails cleanly: non-zero exit, a message, no panic.
fn fails(args: &[&str]) -> String {
    let o = waitwise(args);
    let err = stderr(&o);
    assert!(!o.status.success(), "waitwise {args:?} should fail");
    assert!(
        !err.contains("panicked"),
        "waitwise {args:?} panicked: {err}"
    );
    err
}

/// A file under the target tmp dir, unique per test.
fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_model");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// Log2 buckets of `n` waits drawn deterministically from an exponential law.
fn exponential_buckets(mean_ns: f64, n: u32) -> Vec<u64> {
    let mut buckets = vec![0u64; 40];
    for i in 0..n {
        let u = (f64::from(i) + 0.5) / f64::from(n);
        let t = -mean_ns * (1.0 - u).ln();
        buckets[(t.max(1.0).log2().floor() as usize).min(39)] += 1;
    }
    buckets
}

/// Log2 buckets of `n` waits evenly spread over `[0, upper]`.
fn uniform_buckets(upper_ns: f64, n: u32) -> Vec<u64> {
    let mut buckets = vec![0u64; 40];
    for i in 0..n {
        let t = upper_ns * (f64::from(i) + 0.5) / f64::from(n);
        buckets[(t.max(1.0).log2().floor() as usize).min(39)] += 1;
    }
    buckets
}

fn profile_json(kind: &str, buckets: &[u64]) -> serde_json::Value {
    let total: u64 = buckets.iter().sum();
    serde_json::json!({ "kind": kind, "buckets": buckets, "total_waits": total, "blocks": total / 4 })
}

#[test]
fn curves_print_the_figure_and_write_svg() {
    let svg = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fig2.svg");
    let out = ok(&[
        "model",
        "curves",
        "--dist",
        "exponential",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(out.contains("lambda*beta*B"), "{out}");
    for name in [
        "/b/0",
        "s/b/0.541",
        "s/b/0.618",
        "s/b/1",
        "s/b/2",
        "s//inf",
        "rand/b",
        "adapt/b",
    ] {
        assert!(out.contains(name), "{name} missing: {out}");
    }
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("competitive factor"));
    let csv = ok(&["model", "curves", "--dist", "uniform", "--csv"]);
    // Header + 101 points (0.01 to 100, 25 per decade) after the "# name" line.
    assert_eq!(csv.lines().count(), 1 + 1 + 101, "{csv}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["model", "curves", "--dist", "uniform", "--json"])).unwrap();
    assert_eq!(json["dist"], "uniform");
    assert_eq!(json["series"].as_array().unwrap().len(), 8);
}

#[test]
fn alpha_json_has_exactly_two_keys() {
    for (dist, alpha, factor) in [
        ("exponential", 0.5413, 1.5820),
        ("uniform", 0.6180, 1.6180),
        ("barrier", 0.6180, 1.6180),
    ] {
        let json: serde_json::Value =
            serde_json::from_str(&ok(&["model", "alpha", "--dist", dist, "--json"])).unwrap();
        let obj = json.as_object().unwrap();
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["alpha", "worst_case_factor"], "{dist}");
        assert!(
            (obj["alpha"].as_f64().unwrap() - alpha).abs() < 5e-4,
            "{dist}: {json}"
        );
        assert!(
            (obj["worst_case_factor"].as_f64().unwrap() - factor).abs() < 5e-4,
            "{dist}: {json}"
        );
    }
    let text = ok(&["model", "alpha", "--dist", "mutex:16:1"]);
    assert!(text.contains("optimal alpha 0.7088"), "{text}");
    assert!(fails(&["model", "alpha", "--dist", "normal"]).contains("normal"));
    fails(&["model", "alpha", "--dist", "mutex:0"]);
    fails(&["model", "alpha"]);
}

#[test]
fn fit_recommends_per_object_in_every_accepted_format() {
    let exp = profile_json("producer-consumer", &exponential_buckets(20_000.0, 20_000));
    let uni = profile_json("barrier", &uniform_buckets(50_000.0, 20_000));
    // A single WaitProfile.
    let single = temp_file("single.json", &exp.to_string());
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["model", "fit", single.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(json["block_cost_ns"], 2000.0);
    assert_eq!(json["objects"][0]["best_model"], "exponential", "{json}");
    assert!((json["objects"][0]["recommended_alpha"].as_f64().unwrap() - 0.5413).abs() < 1e-3);
    // An array.
    let array = temp_file("array.json", &serde_json::json!([exp, uni]).to_string());
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["model", "fit", array.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(json["objects"][1]["best_model"], "uniform", "{json}");
    assert!((json["objects"][1]["recommended_alpha"].as_f64().unwrap() - 0.6180).abs() < 1e-3);
    // The interposer's format, with extra fields and --block-ns.
    let mut with_address = exp.clone();
    with_address["address"] = serde_json::json!("0x7ffd1234");
    let objects = temp_file(
        "objects.json",
        &serde_json::json!({ "objects": [with_address, uni], "pid": 42 }).to_string(),
    );
    let text = ok(&[
        "model",
        "fit",
        objects.to_str().unwrap(),
        "--block-ns",
        "5000",
    ]);
    assert!(
        text.contains("B = 5000 ns") && text.contains("exponential") && text.contains("uniform"),
        "{text}"
    );
}

#[test]
fn bad_profiles_fail_with_the_file_name() {
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-profile.json");
    let err = fails(&["model", "fit", missing.to_str().unwrap()]);
    assert!(err.contains("no-such-profile.json"), "{err}");
    for (name, body) in [
        ("garbage.json", "this is not json"),
        ("empty-object.json", "{}"),
        (
            "bad-buckets.json",
            r#"{"kind": "mutex", "buckets": [1, -2]}"#,
        ),
        (
            "too-many.json",
            &serde_json::json!({ "buckets": vec![1u64; 80] }).to_string(),
        ),
    ] {
        let path = temp_file(name, body);
        let err = fails(&["model", "fit", path.to_str().unwrap()]);
        assert!(err.contains(name), "{name}: {err}");
        let err = fails(&["profile", path.to_str().unwrap()]);
        assert!(err.contains(name), "{name}: {err}");
    }
    let ok_file = temp_file("ok.json", &profile_json("mutex", &[1, 2, 3]).to_string());
    fails(&["model", "fit", ok_file.to_str().unwrap(), "--block-ns", "0"]);
    fails(&[
        "model",
        "fit",
        ok_file.to_str().unwrap(),
        "--block-ns",
        "-5",
    ]);
}

#[test]
fn profile_aggregates_per_kind() {
    let a = profile_json("mutex", &exponential_buckets(8_000.0, 5_000));
    let b = profile_json("mutex", &exponential_buckets(8_000.0, 5_000));
    let c = profile_json("barrier", &uniform_buckets(40_000.0, 5_000));
    let path = temp_file(
        "kinds.json",
        &serde_json::json!({ "objects": [a, b, c] }).to_string(),
    );
    let text = ok(&["profile", path.to_str().unwrap()]);
    assert!(text.contains("mutex") && text.contains("barrier"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["profile", path.to_str().unwrap(), "--json"])).unwrap();
    let kinds = json["kinds"].as_array().unwrap();
    assert_eq!(kinds.len(), 2);
    let mutex = kinds.iter().find(|k| k["kind"] == "mutex").unwrap();
    assert_eq!(mutex["objects"], 2);
    assert_eq!(mutex["fit"]["total_waits"], 10_000);
    assert_eq!(mutex["fit"]["best_model"], "exponential");
    let barrier = kinds.iter().find(|k| k["kind"] == "barrier").unwrap();
    assert!((barrier["fit"]["recommended_alpha"].as_f64().unwrap() - 0.618).abs() < 1e-3);
    let empty = temp_file("empty-list.json", r#"{"objects": []}"#);
    assert!(ok(&["profile", empty.to_str().unwrap()]).contains("no objects"));
}

#[test]
fn profile_of_the_interposer_compares_each_kind_with_the_alpha_it_waits_with() {
    // The interposer records object types: its condition variables wait
    // with the producer-consumer alpha (0.541), its spin locks never sleep.
    let cond = profile_json("cond", &uniform_buckets(40_000.0, 5_000));
    let spin = profile_json("spin", &exponential_buckets(300.0, 5_000));
    let path = temp_file(
        "interposer-kinds.json",
        &serde_json::json!({ "objects": [cond, spin] }).to_string(),
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["profile", path.to_str().unwrap(), "--json"])).unwrap();
    let kinds = json["kinds"].as_array().unwrap();
    let kind = |name: &str| kinds.iter().find(|k| k["kind"] == name).unwrap();
    assert!((kind("cond")["static_alpha"].as_f64().unwrap() - 0.541).abs() < 1e-3);
    assert!(kind("spin")["static_alpha"].is_null(), "{json}");
    let text = ok(&["profile", path.to_str().unwrap()]);
    assert!(
        text.contains("cond: the profile suggests alpha 0.618 instead of the static 0.541"),
        "{text}"
    );
    assert!(text.contains("never sleeps"), "{text}");
    assert!(text.contains("spin: these waits never sleep"), "{text}");
    assert!(!text.contains("spin: the profile suggests"), "{text}");
}

#[test]
fn simulate_prints_the_grid_and_validates() {
    let args = [
        "simulate",
        "--processors",
        "4",
        "--contexts",
        "2",
        "--kind",
        "barrier",
        "--iterations",
        "20",
        "--algorithms",
        "s//inf,/b/0,s/b/1",
    ];
    let text = ok(&args);
    assert!(
        text.contains("normalized") && text.contains("s/b/1") && text.contains("unmatched"),
        "{text}"
    );
    assert!(text.contains("sync events/s"), "{text}");
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let json: serde_json::Value = serde_json::from_str(&ok(&json_args)).unwrap();
    let rows = json["rows"].as_array().unwrap();
    // matched + unmatched, 3 algorithms each, /b/0 first and normalized to 1.
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[0]["report"]["algorithm"], "/b/0");
    assert_eq!(rows[0]["report"]["normalized_runtime"], 1.0);
    assert!(
        json["throughput"]["sync_events_per_second"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(json["sync_events_per_cpu_second"].as_f64().unwrap() > 0.0);
    // Same seed, same result (the runtimes, not the host's speed).
    let again: serde_json::Value = serde_json::from_str(&ok(&json_args)).unwrap();
    assert_eq!(json["rows"], again["rows"]);
    let mut csv_args = args.to_vec();
    csv_args.push("--csv");
    assert!(ok(&csv_args).contains("normalized_ratio"));
    fails(&["simulate", "--processors", "0"]);
    fails(&["simulate", "--contexts", "0"]);
    fails(&["simulate", "--threads-per-context", "0"]);
    fails(&["simulate", "--block-cost", "-1"]);
    fails(&["simulate", "--algorithms", "s/b/x"]);
    fails(&["simulate", "--processors", "16384", "--contexts", "64"]);
    fails(&["simulate", "--kind", "semaphore"]);
}

#[test]
fn profile_recommends_only_with_evidence() {
    // Five waits: the table shows no alpha and the note says why.
    let few = profile_json("barrier", &uniform_buckets(40_000.0, 5));
    let path = temp_file(
        "few.json",
        &serde_json::json!({ "objects": [few] }).to_string(),
    );
    let text = ok(&["profile", path.to_str().unwrap()]);
    assert!(text.contains("no recommendation"), "{text}");
    assert!(!text.contains("suggests alpha"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["profile", path.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(json["kinds"][0]["fit"]["recommends"], false);
    // Thousands of waits of one law: a recommendation.
    let many = profile_json("barrier", &uniform_buckets(40_000.0, 5_000));
    let path = temp_file(
        "many.json",
        &serde_json::json!({ "objects": [many] }).to_string(),
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["profile", path.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(json["kinds"][0]["fit"]["recommends"], true);
}
