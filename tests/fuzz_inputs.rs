//! Value-level fuzzing of the files gpubench reads: >= 10,000 mutations of a results file and
//! of a baseline file (numbers made huge, tiny, negative, zero or of another type, strings
//! emptied or changed, arrays emptied or cut, fields removed) fed in-process to what
//! `compare`, `report` and `baseline save` do. The bar: no panic, no hang, and no baseline
//! written that cannot be read back.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gpubench::baseline::{Baseline, BaselineKey, RunsFile, SaveMode, Store};
use gpubench::report::{TableOptions, comparison_json, junit, markdown, summary_table, verdict_report};
use gpubench::results::{ForeignProcess, ResultsDocument, SampleTelemetry};
use gpubench::verdict::{Rule, Side, compare};
use serde_json::Value;

/// A small deterministic generator (xorshift64*), so that a failure can be replayed.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The quick H200 run cut to two benchmarks (a latency with two metrics, a bandwidth with
/// per-sample telemetry that names a foreign process), so that every kind of field is there to
/// mutate while each mutant stays quick to judge.
fn seed_run() -> ResultsDocument {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-quick-run.json");
    let mut doc = ResultsDocument::read(&path).unwrap();
    let keep = ["latency/cg/256MiB", "stream/copy"];
    let mut benchmarks: Vec<_> = doc.benchmarks.iter().filter(|b| keep.contains(&b.id.as_str())).cloned().collect();
    let b = &mut benchmarks[1];
    b.telemetry = (0..b.metrics[0].samples.len())
        .map(|i| SampleTelemetry {
            sm_mhz: Some(1980.0),
            mem_mhz: Some(3201.0),
            power_w: Some(400.0),
            readings: 3,
            throttled: i == 3,
            slowdown: if i == 3 { vec!["sw_power_cap".into()] } else { Vec::new() },
            foreign_processes: if i == 5 {
                vec![ForeignProcess {
                    pid: 7,
                    name: Some("x".into()),
                    used_mib: Some(1.0),
                    sm_util_pct: Some(3),
                    note: None,
                }]
            } else {
                Vec::new()
            },
            ..Default::default()
        })
        .collect();
    doc.benchmarks = benchmarks;
    doc
}

/// Paths (JSON pointers) of every value in `v`.
fn pointers(v: &Value, here: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                pointers(x, format!("{here}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{here}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(here);
}

const NUMBERS: &[f64] =
    &[0.0, -0.0, -1.0, 1.0, 0.5, 1e-320, 1e-9, 1e9, 1e154, 1e155, -1e155, 1e300, f64::MAX, f64::MIN];

/// One value-level change at `at`.
fn mutate(doc: &mut Value, at: &str, g: &mut Gen) {
    if at.is_empty() {
        return;
    }
    let (parent_ptr, key) = at.rsplit_once('/').unwrap();
    let choice = g.below(10);
    if choice == 0 {
        // remove the field or element
        match doc.pointer_mut(parent_ptr) {
            Some(Value::Object(m)) => {
                m.remove(&key.replace("~1", "/").replace("~0", "~"));
            }
            Some(Value::Array(a)) => {
                if let Ok(i) = key.parse::<usize>()
                    && i < a.len()
                {
                    a.remove(i);
                }
            }
            _ => {}
        }
        return;
    }
    let Some(v) = doc.pointer_mut(at) else { return };
    *v = match (v.clone(), choice) {
        (Value::Number(n), 1..=5) => {
            let x = n.as_f64().unwrap_or(0.0);
            match g.below(6) {
                0 => serde_json::json!(NUMBERS[g.below(NUMBERS.len())]),
                1 => serde_json::json!(x * [1e10, 1e-10, -1.0, 1.0000001, 0.5][g.below(5)]),
                2 => serde_json::json!([u64::MAX, 1u64 << 61, 100_000_000_000, 1_000_000, 0][g.below(5)]),
                3 => serde_json::json!(-(g.below(1000) as i64) - 1),
                4 => serde_json::json!((x.round() as i64).saturating_add(1)),
                _ => serde_json::json!(x + 1.0),
            }
        }
        (Value::String(s), 1..=5) => match g.below(5) {
            0 => Value::String(String::new()),
            1 => Value::String(format!("{s}{s}")),
            2 => Value::String("gpubench.baseline/1".into()),
            3 => Value::String("(".into()),
            _ => Value::String(s.chars().rev().collect()),
        },
        (Value::Array(mut a), 1..=5) => {
            match g.below(3) {
                0 => a.clear(),
                1 => a.truncate(a.len() / 2),
                _ => {
                    if let Some(x) = a.first().cloned() {
                        a.push(x);
                    }
                }
            }
            Value::Array(a)
        }
        (Value::Bool(b), 1..=5) => Value::Bool(!b),
        (_, 6) => Value::Null,
        (_, 7) => serde_json::json!("text"),
        (_, 8) => serde_json::json!(1e200),
        (v, _) => match v {
            Value::Object(_) => serde_json::json!({}),
            _ => serde_json::json!([]),
        },
    };
}

/// What the commands do with one input file, in-process. Returns whether the file was
/// accepted as input and whether a baseline was written (it has then been read back).
fn exercise(file: &Path, good: &[ResultsDocument], store: &Store, rule: &Rule, append: bool) -> (bool, bool) {
    let Ok(runs) = RunsFile::read(file) else { return (false, false) };
    let runs = runs.into_runs();
    // report (the summary table of each run)
    for r in &runs {
        let _ = summary_table(r);
    }
    // compare in both directions, every report format
    for (old, new) in [(good, &runs[..]), (&runs[..], good)] {
        if let Ok(c) = compare(Side::of("old", old), Side::of("new", new), rule) {
            let _ = verdict_report(&c, TableOptions { color: false, all: true });
            let _ = (markdown(&c), junit(&c), comparison_json(&c), c.exit_code());
        }
    }
    // baseline save (and --append onto what the store holds)
    let Some(first) = runs.first() else { return (true, false) };
    let Ok(key) = BaselineKey::for_gpu(&first.gpu, Some("fuzz"), false) else { return (true, false) };
    let mode = if append { SaveMode::Append { max_runs: 3 } } else { SaveMode::Replace };
    match store.save(&key, runs, mode, 1) {
        Ok((path, _)) => {
            Baseline::read(&path).unwrap_or_else(|e| panic!("a saved baseline does not read back: {e}"));
            if let Ok(b) = Baseline::read(&path) {
                let _ = gpubench::report::baseline_report(&b, "fuzz", rule, true);
            }
            (true, true)
        }
        Err(e) => {
            if std::env::var_os("FUZZ_VERBOSE").is_some() {
                eprintln!("not saved: {e}");
            }
            (true, false)
        }
    }
}

fn fuzz(seed_doc: Value, mutants: usize, seed: u64, dir: &Path, good: &[ResultsDocument]) -> (usize, usize, usize) {
    let rule = Rule::default();
    let mut all = Vec::new();
    pointers(&seed_doc, String::new(), &mut all);
    let mut g = Gen(seed);
    let file: PathBuf = dir.join("input.json");
    let store = Store::new(dir.join("baselines"));
    let (mut panics, mut accepted, mut saved) = (0, 0, 0);
    for i in 0..mutants {
        let mut doc = seed_doc.clone();
        for _ in 0..1 + g.below(3) {
            let at = all[g.below(all.len())].clone();
            mutate(&mut doc, &at, &mut g);
        }
        std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
        let started = Instant::now();
        match catch_unwind(AssertUnwindSafe(|| exercise(&file, good, &store, &rule, i % 4 == 3))) {
            Ok((read, wrote)) => {
                accepted += read as usize;
                saved += wrote as usize;
            }
            Err(_) => {
                panics += 1;
                let keep = dir.join(format!("panic-{seed}-{i}.json"));
                let _ = std::fs::copy(&file, &keep);
                eprintln!("mutant {i} (seed {seed}) panicked; kept as {}", keep.display());
            }
        }
        assert!(started.elapsed() < Duration::from_secs(10), "mutant {i} (seed {seed}) took {:?}", started.elapsed());
    }
    (panics, accepted, saved)
}

#[test]
fn ten_thousand_mutated_results_and_baselines_neither_panic_hang_nor_poison_a_baseline() {
    // On a RAM-backed folder where there is one: each save syncs its file to disk.
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let run = seed_run();
    let good = vec![run.clone()];
    let started = Instant::now();
    let results_seed = serde_json::to_value(&run).unwrap();
    let (p1, a1, s1) = fuzz(results_seed, 6000, 0x9e37_79b9_7f4a_7c15, dir.path(), &good);

    let key = BaselineKey::for_gpu(&run.gpu, Some("seed"), false).unwrap();
    let seed_store = Store::new(dir.path().join("seed"));
    let (_, baseline) = seed_store.save(&key, vec![run.clone(), run.clone()], SaveMode::Replace, 1).unwrap();
    let baseline_seed = serde_json::to_value(&baseline).unwrap();
    let (p2, a2, s2) = fuzz(baseline_seed, 4000, 0xd1b5_4a32_d192_ed03, dir.path(), &good);

    println!(
        "results: 6000 mutants, {a1} accepted, {s1} saved; baselines: 4000 mutants, {a2} accepted, {s2} saved; {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(p1 + p2, 0, "mutants panicked (kept in {})", dir.keep().display());
    // The mutations must reach the checks and the verdicts, not only the JSON parser.
    assert!(a1 > 300 && a2 > 200, "too few mutants were accepted as input: {a1}, {a2}");
    assert!(s1 > 100 && s2 > 100, "too few mutants were saved: {s1}, {s2}");
}

// ---------------------------------------------------------------------------------------------
// Byte-level fuzzing of every reader of files: deterministic mutations of the committed
// fixtures (truncations, bit flips, huge numbers, NaN and Infinity spelled out, gzip and
// archive wrappers, links and pipes) through what `fleet`, `history import`, `calibrate`,
// `compare` / `report` / `baseline save`, `baseline show` / `quarantine`, `chipmap` and
// `dissect --from` read. Each case runs in a thread that must end within 10 s without a panic.

/// A `.tar.gz` holding `members` (name, bytes).
fn tar_gz(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, bytes) in members {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name, *bytes).unwrap();
    }
    gpubench::results::gzipped(&b.into_inner().unwrap())
}

/// One byte-level mutation of `bytes`.
fn mutate_bytes(bytes: &[u8], g: &mut Gen) -> Vec<u8> {
    let mut b = bytes.to_vec();
    if b.is_empty() {
        return b;
    }
    match g.below(8) {
        0 => {
            b.truncate(g.below(b.len()));
            b
        }
        1 => {
            for _ in 0..1 + g.below(8) {
                let i = g.below(b.len());
                b[i] ^= 1 << g.below(8);
            }
            b
        }
        2 | 3 => {
            // A number replaced by something huge, tiny, negative or not a number.
            const SUBST: &[&str] = &[
                "1e308",
                "-1e308",
                "1e400",
                "1.7976931348623157e308",
                "99999999999999999999999",
                "-0",
                "0",
                "NaN",
                "\"NaN\"",
                "Infinity",
                "-Infinity",
                "null",
                "1e-400",
                "18446744073709551616",
            ];
            let Ok(text) = String::from_utf8(b.clone()) else { return b };
            let starts: Vec<usize> = text
                .char_indices()
                .filter(|&(i, c)| {
                    c.is_ascii_digit() && i > 0 && matches!(text.as_bytes()[i - 1], b':' | b'[' | b',' | b' ')
                })
                .map(|(i, _)| i)
                .collect();
            if starts.is_empty() {
                return b;
            }
            let mut out = text.clone();
            for _ in 0..1 + g.below(4) {
                let at = starts[g.below(starts.len())];
                if at >= out.len() || !out.is_char_boundary(at) || !out.as_bytes()[at].is_ascii_digit() {
                    continue;
                }
                let end = out[at..]
                    .find(|c: char| !(c.is_ascii_digit() || ".eE+-".contains(c)))
                    .map_or(out.len(), |e| at + e);
                out.replace_range(at..end, SUBST[g.below(SUBST.len())]);
            }
            out.into_bytes()
        }
        4 => {
            // A slice of the document repeated (deep or long structures).
            let i = g.below(b.len());
            let j = (i + g.below(64)).min(b.len());
            let piece = b[i..j].to_vec();
            for _ in 0..g.below(200) {
                b.splice(i..i, piece.iter().copied());
            }
            b
        }
        5 => {
            let i = g.below(b.len());
            b.insert(i, [b'\0', b'\n', 0x07, b'"', b'\\', 0xff][g.below(6)]);
            b
        }
        6 => gpubench::results::gzipped(&b),
        _ => {
            let gz = gpubench::results::gzipped(&b);
            let mut gz = gz;
            let i = 10 + g.below(gz.len().saturating_sub(10).max(1));
            if i < gz.len() {
                gz[i] ^= 0x40;
            }
            gz
        }
    }
}

/// Runs `f` in a thread; fails when it panics or takes more than 10 s.
fn bounded(what: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = catch_unwind(AssertUnwindSafe(f));
        let _ = tx.send(r.is_ok());
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(true) => {}
        Ok(false) => panic!("{what} panicked"),
        Err(_) => panic!("{what} did not finish within 10 s"),
    }
}

/// Every file reader, on `path` (a file or a folder).
fn every_reader(path: &Path) {
    let p = path.to_path_buf();
    let one = std::slice::from_ref(&p);
    let _ = gpubench::fleet::load(one);
    let _ = gpubench::history::import::collect(one);
    let _ = gpubench::results::scan::runs(one);
    if let Ok(f) = RunsFile::read(&p) {
        for r in f.runs() {
            let _ = summary_table(r);
            let _ = gpubench::report::chipmap::summaries(r, None, 3.0);
        }
    }
    let _ = gpubench::results::read_document(&p).map(|b| Baseline::parse(&p, &b));
    let _ = ResultsDocument::read(&p);
    let _ = gpubench::results::json_members(&p);
    let _ = gpubench::dissect::read_sweeps(&p);
    let _ = gpubench::fleet::load(one).map(|l| {
        let rep = gpubench::fleet::analyse(&l, &gpubench::fleet::FleetRule::default());
        let _ = (gpubench::fleet::report::drain_commands(&rep), gpubench::report::junit::fleet(&rep));
    });
}

#[test]
fn every_file_reader_survives_mutated_piped_and_linked_inputs() {
    let started = Instant::now();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let quick = std::fs::read(root.join("h200-quick-run.json")).unwrap();
    let sweeps = std::fs::read(root.join("dissect/h200-run1/sweeps.json.gz")).unwrap();
    let node = br#"{"schema":"gpubench.node/1","host":"node1","exit_code":3,"reason":"no GPU"}"#.to_vec();
    let run = seed_run();
    let store_dir = tempfile::tempdir().unwrap();
    let key = BaselineKey::for_gpu(&run.gpu, Some("seed"), false).unwrap();
    let (bpath, _) = Store::new(store_dir.path()).save(&key, vec![run], SaveMode::Replace, 1).unwrap();
    let baseline = std::fs::read(bpath).unwrap();
    let seeds: Vec<(&str, Vec<u8>)> = vec![
        ("results.json", quick.clone()),
        ("baseline.json", baseline),
        ("node.json", node),
        ("sweeps.json.gz", sweeps),
        ("runs.tar.gz", tar_gz(&[("runs/r.json", &quick)])),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut g = Gen(0x5851_f42d_4c95_7f2d);
    let mut cases = 0;
    for round in 0..40 {
        for (name, bytes) in &seeds {
            let case = dir.path().join(format!("c{round}-{cases}"));
            std::fs::create_dir_all(case.join("node1")).unwrap();
            let file = case.join("node1").join(name);
            std::fs::write(&file, mutate_bytes(bytes, &mut g)).unwrap();
            // A dissect folder for read_sweeps, an archive member for the walkers.
            if name.ends_with(".json") && g.below(3) == 0 {
                let member = std::fs::read(&file).unwrap();
                std::fs::write(case.join("wrapped.tar.gz"), tar_gz(&[("m.json", &member)])).unwrap();
            }
            let (f, c) = (file.clone(), case.clone());
            bounded(&format!("{} (case {})", f.display(), cases), move || {
                every_reader(&f);
                every_reader(&c);
            });
            cases += 1;
        }
    }
    // Links: a folder that links back to itself, nested; a link to a pipe; pipes named as
    // results, compressed results and archives.
    let odd = dir.path().join("odd");
    std::fs::create_dir_all(odd.join("a/b/c")).unwrap();
    std::fs::write(odd.join("a/b/c/r.json"), &quick).unwrap();
    std::os::unix::fs::symlink(&odd, odd.join("a/b/c/up")).unwrap();
    std::os::unix::fs::symlink(odd.join("a"), odd.join("a/b/again")).unwrap();
    std::os::unix::fs::symlink(odd.join("missing"), odd.join("a/dangling.json")).unwrap();
    let mut pipes = Vec::new();
    for n in ["p.json", "p.json.gz", "p.tar.gz", "p.tar.xz"] {
        let p = odd.join(n);
        if std::process::Command::new("mkfifo").arg(&p).status().is_ok_and(|s| s.success()) {
            std::os::unix::fs::symlink(&p, odd.join(format!("link-{n}"))).unwrap();
            pipes.push(p);
        }
    }
    let o = odd.clone();
    bounded("a folder with link loops and pipes", move || {
        every_reader(&o);
        let l = gpubench::fleet::load(std::slice::from_ref(&o)).unwrap();
        assert_eq!(l.runs.len(), 1, "the one run, counted once");
    });
    for p in pipes {
        bounded(&format!("the pipe {}", p.display()), move || every_reader(&p));
    }
    println!("{cases} mutated inputs and the odd folder in {:.1} s", started.elapsed().as_secs_f64());
}
