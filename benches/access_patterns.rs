//! Criterion bench target of the `access_patterns` family; see [`gpubench::families::access_patterns`].

fn main() {
    gpubench::harness::main("access_patterns", gpubench::families::access_patterns::run)
}
