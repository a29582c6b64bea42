//! The report's one self-contained HTML page, written with `maud`.
//!
//! [`HtmlReport`] collects sections, paragraphs, preformatted text (machine
//! description, command lines), a summary's facts and findings, [`Table`]s
//! and inline SVG charts, and [`HtmlReport::finish`] writes an HTML5
//! document with its CSS inline and no external resource, so `index.html`
//! can be mailed or archived alone.
//!
//! Every element comes from a `maud::html!` template, so the page is well
//! formed by construction (the macro opens and closes each element) and
//! every piece of text is HTML-escaped by maud. The only markup taken as
//! given is SVG from [`crate::chart`], and even that is checked to be one
//! `<svg>` element without `<script>` (`checked_svg`).
//!
//! Tables: consecutive cells missing for the same reason (a mechanism the
//! CPU lacks: "n/a: CPU lacks WAITPKG" in every figure column) are drawn as
//! one cell spanning those columns, and a row note that only repeats that
//! reason is not written again.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use crate::export::{Cell, Table};

/// The page's stylesheet: readable width, compact tables, highlighted noted
/// rows, charts scaled to the page.
const CSS: &str = "
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: #222;
       max-width: 1340px; margin: 2em auto; padding: 0 1em; line-height: 1.45; }
h1 { border-bottom: 2px solid #4e79a7; padding-bottom: 0.2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
nav ol { columns: 2; }
pre { background: #f6f8fa; border: 1px solid #ddd; padding: 0.8em; overflow-x: auto; }
.table-wrap { overflow-x: auto; margin: 1em 0; }
table { border-collapse: collapse; font-size: 0.88em; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
caption .file { font-weight: normal; color: #666; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.45em; }
th { background: #eef2f7; text-align: left; overflow-wrap: anywhere; }
td { overflow-wrap: anywhere; }
td.num { white-space: nowrap; }
th[title] { text-decoration: underline dotted; cursor: help; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.missing { color: #777; font-style: italic; }
td.missing[colspan] { text-align: center; }
tbody tr:nth-child(even) { background: #fafafa; }
tr.noted, tbody tr.noted:nth-child(even) { background: #fff3cd; }
td sup.mark { color: #8a6d3b; }
ol.notes { color: #8a6d3b; font-size: 0.85em; margin: 0.2em 0 0.8em; }
details.evidence > summary { cursor: pointer; }
details.evidence > summary h2 { display: inline; border: none; }
section.evidence { margin-top: 0.6em; }
td.holds { color: #2e7d32; font-weight: bold; }
td.fails { color: #c62828; font-weight: bold; }
td.cannot { color: #777; }
details { margin: 0.3em 0 1em; font-size: 0.9em; }
dt { font-family: monospace; font-weight: bold; }
dd { margin: 0 0 0.3em 1.5em; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dl.facts dt { font-family: inherit; }
dl.facts dd { margin: 0; }
ul.findings li { margin: 0.3em 0; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.9em; }
.warning { color: #a94442; }
";

/// A row of a [`HtmlReport::linked_table`]: its cells, and the section it
/// links to as `(id, label)`.
pub type LinkedRow = (Vec<String>, Option<(String, String)>);

/// One `<section>` of the page.
#[derive(Debug, Clone)]
struct PageSection {
    /// The element id, the target of links to the section.
    id: String,
    /// The `<h2>` heading, also its entry in the table of contents.
    heading: String,
    /// Its content, in order.
    body: Vec<Markup>,
    /// Whether its content is folded under its heading (`<details>`): the
    /// evidence under a report's first screen.
    collapsed: bool,
}

/// Builds the HTML report page.
///
/// Calls append in order; [`section`](Self::section) starts a new `<section>`
/// (listed in the table of contents), and anything added before the first
/// one goes right under the page title.
///
/// # Examples
/// ```
/// use waitwise_bench::export::{Cell, Column, Table};
/// use waitwise_bench::html::HtmlReport;
/// let mut table = Table::new("t", "Results", vec![Column::new("x", Some("ns"), "a value")]);
/// table.push_row(vec![Cell::Number(1.5)], Some("noisy".into()));
/// let mut report = HtmlReport::new("waitwise report");
/// report
///     .section("Machine")
///     .preformatted("2 CPUs")
///     .section_with_id("Results", "results")
///     .paragraph("Lower is better & faster.")
///     .table(&table);
/// let html = report.finish();
/// assert!(html.starts_with("<!DOCTYPE html>"));
/// assert!(html.contains("Lower is better &amp; faster."));
/// assert!(html.contains("class=\"noted\""));
/// assert!(html.contains("<section id=\"results\">"));
/// ```
#[derive(Debug, Clone)]
pub struct HtmlReport {
    /// Page title (`<title>` and `<h1>`).
    title: String,
    /// Content before the first section.
    preamble: Vec<Markup>,
    /// The sections so far.
    sections: Vec<PageSection>,
}

impl HtmlReport {
    /// An empty report titled `title`.
    pub fn new(title: impl Into<String>) -> HtmlReport {
        HtmlReport {
            title: title.into(),
            preamble: Vec::new(),
            sections: Vec::new(),
        }
    }

    /// Starts a new section with an `<h2>` heading and the id
    /// `section-{n}` (n counts from 1); it ends where the next section
    /// starts, or at the end of the page.
    pub fn section(&mut self, heading: &str) -> &mut Self {
        let id = format!("section-{}", self.sections.len() + 1);
        self.section_with_id(heading, &id)
    }

    /// Like [`section`](Self::section), with the element id `id`, so that
    /// other parts of the page can link to `#id`.
    pub fn section_with_id(&mut self, heading: &str, id: &str) -> &mut Self {
        self.sections.push(PageSection {
            id: id.to_owned(),
            heading: heading.to_owned(),
            body: Vec::new(),
            collapsed: false,
        });
        self
    }

    /// Like [`section_with_id`](Self::section_with_id), its content folded
    /// under the heading until the reader opens it (a link to `#id` opens
    /// it in browsers that support it).
    pub fn collapsed_section(&mut self, heading: &str, id: &str) -> &mut Self {
        self.section_with_id(heading, id);
        if let Some(s) = self.sections.last_mut() {
            s.collapsed = true;
        }
        self
    }

    /// Adds a table of text whose rows may each link to a section: a
    /// caption, column headings, rows of cells and, per row, an optional
    /// `(id, label)` link written in a last "evidence" column. A cell
    /// whose text starts with "holds", "does not hold" or "cannot run" is
    /// coloured as a verdict.
    pub fn linked_table(
        &mut self,
        caption: &str,
        headings: &[&str],
        rows: &[LinkedRow],
    ) -> &mut Self {
        let has_links = rows.iter().any(|(_, link)| link.is_some());
        self.push(html! {
            div.table-wrap {
                table {
                    caption { (caption) }
                    thead {
                        tr {
                            @for h in headings { th scope="col" { (h) } }
                            @if has_links { th scope="col" { "evidence" } }
                        }
                    }
                    tbody {
                        @for (cells, link) in rows {
                            tr {
                                @for c in cells { td class=[verdict_class(c)] { (c) } }
                                @if has_links {
                                    td {
                                        @if let Some((id, label)) = link {
                                            a href={ "#" (id) } { (label) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        })
    }

    /// Appends `markup` to the current section (or the preamble).
    fn push(&mut self, markup: Markup) -> &mut Self {
        match self.sections.last_mut() {
            Some(section) => section.body.push(markup),
            None => self.preamble.push(markup),
        }
        self
    }

    /// Adds an `<h3>` heading inside the current section.
    pub fn subsection(&mut self, heading: &str) -> &mut Self {
        self.push(html! { h3 { (heading) } })
    }

    /// Adds a paragraph of plain text (escaped; no markup), a span between
    /// backticks set as code (`waitwise probe`), as in the notes'
    /// Markdown-like wording.
    pub fn paragraph(&mut self, text: &str) -> &mut Self {
        let markup = with_code_spans(text);
        self.push(html! { p { (markup) } })
    }

    /// Adds preformatted text in a monospace block (escaped): command lines,
    /// `/proc/cpuinfo` excerpts, topology.
    pub fn preformatted(&mut self, text: &str) -> &mut Self {
        self.push(html! { pre { (text) } })
    }

    /// Adds a list of `(term, value)` facts, for example "B" and "43 us".
    pub fn facts(&mut self, facts: &[(String, String)]) -> &mut Self {
        self.push(html! {
            dl.facts {
                @for (term, value) in facts {
                    dt { (term) }
                    dd { (value) }
                }
            }
        })
    }

    /// Adds a bulleted list of findings: each a sentence and, when it has
    /// one, a link to the section holding its figures (`#id`, `link text`).
    pub fn findings(&mut self, findings: &[(String, Option<(String, String)>)]) -> &mut Self {
        self.push(html! {
            ul.findings {
                @for (text, link) in findings {
                    li {
                        (text)
                        @if let Some((id, label)) = link {
                            " (" a href={ "#" (id) } { (label) } ")"
                        }
                    }
                }
            }
        })
    }

    /// Adds `table`: its title as caption (with its CSV file name, the
    /// report writes one CSV per table),
    /// column names with units (hover for the column's doc), numbers to four
    /// significant digits (the full value on hover and in the CSV/JSON),
    /// missing values in grey italics with their reason (one cell across
    /// consecutive columns missing for the same reason), rows with a note
    /// highlighted and the note in a last column, and the column docs in a
    /// folded list underneath.
    ///
    /// A malformed table (see [`Table::validate`]) is still shown, cell by
    /// cell as given, under a warning that says what is wrong.
    pub fn table(&mut self, table: &Table) -> &mut Self {
        let markup = table_markup(table);
        self.push(markup)
    }

    /// Inlines an SVG chart (from [`crate::chart`]) in a `<figure>`.
    ///
    /// An XML prolog is dropped. Anything that is not a single
    /// `<svg>...</svg>` element, or that holds a `<script>`, is not inlined:
    /// a warning paragraph takes its place.
    pub fn svg(&mut self, svg: &str) -> &mut Self {
        self.figure(svg, None)
    }

    /// Like [`svg`](Self::svg), with a caption under the chart.
    pub fn svg_with_caption(&mut self, svg: &str, caption: &str) -> &mut Self {
        self.figure(svg, Some(caption))
    }

    /// Writes `<figure>`, the checked SVG and the optional caption.
    fn figure(&mut self, svg: &str, caption: Option<&str>) -> &mut Self {
        let markup = match checked_svg(svg) {
            Some(svg) => html! {
                figure {
                    (PreEscaped(svg))
                    @if let Some(caption) = caption {
                        figcaption { (caption) }
                    }
                }
            },
            None => {
                let what = caption.map_or(String::new(), |c| format!(" ({c})"));
                html! {
                    p.warning { "chart" (what) " omitted: not a plain SVG document" }
                }
            }
        };
        self.push(markup)
    }

    /// The finished page: doctype, head with the inline stylesheet, title,
    /// table of contents (from two sections on), and the body so far.
    ///
    /// Takes `&self`, so a report can be written out, extended and written
    /// again.
    pub fn finish(&self) -> String {
        html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    title { (self.title) }
                    style { (PreEscaped(CSS)) }
                }
                body {
                    h1 { (self.title) }
                    @if self.sections.len() >= 2 {
                        nav {
                            ol {
                                @for s in &self.sections {
                                    li { a href={ "#" (s.id) } { (s.heading) } }
                                }
                            }
                        }
                    }
                    main {
                        @for m in &self.preamble { (m) }
                        @for s in &self.sections {
                            @if s.collapsed {
                                section.evidence id=(s.id) {
                                    details.evidence {
                                        summary { h2 { (s.heading) } }
                                        @for m in &s.body { (m) }
                                    }
                                }
                            } @else {
                                section id=(s.id) {
                                    h2 { (s.heading) }
                                    @for m in &s.body { (m) }
                                }
                            }
                        }
                    }
                }
            }
        }
        .into_string()
    }
}

/// A run of equal neighbouring cells of a row.
struct CellRun<'t> {
    /// The cell.
    cell: &'t Cell,
    /// How many columns it covers (more than 1 only for missing values).
    span: usize,
    /// Whether its text is written: a reason for missing values is written
    /// once per row, in its widest run (the first of equal ones); the
    /// other runs keep it on hover only.
    shown: bool,
}

/// The runs of `row`, see [`CellRun`].
fn cell_runs(row: &[Cell]) -> Vec<CellRun<'_>> {
    let mut runs: Vec<CellRun<'_>> = Vec::new();
    for cell in row {
        match runs.last_mut() {
            Some(last) if cell.is_missing() && last.cell == cell => last.span += 1,
            _ => runs.push(CellRun {
                cell,
                span: 1,
                shown: true,
            }),
        }
    }
    for i in 0..runs.len() {
        let widest = runs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.cell.is_missing() && r.cell == runs[i].cell)
            .max_by_key(|&(j, r)| (r.span, std::cmp::Reverse(j)))
            .map(|(j, _)| j);
        runs[i].shown = widest.is_none_or(|j| j == i);
    }
    runs
}

/// The `<div>` with `table`, its row notes as numbered footnotes under it
/// (a note shared by rows is numbered once; one that only repeats a
/// spanning cell's reason is not written), and its folded column docs.
fn table_markup(table: &Table) -> Markup {
    let rows = merged_rows(table);
    let mut notes: Vec<&str> = Vec::new();
    let marks: Vec<Option<usize>> = rows
        .iter()
        .map(|(row, note)| {
            let note = (*note)?;
            let repeated = cell_runs(row)
                .iter()
                .any(|r| r.span > 1 && matches!(r.cell, Cell::Missing(reason) if reason == note));
            if repeated {
                return None;
            }
            Some(match notes.iter().position(|n| *n == note) {
                Some(i) => i + 1,
                None => {
                    notes.push(note);
                    notes.len()
                }
            })
        })
        .collect();
    html! {
        @if let Err(error) = table.validate() {
            p.warning { (error.to_string()) }
        }
        div.table-wrap {
            table {
                caption { (table.title) " " span.file { "(" (table.name) ".csv)" } }
                thead {
                    tr {
                        @for column in &table.columns {
                            th scope="col" title=(column.doc) { (breakable(&column.display_name())) }
                        }
                    }
                }
                tbody {
                    @for ((row, note), mark) in rows.iter().zip(&marks) {
                        @let runs = cell_runs(row);
                        tr class=[note.map(|_| "noted")] {
                            @for (i, run) in runs.iter().enumerate() {
                                @if i == 0 && mark.is_some() {
                                    (cell_markup_marked(run, mark.unwrap_or(0)))
                                } @else {
                                    (cell_markup(run))
                                }
                            }
                        }
                    }
                }
            }
        }
        @if !notes.is_empty() {
            ol.notes {
                @for note in &notes { li { (note) } }
            }
        }
        @if !table.columns.is_empty() {
            details {
                summary { "Columns" }
                dl {
                    @for column in &table.columns {
                        dt { (column.header_key()) }
                        dd { (column.doc) }
                    }
                }
            }
        }
    }
}

/// `text` with each span between a pair of backticks set as `<code>`; an
/// unpaired backtick is kept as it is.
fn with_code_spans(text: &str) -> Markup {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return html! { (text) };
    }
    html! {
        @for (i, part) in parts.iter().enumerate() {
            @if i % 2 == 1 { code { (part) } } @else { (part) }
        }
    }
}

/// `text` with a line-break opportunity after each underscore, so that long
/// column keys (`t_wakeup_median_ci95`) wrap inside a narrow column.
fn breakable(text: &str) -> Markup {
    let parts: Vec<&str> = text.split_inclusive('_').collect();
    html! {
        @for (i, part) in parts.iter().enumerate() {
            (part)
            @if i + 1 < parts.len() { wbr; }
        }
    }
}

/// The rows of `table` to draw, with their notes: consecutive rows that
/// only say a value is missing for one reason ("n/a: CPU lacks WAITPKG" in
/// every figure column) and differ in one text column are drawn as one
/// row, that column listing their values.
fn merged_rows(table: &Table) -> Vec<(Vec<Cell>, Option<&str>)> {
    let mut out: Vec<(Vec<Cell>, Option<&str>)> = Vec::new();
    for (index, row) in table.rows.iter().enumerate() {
        let note = table.row_note(index);
        if let Some((last, last_note)) = out.last_mut() {
            if *last_note == note {
                if let Some(column) = mergeable(last, row) {
                    if let (Cell::Text(a), Cell::Text(b)) = (&mut last[column], &row[column]) {
                        a.push_str(", ");
                        a.push_str(b);
                        continue;
                    }
                }
            }
        }
        out.push((row.clone(), note));
    }
    out
}

/// The one text column two missing-only rows differ in, when they can be
/// drawn as one: same length, every non-text cell missing for one and the
/// same reason, text in the same columns.
fn mergeable(a: &[Cell], b: &[Cell]) -> Option<usize> {
    if a.len() != b.len() || !only_missing(a) || !only_missing(b) {
        return None;
    }
    let mut differing = None;
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        match (x, y) {
            (Cell::Text(p), Cell::Text(q)) if p != q => {
                if differing.replace(i).is_some() {
                    return None;
                }
            }
            (Cell::Text(_), Cell::Text(_)) => {}
            (Cell::Missing(p), Cell::Missing(q)) if p == q => {}
            _ => return None,
        }
    }
    differing
}

/// Whether every non-text cell of `row` is missing, all for one reason
/// (and at least one is).
fn only_missing(row: &[Cell]) -> bool {
    let mut reasons = row.iter().filter(|c| !matches!(c, Cell::Text(_)));
    match reasons.next() {
        Some(Cell::Missing(first)) => reasons.all(|c| matches!(c, Cell::Missing(r) if r == first)),
        _ => false,
    }
}

/// The CSS class of a verdict cell in a [`HtmlReport::linked_table`].
fn verdict_class(text: &str) -> Option<&'static str> {
    if text.starts_with("holds") {
        Some("holds")
    } else if text.starts_with("does not hold") {
        Some("fails")
    } else if text.starts_with("cannot run") || text.starts_with("not measured") {
        Some("cannot")
    } else {
        None
    }
}

/// [`cell_markup`] with a footnote mark after the cell's content.
fn cell_markup_marked(run: &CellRun<'_>, mark: usize) -> Markup {
    let colspan = (run.span > 1).then_some(run.span);
    let sup = html! { sup.mark { (mark) } };
    match run.cell {
        Cell::Text(text) => html! { td { (text) (sup) } },
        Cell::Number(value) => html! {
            td.num title=(value) { (format_number(*value)) (sup) }
        },
        Cell::Integer(value) => html! { td.num { (value) (sup) } },
        Cell::Missing(reason) => html! { td.missing colspan=[colspan] { (reason) (sup) } },
    }
}

/// One `<td>` for a run of cells: numbers right-aligned with the exact
/// value on hover, missing values grey with their reason (on hover only
/// when the row writes it in a wider run).
fn cell_markup(run: &CellRun<'_>) -> Markup {
    let colspan = (run.span > 1).then_some(run.span);
    match run.cell {
        Cell::Text(text) => html! { td { (text) } },
        Cell::Number(value) => html! {
            td.num title=(value) { (format_number(*value)) }
        },
        Cell::Integer(value) => html! { td.num { (value) } },
        Cell::Missing(reason) if run.shown => html! { td.missing colspan=[colspan] { (reason) } },
        Cell::Missing(reason) => html! { td.missing colspan=[colspan] title=(reason) {} },
    }
}

/// `value` to four significant digits, without exponent between 1e-4 and
/// 1e15 and with trailing zeros dropped: `81.5`, `1234567`, `0.5432`.
fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    let magnitude = value.abs();
    if !(1e-4..1e15).contains(&magnitude) {
        return format!("{value:.3e}");
    }
    let decimals = (3 - magnitude.log10().floor() as i32).clamp(0, 7) as usize;
    let mut text = format!("{value:.decimals$}");
    if text.contains('.') {
        let kept = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(kept);
    }
    text
}

/// `svg` without an XML prolog, if it is one `<svg>...</svg>` element
/// without `<script>`.
fn checked_svg(svg: &str) -> Option<&str> {
    let mut svg = svg.trim();
    if svg.starts_with("<?xml") {
        svg = svg.split_once("?>")?.1.trim_start();
    }
    let plain = svg.starts_with("<svg")
        && svg.ends_with("</svg>")
        && !svg.to_ascii_lowercase().contains("<script");
    plain.then_some(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{BarChart, LineChart, Series};
    use crate::export::testing::sample_table;

    #[test]
    fn page_holds_sections_tables_and_charts() {
        let chart = LineChart {
            title: "Sweep".into(),
            x_label: "load (units)".into(),
            y_label: "time (ms)".into(),
            x_log: false,
            y_log: false,
            series: vec![Series {
                name: "a".into(),
                points: vec![(0.0, 1.0), (1.0, 2.0)],
            }],
        }
        .to_svg()
        .unwrap();
        let bars = BarChart {
            title: "Bars".into(),
            y_label: "T_call (ns)".into(),
            categories: vec!["x".into()],
            series: vec![("median".into(), vec![Some(1.0)])],
            intervals: vec![vec![Some((0.5, 1.5))]],
            y_log: false,
        }
        .to_svg()
        .unwrap();
        let mut report = HtmlReport::new("waitwise report");
        report
            .paragraph("intro")
            .section("Machine")
            .preformatted("cpu0 <-> cpu1")
            .section("Mechanisms")
            .subsection("Table 1")
            .table(&sample_table())
            .svg(&chart)
            .svg_with_caption(&bars, "median T_call");
        let html = report.finish();
        for text in [
            "<title>waitwise report</title>",
            "<h2>Machine</h2>",
            "<h2>Mechanisms</h2>",
            "<h3>Table 1</h3>",
            "href=\"#section-2\"",
            "Condition &lt;wait&gt; &amp; notify",
            "mechanisms.csv",
            "t_<wbr>wakeup (ns)",
            "title=\"waiting &quot;mechanism&quot;\"",
            "<td class=\"num\" title=\"81.523\">81.52</td>",
            "<td class=\"missing\">n/a: CPU lacks WAITPKG</td>",
            "<tr class=\"noted\">",
            "<sup class=\"mark\">1</sup>",
            "<ol class=\"notes\"><li>not run, CPU lacks WAITPKG</li></ol>",
            "<dt>t_wakeup_ns</dt>",
            "cpu0 &lt;-&gt; cpu1",
            "Sweep",
            "<figcaption>median T_call</figcaption>",
        ] {
            assert!(html.contains(text), "missing {text}");
        }
        assert_eq!(html.matches("<svg").count(), 2);
        // No external resources: no links, scripts or remote sources.
        for external in ["<link", "<script", "src=", "@import"] {
            assert!(!html.contains(external), "found {external}");
        }
    }

    #[test]
    fn backticks_in_paragraphs_set_code() {
        let mut report = HtmlReport::new("t");
        report
            .paragraph("run `waitwise probe` then `a<b`")
            .paragraph("one ` alone");
        let html = report.finish();
        assert!(
            html.contains("<p>run <code>waitwise probe</code> then <code>a&lt;b</code></p>"),
            "{html}"
        );
        assert!(html.contains("<p>one ` alone</p>"));
    }

    #[test]
    fn text_is_escaped_everywhere() {
        let mut report = HtmlReport::new("<b>t</b>");
        report
            .section("a & b")
            .paragraph("<script>alert('x')</script>")
            .preformatted("\"quoted\"");
        let html = report.finish();
        assert!(html.contains("<h1>&lt;b&gt;t&lt;/b&gt;</h1>"));
        assert!(html.contains("<h2>a &amp; b</h2>"));
        assert!(html.contains("&lt;script&gt;alert('x')&lt;/script&gt;"));
        assert!(html.contains("&quot;quoted&quot;"));
        assert!(!html.contains("<script"));
    }

    #[test]
    fn untrusted_or_broken_svg_is_not_inlined() {
        let mut report = HtmlReport::new("t");
        report
            .svg("<svg><script>alert(1)</script></svg>")
            .svg("not svg <b>")
            .svg("<?xml version=\"1.0\"?>\n<svg width=\"1\"></svg>");
        let html = report.finish();
        assert_eq!(html.matches("omitted").count(), 2);
        assert!(html.contains("<svg width=\"1\"></svg>"));
        assert!(!html.contains("<?xml"));
    }

    #[test]
    fn malformed_table_is_shown_with_a_warning() {
        let mut bad = sample_table();
        bad.rows[0].pop();
        let mut report = HtmlReport::new("t");
        report.table(&bad);
        let html = report.finish();
        assert!(html.contains("class=\"warning\""));
        assert!(html.contains("umwait"));
    }

    #[test]
    fn empty_report_is_a_valid_page() {
        let html = HtmlReport::new("empty").finish();
        assert!(html.contains("<main></main>"));
        assert!(!html.contains("<nav>"));
    }

    #[test]
    fn cells_missing_for_one_reason_span_their_columns() {
        let mut table = crate::export::Table::new(
            "t",
            "T",
            ["name", "a", "b", "c", "d"]
                .iter()
                .map(|k| crate::export::Column::new(*k, None, ""))
                .collect(),
        );
        let na = || Cell::missing("n/a: CPU lacks WAITPKG");
        table.push_row(
            vec![Cell::text("umwait"), na(), na(), na(), na()],
            Some("n/a: CPU lacks WAITPKG".into()),
        );
        table.push_row(
            vec![
                Cell::text("spin"),
                Cell::Number(1.0),
                Cell::missing("no data"),
                Cell::missing("no data"),
                Cell::missing("other"),
            ],
            None,
        );
        let mut report = HtmlReport::new("t");
        report.table(&table);
        let html = report.finish();
        // One cell, once: not four, and not again in the note column.
        assert_eq!(html.matches("n/a: CPU lacks WAITPKG").count(), 1, "{html}");
        assert!(
            html.contains("<td class=\"missing\" colspan=\"4\">n/a: CPU lacks WAITPKG</td></tr>")
        );
        assert!(html.contains("<td class=\"missing\" colspan=\"2\">no data</td>"));
        assert!(html.contains("<td class=\"missing\">other</td>"));
        // The row keeps its highlight.
        assert_eq!(html.matches("<tr class=\"noted\">").count(), 1);
        // Two runs of one reason (the wake-up matrix's n/a rows): the text
        // once, in the wider run.
        let mut table = crate::export::Table::new(
            "m",
            "M",
            ["a", "b", "mech", "x", "y", "z"]
                .iter()
                .map(|k| crate::export::Column::new(*k, None, ""))
                .collect(),
        );
        table.push_row(
            vec![na(), na(), Cell::text("umwait"), na(), na(), na()],
            None,
        );
        let mut report = HtmlReport::new("t");
        report.table(&table);
        let html = report.finish();
        assert_eq!(
            html.matches(">n/a: CPU lacks WAITPKG<").count(),
            1,
            "{html}"
        );
        assert!(html.contains(
            "<td class=\"missing\" colspan=\"2\" title=\"n/a: CPU lacks WAITPKG\"></td><td>umwait</td>\
             <td class=\"missing\" colspan=\"3\">n/a: CPU lacks WAITPKG</td>"
        ));
    }

    #[test]
    fn rows_missing_for_one_reason_are_drawn_once() {
        let mut table = crate::export::Table::new(
            "p",
            "Park/resume",
            ["mechanism", "placement", "park", "resume"]
                .iter()
                .map(|k| crate::export::Column::new(*k, None, ""))
                .collect(),
        );
        let na = || Cell::missing("n/a: no SMT siblings");
        for m in ["spin", "pause", "block"] {
            table.push_row(vec![Cell::text(m), Cell::text("sibling"), na(), na()], None);
        }
        table.push_row(
            vec![
                Cell::text("spin"),
                Cell::text("core"),
                Cell::Number(1.0),
                Cell::Number(2.0),
            ],
            None,
        );
        let mut report = HtmlReport::new("t");
        report.table(&table);
        let html = report.finish();
        assert!(
            html.contains("<td>spin, pause, block</td><td>sibling</td>"),
            "{html}"
        );
        assert_eq!(html.matches("n/a: no SMT siblings").count(), 1);
        assert_eq!(html.matches("<tr>").count(), 3, "{html}");
    }

    #[test]
    fn collapsed_sections_fold_under_their_heading() {
        let mut report = HtmlReport::new("t");
        report
            .section_with_id("First", "first")
            .paragraph("open")
            .collapsed_section("Evidence", "ev")
            .paragraph("folded")
            .linked_table(
                "claims",
                &["claim", "verdict"],
                &[
                    (
                        vec!["a".into(), "holds".into()],
                        Some(("ev".into(), "Evidence".into())),
                    ),
                    (vec!["b".into(), "cannot run here: no SMT".into()], None),
                ],
            );
        let html = report.finish();
        assert!(html.contains(
            "<section class=\"evidence\" id=\"ev\"><details class=\"evidence\"><summary><h2>Evidence</h2></summary><p>folded</p>"
        ));
        assert!(
            html.contains("<td class=\"holds\">holds</td><td><a href=\"#ev\">Evidence</a></td>")
        );
        assert!(html.contains("<td class=\"cannot\">cannot run here: no SMT</td><td></td>"));
        assert!(html.contains("<section id=\"first\"><h2>First</h2><p>open</p>"));
    }

    #[test]
    fn facts_and_findings_link_to_sections() {
        let mut report = HtmlReport::new("t");
        report
            .section_with_id("Summary", "summary")
            .facts(&[("B".into(), "43 us".into())])
            .findings(&[
                (
                    "pause wakes <faster>".into(),
                    Some(("mechanisms".into(), "Mechanisms".into())),
                ),
                ("no link".into(), None),
            ])
            .section_with_id("Mechanisms", "mechanisms");
        let html = report.finish();
        assert!(html.contains("<dt>B</dt><dd>43 us</dd>"));
        assert!(html.contains(
            "<li>pause wakes &lt;faster&gt; (<a href=\"#mechanisms\">Mechanisms</a>)</li>"
        ));
        assert!(html.contains("<li>no link</li>"));
        assert!(html.contains("<section id=\"mechanisms\"><h2>Mechanisms</h2>"));
        assert!(html.contains("<li><a href=\"#summary\">Summary</a></li>"));
    }

    #[test]
    fn numbers_have_four_significant_digits() {
        for (value, text) in [
            (0.0, "0"),
            (81.523, "81.52"),
            (81.5, "81.5"),
            (1_234_567.0, "1234567"),
            (0.54321, "0.5432"),
            (-2.0, "-2"),
            (1e-6, "1.000e-6"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(format_number(value), text, "{value}");
        }
    }
}
