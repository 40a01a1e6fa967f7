//! One test per fault found by trying gpubench as a new user would (issue "Trust under
//! faults"): each input here reproduced a panic, a hang, a poisoned baseline or a silent pass
//! before the fix. No GPU needed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use gpubench::baseline::{BaselineKey, RunsFile, SaveMode, Store, quarantine};
use gpubench::config::Config;
use gpubench::error::{Error, exit};
use gpubench::results::{ResultsDocument, Summary};

#[path = "support/second_run.rs"]
mod second_run;
use second_run::two_runs;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn quick() -> ResultsDocument {
    ResultsDocument::read(&fixture("h200-quick-run.json")).unwrap()
}

fn key(doc: &ResultsDocument) -> BaselineKey {
    BaselineKey::for_gpu(&doc.gpu, None, false).unwrap()
}

/// A store holding a good baseline of the quick run; returns it and the file's bytes.
fn store_with_baseline(dir: &Path) -> (Store, PathBuf, Vec<u8>) {
    let store = Store::new(dir);
    let (path, _) = store.save(&key(&quick()), vec![quick()], SaveMode::Replace, 1).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (store, path, bytes)
}

fn assert_refused_and_untouched(store: &Store, run: ResultsDocument, path: &Path, before: &[u8], needle: &str) {
    let e = store.save(&key(&run), vec![run], SaveMode::Replace, 2).unwrap_err();
    assert_eq!(e.exit_code(), exit::DATA, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("refused to save") && msg.contains(needle), "{msg}");
    assert!(msg.contains("the baseline was left as it is"), "{msg}");
    assert_eq!(std::fs::read(path).unwrap(), before, "the old baseline changed");
    let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 1, "a temporary file was left behind: {names:?}");
}

#[test]
fn a_baseline_with_a_metric_without_samples_is_refused_and_the_old_one_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path, before) = store_with_baseline(dir.path());
    let mut run = quick();
    run.benchmarks[0].metrics[0].samples.clear();
    run.benchmarks[0].metrics[0].summary = Summary::of(&[]);
    assert_refused_and_untouched(&store, run, &path, &before, "no samples");
}

#[test]
fn a_baseline_with_samples_too_large_for_finite_statistics_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path, before) = store_with_baseline(dir.path());
    let mut run = quick();
    let m = &mut run.benchmarks[0].metrics[0];
    m.samples[0] = 1e155;
    m.summary = Summary::of(&m.samples);
    assert_refused_and_untouched(&store, run, &path, &before, "too large for finite statistics");
}

#[test]
fn a_corrupt_baseline_is_quarantined_and_a_new_one_saved() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path, _) = store_with_baseline(dir.path());
    std::fs::write(&path, b"{\"schema\": \"gpubench.baseline/1\", \"runs\": [nul").unwrap();
    let e = store.save(&key(&quick()), vec![quick()], SaveMode::Replace, 2).unwrap_err();
    assert!(e.to_string().contains("cargo gpubench baseline quarantine"), "{e}");
    let moved = quarantine(&path, 1234).unwrap();
    assert_eq!(moved.file_name().unwrap().to_str().unwrap(), "class.json.quarantined-1234");
    assert!(!path.exists());
    assert_eq!(store.list().unwrap().len(), 0, "a quarantined file is no longer listed");
    store.save(&key(&quick()), vec![quick()], SaveMode::Replace, 3).unwrap();
    assert!(store.load(&key(&quick())).unwrap().is_some());
    assert!(quarantine(dir.path(), 5).is_err(), "a folder is not quarantined");
}

fn config_error(text: &str) -> String {
    let e = Config::parse(text, Path::new("gpubench.toml")).unwrap_err();
    assert_eq!(e.exit_code(), exit::USAGE, "{e}");
    e.to_string()
}

#[test]
fn configuration_values_out_of_range_are_usage_errors() {
    // 2^61 resamples panicked (capacity overflow), 1e9 hung; verdicts no longer resample, and
    // the key is refused like any unknown one.
    assert!(config_error("[verdict]\nresamples = 2305843009213693952\n").contains("resamples"));
    assert!(config_error("[verdict]\nresamples = 1000000000\n").contains("resamples"));
    assert!(config_error("[verdict]\nresamples = 1e11\n").contains("line 2"));
    // These silently made every verdict pass.
    assert!(config_error("[verdict]\nmin_samples = 1000000\n").contains("min_samples = 1000000 is outside [2, 1000]"));
    assert!(config_error("[verdict]\nthreshold = 0.99\n").contains("threshold = 0.99 is outside [0, 0.5)"));
    assert!(config_error("[[verdict.metric]]\nmatch = \"x\"\nthreshold = 0.7\n").contains("outside [0, 0.5)"));
    assert!(config_error("[baseline]\nmax_runs = 100000\n").contains("outside [1, 1000]"));
    assert!(Config::parse("[verdict]\nmin_samples = 1000\nthreshold = 0.49\n", Path::new("x")).is_ok());
}

/// Runs `f` on a thread and fails if it takes longer than `limit` (a hang).
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).expect("no answer in time: it hangs")
}

#[test]
fn a_named_pipe_or_folder_given_as_input_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("results.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
    if made {
        let f = fifo.clone();
        let e = within(Duration::from_secs(10), move || RunsFile::read(&f).unwrap_err().to_string());
        assert!(e.ends_with("is a named pipe, not a regular file"), "{e}");
        let f = fifo.clone();
        let e = within(Duration::from_secs(10), move || ResultsDocument::read_checked(&f).unwrap_err());
        assert_eq!(e.exit_code(), exit::DATA);
        let f = fifo.clone();
        let e = within(Duration::from_secs(10), move || Config::load(&f).unwrap_err());
        assert_eq!(e.exit_code(), exit::USAGE);
    } else {
        println!("mkfifo unavailable: only the folder case is checked");
    }
    let e = RunsFile::read(dir.path()).unwrap_err();
    assert!(e.to_string().ends_with("is a folder, not a regular file"), "{e}");
}

fn write_doc(dir: &Path, name: &str, doc: &ResultsDocument) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(doc).unwrap()).unwrap();
    path
}

#[test]
fn a_results_file_without_samples_is_refused_as_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = quick();
    for b in &mut doc.benchmarks {
        for m in &mut b.metrics {
            m.samples.clear();
        }
    }
    let path = write_doc(dir.path(), "empty.json", &doc);
    let e = RunsFile::read(&path).unwrap_err();
    assert_eq!(e.exit_code(), exit::DATA);
    assert!(e.to_string().contains("no samples"), "{e}");
}

#[test]
fn report_checks_the_summary_against_the_samples() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = quick();
    doc.benchmarks[0].metrics[0].summary.n = 1_000_000_000_000_000_000;
    let path = write_doc(dir.path(), "n.json", &doc);
    let e = ResultsDocument::read_checked(&path).unwrap_err();
    assert!(matches!(e, Error::Data { .. }));
    assert!(e.to_string().contains("summary says n = 1000000000000000000"), "{e}");
    assert!(ResultsDocument::read_checked(&fixture("h200-quick-run.json")).is_ok());
}

/// Every committed results and baseline file passes the input checks.
#[test]
fn every_committed_results_and_baseline_file_is_accepted() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    let mut stack = vec![root.join("baselines"), root.join("tests/corpus"), root.join("tests/fixtures")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") || path.to_string_lossy().ends_with(".json.gz") {
                let bytes = std::fs::read(&path).unwrap();
                let text =
                    String::from_utf8_lossy(&gpubench::results::decompressed(&path, &bytes).unwrap()).into_owned();
                if text.contains("\"gpubench.results/1\"") || text.contains("\"gpubench.baseline/1\"") {
                    let head = &text[..text.len().min(200)];
                    if head.contains("gpubench.results/1") || head.contains("gpubench.baseline/1") {
                        RunsFile::read(&path).unwrap_or_else(|e| panic!("{e}"));
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked >= 5, "only {checked} files checked");
}

/// The quick run slowed by 30 % in every metric (what a matrix-multiply loop in a second
/// process did on an H100), with or without NVML having listed that process.
fn disturbed(listed: bool) -> ResultsDocument {
    use gpubench::results::{Better, ForeignProcess, SampleTelemetry};
    let mut doc = quick();
    for b in &mut doc.benchmarks {
        for m in &mut b.metrics {
            let f = if m.better == Better::Higher { 0.7 } else { 1.0 / 0.7 };
            m.samples.iter_mut().for_each(|v| *v *= f);
            m.summary = Summary::of(&m.samples);
            if let Some(n) = &mut m.normalized {
                n.samples.iter_mut().for_each(|v| *v *= f);
                n.summary = Summary::of(&n.samples);
            }
        }
        let n = b.metrics[0].samples.len();
        if b.telemetry.len() != n {
            b.telemetry = vec![SampleTelemetry { sm_mhz: Some(1980.0), readings: 3, ..Default::default() }; n];
        }
        if listed {
            for t in &mut b.telemetry {
                t.foreign_processes = vec![ForeignProcess {
                    pid: 4242,
                    name: Some("python3".into()),
                    used_mib: Some(874.0),
                    sm_util_pct: Some(69),
                    note: None,
                }];
            }
        }
    }
    doc
}

#[test]
fn metrics_measured_beside_another_process_are_inconclusive_with_the_process_named() {
    use gpubench::verdict::{Rule, Side, Verdict, compare};
    let base = two_runs(&quick());
    let rule = Rule::default();
    // Unlisted, the slowdown reads as regressions: the test data can fail.
    let blind = [disturbed(false)];
    let c = compare(Side::of("b", &base), Side::of("n", &blind), &rule).unwrap();
    assert!(c.metrics.iter().filter(|m| m.verdict == Verdict::Regressed).count() > 10);
    // Listed: 0 REGRESSED, every metric INCONCLUSIVE and naming the process.
    let seen = [disturbed(true)];
    let c = compare(Side::of("b", &base), Side::of("n", &seen), &rule).unwrap();
    assert!(!c.metrics.is_empty());
    for m in &c.metrics {
        assert_eq!(m.verdict, Verdict::Inconclusive, "{}:{}", m.benchmark, m.metric);
        assert!(
            m.reason.starts_with("another process (pid 4242, python3, 874 MiB, SM 69 %) used this GPU during the run"),
            "{}",
            m.reason
        );
    }
    assert_eq!(c.exit_code(), exit::OK);
    // A baseline measured beside another process cannot judge a clean run either.
    let c = compare(Side::of("b", &two_runs(&seen[0])), Side::of("n", &base[..1]), &rule).unwrap();
    assert!(c.metrics.iter().all(|m| m.verdict == Verdict::Inconclusive && m.reason.starts_with("baseline: another")));
}

#[test]
fn old_results_without_process_fields_still_load_and_new_ones_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let doc = disturbed(true);
    let path = write_doc(dir.path(), "shared.json", &doc);
    let back = ResultsDocument::read_checked(&path).unwrap();
    assert_eq!(back.benchmarks[0].telemetry[0].foreign_processes[0].pid, 4242);
    let text = std::fs::read_to_string(fixture("h200-quick-run.json")).unwrap();
    assert!(!text.contains("foreign_processes"));
    let summary = gpubench::telemetry::run_summary(&back.benchmarks);
    assert!(gpubench::telemetry::describe(&summary).contains("another process (pid 4242, python3, 874 MiB, SM 69 %)"));
}

#[test]
fn the_noisy_neighbour_script_parses_and_refuses_a_missing_archive() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/noisy-neighbour.sh");
    let o = std::process::Command::new("bash").arg("-n").arg(&script).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = tempfile::tempdir().unwrap();
    let o = std::process::Command::new("bash")
        .arg(&script)
        .arg(dir.path().join("no-archive"))
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("usage: "));
    // The embedded Python parses (when python3 is here).
    let text = std::fs::read_to_string(&script).unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.ends_with("<<'PY'") => current = Some(String::new()),
            Some(b) if line == "PY" => {
                blocks.push(std::mem::take(b));
                current = None;
            }
            Some(b) => {
                b.push_str(line);
                b.push('\n');
            }
            None => {}
        }
    }
    assert_eq!(blocks.len(), 2);
    for b in blocks {
        let parsed =
            std::process::Command::new("python3").args(["-c", "import ast, sys; ast.parse(sys.argv[1])", &b]).output();
        if let Ok(o) = parsed {
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
    }
}

#[test]
fn a_shared_gpu_under_exclusive_is_its_own_documented_exit_code() {
    let e = Error::GpuShared {
        uuid: "GPU-1".into(),
        processes: "another process (pid 4242, python3, 874 MiB) holds it".into(),
    };
    assert_eq!(e.exit_code(), exit::GPU_SHARED);
    assert!(exit::TABLE.iter().any(|(c, m)| *c == exit::GPU_SHARED && m.contains("--exclusive")));
    assert!(e.to_string().starts_with("GPU GPU-1 is not exclusive (--exclusive): another process (pid 4242"));
}
