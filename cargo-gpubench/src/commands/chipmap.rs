//! `cargo gpubench chipmap`: the per-SM maps of a results file.

use gpubench::error::{Error, Result, exit};
use gpubench::report::chipmap::{chipmap_table, file_name, summaries, write_svg};
use gpubench::results::ResultsDocument;

use crate::cli::ChipmapArgs;

pub fn chipmap(args: ChipmapArgs) -> Result<i32> {
    if !(args.z_limit.is_finite() && args.z_limit > 0.0) {
        return Err(Error::Usage(format!("--z-limit must be a positive number, got {}", args.z_limit)));
    }
    let filter = args
        .benchmark
        .as_deref()
        .map(|f| regex::Regex::new(f).map_err(|e| Error::Usage(format!("bad --benchmark `{f}`: {e}"))))
        .transpose()?;
    let doc = ResultsDocument::read(&args.results)?;
    let rows = summaries(&doc, filter.as_ref(), args.z_limit);
    if rows.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no per-SM maps{} (they come from the latency family of this version)",
            args.results.display(),
            if filter.is_some() { " match --benchmark" } else { "" }
        )));
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        for b in doc.benchmarks.iter().filter(|b| filter.as_ref().is_none_or(|f| f.is_match(&b.id))) {
            for m in &b.sm_maps {
                let title = format!("{} {}: {} per SM ({})", doc.gpu.name, short_uuid(&doc.gpu.uuid), b.id, m.metric);
                write_svg(&dir.join(file_name(&b.id, &m.metric)), &title, m, args.z_limit)?;
            }
        }
    }
    if args.format.json {
        crate::output::emit(serde_json::to_string_pretty(&rows).expect("chip maps serialise"));
    } else {
        crate::output::emit(chipmap_table(&rows));
        if let Some(dir) = &args.out {
            crate::output::emit(format!("SVG chip maps written to {}", dir.display()));
        }
    }
    Ok(exit::OK)
}

fn short_uuid(uuid: &str) -> &str {
    uuid.get(..12).unwrap_or(uuid)
}
