//! What a dissect run leaves in its folder: `sweeps.json` (the raw measurements, enough to
//! infer everything again offline), `dissect.json` (facts, latencies, table rows, knees),
//! `results.json` (a results document whose `facts` and latency metrics can enter a baseline),
//! `report.txt` (the tables) and `plots/*.svg`.

use std::collections::BTreeMap;
use std::path::{Path as FsPath, PathBuf};

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};
use serde::{Deserialize, Serialize};

use super::data::{SWEEPS_SCHEMA, Sweeps};
use super::infer::{Dissection, analyze};
use super::plot;
use crate::error::{Error, Result};
use crate::report::format_value;
use crate::results::{
    BenchmarkResult, Better, ClockDomain, Fact, FactValue, GpuIdentity, Metric, RESULTS_SCHEMA, ResultsDocument,
    Settings, Stack, read_json, write_atomic, write_json,
};

/// Schema tag of [`DissectDocument`].
pub const DISSECT_SCHEMA: &str = "gpubench.dissect/1";
/// File names inside a dissect folder.
pub const SWEEPS_FILE: &str = "sweeps.json";
/// See [`SWEEPS_FILE`].
pub const DISSECT_FILE: &str = "dissect.json";
/// See [`SWEEPS_FILE`].
pub const RESULTS_FILE: &str = "results.json";
/// See [`SWEEPS_FILE`].
pub const REPORT_FILE: &str = "report.txt";
/// See [`SWEEPS_FILE`].
pub const PLOTS_DIR: &str = "plots";

/// `dissect.json`: the inference of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DissectDocument {
    /// Always [`DISSECT_SCHEMA`].
    pub schema: String,
    /// The GPU.
    pub gpu: GpuIdentity,
    /// When the sweeps were measured.
    pub created_unix_s: u64,
    /// Wall time of the measurements, seconds.
    pub wall_time_s: f64,
    /// What was inferred.
    pub dissection: Dissection,
}

/// The sweeps compressed with gzip (`sweeps.json.gz`): what a committed folder may hold instead
/// of [`SWEEPS_FILE`].
pub const SWEEPS_FILE_GZ: &str = "sweeps.json.gz";

/// The sweeps file of a dissect folder: `sweeps.json`, else `sweeps.json.gz`.
pub fn sweeps_file(dir: &FsPath) -> Option<PathBuf> {
    [SWEEPS_FILE, SWEEPS_FILE_GZ].iter().map(|f| dir.join(f)).find(|f| f.is_file())
}

/// Reads the sweeps of a dissect folder (or a `sweeps.json` / `sweeps.json.gz` file given
/// directly).
pub fn read_sweeps(path: &FsPath) -> Result<Sweeps> {
    let file = if path.is_dir() { sweeps_file(path) } else { Some(path.to_path_buf()).filter(|f| f.exists()) };
    let Some(file) = file else {
        return Err(Error::Usage(format!(
            "{}: no {SWEEPS_FILE} or {SWEEPS_FILE_GZ} here (not a dissect folder)",
            path.display()
        )));
    };
    // Gzipped or not, within the document limit (1 GiB once decompressed).
    read_json(&file, SWEEPS_SCHEMA)
}

/// The facts inferred from a saved dissect folder: what CI recomputes from committed sweeps.
pub fn facts_from_folder(dir: &FsPath) -> Result<Vec<Fact>> {
    Ok(analyze(&read_sweeps(dir)?).facts)
}

/// The facts a dissect folder's `dissect.json` recorded when it was written.
pub fn recorded_facts(dir: &FsPath) -> Result<Vec<Fact>> {
    let doc: DissectDocument = read_json(&dir.join(DISSECT_FILE), DISSECT_SCHEMA)?;
    Ok(doc.dissection.facts)
}

fn opt(v: Option<u64>) -> String {
    v.map(|b| b.to_string()).unwrap_or_else(|| "-".into())
}

fn bytes(v: Option<u64>) -> String {
    v.map(|b| plot::human(b as f64)).unwrap_or_else(|| "-".into())
}

/// Seed 000's table: level, size, line, fetch, sets, ways, latency, policy, mapping. The size is
/// the largest footprint the level serves entirely; where its share falls gradually, "half by"
/// gives the footprint by which half of it is gone. Sets and ways come from the traces, whose
/// kernel holds shared memory: their product with the line is the capacity "in traces".
pub fn summary_table(d: &Dissection) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(vec!["level", "size", "line", "fetch", "sets", "ways", "latency (cycles)", "policy", "mapping"]);
    for r in &d.rows {
        let mut size = bytes(r.size_bytes);
        if let Some((a, b)) = r.half_bytes {
            size.push_str(&format!(", half by {}", bytes(Some((a as f64 * b as f64).sqrt() as u64))));
        }
        if let Some(t) = r.trace_size_bytes {
            size.push_str(&format!(" ({} in traces)", bytes(Some(t))));
        }
        t.add_row(vec![
            Cell::new(&r.level),
            Cell::new(size).set_alignment(CellAlignment::Right),
            Cell::new(bytes(r.line_bytes)).set_alignment(CellAlignment::Right),
            Cell::new(bytes(r.fetch_bytes)).set_alignment(CellAlignment::Right),
            Cell::new(opt(r.sets)).set_alignment(CellAlignment::Right),
            Cell::new(opt(r.ways)).set_alignment(CellAlignment::Right),
            Cell::new(match (r.latency_cycles, &r.latency_from) {
                (Some(v), Some(from)) => format!("{} ({from})", format_value(v)),
                (Some(v), None) => format_value(v),
                (None, _) => "-".into(),
            })
            .set_alignment(CellAlignment::Right),
            Cell::new(r.policy.clone().unwrap_or_default()),
            Cell::new(r.mapping.clone().unwrap_or_default()),
        ]);
    }
    t
}

/// Every fact with its confidence and method.
pub fn facts_table(facts: &[Fact]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    t.set_header(vec!["fact", "value", "unit", "confidence", "method"]);
    for f in facts {
        let value = match &f.value {
            FactValue::Number(v) => format!("{v}"),
            FactValue::Text(s) => s.clone(),
        };
        t.add_row(vec![
            Cell::new(&f.name),
            Cell::new(value).set_alignment(CellAlignment::Right),
            Cell::new(&f.unit),
            Cell::new(format!("{:.2}", f.confidence)).set_alignment(CellAlignment::Right),
            Cell::new(&f.method),
        ]);
    }
    t
}

/// A results document: the facts, and one benchmark per latency whose samples are the per-point
/// latencies (so that the verdict rule can test them like any metric).
pub fn results_document(sweeps: &Sweeps, d: &Dissection) -> ResultsDocument {
    let stack = sweeps.stack.clone().unwrap_or(Stack {
        driver_version: None,
        cuda_driver_api: "none".into(),
        nvrtc_version: "none".into(),
        cudarc_feature: "none".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
    });
    let benchmarks = d
        .latencies
        .iter()
        .filter(|l| !l.samples.is_empty())
        .map(|l| BenchmarkResult {
            chosen: Default::default(),
            id: format!("dissect/{}", l.name),
            family: "dissect".into(),
            params: BTreeMap::new(),
            time_ns: Vec::new(),
            clocks: Vec::new(),
            metrics: vec![Metric::new("cycles", "cycles", Better::Lower, ClockDomain::Sm, l.samples.clone())],
            kernels: sweeps.kernels.clone(),
            criterion: None,
            telemetry: Vec::new(),
            sm_maps: Vec::new(),
        })
        .collect();
    ResultsDocument {
        schema: RESULTS_SCHEMA.into(),
        created_unix_s: sweeps.created_unix_s,
        gpu: sweeps.device.identity.clone(),
        stack,
        settings: Settings {
            profile: "dissect".into(),
            filter: None,
            sample_size: 0,
            warm_up_s: 0.0,
            measurement_s: 0.0,
        },
        benchmarks,
        facts: d.facts.clone(),
        telemetry: None,
        wall_time_s: sweeps.wall_time_s,
    }
}

/// The text of `report.txt`.
pub fn report_text(sweeps: &Sweeps, d: &Dissection) -> String {
    format!(
        "{} (cc {}.{}, {} SMs, L2 {} B, {} B shared memory per SM); sweeps took {:.1} s\n\n{}\n\n{}\n",
        sweeps.device.identity.name,
        sweeps.device.identity.cc_major,
        sweeps.device.identity.cc_minor,
        sweeps.device.identity.sm_count,
        sweeps.device.identity.l2_bytes,
        sweeps.device.identity.smem_per_sm,
        sweeps.wall_time_s,
        summary_table(d),
        facts_table(&d.facts)
    )
}

/// Writes a dissect folder; `sweeps.json` only when `with_sweeps` (an offline re-run leaves the
/// measured one alone). Returns the files written.
pub fn write_folder(dir: &FsPath, sweeps: &Sweeps, d: &Dissection, with_sweeps: bool) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut files = Vec::new();
    if with_sweeps {
        let p = dir.join(SWEEPS_FILE);
        write_json(&p, sweeps)?;
        files.push(p);
    }
    let doc = DissectDocument {
        schema: DISSECT_SCHEMA.into(),
        gpu: sweeps.device.identity.clone(),
        created_unix_s: sweeps.created_unix_s,
        wall_time_s: sweeps.wall_time_s,
        dissection: d.clone(),
    };
    for (name, write) in [
        (DISSECT_FILE, Box::new(|p: &FsPath| write_json(p, &doc)) as Box<dyn Fn(&FsPath) -> Result<()>>),
        (RESULTS_FILE, Box::new(|p: &FsPath| results_document(sweeps, d).write(p))),
        (REPORT_FILE, Box::new(|p: &FsPath| write_atomic(p, report_text(sweeps, d).as_bytes()))),
    ] {
        let p = dir.join(name);
        write(&p)?;
        files.push(p);
    }
    files.extend(plot::write_all(&dir.join(PLOTS_DIR), sweeps, d)?);
    Ok(files)
}
