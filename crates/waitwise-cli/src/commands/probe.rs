//! `waitwise probe [--json] [--save [--force]]`

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
    /// With --save: save B even when the probe found it unstable
    /// (consecutive measurements disagreed, or the two threads never ran at
    /// once).
    #[arg(long, requires = "save")]
    pub force: bool,
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
        let stability = &probe.costs.block_stability;
        let ns = probe
            .costs
            .block_measured_ns
            .ok_or_else(|| anyhow::anyhow!("B could not be measured: nothing saved"))?;
        if !stability.is_stable() && !args.force {
            anyhow::bail!(
                "B is {}; nothing saved. Rerun on a quieter machine, or add --force to save it anyway",
                waitwise_bench::probe::block_measured_text(&probe.costs)
            );
        }
        let path = waitwise::policy::machine_profile::save(ns.round() as u64)
            .map_err(|e| anyhow::anyhow!("saving the machine profile: {e}"))?;
        errln!(
            "saved B = {ns:.0} ns as this machine's profile: {}",
            path.display()
        );
    }
    Ok(())
}
