//! Criterion bench target of the `shared_banks` family; see [`gpubench::families::shared_banks`].

fn main() {
    gpubench::harness::main("shared_banks", gpubench::families::shared_banks::run)
}
