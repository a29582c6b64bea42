//! `waitwise model`: Lim & Agarwal cost model: curves, optimal alpha, fits (in progress).

/// Options of `waitwise model`.
#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

/// Not implemented yet.
pub fn run(_args: &ModelArgs) -> anyhow::Result<()> {
    anyhow::bail!("`waitwise model` is not implemented yet")
}
