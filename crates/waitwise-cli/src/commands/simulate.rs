//! `waitwise simulate`: Discrete-event simulation of waiting algorithms on a large machine (in progress).

/// Options of `waitwise simulate`.
#[derive(clap::Args, Debug)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

/// Not implemented yet.
pub fn run(_args: &SimulateArgs) -> anyhow::Result<()> {
    anyhow::bail!("`waitwise simulate` is not implemented yet")
}
