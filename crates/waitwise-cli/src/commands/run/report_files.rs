//! The report's outputs: the table on stderr ([`table_text`]) and, in the
//! output directory ([`write_all`]), `waits.json` (the whole
//! [`WaitReport`]), `waits.folded` (one line per object, `frame;frame;...
//! value`, outermost frame first, the object's total wait in ns as the
//! value: what flame-graph tools and speedscope read) and `waits.html`.

use super::wait_report::{ObjectReport, WaitReport};
use anyhow::Context;
use maud::{html, Markup, DOCTYPE};
use std::path::Path;
use waitwise_bench::export::{Cell, Column, Exporter, Table, TextExporter};

/// The table of the `top` objects with the most total wait time.
///
/// # Errors
/// A malformed table (a bug).
pub fn table_text(report: &WaitReport, top: usize) -> anyhow::Result<String> {
    let columns = vec![
        Column::new(
            "call_site",
            None,
            "the first program frame at the object's first wait",
        ),
        Column::new("kind", None, "object type"),
        Column::new(
            "waits",
            Some("count"),
            "calls that could not complete at once",
        ),
        Column::new("blocked", Some("pct"), "waits that slept in the kernel"),
        Column::new("total", Some("ms"), "the waits' time summed"),
        Column::new("average", Some("us"), "mean wait"),
        Column::new(
            "p99",
            Some("us"),
            "upper end of the log2 bucket of the 99th percentile",
        ),
        Column::new("longest", Some("us"), "longest wait"),
        Column::new(
            "held",
            Some("ms"),
            "mutexes: time held from the first wait on",
        ),
        Column::new(
            "owner_changes",
            Some("count"),
            "mutexes: acquisitions by another thread than the previous holder",
        ),
        Column::new("law", None, "the law the waits fit better"),
        Column::new(
            "recommended",
            None,
            "the model's policy: poll alpha*B, then block",
        ),
        Column::new("poll", Some("us"), "its poll limit"),
        Column::new(
            "saving",
            Some("pct"),
            "predicted cost saved over the static default",
        ),
    ];
    let mut t = Table::new(
        "waits",
        format!(
            "Where the program waited: {} objects, most total wait first, B = {:.0} ns",
            report.objects.len(),
            report.block_cost_ns
        ),
        columns,
    );
    for o in report.objects.iter().take(top) {
        t.push_row(
            vec![
                Cell::text(first_frame(o)),
                Cell::text(&o.kind),
                Cell::Integer(i64::try_from(o.waits).unwrap_or(i64::MAX)),
                Cell::Number(100.0 * o.blocked_share),
                Cell::Number(o.total_wait_ns as f64 / 1e6),
                Cell::Number(o.average_wait_ns / 1e3),
                Cell::Number(o.p99_wait_ns / 1e3),
                Cell::Number(o.longest_wait_ns as f64 / 1e3),
                Cell::number_or_missing(o.hold_ns.map(|ns| ns as f64 / 1e6), "-"),
                o.owner_changes.map_or(Cell::missing("-"), |n| {
                    Cell::Integer(i64::try_from(n).unwrap_or(i64::MAX))
                }),
                o.law.as_ref().map_or(Cell::missing("-"), Cell::text),
                Cell::text(&o.recommended_policy),
                Cell::Number(o.recommended_poll_ns / 1e3),
                Cell::Number(100.0 * o.predicted_saving),
            ],
            None,
        );
    }
    Ok(TextExporter.export(&t)?)
}

/// The call site's first frame, or why there is none.
fn first_frame(o: &ObjectReport) -> String {
    o.call_site
        .first()
        .map_or_else(|| "(no call site)".to_string(), |f| f.label())
}

/// One folded-stack line per object: the call site outermost first, then
/// the object (`mutex 0x...`), then its total wait in ns.
pub fn folded(report: &WaitReport) -> String {
    let mut out = String::new();
    for o in &report.objects {
        let mut frames: Vec<String> = o
            .call_site
            .iter()
            .rev()
            .map(|f| f.short_label().replace([';', ' '], "_"))
            .collect();
        frames.push(format!("{}_{}", o.kind, o.address));
        out.push_str(&format!("{} {}\n", frames.join(";"), o.total_wait_ns));
    }
    out
}

/// The HTML page: the table with every object and its whole call site.
pub fn html_page(report: &WaitReport) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "waitwise run: where the program waited" }
                style { "body{font-family:sans-serif}td,th{padding:2px 8px;text-align:right;vertical-align:top}td.l,th.l{text-align:left}table{border-collapse:collapse}tr:nth-child(even){background:#f3f3f3}" }
            }
            body {
                h1 { "Where the program waited" }
                p { (report.objects.len()) " objects, most total wait first; B = " (format!("{:.0}", report.block_cost_ns)) " ns." }
                table {
                    tr {
                        th.l { "call site" } th.l { "kind" } th { "waits" } th { "blocked %" }
                        th { "total ms" } th { "average µs" } th { "p99 µs" } th { "longest µs" }
                        th { "held ms" } th { "owner changes" }
                        th.l { "law" } th.l { "recommended" } th { "poll µs" } th { "saving %" }
                    }
                    @for o in &report.objects {
                        tr {
                            td.l { @for f in &o.call_site { (f.label()) br; } }
                            td.l { (o.kind) " " (o.address) }
                            td { (o.waits) }
                            td { (format!("{:.1}", 100.0 * o.blocked_share)) }
                            td { (format!("{:.3}", o.total_wait_ns as f64 / 1e6)) }
                            td { (format!("{:.2}", o.average_wait_ns / 1e3)) }
                            td { (format!("{:.2}", o.p99_wait_ns / 1e3)) }
                            td { (format!("{:.2}", o.longest_wait_ns as f64 / 1e3)) }
                            td { (o.hold_ns.map_or("-".to_string(), |ns| format!("{:.3}", ns as f64 / 1e6))) }
                            td { (o.owner_changes.map_or("-".to_string(), |n| n.to_string())) }
                            td.l { (o.law.as_deref().unwrap_or("-")) }
                            td.l { (o.recommended_policy) }
                            td { (format!("{:.2}", o.recommended_poll_ns / 1e3)) }
                            td { (format!("{:.1}", 100.0 * o.predicted_saving)) }
                        }
                    }
                }
            }
        }
    }
}

/// Writes `waits.json`, `waits.folded` and `waits.html` into `dir`.
///
/// # Errors
/// A file cannot be written; the message names it.
pub fn write_all(report: &WaitReport, dir: &Path) -> anyhow::Result<()> {
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
    };
    write("waits.json", &serde_json::to_vec_pretty(report)?)?;
    write("waits.folded", folded(report).as_bytes())?;
    write("waits.html", html_page(report).into_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::run::call_sites::NamedFrame;

    fn frame(function: &str) -> NamedFrame {
        NamedFrame {
            function: Some(function.into()),
            file: Some("/src/prog.c".into()),
            line: Some(12),
            module: "prog".into(),
            offset: "0x10".into(),
        }
    }

    fn report() -> WaitReport {
        WaitReport {
            block_cost_ns: 10_000.0,
            objects: vec![ObjectReport {
                kind: "mutex".into(),
                address: "0x1000".into(),
                pid: 1,
                call_site: vec![frame("lock_it"), frame("main")],
                waits: 4,
                blocked_waits: 1,
                blocked_share: 0.25,
                total_wait_ns: 5000,
                average_wait_ns: 1250.0,
                p99_wait_ns: 2048.0,
                longest_wait_ns: 2000,
                acquisitions: Some(10),
                owner_changes: Some(3),
                hold_ns: Some(700),
                law: Some("exponential".into()),
                recommended_policy: "s/b/0.541".into(),
                recommended_poll_ns: 5410.0,
                predicted_saving: 0.0,
            }],
        }
    }

    #[test]
    fn a_folded_stack_runs_from_the_outermost_frame_to_the_object() {
        assert_eq!(folded(&report()), "main;lock_it;mutex_0x1000 5000\n");
    }

    #[test]
    fn the_table_names_the_call_site_by_function_and_file_line() {
        let text = table_text(&report(), 10).unwrap();
        assert!(text.contains("lock_it (prog.c:12)"), "{text}");
    }

    #[test]
    fn the_page_escapes_and_lists_every_frame() {
        let mut r = report();
        r.objects[0].call_site[0].function = Some("<script>".into());
        let page = html_page(&r).into_string();
        assert!(page.contains("&lt;script&gt;") && page.contains("main (prog.c:12)"));
    }
}
