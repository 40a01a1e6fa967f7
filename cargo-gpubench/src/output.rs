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
