//! The size preset an experiment subcommand starts from, before its other
//! options override parts of it.

/// The paper-sized preset (`full`) when `--full` was given, else the quick
/// one.
pub fn preset<C>(full_flag: bool, quick: fn() -> C, full: fn() -> C) -> C {
    if full_flag {
        full()
    } else {
        quick()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_flag_picks_the_full_preset() {
        assert_eq!(preset(false, || "quick", || "full"), "quick");
        assert_eq!(preset(true, || "quick", || "full"), "full");
    }
}
