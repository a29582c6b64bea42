//! The report page as a reader sees it: `waitwise report --tiny` loaded in
//! headless Chromium at 1400 x 900 pixels.
//!
//! Checks, on the page as laid out: outside the folded evidence at most
//! [`MAX_OPEN_ROWS`] table rows and [`MAX_OPEN_CHARTS`] charts; with every
//! section unfolded, no table wider than its box (clipped or scrolled
//! sideways) and every chart drawn (a box of some size with text in it); no
//! chart left out as malformed. A screenshot of the first screen is kept in
//! `target/ci-artifacts/report-first-screen.png`.
//!
//! Ignored by `cargo test` (it needs Chromium); `.ci/run` runs it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Table rows allowed outside the folded sections.
const MAX_OPEN_ROWS: u64 = 80;
/// Charts allowed outside the folded sections.
const MAX_OPEN_CHARTS: u64 = 8;

/// Measures the laid-out page and writes the result as JSON into
/// `<pre id="layout-check">`, which `--dump-dom` then prints.
const LAYOUT_CHECK: &str = r#"
<script>
window.addEventListener('load', () => {
  const out = {rows_open: 0, charts_open: 0, clipped: [], broken_charts: [], omitted: 0};
  const folded = el => el.closest('details:not([open])') !== null;
  const caption = el => ((el && el.textContent) || '').slice(0, 90);
  for (const t of document.querySelectorAll('table'))
    if (!folded(t)) out.rows_open += t.querySelectorAll('tbody tr').length;
  for (const s of document.querySelectorAll('figure svg'))
    if (!folded(s)) out.charts_open++;
  for (const d of document.querySelectorAll('details')) d.open = true;
  for (const t of document.querySelectorAll('table')) {
    const wrap = t.parentElement;
    if (wrap.scrollWidth > wrap.clientWidth + 1 || t.getBoundingClientRect().right > window.innerWidth)
      out.clipped.push(caption(t.querySelector('caption')) + ': ' + wrap.scrollWidth + ' > ' + wrap.clientWidth + ' px');
  }
  for (const s of document.querySelectorAll('figure svg')) {
    const r = s.getBoundingClientRect();
    if (r.width < 100 || r.height < 100 || s.querySelectorAll('text').length === 0)
      out.broken_charts.push(caption(s.parentElement.querySelector('figcaption')));
  }
  out.omitted = document.querySelectorAll('p.warning').length;
  const pre = document.createElement('pre');
  pre.id = 'layout-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"#;

fn chromium() -> Command {
    let mut c = Command::new("chromium");
    let profile = std::env::temp_dir().join(format!("waitwise-chromium-{}", std::process::id()));
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--window-size=1400,900",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// The workspace's `target/ci-artifacts`, created.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ci-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
#[ignore = "needs chromium; .ci/run runs it"]
fn the_report_reads_in_a_1400_pixel_window() {
    let out = std::env::temp_dir().join(format!("waitwise-report-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_waitwise"))
        .args(["report", "--tiny", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let index = out.join("index.html");
    let page = std::fs::read_to_string(&index).unwrap();
    let checked = out.join("checked.html");
    let with_check = page.replace("</body>", &format!("{LAYOUT_CHECK}</body>"));
    std::fs::write(&checked, with_check).unwrap();

    let dom = chromium()
        .arg("--dump-dom")
        .arg(format!("file://{}", checked.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&dom.stdout);
    let json = dom
        .split("<pre id=\"layout-check\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the layout check did not run; chromium printed:\n{dom}"))
        .replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&amp;", "&")
        .replace("&quot;", "\"");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();

    let shot = artifacts().join("report-first-screen.png");
    let _ = chromium()
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", index.display()))
        .output();

    assert!(v["rows_open"].as_u64().unwrap() <= MAX_OPEN_ROWS, "{v}");
    assert!(v["charts_open"].as_u64().unwrap() <= MAX_OPEN_CHARTS, "{v}");
    assert!(
        v["charts_open"].as_u64().unwrap() >= 1,
        "no chart on the first screen: {v}"
    );
    assert_eq!(
        v["clipped"],
        serde_json::json!([]),
        "tables wider than a 1400 px window: {v}"
    );
    assert_eq!(
        v["broken_charts"],
        serde_json::json!([]),
        "charts not drawn: {v}"
    );
    assert_eq!(v["omitted"], 0, "charts left out as malformed: {v}");
    let _ = std::fs::remove_dir_all(&out);
}
