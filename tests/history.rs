//! History on recorded H200 runs: the store (import, idempotence, atomicity, bad files), change
//! points found where a step was planted and nowhere in A/A runs, and the cause named (the
//! stack change planted beside a step; the clock, not the software, for a clock drop).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gpubench::config::Config;
use gpubench::history::import::collect;
use gpubench::history::{
    AnalysisParams, Cause, HistoryReport, HistoryStore, RunRecord, SeriesFilter, analyse_store, plot, render,
};
use gpubench::results::{ResultsDocument, SmMap};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

const SET3: &str = "tests/fixtures/recorded/h200-aa/set3-runs.tar.xz";
const SET3_CARD: &str = "GPU-df5b3884-f54a-2124-4ed3-bcfdc14ff990";

/// The six default runs of A/A set 3 (one card), oldest first.
fn set3_runs() -> Vec<RunRecord> {
    let found = collect(&[repo(SET3)]).unwrap();
    let mut runs: Vec<RunRecord> = found.records.into_iter().filter(|r| r.run.profile == "default").collect();
    runs.sort_by_key(|r| r.run.created_unix_s);
    assert_eq!(runs.len(), 6);
    assert!(runs.iter().all(|r| r.run.card_uuid == SET3_CARD));
    runs
}

/// Twenty A/A runs on one card: set 3's six runs in a fixed shuffled cycle, an hour apart.
fn twenty_aa_runs() -> Vec<RunRecord> {
    let base = set3_runs();
    let order = [0, 3, 1, 4, 2, 5, 1, 5, 0, 2, 4, 3, 5, 2, 3, 0, 1, 4, 2, 0];
    order
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let mut r = base[k].clone();
            r.run.created_unix_s = 1_800_000_000 + 3600 * i as i64;
            r.run.run_key = format!("aa-{i}");
            r
        })
        .collect()
}

fn committed_rule() -> Config {
    Config::load(&repo("gpubench.toml")).unwrap()
}

fn analyse(records: &[RunRecord], metric: Option<&str>) -> HistoryReport {
    let dir = tempfile::tempdir().unwrap();
    let mut store = HistoryStore::open(&dir.path().join("h.db")).unwrap();
    store.add(records).unwrap();
    let filter = SeriesFilter::new(metric, None).unwrap();
    analyse_store(&store, &filter, &AnalysisParams { recent: 3, ..Default::default() }, Some(&committed_rule().rule))
        .unwrap()
}

fn is_latency(m: &gpubench::history::record::MetricRow) -> bool {
    m.family == "latency"
}

#[test]
fn twenty_aa_runs_give_no_change_point() {
    let report = analyse(&twenty_aa_runs(), None);
    assert_eq!(report.series.len(), 301, "every metric of the default profile is a series");
    assert!(report.series.iter().all(|s| s.series.points.len() == 20));
    let found: Vec<String> =
        report.change_points().map(|(s, c)| format!("{} at {}", s.series.key.label(), c.index)).collect();
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_planted_3_percent_latency_step_is_found_at_its_run_and_named_with_the_driver_change() {
    let k = 12;
    let mut runs = twenty_aa_runs();
    for r in runs.iter_mut().skip(k) {
        r.run.driver_version = Some("590.48.01".into());
        for m in r.metrics.iter_mut().filter(|m| is_latency(m)) {
            m.median *= 1.03;
            m.norm_median = m.norm_median.map(|v| v * 1.03);
        }
    }
    let report = analyse(&runs, None);
    let latency: Vec<_> = report.series.iter().filter(|s| s.series.family == "latency").collect();
    assert_eq!(latency.len(), 68);
    for s in &latency {
        assert_eq!(s.change_points.len(), 1, "{}: {:?}", s.series.key.label(), s.change_points);
        let c = &s.change_points[0];
        assert_eq!(c.index, k, "{}", s.series.key.label());
        assert!((c.step_rel - 0.03).abs() < 0.005, "{}: {}", s.series.key.label(), c.step_rel);
        assert_eq!(c.direction, "regressed");
        assert_eq!(c.cause, Cause::Software);
        assert!(c.changes.contains(&"driver 580.159.04 -> 590.48.01".to_string()), "{:?}", c.changes);
    }
    // The driver changed for every metric; only the latencies stepped.
    let others: Vec<String> = report
        .change_points()
        .filter(|(s, _)| s.series.family != "latency")
        .map(|(s, c)| format!("{} at {}", s.series.key.label(), c.index))
        .collect();
    assert!(others.is_empty(), "{others:?}");
    // Not in the newest three runs.
    assert!(!report.has_recent());
    // The table and the Markdown name the change.
    let table = render::history_table(&report);
    assert!(table.contains("68 change points"), "{table}");
    assert!(render::history_markdown(&report, &[]).contains("| driver 580.159.04 -> 590.48.01 |"));
}

#[test]
fn a_planted_clock_drop_is_attributed_to_the_clock_not_to_the_driver_change_beside_it() {
    let k = 8;
    let (old, new) = (1980.0, 1700.0);
    let mut runs = twenty_aa_runs();
    for r in runs.iter_mut().skip(k) {
        // A driver change in the same run: the clock still explains the step.
        r.run.driver_version = Some("590.48.01".into());
        r.run.median_sm_mhz = Some(new);
        for m in r.metrics.iter_mut().filter(|m| is_latency(m)) {
            // Time per access grows with the slower clock; cycles per access do not move.
            if m.unit == "ns" {
                m.median *= old / new;
            }
            m.eff_clock_mhz = m.eff_clock_mhz.map(|c| c * new / old);
        }
    }
    let report = analyse(&runs, Some("^latency/"));
    for s in &report.series {
        let label = s.series.key.label();
        if s.series.key.unit == "ns" {
            assert_eq!(s.change_points.len(), 1, "{label}: {:?}", s.change_points);
            let c = &s.change_points[0];
            assert_eq!(c.index, k);
            assert_eq!(c.cause, Cause::Clock, "{label}");
            assert!(c.normalized_step_rel.unwrap().abs() < 0.005, "{label}");
            assert!(c.changes.iter().any(|x| x.starts_with("SM clock 1980 -> 1700 MHz")), "{:?}", c.changes);
            assert!(c.changes.iter().any(|x| x.starts_with("driver ")), "{:?}", c.changes);
        } else {
            assert!(s.change_points.is_empty(), "{label}: {:?}", s.change_points);
        }
    }
}

#[test]
fn a_step_in_the_newest_runs_is_recent() {
    let mut runs = twenty_aa_runs();
    for r in runs.iter_mut().skip(18) {
        for m in r.metrics.iter_mut().filter(|m| m.benchmark == "latency/cg/256KiB") {
            m.median *= 1.05;
            m.norm_median = m.norm_median.map(|v| v * 1.05);
        }
    }
    let report = analyse(&runs, Some("^latency/cg/256KiB/"));
    assert!(report.has_recent());
    let (_, c) = report.change_points().next().unwrap();
    assert_eq!((c.index, c.cause), (18, Cause::Unexplained));
    assert!(c.changes.is_empty());
}

#[test]
fn import_is_idempotent_and_reads_archives_folders_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let found = collect(&[repo(SET3), repo("tests/fixtures/h200-quick-run.json")]).unwrap();
    // Set 3 holds six runs and five verdict files: only results documents count.
    assert_eq!(found.records.len(), 7, "{:?}", found.skipped);
    assert!(found.skipped.iter().any(|s| s.contains("v1.json")), "{:?}", found.skipped);
    let mut store = HistoryStore::open(&db).unwrap();
    let first = store.add(&found.records).unwrap();
    assert_eq!((first.added, first.already), (7, 0));
    drop(store);
    let mut store = HistoryStore::open(&db).unwrap();
    let again = store.add(&collect(&[repo(SET3)]).unwrap().records).unwrap();
    assert_eq!((again.added, again.already), (0, 6));
    assert_eq!(store.run_count().unwrap(), 7);
    // One row per metric of each run.
    let metrics: i64 = store.connection().query_row("SELECT COUNT(*) FROM metrics", [], |r| r.get(0)).unwrap();
    let expected: usize = found.records.iter().map(|r| r.metrics.len()).sum();
    assert_eq!(metrics as usize, expected);
}

#[test]
fn a_corrupt_results_file_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    let mut text = std::fs::read_to_string(repo("tests/fixtures/h200-quick-run.json")).unwrap();
    text.truncate(text.len() / 2);
    std::fs::write(&bad, text).unwrap();
    let err = collect(&[repo("tests/fixtures/h200-quick-run.json"), bad.clone()]).unwrap_err();
    assert_eq!(err.exit_code(), gpubench::error::exit::DATA);
    assert!(err.to_string().contains("truncated JSON"), "{err}");
}

#[test]
fn a_file_that_is_not_a_history_database_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not.db");
    std::fs::write(&path, b"this is not sqlite, it is a text file of some length......").unwrap();
    let before = std::fs::read(&path).unwrap();
    let err = HistoryStore::open(&path).err().expect("refused");
    assert_eq!(err.exit_code(), gpubench::error::exit::DATA);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // A database of another history schema version is refused too.
    let other = dir.path().join("other.db");
    HistoryStore::open(&other).unwrap();
    set_schema_version_99(&other);
    // Another program's SQLite database is refused and not given our tables.
    let foreign = dir.path().join("foreign.db");
    {
        let store = HistoryStore::open(&foreign).unwrap();
        store
            .connection()
            .execute_batch("DROP TABLE metrics; DROP TABLE runs; DROP TABLE meta; CREATE TABLE t (x);")
            .unwrap();
    }
    let err = HistoryStore::open(&foreign).err().expect("refused");
    assert!(err.to_string().contains("not a gpubench history database"), "{err}");
    assert!(HistoryStore::open(&foreign).is_err(), "still refused: nothing was added");
    let err = HistoryStore::open(&other).err().expect("refused");
    assert!(err.to_string().contains("history schema version 99"), "{err}");
}

/// Sets the stored schema version to 99 through the store's own connection.
fn set_schema_version_99(path: &Path) {
    let store = HistoryStore::open(path).unwrap();
    store.connection().execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'", []).unwrap();
}

#[test]
fn the_schema_document_names_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let store = HistoryStore::open(&dir.path().join("h.db")).unwrap();
    let doc = std::fs::read_to_string(repo("docs/src/history-schema.md")).unwrap();
    for table in ["runs", "metrics", "meta"] {
        let mut stmt = store.connection().prepare(&format!("PRAGMA table_info({table})")).unwrap();
        let cols: Vec<String> = stmt.query_map([], |r| r.get::<_, String>(1)).unwrap().map(|c| c.unwrap()).collect();
        assert!(!cols.is_empty());
        for c in cols {
            assert!(doc.contains(&format!("`{c}`")), "docs/src/history-schema.md does not describe {table}.{c}");
        }
    }
}

#[test]
fn per_sm_maps_foreign_processes_and_kernel_hashes_are_recorded() {
    let mut doc = ResultsDocument::read(&repo("tests/fixtures/h200-quick-run.json")).unwrap();
    let b = doc.benchmarks.iter_mut().find(|b| b.family == "latency").unwrap();
    let metric = b.metrics[0].name.clone();
    b.sm_maps.push(SmMap::new(&metric, "cycles", (0..8).map(|sm| (sm, 280.0 + sm as f64)).collect()));
    let id = b.id.clone();
    let mut raw = serde_json::to_value(&doc).unwrap();
    raw["telemetry"]["foreign_processes"] = serde_json::json!([{"pid": 4242, "name": "python3", "used_mib": 900}]);
    raw["gpu"]["power_limit_w"] = serde_json::json!(700.0);
    let rec = RunRecord::from_document(&doc, Some(&raw), "test");
    assert_eq!(rec.run.foreign_processes, Some(1));
    assert!(rec.run.foreign_processes_json.as_deref().unwrap().contains("python3"));
    assert_eq!(rec.run.power_limit_w, Some(700.0));
    let row = rec.metrics.iter().find(|m| m.benchmark == id && m.metric == metric).unwrap();
    let sm = row.sm.expect("per-SM summary");
    assert_eq!((sm.n, sm.min, sm.max, sm.median, sm.iqr), (8, 280.0, 287.0, 283.5, 3.5));
    assert_eq!(row.kernel_hash.as_deref().map(str::len), Some(16));
    // Without the raw JSON (the run command's path) the fields this build does not know are absent.
    let plain = RunRecord::from_document(&doc, None, "run");
    assert_eq!(plain.run.foreign_processes, None);
    assert_eq!(plain.metrics.len(), rec.metrics.len());
}

#[test]
fn foreign_processes_appearing_explain_a_step() {
    let k = 10;
    let mut runs = twenty_aa_runs();
    for r in runs.iter_mut().skip(k) {
        r.run.foreign_processes = Some(2);
        for m in r.metrics.iter_mut().filter(|m| m.benchmark == "stream/triad") {
            m.median *= 0.9;
            m.norm_median = m.norm_median.map(|v| v * 0.9);
        }
    }
    let report = analyse(&runs, Some("^stream/triad/"));
    let cps: Vec<_> = report.change_points().collect();
    assert_eq!(cps.len(), 1);
    assert_eq!((cps[0].1.index, cps[0].1.cause, cps[0].1.direction), (k, Cause::Contention, "regressed"));
    assert_eq!(cps[0].1.changes, vec!["foreign processes 0 -> 2".to_string()]);
}

#[test]
fn plots_mark_change_points_and_stack_changes() {
    let k = 12;
    let mut runs = twenty_aa_runs();
    for r in runs.iter_mut().skip(k) {
        r.run.nvrtc_version = "13.1".into();
        for m in r.metrics.iter_mut().filter(|m| m.benchmark.starts_with("latency/cg/")) {
            m.median *= 1.03;
            m.norm_median = m.norm_median.map(|v| v * 1.03);
        }
    }
    let report = analyse(&runs, Some("^latency/"));
    let dir = tempfile::tempdir().unwrap();
    let written = plot::write_plots(dir.path(), &report).unwrap();
    assert_eq!(written.len(), 1);
    let svg = std::fs::read_to_string(&written[0].1).unwrap();
    assert!(written[0].1.ends_with("GPU-df5b3884-latency.svg"));
    assert!(svg.contains("NVRTC 13.0 -&gt; 13.1") || svg.contains("NVRTC 13.0 -> 13.1"), "stack change label");
    assert!(svg.lines().any(|l| l.trim() == "software"), "change point label");
    assert!(svg.contains("throttled samples"), "clock and throttle panel");
    let by_cause: BTreeMap<&str, usize> = report.change_points().fold(BTreeMap::new(), |mut m, (_, c)| {
        *m.entry(c.cause.name()).or_default() += 1;
        m
    });
    assert_eq!(by_cause.get("software"), Some(&34), "{by_cause:?}");
}

/// The README's demonstration plot: set 3's runs as twenty A/A runs, a driver change with a 3 %
/// latency step at run 8 and a clock drop at run 14. Set GPUBENCH_HISTORY_DEMO_DIR to keep it.
#[test]
fn demonstration_plot_of_a_software_step_and_a_clock_drop() {
    let mut runs = twenty_aa_runs();
    for (i, r) in runs.iter_mut().enumerate() {
        if i >= 8 {
            r.run.driver_version = Some("590.48.01".into());
        }
        for m in r.metrics.iter_mut().filter(|m| is_latency(m)) {
            if i >= 8 {
                m.median *= 1.03;
                m.norm_median = m.norm_median.map(|v| v * 1.03);
            }
            if i >= 14 {
                if m.unit == "ns" {
                    m.median *= 1980.0 / 1700.0;
                }
                m.eff_clock_mhz = m.eff_clock_mhz.map(|c| c * 1700.0 / 1980.0);
            }
        }
    }
    let report = analyse(&runs, Some("^latency/cg/(256KiB|256MiB)/"));
    let causes: Vec<(String, usize, &str)> =
        report.change_points().map(|(s, c)| (s.series.key.metric.clone(), c.index, c.cause.name())).collect();
    assert_eq!(
        causes,
        vec![
            ("cycles_per_access".into(), 8, "software"),
            ("ns_per_access".into(), 8, "software"),
            ("ns_per_access".into(), 14, "clock"),
            ("cycles_per_access".into(), 8, "software"),
            ("ns_per_access".into(), 8, "software"),
            ("ns_per_access".into(), 14, "clock"),
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let out = std::env::var_os("GPUBENCH_HISTORY_DEMO_DIR").map(PathBuf::from).unwrap_or(dir.path().to_path_buf());
    let written = plot::write_plots(&out, &report).unwrap();
    assert_eq!(written.len(), 1);
    std::fs::write(out.join("demo-summary.md"), render::history_markdown(&report, &[])).unwrap();
}

#[test]
fn a_run_appended_twice_is_one_run_and_matches_its_import() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nested/h.db");
    let doc = ResultsDocument::read(&repo("tests/fixtures/h200-quick-run.json")).unwrap();
    let first = gpubench::history::append_run(&db, &doc).unwrap();
    assert_eq!((first.added, first.already), (1, 0));
    let again = gpubench::history::append_run(&db, &doc).unwrap();
    assert_eq!((again.added, again.already), (0, 1));
    // The file the run wrote, imported later, is the same run.
    let mut store = HistoryStore::open(&db).unwrap();
    let imported = store.add(&collect(&[repo("tests/fixtures/h200-quick-run.json")]).unwrap().records).unwrap();
    assert_eq!((imported.added, imported.already), (0, 1));
    let source: String = store.connection().query_row("SELECT source FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(source, "run");
}
