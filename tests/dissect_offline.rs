//! A dissect folder re-analysed offline gives the facts it recorded: for a simulated run here,
//! and for every real sweep folder committed under tests/fixtures/dissect/.

use std::path::Path;

use gpubench::dissect::backend::{Backend, ChaseRequest, TraceRequest};
use gpubench::dissect::data::{DeviceInfo, Path as SweepPath, Point};
use gpubench::dissect::output::{self, PLOTS_DIR, REPORT_FILE, RESULTS_FILE, SWEEPS_FILE};
use gpubench::dissect::plan::{self, Options};
use gpubench::dissect::sim::{SimConfig, SimGpu};
use gpubench::dissect::{analyze, facts_from_folder, recorded_facts, write_folder};
use gpubench::error::exit;
use gpubench::results::{Fact, ResultsDocument};

fn same_facts(a: &[Fact], b: &[Fact]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} facts vs {}", a.len(), b.len()));
    }
    for (x, y) in a.iter().zip(b) {
        if x.name != y.name || x.value != y.value || x.unit != y.unit || (x.confidence - y.confidence).abs() > 1e-9 {
            return Err(format!("{x:?}\n  differs from\n{y:?}"));
        }
    }
    Ok(())
}

#[test]
fn a_saved_simulated_run_gives_the_same_facts_offline() {
    let mut gpu = SimGpu::new(SimConfig::small("offline"));
    let sweeps = plan::run(&mut gpu, Options::QUICK, 0, None, &mut |_| {}).unwrap();
    let d = analyze(&sweeps);
    let dir = tempfile::tempdir().unwrap();
    let files = write_folder(dir.path(), &sweeps, &d, true).unwrap();
    assert!(files.iter().any(|f| f.ends_with(SWEEPS_FILE)));
    let again = facts_from_folder(dir.path()).unwrap();
    same_facts(&again, &d.facts).unwrap();
    same_facts(&recorded_facts(dir.path()).unwrap(), &d.facts).unwrap();
    let results = ResultsDocument::read(&dir.path().join(RESULTS_FILE)).unwrap();
    same_facts(&results.facts, &d.facts).unwrap();
    assert!(results.benchmarks.iter().any(|b| b.id == "dissect/l1.hit"), "latencies enter the results");
    let report = std::fs::read_to_string(dir.path().join(REPORT_FILE)).unwrap();
    assert!(report.contains("L1 (ld.ca)") && report.contains("l1.size_bytes"), "{report}");
    let plots = std::fs::read_dir(dir.path().join(PLOTS_DIR)).unwrap().count();
    assert!(plots >= 15, "{plots} plots");
    let svg = std::fs::read_to_string(dir.path().join(PLOTS_DIR).join("size_ca.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("16384 B"), "the knee is labelled in the plot");
}

#[test]
fn bad_folders_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let e = output::read_sweeps(dir.path()).unwrap_err();
    assert_eq!(e.exit_code(), exit::USAGE, "{e}");
    std::fs::write(dir.path().join(SWEEPS_FILE), b"{\"schema\": \"gpubench.dissect-sweeps/1\", \"curv").unwrap();
    let e = output::read_sweeps(dir.path()).unwrap_err();
    assert_eq!(e.exit_code(), exit::DATA, "{e}");
    assert!(e.to_string().contains("truncated"), "{e}");
    std::fs::write(dir.path().join(SWEEPS_FILE), b"{\"schema\": \"gpubench.results/1\"}").unwrap();
    assert_eq!(output::read_sweeps(dir.path()).unwrap_err().exit_code(), exit::DATA);
}

/// Every folder under tests/fixtures/dissect/ holds a device run (sweeps.json and the
/// dissect.json written on the device): inferring again here must give the device's facts.
#[test]
fn recorded_device_sweeps_give_the_device_answers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dissect");
    let Ok(entries) = std::fs::read_dir(&root) else {
        println!("no recorded dissect folders under {}", root.display());
        return;
    };
    let mut checked = 0;
    for entry in entries.flatten() {
        let dir = entry.path();
        if !dir.join(SWEEPS_FILE).is_file() {
            continue;
        }
        let ci = facts_from_folder(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let device = recorded_facts(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        if let Err(diff) = same_facts(&ci, &device) {
            panic!("{}: {diff}", dir.display());
        }
        checked += 1;
    }
    println!("{checked} recorded dissect folders give the device's facts");
}

/// A backend whose launches start failing after a while, like a GPU that hits an error.
struct FailingAfter {
    inner: SimGpu,
    left: u32,
}

impl FailingAfter {
    fn tick(&mut self) -> gpubench::Result<()> {
        if self.left == 0 {
            return Err(gpubench::Error::Cuda {
                context: "launching a chase".into(),
                message: "CUDA_ERROR_LAUNCH_FAILED".into(),
            });
        }
        self.left -= 1;
        Ok(())
    }
}

impl Backend for FailingAfter {
    fn device(&self) -> &DeviceInfo {
        self.inner.device()
    }
    fn timer_overhead(&mut self) -> gpubench::Result<f64> {
        self.inner.timer_overhead()
    }
    fn chase(&mut self, req: &ChaseRequest) -> gpubench::Result<Point> {
        self.tick()?;
        self.inner.chase(req)
    }
    fn trace(&mut self, req: &TraceRequest) -> gpubench::Result<Vec<u32>> {
        self.tick()?;
        self.inner.trace(req)
    }
    fn sequence_trace(
        &mut self,
        path: SweepPath,
        footprint: u64,
        offsets: &[u64],
        carveout: Option<u32>,
    ) -> gpubench::Result<Vec<u32>> {
        self.inner.sequence_trace(path, footprint, offsets, carveout)
    }
    fn smem_stride(&mut self, s: u32) -> gpubench::Result<f64> {
        self.inner.smem_stride(s)
    }
    fn const_divergent(&mut self, d: u32) -> gpubench::Result<f64> {
        self.inner.const_divergent(d)
    }
}

#[test]
fn a_failure_midway_keeps_what_was_measured() {
    let mut gpu = FailingAfter { inner: SimGpu::new(SimConfig::small("failing")), left: 60 };
    let out = plan::run_all(&mut gpu, Options::QUICK, 0, None, &mut |_| {});
    let e = out.error.expect("the run stops");
    assert_eq!(e.exit_code(), exit::BENCH_FAILURE);
    assert!(out.sweeps.curve("stride/ca").is_some(), "finished sweeps are kept");
    let d = analyze(&out.sweeps);
    assert!(d.number("l1.fetch_bytes").is_some());
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), &out.sweeps, &d, true).unwrap();
    assert_eq!(facts_from_folder(dir.path()).unwrap(), d.facts);
}
