//! The modules (the program and its shared objects) loaded in the
//! process, to name a return address by the file it lies in and its
//! offset there, which a symboliser outside the process can resolve
//! (`waitwise run --profile`). Listed with `dl_iterate_phdr`, at exit only.

use serde::Serialize;
use std::ffi::{c_int, c_void, CStr};
use std::os::unix::ffi::OsStrExt;

/// One loaded module: its file, load bias and the address ranges of its
/// loadable segments.
struct Module {
    file: String,
    bias: usize,
    ranges: Vec<(usize, usize)>,
}

/// The loaded modules, at the time [`loaded`] was called.
pub struct Modules(Vec<Module>);

/// One frame of a call site.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The module's file (the program's own through `/proc/self/exe`);
    /// empty when no loaded module holds the address.
    pub module: String,
    /// `0x...`: the return address less the module's load bias (the
    /// address the module's symbols and debug information use), or the
    /// address itself when `module` is empty.
    pub offset: String,
}

/// Lists the loaded modules.
pub fn loaded() -> Modules {
    let mut modules = Vec::new();
    // SAFETY: `visit` matches dl_iterate_phdr's callback type and takes
    // `data` as the `Vec<Module>` passed here, live for the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut modules as *mut Vec<Module>).cast()) };
    Modules(modules)
}

unsafe extern "C" fn visit(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    data: *mut c_void,
) -> c_int {
    // SAFETY: dl_iterate_phdr passes a live `info` for the call, and
    // `data` is the Vec `loaded` passed.
    let (info, modules) = unsafe { (&*info, &mut *data.cast::<Vec<Module>>()) };
    let name = if info.dlpi_name.is_null() {
        &[][..]
    } else {
        // SAFETY: a non-null dlpi_name is a NUL-terminated string.
        unsafe { CStr::from_ptr(info.dlpi_name) }.to_bytes()
    };
    let file = if name.is_empty() {
        // The program itself (the first module listed has no name).
        match std::fs::read_link("/proc/self/exe") {
            Ok(p) => String::from_utf8_lossy(p.as_os_str().as_bytes()).into_owned(),
            Err(_) => return 0,
        }
    } else {
        String::from_utf8_lossy(name).into_owned()
    };
    let bias = info.dlpi_addr as usize;
    let mut ranges = Vec::new();
    for i in 0..info.dlpi_phnum as usize {
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        if ph.p_type == libc::PT_LOAD {
            let start = bias.wrapping_add(ph.p_vaddr as usize);
            ranges.push((start, start.wrapping_add(ph.p_memsz as usize)));
        }
    }
    modules.push(Module { file, bias, ranges });
    0
}

impl Modules {
    /// The index of the module holding `address`, if one does.
    pub fn containing(&self, address: usize) -> Option<usize> {
        self.0.iter().position(|m| {
            m.ranges
                .iter()
                .any(|&(start, end)| (start..end).contains(&address))
        })
    }

    /// `address` as a frame: its module and offset there.
    pub fn frame(&self, address: usize) -> Frame {
        match self.containing(address) {
            Some(i) => Frame {
                module: self.0[i].file.clone(),
                offset: format!("{:#x}", address.wrapping_sub(self.0[i].bias)),
            },
            None => Frame {
                module: String::new(),
                offset: format!("{address:#x}"),
            },
        }
    }
}
