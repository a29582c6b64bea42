//! `waitwise wakeup-matrix`: Seed 004: wake-up latency for every ordered pair of CPUs (in progress).

/// Options of `waitwise wakeup-matrix`.
#[derive(clap::Args, Debug)]
pub struct WakeupMatrixArgs {
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

/// Not implemented yet.
pub fn run(_args: &WakeupMatrixArgs) -> anyhow::Result<()> {
    anyhow::bail!("`waitwise wakeup-matrix` is not implemented yet")
}
