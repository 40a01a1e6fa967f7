//! Criterion bench target of the `latency` family; see [`gpubench::families::latency`].

fn main() {
    gpubench::harness::main("latency", gpubench::families::latency::run)
}
