//! Decoded CPU features, detected once.
//!
//! [`decode`] is a pure function of a [`CpuidSource`], so it is tested on
//! register values recorded from other machines. [`cpu`] runs it once on
//! [`HardwareCpuid`] and caches the result in a static.
//!
//! Which CPUID bits mean what (Intel SDM vol. 2A "CPUID"; AMD APM vol. 3
//! appendix E):
//!
//! | field | leaf | bit |
//! |---|---|---|
//! | [`CpuFeatures::vendor`] | 0 | EBX, EDX, ECX: 12-byte vendor string |
//! | [`CpuFeatures::model`] | `0x8000_0002..=0x8000_0004` | 48-byte brand string |
//! | [`CpuFeatures::waitpkg`] | 7 subleaf 0 | ECX bit 5 (UMONITOR/UMWAIT/TPAUSE) |
//! | [`CpuFeatures::monitorx`] | `0x8000_0001` | ECX bit 29 (MONITORX/MWAITX) |
//! | [`CpuFeatures::invariant_tsc`] | `0x8000_0007` | EDX bit 8 |
//! | [`CpuFeatures::tsc_hz`] | `0x15`, `0x16` | see [`CpuFeatures::tsc_hz`] |
//! | [`CpuFeatures::monitor_line_bytes`] | 5 | EBX bits 15:0, see the field |
//!
//! A leaf above the maximum the CPU reports (leaf 0 EAX for basic leaves,
//! leaf `0x8000_0000` EAX for extended ones) counts as all zeros, whatever
//! the source answers.

use crate::once::ForkSafeOnce;

use crate::cpu_string::CpuString;
use crate::cpuid::{CpuidRegs, CpuidSource, HardwareCpuid, EXTENDED_BASE};

/// Leaf 7 subleaf 0 ECX: WAITPKG (UMONITOR, UMWAIT, TPAUSE).
const LEAF7_ECX_WAITPKG: u32 = 1 << 5;
/// Leaf `0x8000_0001` ECX: MONITORX/MWAITX.
const EXT1_ECX_MONITORX: u32 = 1 << 29;
/// Leaf `0x8000_0007` EDX: invariant TSC (constant rate in all P/C-states).
const EXT7_EDX_INVARIANT_TSC: u32 = 1 << 8;

/// Line size assumed when leaf 5 does not give one: the x86 cache line.
const DEFAULT_MONITOR_LINE_BYTES: u32 = 64;
/// Intel's L2 adjacent-line prefetcher fetches 128-byte aligned pairs of
/// lines, so a neighbour's writes to the other half of the pair cause
/// traffic (and, for UMWAIT, spurious wake-ups in practice). Intel manuals
/// recommend 128-byte separation for contended data.
const INTEL_MONITOR_LINE_BYTES: u32 = 128;
/// Larger leaf 5 values are treated as garbage (a broken hypervisor): no
/// x86 CPU monitors more than a page.
const MAX_MONITOR_LINE_BYTES: u32 = 4096;

/// Denverton (Goldmont-D, family 6 model 0x5F) leaves leaf 0x15 ECX zero;
/// Linux `native_calibrate_tsc` hard-codes its 25 MHz crystal, so we do too.
const DENVERTON_MODEL: u32 = 0x5F;
/// Denverton's crystal frequency in Hz (from Linux `arch/x86/kernel/tsc.c`).
const DENVERTON_CRYSTAL_HZ: u64 = 25_000_000;

/// CPU vendor, from the leaf 0 vendor string.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum Vendor {
    /// `GenuineIntel`
    Intel,
    /// `AuthenticAMD`
    Amd,
    /// Anything else, with its vendor string (empty where CPUID is absent).
    Other(CpuString<12>),
}

impl Vendor {
    /// A short name for reports: `"Intel"`, `"AMD"`, the vendor string of
    /// any other CPU, or `"unknown"` where there is none.
    ///
    /// ```
    /// use waitwise_platform::features::Vendor;
    /// assert_eq!(Vendor::Amd.name(), "AMD");
    /// assert_eq!(Vendor::Other("HygonGenuine".into()).name(), "HygonGenuine");
    /// assert_eq!(Vendor::Other(Default::default()).name(), "unknown");
    /// ```
    pub fn name(&self) -> &str {
        match self {
            Vendor::Intel => "Intel",
            Vendor::Amd => "AMD",
            Vendor::Other(s) if s.is_empty() => "unknown",
            Vendor::Other(s) => s,
        }
    }

    /// Classify a 12-byte vendor string.
    fn from_id(id: &str) -> Vendor {
        match id {
            "GenuineIntel" => Vendor::Intel,
            "AuthenticAMD" => Vendor::Amd,
            other => Vendor::Other(CpuString::new(other)),
        }
    }
}

/// What the CPU advertises, as far as waiting is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CpuFeatures {
    /// Vendor.
    pub vendor: Vendor,
    /// Brand string (leaves `0x8000_0002..=0x8000_0004`), trimmed; empty if
    /// the CPU has none.
    pub model: CpuString<48>,
    /// WAITPKG: UMONITOR/UMWAIT/TPAUSE (leaf 7 subleaf 0 ECX bit 5).
    pub waitpkg: bool,
    /// MONITORX/MWAITX (leaf `0x8000_0001` ECX bit 29).
    pub monitorx: bool,
    /// Invariant TSC (leaf `0x8000_0007` EDX bit 8).
    pub invariant_tsc: bool,
    /// TSC frequency in Hz, when CPUID gives it. In order:
    ///
    /// 1. Leaf `0x15` with EAX (denominator), EBX (numerator) and ECX
    ///    (crystal Hz) all nonzero: `ECX * EBX / EAX`.
    /// 2. Leaf `0x15` with EAX and EBX but no crystal, on Intel Denverton
    ///    (family 6 model `0x5F`): a 25 MHz crystal, as Linux hard-codes.
    /// 3. Leaf `0x16` EAX bits 15:0 (processor base frequency, MHz) nonzero,
    ///    any vendor: that times 10^6. Linux derives the crystal from it
    ///    (`base * EAX / EBX`) and multiplies back, which lands on the same
    ///    value up to its kHz rounding.
    /// 4. Under a hypervisor (leaf 1 ECX bit 31) whose leaf `0x4000_0000`
    ///    lists the timing leaf `0x4000_0010` (VMware's, also offered by
    ///    KVM and others when configured): its EAX, the TSC rate in kHz.
    /// 5. Otherwise `None` (AMD and most VMs): the cycle clock learns it.
    pub tsc_hz: Option<u64>,
    /// Bytes a monitored word must own so that neighbours cause no false
    /// wake-ups; a power of two. The rule:
    ///
    /// 1. Leaf 5 EBX bits 15:0 (largest monitor-line size), if leaf 5 is
    ///    present and that is a nonzero power of two no larger than 4096;
    ///    otherwise 64, the x86 cache line.
    /// 2. On Intel, at least 128: the adjacent-line prefetcher pairs 64-byte
    ///    lines, so the other half of a 128-byte pair is not a safe
    ///    neighbour.
    pub monitor_line_bytes: u32,
}

/// The maxima a CPU reports, used to treat leaves beyond them as zeros.
struct Leaves<'a, S: CpuidSource> {
    src: &'a S,
    max_basic: u32,
    max_extended: u32,
}

impl<S: CpuidSource> Leaves<'_, S> {
    /// Leaf `leaf` (subleaf `sub`), or zeros if the CPU does not have it.
    fn get(&self, leaf: u32, sub: u32) -> CpuidRegs {
        let max = if leaf >= EXTENDED_BASE {
            self.max_extended
        } else {
            self.max_basic
        };
        if leaf <= max {
            self.src.cpuid(leaf, sub)
        } else {
            CpuidRegs::default()
        }
    }
}

/// Decode the features of the CPU behind `src`. Pure: the same registers
/// always give the same result.
///
/// # Examples
///
/// ```
/// use waitwise_platform::cpuid::RecordedCpuid;
/// use waitwise_platform::features::{decode, Vendor};
///
/// // An empty recording: a CPU with no leaves at all.
/// let f = decode(&RecordedCpuid::default());
/// assert_eq!(f.vendor, Vendor::Other(Default::default()));
/// assert!(!f.waitpkg && !f.monitorx && !f.invariant_tsc);
/// assert_eq!(f.tsc_hz, None);
/// assert_eq!(f.monitor_line_bytes, 64);
/// ```
pub fn decode(src: &impl CpuidSource) -> CpuFeatures {
    let leaf0 = src.cpuid(0, 0);
    let ext0 = src.cpuid(EXTENDED_BASE, 0);
    let leaves = Leaves {
        src,
        max_basic: leaf0.eax,
        // A CPU without extended leaves may answer anything below the base.
        max_extended: if ext0.eax >= EXTENDED_BASE {
            ext0.eax
        } else {
            0
        },
    };

    let vendor = Vendor::from_id(&ascii_from_regs::<12>(&[leaf0.ebx, leaf0.edx, leaf0.ecx]));
    let model = brand_string(&leaves);
    let waitpkg = leaves.get(7, 0).ecx & LEAF7_ECX_WAITPKG != 0;
    let monitorx = leaves.get(EXTENDED_BASE + 1, 0).ecx & EXT1_ECX_MONITORX != 0;
    let invariant_tsc = leaves.get(EXTENDED_BASE + 7, 0).edx & EXT7_EDX_INVARIANT_TSC != 0;
    let tsc_hz = tsc_hz(&leaves, &vendor);
    let monitor_line_bytes = monitor_line_bytes(&leaves, &vendor);

    CpuFeatures {
        vendor,
        model,
        waitpkg,
        monitorx,
        invariant_tsc,
        tsc_hz,
        monitor_line_bytes,
    }
}

/// The bytes of `regs` (each little-endian) up to the first NUL, as text.
fn ascii_from_regs<const N: usize>(regs: &[u32]) -> CpuString<N> {
    let mut bytes = [0u8; N];
    for (chunk, r) in bytes.chunks_mut(4).zip(regs) {
        chunk.copy_from_slice(&r.to_le_bytes()[..chunk.len()]);
    }
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(N);
    // Text up to the first byte that is not ASCII (CPUID's strings are).
    let text = match std::str::from_utf8(&bytes[..end]) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    };
    CpuString::new(text)
}

/// The 48-byte brand string, trimmed; empty if the leaves are absent.
fn brand_string<S: CpuidSource>(leaves: &Leaves<'_, S>) -> CpuString<48> {
    let mut regs = [0u32; 12];
    for (i, chunk) in (2..=4).zip(regs.chunks_mut(4)) {
        let r = leaves.get(EXTENDED_BASE + i, 0);
        chunk.copy_from_slice(&[r.eax, r.ebx, r.ecx, r.edx]);
    }
    CpuString::new(ascii_from_regs::<48>(&regs).trim())
}

/// Display family and model from leaf 1 EAX (SDM vol. 2A, figure 3-6).
fn family_model(eax: u32) -> (u32, u32) {
    let base_family = (eax >> 8) & 0xF;
    let base_model = (eax >> 4) & 0xF;
    let ext_family = (eax >> 20) & 0xFF;
    let ext_model = (eax >> 16) & 0xF;
    let family = if base_family == 0xF {
        base_family + ext_family
    } else {
        base_family
    };
    let model = if base_family == 0x6 || base_family == 0xF {
        (ext_model << 4) | base_model
    } else {
        base_model
    };
    (family, model)
}

/// TSC frequency by the chain documented on [`CpuFeatures::tsc_hz`].
fn tsc_hz<S: CpuidSource>(leaves: &Leaves<'_, S>, vendor: &Vendor) -> Option<u64> {
    let l15 = leaves.get(0x15, 0);
    let (den, num) = (u64::from(l15.eax), u64::from(l15.ebx));
    if den != 0 && num != 0 {
        let mut crystal = u64::from(l15.ecx);
        if crystal == 0
            && *vendor == Vendor::Intel
            && family_model(leaves.get(1, 0).eax) == (6, DENVERTON_MODEL)
        {
            crystal = DENVERTON_CRYSTAL_HZ;
        }
        if crystal != 0 {
            // crystal < 2^32 and num < 2^32: the product fits in u64.
            return Some(crystal * num / den);
        }
    }
    let base_mhz = u64::from(leaves.get(0x16, 0).eax & 0xFFFF);
    if base_mhz != 0 {
        return Some(base_mhz * 1_000_000);
    }
    let under_hypervisor = leaves.get(1, 0).ecx & (1 << 31) != 0;
    if under_hypervisor && leaves.src.cpuid(HYPERVISOR_BASE, 0).eax >= HYPERVISOR_TIMING_LEAF {
        let khz = u64::from(leaves.src.cpuid(HYPERVISOR_TIMING_LEAF, 0).eax);
        return (khz != 0).then(|| khz * 1_000);
    }
    None
}

/// First leaf of the hypervisor range; its EAX is the highest such leaf.
const HYPERVISOR_BASE: u32 = 0x4000_0000;
/// The hypervisor's timing leaf: EAX is the TSC rate in kHz.
const HYPERVISOR_TIMING_LEAF: u32 = 0x4000_0010;

/// Monitor line size by the rule documented on
/// [`CpuFeatures::monitor_line_bytes`].
fn monitor_line_bytes<S: CpuidSource>(leaves: &Leaves<'_, S>, vendor: &Vendor) -> u32 {
    let largest = leaves.get(5, 0).ebx & 0xFFFF;
    let line = if largest.is_power_of_two() && largest <= MAX_MONITOR_LINE_BYTES {
        largest
    } else {
        DEFAULT_MONITOR_LINE_BYTES
    };
    if *vendor == Vendor::Intel {
        line.max(INTEL_MONITOR_LINE_BYTES)
    } else {
        line
    }
}

/// The features of the CPU this process runs on, detected once.
///
/// The first call runs [`decode`] on [`HardwareCpuid`] (a dozen CPUID
/// instructions, microseconds under a hypervisor); later calls are one
/// atomic load. Safe to call from any thread at any time.
///
/// # Examples
///
/// ```
/// use waitwise_platform::features::cpu;
/// assert!(cpu().monitor_line_bytes.is_power_of_two());
/// assert!(std::ptr::eq(cpu(), cpu())); // cached
/// ```
#[inline]
pub fn cpu() -> &'static CpuFeatures {
    FEATURES.get_or_init(detect)
}

/// The process's features, once detected.
static FEATURES: ForkSafeOnce<CpuFeatures> = ForkSafeOnce::new();

/// The CPU's brand string ([`CpuFeatures::model`]) with as few CPUID
/// instructions as it takes: from [`cpu`] when that already ran, else four
/// leaves (each CPUID traps to the hypervisor on a virtual machine, so the
/// whole feature set costs ~100 µs there).
pub fn cpu_model() -> String {
    if let Some(f) = FEATURES.get() {
        return f.model.to_string();
    }
    let src = &HardwareCpuid;
    let ext0 = src.cpuid(EXTENDED_BASE, 0);
    let leaves = Leaves {
        src,
        max_basic: 0,
        max_extended: if ext0.eax >= EXTENDED_BASE {
            ext0.eax
        } else {
            0
        },
    };
    brand_string(&leaves).to_string()
}

/// The slow path of [`cpu`]: query the hardware.
#[cold]
#[inline(never)]
fn detect() -> CpuFeatures {
    decode(&HardwareCpuid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuid::RecordedCpuid;

    /// Leaf 0 / `0x8000_0000` vendor registers (EBX, EDX, ECX order).
    const INTEL_ID: [u32; 3] = [0x756e_6547, 0x4965_6e69, 0x6c65_746e];
    const AMD_ID: [u32; 3] = [0x6874_7541, 0x6974_6e65, 0x444d_4163];

    /// Rows for leaves `0x8000_0002..=4` spelling `brand` (padded with NULs).
    fn brand_rows(brand: &str) -> Vec<(u32, u32, [u32; 4])> {
        let mut bytes = [0u8; 48];
        bytes[..brand.len()].copy_from_slice(brand.as_bytes());
        let words: Vec<u32> = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        (0..3)
            .map(|i| {
                let w = &words[i * 4..i * 4 + 4];
                (EXTENDED_BASE + 2 + i as u32, 0, [w[0], w[1], w[2], w[3]])
            })
            .collect()
    }

    /// Leaf 0 row for a CPU with `max` basic leaves and vendor `id`.
    fn leaf0(max: u32, id: [u32; 3]) -> (u32, u32, [u32; 4]) {
        // CPUID order is EBX, EDX, ECX for the string; registers are EAX..EDX.
        (0, 0, [max, id[0], id[2], id[1]])
    }

    /// Intel Xeon (Sapphire Rapids, family 6 model 0x8F). The bits decode
    /// reads are as documented for SPR (WAITPKG, invariant TSC, 25 MHz
    /// crystal, 64-byte monitor line); the other bits are representative.
    fn sapphire_rapids() -> RecordedCpuid {
        let mut rows = vec![
            leaf0(0x20, INTEL_ID),
            (1, 0, [0x0008_06f8, 0x0080_0800, 0x7ffe_fbff, 0xbfeb_fbff]),
            (5, 0, [0x40, 0x40, 0x3, 0x2020]),
            (7, 0, [0x2, 0xf3bf_bfbf, 0x1b41_fffe, 0xffd4_4552]),
            (0x15, 0, [2, 200, 25_000_000, 0]),
            (0x16, 0, [2500, 3800, 100, 0]),
            (EXTENDED_BASE, 0, [0x8000_0008, 0, 0, 0]),
            (EXTENDED_BASE + 1, 0, [0, 0, 0x121, 0x2c10_0800]),
            (EXTENDED_BASE + 7, 0, [0, 0, 0, 0x100]),
        ];
        rows.extend(brand_rows("Intel(R) Xeon(R) Gold 6426Y"));
        RecordedCpuid::from_rows(&rows)
    }

    /// AMD Ryzen 9 7950X (Zen 4, family 0x19 model 0x61): MONITORX,
    /// invariant TSC, no leaf 0x15/0x16 (max basic leaf 0x10).
    fn zen4() -> RecordedCpuid {
        let mut rows = vec![
            leaf0(0x10, AMD_ID),
            (1, 0, [0x00a6_0f12, 0x0020_0800, 0x7ed8_320b, 0x178b_fbff]),
            (5, 0, [0x40, 0x40, 0x3, 0x11]),
            (7, 0, [0x1, 0xf1bf_97a9, 0x0040_5fce, 0x1000_0010]),
            (
                EXTENDED_BASE,
                0,
                [0x8000_0028, AMD_ID[0], AMD_ID[2], AMD_ID[1]],
            ),
            (
                EXTENDED_BASE + 1,
                0,
                [0x00a6_0f12, 0, 0x75c2_37ff, 0x2fd3_fbff],
            ),
            (EXTENDED_BASE + 7, 0, [0, 0x3b, 0, 0x0000_e799]),
        ];
        rows.extend(brand_rows(
            "AMD Ryzen 9 7950X 16-Core Processor            ",
        ));
        RecordedCpuid::from_rows(&rows)
    }

    /// The CI machine: an AMD EPYC (Zen 3, family 0x19 model 1) KVM guest
    /// with 2 vCPUs. Recorded with `__cpuid_count(leaf, 0)` on that machine;
    /// MONITOR (leaf 1 ECX bit 3), WAITPKG and MONITORX are all hidden by
    /// the hypervisor. Rows: `(leaf, subleaf, [eax, ebx, ecx, edx])`.
    const EPYC_KVM_GUEST: &[(u32, u32, [u32; 4])] = &[
        (0x0, 0, [0x0000_000d, 0x6874_7541, 0x444d_4163, 0x6974_6e65]),
        (0x1, 0, [0x00a0_0f11, 0x0102_0800, 0xfffa_3203, 0x178b_fbff]),
        (0x5, 0, [0x0000_0000, 0x0000_0000, 0x0000_0000, 0x0000_0000]),
        (0x7, 0, [0x0000_0000, 0x219c_07ab, 0x0040_0684, 0x0000_0010]),
        (
            0x15,
            0,
            [0x0000_0000, 0x0000_0000, 0x0000_0000, 0x0000_0000],
        ),
        (
            0x16,
            0,
            [0x0000_0000, 0x0000_0000, 0x0000_0000, 0x0000_0000],
        ),
        (
            0x8000_0000,
            0,
            [0x8000_0021, 0x6874_7541, 0x444d_4163, 0x6974_6e65],
        ),
        (
            0x8000_0001,
            0,
            [0x00a0_0f11, 0x4000_0000, 0x0040_03f3, 0x2fd3_fbff],
        ),
        (
            0x8000_0002,
            0,
            [0x2044_4d41, 0x4359_5045, 0x0000_0000, 0x0000_0000],
        ),
        (
            0x8000_0003,
            0,
            [0x0000_0000, 0x0000_0000, 0x0000_0000, 0x0000_0000],
        ),
        (
            0x8000_0004,
            0,
            [0x0000_0000, 0x0000_0000, 0x0000_0000, 0x0000_0000],
        ),
        (
            0x8000_0007,
            0,
            [0x0000_0000, 0x0000_0000, 0x0000_0000, 0x0000_0100],
        ),
    ];

    #[test]
    fn a_hypervisor_timing_leaf_gives_the_tsc_rate() {
        let mut rows = EPYC_KVM_GUEST.to_vec();
        rows.push((
            0x4000_0000,
            0,
            [0x4000_0010, 0x4b4d_564b, 0x564b_4d56, 0x4d],
        ));
        rows.push((0x4000_0010, 0, [2_596_000, 1_000_000, 0, 0]));
        assert_eq!(
            decode(&RecordedCpuid::from_rows(&rows)).tsc_hz,
            Some(2_596_000_000)
        );
        // The recorded guest lists no timing leaf (its max is 0x4000_0001).
        let mut rows = EPYC_KVM_GUEST.to_vec();
        rows.push((
            0x4000_0000,
            0,
            [0x4000_0001, 0x4b4d_564b, 0x564b_4d56, 0x4d],
        ));
        rows.push((0x4000_0010, 0, [2_596_000, 1_000_000, 0, 0]));
        assert_eq!(decode(&RecordedCpuid::from_rows(&rows)).tsc_hz, None);
    }

    #[test]
    fn sapphire_rapids_decodes() {
        let f = decode(&sapphire_rapids());
        assert_eq!(f.vendor, Vendor::Intel);
        assert_eq!(f.model, "Intel(R) Xeon(R) Gold 6426Y");
        assert!(f.waitpkg);
        assert!(!f.monitorx);
        assert!(f.invariant_tsc);
        // 25 MHz crystal * 200 / 2.
        assert_eq!(f.tsc_hz, Some(2_500_000_000));
        // Leaf 5 says 64; Intel's adjacent-line prefetch raises it to 128.
        assert_eq!(f.monitor_line_bytes, 128);
    }

    #[test]
    fn zen4_decodes() {
        let f = decode(&zen4());
        assert_eq!(f.vendor, Vendor::Amd);
        assert_eq!(f.model, "AMD Ryzen 9 7950X 16-Core Processor");
        assert!(!f.waitpkg);
        assert!(f.monitorx);
        assert!(f.invariant_tsc);
        assert_eq!(f.tsc_hz, None);
        assert_eq!(f.monitor_line_bytes, 64);
    }

    #[test]
    fn epyc_kvm_guest_decodes() {
        let f = decode(&RecordedCpuid::from_rows(EPYC_KVM_GUEST));
        assert_eq!(f.vendor, Vendor::Amd);
        assert_eq!(f.model, "AMD EPYC");
        assert!(!f.waitpkg);
        assert!(!f.monitorx);
        assert!(f.invariant_tsc);
        assert_eq!(f.tsc_hz, None);
        assert_eq!(f.monitor_line_bytes, 64);
        assert_eq!(family_model(EPYC_KVM_GUEST[1].2[0]), (0x19, 0x01));
    }

    #[test]
    fn leaf16_fallback_when_no_crystal() {
        // Skylake client: leaf 0x15 gives the ratio but not the crystal.
        let src = RecordedCpuid::from_rows(&[
            leaf0(0x16, INTEL_ID),
            (1, 0, [0x0005_06e3, 0, 0, 0]),
            (0x15, 0, [2, 284, 0, 0]),
            (0x16, 0, [4000, 4200, 100, 0]),
        ]);
        assert_eq!(decode(&src).tsc_hz, Some(4_000_000_000));
    }

    #[test]
    fn denverton_crystal_is_hard_coded() {
        let src = RecordedCpuid::from_rows(&[
            leaf0(0x15, INTEL_ID),
            (1, 0, [0x0005_06f1, 0, 0, 0]),
            (0x15, 0, [2, 176, 0, 0]),
        ]);
        assert_eq!(decode(&src).tsc_hz, Some(2_200_000_000));
    }

    #[test]
    fn leaves_past_the_maximum_are_ignored() {
        // Max basic leaf 6: leaf 7 and 0x15 must read as zeros even if the
        // source answers (as real Intel CPUs do, repeating the top leaf).
        let src = RecordedCpuid::from_rows(&[
            leaf0(6, INTEL_ID),
            (7, 0, [0, 0, LEAF7_ECX_WAITPKG, 0]),
            (0x15, 0, [2, 200, 25_000_000, 0]),
            (EXTENDED_BASE, 0, [0x1234, 0, 0, 0]), // no extended leaves
            (EXTENDED_BASE + 1, 0, [0, 0, EXT1_ECX_MONITORX, 0]),
        ]);
        let f = decode(&src);
        assert!(!f.waitpkg);
        assert!(!f.monitorx);
        assert_eq!(f.tsc_hz, None);
    }

    #[test]
    fn bogus_monitor_line_falls_back() {
        for (ebx, want) in [(0, 64), (48, 64), (0x8000, 64), (256, 256)] {
            let src = RecordedCpuid::from_rows(&[leaf0(5, AMD_ID), (5, 0, [64, ebx, 0, 0])]);
            assert_eq!(decode(&src).monitor_line_bytes, want, "ebx={ebx}");
        }
    }

    #[test]
    fn other_vendor_keeps_its_string() {
        let hygon = [0x6f67_7948, 0x6e65_476e, 0x656e_6975]; // "HygonGenuine"
        let f = decode(&RecordedCpuid::from_rows(&[leaf0(1, hygon)]));
        assert_eq!(f.vendor, Vendor::Other("HygonGenuine".into()));
        assert_eq!(f.vendor.name(), "HygonGenuine");
    }

    #[test]
    fn family_model_decoding() {
        assert_eq!(family_model(0x0008_06f8), (6, 0x8F));
        assert_eq!(family_model(0x00a6_0f12), (0x19, 0x61));
        assert_eq!(family_model(0x0000_0f41), (0xF, 4));
    }

    #[test]
    fn cached_matches_fresh_decode() {
        // Holds on any machine: no assumption about which CPU runs the test.
        assert_eq!(*cpu(), decode(&HardwareCpuid));
    }
}
