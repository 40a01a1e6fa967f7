//! Criterion bench target of the `atomics` family; see [`gpubench::families::atomics`].

fn main() {
    gpubench::harness::main("atomics", gpubench::families::atomics::run)
}
