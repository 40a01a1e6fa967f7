//! Baseline files: saving, appending, reading, listing; corrupt, truncated and foreign files
//! are clear errors (exit code 5) and are never overwritten; writes are atomic.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use gpubench::baseline::{BASELINE_SCHEMA, Baseline, BaselineKey, SaveMode, Store};
use gpubench::error::{Error, exit};
use gpubench::results::{ResultsDocument, Summary, write_atomic};

fn fixture(name: &str) -> ResultsDocument {
    ResultsDocument::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)).unwrap()
}

fn default_run() -> ResultsDocument {
    fixture("h200-default-run.json")
}

/// The run with every sample scaled by `factor` (a stand-in for another run of the suite).
fn rerun(doc: &ResultsDocument, factor: f64, created: u64) -> ResultsDocument {
    let mut d = doc.clone();
    d.created_unix_s = created;
    for b in &mut d.benchmarks {
        for m in &mut b.metrics {
            m.samples.iter_mut().for_each(|v| *v *= factor);
            m.summary = Summary::of(&m.samples);
        }
    }
    d
}

fn class_key(doc: &ResultsDocument) -> BaselineKey {
    BaselineKey::for_gpu(&doc.gpu, None, false).unwrap()
}

fn assert_data_error(err: &Error, path: &Path, needle: &str) {
    assert!(matches!(err, Error::Data { .. }), "{err}");
    assert_eq!(err.exit_code(), exit::DATA);
    let msg = err.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    assert!(msg.contains(needle), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn a_saved_baseline_reads_back_with_its_stack_summaries_and_samples() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("baselines"));
    let doc = default_run();
    let key = class_key(&doc);
    let (path, saved) = store.save(&key, vec![doc.clone()], SaveMode::Replace, 1_700_000_000).unwrap();
    assert_eq!(path, dir.path().join("baselines/nvidia-h200-cc90-132sm-140gib/class.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&format!("\"schema\":\"{BASELINE_SCHEMA}\"")));
    assert_eq!(text.lines().count(), 1, "baselines are written as compact JSON");
    let (_, loaded) = store.load(&key).unwrap().unwrap();
    assert!(loaded == saved, "the baseline reads back exactly as written");
    let rounded = |x: f64| gpubench::results::round_significant(x);
    let want: Vec<f64> = doc.benchmarks[0].metrics[0].samples.iter().map(|&x| rounded(x)).collect();
    assert_eq!(loaded.runs[0].benchmarks[0].metrics[0].samples, want, "raw samples are kept to 7 digits");
    assert_eq!(loaded.runs[0].benchmarks.len(), doc.benchmarks.len());
    assert_eq!(loaded.stack.driver_version.as_deref(), Some("580.159.04"));
    assert_eq!(loaded.stack.nvrtc_version, "13.0");
    assert_eq!(loaded.stack.cudarc_feature, "cuda-13000");
    let sources: Vec<&str> = loaded.kernels.iter().map(|k| k.source.as_str()).collect();
    assert_eq!(sources, ["atomics.cu", "latency.cu", "shared_banks.cu", "stream.cu"]);
    assert!(loaded.kernels.iter().all(|k| k.ptx_sha256.len() == 64 && k.cubin_sha256.len() == 64));
    let metrics: usize = doc.benchmarks.iter().map(|b| b.metrics.len()).sum();
    assert_eq!(loaded.metrics.len(), metrics);
    let triad = loaded.metrics.iter().find(|m| m.benchmark == "stream/triad").unwrap();
    let of_samples = Summary::of(&doc.benchmark("stream/triad").unwrap().metrics[0].samples);
    let stored = &triad.summary;
    assert_eq!(stored.n, of_samples.n);
    for (s, a) in [
        (stored.median, of_samples.median),
        (stored.mean, of_samples.mean),
        (stored.min, of_samples.min),
        (stored.max, of_samples.max),
        (stored.stdev, of_samples.stdev),
    ] {
        assert_eq!(s, rounded(a), "summaries are stored to 7 significant digits");
    }
    assert!(triad.noise > 0.0 && triad.noise < 0.01, "{}", triad.noise);
    assert!(loaded.telemetry.throttle.median_sm_mhz.unwrap() > 1900.0);
    // No temporary file is left next to it.
    let names = |d: &Path| -> Vec<String> {
        let mut n: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        n.sort();
        n
    };
    assert_eq!(names(store.dir()), ["nvidia-h200-cc90-132sm-140gib"], "one folder per class");
    assert_eq!(names(&store.dir().join("nvidia-h200-cc90-132sm-140gib")), ["class.json"]);
}

/// A store in `root/baselines` whose class baseline of one default run is kept gzipped at
/// `at` only (the class folder removed where `at` lies outside it).
fn class_baseline_kept_at(root: &Path, at: &Path) -> (Store, ResultsDocument, BaselineKey) {
    let store = Store::new(root.join("baselines"));
    let doc = default_run();
    let key = class_key(&doc);
    let (saved, _) = store.save(&key, vec![doc.clone()], SaveMode::Replace, 1_700_000_000).unwrap();
    std::fs::write(at, gpubench::results::gzipped(&std::fs::read(&saved).unwrap())).unwrap();
    std::fs::remove_file(&saved).unwrap();
    if !at.starts_with(saved.parent().unwrap()) {
        std::fs::remove_dir(saved.parent().unwrap()).unwrap();
    }
    (store, doc, key)
}

/// Appends `doc` as a run a minute later to the baseline `key`.
fn append_a_minute_later(store: &Store, key: &BaselineKey, doc: &ResultsDocument) -> (PathBuf, Baseline) {
    let mut second = doc.clone();
    second.created_unix_s += 60;
    store.save(key, vec![second], SaveMode::Append { max_runs: 5 }, 1_700_000_100).unwrap()
}

/// A baseline kept compressed (`<class>/class.json.gz`, as a repository may hold it) is found,
/// read, appended to and stays compressed; nothing else is written beside it.
#[test]
fn a_compressed_baseline_is_found_appended_to_and_kept_compressed() {
    let dir = tempfile::tempdir().unwrap();
    let compressed = dir.path().join("baselines/nvidia-h200-cc90-132sm-140gib/class.json.gz");
    let (store, doc, key) = class_baseline_kept_at(dir.path(), &compressed);
    assert_eq!(store.path(&key), compressed);
    let (path, loaded) = store.load(&key).unwrap().unwrap();
    assert_eq!((path, loaded.runs.len()), (compressed.clone(), 1));
    let (path, saved) = append_a_minute_later(&store, &key, &doc);
    assert_eq!((path, saved.runs.len()), (compressed.clone(), 2));
    assert!(std::fs::read(&compressed).unwrap().starts_with(&[0x1f, 0x8b]), "still gzip");
    let folder = compressed.parent().unwrap();
    let mut names: Vec<String> =
        std::fs::read_dir(folder).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    // The baseline the append replaced is kept beside it, under a name the folder does not list.
    assert_eq!(names, ["class.json.gz", "class.json.gz.previous"]);
    let previous = Baseline::parse(&compressed, &std::fs::read(folder.join(&names[1])).unwrap()).unwrap();
    assert_eq!(previous.runs.len(), 1);
    let listed = store.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].baseline.as_ref().unwrap().runs.len(), 2);
    // A broken gzip stream is a data error that names the file.
    std::fs::write(&compressed, [0x1f, 0x8b, 0x08, 0x00, 0x01]).unwrap();
    let err = store.load(&key).unwrap_err();
    assert_eq!(err.exit_code(), gpubench::error::exit::DATA);
    assert!(err.to_string().contains("not a readable gzip stream"), "{err}");
}

/// A baseline in the one-file layout of earlier versions (`<class>.json.gz` directly in the
/// folder) is found, listed and appended to where it is.
#[test]
fn a_baseline_of_the_flat_layout_is_read_and_saved_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let flat = dir.path().join("baselines/nvidia-h200-cc90-132sm-140gib.json.gz");
    let (store, doc, key) = class_baseline_kept_at(dir.path(), &flat);
    assert_eq!(store.path(&key), flat);
    let (path, saved) = append_a_minute_later(&store, &key, &doc);
    assert_eq!((path, saved.runs.len()), (flat.clone(), 2));
    let listed = store.list().unwrap();
    assert_eq!(listed.iter().map(|l| l.path.clone()).collect::<Vec<_>>(), [flat]);
}

#[test]
fn named_and_per_gpu_baselines_live_in_their_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let doc = default_run();
    let named = BaselineKey::for_gpu(&doc.gpu, Some("r580"), false).unwrap();
    let strict = BaselineKey::for_gpu(&doc.gpu, None, true).unwrap();
    store.save(&named, vec![doc.clone()], SaveMode::Replace, 1).unwrap();
    let (p, b) = store.save(&strict, vec![doc.clone()], SaveMode::Replace, 1).unwrap();
    assert_eq!(p, dir.path().join("nvidia-h200-cc90-132sm-140gib/gpu-0ecb8783-d484-6f3f-bb0a-c1c9301d183d.json"));
    assert!(dir.path().join("nvidia-h200-cc90-132sm-140gib/r580.json").is_file());
    assert_eq!(store.list().unwrap().len(), 2);
    assert_eq!(b.gpu_uuid.as_deref(), Some(doc.gpu.uuid.as_str()));
    assert!(store.load(&class_key(&doc)).unwrap().is_none());
    assert_eq!(store.load(&named).unwrap().unwrap().1.name.as_deref(), Some("r580"));
    // A strict baseline refuses a run of another card of the class.
    let mut other = doc.clone();
    other.gpu.uuid = "GPU-99999999-0000-0000-0000-000000000000".into();
    let err = store.save(&strict, vec![other], SaveMode::Append { max_runs: 5 }, 2).unwrap_err();
    assert!(err.to_string().contains("the baseline is for GPU-0ecb8783"), "{err}");
    assert!(BaselineKey::for_gpu(&doc.gpu, Some("../escape"), false).is_err());
}

#[test]
fn append_keeps_the_newest_runs_and_refuses_incompatible_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let doc = default_run();
    let key = class_key(&doc);
    store.save(&key, vec![rerun(&doc, 1.0, 1)], SaveMode::Append { max_runs: 2 }, 1).unwrap();
    store.save(&key, vec![rerun(&doc, 1.001, 2)], SaveMode::Append { max_runs: 2 }, 2).unwrap();
    let (_, b) = store.save(&key, vec![rerun(&doc, 0.999, 3)], SaveMode::Append { max_runs: 2 }, 3).unwrap();
    let created: Vec<u64> = b.runs.iter().map(|r| r.created_unix_s).collect();
    assert_eq!(created, [2, 3]);
    let triad = b.metrics.iter().find(|m| m.benchmark == "stream/triad").unwrap();
    assert_eq!(triad.run_medians.len(), 2);

    let before = std::fs::read(store.path(&key)).unwrap();
    let err = store.save(&key, vec![fixture("h200-quick-run.json")], SaveMode::Append { max_runs: 5 }, 4).unwrap_err();
    assert_eq!(err.exit_code(), exit::USAGE);
    assert!(err.to_string().contains("settings (profile quick"), "{err}");
    let mut upgraded = doc.clone();
    upgraded.stack.driver_version = Some("590.1".into());
    let err = store.save(&key, vec![upgraded.clone()], SaveMode::Append { max_runs: 5 }, 4).unwrap_err();
    assert!(err.to_string().contains("stack (driver 590.1"), "{err}");
    assert_eq!(std::fs::read(store.path(&key)).unwrap(), before, "a refused append changes nothing");
    // Replacing accepts the upgrade.
    let (_, b) = store.save(&key, vec![upgraded], SaveMode::Replace, 5).unwrap();
    assert_eq!(b.runs.len(), 1);
    assert_eq!(b.stack.driver_version.as_deref(), Some("590.1"));
}

/// The ways a baseline file can be broken, and what the error must say.
fn broken_files(good: &[u8]) -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let text = String::from_utf8(good.to_vec()).unwrap();
    vec![
        ("truncated", good[..good.len() / 2].to_vec(), "truncated JSON"),
        ("corrupt", b"{\"schema\": \"gpubench.baseline/1\", \x00garbage".to_vec(), "not valid JSON"),
        ("empty", Vec::new(), "truncated JSON"),
        (
            "foreign schema",
            text.replacen("gpubench.baseline/1", "gpubench.baseline/9", 1).into_bytes(),
            "schema is `gpubench.baseline/9`, expected `gpubench.baseline/1`",
        ),
        (
            "a results file",
            std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-quick-run.json")).unwrap(),
            "schema is `gpubench.results/1`",
        ),
        ("no schema", b"{\"runs\": []}".to_vec(), "no `schema` field"),
        ("wrong shape", text.replacen("\"runs\":[", "\"runs\":7,\"x\":[", 1).into_bytes(), "does not match schema"),
        ("no runs", text.replacen("\"runs\":[", "\"runs\":[],\"unused\":[", 1).into_bytes(), "baseline holds no runs"),
    ]
}

#[test]
fn broken_baselines_are_data_errors_and_are_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let doc = default_run();
    let key = class_key(&doc);
    let (path, _) = store.save(&key, vec![doc.clone()], SaveMode::Replace, 1).unwrap();
    let good = std::fs::read(&path).unwrap();
    for (what, bytes, needle) in broken_files(&good) {
        std::fs::write(&path, &bytes).unwrap();
        assert_data_error(&Baseline::read(&path).unwrap_err(), &path, needle);
        assert_data_error(&store.load(&key).unwrap_err(), &path, needle);
        for mode in [SaveMode::Replace, SaveMode::Append { max_runs: 5 }] {
            let err = store.save(&key, vec![doc.clone()], mode, 2).unwrap_err();
            assert_data_error(&err, &path, "the file was left as it is");
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "{what}: the broken file must stay as it was");
        }
        let listed = store.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].baseline.is_err(), "{what}");
    }
}

#[test]
fn a_file_holding_another_key_is_not_taken_for_this_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let doc = default_run();
    let named = BaselineKey::for_gpu(&doc.gpu, Some("other"), false).unwrap();
    let (named_path, _) = store.save(&named, vec![doc.clone()], SaveMode::Replace, 1).unwrap();
    std::fs::copy(&named_path, store.path(&class_key(&doc))).unwrap();
    let err = store.load(&class_key(&doc)).unwrap_err();
    assert_data_error(&err, &store.path(&class_key(&doc)), "holds the baseline `other`");
}

#[test]
fn readers_never_see_a_half_written_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let doc = default_run();
    let key = class_key(&doc);
    let (path, _) = store.save(&key, vec![doc.clone()], SaveMode::Replace, 1).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (stop, path) = (stop.clone(), path.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(Ordering::Relaxed) {
                Baseline::read(&path).expect("every read sees a whole file");
                reads += 1;
            }
            reads
        })
    };
    for i in 0..15 {
        store.save(&key, vec![rerun(&doc, 1.0 + i as f64 * 1e-4, i)], SaveMode::Replace, i).unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
}

#[test]
fn a_failed_write_leaves_the_old_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let target: PathBuf = dir.path().join("occupied");
    // The rename cannot replace a non-empty folder: the write fails after the temporary file
    // was written, and must clean it up.
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"x").unwrap();
    let err = write_atomic(&target, b"new contents").unwrap_err();
    assert_eq!(err.exit_code(), exit::DATA);
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(names, ["occupied"]);
    assert_eq!(std::fs::read(target.join("keep")).unwrap(), b"x");
}

#[test]
fn listing_reads_every_baseline_and_skips_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    assert!(Store::new(dir.path().join("absent")).list().unwrap().is_empty());
    let doc = default_run();
    store.save(&class_key(&doc), vec![doc.clone()], SaveMode::Replace, 1).unwrap();
    std::fs::write(dir.path().join(".nvidia-h200.json.tmp-123"), b"partial").unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"not a baseline").unwrap();
    let listed = store.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].baseline.is_ok());
}

/// The committed H100 baseline's telemetry objects, the baseline's and each run's, read and
/// written again give the same JSON, fields in the same order.
#[test]
fn committed_telemetry_reads_and_writes_back_unchanged() {
    use gpubench::baseline::TelemetrySummary;
    use gpubench::results::RunTelemetry;
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("baselines/nvidia-h100-80gb-hbm3-cc90-132sm-79gib/class.json.xz");
    let text = String::from_utf8(gpubench::results::read_document(&path).unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Key order of the file, read from its text (serde_json's Value sorts keys).
    let keys_in_order = |text: &str, keys: &[&str]| {
        let at: Vec<usize> = keys.iter().map(|k| text.find(&format!("\"{k}\":")).expect(k)).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{keys:?} out of order in {text}");
    };
    let summary: TelemetrySummary = serde_json::from_value(v["telemetry"].clone()).unwrap();
    // every run it keeps was recorded with NVML
    assert_eq!(summary.runs_with_nvml, v["runs"].as_array().unwrap().len());
    assert!(summary.runs_with_nvml >= 6);
    assert_eq!(summary.throttle.reasons["clock_below_max"], summary.throttle.throttled_samples);
    assert_eq!(serde_json::to_value(&summary).unwrap(), v["telemetry"]);
    let written = serde_json::to_string(&summary).unwrap();
    let fields = ["samples", "throttled_samples", "reasons", "median_sm_mhz", "median_power_w"];
    keys_in_order(&written, &[&["runs_with_nvml"][..], &fields].concat());
    for run in v["runs"].as_array().unwrap() {
        let t: RunTelemetry = serde_json::from_value(run["telemetry"].clone()).unwrap();
        assert!(t.nvml && t.throttle.samples > 0);
        assert_eq!(serde_json::to_value(&t).unwrap(), run["telemetry"]);
        keys_in_order(&serde_json::to_string(&t).unwrap(), &[&["nvml"][..], &fields].concat());
    }
    // A telemetry object without the optional fields (an older file) still reads.
    let old: RunTelemetry =
        serde_json::from_str(r#"{"nvml":false,"samples":0,"throttled_samples":0,"median_sm_mhz":null}"#).unwrap();
    assert_eq!((old.throttle.median_power_w, old.throttle.reasons.len()), (None, 0));
}
