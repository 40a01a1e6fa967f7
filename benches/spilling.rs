//! Criterion bench target of the `spilling` family; see [`gpubench::families::spilling`].

fn main() {
    gpubench::harness::main("spilling", gpubench::families::spilling::run)
}
