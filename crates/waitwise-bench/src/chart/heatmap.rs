//! Heatmaps: a matrix of colored cells, each with its value written in it,
//! and a color scale.
//!
//! Colors follow viridis (van der Walt & Smith, matplotlib 2015): dark
//! purple for the smallest value, yellow for the largest; it reads in
//! grayscale and for the common forms of color blindness.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::error::ChartError;
use super::style::{
    self, draw_no_data, draw_notes, format_value, min_max, px, text_width, truncate_label,
    AXIS_DESC_SIZE, FONT, LABEL_SIZE, MARGIN, MAX_CANVAS, NOTE_COLOR,
};

/// Side of the square the cells fill, when the matrix is large.
const GRID_SIDE: u32 = 720;
/// Smallest and largest cell side.
const CELL_MIN: u32 = 12;
const CELL_MAX: u32 = 72;
/// Cells narrower than this get no value written in them (the color scale
/// still reads); 30 px fits "1.23k" at the smallest text size.
const CELL_TEXT_MIN: u32 = 30;
/// Width of the color scale panel right of the matrix.
const SCALE_PANEL: u32 = 130;
/// Fill of cells without a value.
const MISSING_FILL: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);

/// Viridis at nine evenly spaced points, interpolated linearly between.
const VIRIDIS: [(u8, u8, u8); 9] = [
    (0x44, 0x01, 0x54),
    (0x47, 0x2d, 0x7b),
    (0x3b, 0x52, 0x8b),
    (0x2c, 0x72, 0x8e),
    (0x21, 0x91, 0x8c),
    (0x28, 0xae, 0x80),
    (0x5e, 0xc9, 0x62),
    (0xad, 0xdc, 0x30),
    (0xfd, 0xe7, 0x25),
];

/// A matrix of values drawn as colored cells, for example wake-up latency
/// for each (sleeper CPU, waker CPU) pair.
///
/// Row 0 is drawn at the top (matrix order). A `None` cell is grey and says
/// "n/a"; a NaN or infinite value counts as `None`.
///
/// # Examples
/// ```
/// use waitwise_bench::chart::Heatmap;
/// let map = Heatmap {
///     title: "Wake-up latency, futex".into(),
///     x_label: "waker CPU".into(),
///     y_label: "sleeper CPU".into(),
///     x_ticks: vec!["0".into(), "1".into()],
///     y_ticks: vec!["0".into(), "1".into()],
///     values: vec![vec![None, Some(5200.0)], vec![Some(4900.0), None]],
///     unit: "ns".into(),
/// };
/// let svg = map.to_svg().unwrap();
/// assert!(svg.contains("5.2k") && svg.contains("sleeper CPU"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    /// Title drawn above the chart.
    pub title: String,
    /// What the columns are: "waker CPU".
    pub x_label: String,
    /// What the rows are: "sleeper CPU".
    pub y_label: String,
    /// Column names, left to right.
    pub x_ticks: Vec<String>,
    /// Row names, top to bottom.
    pub y_ticks: Vec<String>,
    /// `values[row][column]`: `y_ticks.len()` rows of `x_ticks.len()` cells;
    /// `None` = not measured (for example a CPU with itself).
    pub values: Vec<Vec<Option<f64>>>,
    /// Unit of the values, written over the color scale: "ns", "cycles".
    pub unit: String,
}

impl Heatmap {
    /// Renders the heatmap as an SVG document (`<svg ...>...</svg>`).
    ///
    /// # Errors
    /// [`ChartError::Shape`] when `values` is not `y_ticks.len()` rows of
    /// `x_ticks.len()` cells; [`ChartError::Draw`] if plotters fails.
    pub fn to_svg(&self) -> Result<String, ChartError> {
        let (columns, rows) = (self.x_ticks.len(), self.y_ticks.len());
        if self.values.len() != rows {
            return Err(ChartError::Shape {
                what: "heatmap rows against the y ticks".to_owned(),
                expected: rows,
                found: self.values.len(),
            });
        }
        if let Some((r, row)) = self
            .values
            .iter()
            .enumerate()
            .find(|(_, row)| row.len() != columns)
        {
            return Err(ChartError::Shape {
                what: format!("heatmap row {r} against the x ticks"),
                expected: columns,
                found: row.len(),
            });
        }
        let bounds = min_max(
            self.values
                .iter()
                .flatten()
                .flatten()
                .copied()
                .filter(|v| v.is_finite()),
        );

        let cell = (GRID_SIDE / px(columns.max(rows).max(1), 1)).clamp(CELL_MIN, CELL_MAX);
        let tick_width = |ticks: &[String]| {
            ticks
                .iter()
                .map(|t| text_width(&truncate_label(t), LABEL_SIZE))
                .max()
                .unwrap_or(0)
        };
        // Column names wider than a cell are written vertically.
        let x_tick_width = tick_width(&self.x_ticks);
        let rotate_x = x_tick_width + 4 > cell;
        let x_tick_height = if rotate_x { x_tick_width } else { LABEL_SIZE };
        let layout = Layout {
            cell,
            rotate_x,
            y_area: tick_width(&self.y_ticks) + AXIS_DESC_SIZE + 28,
            x_area: x_tick_height + AXIS_DESC_SIZE + 28,
        };
        let grid = (
            px(columns.max(1), cell).min(MAX_CANVAS),
            px(rows.max(1), cell).min(MAX_CANVAS),
        );
        let width = 2 * MARGIN + layout.y_area + grid.0 + 20 + SCALE_PANEL;
        let title_room = 60;
        let height = (2 * MARGIN + title_room + grid.1 + layout.x_area + 10).max(300);
        // The title needs room too: a narrow matrix gets a wider canvas.
        let width = width.max(text_width(&self.title, style::TITLE_SIZE) + 2 * MARGIN + 40);

        style::render_svg((width, height), |root| {
            let area = style::titled(root, &self.title)?;
            let (plot, scale_area) = area.split_horizontally(layout.y_area + grid.0 + 20);
            self.draw_cells(root, &plot, &layout, bounds)?;
            if columns == 0 || rows == 0 {
                draw_no_data(&plot)?;
            }
            match bounds {
                Some((lo, hi)) => draw_color_scale(&scale_area, lo, hi, &self.unit),
                None => draw_notes(&scale_area, &["no values".to_owned()], 20),
            }
        })
    }

    /// Draws axes, cells, values and tick names; `root` is the whole canvas
    /// (tick names are placed on it in pixels).
    fn draw_cells(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        plot: &DrawingArea<SVGBackend<'_>, Shift>,
        layout: &Layout,
        bounds: Option<(f64, f64)>,
    ) -> Result<(), ChartError> {
        let (columns, rows) = (self.x_ticks.len(), self.y_ticks.len());
        let (cols_f, rows_f) = (columns.max(1) as f64, rows.max(1) as f64);
        let x: RangedCoordf64 = (0.0..cols_f).into();
        let y: RangedCoordf64 = (0.0..rows_f).into();
        let (plot_w, plot_h) = plot.dim_in_pixel();
        // Right and top margins that leave exactly `cell`-sized cells.
        let grid_w = px(columns.max(1), layout.cell).min(MAX_CANVAS);
        let grid_h = px(rows.max(1), layout.cell).min(MAX_CANVAS);
        let mut chart = ChartBuilder::on(plot)
            .margin_top(10)
            .margin_left(0)
            .margin_right(plot_w.saturating_sub(layout.y_area + grid_w))
            .margin_bottom(plot_h.saturating_sub(10 + grid_h + layout.x_area))
            .x_label_area_size(layout.x_area)
            .y_label_area_size(layout.y_area)
            .build_cartesian_2d(x, y)
            .map_err(ChartError::draw)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .axis_desc_style((FONT, AXIS_DESC_SIZE))
            .draw()
            .map_err(ChartError::draw)?;

        let show_values = layout.cell >= CELL_TEXT_MIN;
        let value_size = (layout.cell * 3 / 10).clamp(11, LABEL_SIZE);
        for (r, row) in self.values.iter().enumerate() {
            let top = rows_f - r as f64;
            for (c, value) in row.iter().enumerate() {
                let value = value.filter(|v| v.is_finite());
                let (fill, ink) = match (value, bounds) {
                    (Some(v), Some((lo, hi))) => {
                        let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
                        (viridis(t), if t < 0.6 { WHITE } else { BLACK })
                    }
                    _ => (MISSING_FILL, NOTE_COLOR),
                };
                let (left, right) = (c as f64, c as f64 + 1.0);
                chart
                    .draw_series([
                        Rectangle::new([(left, top), (right, top - 1.0)], fill.filled()),
                        Rectangle::new([(left, top), (right, top - 1.0)], WHITE.stroke_width(1)),
                    ])
                    .map_err(ChartError::draw)?;
                if show_values {
                    let text = value.map_or_else(|| "n/a".to_owned(), format_value);
                    let style = TextStyle::from((FONT, value_size).into_font())
                        .color(&ink)
                        .pos(Pos::new(HPos::Center, VPos::Center));
                    let at = chart.backend_coord(&(left + 0.5, top - 0.5));
                    root.draw(&Text::new(text, at, style))
                        .map_err(ChartError::draw)?;
                }
            }
        }

        self.draw_tick_names(root, &chart, layout.rotate_x)
    }

    /// Writes the row names left of the grid and the column names under
    /// it (a quarter turn when `rotate_x`), on `root` in pixels.
    fn draw_tick_names(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        chart: &ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
        rotate_x: bool,
    ) -> Result<(), ChartError> {
        let rows_f = self.y_ticks.len().max(1) as f64;
        let tick = TextStyle::from((FONT, LABEL_SIZE).into_font());
        for (r, name) in self.y_ticks.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(0.0, rows_f - r as f64 - 0.5));
            let style = tick.pos(Pos::new(HPos::Right, VPos::Center));
            root.draw(&Text::new(truncate_label(name), (px - 6, py), style))
                .map_err(ChartError::draw)?;
        }
        for (c, name) in self.x_ticks.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(c as f64 + 0.5, 0.0));
            let style = if rotate_x {
                // Rotated a quarter turn clockwise: reads top to bottom,
                // starting just under the cell.
                tick.transform(FontTransform::Rotate90)
                    .pos(Pos::new(HPos::Left, VPos::Center))
            } else {
                tick.pos(Pos::new(HPos::Center, VPos::Top))
            };
            root.draw(&Text::new(truncate_label(name), (px, py + 6), style))
                .map_err(ChartError::draw)?;
        }
        Ok(())
    }
}

/// Pixel sizes of one heatmap's parts.
struct Layout {
    /// Side of one cell.
    cell: u32,
    /// Column names are written vertically.
    rotate_x: bool,
    /// Height of the area under the matrix (column names and x label).
    x_area: u32,
    /// Width of the area left of the matrix (row names and y label).
    y_area: u32,
}

/// Viridis color at `t` in 0..=1 (clamped; NaN is the low end).
fn viridis(t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let scaled = t * (VIRIDIS.len() - 1) as f64;
    let i = (scaled.floor() as usize).min(VIRIDIS.len() - 2);
    let f = scaled - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Draws the color scale in `area`: the unit on top, a vertical gradient
/// from `hi` (top) to `lo` (bottom), and their values beside it.
fn draw_color_scale(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    lo: f64,
    hi: f64,
    unit: &str,
) -> Result<(), ChartError> {
    const STEPS: i32 = 48;
    let (_, h) = area.dim_in_pixel();
    let (x0, x1, top) = (10, 32, 34);
    let bar_height = (h as i32 - top - 40).clamp(40, 300);
    let caption =
        TextStyle::from((FONT, LABEL_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Bottom));
    area.draw(&Text::new(truncate_label(unit), (x0, top - 8), caption))
        .map_err(ChartError::draw)?;
    for step in 0..STEPS {
        let y_top = top + bar_height * step / STEPS;
        let y_bottom = top + bar_height * (step + 1) / STEPS;
        let t = 1.0 - (f64::from(step) + 0.5) / f64::from(STEPS);
        area.draw(&Rectangle::new(
            [(x0, y_top), (x1, y_bottom)],
            viridis(t).filled(),
        ))
        .map_err(ChartError::draw)?;
    }
    area.draw(&Rectangle::new(
        [(x0, top), (x1, top + bar_height)],
        BLACK.stroke_width(1),
    ))
    .map_err(ChartError::draw)?;
    let label =
        TextStyle::from((FONT, LABEL_SIZE - 2).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let labels = if hi > lo {
        vec![
            (hi, top),
            ((lo + hi) / 2.0, top + bar_height / 2),
            (lo, top + bar_height),
        ]
    } else {
        vec![(lo, top + bar_height / 2)]
    };
    for (value, y) in labels {
        area.draw(&PathElement::new(
            vec![(x1, y), (x1 + 4, y)],
            BLACK.stroke_width(1),
        ))
        .map_err(ChartError::draw)?;
        area.draw(&Text::new(format_value(value), (x1 + 8, y), label.clone()))
            .map_err(ChartError::draw)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heatmap(n: usize, value: impl Fn(usize, usize) -> Option<f64>) -> Heatmap {
        let ticks: Vec<String> = (0..n).map(|i| format!("cpu{i}")).collect();
        Heatmap {
            title: "Wake-up latency".into(),
            x_label: "waker CPU".into(),
            y_label: "sleeper CPU".into(),
            x_ticks: ticks.clone(),
            y_ticks: ticks,
            values: (0..n)
                .map(|r| (0..n).map(|c| value(r, c)).collect())
                .collect(),
            unit: "cycles".into(),
        }
    }

    #[test]
    fn renders_values_labels_and_scale() {
        let svg = heatmap(4, |r, c| {
            (r != c).then(|| 1000.0 + (r * 4 + c) as f64 * 100.0)
        })
        .to_svg()
        .unwrap();
        assert!(svg.starts_with("<svg"));
        for text in [
            "Wake-up latency",
            "waker CPU",
            "sleeper CPU",
            "cycles",
            "cpu3",
            "n/a",
            "1.1k",
            "2.4k",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
    }

    #[test]
    fn empty_constant_and_odd_values_render() {
        assert!(heatmap(0, |_, _| None)
            .to_svg()
            .unwrap()
            .contains("no data"));
        assert!(heatmap(3, |_, _| None)
            .to_svg()
            .unwrap()
            .contains("no values"));
        assert!(heatmap(2, |_, _| Some(5.0)).to_svg().unwrap().contains('5'));
        let odd = heatmap(2, |r, c| {
            [Some(f64::NAN), Some(f64::INFINITY), Some(-1.0), None][r * 2 + c]
        });
        assert!(odd.to_svg().unwrap().starts_with("<svg"));
        // Large matrices: small cells, no values written, still renders.
        let big = heatmap(64, |r, c| Some((r + c) as f64)).to_svg().unwrap();
        assert!(big.contains("cpu63"));
    }

    #[test]
    fn ragged_values_are_an_error() {
        let mut map = heatmap(2, |_, _| Some(1.0));
        map.values[1].pop();
        assert!(matches!(
            map.to_svg(),
            Err(ChartError::Shape {
                expected: 2,
                found: 1,
                ..
            })
        ));
        map.values.pop();
        assert!(matches!(
            map.to_svg(),
            Err(ChartError::Shape {
                expected: 2,
                found: 1,
                ..
            })
        ));
    }

    #[test]
    fn viridis_ends_and_clamps() {
        assert_eq!(viridis(0.0), RGBColor(0x44, 0x01, 0x54));
        assert_eq!(viridis(1.0), RGBColor(0xfd, 0xe7, 0x25));
        assert_eq!(viridis(7.0), viridis(1.0));
        assert_eq!(viridis(f64::NAN), viridis(0.0));
    }
}
