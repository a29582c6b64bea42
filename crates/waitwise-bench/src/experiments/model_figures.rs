//! The model's figures for the report and `waitwise model`: Lim & Agarwal
//! Figures 2 and 3 (competitive factor curves), and the optimal alpha per
//! synchronization kind against waitwise's static defaults.

use super::{ExperimentOutput, RenderedChart};
use crate::chart::{LineChart, Series};
use crate::export::{Cell, Column, Table};
use serde::Serialize;
use waitwise::policy::SyncKind;
use waitwise_model::curves::{figure, CurveDistribution, Curves};
use waitwise_model::minimax::{optimal_alpha, worst_case, MinimaxModel};

/// The SVG of `model curves` draws factors up to this (linear axis, like the
/// paper's figures); the steep ends of `/b/0` and `s//inf` leave the plot
/// there. The printed data are not cut.
pub const SVG_MAX_FACTOR: f64 = 4.0;

/// The x axis name of a figure.
pub fn x_axis(dist: CurveDistribution) -> &'static str {
    match dist {
        CurveDistribution::Exponential => "lambda*beta*B",
        CurveDistribution::Uniform => "U/(beta*B)",
    }
}

/// Figure data as a table: x, then one column per series; every
/// `stride`-th point.
pub fn curves_table(c: &Curves, stride: usize) -> Table {
    let (name, fig) = match c.dist {
        CurveDistribution::Exponential => {
            ("model_curves_exponential", "Figure 2, exponential waits")
        }
        CurveDistribution::Uniform => ("model_curves_uniform", "Figure 3, uniform waits"),
    };
    let mut columns = vec![Column::new(
        x_axis(c.dist),
        None,
        format!("{} (dimensionless)", c.x_label),
    )];
    columns.extend(c.series.iter().map(|s| {
        Column::new(
            s.name.clone(),
            None,
            format!("competitive factor of {}", s.name),
        )
    }));
    let mut t = Table::new(
        name,
        format!("{fig}: competitive factor E[C]/E[C_opt] by algorithm"),
        columns,
    );
    let n = c.series.first().map_or(0, |s| s.points.len());
    for i in (0..n).step_by(stride.max(1)) {
        let mut row = vec![Cell::Number(c.series[0].points[i].0)];
        row.extend(c.series.iter().map(|s| {
            s.points
                .get(i)
                .map_or(Cell::missing("no point"), |p| Cell::Number(p.1))
        }));
        t.push_row(row, None);
    }
    t
}

/// The figure as an SVG document.
pub fn curves_svg(c: &Curves) -> anyhow::Result<String> {
    let title = match c.dist {
        CurveDistribution::Exponential => {
            "Competitive factor, exponential waits (Lim & Agarwal Fig. 2)"
        }
        CurveDistribution::Uniform => "Competitive factor, uniform waits (Lim & Agarwal Fig. 3)",
    };
    let chart = LineChart {
        title: title.into(),
        x_label: format!("{} (dimensionless, log scale)", x_axis(c.dist)),
        y_label: format!("competitive factor E[C]/E[C_opt] (cut at {SVG_MAX_FACTOR})"),
        x_log: true,
        y_log: false,
        series: c
            .series
            .iter()
            .map(|s| Series {
                name: s.name.clone(),
                points: s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| p.1 <= SVG_MAX_FACTOR)
                    .collect(),
            })
            .collect(),
    };
    Ok(chart.to_svg()?)
}

/// A model's name in tables.
pub fn model_name(m: &MinimaxModel) -> String {
    match *m {
        MinimaxModel::Exponential => "exponential".into(),
        MinimaxModel::Uniform => "uniform".into(),
        MinimaxModel::Erlang { order } => format!("erlang:{order}"),
        MinimaxModel::BarrierMixture { participants } => format!("barrier:{participants}"),
        MinimaxModel::Mm1mMutex {
            requesters,
            load: None,
        } => format!("mutex:{requesters} (any load)"),
        MinimaxModel::Mm1mMutex {
            requesters,
            load: Some(l),
        } => format!("mutex:{requesters}:{l}"),
    }
}

/// The synchronization kind whose static alpha a model stands for.
pub fn kind_of(m: &MinimaxModel) -> Option<SyncKind> {
    match m {
        MinimaxModel::Exponential => Some(SyncKind::ProducerConsumer),
        MinimaxModel::Uniform | MinimaxModel::BarrierMixture { .. } => Some(SyncKind::Barrier),
        MinimaxModel::Mm1mMutex { .. } => Some(SyncKind::Mutex),
        MinimaxModel::Erlang { .. } => None,
    }
}

/// One row of `model alpha --all`.
#[derive(Debug, Clone, Serialize)]
pub struct KindAlpha {
    /// waitwise synchronization kind.
    pub kind: String,
    /// Wait-time model the adversary is restricted to (`None`: any wait).
    pub model: String,
    /// Minimax alpha of the model.
    pub alpha: f64,
    /// Its worst-case competitive factor.
    pub worst_case_factor: f64,
    /// waitwise's static default alpha for the kind.
    pub static_alpha: f64,
    /// The static alpha's worst-case factor under the same model.
    pub static_worst_case_factor: f64,
}

pub fn kind_alpha(kind: SyncKind, model: &MinimaxModel) -> anyhow::Result<KindAlpha> {
    let best = optimal_alpha(model)?;
    let static_alpha = kind.default_alpha();
    Ok(KindAlpha {
        kind: kind.name().into(),
        model: model_name(model),
        alpha: best.alpha,
        worst_case_factor: best.worst_case_factor,
        static_alpha,
        static_worst_case_factor: worst_case(model, static_alpha)?.factor,
    })
}

/// The model-vs-static table for every kind.
pub fn alpha_table() -> anyhow::Result<Vec<KindAlpha>> {
    let mut rows = vec![
        kind_alpha(SyncKind::ProducerConsumer, &MinimaxModel::Exponential)?,
        kind_alpha(SyncKind::Barrier, &MinimaxModel::Uniform)?,
        kind_alpha(
            SyncKind::Barrier,
            &MinimaxModel::BarrierMixture { participants: 64 },
        )?,
        kind_alpha(
            SyncKind::Mutex,
            &MinimaxModel::Mm1mMutex {
                requesters: 16,
                load: Some(0.1),
            },
        )?,
        kind_alpha(
            SyncKind::Mutex,
            &MinimaxModel::Mm1mMutex {
                requesters: 16,
                load: None,
            },
        )?,
    ];
    // No law assumed: a deterministic two-phase waiter is at best
    // 2-competitive, reached by alpha = 1 (Karlin et al., quoted in Lim &
    // Agarwal section 2). Theory, not a search.
    rows.push(KindAlpha {
        kind: SyncKind::Unknown.name().into(),
        model: "none (any wait)".into(),
        alpha: 1.0,
        worst_case_factor: 2.0,
        static_alpha: SyncKind::Unknown.default_alpha(),
        static_worst_case_factor: 2.0,
    });
    Ok(rows)
}

/// The model-vs-static alpha table.
pub fn alpha_table_view(rows: &[KindAlpha]) -> Table {
    let mut t = Table::new(
        "model_alpha",
        "Optimal alpha (minimax over the model's scale) vs waitwise's static defaults",
        vec![
            Column::new("kind", None, "synchronization kind"),
            Column::new("model", None, "wait-time model"),
            Column::new("alpha", None, "minimax alpha"),
            Column::new(
                "worst_case_factor",
                Some("ratio"),
                "its worst-case competitive factor",
            ),
            Column::new("static_alpha", None, "waitwise default"),
            Column::new(
                "static_worst_case_factor",
                Some("ratio"),
                "the default's worst case under the model",
            ),
        ],
    );
    for r in rows {
        t.push_row(
            vec![
                Cell::text(&r.kind),
                Cell::text(&r.model),
                Cell::Number(r.alpha),
                Cell::Number(r.worst_case_factor),
                Cell::Number(r.static_alpha),
                Cell::Number(r.static_worst_case_factor),
            ],
            None,
        );
    }
    t
}

/// Rows of the curve tables in the report: every this many points.
pub const REPORT_ROW_STRIDE: usize = 5;

/// Both figures and the alpha table.
#[derive(Debug, Clone, Serialize)]
pub struct ModelFigures {
    /// Figure 2 (exponential waits).
    pub exponential: Curves,
    /// Figure 3 (uniform waits).
    pub uniform: Curves,
    /// Optimal alpha per kind vs the static defaults.
    pub alpha: Vec<KindAlpha>,
}

/// Computes the figures (pure: no measurement).
pub fn run() -> anyhow::Result<ModelFigures> {
    Ok(ModelFigures {
        exponential: figure(CurveDistribution::Exponential),
        uniform: figure(CurveDistribution::Uniform),
        alpha: alpha_table()?,
    })
}

impl ExperimentOutput for ModelFigures {
    fn tables(&self) -> Vec<Table> {
        vec![
            alpha_table_view(&self.alpha),
            curves_table(&self.exponential, REPORT_ROW_STRIDE),
            curves_table(&self.uniform, REPORT_ROW_STRIDE),
        ]
    }

    fn charts(&self) -> Vec<RenderedChart> {
        [&self.exponential, &self.uniform]
            .into_iter()
            .filter_map(|c| {
                curves_svg(c).ok().map(|svg| RenderedChart {
                    caption: format!(
                        "Competitive factor against {} (log scale), one curve per alpha and rand/b",
                        x_axis(c.dist)
                    ),
                    svg,
                })
            })
            .collect()
    }

    fn notes(&self) -> Vec<String> {
        self.alpha
            .iter()
            .map(|r| {
                format!(
                    "{} under {}: optimal alpha {:.4} (worst case {:.3}); waitwise uses {:.4} (worst case {:.3}).",
                    r.kind, r.model, r.alpha, r.worst_case_factor, r.static_alpha, r.static_worst_case_factor
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_table_has_x_and_one_column_per_series() {
        let c = figure(CurveDistribution::Uniform);
        let t = curves_table(&c, REPORT_ROW_STRIDE);
        crate::export::agreement::assert_exports_agree(&t);
        // The six static policies, rand/b and the model's adapt/b.
        assert!(c.series.len() >= 7);
        assert_eq!(t.columns.len(), 1 + c.series.len());
        assert_eq!(
            t.rows.len(),
            c.series[0].points.len().div_ceil(REPORT_ROW_STRIDE)
        );
        assert!(curves_svg(&c).unwrap().contains("U/(beta*B)"));
    }

    #[test]
    fn alpha_table_exports_agree() {
        let rows = alpha_table().unwrap();
        assert!(!rows.is_empty());
        crate::export::agreement::assert_exports_agree(&alpha_table_view(&rows));
    }

    #[test]
    fn kinds_map_to_static_defaults() {
        assert_eq!(
            kind_of(&MinimaxModel::Exponential),
            Some(SyncKind::ProducerConsumer)
        );
        assert_eq!(
            kind_of(&MinimaxModel::BarrierMixture { participants: 4 }),
            Some(SyncKind::Barrier)
        );
    }
}
