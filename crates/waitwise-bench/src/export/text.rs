//! [`TextExporter`]: an aligned plain-text table for the terminal.

use super::error::ExportError;
use super::exporter::Exporter;
use super::table::{Cell, Table};

/// Aligned columns, numbers with 4 significant digits, notes at the right.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextExporter;

/// A number with about 4 significant digits, no exponent for common ranges.
pub fn format_number(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e7).contains(&a) {
        format!("{x:.3e}")
    } else if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 10.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Text(s) => s.clone(),
        Cell::Number(x) => format_number(*x),
        Cell::Integer(i) => i.to_string(),
        Cell::Missing(reason) => reason.clone(),
    }
}

impl Exporter for TextExporter {
    fn export(&self, table: &Table) -> Result<String, ExportError> {
        table.validate()?;
        let header: Vec<String> = table.columns.iter().map(|c| c.display_name()).collect();
        let rows: Vec<Vec<String>> = table
            .rows
            .iter()
            .map(|r| r.iter().map(cell_text).collect())
            .collect();
        let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count().min(40));
            }
        }
        let line = |cells: &[String]| -> String {
            cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
        let mut out = format!("{}\n", table.title);
        out.push_str(&line(&header));
        out.push('\n');
        for (i, r) in rows.iter().enumerate() {
            out.push_str(&line(r));
            if let Some(note) = table.row_note(i) {
                out.push_str(&format!("  [{note}]"));
            }
            out.push('\n');
        }
        Ok(out)
    }

    fn extension(&self) -> &'static str {
        "txt"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::testing::sample_table;

    #[test]
    fn aligned_with_notes() {
        let s = TextExporter.export(&sample_table()).unwrap();
        assert_eq!(
            s,
            "Condition <wait> & notify\n\
             contender  t_wakeup (ns)           rounds\n\
             spin       81.52                   240\n\
             umwait     n/a: CPU lacks WAITPKG  0  [not run, CPU lacks WAITPKG]\n"
        );
        assert_eq!(format_number(43_210.7), "43211");
        assert_eq!(format_number(0.5), "0.500");
    }
}
