//! [`const_unless_loom!`]: constructors that are `const fn` in a normal build
//! and plain `fn` under `--cfg loom`.
//!
//! `lock_api` needs `const INIT` and statics need `const` constructors, but
//! loom's atomics cannot be built in a `const` context. Writing each such
//! constructor twice, once per cfg, lets the copies drift apart; this macro
//! writes both from one body.

/// Defines each `fn` it is given twice: `const fn` under `not(loom)`, plain
/// `fn` under `loom`, with the same attributes (docs included), signature
/// and body. Takes items of the form `$(#[attr])* $vis fn name(params) ->
/// Ret { body }` (no generics, no `where` clause).
macro_rules! const_unless_loom {
    ($(
        $(#[$attr:meta])*
        $vis:vis fn $name:ident($($params:tt)*) -> $ret:ty $body:block
    )*) => {
        $(
            #[cfg(not(loom))]
            $(#[$attr])*
            $vis const fn $name($($params)*) -> $ret $body

            #[cfg(loom)]
            $(#[$attr])*
            $vis fn $name($($params)*) -> $ret $body
        )*
    };
}

pub(crate) use const_unless_loom;
