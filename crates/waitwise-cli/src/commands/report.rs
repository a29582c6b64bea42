//! `waitwise report`: Run every experiment and write the report (in progress).

/// Options of `waitwise report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

/// Not implemented yet.
pub fn run(_args: &ReportArgs) -> anyhow::Result<()> {
    anyhow::bail!("`waitwise report` is not implemented yet")
}
