//! Writing to stdout without panicking when the reader goes away (`cargo gpubench report | head`).

use std::io::Write;

/// Prints `text` and a newline to stdout; a closed pipe ends the process quietly with code 0.
pub fn emit(text: impl std::fmt::Display) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{text}").and_then(|_| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(gpubench::error::exit::DATA);
    }
}
