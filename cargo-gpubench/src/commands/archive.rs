//! `cargo gpubench archive`: the bench executables and this CLI in one .tar.gz.

use gpubench::error::{Error, Result, exit};
use gpubench::runner::{self, archive};

use crate::cli::ArchiveArgs;

pub fn archive(args: ArchiveArgs) -> Result<i32> {
    let bins = runner::build_benches(args.manifest_path.as_deref(), &args.benches, &args.cargo.options())?;
    if bins.is_empty() {
        return Err(Error::Usage("the workspace has no bench targets to archive".into()));
    }
    let cli = std::env::current_exe().map_err(|e| Error::io("cargo-gpubench", e))?;
    let manifest = archive::create(&args.output, &bins, Some(&cli))?;
    let names: Vec<&str> = manifest.benches.iter().map(|b| b.name.as_str()).collect();
    eprintln!("archived {} benches ({}) and the CLI into {}", names.len(), names.join(", "), args.output.display());
    eprintln!(
        "on the GPU machine: tar xzf {0} && gpubench-archive/bin/cargo-gpubench --archive gpubench-archive",
        args.output.display()
    );
    Ok(exit::OK)
}
