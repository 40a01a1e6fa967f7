//! Criterion bench target of the `stream` family; see [`gpubench::families::stream`].

fn main() {
    gpubench::harness::main("stream", gpubench::families::stream::run)
}
