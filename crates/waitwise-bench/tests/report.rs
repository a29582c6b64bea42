//! `waitwise report` end to end in the tiny configuration: the directory
//! holds an `index.html` with every chart inline, a `results.json`
//! with every section, and one CSV per table, each shown in the page (that
//! a table's CSV columns match its JSON export, the experiments' unit tests
//! check).

use waitwise_bench::report::{run, ReportConfig, Size};

#[test]
fn tiny_report_is_complete() {
    let dir = std::env::temp_dir().join(format!("waitwise-report-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let written = run(
        &ReportConfig {
            out_dir: dir.clone(),
            size: Size::Tiny,
            program: None,
        },
        "waitwise report --tiny",
    )
    .unwrap();
    let html = std::fs::read_to_string(&written.index).unwrap();
    assert!(html.contains("<h2"), "sections");
    assert!(html.contains("Machine"));
    assert!(
        html.contains("Reproduce: waitwise mechanisms"),
        "reproduce commands"
    );
    assert!(html.contains("<section id=\"summary\">"), "summary");
    assert!(html.contains("B (cost of blocking)"), "B in the summary");
    let svgs = html.matches("<svg").count();
    assert!(svgs >= 5, "expected every chart inline, found {svgs}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&written.results).unwrap()).unwrap();
    for key in [
        "probe",
        "mechanisms",
        "wakeup_matrix",
        "calibration",
        "peers",
        "model",
    ] {
        assert!(results.get(key).is_some(), "results.json lacks {key}");
    }
    assert!(!written.csvs.is_empty());
    for csv in &written.csvs {
        let text = std::fs::read_to_string(csv).unwrap();
        let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
        assert!(header.len() >= 2, "{}", csv.display());
        assert!(
            html.contains(csv.file_name().unwrap().to_str().unwrap()),
            "table of {} in the page",
            csv.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
