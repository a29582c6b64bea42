//! CPUs, cores, packages, NUMA nodes and SMT siblings, parsed from Linux
//! sysfs.
//!
//! Everything is read from a root directory so that tests run on fake trees
//! (`tests/fixtures/sysfs-*`); [`Topology::current`] uses `/sys`. Files read,
//! relative to the root:
//!
//! | file | gives |
//! |---|---|
//! | `devices/system/cpu/online` | the online CPUs (a [cpu list](parse_cpu_list)) |
//! | `devices/system/cpu/cpuN/topology/core_id` | [`CpuTopology::core_id`] |
//! | `devices/system/cpu/cpuN/topology/physical_package_id` | [`CpuTopology::package_id`] |
//! | `devices/system/cpu/cpuN/topology/thread_siblings_list` | [`CpuTopology::thread_siblings`] |
//! | `devices/system/node/nodeK/cpulist` | [`CpuTopology::node`]; the `node` directory may be absent |
//!
//! Missing or malformed files are a [`TopologyError`] naming the file.
//!
//! # Examples
//!
//! ```
//! use waitwise_platform::topology::Topology;
//!
//! let topo = Topology::current().expect("sysfs readable");
//! assert!(topo.num_cpus() >= 1);
//! assert!(topo.num_cores() <= topo.num_cpus());
//! ```

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Largest CPU number a cpu list may name. Linux's `NR_CPUS` tops out at
/// 8192 (`CONFIG_MAXSMP`); this guessed bound leaves room while keeping a
/// malformed `0-4294967295` from allocating gigabytes.
pub const MAX_CPU: usize = 65_535;

/// The topology of one online CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CpuTopology {
    /// CPU number, as the kernel numbers it (`cpuN`).
    pub cpu: usize,
    /// Core id, unique within the package. Linux reports `-1` where it does
    /// not know; that is read as the CPU number (each CPU its own core).
    pub core_id: u32,
    /// Package (socket) id. Linux's `-1` ("unknown") is read as 0.
    pub package_id: u32,
    /// NUMA node holding this CPU; `None` without NUMA information.
    pub node: Option<u32>,
    /// The CPUs sharing this CPU's core, itself included, ascending.
    pub thread_siblings: Vec<usize>,
}

/// The CPU topology of a machine.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Topology {
    /// One entry per online CPU, ascending by [`CpuTopology::cpu`].
    pub cpus: Vec<CpuTopology>,
    /// The online CPUs, ascending.
    pub online: Vec<usize>,
}

/// A cpu list (`0-3,8,10-11`) could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    /// An entry is not a number or a `first-last` range.
    #[error("{entry:?} is not a CPU number or a first-last range")]
    Malformed {
        /// The offending entry.
        entry: String,
    },
    /// A range ends before it starts.
    #[error("range {entry:?} ends before it starts")]
    Reversed {
        /// The offending entry.
        entry: String,
    },
    /// A CPU number beyond [`MAX_CPU`].
    #[error("{entry:?} names a CPU above {MAX_CPU}")]
    TooLarge {
        /// The offending entry.
        entry: String,
    },
}

/// Reading the topology failed.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// A file or directory could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A cpu list file has bad syntax.
    #[error("{}: bad CPU list {content:?}: {source}", path.display())]
    CpuList {
        /// The file.
        path: PathBuf,
        /// Its content, trimmed.
        content: String,
        /// What is wrong.
        source: CpuListError,
    },
    /// A file that should hold one integer does not.
    #[error("{}: expected an integer, found {content:?}", path.display())]
    NotAnInteger {
        /// The file.
        path: PathBuf,
        /// Its content, trimmed.
        content: String,
    },
    /// The online list is empty.
    #[error("{}: no online CPUs", path.display())]
    NoOnlineCpus {
        /// The online file.
        path: PathBuf,
    },
}

/// Parse a Linux cpu list (`0-3,8,10-11`; see `cpuset(7)` "List format").
///
/// Entries are CPU numbers or inclusive `first-last` ranges, separated by
/// commas; surrounding whitespace (the trailing newline of a sysfs file)
/// is ignored, and an empty list gives no CPUs. The result is ascending with
/// duplicates removed. Stride syntax (`0-7:2`) is not accepted: sysfs never
/// writes it.
///
/// ```
/// use waitwise_platform::topology::parse_cpu_list;
/// assert_eq!(parse_cpu_list("0-3,8,10-11\n").unwrap(), [0, 1, 2, 3, 8, 10, 11]);
/// assert_eq!(parse_cpu_list("\n").unwrap(), Vec::<usize>::new());
/// assert!(parse_cpu_list("3-1").is_err());
/// ```
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, CpuListError> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let mut cpus = BTreeSet::new();
    for entry in s.split(',') {
        let entry = entry.trim();
        let owned = || entry.to_owned();
        let number = |t: &str| -> Result<usize, CpuListError> {
            let t = t.trim();
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(CpuListError::Malformed { entry: owned() });
            }
            match t.parse::<usize>() {
                Ok(n) if n <= MAX_CPU => Ok(n),
                _ => Err(CpuListError::TooLarge { entry: owned() }),
            }
        };
        let (first, last) = match entry.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(entry)?;
                (n, n)
            }
        };
        if last < first {
            return Err(CpuListError::Reversed { entry: owned() });
        }
        cpus.extend(first..=last);
    }
    Ok(cpus.into_iter().collect())
}

impl Topology {
    /// The topology of this machine, from `/sys`.
    pub fn current() -> Result<Topology, TopologyError> {
        Topology::from_sysfs_root(Path::new("/sys"))
    }

    /// The topology described by the sysfs tree under `root` (the directory
    /// playing `/sys`). Reads the files listed in the [module docs](self).
    pub fn from_sysfs_root(root: &Path) -> Result<Topology, TopologyError> {
        let cpu_dir = root.join("devices/system/cpu");
        let online_path = cpu_dir.join("online");
        let online = read_cpu_list(&online_path)?;
        if online.is_empty() {
            return Err(TopologyError::NoOnlineCpus { path: online_path });
        }
        let nodes = read_nodes(&root.join("devices/system/node"))?;

        let cpus = online
            .iter()
            .map(|&cpu| {
                let topo = cpu_dir.join(format!("cpu{cpu}/topology"));
                let core_id = read_id(&topo.join("core_id"))?.unwrap_or(cpu as u32);
                let package_id = read_id(&topo.join("physical_package_id"))?.unwrap_or(0);
                let thread_siblings = read_cpu_list(&topo.join("thread_siblings_list"))?;
                let node = nodes
                    .iter()
                    .find(|(_, cpus)| cpus.binary_search(&cpu).is_ok())
                    .map(|&(node, _)| node);
                Ok(CpuTopology {
                    cpu,
                    core_id,
                    package_id,
                    node,
                    thread_siblings,
                })
            })
            .collect::<Result<Vec<_>, TopologyError>>()?;
        Ok(Topology { cpus, online })
    }

    /// The entry for `cpu`, if it is online.
    pub fn cpu(&self, cpu: usize) -> Option<&CpuTopology> {
        self.cpus
            .binary_search_by_key(&cpu, |c| c.cpu)
            .ok()
            .map(|i| &self.cpus[i])
    }

    /// Number of online CPUs (hardware threads).
    pub fn num_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// Number of physical cores: distinct `(package_id, core_id)` pairs.
    pub fn num_cores(&self) -> usize {
        let cores: BTreeSet<_> = self
            .cpus
            .iter()
            .map(|c| (c.package_id, c.core_id))
            .collect();
        cores.len()
    }

    /// Number of packages (sockets).
    pub fn num_packages(&self) -> usize {
        let packages: BTreeSet<_> = self.cpus.iter().map(|c| c.package_id).collect();
        packages.len()
    }

    /// Number of NUMA nodes holding online CPUs; 1 without NUMA information.
    pub fn num_numa_nodes(&self) -> usize {
        let nodes: BTreeSet<_> = self.cpus.iter().filter_map(|c| c.node).collect();
        nodes.len().max(1)
    }

    /// The sets of CPUs sharing a core, for cores with two or more CPUs:
    /// each set ascending, the sets sorted and without duplicates. Empty on
    /// a machine without SMT (or with SMT switched off).
    pub fn smt_sibling_sets(&self) -> Vec<Vec<usize>> {
        let sets: BTreeSet<&Vec<usize>> = self
            .cpus
            .iter()
            .map(|c| &c.thread_siblings)
            .filter(|s| s.len() >= 2)
            .collect();
        sets.into_iter().cloned().collect()
    }

    /// The lowest-numbered other CPU on `cpu`'s core; `None` if `cpu` is
    /// not online or has its core to itself.
    pub fn sibling_of(&self, cpu: usize) -> Option<usize> {
        self.cpu(cpu)?
            .thread_siblings
            .iter()
            .copied()
            .find(|&s| s != cpu)
    }
}

/// Read a whole file as text.
fn read(path: &Path) -> Result<String, TopologyError> {
    fs::read_to_string(path).map_err(|source| TopologyError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Read a cpu list file.
fn read_cpu_list(path: &Path) -> Result<Vec<usize>, TopologyError> {
    let content = read(path)?;
    parse_cpu_list(&content).map_err(|source| TopologyError::CpuList {
        path: path.to_owned(),
        content: content.trim().to_owned(),
        source,
    })
}

/// Read a file holding one id; `Ok(None)` for Linux's `-1` ("unknown").
fn read_id(path: &Path) -> Result<Option<u32>, TopologyError> {
    let content = read(path)?;
    let content = content.trim();
    if content == "-1" {
        return Ok(None);
    }
    content
        .parse::<u32>()
        .map(Some)
        .map_err(|_| TopologyError::NotAnInteger {
            path: path.to_owned(),
            content: content.to_owned(),
        })
}

/// `(node, cpus)` for every `nodeK` directory under `node_dir`, ascending by
/// node; empty if `node_dir` does not exist (a kernel without NUMA).
fn read_nodes(node_dir: &Path) -> Result<Vec<(u32, Vec<usize>)>, TopologyError> {
    let io_err = |source| TopologyError::Io {
        path: node_dir.to_owned(),
        source,
    };
    let entries = match fs::read_dir(node_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(e)),
    };
    let mut nodes = Vec::new();
    for entry in entries {
        let name = entry.map_err(io_err)?.file_name();
        let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_prefix("node"))
            .and_then(|k| k.parse::<u32>().ok())
        else {
            continue; // `online`, `possible`, `has_cpu`, ...
        };
        let cpus = read_cpu_list(&node_dir.join(&name).join("cpulist"))?;
        nodes.push((id, cpus));
    }
    nodes.sort();
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_list_accepts() {
        let cases: &[(&str, &[usize])] = &[
            ("", &[]),
            ("\n", &[]),
            ("0", &[0]),
            ("0-1\n", &[0, 1]),
            ("0-3,8,10-11", &[0, 1, 2, 3, 8, 10, 11]),
            (" 4 , 0-1 ", &[0, 1, 4]),
            ("2-2", &[2]),
            ("0-2,1-3", &[0, 1, 2, 3]),
        ];
        for &(input, want) in cases {
            assert_eq!(parse_cpu_list(input).as_deref(), Ok(want), "{input:?}");
        }
    }

    #[test]
    fn cpu_list_rejects() {
        use CpuListError::*;
        let m = |e: &str| Malformed { entry: e.into() };
        let cases = [
            (
                "3-1",
                Reversed {
                    entry: "3-1".into(),
                },
            ),
            ("a", m("a")),
            ("1-", m("1-")),
            ("-1", m("-1")),
            ("1,,2", m("")),
            ("0-3,", m("")),
            ("1-2-3", m("1-2-3")),
            ("0-7:2", m("0-7:2")),
            ("+1", m("+1")),
            (
                "0-4294967295",
                TooLarge {
                    entry: "0-4294967295".into(),
                },
            ),
            (
                "99999999999999999999999",
                TooLarge {
                    entry: "99999999999999999999999".into(),
                },
            ),
        ];
        for (input, want) in cases {
            assert_eq!(parse_cpu_list(input), Err(want), "{input:?}");
        }
    }
}
