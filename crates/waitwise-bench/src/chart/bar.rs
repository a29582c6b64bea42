//! Bar charts: horizontal bars, grouped when there are several series.
//!
//! Bars are horizontal so that long category names ("s/b/0.54 (pause)",
//! "pthread_cond_wait/signal") are written on one line, left of their bars,
//! with no rotation; the chart grows in height with the number of bars.
//! A bar of a median can carry a whisker: the 95% CI of that median.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::error::ChartError;
use super::style::{
    self, draw_legend, draw_no_data, format_value, legend_width, min_max, px, series_color,
    text_width, truncate_label, LegendEntry, Swatch, AXIS_DESC_SIZE, FONT, LABEL_SIZE, NOTE_COLOR,
};

/// Width of the part holding category names, bars and value axis.
const PLOT_WIDTH: u32 = 900;
/// Height of one bar.
const BAR_HEIGHT: u32 = 18;
/// Empty space between two categories' groups of bars.
const GROUP_GAP: u32 = 14;
/// Height above and below the bars: title, axis labels, margins.
const FRAME_HEIGHT: u32 = 150;
/// Room right of the plot for the value written after the longest bar.
const VALUE_ROOM: u32 = 64;

/// A bar chart: one bar per category and series, for example the median
/// T_wakeup (value) of each contender (category), or normalized runtime of
/// each policy (category) for matched and unmatched runs (two series).
///
/// A `None` value draws no bar and writes "n/a" in its place; so does a NaN,
/// and a value <= 0 on a log axis is written but not drawn. A bar with an
/// interval gets a whisker from its low to its high end (ends <= 0 on a log
/// axis are cut at the axis).
///
/// # Examples
/// ```
/// use waitwise_bench::chart::BarChart;
/// let chart = BarChart {
///     title: "Wake-up latency".into(),
///     y_label: "T_wakeup, median (ns)".into(),
///     categories: vec!["spin".into(), "umwait".into()],
///     series: vec![("median".into(), vec![Some(80.0), None])],
///     intervals: vec![vec![Some((70.0, 95.0)), None]],
///     y_log: false,
/// };
/// let svg = chart.to_svg().unwrap();
/// assert!(svg.contains("umwait") && svg.contains("n/a"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Title drawn above the chart.
    pub title: String,
    /// Description of the value axis, with its unit: "T_call, median (ns)".
    /// Bars are horizontal, so this axis runs along the bottom.
    pub y_label: String,
    /// One group of bars per category, top to bottom, named left of the bars.
    pub categories: Vec<String>,
    /// `(legend name, one value per category)`; `None` = not measured
    /// ("n/a"). Every series must have exactly `categories.len()` values.
    pub series: Vec<(String, Vec<Option<f64>>)>,
    /// Whiskers: per series (in the order of `series`), per category, the
    /// `(low, high)` ends of the value's 95% CI. Empty, or a series without
    /// an entry here: no whiskers for it.
    pub intervals: Vec<Vec<Option<(f64, f64)>>>,
    /// Logarithmic value axis (whole decades).
    pub y_log: bool,
}

impl BarChart {
    /// Renders the chart as an SVG document (`<svg ...>...</svg>`).
    ///
    /// # Errors
    /// [`ChartError::Shape`] when a series does not have one value per
    /// category; [`ChartError::Draw`] if plotters fails.
    pub fn to_svg(&self) -> Result<String, ChartError> {
        if let Some(scaled) = self.in_time_unit() {
            return scaled.to_svg();
        }
        self.check_shape()?;
        let bounds = self.value_bounds();
        let notes = self.notes();
        let categories = self.categories.len();
        let band = px(self.series.len().max(1), BAR_HEIGHT).saturating_add(GROUP_GAP);
        let plot_height = px(categories.max(1), band);
        let label_width = self.label_width();
        let legend = legend_width(self.series.iter().map(|(name, _)| name.as_str()));
        let size = (
            PLOT_WIDTH + legend,
            plot_height.saturating_add(FRAME_HEIGHT),
        );

        style::render_svg(size, |root| {
            let area = style::titled(root, &self.title)?;
            let (plot, legend_area) = area.split_horizontally(PLOT_WIDTH);
            let bars = Bars {
                chart: self,
                root,
                label_width,
            };
            let (lo, hi) = bounds.unwrap_or((f64::NAN, f64::NAN));
            if self.y_log {
                let (lo, hi) = style::log_range(lo, hi);
                bars.draw(&plot, (lo..hi).log_scale(), lo)?;
            } else {
                let (lo, hi) = style::linear_range(lo, hi);
                bars.draw(&plot, lo..hi, 0.0)?;
            }
            if categories == 0 || self.series.is_empty() {
                draw_no_data(&plot)?;
            }
            let entries: Vec<LegendEntry> = self
                .series
                .iter()
                .enumerate()
                .map(|(i, (name, _))| LegendEntry {
                    name: name.clone(),
                    color: series_color(i),
                    swatch: Swatch::Box,
                })
                .collect();
            draw_legend(&legend_area, &entries, &notes)
        })
    }
}

impl BarChart {
    /// The chart with its values in the time unit that reads best
    /// ([`style::time_axis`]), when that is not the one given.
    fn in_time_unit(&self) -> Option<BarChart> {
        let values = self
            .series
            .iter()
            .flat_map(|(_, v)| v.iter().flatten().copied());
        let ends = self
            .intervals
            .iter()
            .flatten()
            .flatten()
            .flat_map(|&(lo, hi)| [lo, hi]);
        let largest = values.chain(ends).fold(0.0, |m: f64, v| m.max(v.abs()));
        let (y_label, divisor) = style::time_axis(&self.y_label, largest);
        if divisor == 1.0 {
            return None;
        }
        let mut scaled = self.clone();
        scaled.y_label = y_label;
        for (_, values) in &mut scaled.series {
            values.iter_mut().flatten().for_each(|v| *v /= divisor);
        }
        for (lo, hi) in scaled.intervals.iter_mut().flatten().flatten() {
            *lo /= divisor;
            *hi /= divisor;
        }
        Some(scaled)
    }

    /// Every series and every interval list has one entry per category.
    fn check_shape(&self) -> Result<(), ChartError> {
        let categories = self.categories.len();
        for (name, values) in &self.series {
            if values.len() != categories {
                return Err(ChartError::Shape {
                    what: format!("bar series {name:?} against the categories"),
                    expected: categories,
                    found: values.len(),
                });
            }
        }
        for (i, ends) in self.intervals.iter().enumerate() {
            if ends.len() != categories {
                return Err(ChartError::Shape {
                    what: format!("bar intervals {i} against the categories"),
                    expected: categories,
                    found: ends.len(),
                });
            }
        }
        Ok(())
    }

    /// The smallest and largest value drawn, whiskers included.
    fn value_bounds(&self) -> Option<(f64, f64)> {
        let whisker_ends = self
            .intervals
            .iter()
            .flat_map(|ends| ends.iter().flatten().flat_map(|&(lo, hi)| [lo, hi]));
        min_max(
            self.series
                .iter()
                .flat_map(|(_, values)| values.iter().flatten().copied())
                .chain(whisker_ends)
                .filter(|&v| v.is_finite() && (!self.y_log || v > 0.0)),
        )
    }

    /// The legend's notes: what the whiskers are, what a log axis leaves
    /// out.
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.intervals.iter().flatten().any(Option::is_some) {
            notes.push("whiskers: 95% CI of the median".to_owned());
        }
        if self.y_log
            && self
                .series
                .iter()
                .any(|(_, values)| values.iter().flatten().any(|&v| v <= 0.0))
        {
            notes.push("values <= 0 have no bar on the log axis".to_owned());
        }
        notes
    }

    /// Pixels for the category labels, within bounds.
    fn label_width(&self) -> u32 {
        self.categories
            .iter()
            .map(|c| text_width(&truncate_label(c), LABEL_SIZE))
            .max()
            .unwrap_or(0)
            .clamp(40, 340)
            + 16
    }
}

/// The drawing of one [`BarChart`], whatever the value axis type.
struct Bars<'c, 'r, 'b> {
    chart: &'c BarChart,
    /// The whole canvas: category names and value labels are drawn on it in
    /// pixels, outside the plotting area.
    root: &'r DrawingArea<SVGBackend<'b>, Shift>,
    label_width: u32,
}

impl Bars<'_, '_, '_> {
    /// Draws axis, bars and labels on `area` with value axis `x` (`lo..hi`
    /// or `(lo..hi).log_scale()`); bars start at `base`.
    fn draw<X>(
        &self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        x: X,
        base: f64,
    ) -> Result<(), ChartError>
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
    {
        let categories = self.chart.categories.len();
        let groups = self.chart.series.len().max(1);
        // Category i owns the band [n - i - 1, n - i] of the y axis: the first
        // category is on top. The gap is split above and below each group.
        let rows = categories.max(1) as f64;
        let band_px = f64::from(px(groups, BAR_HEIGHT).saturating_add(GROUP_GAP));
        let gap = f64::from(GROUP_GAP) / band_px;
        let bar = f64::from(BAR_HEIGHT) / band_px;
        let y: RangedCoordf64 = (0.0..rows).into();

        let mut chart = ChartBuilder::on(area)
            .margin(10)
            .margin_right(VALUE_ROOM)
            .x_label_area_size(60)
            .y_label_area_size(self.label_width)
            .build_cartesian_2d(x, y)
            .map_err(ChartError::draw)?;
        let format = |v: &f64| format_value(*v);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc(self.chart.y_label.as_str())
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, AXIS_DESC_SIZE))
            .x_label_formatter(&format)
            .max_light_lines(4)
            .light_line_style(RGBColor(0xee, 0xee, 0xee))
            .draw()
            .map_err(ChartError::draw)?;

        let name_style = TextStyle::from((FONT, LABEL_SIZE).into_font())
            .pos(Pos::new(HPos::Right, VPos::Center));
        let value_style = TextStyle::from((FONT, LABEL_SIZE - 2).into_font())
            .pos(Pos::new(HPos::Left, VPos::Center));
        let missing_style = value_style.clone().color(&NOTE_COLOR);
        // Category names end just left of the y axis, whatever the bars' base.
        let axis_start = chart.x_range().start;
        for (i, category) in self.chart.categories.iter().enumerate() {
            let top = rows - i as f64;
            let (px, py) = chart.backend_coord(&(axis_start, top - 0.5));
            self.root
                .draw(&Text::new(
                    truncate_label(category),
                    (px - 8, py),
                    name_style.clone(),
                ))
                .map_err(ChartError::draw)?;
            for j in 0..self.chart.series.len() {
                let bar_top = top - gap / 2.0 - j as f64 * bar;
                let spot = BarSpot {
                    category: i,
                    series: j,
                    top: bar_top,
                    height: bar,
                    base,
                    axis_start,
                };
                self.draw_bar(&mut chart, &spot, &value_style, &missing_style)?;
            }
        }
        Ok(())
    }

    /// Draws series `spot.series`'s bar of category `spot.category`: the
    /// bar, its whisker and its value (or "n/a").
    fn draw_bar<C>(
        &self,
        chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<C, RangedCoordf64>>,
        spot: &BarSpot,
        value_style: &TextStyle<'_>,
        missing_style: &TextStyle<'_>,
    ) -> Result<(), ChartError>
    where
        C: Ranged<ValueType = f64>,
    {
        let (i, j, bar_top, bar, base, axis_start) = (
            spot.category,
            spot.series,
            spot.top,
            spot.height,
            spot.base,
            spot.axis_start,
        );
        let values = &self.chart.series[j].1;
        let (bar_bottom, middle) = (bar_top - bar, bar_top - bar / 2.0);
        let value = values.get(i).copied().flatten().filter(|v| !v.is_nan());
        let drawable = value.filter(|&v| v.is_finite() && (!self.chart.y_log || v > 0.0));
        let whisker = drawable.and(
            self.chart
                .intervals
                .get(j)
                .and_then(|ends| ends.get(i).copied().flatten())
                .filter(|(lo, hi)| lo.is_finite() && hi.is_finite() && lo <= hi),
        );
        if let Some(v) = drawable {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(base, bar_top), (v, bar_bottom)],
                    series_color(j).filled(),
                )))
                .map_err(ChartError::draw)?;
        }
        if let Some((lo, hi)) = whisker {
            // On a log axis an end <= 0 is cut at the axis start.
            let lo = if self.chart.y_log {
                lo.max(axis_start)
            } else {
                lo
            };
            let cap = bar / 3.0;
            let ink = ShapeStyle::from(&BLACK).stroke_width(1);
            let lines = [
                vec![(lo, middle), (hi, middle)],
                vec![(lo, middle - cap), (lo, middle + cap)],
                vec![(hi, middle - cap), (hi, middle + cap)],
            ];
            chart
                .draw_series(lines.into_iter().map(|l| PathElement::new(l, ink)))
                .map_err(ChartError::draw)?;
        }
        let (text, end, style) = match (value, drawable) {
            (None, _) => ("n/a".to_owned(), base, missing_style),
            (Some(v), Some(_)) => (
                format_value(v),
                whisker.map_or(v, |(_, hi)| hi.max(v)),
                value_style,
            ),
            (Some(v), None) => (format_value(v), base, missing_style),
        };
        let (ex, ey) = chart.backend_coord(&(end, middle));
        let text_pos = if end < base {
            // A negative bar grows leftwards: write its value inside
            // the plot, right of the zero line, to stay clear of the
            // category names.
            let (zx, _) = chart.backend_coord(&(base, middle));
            (zx + 4, ey)
        } else {
            (ex + 4, ey)
        };
        self.root
            .draw(&Text::new(text, text_pos, style.clone()))
            .map_err(ChartError::draw)?;
        Ok(())
    }
}

/// Where one bar goes, in the chart's coordinates.
struct BarSpot {
    /// Its category (row band, from the top).
    category: usize,
    /// Its series (bar within the band).
    series: usize,
    /// The bar's top edge.
    top: f64,
    /// The bar's height.
    height: f64,
    /// Where bars start on the value axis.
    base: f64,
    /// The value axis's start.
    axis_start: f64,
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_time_axis_in_thousands_of_its_unit_reads_in_the_next_unit() {
        let chart = BarChart {
            title: "wake-up".into(),
            y_label: "latency (us)".into(),
            categories: vec!["futex".into()],
            series: vec![("median".into(), vec![Some(3830.0)])],
            intervals: vec![vec![Some((3000.0, 4000.0))]],
            y_log: false,
        };
        let svg = chart.to_svg().unwrap();
        assert!(svg.contains("latency (ms)"), "the axis says ms");
        assert!(
            svg.contains("3.83") && !svg.contains("3.83k"),
            "the bar's value in ms"
        );
    }
    use super::*;

    fn chart(categories: &[&str], series: Vec<(&str, Vec<Option<f64>>)>, y_log: bool) -> BarChart {
        BarChart {
            title: "Interference".into(),
            y_label: "T_work, median (ms)".into(),
            categories: categories.iter().map(|c| c.to_string()).collect(),
            series: series.into_iter().map(|(n, v)| (n.to_owned(), v)).collect(),
            intervals: Vec::new(),
            y_log,
        }
    }

    #[test]
    fn renders_title_labels_categories_and_na() {
        let svg = chart(
            &["spin", "s/b/0.54 (pause)", "umwait"],
            vec![
                ("matched", vec![Some(1.0), Some(0.9), None]),
                ("unmatched", vec![Some(5.2), Some(1.1), None]),
            ],
            false,
        )
        .to_svg()
        .unwrap();
        assert!(svg.starts_with("<svg"));
        for text in [
            "Interference",
            "T_work, median (ms)",
            "s/b/0.54 (pause)",
            "matched",
            "unmatched",
            "n/a",
            "5.2",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
    }

    #[test]
    fn empty_and_odd_data_render() {
        for y_log in [false, true] {
            let svg = chart(&[], vec![], y_log).to_svg().unwrap();
            assert!(svg.starts_with("<svg") && svg.contains("no data"));
            let svg = chart(&["a"], vec![], y_log).to_svg().unwrap();
            assert!(svg.contains("no data"));
            let svg = chart(
                &["zero", "negative", "nan", "inf", "none"],
                vec![(
                    "s",
                    vec![
                        Some(0.0),
                        Some(-3.0),
                        Some(f64::NAN),
                        Some(f64::INFINITY),
                        None,
                    ],
                )],
                y_log,
            )
            .to_svg()
            .unwrap();
            assert!(svg.contains("negative"));
        }
    }

    #[test]
    fn thousands_of_categories_render_on_a_capped_canvas() {
        let names: Vec<String> = (0..2000).map(|i| format!("c{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let svg = chart(&refs, vec![("s", vec![Some(1.0); 2000])], false)
            .to_svg()
            .unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("height=\"16384\""));
    }

    #[test]
    fn medians_carry_whiskers() {
        for y_log in [false, true] {
            let mut c = chart(
                &["spin", "pause", "umwait"],
                vec![("median", vec![Some(80.0), Some(60.0), None])],
                y_log,
            );
            let plain = c.to_svg().unwrap();
            // Ends inside the values' range keep the axis as it was.
            c.intervals = vec![vec![Some((70.0, 79.0)), Some((60.0, 65.0)), None]];
            let svg = c.to_svg().unwrap();
            assert!(svg.contains("whiskers:"));
            assert!(!plain.contains("whiskers"));
            // Three strokes (line and two caps) per whisker, two whiskers.
            assert_eq!(
                svg.matches("<polyline").count(),
                plain.matches("<polyline").count() + 6,
                "{svg}"
            );
            // An end below the log axis is cut, not an error.
            c.intervals = vec![vec![Some((-1.0, 95.0)), None, None]];
            assert!(c.to_svg().unwrap().contains("whiskers:"));
        }
        let mut c = chart(&["a"], vec![("s", vec![Some(1.0)])], false);
        c.intervals = vec![vec![]];
        assert!(matches!(c.to_svg(), Err(ChartError::Shape { .. })));
    }

    #[test]
    fn wrong_number_of_values_is_an_error() {
        let err = chart(&["a", "b"], vec![("s", vec![Some(1.0)])], false)
            .to_svg()
            .unwrap_err();
        assert!(matches!(
            err,
            ChartError::Shape {
                expected: 2,
                found: 1,
                ..
            }
        ));
    }
}
