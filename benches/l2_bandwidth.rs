//! Criterion bench target of the `l2_bandwidth` family; see [`gpubench::families::l2_bandwidth`].

fn main() {
    gpubench::harness::main("l2_bandwidth", gpubench::families::l2_bandwidth::run)
}
