//! Writing to stdout without panicking when the reader goes away (`cargo gpubench report | head`).
//!
//! A closed pipe is not an error of ours: the rest of the output is dropped and the command
//! goes on to return its real exit code (a REGRESSED run piped into `head` still exits 1).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout's reader has gone; later output is dropped.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Prints `text` and a newline to stdout.
pub fn emit(text: impl std::fmt::Display) {
    write_out(format_args!("{text}\n"));
}

/// Prints `text` to stdout as it is (no newline added).
pub fn emit_raw(text: impl std::fmt::Display) {
    write_out(format_args!("{text}"));
}

/// Prints `text` to stderr; a closed stderr is ignored.
pub fn emit_err(text: impl std::fmt::Display) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{text}");
}

fn write_out(args: std::fmt::Arguments<'_>) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|_| out.flush()) {
        CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let _ = writeln!(std::io::stderr(), "error: writing to stdout: {e}");
        }
    }
}

/// Writes an experiment's trace to `output` when given, and prints trace and summary as JSON
/// when `json` is set. Returns whether the JSON was printed (the caller prints tables otherwise).
pub fn save_and_emit_json<T: serde::Serialize, S: serde::Serialize>(
    trace: &T,
    summary: &S,
    output: Option<&std::path::Path>,
    json: bool,
) -> gpubench::Result<bool> {
    if let Some(path) = output {
        gpubench::results::write_json(path, trace)?;
    }
    if json {
        let doc = serde_json::json!({ "trace": trace, "summary": summary });
        emit(serde_json::to_string_pretty(&doc).expect("experiment traces serialise"));
    }
    Ok(json)
}
