//! `include/waitwise.h` cannot drift from the Rust side.
//!
//! - Every function the header declares is a `#[no_mangle]` function of
//!   this crate with the same C signature, and the other way round (Rust
//!   types are spelled in C by [`c_type`]).
//! - Every `#define WAITWISE_* <value>` is a `pub const` of this crate with
//!   the same value, and the other way round.
//! - When `nm` and the built `libwaitwise.so` are at hand, the library
//!   exports exactly the header's functions.

mod common;
use common::built_library;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// A C function: return type and parameter types, each normalized by
/// [`normalize`].
#[derive(Clone, Debug, PartialEq, Eq)]
struct Signature {
    ret: String,
    params: Vec<String>,
}

fn header_path() -> PathBuf {
    // A link to the repository's `include/waitwise.h`, so that the
    // packaged crate carries the header.
    Path::new(MANIFEST_DIR).join("include/waitwise.h")
}

fn header() -> String {
    let path = header_path();
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// All of `src/*.rs`, concatenated.
fn rust_sources() -> String {
    let dir = Path::new(MANIFEST_DIR).join("src");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("read src/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("read source"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Drops `/* */` and `//` comments.
fn strip_c_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("unterminated comment") + start + 2;
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One spelling per C type: single spaces, `*` attached to the left.
fn normalize(c: &str) -> String {
    let spaced = c.replace('*', " * ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    words.join(" ").replace(" *", "*")
}

/// Splits a C parameter into its type, dropping the name.
fn c_param_type(param: &str) -> String {
    let param = normalize(param);
    match param.rfind(|c: char| !(c.is_alphanumeric() || c == '_')) {
        Some(i) => normalize(&param[..=i]),
        None => panic!("parameter `{param}` has no name"),
    }
}

/// The header's function declarations, by name.
fn header_functions() -> BTreeMap<String, Signature> {
    let code: String = strip_c_comments(&header())
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    let mut functions = BTreeMap::new();
    for statement in code.split(';') {
        // Drop what an `extern "C" {` or a struct body leaves in front.
        let statement = statement.rsplit(['{', '}']).next().unwrap().trim();
        if !statement.contains('(') || statement.starts_with("_Static_assert") {
            continue;
        }
        let open = statement.find('(').unwrap();
        let close = statement.rfind(')').expect("`)` of a declaration");
        let head = normalize(&statement[..open]);
        let name_at = head
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let (ret, name) = (normalize(&head[..name_at]), head[name_at..].to_string());
        assert!(name.starts_with("waitwise_"), "declaration `{statement}`");
        let params = statement[open + 1..close].trim();
        let params = if params == "void" {
            Vec::new()
        } else {
            params.split(',').map(c_param_type).collect()
        };
        let old = functions.insert(name.clone(), Signature { ret, params });
        assert!(old.is_none(), "{name} declared twice");
    }
    functions
}

/// A Rust type of the ABI, spelled in C.
fn c_type(rust: &str) -> String {
    let rust = rust.trim();
    if let Some(pointee) = rust.strip_prefix("*mut ") {
        return normalize(&format!("{}*", c_type(pointee)));
    }
    if let Some(pointee) = rust.strip_prefix("*const ") {
        return normalize(&format!("const {}*", c_type(pointee)));
    }
    let c = match rust {
        "c_int" => "int",
        "c_char" => "char",
        "c_double" | "f64" => "double",
        "u32" => "uint32_t",
        "u64" => "uint64_t",
        "()" => "void",
        "waitwise_policy_t" => "waitwise_policy_t",
        "WaitwiseEvent" => "waitwise_event_t",
        "WaitwiseBarrier" => "waitwise_barrier_t",
        "WaitwiseMutex" => "waitwise_mutex_t",
        "WaitwiseCondvar" => "waitwise_condvar_t",
        "WaitwiseSemaphore" => "waitwise_semaphore_t",
        other => panic!("no C spelling for the Rust type `{other}`: add it to c_type()"),
    };
    c.to_string()
}

/// The crate's `#[no_mangle]` functions, by name, with C signatures.
fn rust_functions() -> BTreeMap<String, Signature> {
    let source = rust_sources();
    let mut functions = BTreeMap::new();
    for chunk in source.split("#[no_mangle]").skip(1) {
        let fn_at = chunk.find("fn ").expect("fn after #[no_mangle]");
        assert!(
            chunk[..fn_at].contains("extern \"C\""),
            "a #[no_mangle] function that is not extern \"C\": {}",
            &chunk[..fn_at + 40]
        );
        let rest = &chunk[fn_at + 3..];
        let open = rest.find('(').unwrap();
        let name = rest[..open].trim().to_string();
        // Parameters hold no parentheses: the first `)` closes them.
        let close = open + rest[open..].find(')').unwrap();
        let params = rest[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (_, ty) = p.split_once(':').expect("`name: Type`");
                c_type(ty)
            })
            .collect();
        let body_at = close + rest[close..].find('{').unwrap();
        let ret = rest[close + 1..body_at].trim();
        let ret = match ret.strip_prefix("->") {
            Some(ty) => c_type(ty),
            None => "void".to_string(),
        };
        let old = functions.insert(name.clone(), Signature { ret, params });
        assert!(old.is_none(), "{name} defined twice");
    }
    functions
}

/// A constant's value as a number (`UINT64_MAX`, `u64::MAX`, `(-1)`).
fn value(text: &str) -> i128 {
    let text = text.trim().trim_start_matches('(').trim_end_matches(')');
    match text {
        "UINT64_MAX" | "u64::MAX" => u64::MAX as i128,
        "INT_MAX" | "i32::MAX" => i32::MAX as i128,
        n => n
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("constant value `{n}` is not a number")),
    }
}

fn header_constants() -> BTreeMap<String, i128> {
    strip_c_comments(&header())
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#define "))
        .filter_map(|l| l.trim().split_once(char::is_whitespace))
        .filter(|(name, _)| name.starts_with("WAITWISE_"))
        // Strings (WAITWISE_VERSION_STRING) are checked by tests/version.rs.
        .filter(|(_, v)| !v.trim().starts_with('"'))
        .map(|(name, v)| (name.to_string(), value(v)))
        .collect()
}

fn rust_constants() -> BTreeMap<String, i128> {
    rust_sources()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const WAITWISE_"))
        .map(|l| {
            let (name, rest) = l.split_once(':').expect("`NAME: Type = value;`");
            let (_, v) = rest.split_once('=').expect("`= value;`");
            (
                format!("WAITWISE_{name}"),
                value(v.trim().trim_end_matches(';')),
            )
        })
        .collect()
}

/// Differences between two maps, one line each.
fn diff<V: std::fmt::Debug + PartialEq>(
    header: &BTreeMap<String, V>,
    rust: &BTreeMap<String, V>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, h) in header {
        match rust.get(name) {
            None => out.push(format!("{name}: in the header, not in the crate")),
            Some(r) if r != h => out.push(format!("{name}: header {h:?}, crate {r:?}")),
            Some(_) => {}
        }
    }
    for name in rust.keys().filter(|n| !header.contains_key(*n)) {
        out.push(format!("{name}: in the crate, not in the header"));
    }
    out
}

#[test]
fn header_declares_exactly_the_crates_functions() {
    let (header, rust) = (header_functions(), rust_functions());
    assert!(
        header.len() >= 40,
        "only {} declarations parsed",
        header.len()
    );
    let problems = diff(&header, &rust);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn header_constants_match_the_crate() {
    let (header, rust) = (header_constants(), rust_constants());
    assert!(header.contains_key("WAITWISE_EINVAL"), "{header:?}");
    let problems = diff(&header, &rust);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn object_types_are_opaque_typedefs() {
    let code = strip_c_comments(&header());
    for object in ["event", "barrier", "mutex", "condvar", "semaphore"] {
        let typedef = format!("typedef struct waitwise_{object} waitwise_{object}_t;");
        assert!(code.contains(&typedef), "missing `{typedef}`");
    }
}

/// `nm -D` of the built library: its `waitwise_*` exports are the header's.
#[test]
fn shared_library_exports_the_header() {
    let lib = built_library("libwaitwise.so");
    let Ok(out) = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
    else {
        eprintln!("nm not found: export check skipped (the source check still ran)");
        return;
    };
    assert!(out.status.success(), "nm failed on {}", lib.display());
    let exported: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, kind, name) = (f.next()?, f.next()?, f.next()?);
            (kind == "T" && name.starts_with("waitwise_")).then(|| name.to_string())
        })
        .collect();
    let declared: Vec<String> = header_functions().into_keys().collect();
    let mut exported_sorted = exported.clone();
    exported_sorted.sort();
    assert_eq!(exported_sorted, declared);
}

#[test]
fn parsers_understand_the_shapes_they_meet() {
    assert_eq!(normalize("waitwise_event_t  ** "), "waitwise_event_t**");
    assert_eq!(c_param_type("const char *s"), "const char*");
    assert_eq!(c_type("*mut *mut WaitwiseMutex"), "waitwise_mutex_t**");
    assert_eq!(c_type("*const c_char"), "const char*");
    assert_eq!(value("(-1)"), -1);
    assert_eq!(value("u64::MAX"), value("UINT64_MAX"));
}
