//! A small builder for the report's one self-contained HTML page.
//!
//! [`HtmlReport`] collects sections, paragraphs, preformatted text (machine
//! description, command lines), [`Table`]s and inline SVG charts, and
//! [`HtmlReport::finish`] writes an HTML5 document with its CSS inline and
//! no external resource, so `index.html` can be mailed or archived alone.
//!
//! Every piece of text is HTML-escaped ([`escape`]); the only markup taken
//! as given is SVG from [`crate::chart`], and even that is checked to be one
//! `<svg>` element without `<script>`.

use std::fmt::Write as _;

use crate::export::{Cell, Table};

/// The page's stylesheet: readable width, compact tables, highlighted noted
/// rows, charts scaled to the page.
const CSS: &str = "
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: #222;
       max-width: 1200px; margin: 2em auto; padding: 0 1em; line-height: 1.45; }
h1 { border-bottom: 2px solid #4e79a7; padding-bottom: 0.2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
nav ol { columns: 2; }
pre { background: #f6f8fa; border: 1px solid #ddd; padding: 0.8em; overflow-x: auto; }
.table-wrap { overflow-x: auto; margin: 1em 0; }
table { border-collapse: collapse; font-size: 0.92em; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
caption .file { font-weight: normal; color: #666; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #eef2f7; text-align: left; }
th[title] { text-decoration: underline dotted; cursor: help; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.missing { color: #777; font-style: italic; }
tbody tr:nth-child(even) { background: #fafafa; }
tr.noted, tbody tr.noted:nth-child(even) { background: #fff3cd; }
td.note { color: #8a6d3b; }
details { margin: 0.3em 0 1em; font-size: 0.9em; }
dt { font-family: monospace; font-weight: bold; }
dd { margin: 0 0 0.3em 1.5em; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.9em; }
.warning { color: #a94442; }
";

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
///     .section("Results")
///     .paragraph("Lower is better & faster.")
///     .table(&table);
/// let html = report.finish();
/// assert!(html.starts_with("<!DOCTYPE html>"));
/// assert!(html.contains("Lower is better &amp; faster."));
/// assert!(html.contains("class=\"noted\""));
/// ```
#[derive(Debug, Clone)]
pub struct HtmlReport {
    /// Page title (`<title>` and `<h1>`).
    title: String,
    /// Headings of the sections so far, for the table of contents; section
    /// `i` has the id `section-{i + 1}`.
    sections: Vec<String>,
    /// The body markup so far, without the closing `</section>` of the last
    /// section (added by [`finish`](Self::finish)).
    body: String,
}

impl HtmlReport {
    /// An empty report titled `title`.
    pub fn new(title: impl Into<String>) -> HtmlReport {
        HtmlReport {
            title: title.into(),
            sections: Vec::new(),
            body: String::new(),
        }
    }

    /// Starts a new section with an `<h2>` heading; it ends where the next
    /// section starts, or at the end of the page.
    pub fn section(&mut self, heading: &str) -> &mut Self {
        if !self.sections.is_empty() {
            self.body.push_str("</section>\n");
        }
        self.sections.push(heading.to_owned());
        let id = self.sections.len();
        let _ = writeln!(
            self.body,
            "<section id=\"section-{id}\">\n<h2>{}</h2>",
            escape(heading)
        );
        self
    }

    /// Adds an `<h3>` heading inside the current section.
    pub fn subsection(&mut self, heading: &str) -> &mut Self {
        let _ = writeln!(self.body, "<h3>{}</h3>", escape(heading));
        self
    }

    /// Adds a paragraph of plain text (escaped; no markup).
    pub fn paragraph(&mut self, text: &str) -> &mut Self {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
        self
    }

    /// Adds preformatted text in a monospace block (escaped): command lines,
    /// `/proc/cpuinfo` excerpts, topology.
    pub fn preformatted(&mut self, text: &str) -> &mut Self {
        let _ = writeln!(self.body, "<pre>{}</pre>", escape(text));
        self
    }

    /// Adds `table`: its title as caption (with its CSV file name, the
    /// report writes one CSV per table),
    /// column names with units (hover for the column's doc), numbers to four
    /// significant digits (the full value on hover and in the CSV/JSON),
    /// missing values in grey italics with their reason, rows with a note
    /// highlighted and the note in a last column, and the column docs in a
    /// folded list underneath.
    ///
    /// A malformed table (see [`Table::validate`]) is still shown, cell by
    /// cell as given, under a warning that says what is wrong.
    pub fn table(&mut self, table: &Table) -> &mut Self {
        let out = &mut self.body;
        if let Err(error) = table.validate() {
            let _ = writeln!(
                out,
                "<p class=\"warning\">{}</p>",
                escape(&error.to_string())
            );
        }
        let has_notes = table.row_notes.iter().any(Option::is_some);
        out.push_str("<div class=\"table-wrap\">\n<table>\n");
        let _ = writeln!(
            out,
            "<caption>{} <span class=\"file\">({}.csv)</span></caption>",
            escape(&table.title),
            escape(&table.name)
        );
        out.push_str("<thead><tr>");
        for column in &table.columns {
            let _ = write!(
                out,
                "<th scope=\"col\" title=\"{}\">{}</th>",
                escape(&column.doc),
                escape(&column.display_name())
            );
        }
        if has_notes {
            out.push_str("<th scope=\"col\">note</th>");
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for (index, row) in table.rows.iter().enumerate() {
            let note = table.row_note(index);
            out.push_str(if note.is_some() {
                "<tr class=\"noted\">"
            } else {
                "<tr>"
            });
            for cell in row {
                out.push_str(&cell_html(cell));
            }
            if has_notes {
                let _ = write!(
                    out,
                    "<td class=\"note\">{}</td>",
                    escape(note.unwrap_or(""))
                );
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        if !table.columns.is_empty() {
            out.push_str("<details><summary>Columns</summary>\n<dl>\n");
            for column in &table.columns {
                let _ = writeln!(
                    out,
                    "<dt>{}</dt><dd>{}</dd>",
                    escape(&column.header_key()),
                    escape(&column.doc)
                );
            }
            out.push_str("</dl>\n</details>\n");
        }
        out.push_str("</div>\n");
        self
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
        match checked_svg(svg) {
            Some(svg) => {
                self.body.push_str("<figure>\n");
                self.body.push_str(svg);
                self.body.push('\n');
                if let Some(caption) = caption {
                    let _ = writeln!(self.body, "<figcaption>{}</figcaption>", escape(caption));
                }
                self.body.push_str("</figure>\n");
            }
            None => {
                let what = caption.map_or(String::new(), |c| format!(" ({c})"));
                let _ = writeln!(
                    self.body,
                    "<p class=\"warning\">chart{} omitted: not a plain SVG document</p>",
                    escape(&what)
                );
            }
        }
        self
    }

    /// The finished page: doctype, head with the inline stylesheet, title,
    /// table of contents (from two sections on), and the body so far.
    ///
    /// Takes `&self`, so a report can be written out, extended and written
    /// again.
    pub fn finish(&self) -> String {
        let mut page = String::with_capacity(self.body.len() + CSS.len() + 1024);
        let title = escape(&self.title);
        page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        let _ = writeln!(
            page,
            "<title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>"
        );
        let _ = writeln!(page, "<h1>{title}</h1>");
        if self.sections.len() >= 2 {
            page.push_str("<nav>\n<ol>\n");
            for (i, heading) in self.sections.iter().enumerate() {
                let _ = writeln!(
                    page,
                    "<li><a href=\"#section-{}\">{}</a></li>",
                    i + 1,
                    escape(heading)
                );
            }
            page.push_str("</ol>\n</nav>\n");
        }
        page.push_str("<main>\n");
        page.push_str(&self.body);
        if !self.sections.is_empty() {
            page.push_str("</section>\n");
        }
        page.push_str("</main>\n</body>\n</html>\n");
        page
    }
}

/// `text` with the five HTML-special characters replaced by entities, safe
/// in element content and in double- or single-quoted attributes.
///
/// # Examples
/// ```
/// use waitwise_bench::html::escape;
/// assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
/// ```
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One `<td>` for `cell`: numbers right-aligned with the exact value on
/// hover, missing values grey with their reason.
fn cell_html(cell: &Cell) -> String {
    match cell {
        Cell::Text(text) => format!("<td>{}</td>", escape(text)),
        Cell::Number(value) => format!(
            "<td class=\"num\" title=\"{value}\">{}</td>",
            format_number(*value)
        ),
        Cell::Integer(value) => format!("<td class=\"num\">{value}</td>"),
        Cell::Missing(reason) => format!("<td class=\"missing\">{}</td>", escape(reason)),
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

/// Checks that every element in `html` is closed in order (a stack of open
/// tags; void elements, `<x/>` and `<!...>` skipped): the structural check
/// the report's tests apply to `index.html`, inline SVG included.
pub fn check_balanced(html: &str) -> Result<(), String> {
    const VOID: [&str; 3] = ["meta", "br", "hr"];
    let mut stack: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        let Some(len) = rest[start..].find('>') else {
            return Err("unclosed '<'".into());
        };
        let end = start + len;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') || tag.starts_with('?') || tag.ends_with('/') {
            continue;
        }
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == ':')
            .collect();
        if VOID.contains(&name.as_str()) {
            continue;
        }
        if tag.starts_with('/') {
            match stack.pop() {
                Some(open) if open == name => {}
                other => return Err(format!("stray </{name}> (open: {other:?})")),
            }
        } else {
            stack.push(name);
        }
    }
    if stack.is_empty() {
        Ok(())
    } else {
        Err(format!("unclosed: {stack:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{BarChart, LineChart, Series};
    use crate::export::testing::sample_table;

    fn assert_balanced(html: &str) {
        if let Err(e) = check_balanced(html) {
            panic!("{e}");
        }
    }

    #[test]
    fn page_holds_sections_tables_and_charts_and_is_balanced() {
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
        assert_balanced(&html);
        for text in [
            "<title>waitwise report</title>",
            "<h2>Machine</h2>",
            "<h2>Mechanisms</h2>",
            "<h3>Table 1</h3>",
            "href=\"#section-2\"",
            "Condition &lt;wait&gt; &amp; notify",
            "mechanisms.csv",
            "t_wakeup (ns)",
            "title=\"waiting &quot;mechanism&quot;\"",
            "<td class=\"num\" title=\"81.523\">81.52</td>",
            "<td class=\"missing\">n/a: CPU lacks WAITPKG</td>",
            "<tr class=\"noted\">",
            "<td class=\"note\">not run, CPU lacks WAITPKG</td>",
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
    fn text_is_escaped_everywhere() {
        let mut report = HtmlReport::new("<b>t</b>");
        report
            .section("a & b")
            .paragraph("<script>alert('x')</script>")
            .preformatted("\"quoted\"");
        let html = report.finish();
        assert_balanced(&html);
        assert!(html.contains("<h1>&lt;b&gt;t&lt;/b&gt;</h1>"));
        assert!(html.contains("<h2>a &amp; b</h2>"));
        assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
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
        assert_balanced(&html);
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
        assert_balanced(&html);
        assert!(html.contains("class=\"warning\""));
        assert!(html.contains("umwait"));
    }

    #[test]
    fn empty_report_is_a_valid_page() {
        let html = HtmlReport::new("empty").finish();
        assert_balanced(&html);
        assert!(html.contains("<main>\n</main>"));
        assert!(!html.contains("<nav>"));
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
