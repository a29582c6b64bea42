//! `waitwise probe [--json]`

/// Options of `waitwise probe`.
#[derive(clap::Args)]
pub struct ProbeArgs {
    /// Print one JSON object with the stable keys documented in the README.
    #[arg(long)]
    pub json: bool,
}

/// Runs the probe and prints it.
pub fn run(args: &ProbeArgs) -> anyhow::Result<()> {
    let probe = waitwise_bench::probe::run()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&probe)?);
    } else {
        print!("{}", probe.to_text());
    }
    Ok(())
}
