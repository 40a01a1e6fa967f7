//! Criterion bench target of the `constant_memory` family; see [`gpubench::families::constant_memory`].

fn main() {
    gpubench::harness::main("constant_memory", gpubench::families::constant_memory::run)
}
