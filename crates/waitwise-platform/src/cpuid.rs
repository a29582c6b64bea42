//! Raw CPUID behind a trait, so that decoding ([`crate::features`]) is a pure
//! function that tests can run on recorded register values.
//!
//! | source | when to use it |
//! |---|---|
//! | [`HardwareCpuid`] | the CPU this code runs on; zeros on targets other than x86_64 |
//! | [`RecordedCpuid`] | register values captured from some other machine, for tests |
//!
//! Both return all-zero registers for a leaf they do not know, which every
//! decoder treats as "feature absent". Real hardware does *not* do that for
//! leaves past the maximum it reports (Intel repeats the highest basic leaf),
//! so [`HardwareCpuid`] checks the maximum first.
//!
//! # Examples
//!
//! ```
//! use waitwise_platform::cpuid::{CpuidRegs, CpuidSource, RecordedCpuid};
//!
//! let src = RecordedCpuid::new([(0, 0, CpuidRegs { eax: 7, ..CpuidRegs::default() })]);
//! assert_eq!(src.cpuid(0, 0).eax, 7);
//! assert_eq!(src.cpuid(1, 0), CpuidRegs::default()); // unknown leaf: zeros
//! ```

/// First leaf of the extended range; its EAX is the highest extended leaf.
pub const EXTENDED_BASE: u32 = 0x8000_0000;

/// Leaves from here up to (not including) [`EXTENDED_BASE`] belong to the
/// hypervisor range; [`HardwareCpuid`] does not guard them.
const HYPERVISOR_BASE: u32 = 0x4000_0000;

/// The four registers one CPUID leaf returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuidRegs {
    /// EAX
    pub eax: u32,
    /// EBX
    pub ebx: u32,
    /// ECX
    pub ecx: u32,
    /// EDX
    pub edx: u32,
}

impl CpuidRegs {
    /// Registers from `[eax, ebx, ecx, edx]`, the order CPUID dumps print.
    pub const fn from_array(r: [u32; 4]) -> Self {
        CpuidRegs {
            eax: r[0],
            ebx: r[1],
            ecx: r[2],
            edx: r[3],
        }
    }
}

/// Something that answers CPUID queries.
///
/// Implementations return all-zero registers for leaves they do not support,
/// so decoders can treat zero as "absent" without a separate check.
pub trait CpuidSource {
    /// The registers for `leaf` (EAX input) and `subleaf` (ECX input).
    fn cpuid(&self, leaf: u32, subleaf: u32) -> CpuidRegs;
}

impl<T: CpuidSource + ?Sized> CpuidSource for &T {
    fn cpuid(&self, leaf: u32, subleaf: u32) -> CpuidRegs {
        (**self).cpuid(leaf, subleaf)
    }
}

/// The CPUID instruction of the CPU this code runs on.
///
/// Always allowed: CPUID is unprivileged on x86_64 (a hypervisor may trap
/// it, which makes each call cost around a microsecond, so decode once and
/// cache, as [`crate::features::cpu`] does). On other targets every query
/// returns zeros.
///
/// Leaves above the maximum basic leaf (leaf 0 EAX) or above the maximum
/// extended leaf (leaf `0x8000_0000` EAX) return zeros instead of whatever
/// the CPU would answer. Hypervisor leaves (`0x4000_0000..0x8000_0000`) are
/// passed through unchecked.
#[derive(Clone, Copy, Debug, Default)]
pub struct HardwareCpuid;

impl CpuidSource for HardwareCpuid {
    fn cpuid(&self, leaf: u32, subleaf: u32) -> CpuidRegs {
        let range_base = if leaf >= EXTENDED_BASE {
            Some(EXTENDED_BASE)
        } else if leaf < HYPERVISOR_BASE {
            Some(0)
        } else {
            None
        };
        if let Some(base) = range_base {
            if leaf != base && leaf > raw_cpuid(base, 0).eax {
                return CpuidRegs::default();
            }
        }
        raw_cpuid(leaf, subleaf)
    }
}

/// Execute CPUID without any range check.
#[cfg(target_arch = "x86_64")]
#[inline]
fn raw_cpuid(leaf: u32, subleaf: u32) -> CpuidRegs {
    // `__cpuid_count` is an `unsafe fn` in older toolchains (rust-version
    // 1.80) and safe in newer ones, hence the allow.
    #[allow(unused_unsafe)]
    // SAFETY: every x86_64 CPU implements CPUID; it reads no memory and has
    // no side effects beyond writing the four output registers.
    let r = unsafe { core::arch::x86_64::__cpuid_count(leaf, subleaf) };
    CpuidRegs {
        eax: r.eax,
        ebx: r.ebx,
        ecx: r.ecx,
        edx: r.edx,
    }
}

/// No CPUID on this target: every leaf reads as zeros.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn raw_cpuid(_leaf: u32, _subleaf: u32) -> CpuidRegs {
    CpuidRegs::default()
}

/// CPUID answers replayed from a recording, for tests and for decoding
/// dumps taken on other machines.
///
/// A query matches a record only when both leaf and subleaf are equal;
/// anything else returns zeros. No max-leaf check is applied: record only
/// the leaves the CPU really has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordedCpuid {
    /// `(leaf, subleaf, registers)`, sorted by `(leaf, subleaf)`.
    records: Vec<(u32, u32, CpuidRegs)>,
}

impl RecordedCpuid {
    /// A source answering from `records`. If a `(leaf, subleaf)` pair
    /// appears twice, the last record wins.
    pub fn new(records: impl IntoIterator<Item = (u32, u32, CpuidRegs)>) -> Self {
        let mut records: Vec<_> = records.into_iter().collect();
        // Stable sort keeps input order among equal keys; reversing first
        // makes the *last* duplicate the one that survives `dedup_by_key`.
        records.reverse();
        records.sort_by_key(|&(leaf, sub, _)| (leaf, sub));
        records.dedup_by_key(|&mut (leaf, sub, _)| (leaf, sub));
        RecordedCpuid { records }
    }

    /// A source from `(leaf, subleaf, [eax, ebx, ecx, edx])` rows, the shape
    /// test fixtures are written in.
    pub fn from_rows(rows: &[(u32, u32, [u32; 4])]) -> Self {
        Self::new(
            rows.iter()
                .map(|&(leaf, sub, regs)| (leaf, sub, CpuidRegs::from_array(regs))),
        )
    }
}

impl CpuidSource for RecordedCpuid {
    fn cpuid(&self, leaf: u32, subleaf: u32) -> CpuidRegs {
        self.records
            .binary_search_by_key(&(leaf, subleaf), |&(l, s, _)| (l, s))
            .map_or(CpuidRegs::default(), |i| self.records[i].2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_unknown_leaf_is_zero() {
        let src = RecordedCpuid::from_rows(&[(1, 0, [1, 2, 3, 4])]);
        assert_eq!(src.cpuid(1, 0), CpuidRegs::from_array([1, 2, 3, 4]));
        assert_eq!(src.cpuid(1, 1), CpuidRegs::default());
        assert_eq!(src.cpuid(2, 0), CpuidRegs::default());
    }

    #[test]
    fn recorded_last_duplicate_wins() {
        let src = RecordedCpuid::from_rows(&[(7, 0, [1, 0, 0, 0]), (7, 0, [2, 0, 0, 0])]);
        assert_eq!(src.cpuid(7, 0).eax, 2);
    }

    #[test]
    fn hardware_respects_max_leaves() {
        let hw = HardwareCpuid;
        let max_basic = hw.cpuid(0, 0).eax;
        let max_ext = hw.cpuid(EXTENDED_BASE, 0).eax;
        assert_eq!(
            hw.cpuid(max_basic.saturating_add(1), 0),
            CpuidRegs::default()
        );
        if (EXTENDED_BASE..u32::MAX).contains(&max_ext) {
            assert_eq!(hw.cpuid(max_ext + 1, 0), CpuidRegs::default());
        }
    }
}
