//! What every chart shares: canvas, fonts, palette, number format, axis
//! ranges and the legend panel.
//!
//! Sizes are plotters "pixels"; its SVG backend writes `font-size` as the
//! size / 1.24, so a 20 px title is a 16 px SVG font.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::error::ChartError;

/// Font family of every text; resolved by the browser, no font file needed.
pub(super) const FONT: &str = "sans-serif";
/// Chart title size.
pub(super) const TITLE_SIZE: u32 = 24;
/// Axis description ("wake-up latency (ns)") size.
pub(super) const AXIS_DESC_SIZE: u32 = 18;
/// Tick label, legend and in-cell value size.
pub(super) const LABEL_SIZE: u32 = 15;
/// Size of the grey notes under a plot ("3 points <= 0 not shown").
pub(super) const NOTE_SIZE: u32 = 13;
/// Space around the whole chart.
pub(super) const MARGIN: u32 = 12;
/// Longest series or category name drawn before it is cut with an ellipsis.
pub(super) const MAX_LABEL_CHARS: usize = 40;

/// Tableau 10: ten colors that stay distinct on screen, in print and for
/// the common forms of color blindness (Tableau Software, 2016).
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7), // blue
    RGBColor(0xf2, 0x8e, 0x2b), // orange
    RGBColor(0xe1, 0x57, 0x59), // red
    RGBColor(0x76, 0xb7, 0xb2), // teal
    RGBColor(0x59, 0xa1, 0x4f), // green
    RGBColor(0xed, 0xc9, 0x48), // yellow
    RGBColor(0xb0, 0x7a, 0xa1), // purple
    RGBColor(0xff, 0x9d, 0xa7), // pink
    RGBColor(0x9c, 0x75, 0x5f), // brown
    RGBColor(0x79, 0x70, 0x6e), // dark grey
];

/// Grey for notes, "n/a" labels and missing cells' text.
pub(super) const NOTE_COLOR: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// Color of series `index`; repeats after ten, so lines also change
/// [`Marker`] every ten series.
pub(super) fn series_color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// The point marker of a line series: the shape changes each time the
/// palette wraps, so series 0 and 10 still differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    Circle,
    Triangle,
    Square,
}

impl Marker {
    /// Marker of series `index`.
    pub(super) fn of_series(index: usize) -> Marker {
        match (index / PALETTE.len()) % 3 {
            0 => Marker::Circle,
            1 => Marker::Triangle,
            _ => Marker::Square,
        }
    }

    /// Draws this marker centred on pixel `at` of `area`.
    pub(super) fn draw_at(
        self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        at: (i32, i32),
        color: RGBColor,
    ) -> Result<(), ChartError> {
        let style = color.filled();
        let (x, y) = at;
        match self {
            Marker::Circle => area.draw(&Circle::new(at, 4, style)),
            Marker::Triangle => area.draw(&TriangleMarker::new(at, 5, style)),
            Marker::Square => area.draw(&Rectangle::new([(x - 4, y - 4), (x + 4, y + 4)], style)),
        }
        .map_err(ChartError::draw)
    }
}

/// Largest canvas side: absurd inputs (thousands of categories) give a
/// cramped chart rather than pixel arithmetic that overflows.
pub(super) const MAX_CANVAS: u32 = 16_384;

/// `count` items of `each` pixels, saturating instead of overflowing.
pub(super) fn px(count: usize, each: u32) -> u32 {
    u32::try_from(count)
        .unwrap_or(u32::MAX)
        .saturating_mul(each)
}

/// Renders an SVG document of `size` pixels (each side at most
/// [`MAX_CANVAS`]): a white canvas, `draw` on it, then the finished
/// `<svg>...</svg>` text.
pub(super) fn render_svg<F>(size: (u32, u32), draw: F) -> Result<String, ChartError>
where
    F: FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), ChartError>,
{
    let size = (size.0.min(MAX_CANVAS), size.1.min(MAX_CANVAS));
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        root.fill(&WHITE).map_err(ChartError::draw)?;
        draw(&root)?;
        root.present().map_err(ChartError::draw)?;
    }
    Ok(buf)
}

/// Draws the title centred at the top of `root` and returns the area below
/// it, inside [`MARGIN`].
pub(super) fn titled<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>, ChartError> {
    let inner = root.margin(MARGIN, MARGIN, MARGIN, MARGIN);
    inner
        .titled(title, (FONT, TITLE_SIZE).into_font().style(FontStyle::Bold))
        .map_err(ChartError::draw)
}

/// Estimated width in pixels of `text` drawn at `size`: a conservative
/// average glyph width for sans-serif fonts (the SVG backend cannot measure).
pub(super) fn text_width(text: &str, size: u32) -> u32 {
    px(text.chars().count(), size).div_ceil(2)
}

/// `label` cut to [`MAX_LABEL_CHARS`] characters, with an ellipsis when cut.
pub(super) fn truncate_label(label: &str) -> String {
    if label.chars().count() <= MAX_LABEL_CHARS {
        label.to_owned()
    } else {
        let mut cut: String = label.chars().take(MAX_LABEL_CHARS - 1).collect();
        cut.push('…');
        cut
    }
}

/// A number for a tick, a bar end or a cell: three significant digits, SI
/// suffix from a thousand up (`1.23k`, `45M`), trailing zeros dropped,
/// scientific notation below 0.001.
/// Time units of a value axis, smallest first, as the report spells them.
const TIME_UNITS: [&str; 4] = ["ns", "us", "ms", "s"];

/// A value axis labelled in a time unit (a label ending in "(ns)", "(us)",
/// "(µs)" or "(ms)") whose `largest` value reaches 1000 of that unit, in
/// the unit that keeps it below 1000: "latency (us)" with values up to
/// 3830 becomes "latency (ms)" with the values divided by 1000, so its
/// ticks read 3.83, not "3.83k" µs. Returns the label and the divisor;
/// any other label, or smaller values, comes back as it was with 1.
pub(super) fn time_axis(label: &str, largest: f64) -> (String, f64) {
    let unchanged = (label.to_owned(), 1.0);
    let Some(open) = label.rfind('(') else {
        return unchanged;
    };
    let Some(unit) = label[open + 1..].strip_suffix(')') else {
        return unchanged;
    };
    let unit = if unit == "µs" { "us" } else { unit };
    let Some(mut step) = TIME_UNITS[..3].iter().position(|u| *u == unit) else {
        return unchanged;
    };
    let mut divisor = 1.0;
    while largest.is_finite() && largest / divisor >= 1000.0 && step + 1 < TIME_UNITS.len() {
        divisor *= 1000.0;
        step += 1;
    }
    if divisor == 1.0 {
        return unchanged;
    }
    (format!("{}({})", &label[..open], TIME_UNITS[step]), divisor)
}

pub(super) fn format_value(value: f64) -> String {
    if !value.is_finite() {
        return format!("{value}");
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    if value.abs() < 1e-3 {
        return format!("{value:.2e}");
    }
    // Round to three significant digits first, so that 999.7 becomes "1k".
    let step = 10f64.powi(value.abs().log10().floor() as i32 - 2);
    let rounded = (value / step).round() * step;
    let (scaled, suffix) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(unit, _)| rounded.abs() >= *unit)
        .map_or((rounded, ""), |(unit, suffix)| (rounded / unit, suffix));
    let digits_before_point = scaled.abs().log10().floor() as i32 + 1;
    let decimals = (3 - digits_before_point).clamp(0, 4) as usize;
    let mut text = format!("{scaled:.decimals$}");
    if text.contains('.') {
        let trimmed = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(trimmed);
    }
    if text == "-0" {
        text = "0".to_owned();
    }
    text.push_str(suffix);
    text
}

/// The range of a linear value axis showing `min..=max`: it starts at zero
/// when all values have one sign (bars and times read from zero), has 5%
/// headroom, and is widened when empty or a single value.
pub(super) fn linear_range(min: f64, max: f64) -> (f64, f64) {
    if !(min.is_finite() && max.is_finite()) || min > max {
        return (0.0, 1.0);
    }
    let (lo, hi) = if min >= 0.0 {
        (0.0, max)
    } else if max <= 0.0 {
        (min, 0.0)
    } else {
        (min, max)
    };
    if hi - lo == 0.0 {
        return if lo == 0.0 {
            (0.0, 1.0)
        } else {
            (lo - lo.abs(), hi + hi.abs())
        };
    }
    let pad = (hi - lo) * 0.05;
    let lo = if lo < 0.0 { lo - pad } else { lo };
    let hi = if hi > 0.0 { hi + pad } else { hi };
    (lo, hi)
}

/// The range of a data axis (an x sweep) showing `min..=max` as it is, widened
/// by one on each side when it is a single value.
pub(super) fn tight_range(min: f64, max: f64) -> (f64, f64) {
    if !(min.is_finite() && max.is_finite()) || min > max {
        (0.0, 1.0)
    } else if min == max {
        (min - 1.0, max + 1.0)
    } else {
        (min, max)
    }
}

/// The range of a log axis showing the positive values `min..=max`, widened
/// to whole decades: plotters puts log ticks only on powers of ten, so an
/// axis inside one decade would have none.
pub(super) fn log_range(min: f64, max: f64) -> (f64, f64) {
    if !(min.is_finite() && max.is_finite()) || min <= 0.0 || min > max {
        return (1.0, 10.0);
    }
    let lo = 10f64.powf(min.log10().floor());
    let mut hi = 10f64.powf(max.log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    // A hair outside the decades: plotters finds the first tick as
    // 10^ceil(log10(lo)), which rounding can push one decade up when lo is
    // itself a power of ten, and so would drop the end ticks' labels.
    (lo * (1.0 - LOG_RANGE_NUDGE), hi * (1.0 + LOG_RANGE_NUDGE))
}

/// Relative widening of log axis ends, see [`log_range`].
const LOG_RANGE_NUDGE: f64 = 1e-9;

/// Minimum and maximum of `values`, or `None` when there are none.
pub(super) fn min_max(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values.into_iter().fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// What a legend entry shows next to its name.
#[derive(Debug, Clone, Copy)]
pub(super) enum Swatch {
    /// A line segment with the series' marker (line charts).
    Line(Marker),
    /// A filled box (bar charts).
    Box,
}

/// One row of a legend.
pub(super) struct LegendEntry {
    pub(super) name: String,
    pub(super) color: RGBColor,
    pub(super) swatch: Swatch,
}

/// Width of a legend panel that fits `names` (clamped to 120..=340 px).
pub(super) fn legend_width<'a>(names: impl IntoIterator<Item = &'a str>) -> u32 {
    let widest = names
        .into_iter()
        .map(|n| text_width(&truncate_legend(n), LABEL_SIZE))
        .max()
        .unwrap_or(0);
    (widest + 50).clamp(
        120,
        50 + text_width(&"x".repeat(MAX_LEGEND_CHARS), LABEL_SIZE),
    )
}

/// Legend entries are written whole up to this many characters (axis
/// labels stop at [`MAX_LABEL_CHARS`]): a legend is the only place a
/// series is named. Longer ones end in an ellipsis.
pub(super) const MAX_LEGEND_CHARS: usize = 72;

/// `name` cut to [`MAX_LEGEND_CHARS`] characters, with an ellipsis when
/// cut.
pub(super) fn truncate_legend(name: &str) -> String {
    if name.chars().count() <= MAX_LEGEND_CHARS {
        name.to_owned()
    } else {
        let mut cut: String = name.chars().take(MAX_LEGEND_CHARS - 1).collect();
        cut.push('…');
        cut
    }
}

/// Draws `entries` top-down in `area` (a panel beside the plot, so it never
/// covers data), then `notes` in grey below them.
pub(super) fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    entries: &[LegendEntry],
    notes: &[String],
) -> Result<(), ChartError> {
    let row = LABEL_SIZE as i32 + 8;
    let label_style =
        TextStyle::from((FONT, LABEL_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let mut y = 24;
    for entry in entries {
        match entry.swatch {
            Swatch::Line(marker) => {
                area.draw(&PathElement::new(
                    vec![(8, y), (36, y)],
                    entry.color.stroke_width(2),
                ))
                .map_err(ChartError::draw)?;
                marker.draw_at(area, (22, y), entry.color)?;
            }
            Swatch::Box => {
                area.draw(&Rectangle::new(
                    [(12, y - 6), (32, y + 6)],
                    entry.color.filled(),
                ))
                .map_err(ChartError::draw)?;
            }
        }
        area.draw(&Text::new(
            truncate_legend(&entry.name),
            (44, y),
            label_style.clone(),
        ))
        .map_err(ChartError::draw)?;
        y += row;
    }
    draw_notes(area, notes, y + 8)
}

/// Draws `notes` in small grey text, each wrapped to the width of `area`,
/// starting at pixel row `y`.
pub(super) fn draw_notes(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    notes: &[String],
    mut y: i32,
) -> Result<(), ChartError> {
    let style = TextStyle::from((FONT, NOTE_SIZE).into_font())
        .color(&NOTE_COLOR)
        .pos(Pos::new(HPos::Left, VPos::Top));
    let (width, _) = area.dim_in_pixel();
    let max_chars = (width.saturating_sub(16) / NOTE_SIZE.div_ceil(2)).max(10) as usize;
    for line in notes.iter().flat_map(|note| wrap(note, max_chars)) {
        area.draw(&Text::new(line, (8, y), style.clone()))
            .map_err(ChartError::draw)?;
        y += NOTE_SIZE as i32 + 5;
    }
    Ok(())
}

/// `text` broken at spaces into lines of at most `max_chars` characters
/// (a longer word gets a line of its own).
fn wrap(text: &str, max_chars: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > max_chars {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Writes "no data" in the middle of `area`.
pub(super) fn draw_no_data(area: &DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), ChartError> {
    let (w, h) = area.dim_in_pixel();
    let style = TextStyle::from((FONT, AXIS_DESC_SIZE).into_font())
        .color(&NOTE_COLOR)
        .pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new("no data", (w as i32 / 2, h as i32 / 2), style))
        .map_err(ChartError::draw)
}

#[cfg(test)]
mod tests {

    #[test]
    fn time_axes_step_up_their_unit_at_a_thousand() {
        assert_eq!(
            time_axis("latency (us)", 3830.0),
            ("latency (ms)".to_owned(), 1000.0)
        );
        assert_eq!(
            time_axis("T_call, median (ns)", 2.5e6),
            ("T_call, median (ms)".to_owned(), 1e6)
        );
        assert_eq!(
            time_axis("wait (µs)", 1500.0),
            ("wait (ms)".to_owned(), 1000.0)
        );
        assert_eq!(
            time_axis("total (ms)", 2e6),
            ("total (s)".to_owned(), 1000.0)
        );
        assert_eq!(
            time_axis("total (s)", 5000.0),
            ("total (s)".to_owned(), 1.0)
        );
        assert_eq!(
            time_axis("latency (us)", 999.0),
            ("latency (us)".to_owned(), 1.0)
        );
        assert_eq!(
            time_axis("ratio (x)", 5000.0),
            ("ratio (x)".to_owned(), 1.0)
        );
        assert_eq!(time_axis("no unit", 5000.0), ("no unit".to_owned(), 1.0));
        assert_eq!(
            time_axis("latency (us)", f64::NAN),
            ("latency (us)".to_owned(), 1.0)
        );
    }
    use super::*;

    #[test]
    fn values_are_formatted_with_three_significant_digits() {
        let cases = [
            (0.0, "0"),
            (1.0, "1"),
            (5.0, "5"),
            (12.345, "12.3"),
            (0.5432, "0.543"),
            (0.25, "0.25"),
            (999.0, "999"),
            (999.7, "1k"),
            (0.99999, "1"),
            (1000.0, "1k"),
            (1234.0, "1.23k"),
            (2500.0, "2.5k"),
            (45_000_000.0, "45M"),
            (-1500.0, "-1.5k"),
            (0.000_12, "1.20e-4"),
            (-0.0001, "-1.00e-4"),
        ];
        for (value, text) in cases {
            assert_eq!(format_value(value), text, "{value}");
        }
        assert_eq!(format_value(f64::NAN), "NaN");
    }

    #[test]
    fn ranges_are_sane_for_odd_input() {
        assert_eq!(linear_range(3.0, 10.0), (0.0, 10.5));
        assert_eq!(linear_range(-10.0, -2.0), (-10.5, 0.0));
        assert_eq!(linear_range(0.0, 0.0), (0.0, 1.0));
        assert_eq!(linear_range(5.0, 5.0), (0.0, 5.25));
        assert_eq!(linear_range(f64::NAN, 1.0), (0.0, 1.0));
        assert_eq!(tight_range(2.0, 2.0), (1.0, 3.0));
        let near = |(a, b): (f64, f64), (c, d): (f64, f64)| {
            (a - c).abs() <= c * 1e-8 && (b - d).abs() <= d * 1e-8 && a <= c && b >= d
        };
        assert!(near(log_range(1200.0, 1800.0), (1000.0, 10000.0)));
        assert!(near(log_range(1000.0, 1000.0), (1000.0, 10000.0)));
        assert!(near(log_range(0.5, 20.0), (0.1, 100.0)));
        assert_eq!(log_range(0.0, 20.0), (1.0, 10.0));
    }

    #[test]
    fn notes_wrap_at_spaces() {
        assert_eq!(wrap("a bb ccc dddd", 6), vec!["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("unbreakableword x", 4), vec!["unbreakableword", "x"]);
        assert!(wrap("   ", 5).is_empty());
    }

    #[test]
    fn long_labels_are_cut() {
        let long = "x".repeat(100);
        assert_eq!(truncate_label(&long).chars().count(), MAX_LABEL_CHARS);
        assert!(truncate_label(&long).ends_with('…'));
        assert_eq!(truncate_label("spin"), "spin");
    }
}
