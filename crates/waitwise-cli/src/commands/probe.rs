//! `waitwise probe [--json] [--save]`

use super::stdout::{errln, outln, write};

/// Options of `waitwise probe`.
#[derive(clap::Args)]
pub struct ProbeArgs {
    /// Print one JSON object with the stable keys documented in the README.
    #[arg(long)]
    pub json: bool,
    /// Save the B measured now as this machine's profile (a per-user cache
    /// file keyed by CPU model, kernel and hypervisor), which waitwise
    /// programs on this machine then start from.
    #[arg(long)]
    pub save: bool,
}

/// Runs the probe and prints it.
pub fn run(args: &ProbeArgs) -> anyhow::Result<()> {
    let probe = waitwise_bench::probe::run()?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&probe)?)?;
    } else {
        write(&waitwise_bench::probe::to_text(&probe))?;
    }
    if args.save {
        let ns = probe
            .costs
            .block_measured_ns
            .ok_or_else(|| anyhow::anyhow!("B could not be measured: nothing saved"))?;
        let path = waitwise::policy::machine_profile::save(ns.round() as u64)
            .map_err(|e| anyhow::anyhow!("saving the machine profile: {e}"))?;
        errln!(
            "saved B = {ns:.0} ns as this machine's profile: {}",
            path.display()
        );
    }
    Ok(())
}
