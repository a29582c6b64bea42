//! `waitwise profile`: Read a wait-time profile and recommend alpha per object kind (in progress).

/// Options of `waitwise profile`.
#[derive(clap::Args, Debug)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

/// Not implemented yet.
pub fn run(_args: &ProfileArgs) -> anyhow::Result<()> {
    anyhow::bail!("`waitwise profile` is not implemented yet")
}
