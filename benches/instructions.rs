//! Criterion bench target of the `instructions` family; see [`gpubench::families::instructions`].

fn main() {
    gpubench::harness::main("instructions", gpubench::families::instructions::run)
}
