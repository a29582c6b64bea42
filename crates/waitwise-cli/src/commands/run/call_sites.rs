//! Names a call site's frames: each return address the interposer
//! recorded (a module's file and an offset in it) becomes the function,
//! file and line of the call, read from the module's debug information
//! with the `addr2line` crate, outside the profiled process. Without debug
//! information a frame is named by the symbol whose extent holds it (the
//! symbol table's, else the dynamic one's), and without one by
//! `module+0xoffset`: never by the nearest symbol before it, which in a
//! stripped library is an exported function the address is not part of.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// A frame as the interposer records it (`call_site` in its profile).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
pub struct RawFrame {
    /// The module's file; empty when no module held the address.
    #[serde(default)]
    pub module: String,
    /// `0x...`: the return address less the module's load bias.
    pub offset: String,
}

/// A named frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamedFrame {
    /// The function, demangled; `None` when neither debug information nor
    /// a symbol names it.
    pub function: Option<String>,
    /// The source file, when debug information has it.
    pub file: Option<String>,
    /// The line, when debug information has it.
    pub line: Option<u32>,
    /// The module's file name (without its directory).
    pub module: String,
    /// The offset in the module, `0x...`.
    pub offset: String,
}

impl NamedFrame {
    /// `function (file:line)` (the file's name, without its directory),
    /// `function (module+0xoffset)`, or `module+0xoffset`.
    pub fn label(&self) -> String {
        let place = match (&self.file, self.line) {
            (Some(file), Some(line)) => {
                let name = Path::new(file)
                    .file_name()
                    .map_or_else(|| file.clone(), |n| n.to_string_lossy().into_owned());
                format!("{name}:{line}")
            }
            _ => format!("{}+{}", self.module, self.offset),
        };
        match &self.function {
            Some(f) => format!("{f} ({place})"),
            None => place,
        }
    }

    /// The function's name, or `module+0xoffset` (a folded stack's frame).
    pub fn short_label(&self) -> String {
        self.function
            .clone()
            .unwrap_or_else(|| format!("{}+{}", self.module, self.offset))
    }
}

/// Names frames, opening each module's debug information once.
#[derive(Default)]
pub struct Symbolizer {
    modules: HashMap<String, Module>,
}

/// One module's debug information and symbols.
struct Module {
    loader: Option<addr2line::Loader>,
    /// Function symbols with a size: `(address, size, name)`, by address.
    symbols: Vec<(u64, u64, String)>,
}

impl Module {
    fn open(path: &str) -> Self {
        Self {
            loader: addr2line::Loader::new(path).ok(),
            symbols: sized_symbols(path),
        }
    }

    /// The name of the symbol whose extent holds `probe`.
    fn symbol_holding(&self, probe: u64) -> Option<&str> {
        let i = self.symbols.partition_point(|s| s.0 <= probe);
        let (address, size, name) = self.symbols.get(i.checked_sub(1)?)?;
        (probe < address + size).then_some(name.as_str())
    }
}

/// The function symbols of the ELF file at `path` that have a size: the
/// symbol table's, else (a stripped file) the dynamic symbol table's.
fn sized_symbols(path: &str) -> Vec<(u64, u64, String)> {
    use object::{Object, ObjectSymbol, SymbolKind};
    let Ok(data) = std::fs::read(path) else {
        return Vec::new();
    };
    let Ok(file) = object::File::parse(&*data) else {
        return Vec::new();
    };
    let collect = |symbols: object::SymbolIterator<'_, '_>| -> Vec<(u64, u64, String)> {
        symbols
            .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
            .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_string())))
            .collect()
    };
    let mut symbols = collect(file.symbols());
    if symbols.is_empty() {
        symbols = collect(file.dynamic_symbols());
    }
    symbols.sort_unstable();
    symbols
}

impl Symbolizer {
    /// Names `frame`. The offset is a return address: the call lies just
    /// before it, so the byte before is looked up.
    pub fn name(&mut self, frame: &RawFrame) -> NamedFrame {
        let offset = parse_hex(&frame.offset);
        let module_name = Path::new(&frame.module).file_name().map_or_else(
            || frame.module.clone(),
            |n| n.to_string_lossy().into_owned(),
        );
        let mut named = NamedFrame {
            function: None,
            file: None,
            line: None,
            module: module_name,
            offset: frame.offset.clone(),
        };
        let (Some(offset), false) = (offset, frame.module.is_empty()) else {
            return named;
        };
        let module = self
            .modules
            .entry(frame.module.clone())
            .or_insert_with(|| Module::open(&frame.module));
        let probe = offset.saturating_sub(1);
        if let Some(Ok(mut frames)) = module.loader.as_ref().map(|l| l.find_frames(probe)) {
            // The innermost frame: the function the call is written in
            // (an inlined one, if the call was inlined).
            if let Ok(Some(f)) = frames.next() {
                named.function = f
                    .function
                    .as_ref()
                    .and_then(|name| name.demangle().ok().map(|n| n.into_owned()));
                if let Some(location) = f.location {
                    named.file = location.file.map(str::to_string);
                    named.line = location.line;
                }
            }
        }
        if named.function.is_none() {
            named.function = module
                .symbol_holding(probe)
                .map(|s| addr2line::demangle_auto(s.into(), None).into_owned());
        }
        named
    }
}

/// `0x1a2b` as a number.
fn parse_hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_without_a_module_is_named_by_its_address() {
        let named = Symbolizer::default().name(&RawFrame {
            module: String::new(),
            offset: "0x1234".into(),
        });
        assert_eq!(named.function, None);
        assert_eq!(named.label(), "+0x1234");
    }

    #[test]
    fn a_frame_in_this_test_binary_is_named_by_its_function() {
        // A return address inside this function: its own address plus one.
        let exe = std::env::current_exe().unwrap();
        let here = a_frame_in_this_test_binary_is_named_by_its_function as fn() as usize;
        // SAFETY: Dl_info is plain data that dladdr fills.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: `here` is an address in this executable; `info` is live.
        assert_ne!(unsafe { libc::dladdr(here as *const _, &mut info) }, 0);
        // A position-independent executable's first segment is at 0: its
        // load address is its bias.
        let bias = info.dli_fbase as usize;
        let named = Symbolizer::default().name(&RawFrame {
            module: exe.display().to_string(),
            offset: format!("{:#x}", here - bias + 1),
        });
        let function = named.function.unwrap_or_default();
        assert!(
            function.contains("a_frame_in_this_test_binary_is_named_by_its_function"),
            "{function}"
        );
    }
}
