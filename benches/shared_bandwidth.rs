//! Criterion bench target of the `shared_bandwidth` family; see [`gpubench::families::shared_bandwidth`].

fn main() {
    gpubench::harness::main("shared_bandwidth", gpubench::families::shared_bandwidth::run)
}
