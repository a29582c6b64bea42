//! `waitwise helpers`: helper threads (Anastopoulos & Koziris 2008,
//! section 4.4; Anastopoulos 2009, part II): each application serially and
//! with helpers under each helper wait.

use super::output::{emit, OutputArgs};
use super::preset::preset;
use waitwise_bench::helpers::experiment::{helper_waits, run as run_experiment, Config, Workload};
use waitwise_bench::helpers::graph::Family;

/// Options of `waitwise helpers`.
#[derive(clap::Args, Debug)]
pub struct HelpersArgs {
    /// The seeds' sizes and sizes in L2, in the LLC and beyond it (hours).
    #[arg(long)]
    pub full: bool,
    /// Measured runs per row (each: serial, helper, idle helper).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: Option<u32>,
    /// Only these applications: spmv, lu, closure, dijkstra (repeatable).
    #[arg(long)]
    pub app: Vec<String>,
    /// Only helper waits whose name contains this (repeatable): spin,
    /// pause, backoff, yield, umwait, tpause, mwaitx, two-phase, block.
    #[arg(long)]
    pub wait: Vec<String>,
    /// Dijkstra graph families (grid, random, rmat; repeatable): replaces
    /// the preset's.
    #[arg(long)]
    pub family: Vec<String>,
    /// Dijkstra graph sizes in vertices (repeatable): replaces the preset's.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub vertices: Vec<u64>,
    /// Dijkstra helper counts (repeatable): replaces the preset's.
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=64))]
    pub helpers: Vec<u64>,
    /// How many phases ahead SPR helpers run.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub distance: Option<u32>,
    #[command(flatten)]
    pub output: OutputArgs,
}

const APPS: [&str; 4] = ["spmv", "lu", "closure", "dijkstra"];

fn family(name: &str) -> Option<Family> {
    Family::ALL.into_iter().find(|f| f.name() == name)
}

/// The configuration these options ask for.
pub fn config(args: &HelpersArgs) -> Config {
    let mut c = preset(args.full, Config::quick, Config::full);
    if let Some(r) = args.runs {
        c.runs = r as usize;
    }
    if let Some(d) = args.distance {
        c.distance = d;
    }
    c.only_waits = args.wait.clone();
    if !args.family.is_empty() || !args.vertices.is_empty() || !args.helpers.is_empty() {
        let mut families = Vec::new();
        let mut sizes = Vec::new();
        let mut counts = Vec::new();
        for w in &c.workloads {
            if let Workload::Dijkstra {
                family,
                vertices,
                helpers,
            } = *w
            {
                for (list, v) in [(&mut sizes, vertices), (&mut counts, helpers)] {
                    if !list.contains(&v) {
                        list.push(v);
                    }
                }
                if !families.contains(&family) {
                    families.push(family);
                }
            }
        }
        if !args.family.is_empty() {
            families = args.family.iter().filter_map(|f| family(f)).collect();
        }
        if !args.vertices.is_empty() {
            sizes = args.vertices.iter().map(|&v| v as usize).collect();
        }
        if !args.helpers.is_empty() {
            counts = args.helpers.iter().map(|&h| h as usize).collect();
        }
        c.workloads
            .retain(|w| !matches!(w, Workload::Dijkstra { .. }));
        for &family in &families {
            for &vertices in &sizes {
                for &helpers in &counts {
                    c.workloads.push(Workload::Dijkstra {
                        family,
                        vertices,
                        helpers,
                    });
                }
            }
        }
    }
    if !args.app.is_empty() {
        c.workloads
            .retain(|w| args.app.iter().any(|a| a == w.app()));
    }
    c
}

/// Checks the application, wait and family names and the export paths.
///
/// # Errors
/// A name that matches nothing, or an export path that cannot be written.
pub fn validate(args: &HelpersArgs) -> anyhow::Result<()> {
    for a in &args.app {
        if !APPS.contains(&a.as_str()) {
            anyhow::bail!(
                "--app {a:?}: not an application; choose from {}",
                APPS.join(", ")
            );
        }
    }
    for f in &args.family {
        if family(f).is_none() {
            anyhow::bail!("--family {f:?}: not a graph family; choose from grid, random, rmat");
        }
    }
    let waits: Vec<&str> = helper_waits().iter().map(|w| w.name).collect();
    for w in &args.wait {
        if !waits.iter().any(|n| n.contains(w.as_str())) {
            anyhow::bail!(
                "--wait {w:?} matches no helper wait; each --wait must be part of one of: {}",
                waits.join(", ")
            );
        }
    }
    args.output.validate()
}

/// Runs the experiment and prints it.
pub fn run(args: &HelpersArgs) -> anyhow::Result<()> {
    emit(&run_experiment(&config(args)), &args.output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use waitwise_bench::helpers::spmv::Shape;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: HelpersArgs,
    }

    fn config_of(args: &[&str]) -> Config {
        let cli = Cli::try_parse_from(std::iter::once("helpers").chain(args.iter().copied()))
            .expect("parses");
        config(&cli.args)
    }

    fn dijkstra(c: &Config) -> Vec<(Family, usize, usize)> {
        c.workloads
            .iter()
            .filter_map(|w| match *w {
                Workload::Dijkstra {
                    family,
                    vertices,
                    helpers,
                } => Some((family, vertices, helpers)),
                _ => None,
            })
            .collect()
    }

    /// `--full` holds the seeds' sizes: SpMV 9648x77137 with 260,785
    /// non-zeros, LU 2048x2048 in 10x10 blocks, closure of 1600 vertices
    /// and 25,000 edges in 16x16 blocks, Dijkstra on 10^6 vertices of
    /// every family with 1 to 3 helpers.
    #[test]
    fn the_full_preset_has_the_seeds_sizes() {
        let c = config_of(&["--full"]);
        assert!(c.workloads.contains(&Workload::Spmv {
            rows: 9648,
            cols: 77137,
            nnz: 260_785,
            shape: Shape::PowerLaw,
            repeats: 50,
        }));
        assert!(c.workloads.contains(&Workload::Lu { n: 2048, block: 10 }));
        assert!(c.workloads.contains(&Workload::Closure {
            n: 1600,
            block: 16,
            edges: 25_000,
        }));
        let d = dijkstra(&c);
        for family in Family::ALL {
            for helpers in 1..=3 {
                assert!(
                    d.contains(&(family, 1_000_000, helpers)),
                    "{family:?} {helpers}"
                );
            }
        }
        // The quick preset is smaller: 10^5 vertices, one helper.
        let q = dijkstra(&config_of(&[]));
        assert!(!q.is_empty() && q.iter().all(|&(_, v, h)| v == 100_000 && h == 1));
    }

    #[test]
    fn dijkstra_options_replace_the_presets_lists() {
        let c = config_of(&[
            "--app",
            "dijkstra",
            "--family",
            "rmat",
            "--vertices",
            "1000000",
            "--helpers",
            "2",
            "--helpers",
            "3",
            "--runs",
            "7",
        ]);
        assert_eq!(
            dijkstra(&c),
            vec![(Family::Rmat, 1_000_000, 2), (Family::Rmat, 1_000_000, 3)]
        );
        assert_eq!(c.workloads.len(), 2);
        assert_eq!(c.runs, 7);
    }
}
