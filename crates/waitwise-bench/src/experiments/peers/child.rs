//! Cells whose block cost differs from the process's run in a child
//! process of the `waitwise` binary: `B` is fixed once per process
//! (`WAITWISE_BLOCK_NS` at start, or learned from the process's own
//! wake-ups when nothing fixes it), so a forced or learned `B` needs a
//! process of its own.
//!
//! The parent starts `waitwise peers --child-block <setting>` with
//! `WAITWISE_BLOCK_NS` set (forced) or removed (learned), writes a
//! [`ChildJob`] as JSON on its standard input, and reads the cells'
//! results as JSON from its standard output; the child's progress lines go
//! to the same standard error as the parent's.

use super::grid::{BlockSetting, Point, Primitive};
use super::hints::HintRate;
use super::CellResult;
use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The option that makes `waitwise peers` a child.
pub const CHILD_OPTION: &str = "--child-block";

/// What a child runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChildJob {
    /// The parent's hint rate, so a point means the same work in both.
    pub hints: HintRate,
    /// Rounds per cell.
    pub rounds: usize,
    /// Each contender's run time in a round, ms.
    pub run_ms: u64,
    /// The cells, in the parent's order.
    pub cells: Vec<(Primitive, Point)>,
}

/// Runs `job` in a child of `program` under `block`; the child's results,
/// one per cell of the job.
///
/// # Errors
/// The child could not start, failed, or answered with something other
/// than one result per cell.
pub fn run_in_child(
    program: &Path,
    block: BlockSetting,
    job: &ChildJob,
) -> anyhow::Result<Vec<CellResult>> {
    let mut cmd = Command::new(program);
    cmd.args(["peers", CHILD_OPTION, block.name()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    match block.env_block_ns() {
        Some(ns) => cmd.env("WAITWISE_BLOCK_NS", ns.to_string()),
        None => cmd.env_remove("WAITWISE_BLOCK_NS"),
    };
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    let input = serde_json::to_vec(job)?;
    child
        .stdin
        .take()
        .context("the child's standard input")?
        .write_all(&input)
        .context("writing the child's job")?;
    let out = child.wait_with_output().context("waiting for the child")?;
    if !out.status.success() {
        bail!("the child for B = {} failed: {}", block.name(), out.status);
    }
    let cells: Vec<CellResult> =
        serde_json::from_slice(&out.stdout).context("reading the child's results")?;
    if cells.len() != job.cells.len() {
        bail!(
            "the child for B = {} returned {} cells for {}",
            block.name(),
            cells.len(),
            job.cells.len()
        );
    }
    Ok(cells)
}
