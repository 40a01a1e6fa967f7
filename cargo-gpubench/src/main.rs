//! `cargo gpubench`: a thin command line over the `gpubench` library.

mod cli;
mod commands;
mod output;
mod progress;
mod render;

use clap::Parser;
use gpubench::error::exit;

fn main() {
    // cargo runs us as `cargo-gpubench gpubench <args>`; direct runs omit the second word.
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "gpubench") {
        args.remove(1);
    }
    let cli = match cli::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { exit::USAGE } else { exit::OK };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    // A libcuda or libnvrtc lacking an entry point is an environment error, not a panic.
    let code = match gpubench::device::catch_missing_symbols(|| commands::dispatch(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            if let Some(details) = e.details() {
                eprintln!("{details}");
            }
            e.exit_code()
        }
    };
    std::process::exit(code);
}
