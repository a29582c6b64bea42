//! `Topology::from_sysfs_root` on the fixture trees under `tests/fixtures/`
//! and on broken trees built in a temporary directory.

use std::fs;
use std::path::{Path, PathBuf};

use waitwise_platform::topology::{CpuListError, Topology, TopologyError};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A scratch sysfs tree with the given `(relative path, content)` files,
/// removed on drop.
struct TempTree(PathBuf);

impl TempTree {
    fn new(name: &str, files: &[(&str, &str)]) -> TempTree {
        let root =
            std::env::temp_dir().join(format!("waitwise-topology-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for (rel, content) in files {
            let path = root.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, content).unwrap();
        }
        TempTree(root)
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A valid single-CPU tree plus `extra` files (which may overwrite it).
fn one_cpu_tree(name: &str, extra: &[(&str, &str)]) -> TempTree {
    let mut files = vec![
        ("devices/system/cpu/online", "0\n"),
        ("devices/system/cpu/cpu0/topology/core_id", "0\n"),
        (
            "devices/system/cpu/cpu0/topology/physical_package_id",
            "0\n",
        ),
        (
            "devices/system/cpu/cpu0/topology/thread_siblings_list",
            "0\n",
        ),
    ];
    for &(rel, content) in extra {
        files.retain(|&(r, _)| r != rel);
        files.push((rel, content));
    }
    TempTree::new(name, &files)
}

#[test]
fn two_socket_smt2_counts() {
    let t = Topology::from_sysfs_root(&fixture("sysfs-2socket-smt2")).unwrap();
    assert_eq!(t.online, (0..16).collect::<Vec<_>>());
    assert_eq!(t.num_cpus(), 16);
    assert_eq!(t.num_cores(), 8);
    assert_eq!(t.num_packages(), 2);
    assert_eq!(t.num_numa_nodes(), 2);
}

#[test]
fn two_socket_smt2_siblings_and_nodes() {
    let t = Topology::from_sysfs_root(&fixture("sysfs-2socket-smt2")).unwrap();
    let want: Vec<Vec<usize>> = (0..8).map(|c| vec![c, c + 8]).collect();
    assert_eq!(t.smt_sibling_sets(), want);
    assert_eq!(t.sibling_of(3), Some(11));
    assert_eq!(t.sibling_of(11), Some(3));
    assert_eq!(t.sibling_of(16), None);

    let cpu13 = t.cpu(13).unwrap();
    assert_eq!(
        (cpu13.package_id, cpu13.core_id, cpu13.node),
        (1, 1, Some(1))
    );
    assert_eq!(cpu13.thread_siblings, [5, 13]);
    assert_eq!(t.cpu(2).unwrap().node, Some(0));
}

#[test]
fn guest_without_smt() {
    let t = Topology::from_sysfs_root(&fixture("sysfs-2vcpu-guest")).unwrap();
    assert_eq!(t.online, [0, 1]);
    assert_eq!(t.num_cpus(), 2);
    assert_eq!(t.num_cores(), 2);
    assert_eq!(t.num_packages(), 1);
    assert_eq!(t.num_numa_nodes(), 1);
    assert!(t.smt_sibling_sets().is_empty());
    assert_eq!(t.sibling_of(0), None);
    assert!(t.cpus.iter().all(|c| c.node == Some(0)));
}

#[test]
fn no_node_directory_means_one_node() {
    let tree = one_cpu_tree("no-node", &[]);
    let t = Topology::from_sysfs_root(&tree.0).unwrap();
    assert_eq!(t.cpus[0].node, None);
    assert_eq!(t.num_numa_nodes(), 1);
}

#[test]
fn unknown_ids_are_tolerated() {
    let tree = one_cpu_tree(
        "minus-one",
        &[
            ("devices/system/cpu/cpu0/topology/core_id", "-1\n"),
            (
                "devices/system/cpu/cpu0/topology/physical_package_id",
                "-1\n",
            ),
        ],
    );
    let t = Topology::from_sysfs_root(&tree.0).unwrap();
    assert_eq!((t.cpus[0].core_id, t.cpus[0].package_id), (0, 0));
}

#[test]
fn missing_file_is_an_error_naming_it() {
    let tree = TempTree::new(
        "missing",
        &[
            ("devices/system/cpu/online", "0\n"),
            ("devices/system/cpu/cpu0/topology/core_id", "0\n"),
            (
                "devices/system/cpu/cpu0/topology/physical_package_id",
                "0\n",
            ),
        ],
    );
    let err = Topology::from_sysfs_root(&tree.0).unwrap_err();
    match &err {
        TopologyError::Io { path, .. } => assert!(path.ends_with("thread_siblings_list")),
        other => panic!("unexpected error {other:?}"),
    }
    assert!(err.to_string().contains("thread_siblings_list"), "{err}");
}

#[test]
fn missing_root_is_an_error() {
    let err = Topology::from_sysfs_root(Path::new("/nonexistent/waitwise")).unwrap_err();
    assert!(matches!(err, TopologyError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("online"), "{err}");
}

#[test]
fn garbage_core_id_is_an_error() {
    let tree = one_cpu_tree(
        "garbage-core",
        &[("devices/system/cpu/cpu0/topology/core_id", "zero\n")],
    );
    let err = Topology::from_sysfs_root(&tree.0).unwrap_err();
    match &err {
        TopologyError::NotAnInteger { path, content } => {
            assert!(path.ends_with("core_id"));
            assert_eq!(content, "zero");
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert!(err.to_string().contains("core_id"), "{err}");
}

#[test]
fn garbage_online_list_is_an_error() {
    let tree = one_cpu_tree("garbage-online", &[("devices/system/cpu/online", "3-1\n")]);
    let err = Topology::from_sysfs_root(&tree.0).unwrap_err();
    assert!(
        matches!(
            &err,
            TopologyError::CpuList {
                source: CpuListError::Reversed { .. },
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn garbage_node_cpulist_is_an_error() {
    let tree = one_cpu_tree(
        "garbage-node",
        &[("devices/system/node/node0/cpulist", "0-\n")],
    );
    let err = Topology::from_sysfs_root(&tree.0).unwrap_err();
    assert!(err.to_string().contains("node0"), "{err}");
}

#[test]
fn empty_online_list_is_an_error() {
    let tree = one_cpu_tree("empty-online", &[("devices/system/cpu/online", "\n")]);
    let err = Topology::from_sysfs_root(&tree.0).unwrap_err();
    assert!(matches!(err, TopologyError::NoOnlineCpus { .. }), "{err:?}");
}

#[test]
fn current_machine() {
    let t = Topology::current().unwrap();
    assert!(t.num_cpus() >= 1);
    assert!(t.num_cores() >= 1 && t.num_cores() <= t.num_cpus());
    assert!(t.num_packages() >= 1 && t.num_packages() <= t.num_cores());
    for set in t.smt_sibling_sets() {
        assert!(set.len() >= 2);
        assert_eq!(t.sibling_of(set[0]), Some(set[1]));
    }
}
