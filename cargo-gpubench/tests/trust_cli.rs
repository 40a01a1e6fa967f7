//! Inputs that must not be trusted, from the command line: named pipes, symbolic link loops,
//! decompression bombs, huge values, forged host names and file names, poisoned baseline
//! saves. Each ends in one error line and a documented exit code, or in a skip that is named;
//! never a panic, an abort or a hang, and nothing stored is lost.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-gpubench");

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// How a command ended: its exit code (None when killed), stdout, stderr.
struct Ran {
    code: Option<i32>,
    out: String,
    err: String,
}

impl std::fmt::Debug for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {:?}\nstdout:\n{}\nstderr:\n{}", self.code, self.out, self.err)
    }
}

/// Runs the CLI in `dir` with `envs`, killing it after `limit` (a hang fails the test).
fn run_env(dir: &Path, args: &[&str], envs: &[(&str, &str)], limit: Duration) -> Ran {
    let mut child = Command::new(BIN)
        .arg("gpubench")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`cargo gpubench {}` did not finish within {limit:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let ran = Ran {
        code: status.code(),
        out: String::from_utf8_lossy(&out_reader.join().unwrap()).into_owned(),
        err: String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned(),
    };
    assert!(!ran.err.contains("panicked") && !ran.err.contains("RUST_BACKTRACE"), "{ran:?}");
    assert!(!matches!(ran.code, Some(101) | Some(134) | None), "{ran:?}");
    ran
}

fn run(dir: &Path, args: &[&str]) -> Ran {
    run_env(dir, args, &[], Duration::from_secs(60))
}

/// Exit `code` with exactly one `error:` line containing `needle`.
fn assert_one_error(r: &Ran, code: i32, needle: &str) {
    assert_eq!(r.code, Some(code), "{r:?}");
    let lines: Vec<&str> = r.err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(lines.len(), 1, "{r:?}");
    assert!(lines[0].contains(needle), "{needle:?} not in {r:?}");
}

fn mkfifo(path: &Path) -> bool {
    Command::new("mkfifo").arg(path).status().is_ok_and(|s| s.success())
}

fn quick_value() -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(repo("tests/fixtures/h200-quick-run.json")).unwrap()).unwrap()
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Eight copies of the quick run an hour apart, as `runs/run<i>.json`; `edit(i, doc)` changes
/// each.
fn series(dir: &Path, edit: impl Fn(usize, &mut serde_json::Value)) -> PathBuf {
    let base = quick_value();
    let runs = dir.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    for i in 0..8 {
        let mut doc = base.clone();
        doc["created_unix_s"] = serde_json::json!(1_800_000_000u64 + 3600 * i as u64);
        edit(i, &mut doc);
        std::fs::write(runs.join(format!("run{i}.json")), serde_json::to_vec(&doc).unwrap()).unwrap();
    }
    runs
}

#[test]
fn history_plots_of_a_run_with_a_huge_finite_median_finish() {
    let dir = tempfile::tempdir().unwrap();
    let runs = series(dir.path(), |i, doc| {
        if i == 3 {
            // 1.7e308 % above the series' median: finite, but not once padded for the axis.
            let m = &mut doc["benchmarks"][0]["metrics"][0]["summary"]["median"];
            *m = serde_json::json!(m.as_f64().unwrap() * 1.7e306);
        }
    });
    let r = run(dir.path(), &["history", "import", "--db", "h.db", runs.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let r = run_env(dir.path(), &["history", "--db", "h.db", "--plots", "plots"], &[], Duration::from_secs(30));
    assert_eq!(r.code, Some(0), "{r:?}");
    let svgs = std::fs::read_dir(dir.path().join("plots")).unwrap().count();
    assert!(svgs > 0, "{r:?}");
}

#[test]
fn named_pipes_are_refused_when_named_and_skipped_and_named_in_folders() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pipes = d.join("pipes");
    std::fs::create_dir(&pipes).unwrap();
    let made = ["in.json", "in.json.gz", "runs.tar.gz", "b.json"].iter().all(|n| mkfifo(&pipes.join(n)));
    if !made {
        println!("skipping: no mkfifo");
        return;
    }
    let short = Duration::from_secs(20);
    for name in ["in.json", "in.json.gz", "runs.tar.gz"] {
        let p = pipes.join(name);
        let p = p.to_str().unwrap();
        for args in [vec!["fleet", p], vec!["history", "import", "--db", "h.db", p], vec!["calibrate", p]] {
            let r = run_env(d, &args, &[], short);
            assert_one_error(&r, 5, "is a named pipe, not a regular file");
        }
    }
    let r = run_env(d, &["baseline", "quarantine", pipes.join("b.json").to_str().unwrap()], &[], short);
    assert_one_error(&r, 5, "is a named pipe, not a regular file");
    assert!(pipes.join("b.json").exists());

    // Inside a folder: skipped and named, the real runs read.
    std::fs::copy(repo("tests/fixtures/h200-quick-run.json"), pipes.join("real.json")).unwrap();
    let p = pipes.to_str().unwrap();
    let r = run_env(d, &["history", "import", "--db", "h.db", p], &[], short);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.out.contains("imported 1 run"), "{r:?}");
    assert!(r.out.contains("4 other JSON files skipped"), "{r:?}");
    let r = run_env(d, &["fleet", p], &[], short);
    assert!(r.code == Some(0) || r.code == Some(9), "{r:?}");
    assert!(r.err.contains("in.json.gz: a named pipe, not a regular file"), "{r:?}");
    let r = run_env(d, &["calibrate", p], &[], short);
    assert!(r.err.contains("runs.tar.gz (a named pipe, not a regular file)"), "{r:?}");
}

#[test]
fn decompression_bombs_are_refused_within_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 64 MiB of spaces around a results document, gzipped to some 64 KiB; the limit is lowered
    // to 8 MiB so that the test stays quick (the default is 1 GiB).
    let mut text = serde_json::to_vec(&quick_value()).unwrap();
    text.extend(std::iter::repeat_n(b' ', 64 << 20));
    std::fs::write(d.join("bomb.json.gz"), gz(&text)).unwrap();
    let mut tar = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(text.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    tar.append_data(&mut h, "runs/bomb.json", text.as_slice()).unwrap();
    std::fs::write(d.join("bomb.tar.gz"), gz(&tar.into_inner().unwrap())).unwrap();
    let limit = [("GPUBENCH_MAX_DOCUMENT_BYTES", "8388608")];
    let t = Duration::from_secs(30);
    for args in [
        vec!["fleet", "bomb.json.gz"],
        vec!["history", "import", "--db", "h.db", "bomb.json.gz"],
        vec!["calibrate", "bomb.json.gz"],
        vec!["baseline", "save", "bomb.json.gz"],
        vec!["report", "bomb.json.gz"],
    ] {
        let r = run_env(d, &args, &limit, t);
        assert_one_error(&r, 5, "the gzip stream expands beyond 8 MiB (the limit for one document)");
    }
    for args in [vec!["fleet", "bomb.tar.gz"], vec!["history", "import", "--db", "h.db", "bomb.tar.gz"]] {
        let r = run_env(d, &args, &limit, t);
        assert_one_error(&r, 5, "member runs/bomb.json is larger than 8 MiB");
    }
    // dissect's sweeps.json.gz too.
    std::fs::create_dir(d.join("dissect")).unwrap();
    std::fs::write(d.join("dissect/sweeps.json.gz"), gz(&text)).unwrap();
    let r = run_env(d, &["dissect", "--from", "dissect"], &limit, t);
    assert_one_error(&r, 5, "the gzip stream expands beyond 8 MiB");
    assert!(!d.join("h.db").exists() || r.code == Some(5));
}

#[test]
fn history_import_reads_json_gz_named_and_in_folders() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let runs = series(d, |_, _| {});
    for i in 0..4 {
        let p = runs.join(format!("run{i}.json"));
        std::fs::write(runs.join(format!("run{i}.json.gz")), gz(&std::fs::read(&p).unwrap())).unwrap();
        std::fs::remove_file(p).unwrap();
    }
    let r = run(d, &["history", "import", "--db", "h.db", runs.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.out.contains("imported 8 runs"), "{r:?}");
    std::fs::write(d.join("one.json.gz"), gz(&serde_json::to_vec(&quick_value()).unwrap())).unwrap();
    let r = run(d, &["history", "import", "--db", "h2.db", "one.json.gz"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.out.contains("imported 1 run"), "{r:?}");
}

#[test]
fn folder_scans_do_not_follow_symlink_loops() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let runs = d.join("fleet/node1");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::copy(repo("tests/fixtures/h200-quick-run.json"), runs.join("r.json")).unwrap();
    std::os::unix::fs::symlink(d.join("fleet"), runs.join("loop")).unwrap();
    let r = run(d, &["history", "import", "--db", "h.db", "fleet"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.out.contains("imported 1 run into h.db"), "{r:?}");
    let r = run(d, &["fleet", "fleet", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap_or_else(|e| panic!("{e}: {r:?}"));
    let cards = v["groups"][0]["cards"].as_array().unwrap();
    assert_eq!(cards.len(), 1, "{r:?}");
    assert_eq!(cards[0]["runs"], 1, "one run, counted once: {r:?}");
    assert!(r.err.contains("loop: a symbolic link to a folder, not followed"), "{r:?}");
}

#[test]
fn bulk_inputs_with_values_that_are_not_finite_or_empty_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut v = quick_value();
    v["benchmarks"][0]["metrics"][0]["samples"] = serde_json::json!([]);
    std::fs::write(d.join("empty.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    let mut v = quick_value();
    v["benchmarks"][0]["metrics"][0]["summary"]["stdev"] = serde_json::json!(-1.0);
    std::fs::write(d.join("negative.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    let mut v = quick_value();
    v["wall_time_s"] = serde_json::json!(-5);
    std::fs::write(d.join("time.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    for (file, why) in
        [("empty.json", "no samples"), ("negative.json", "stdev = -1 is negative"), ("time.json", "is not a duration")]
    {
        for args in [vec!["fleet", file], vec!["history", "import", "--db", "h.db", file], vec!["calibrate", file]] {
            let r = run(d, &args);
            assert_one_error(&r, 5, why);
        }
    }
    assert!(!d.join("h.db").exists());
}

/// The quick run with each benchmark's telemetry set by `t(benchmark, sample)`, written to
/// `dir/name`; `created` moves its start time (another run).
fn quick_with(dir: &Path, name: &str, created: u64, t: impl Fn(usize, usize) -> SampleTelemetry) -> String {
    let mut doc = ResultsDocument::read(&repo("tests/fixtures/h200-quick-run.json")).unwrap();
    doc.created_unix_s += created;
    for (bi, b) in doc.benchmarks.iter_mut().enumerate() {
        b.telemetry = (0..b.metrics[0].samples.len()).map(|i| t(bi, i)).collect();
    }
    doc.write(&dir.join(name)).unwrap();
    name.to_string()
}

use gpubench::results::{ForeignProcess, ResultsDocument, SampleTelemetry};

#[test]
fn baseline_save_refuses_poisoned_runs_and_keeps_the_replaced_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let clean = quick_with(d, "clean.json", 0, |_, _| SampleTelemetry::default());
    let clean2 = quick_with(d, "clean2.json", 60, |_, _| SampleTelemetry::default());
    let beside = quick_with(d, "beside.json", 120, |b, i| SampleTelemetry {
        foreign_processes: if b == 1 && i == 2 {
            vec![ForeignProcess {
                pid: 4242,
                name: Some("python3".into()),
                used_mib: Some(874.0),
                ..Default::default()
            }]
        } else {
            Vec::new()
        },
        ..Default::default()
    });
    let hot = quick_with(d, "hot.json", 180, |_, i| SampleTelemetry { throttled: i % 2 == 0, ..Default::default() });
    let base = d.join("baselines/nvidia-h200-cc90-132sm-140gib/class.json");
    let r = run(d, &["baseline", "save", &clean, &clean2]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.err.contains("2 runs of 1 card"), "{r:?}");
    let saved = std::fs::read(&base).unwrap();
    for (args, why) in [
        (vec!["baseline", "save", &beside], "measured beside another GPU process: another process (pid 4242, python3"),
        (vec!["baseline", "save", &hot], "was throttled in"),
        (vec!["baseline", "save", &clean, &clean], "is given twice"),
        (vec!["baseline", "save", &clean, "--append"], "is given twice (or is already in the baseline)"),
    ] {
        let r = run(d, &args);
        assert_one_error(&r, 5, why);
        assert!(r.err.contains("--force saves anyway"), "{r:?}");
        assert_eq!(std::fs::read(&base).unwrap(), saved, "{args:?} changed the baseline");
    }
    // Another configuration replacing the class baseline.
    let other = ResultsDocument::read(&repo("tests/fixtures/h200-default-run.json")).unwrap();
    other.write(&d.join("default.json")).unwrap();
    let r = run(d, &["baseline", "save", "default.json"]);
    assert_one_error(&r, 5, "is not the baseline's (profile quick");
    assert_eq!(std::fs::read(&base).unwrap(), saved);
    // --force saves, says what it replaced, and keeps it.
    let r = run(d, &["baseline", "save", "default.json", "--force"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.err.contains("1 run of 1 card, replacing 2 runs of 1 card"), "{r:?}");
    assert!(r.err.contains("nvidia-h200-cc90-132sm-140gib/class.json.previous"), "{r:?}");
    assert_eq!(std::fs::read(d.join("baselines/nvidia-h200-cc90-132sm-140gib/class.json.previous")).unwrap(), saved);
    let r = run(d, &["baseline", "list"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(!r.out.contains(".previous"), "{r:?}");
    // ... and restore puts it back (the forced one becomes the previous).
    let forced = std::fs::read(&base).unwrap();
    let r = run(d, &["baseline", "restore", &clean]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.err.contains("restored the default baseline of nvidia-h200-cc90-132sm-140gib (2 runs of 1 card)"),
        "{r:?}"
    );
    assert_eq!(std::fs::read(&base).unwrap(), saved);
    assert_eq!(std::fs::read(d.join("baselines/nvidia-h200-cc90-132sm-140gib/class.json.previous")).unwrap(), forced);
    let r = run(d, &["baseline", "restore", "--name", "nothing", &clean]);
    assert_one_error(&r, 2, "no previous baseline to restore");
}

#[test]
fn fleet_save_baseline_refuses_statistics_that_would_not_be_finite() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("fleet/node1")).unwrap();
    for i in 0..2 {
        let mut doc = ResultsDocument::read(&repo("tests/fixtures/h200-quick-run.json")).unwrap();
        doc.created_unix_s += i;
        // Finite samples whose mean overflows: a baseline would hold `null` statistics.
        let m = &mut doc.benchmarks[0].metrics[0];
        m.samples.iter_mut().for_each(|v| *v = 1.5e308);
        m.summary.median = 1.5e308;
        m.summary.mean = 1.5e308;
        m.summary.min = 1.5e308;
        m.summary.max = 1.5e308;
        m.summary.stdev = 0.0;
        doc.write(&d.join(format!("fleet/node1/r{i}.json"))).unwrap();
    }
    std::fs::write(d.join("class.json"), b"keep me").unwrap();
    let r = run(d, &["fleet", "fleet", "--save-envelope", "class.json"]);
    assert_one_error(&r, 5, "refused to save");
    assert_eq!(std::fs::read(d.join("class.json")).unwrap(), b"keep me");
    // Clean runs are saved, and the file replaced is kept.
    std::fs::remove_dir_all(d.join("fleet")).unwrap();
    std::fs::create_dir_all(d.join("fleet/node1")).unwrap();
    quick_with(&d.join("fleet/node1"), "r0.json", 0, |_, _| SampleTelemetry::default());
    quick_with(&d.join("fleet/node1"), "r1.json", 1, |_, _| SampleTelemetry::default());
    let r = run(d, &["fleet", "fleet", "--save-envelope", "class.json"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(std::fs::read(d.join("class.json.previous")).unwrap(), b"keep me");
    gpubench::baseline::Baseline::read(&d.join("class.json")).unwrap();
    // A run beside another process is refused there too, unless --force.
    quick_with(&d.join("fleet/node1"), "r2.json", 2, |_, i| SampleTelemetry {
        foreign_processes: if i == 0 { vec![ForeignProcess { pid: 7, ..Default::default() }] } else { Vec::new() },
        ..Default::default()
    });
    let r = run(d, &["fleet", "fleet", "--save-envelope", "class.json"]);
    assert_one_error(&r, 5, "measured beside another GPU process");
    let r = run(d, &["fleet", "fleet", "--save-envelope", "class.json", "--force"]);
    assert_eq!(r.code, Some(0), "{r:?}");
}

#[test]
fn drain_commands_quote_every_value_and_refuse_forged_host_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let node = |folder: &str, host: &str, reason: &str| {
        let p = d.join("fleet").join(folder);
        std::fs::create_dir_all(&p).unwrap();
        let v = serde_json::json!({"schema": "gpubench.node/1", "host": host, "exit_code": 3, "reason": reason});
        std::fs::write(p.join("node.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    };
    node("a", "node1", "x'; touch /tmp/pwned-by-reason; echo '$(id)`id`");
    node("b", "node2;reboot", "no GPU");
    node("c", "node3", "bell\u{7} and\nnew line");
    // A raw control character: not JSON, repaired for just that file.
    std::fs::create_dir_all(d.join("fleet/e")).unwrap();
    std::fs::write(
        d.join("fleet/e/node.json"),
        b"{\"schema\":\"gpubench.node/1\",\"host\":\"node5\",\"exit_code\":3,\"reason\":\"tab\there\"}",
    )
    .unwrap();
    let r = run(d, &["fleet", "fleet", "--drain-commands"]);
    assert_eq!(r.code, Some(9), "{r:?}");
    let lines: Vec<&str> = r.out.lines().filter(|l| l.starts_with("scontrol")).collect();
    assert_eq!(lines.len(), 3, "{r:?}");
    assert!(lines.contains(&"scontrol update 'nodename=node1' state=drain 'reason=gpubench: run failed (exit 3): x ; touch /tmp/pwned-by-reason; echo  $(id)`id`'"), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("scontrol update 'nodename=node3'") && l.contains("bell  and new line")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("scontrol update 'nodename=node5'") && l.contains("tab here")),
        "{lines:?}"
    );
    assert!(!r.out.contains("reboot"), "{r:?}");
    assert!(r.err.contains("node status left out: host \"node2;reboot\" is not a valid host name"), "{r:?}");
    // What sh makes of the lines: each command's words, nothing run.
    let script: String = lines.iter().map(|l| format!("set -- {}; printf '%s|' \"$@\"; echo\n", l)).collect();
    let o = Command::new("sh").arg("-c").arg(&script).current_dir(d).output().unwrap();
    let words = String::from_utf8_lossy(&o.stdout);
    assert!(words.contains("scontrol|update|nodename=node1|state=drain|reason=gpubench: run failed (exit 3): x ; touch /tmp/pwned-by-reason; echo  $(id)`id`|"), "{words}");
    assert!(!Path::new("/tmp/pwned-by-reason").exists());
}

#[test]
fn forged_folder_names_get_no_drain_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Three cards in folders named by anyone who can write to the shared folder; the third is
    // 20 % slow, an outlier whose "host" is a shell command.
    let hosts = ["good1", "good2", "$(reboot)"];
    for (i, h) in hosts.iter().enumerate() {
        let folder = d.join("fleet").join(h);
        std::fs::create_dir_all(&folder).unwrap();
        let mut doc = ResultsDocument::read(&repo("tests/fixtures/h200-quick-run.json")).unwrap();
        doc.gpu.uuid = format!("GPU-0000000{i}-0000-0000-0000-000000000000");
        if i == 2 {
            for b in &mut doc.benchmarks {
                for m in &mut b.metrics {
                    m.samples.iter_mut().for_each(|v| *v *= 0.5);
                    m.summary = gpubench::results::Summary::of(&m.samples);
                }
            }
        }
        doc.write(&folder.join("r.json")).unwrap();
    }
    let r = run(d, &["fleet", "fleet", "--drain-commands"]);
    assert_eq!(r.code, Some(9), "{r:?}");
    assert!(r.out.lines().filter(|l| l.starts_with("scontrol")).all(|l| !l.contains("reboot")), "{r:?}");
    assert_one_error(&r, 9, "no drain command for \"$(reboot)\": not a valid host name");
}

#[test]
fn chipmap_writes_only_inside_its_out_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let gz = repo("tests/fixtures/recorded/h100-default.json.gz");
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(gz).unwrap()).read_to_end(&mut text).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&text).unwrap();
    // A metric name that climbs out of --out.
    let b = v["benchmarks"].as_array_mut().unwrap().iter_mut().find(|b| b["id"] == "latency/cg/4MiB").unwrap();
    b["sm_maps"][0]["metric"] = serde_json::json!("../../escaped");
    std::fs::write(d.join("run.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    std::fs::create_dir_all(d.join("a/b")).unwrap();
    let r = run(d, &["chipmap", "run.json", "--benchmark", "^latency/cg/4MiB$", "--out", "a/b/maps"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let escaped: Vec<_> = walk_files(d).into_iter().filter(|p| p.to_string_lossy().contains("escaped")).collect();
    assert!(!escaped.is_empty(), "the map is written");
    for p in escaped {
        assert!(p.starts_with(d.join("a/b/maps")), "{} is outside --out", p.display());
    }
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            out.extend(walk_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}
