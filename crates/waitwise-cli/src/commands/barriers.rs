//! `waitwise barriers`: Seed 000 Table 2: barrier implementations (in progress).

/// Options of `waitwise barriers`.
#[derive(clap::Args, Debug)]
pub struct BarriersArgs {
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

/// Not implemented yet.
pub fn run(_args: &BarriersArgs) -> anyhow::Result<()> {
    anyhow::bail!("`waitwise barriers` is not implemented yet")
}
