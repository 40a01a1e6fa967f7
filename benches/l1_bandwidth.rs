//! Criterion bench target of the `l1_bandwidth` family; see [`gpubench::families::l1_bandwidth`].

fn main() {
    gpubench::harness::main("l1_bandwidth", gpubench::families::l1_bandwidth::run)
}
