//! Which machine this is, for keying what was measured on it: the CPU
//! model, the kernel release and the hypervisor. Two processes that agree
//! on all three see the same costs of blocking, up to the machine's modes.

use crate::cpuid::{CpuidSource, HardwareCpuid};
use crate::features;

/// The identity of the machine a measurement belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineId {
    /// The CPU's brand string (CPUID), e.g. `AMD EPYC`.
    pub cpu_model: String,
    /// The kernel release (`uname -r`).
    pub kernel: String,
    /// The hypervisor's CPUID vendor (`KVMKVMKVM`, `Microsoft Hv`, ...), or
    /// `none` on bare metal.
    pub hypervisor: String,
}

impl MachineId {
    /// This machine (six CPUID instructions at most, and one `uname`).
    pub fn current() -> Self {
        Self {
            cpu_model: features::cpu_model(),
            kernel: kernel_release(),
            hypervisor: hypervisor_vendor(&HardwareCpuid),
        }
    }

    /// A short stable key (16 hex digits, FNV-1a over the three fields),
    /// for file names.
    pub fn key(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for field in [&self.cpu_model, &self.kernel, &self.hypervisor] {
            for b in field.bytes().chain([0]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        format!("{h:016x}")
    }
}

/// The kernel release from `uname(2)`, or `unknown`.
fn kernel_release() -> String {
    // SAFETY: utsname is plain bytes; all-zero is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    let bytes: Vec<u8> = u
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The hypervisor's vendor string from leaf `0x4000_0000` when leaf 1
/// says a hypervisor is present (ECX bit 31); `none` otherwise.
pub fn hypervisor_vendor(src: &impl CpuidSource) -> String {
    // Leaf 1 exists on every x86-64 CPU.
    if src.cpuid(1, 0).ecx & (1 << 31) == 0 {
        return "none".into();
    }
    let r = src.cpuid(0x4000_0000, 0);
    let bytes: Vec<u8> = [r.ebx, r.ecx, r.edx]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take_while(|&b| b != 0)
        .collect();
    let name = String::from_utf8_lossy(&bytes).trim().to_string();
    if name.is_empty() {
        "unnamed".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuid::RecordedCpuid;

    #[test]
    fn hypervisor_vendor_from_cpuid() {
        let kvm = RecordedCpuid::from_rows(&[
            (0, 0, [0xd, 0, 0, 0]),
            (1, 0, [0, 0, 1 << 31, 0]),
            (
                0x4000_0000,
                0,
                [0x4000_0001, 0x4b4d_564b, 0x564b_4d56, 0x4d],
            ),
        ]);
        assert_eq!(hypervisor_vendor(&kvm), "KVMKVMKVM");
        let bare = RecordedCpuid::from_rows(&[(0, 0, [0xd, 0, 0, 0]), (1, 0, [0, 0, 0, 0])]);
        assert_eq!(hypervisor_vendor(&bare), "none");
    }

    #[test]
    fn the_key_follows_every_field() {
        let a = MachineId {
            cpu_model: "AMD EPYC".into(),
            kernel: "6.1.0".into(),
            hypervisor: "KVMKVMKVM".into(),
        };
        assert_eq!(a.key(), a.clone().key());
        assert_eq!(a.key().len(), 16);
        for b in [
            MachineId {
                cpu_model: "AMD EPYC 2".into(),
                ..a.clone()
            },
            MachineId {
                kernel: "6.1.1".into(),
                ..a.clone()
            },
            MachineId {
                hypervisor: "none".into(),
                ..a.clone()
            },
        ] {
            assert_ne!(a.key(), b.key());
        }
        let here = MachineId::current();
        assert!(!here.kernel.is_empty() && !here.hypervisor.is_empty());
    }
}
