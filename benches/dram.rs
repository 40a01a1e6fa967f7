//! Criterion bench target of the `dram` family; see [`gpubench::families::dram`].

fn main() {
    gpubench::harness::main("dram", gpubench::families::dram::run)
}
