//! A dissect folder re-analysed offline gives the facts it recorded: for a simulated run here,
//! and for every real sweep folder committed under tests/fixtures/dissect/.

use std::path::Path;

use gpubench::dissect::backend::{Backend, ChaseRequest, TraceRequest};
use gpubench::dissect::data::{DeviceInfo, Histogram, Path as SweepPath, Point};
use gpubench::dissect::launch;
use gpubench::dissect::output::{self, PLOTS_DIR, REPORT_FILE, RESULTS_FILE, SWEEPS_FILE};
use gpubench::dissect::plan::{self, Options};
use gpubench::dissect::sim::{SimConfig, SimGpu};
use gpubench::dissect::{analyze, facts_from_folder, recorded_facts, write_folder};
use gpubench::error::exit;
use gpubench::results::FactValue;
use gpubench::results::{Fact, ResultsDocument};

/// The same facts, confidences equal to a part in 10^6 (sweeps are stored to 7 significant digits).
fn same_facts(a: &[Fact], b: &[Fact]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} facts vs {}", a.len(), b.len()));
    }
    for (x, y) in a.iter().zip(b) {
        if x.name != y.name || x.value != y.value || x.unit != y.unit || (x.confidence - y.confidence).abs() > 1e-6 {
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
    assert!(svg.starts_with("<svg") && svg.contains("\n16 KiB\n"), "the knee is labelled in the plot");
}

/// Input check of the offline path: a saved line trace whose step (4 B) is finer than the fetch
/// granularity (32 B) shows a miss on the first access to every sector and hits on the rest,
/// whatever the line; `dissect --from` must not read a 4 B line from it.
#[test]
fn a_trace_finer_than_the_fetch_granularity_is_refused_offline() {
    let mut gpu = SimGpu::new(SimConfig::small("fine trace"));
    let mut sweeps = plan::run(&mut gpu, Options::QUICK, 0, None, &mut |_| {}).unwrap();
    assert_eq!(analyze(&sweeps).number("l1.line_bytes"), Some(128.0), "the planted line, as recorded");
    let mut changed = 0;
    for t in sweeps.traces.iter_mut().filter(|t| t.id.starts_with("line/ca/")) {
        t.stride_bytes = 4;
        let lap = t.footprint_bytes / 4;
        t.latencies = (0..3 * lap).map(|i| if i % 8 == 0 { 400 } else { 40 }).collect();
        changed += 1;
    }
    assert!(changed > 0, "the run has line traces");
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), &sweeps, &analyze(&sweeps), true).unwrap();
    let facts = facts_from_folder(dir.path()).unwrap();
    let line = facts.iter().find(|f| f.name == "l1.line_bytes").expect("the fact says why");
    assert_eq!(line.value, gpubench::results::FactValue::Text("unknown".into()), "{line:?}");
    assert_eq!(line.confidence, 0.0);
    assert!(line.method.contains("finer than the 32 B fetch granularity"), "{}", line.method);
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

/// Every folder under tests/fixtures/dissect/ holds a device run (sweeps.json, or
/// sweeps.json.gz, and its dissect.json, re-written whenever the inference changes): inferring
/// again here must give the recorded facts.
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
        if output::sweeps_file(&dir).is_none() {
            continue;
        }
        let ci = facts_from_folder(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let device = recorded_facts(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        if let Err(diff) = same_facts(&ci, &device) {
            panic!("{}: {diff}", dir.display());
        }
        checked += 1;
    }
    assert!(checked >= 3, "{checked} recorded dissect folders");
    println!("{checked} recorded dissect folders give the device's facts");
}

/// The first H200 run (driver 580, CUDA 13.0) against NVIDIA's published Hopper figures and the
/// `latency` family's measurements on the same GPU model. These figures live here, never in the
/// inference. Published: 32-byte sectors in 128-byte L1 lines, 256 KiB of L1 and shared memory
/// per SM with up to 228 KiB shared (so 28 KiB of L1 at the largest carveout), a 60 MiB L2 in
/// two partitions. The `latency` family: L2 hits about 287 cycles up to 16 MiB, about 670 at
/// 64 MiB and beyond.
#[test]
fn the_first_h200_run_agrees_with_published_hopper_figures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dissect/h200-run1");
    let sweeps = output::read_sweeps(&dir).unwrap();
    let d = analyze(&sweeps);
    let kib = 1024.0;
    let mib = 1024.0 * kib;
    for p in ["l1", "ro", "tex"] {
        assert_eq!(d.number(&format!("{p}.fetch_bytes")), Some(32.0), "{p}: 32-byte sectors");
    }
    // That run left the driver's carveout: its L1 was the smallest, below 28 KiB.
    let l1 = d.number("l1.size_bytes").unwrap();
    assert!(l1 <= 28.0 * kib && l1 >= 16.0 * kib, "{l1}");
    assert!(d.number("l1.carveout_100.size_bytes").unwrap() <= 28.0 * kib);
    let most = d.number("l1.carveout_0.size_bytes").unwrap();
    assert!(most <= 256.0 * kib && most >= 192.0 * kib, "{most}");
    // Its traces showed no miss at all: no line, sets or ways may be read from them.
    for f in ["l1.line_bytes", "l1.sets", "l1.ways", "l1.set_mapping", "l1.replacement"] {
        assert!(d.fact(f).is_none(), "{f}: {:?}", d.fact(f));
    }
    // The L2: the near partition as one SM sees it, the far one, the whole; none beyond 60 MiB,
    // the near one no more than half. The sweep brackets both steps coarsely (27-32 MiB,
    // 54-64 MiB): the facts say so by their confidence.
    let near = d.number("l2.near.size_bytes").unwrap();
    let far = d.number("l2.far.size_bytes").unwrap();
    let whole = d.number("l2.size_bytes").unwrap();
    assert!(near <= 30.0 * mib && near >= 20.0 * mib, "{near}");
    assert!(far <= 30.0 * mib && far >= 20.0 * mib, "{far}");
    assert!(whole <= 60.0 * mib && whole >= 1.5 * near, "{whole}");
    for f in ["l2.near.size_bytes", "l2.far.size_bytes", "l2.size_bytes"] {
        assert!(d.fact(f).unwrap().confidence < 0.5, "{f}: a 19 % bracket is not sure");
    }
    let median = |name: &str| {
        let mut v = d.latencies.iter().find(|l| l.name == name).unwrap().samples.clone();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (near_hit, far_hit, dram) = (median("l2.near.hit"), median("l2.far.hit"), median("dram"));
    assert!(near_hit > 250.0 && near_hit < 300.0, "{near_hit}");
    assert!(far_hit > near_hit + 100.0 && far_hit < dram, "{far_hit}");
    assert!(dram > 600.0 && dram < 750.0, "{dram}");
    assert_eq!(d.number("l2.fetch_bytes"), Some(64.0), "the L2 fetches two sectors from DRAM");
    assert_eq!(d.number("l2.cold_miss_bytes"), Some(64.0));
}

/// The two H200 runs (two cards, one driver, earlier plan versions): every L2 fact means the
/// same in both (near 29 MiB, far 28 MiB, whole 56 MiB from steps the sweeps bracket only at
/// 27-32 and 54-64 MiB, all below 0.8); both see 16 first-level TLB entries and neither claims
/// the page size; divergent constant reads are serialized (+11 cycles per extra address, as the
/// constant_memory family's 31.5x throughput slowdown says).
#[test]
fn the_two_h200_runs_agree_on_the_l2_tlb_and_constant_facts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dissect");
    let runs: Vec<_> =
        ["h200-run1", "h200-run2"].iter().map(|r| analyze(&output::read_sweeps(&root.join(r)).unwrap())).collect();
    let mib = (1u64 << 20) as f64;
    for f in ["l2.near.size_bytes", "l2.far.size_bytes", "l2.size_bytes", "tlb.page_bytes", "tlb.l1.entries"] {
        let (a, b) = (runs[0].fact(f).unwrap(), runs[1].fact(f).unwrap());
        assert_eq!(a.value, b.value, "{f}: {a:?} vs {b:?}");
    }
    assert_eq!(runs[0].number("l2.near.size_bytes"), Some(29.0 * mib));
    assert_eq!(runs[0].number("l2.size_bytes"), Some(56.0 * mib));
    for d in &runs {
        assert_eq!(d.text("tlb.page_bytes"), Some("unknown"), "{:?}", d.fact("tlb.page_bytes"));
        assert_eq!(d.number("tlb.l1.entries"), Some(16.0));
        for f in ["tlb.unit_bytes", "tlb.l1.reach_bytes"] {
            assert!(d.fact(f).unwrap().confidence < 0.8, "{f}: {:?}", d.fact(f));
        }
    }
    // The second run's plan had a stride (8 MiB) below the 16 MiB unit; the first's did not
    // show one: it bounds the unit only.
    assert_eq!(runs[1].number("tlb.unit_bytes"), Some(16.0 * mib));
    let c = runs[1].fact("const.divergent_access").unwrap();
    assert_eq!(runs[1].text("const.divergent_access"), Some("serialized"), "{c:?}");
    assert!(c.confidence >= 0.95 && c.method.contains("+11.0 cycles per extra address"), "{c:?}");
}

/// The first H100 run of `results/nvidia-h100-80gb-hbm3-cc90-132sm-79gib/dissect/` (card
/// GPU-6d44c635, driver 580, CUDA 13.0; sweeps gzipped) against published figures. These live
/// here, never in the inference. NVIDIA (CUDA C++ Programming Guide, compute capability 9.0;
/// Hopper Tuning Guide): 128-byte L1 lines of 32-byte sectors, 256 KB of L1 and shared memory
/// per SM with up to 228 KB shared, 32 banks of 4 bytes, 64 KB of constant memory, a 50 MB L2
/// on H100 SXM5 (the device reports 50 MiB), in two partitions. The `latency` family on this
/// part: L2 hits about 286 cycles, DRAM about 690.
#[test]
fn the_h100_run_agrees_with_published_hopper_figures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dissect/h100-run1");
    let d = analyze(&output::read_sweeps(&dir).unwrap());
    let kib = 1024.0;
    let mib = 1024.0 * kib;
    let sure = |f: &str| {
        let fact = d.fact(f).unwrap_or_else(|| panic!("{f} missing"));
        assert!(fact.confidence >= 0.8, "{f}: {fact:?}");
        match fact.value {
            FactValue::Number(v) => v,
            FactValue::Text(_) => panic!("{f}: {fact:?}"),
        }
    };
    for p in ["l1", "ro", "tex"] {
        assert_eq!(sure(&format!("{p}.fetch_bytes")), 32.0, "{p}: 32-byte sectors");
        assert_eq!(sure(&format!("{p}.line_bytes")), 128.0, "{p}: 128-byte lines");
    }
    // The L1 at carveout 0: below the 256 KB array, above what 228 KB of shared memory leaves.
    // Its first miss is no sure capacity: the traces find the sets hashed (they fill unevenly,
    // the first miss comes before the array is full) and the sweep brackets it only within 23
    // steps. The texture path's first miss (240 KiB) is as unsure.
    let l1 = d.number("l1.size_bytes").unwrap();
    assert!(l1 < 256.0 * kib && l1 > 28.0 * kib, "{l1}");
    assert_eq!(d.number("ro.size_bytes"), Some(l1), "ld.nc reads the same array");
    for f in ["l1.size_bytes", "ro.size_bytes", "tex.size_bytes", "l1.carveout_0.size_bytes"] {
        let fact = d.fact(f).unwrap();
        assert!(fact.confidence < 0.8, "{f}: {fact:?}");
    }
    assert!(d.fact("l1.size_bytes").unwrap().method.contains("hashed sets"), "{:?}", d.fact("l1.size_bytes"));
    assert_eq!(sure("smem.banks"), 32.0);
    assert_eq!(sure("smem.bank_bytes"), 4.0);
    assert!(sure("const.l1.size_bytes") <= 64.0 * kib);
    assert_eq!(d.text("const.divergent_access"), Some("serialized"));
    // The L2: whole no larger than the 50 MiB the device reports, near and far about half each.
    let whole = d.number("l2.size_bytes").unwrap();
    let (near, far) = (d.number("l2.near.size_bytes").unwrap(), d.number("l2.far.size_bytes").unwrap());
    assert!(whole <= 50.0 * mib && whole >= 45.0 * mib, "{whole}");
    for half in [near, far] {
        assert!(half >= 0.4 * whole && half <= 0.6 * whole, "{half} of {whole}");
    }
    assert_eq!(sure("l2.fetch_bytes"), 64.0);
    assert_eq!(d.text("l2.prefetch"), Some("no"));
    let median = |name: &str| {
        let mut v = d.latencies.iter().find(|l| l.name == name).unwrap().samples.clone();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    // dissect times the load alone (11-15 cycles below the latency family's chase).
    let (near_hit, far_hit, dram) = (median("l2.near.hit"), median("l2.far.hit"), median("dram"));
    assert!(near_hit > 250.0 && near_hit < 290.0, "{near_hit}");
    assert!(far_hit > near_hit + 100.0 && far_hit < dram, "{far_hit}");
    assert!(dram > 640.0 && dram < 720.0, "{dram}");
    // TLB: 16 first-level entries; the page size is not a latency fact.
    assert_eq!(sure("tlb.l1.entries"), 16.0);
    assert_eq!(d.text("tlb.page_bytes"), Some("unknown"));
    assert_eq!(d.number("tlb.unit_bytes"), Some(16.0 * mib));
}

/// The same facts, at confidence >= 0.8, on the H100 fixture and the second H200 fixture: one
/// architecture (cc 9.0), two L2 sizes. Everything but the L2's size is the same. (The L1-path
/// capacities are not among them: hashed sets and brackets of many sweep steps leave them
/// below 0.8 on both.)
#[test]
fn h100_and_h200_agree_on_every_confident_fact_but_the_l2_size() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dissect");
    let h100 = analyze(&output::read_sweeps(&root.join("h100-run1")).unwrap());
    let h200 = analyze(&output::read_sweeps(&root.join("h200-run2")).unwrap());
    let mut compared = 0;
    for a in
        h100.facts.iter().filter(|f| f.confidence >= 0.8 && !f.name.starts_with("l2.") || f.name == "tlb.page_bytes")
    {
        let b = h200.fact(&a.name).unwrap_or_else(|| panic!("{} missing on the H200", a.name));
        assert_eq!(a.value, b.value, "{}: {a:?} vs {b:?}", a.name);
        compared += 1;
    }
    assert!(compared >= 19, "{compared}");
}

/// Answers every request of the plan without simulating caches, after building and checking
/// the launches the GPU would make: a plan sized from a real device stays inside every kernel's
/// bounds.
struct Launches {
    device: DeviceInfo,
    checked: usize,
    checked_on_sm: usize,
}

impl Backend for Launches {
    fn device(&self) -> &DeviceInfo {
        &self.device
    }
    fn timer_overhead(&mut self) -> gpubench::Result<f64> {
        launch::check(&self.device, &launch::timer(256, 8192))?;
        Ok(15.0)
    }
    fn chase(&mut self, req: &ChaseRequest) -> gpubench::Result<Point> {
        let l = launch::chase(&self.device, req, 1)?;
        self.checked += 1 + l.init.iter().count();
        // Hits below one capacity, misses beyond, and an L2 step at 32 MiB: every stage that
        // follows knees runs.
        let lat = match req.footprint {
            f if f <= 64 << 10 => 40,
            f if f <= 32 << 20 || req.path != SweepPath::Cg => 300,
            _ => 700,
        };
        let hist = Histogram::of_latencies(2, &vec![lat; req.steps as usize]);
        Ok(Point { x: req.footprint, steps: req.steps, mean_cycles: lat as f64, hist })
    }
    fn chase_on_sm(&mut self, req: &ChaseRequest, sm: u32, start: u64) -> gpubench::Result<Option<Point>> {
        let slots = launch::fixed_capacity(&self.device, launch::Buf::Claims).unwrap() as u32;
        let on = launch::OnSm { sm, start, slots, launch: sm + 1, cold: req.warm_steps == 0 };
        launch::chase_on_sm(&self.device, req, on)?;
        self.checked_on_sm += 1;
        self.chase(req).map(Some)
    }
    fn trace(&mut self, req: &TraceRequest) -> gpubench::Result<Vec<u32>> {
        let l = launch::trace(&self.device, req, 1)?;
        self.checked += 2 + l.flush.iter().count();
        let lap = req.footprint / req.stride;
        Ok((0..req.steps).map(|i| if req.footprint > 64 << 10 && i % lap == 0 { 300 } else { 40 }).collect())
    }
    fn sequence_trace(
        &mut self,
        path: SweepPath,
        footprint: u64,
        offsets: &[u64],
        carveout: Option<u32>,
    ) -> gpubench::Result<Vec<u32>> {
        launch::sequence(&self.device, path, footprint, offsets, carveout, 1)?;
        self.checked += 1;
        Ok(vec![300; offsets.len()])
    }
    fn smem_stride(&mut self, s: u32) -> gpubench::Result<f64> {
        launch::smem_chase(&self.device, s, 1024)?;
        self.checked += 1;
        Ok(29.0)
    }
    fn const_divergent(&mut self, d: u32) -> gpubench::Result<f64> {
        launch::const_divergent(&self.device, d, 1024)?;
        self.checked += 1;
        Ok(20.0 * d as f64)
    }
}

#[test]
fn the_plan_for_an_h200_stays_inside_every_kernels_bounds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dissect/h200-run1");
    let mut device = output::read_sweeps(&dir).unwrap().device;
    device.max_texture_elements = Some(1 << 27);
    let mut b = Launches { device, checked: 0, checked_on_sm: 0 };
    let sweeps = plan::run(&mut b, Options::DEFAULT, 0, None, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    assert!(b.checked > 1000, "{} launches", b.checked);
    assert!(b.checked_on_sm >= 132, "{} one-SM chases: every SM of the H200 at least once", b.checked_on_sm);
    assert!(!sweeps.banks.is_empty() && !sweeps.const_divergence.is_empty(), "every stage ran");
    let tlb = sweeps.curves.iter().filter(|c| c.id.starts_with("tlb/")).count();
    assert!(tlb >= 10, "{tlb} TLB strides");
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
    fn chase_on_sm(&mut self, req: &ChaseRequest, sm: u32, start: u64) -> gpubench::Result<Option<Point>> {
        self.tick()?;
        self.inner.chase_on_sm(req, sm, start)
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

/// The dissect.json of three runs on each of two cards of a class, from a recorded tarball.
fn recorded_dissections(name: &str) -> Vec<serde_json::Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recorded").join(name);
    let mut archive = tar::Archive::new(xz2::read::XzDecoder::new(std::fs::File::open(path).unwrap()));
    let mut runs: Vec<serde_json::Value> = Vec::new();
    for entry in archive.entries().unwrap() {
        let entry = entry.unwrap();
        if entry.path().unwrap().to_string_lossy().ends_with(".dissect.json") {
            runs.push(serde_json::from_reader(entry).unwrap());
        }
    }
    runs
}

/// Every fact stated at confidence 0.8 or more in any of `runs` has the same value in all of
/// them (a run may state it less surely); the L2 size is within 2 % of the device's figure or
/// below 0.8. Returns how many facts every run states at 0.8 or more.
fn assert_confident_facts_agree(runs: &[serde_json::Value]) -> usize {
    let facts = |run: &serde_json::Value| -> std::collections::BTreeMap<String, (String, f64)> {
        run["dissection"]["facts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (f["name"].as_str().unwrap().to_string(), (f["value"].to_string(), f["confidence"].as_f64().unwrap()))
            })
            .collect()
    };
    let all: Vec<_> = runs.iter().map(facts).collect();
    let confident: std::collections::BTreeSet<&String> =
        all.iter().flat_map(|f| f.iter().filter(|(_, (_, c))| *c >= 0.8).map(|(n, _)| n)).collect();
    for name in &confident {
        let values: Vec<Option<&(String, f64)>> = all.iter().map(|f| f.get(*name)).collect();
        let first = values[0].map(|v| &v.0);
        for v in &values {
            let (value, _) = v.unwrap_or_else(|| panic!("{name} missing in a run"));
            assert!(Some(value) == first, "{name}: {values:?}");
        }
    }
    for (run, f) in runs.iter().zip(&all) {
        let device = run["gpu"]["l2_bytes"].as_f64().unwrap();
        let (value, c) = &f["l2.size_bytes"];
        let value: f64 = value.parse().unwrap();
        assert!(*c < 0.8 || (value / device - 1.0).abs() <= 0.02, "L2 {value} at {c} vs {device}");
    }
    confident.iter().filter(|n| all.iter().all(|f| f[n.as_str()].1 >= 0.8)).count()
}

/// Three dissect runs on each of two H100 cards (GPU-05e4954b, GPU-875e8a51, driver 580.159.04;
/// `tests/fixtures/recorded/h100-dissect-two-cards.tar.xz`, the dissect.json of each run) agree
/// on every confident fact.
#[test]
fn six_runs_on_two_h100_cards_agree_on_every_confident_fact() {
    let runs = recorded_dissections("h100-dissect-two-cards.tar.xz");
    assert_eq!(runs.len(), 6);
    let confident = assert_confident_facts_agree(&runs);
    assert!(confident >= 15, "{confident} confident facts");
}

/// Dissect runs on four H200 cards (driver 580.159.04; `tests/fixtures/recorded/
/// h200-dissect-four-cards.tar.xz`): three on each of GPU-593c8a57 and GPU-1670f322, one on each
/// of GPU-6502e095 and GPU-97e86e21. Every confident fact has one value on every card; the
/// first-level TLB's 16 entries read 0.95 on the first two cards and 0.63-0.71 on the others.
#[test]
fn h200_runs_on_four_cards_agree_on_every_confident_fact() {
    let runs = recorded_dissections("h200-dissect-four-cards.tar.xz");
    assert_eq!(runs.len(), 8);
    let cards: std::collections::BTreeSet<&str> = runs.iter().map(|r| r["gpu"]["uuid"].as_str().unwrap()).collect();
    assert_eq!(cards.len(), 4, "{cards:?}");
    let confident = assert_confident_facts_agree(&runs);
    assert!(confident >= 15, "{confident} facts confident in every run");
}
