//! `waitwise asymmetry`: Seed 000 Fig. 4: barrier time under workload asymmetry (in progress).

/// Options of `waitwise asymmetry`.
#[derive(clap::Args, Debug)]
pub struct AsymmetryArgs {
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

/// Not implemented yet.
pub fn run(_args: &AsymmetryArgs) -> anyhow::Result<()> {
    anyhow::bail!("`waitwise asymmetry` is not implemented yet")
}
