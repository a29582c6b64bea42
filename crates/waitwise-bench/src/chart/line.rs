//! Line charts: one line per [`Series`], linear or logarithmic axes; points
//! that are medians may carry whiskers (the median's 95% CI) through
//! [`LineChart::to_svg_with_intervals`].

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::error::ChartError;
use super::style::{
    self, draw_legend, draw_no_data, format_value, legend_width, min_max, series_color,
    LegendEntry, Marker, Swatch, AXIS_DESC_SIZE, FONT, LABEL_SIZE,
};

/// Width of the plot part of a line chart (the legend panel is added).
const PLOT_WIDTH: u32 = 860;
/// Height of a line chart.
const HEIGHT: u32 = 540;

/// One named line of a [`LineChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text, for example the barrier implementation ("pthread").
    pub name: String,
    /// `(x, y)` points in the chart's units; drawn in ascending x order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart: for example total time (y) against the light thread's load
/// (x), one line per barrier implementation.
///
/// Points that cannot be drawn (NaN, infinite, or not positive on a log
/// axis) are skipped and counted in a note under the legend; a chart without
/// any drawable point says "no data".
///
/// # Examples
/// ```
/// use waitwise_bench::chart::{LineChart, Series};
/// let chart = LineChart {
///     title: "Asymmetry sweep".into(),
///     x_label: "light load (units of work)".into(),
///     y_label: "total time (ms)".into(),
///     x_log: false,
///     y_log: true,
///     series: vec![Series { name: "spin".into(), points: vec![(0.0, 12.0), (10.0, 20.0)] }],
/// };
/// let svg = chart.to_svg().unwrap();
/// assert!(svg.starts_with("<svg") && svg.contains("Asymmetry sweep"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Title drawn above the chart.
    pub title: String,
    /// X axis description, with its unit: "light load (units of work)".
    pub x_label: String,
    /// Y axis description, with its unit: "total time (ms)".
    pub y_label: String,
    /// Logarithmic x axis (whole decades; points with x <= 0 are skipped).
    pub x_log: bool,
    /// Logarithmic y axis (whole decades; points with y <= 0 are skipped).
    pub y_log: bool,
    /// The lines, drawn in this order with distinct colors and markers.
    pub series: Vec<Series>,
}

impl LineChart {
    /// Renders the chart as an SVG document (`<svg ...>...</svg>`).
    ///
    /// # Errors
    /// [`ChartError::Draw`] if plotters fails, which writing to a string
    /// should not.
    pub fn to_svg(&self) -> Result<String, ChartError> {
        self.to_svg_with_intervals(&[])
    }

    /// Like [`to_svg`](Self::to_svg), with vertical whiskers: `intervals[i]`
    /// holds `(x, low, high)` for points of series `i`, the ends of the
    /// point's 95% CI (of the median, when the points are medians). Series
    /// without an entry, and whiskers with an end that cannot be drawn, get
    /// none.
    ///
    /// # Errors
    /// As [`to_svg`](Self::to_svg).
    pub fn to_svg_with_intervals(
        &self,
        intervals: &[Vec<(f64, f64, f64)>],
    ) -> Result<String, ChartError> {
        if let Some((scaled, intervals)) = self.in_time_unit(intervals) {
            return scaled.to_svg_with_intervals(&intervals);
        }
        let whiskers = self.drawable_whiskers(intervals);
        let (lines, skipped) = self.drawable_lines();

        let all = || lines.iter().flatten();
        let x_bounds = min_max(all().map(|p| p.0));
        let whisker_ends = whiskers.iter().flatten().flat_map(|&(_, lo, hi)| [lo, hi]);
        let y_bounds = min_max(all().map(|p| p.1).chain(whisker_ends));
        let (x_lo, x_hi) = x_bounds.unwrap_or((f64::NAN, f64::NAN));
        let (y_lo, y_hi) = y_bounds.unwrap_or((f64::NAN, f64::NAN));

        let notes = self.notes(skipped, &whiskers);
        let entries = self.legend_entries();
        let legend = legend_width(self.series.iter().map(|s| s.name.as_str()));

        style::render_svg((PLOT_WIDTH + legend, HEIGHT), |root| {
            let area = style::titled(root, &self.title)?;
            let (plot, legend_area) = area.split_horizontally(PLOT_WIDTH);
            let axes = Axes {
                x_label: &self.x_label,
                y_label: &self.y_label,
                lines: &lines,
                whiskers: &whiskers,
            };
            match (self.x_log, self.y_log) {
                (false, false) => {
                    let (x0, x1) = style::tight_range(x_lo, x_hi);
                    let (y0, y1) = style::linear_range(y_lo, y_hi);
                    axes.draw(&plot, x0..x1, y0..y1)?;
                }
                (true, false) => {
                    let (x0, x1) = style::log_range(x_lo, x_hi);
                    let (y0, y1) = style::linear_range(y_lo, y_hi);
                    axes.draw(&plot, (x0..x1).log_scale(), y0..y1)?;
                }
                (false, true) => {
                    let (x0, x1) = style::tight_range(x_lo, x_hi);
                    let (y0, y1) = style::log_range(y_lo, y_hi);
                    axes.draw(&plot, x0..x1, (y0..y1).log_scale())?;
                }
                (true, true) => {
                    let (x0, x1) = style::log_range(x_lo, x_hi);
                    let (y0, y1) = style::log_range(y_lo, y_hi);
                    axes.draw(&plot, (x0..x1).log_scale(), (y0..y1).log_scale())?;
                }
            }
            if x_bounds.is_none() {
                draw_no_data(&plot)?;
            }
            draw_legend(&legend_area, &entries, &notes)
        })
    }
}

impl LineChart {
    /// The chart and `intervals` in the time unit that reads best
    /// ([`style::time_axis`]), when that is not the one given.
    #[allow(clippy::type_complexity)]
    fn in_time_unit(
        &self,
        intervals: &[Vec<(f64, f64, f64)>],
    ) -> Option<(LineChart, Vec<Vec<(f64, f64, f64)>>)> {
        let values = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1));
        let ends = intervals.iter().flatten().flat_map(|&(_, lo, hi)| [lo, hi]);
        let largest = values
            .chain(ends)
            .filter(|v| v.is_finite())
            .fold(0.0, |m: f64, v| m.max(v.abs()));
        let (y_label, divisor) = style::time_axis(&self.y_label, largest);
        if divisor == 1.0 {
            return None;
        }
        let mut scaled = self.clone();
        scaled.y_label = y_label;
        for series in &mut scaled.series {
            series.points.iter_mut().for_each(|p| p.1 /= divisor);
        }
        let intervals = intervals
            .iter()
            .map(|ends| {
                ends.iter()
                    .map(|&(x, lo, hi)| (x, lo / divisor, hi / divisor))
                    .collect()
            })
            .collect();
        Some((scaled, intervals))
    }

    /// Whether `v` can be drawn on an axis, log or not.
    fn drawable(v: f64, log: bool) -> bool {
        v.is_finite() && (!log || v > 0.0)
    }

    /// The whiskers that can be drawn: finite ends in order, positive on
    /// a log axis.
    fn drawable_whiskers(&self, intervals: &[Vec<(f64, f64, f64)>]) -> Vec<Vec<(f64, f64, f64)>> {
        intervals
            .iter()
            .map(|ends| {
                ends.iter()
                    .copied()
                    .filter(|&(x, lo, hi)| {
                        Self::drawable(x, self.x_log)
                            && Self::drawable(lo, self.y_log)
                            && Self::drawable(hi, self.y_log)
                            && lo <= hi
                    })
                    .collect()
            })
            .collect()
    }

    /// Each series' drawable points in x order, and how many were left out.
    fn drawable_lines(&self) -> (Vec<Vec<(f64, f64)>>, usize) {
        let mut skipped = 0usize;
        let lines = self
            .series
            .iter()
            .map(|series| {
                let mut points: Vec<(f64, f64)> = series
                    .points
                    .iter()
                    .copied()
                    .filter(|&(x, y)| {
                        Self::drawable(x, self.x_log) && Self::drawable(y, self.y_log)
                    })
                    .collect();
                skipped += series.points.len() - points.len();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                points
            })
            .collect();
        (lines, skipped)
    }

    /// The legend's notes: points left out, what the whiskers are.
    fn notes(&self, skipped: usize, whiskers: &[Vec<(f64, f64, f64)>]) -> Vec<String> {
        let mut notes = Vec::new();
        if skipped > 0 {
            let why = if self.x_log || self.y_log {
                "not finite, or <= 0 on a log axis"
            } else {
                "not finite"
            };
            notes.push(format!("{skipped} point(s) not shown: {why}"));
        }
        if whiskers.iter().any(|w| !w.is_empty()) {
            notes.push("whiskers: 95% CI of the median".to_owned());
        }
        notes
    }

    /// One legend entry per series: its colour and marker.
    fn legend_entries(&self) -> Vec<LegendEntry> {
        self.series
            .iter()
            .enumerate()
            .map(|(i, s)| LegendEntry {
                name: s.name.clone(),
                color: series_color(i),
                swatch: Swatch::Line(Marker::of_series(i)),
            })
            .collect()
    }
}

/// What the plot part needs, whatever the axis types.
struct Axes<'a> {
    x_label: &'a str,
    y_label: &'a str,
    lines: &'a [Vec<(f64, f64)>],
    /// Per series, `(x, low, high)` of each whisker, all drawable.
    whiskers: &'a [Vec<(f64, f64, f64)>],
}

impl Axes<'_> {
    /// Draws axes, grid and lines on `area` with the given axis specs
    /// (`lo..hi` for linear, `(lo..hi).log_scale()` for log).
    fn draw<X, Y>(
        &self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        x: X,
        y: Y,
    ) -> Result<(), ChartError>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(area)
            .margin(10)
            .margin_right(24)
            .x_label_area_size(60)
            .y_label_area_size(90)
            .build_cartesian_2d(x, y)
            .map_err(ChartError::draw)?;
        let format = |v: &f64| format_value(*v);
        chart
            .configure_mesh()
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, AXIS_DESC_SIZE))
            .x_label_formatter(&format)
            .y_label_formatter(&format)
            .max_light_lines(4)
            .light_line_style(RGBColor(0xee, 0xee, 0xee))
            .draw()
            .map_err(ChartError::draw)?;
        for (i, points) in self.lines.iter().enumerate() {
            let color = series_color(i);
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(ChartError::draw)?;
            let style = color.filled();
            match Marker::of_series(i) {
                Marker::Circle => chart
                    .draw_series(points.iter().map(|&p| Circle::new(p, 4, style)))
                    .map(|_| ()),
                Marker::Triangle => chart
                    .draw_series(points.iter().map(|&p| TriangleMarker::new(p, 5, style)))
                    .map(|_| ()),
                Marker::Square => {
                    chart
                        .draw_series(points.iter().map(|&p| {
                            EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], style)
                        }))
                        .map(|_| ())
                }
            }
            .map_err(ChartError::draw)?;
        }
        for (i, ends) in self.whiskers.iter().enumerate() {
            let ink = series_color(i).stroke_width(1);
            chart
                .draw_series(ends.iter().map(|&(x, lo, _)| {
                    // A vertical line with 4-pixel caps at both ends.
                    EmptyElement::at((x, lo)) + PathElement::new(vec![(-4, 0), (4, 0)], ink)
                }))
                .map_err(ChartError::draw)?;
            chart
                .draw_series(
                    ends.iter()
                        .map(|&(x, lo, hi)| PathElement::new(vec![(x, lo), (x, hi)], ink)),
                )
                .map_err(ChartError::draw)?;
            chart
                .draw_series(ends.iter().map(|&(x, _, hi)| {
                    EmptyElement::at((x, hi)) + PathElement::new(vec![(-4, 0), (4, 0)], ink)
                }))
                .map_err(ChartError::draw)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_carry_whiskers() {
        let c = chart(
            false,
            false,
            vec![Series {
                name: "Barrier".into(),
                points: vec![(0.0, 10.0), (5.0, 12.0)],
            }],
        );
        let plain = c.to_svg().unwrap();
        assert_eq!(plain, c.to_svg_with_intervals(&[]).unwrap());
        let svg = c
            .to_svg_with_intervals(&[vec![(0.0, 9.0, 11.0), (5.0, 11.0, f64::NAN)]])
            .unwrap();
        assert!(svg.contains("whiskers:") && !plain.contains("whiskers"));
        // One drawable whisker: a line and two caps.
        assert_eq!(
            svg.matches("<polyline").count(),
            plain.matches("<polyline").count() + 3
        );
    }

    fn chart(x_log: bool, y_log: bool, series: Vec<Series>) -> LineChart {
        LineChart {
            title: "Asymmetry sweep".into(),
            x_label: "light load (units)".into(),
            y_label: "total time (ms)".into(),
            x_log,
            y_log,
            series,
        }
    }

    fn series(name: &str, points: &[(f64, f64)]) -> Series {
        Series {
            name: name.into(),
            points: points.to_vec(),
        }
    }

    #[test]
    fn renders_title_labels_and_legend() {
        let svg = chart(
            false,
            false,
            vec![
                series("waitwise", &[(0.0, 10.0), (5.0, 12.0), (10.0, 20.0)]),
                series("pthread", &[(0.0, 15.0), (5.0, 18.0), (10.0, 30.0)]),
            ],
        )
        .to_svg()
        .unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        for text in [
            "Asymmetry sweep",
            "light load (units)",
            "total time (ms)",
            "waitwise",
            "pthread",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
    }

    #[test]
    fn empty_charts_render() {
        for (x_log, y_log) in [(false, false), (true, true)] {
            let svg = chart(x_log, y_log, vec![]).to_svg().unwrap();
            assert!(svg.starts_with("<svg") && svg.contains("no data"));
            let svg = chart(x_log, y_log, vec![series("empty", &[])])
                .to_svg()
                .unwrap();
            assert!(svg.contains("empty") && svg.contains("no data"));
        }
    }

    #[test]
    fn log_axes_skip_zero_negative_and_nan() {
        let odd = [
            (0.0, 1.0),
            (1.0, 0.0),
            (-1.0, 5.0),
            (2.0, f64::NAN),
            (10.0, 100.0),
        ];
        for (x_log, y_log) in [(true, false), (false, true), (true, true)] {
            let svg = chart(x_log, y_log, vec![series("odd", &odd)])
                .to_svg()
                .unwrap();
            assert!(svg.starts_with("<svg"));
            assert!(svg.contains("not shown"), "{x_log} {y_log}");
        }
        // Only undrawable points: the chart still renders, with "no data".
        let svg = chart(true, true, vec![series("zeros", &[(0.0, 0.0)])])
            .to_svg()
            .unwrap();
        assert!(svg.contains("no data"));
    }

    #[test]
    fn single_point_and_many_series_render() {
        let svg = chart(false, false, vec![series("one", &[(3.0, 3.0)])])
            .to_svg()
            .unwrap();
        assert!(svg.contains("one"));
        let many: Vec<Series> = (0..25)
            .map(|i| series(&format!("s{i}"), &[(0.0, i as f64), (1.0, i as f64 + 1.0)]))
            .collect();
        assert!(chart(false, true, many).to_svg().unwrap().contains("s24"));
    }

    #[test]
    fn legend_names_are_written_whole() {
        let name = "waitwise Barrier (default), 4 threads, adapt/b (yield)";
        let svg = LineChart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_log: false,
            y_log: false,
            series: vec![Series {
                name: name.into(),
                points: vec![(0.0, 1.0), (1.0, 2.0)],
            }],
        }
        .to_svg()
        .unwrap();
        assert!(svg.contains(name), "{svg}");
    }
}
