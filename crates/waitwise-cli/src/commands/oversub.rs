//! `waitwise oversub`: Lim & Agarwal Tables 2-5: matched vs oversubscribed runs (in progress).

/// Options of `waitwise oversub`.
#[derive(clap::Args, Debug)]
pub struct OversubArgs {
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

/// Not implemented yet.
pub fn run(_args: &OversubArgs) -> anyhow::Result<()> {
    anyhow::bail!("`waitwise oversub` is not implemented yet")
}
