//! The upgrade job without a GPU: machine-code attribution on committed SASS listings (two
//! versions of one kernel, both listing formats, the recorded dissect dump), and the A/B
//! judgement of recorded runs (two runs of a committed baseline card as A; copies of them,
//! shifted or with another cubin, as B), through the job's folder as `--from` reads it.

#[path = "support/junit_xml.rs"]
mod junit_xml;

use std::path::{Path, PathBuf};

use gpubench::baseline::{RunsFile, Store};
use gpubench::config::Config;
use gpubench::error::exit;
use gpubench::results::{ResultsDocument, Summary};
use gpubench::upgrade::code::{CodeVerdict, FunctionCode, compare_function, functions};
use gpubench::upgrade::judge::Outcome;
use gpubench::upgrade::loops::{inner_loop, innermost};
use gpubench::upgrade::{judge_folder, report, sass};
use gpubench::verdict::{FailOn, Verdict};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(root().join("tests/fixtures/sass/upgrade").join(name)).unwrap()
}

fn function<'a>(fs: &'a [FunctionCode], name: &str) -> &'a FunctionCode {
    fs.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn the_triad_loop_is_found_and_counted_in_both_listing_formats() {
    let a = functions(&fixture("a/stream.sass"));
    assert_eq!(a.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["stream_triad", "stream_scale", "stream_copy"]);
    let triad = function(&a, "stream_triad").inner.clone().expect("a loop");
    let count = |c: &str| triad.classes.get(c).copied().unwrap_or(0);
    assert_eq!(count("load global 128-bit"), 2);
    assert_eq!(count("store global 128-bit"), 1);
    assert_eq!(count("float"), 2);
    assert_eq!(count("control"), 1, "the backward branch; the EXIT and the trap lie after the loop");
    assert_eq!(triad.len(), 15);
    assert_eq!(triad.code.last().unwrap(), "@!P0 BRA +0x0", "{:?}", triad.code);

    // nvdisasm prints the same code with labels: the same loop, instruction for instruction.
    let nv = functions(&fixture("nvdisasm-stream_triad.sass"));
    assert_eq!(nv.len(), 1);
    assert_eq!(nv[0].inner.as_ref(), Some(&triad));
}

#[test]
fn two_versions_of_a_kernel_compare_by_their_inner_loops() {
    let (a, b) = (functions(&fixture("a/stream.sass")), functions(&fixture("b/stream.sass")));
    let triad = compare_function(function(&a, "stream_triad"), function(&b, "stream_triad"));
    assert_eq!(triad.verdict, CodeVerdict::LoopChanged);
    assert_eq!(triad.loop_len, Some((15, 18)));
    assert!(triad.delta.contains(&("load global 128-bit".into(), 2, 0)), "{:?}", triad.delta);
    assert!(triad.delta.contains(&("load global 64-bit".into(), 0, 4)), "{:?}", triad.delta);
    assert!(triad.delta.contains(&("store global 64-bit".into(), 0, 2)), "{:?}", triad.delta);
    assert!(triad.line().starts_with("stream_triad: inner loop 15 -> 18 instructions: "), "{}", triad.line());
    // The scale kernel's prologue grew by two instructions: its loop moved, and reads the same.
    let scale = compare_function(function(&a, "stream_scale"), function(&b, "stream_scale"));
    assert_eq!(scale.verdict, CodeVerdict::LoopIdentical);
    let copy = compare_function(function(&a, "stream_copy"), function(&b, "stream_copy"));
    assert_eq!(copy.verdict, CodeVerdict::Identical);
}

/// `dram_read_u8_h2` as NVRTC 13.0 (a) and 12.9 (b) compiled it for sm_90 on an H200: the two
/// differ by one `@!P0 NOP` in the epilogue, before block 0's barrier. After the kernel's `EXIT`
/// lies the slow path of the warp-shuffle reduction's `BRA.DIV`, which branches back into the
/// epilogue: a return, not a loop. The streaming loop (eight 128-bit loads) is the inner loop,
/// the same on both sides.
#[test]
fn a_branch_back_from_code_after_exit_is_not_the_inner_loop() {
    let (a, b) = (functions(&fixture("a/dram_read_u8_h2.sass")), functions(&fixture("b/dram_read_u8_h2.sass")));
    let l = function(&a, "dram_read_u8_h2").inner.clone().expect("a loop");
    assert_eq!(l.classes.get("load global 128-bit NA.LTC256B"), Some(&8), "{:?}", l.classes);
    assert!(!l.code.iter().any(|c| c.starts_with("EXIT") || c.contains("SHFL")), "{:?}", l.code);
    let read = compare_function(function(&a, "dram_read_u8_h2"), function(&b, "dram_read_u8_h2"));
    assert_eq!(read.verdict, CodeVerdict::LoopIdentical, "{}", read.line());
    assert_eq!(read.loop_len, Some((l.len(), l.len())));
}

#[test]
fn the_recorded_dissect_listing_has_one_timed_load_in_each_chase_loop() {
    let path = root().join("tests/fixtures/sass/sm_90-dissect.sass.gz");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()), &mut text)
        .unwrap();
    let fs = sass::parse(&text);
    assert_eq!(fs.len(), 15);
    for (name, load) in [
        ("dissect_hist_ca", "load global 32-bit STRONG.SM"),
        ("dissect_hist_cg", "load global 32-bit STRONG.GPU"),
        ("dissect_hist_nc", "load global 32-bit CONSTANT"),
    ] {
        let f = fs.iter().find(|f| f.name == name).unwrap();
        assert!(!innermost(f).is_empty(), "{name}: no loop");
        let l = inner_loop(f).unwrap();
        // The timed chase (unrolled by four), not the longer untimed warm-up loop before it.
        let loads: u32 = l.classes.iter().filter(|(c, _)| c.starts_with("load global")).map(|(_, n)| n).sum();
        assert_eq!((loads, l.classes.get(load).copied()), (4, Some(4)), "{name}: {:?}", l.classes);
        assert!(l.code.iter().any(|i| i.contains("SR_CLOCKLO")), "{name}");
        // The trap after EXIT (a branch to itself) is no loop.
        assert!(innermost(f).iter().all(|s| s.end > s.start), "{name}");
    }
}

/// Two runs of the first card of the committed H100 baseline.
fn card_runs() -> Vec<ResultsDocument> {
    let runs = RunsFile::read(&root().join("baselines/nvidia-h100-80gb-hbm3-cc90-132sm-79gib/class.json.xz"))
        .unwrap()
        .into_runs();
    let uuid = runs[0].gpu.uuid.clone();
    let card: Vec<ResultsDocument> = runs.into_iter().filter(|r| r.gpu.uuid == uuid).collect();
    assert_eq!(card.len(), 2);
    card
}

/// Multiplies every sample of `benchmark:metric` by `factor`.
fn shift(runs: &mut [ResultsDocument], benchmark: &str, metric: &str, factor: f64) {
    for r in runs {
        let b = r.benchmarks.iter_mut().find(|b| b.id == benchmark).unwrap();
        let m = b.metrics.iter_mut().find(|m| m.name == metric).unwrap();
        m.samples.iter_mut().for_each(|v| *v *= factor);
        m.summary = Summary::of(&m.samples);
        if let Some(n) = &mut m.normalized {
            n.samples.iter_mut().for_each(|v| *v *= factor);
            n.summary = Summary::of(&n.samples);
        }
    }
}

/// Gives `source`'s kernels another cubin hash in every benchmark.
fn recompile(runs: &mut [ResultsDocument], source: &str) {
    for k in runs.iter_mut().flat_map(|r| &mut r.benchmarks).flat_map(|b| &mut b.kernels) {
        if k.source == source {
            k.cubin_sha256 = "0".repeat(64);
        }
    }
}

/// A job's folder with `a` and `b` as the runs of their card.
fn job(dir: &Path, a: &[ResultsDocument], b: &[ResultsDocument]) -> PathBuf {
    let card = dir.join("runs").join(&a[0].gpu.uuid);
    std::fs::create_dir_all(&card).unwrap();
    for (label, runs) in [("a", a), ("b", b)] {
        for (i, r) in runs.iter().enumerate() {
            r.write(&card.join(format!("{label}-{}.json", i + 1))).unwrap();
        }
    }
    dir.to_path_buf()
}

fn judged(dir: &Path, fail_on: FailOn) -> gpubench::upgrade::UpgradeReport {
    let config = Config::discover(root()).unwrap();
    judge_folder(dir, &config.rule, fail_on, &Store::new(dir.join("baselines"))).unwrap()
}

#[test]
fn an_a_a_job_passes() {
    let dir = tempfile::tempdir().unwrap();
    let a = card_runs();
    let r = judged(&job(dir.path(), &a, &a.clone()), FailOn::default());
    let c = r.cards[0].comparison.as_ref().unwrap();
    assert_eq!(c.counts.regressed, 0, "{}", c.counts.line());
    assert_eq!(r.outcome, Outcome::Pass);
    assert_eq!(r.exit_code(), exit::OK);
    assert!(r.cards[0].kernels.iter().all(|k| k.verdict == CodeVerdict::Identical));
    for f in ["upgrade.json", "upgrade.md", "upgrade-junit.xml"] {
        assert!(dir.path().join(f).is_file(), "{f}");
    }
}

#[test]
fn a_slower_b_with_the_same_cubins_is_not_a_compiler_change() {
    let dir = tempfile::tempdir().unwrap();
    let a = card_runs();
    let mut b = a.clone();
    shift(&mut b, "stream/triad", "bandwidth", 0.85);
    let r = judged(&job(dir.path(), &a, &b), FailOn::default());
    let card = &r.cards[0];
    let m = card.comparison.as_ref().unwrap().metric("stream/triad", "bandwidth").unwrap();
    assert_eq!(m.verdict, Verdict::Regressed, "{}", m.reason);
    let code = card.code_of("stream/triad:bandwidth").unwrap();
    assert_eq!(code.line, "machine code identical: not a compiler change");
    assert_eq!(r.outcome, Outcome::RegressedSameCode);
    assert_eq!(r.exit_code(), exit::REGRESSION_SAME_CODE);

    let json: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
    let metrics = json["cards"][0]["comparison"]["metrics"].as_array().unwrap();
    assert!(metrics.iter().all(|m| m["code"]["verdict"].is_string()), "a code field on every metric");
    let triad = metrics.iter().find(|m| m["benchmark"] == "stream/triad").unwrap();
    assert_eq!(triad["code"]["verdict"], "identical");
    let read = junit_xml::cases(&gpubench::report::junit::upgrade(&r));
    assert_eq!(read.len(), r.cards[0].comparison.as_ref().unwrap().metrics.len());
    let triad = read.iter().find(|c| c.name == "stream/triad:bandwidth").unwrap();
    assert_eq!(triad.outcome, "failure:REGRESSED_SAME_CODE");
    assert_eq!(junit_xml::tally(&read, "failure:REGRESSED_SAME_CODE"), 1);
    // Hostile text in a card's name and a reason stays text.
    let mut hostile = r.clone();
    hostile.cards[0].name = junit_xml::NASTY.into();
    let m = hostile.cards[0].comparison.as_mut().unwrap().metrics.iter_mut().find(|m| m.benchmark == "stream/triad");
    m.unwrap().reason = junit_xml::NASTY.into();
    let xml = gpubench::report::junit::upgrade(&hostile);
    let read = junit_xml::cases(&xml);
    let triad = read.iter().find(|c| c.name == "stream/triad:bandwidth").unwrap();
    assert!(triad.outcome == "failure:REGRESSED_SAME_CODE" && junit_xml::survives(&triad.message), "{triad:?}");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert!(junit_xml::survives(
        doc.descendants().find(|n| n.attribute("name") == Some("gpu")).unwrap().attribute("value").unwrap()
    ));
    assert!(report::markdown(&r).contains("machine code identical: not a compiler change"));
    let text = report::terminal(&r, false);
    assert!(text.contains("│ code") || text.contains("code "), "{text}");
    assert!(text.contains("upgrade: REGRESSED, machine code identical"), "{text}");
}

#[test]
fn a_slower_b_with_another_cubin_is_a_code_change_named_by_its_inner_loop() {
    let a = card_runs();
    let mut b = a.clone();
    shift(&mut b, "stream/triad", "bandwidth", 0.85);
    recompile(&mut b, "stream.cu");

    // Without listings: the cubin hashes differ, nothing says where.
    let dir = tempfile::tempdir().unwrap();
    let r = judged(&job(dir.path(), &a, &b), FailOn::default());
    let code = r.cards[0].code_of("stream/triad:bandwidth").unwrap();
    assert_eq!(code.verdict, CodeVerdict::Changed, "{}", code.line);
    assert_eq!(r.exit_code(), exit::REGRESSION);
    let read = junit_xml::cases(&gpubench::report::junit::upgrade(&r));
    assert_eq!(junit_xml::tally(&read, "failure:REGRESSED_CODE_CHANGED"), 1);

    // With both stacks' listings: the triad's inner loop changed; the scale kernel's did not.
    for side in ["a", "b"] {
        let d = dir.path().join("code/sm_90").join(side);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("stream.sass"), fixture(&format!("{side}/stream.sass"))).unwrap();
    }
    let r = judged(dir.path(), FailOn::default());
    let code = r.cards[0].code_of("stream/triad:bandwidth").unwrap();
    assert_eq!(code.verdict, CodeVerdict::LoopChanged);
    assert_eq!(code.kernels, ["stream_triad"]);
    assert!(code.line.contains("load global 128-bit 2 -> 0"), "{}", code.line);
    assert_eq!(r.cards[0].code_of("stream/scale:bandwidth").unwrap().verdict, CodeVerdict::LoopIdentical);
    assert_eq!(r.cards[0].code_of("stream/copy:bandwidth").unwrap().verdict, CodeVerdict::Identical);
    assert_eq!(r.exit_code(), exit::REGRESSION);
    assert!(r.code_by.starts_with("SASS"), "{}", r.code_by);

    // A listing compiled from another cubin than the runs loaded is not used, and said so.
    let mut prov = a[0].benchmarks.iter().flat_map(|b| &b.kernels).find(|k| k.source == "stream.cu").unwrap().clone();
    prov.cubin_sha256 = "1".repeat(64);
    std::fs::write(dir.path().join("code/sm_90/a/provenance.json"), serde_json::to_vec(&[prov]).unwrap()).unwrap();
    let r = judged(dir.path(), FailOn::default());
    assert_eq!(r.cards[0].code_of("stream/triad:bandwidth").unwrap().verdict, CodeVerdict::Changed);
    assert!(r.notes.iter().any(|n| n.contains("stream.cu are not of the cubins the runs loaded")), "{:?}", r.notes);
}

#[test]
fn a_card_without_runs_of_a_stack_is_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    let a = card_runs();
    let r = judged(&job(dir.path(), &a, &[]), FailOn::default());
    assert_eq!(r.outcome, Outcome::NotJudged);
    assert_eq!(r.exit_code(), exit::NOT_JUDGED);
    assert!(r.cards[0].not_judged.as_deref().unwrap().contains("no runs of stack B"));
    let read = junit_xml::cases(&gpubench::report::junit::upgrade(&r));
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].outcome, "error:NOT_JUDGED");
    assert!(read[0].message.contains("no runs of stack B"), "{:?}", read[0]);
}

/// A stack whose CLI is a script: it logs its stack, folder and loader path, and copies the
/// recorded run named like its results file (`a-1.json`, ...) from `$RUNS`.
fn fake_archive(dir: &Path) -> PathBuf {
    let root = dir.join("fake-archive");
    std::fs::create_dir_all(root.join("bin")).unwrap();
    let cli = root.join("bin/cargo-gpubench");
    std::fs::write(
        &cli,
        "#!/bin/sh\nout=\"\"\nwhile [ $# -gt 0 ]; do case $1 in --output) out=$2; shift;; esac; shift; done\n\
         echo \"$STACK $(basename $out) $(pwd) ${LD_LIBRARY_PATH%%:*}\" >> \"$RUNS/log\"\n\
         cp \"$RUNS/$(basename $out)\" \"$out\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&cli).status().unwrap();
    std::fs::write(
        root.join("manifest.json"),
        r#"{"schema":"gpubench.archive/1","tool_version":"0.1.0","benches":[],"cli":"bin/cargo-gpubench"}"#,
    )
    .unwrap();
    root
}

#[test]
fn the_job_alternates_the_stacks_on_each_card_and_judges_what_they_wrote() {
    use gpubench::upgrade::job::{self, JobObserver, JobRequest};
    use gpubench::upgrade::rounds::Card;
    use gpubench::upgrade::stacks::StackSpec;

    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("recorded");
    std::fs::create_dir_all(&runs).unwrap();
    let a = card_runs();
    let mut b = a.clone();
    shift(&mut b, "stream/triad", "bandwidth", 0.85);
    for (i, (ra, rb)) in a.iter().zip(&b).enumerate() {
        ra.write(&runs.join(format!("a-{}.json", i + 1))).unwrap();
        rb.write(&runs.join(format!("b-{}.json", i + 1))).unwrap();
    }
    let archive = fake_archive(dir.path());
    let lib = dir.path().join("nvrtc12/libnvrtc.so.12");
    std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
    std::fs::write(&lib, b"").unwrap();
    let env = |s: &str| vec![("STACK".to_string(), s.to_string()), ("RUNS".into(), runs.display().to_string())];
    let req = JobRequest {
        stacks: [
            StackSpec { label: "A".into(), archive: Some(archive.clone()), nvrtc: Some(lib), env: env("A") },
            StackSpec { label: "B".into(), archive: Some(archive), nvrtc: None, env: env("B") },
        ],
        before: None,
        rounds: 2,
        device: gpubench::runner::devices::DeviceSelection::One(0),
        out: dir.path().join("job"),
        run_args: vec!["--quick".into()],
        manifest_path: None,
        benches: Vec::new(),
        cargo: Default::default(),
        disassemble: false,
    };
    struct Count(usize);
    impl JobObserver for Count {
        fn run(&mut self, o: &gpubench::upgrade::rounds::RunOutcome) {
            assert_eq!(o.code, 0, "{:?}", o.reason);
            self.0 += 1;
        }
    }
    let mut seen = Count(0);
    let cards = [Card { ordinal: 0, uuid: a[0].gpu.uuid.clone() }];
    let config = Config::discover(root()).unwrap();
    let store = Store::new(dir.path().join("baselines"));
    let r = job::run_on(&req, &cards, &["sm_90".into()], &config.rule, FailOn::default(), &store, &mut seen).unwrap();
    assert_eq!(seen.0, 4);
    let log = std::fs::read_to_string(runs.join("log")).unwrap();
    let lines: Vec<Vec<&str>> = log.lines().map(|l| l.split(' ').collect()).collect();
    let order: Vec<String> = lines.iter().map(|l| format!("{} {}", l[0], l[1])).collect();
    assert_eq!(order, ["A a-1.json", "B b-1.json", "A a-2.json", "B b-2.json"]);
    let card_dir = std::fs::canonicalize(dir.path().join("job/runs").join(&a[0].gpu.uuid)).unwrap();
    assert!(lines.iter().all(|l| Path::new(l[2]) == card_dir), "{log}");
    // Stack A's runs load its NVRTC first; B's see the loader path as it was.
    let links = Path::new(lines[0][3]);
    assert!(links.ends_with("stack-a/nvrtc") && links.join("libnvrtc.so").exists(), "{log}");
    assert!(!lines[1][3].ends_with("nvrtc"), "{log}");

    assert_eq!(r.exit_code(), exit::REGRESSION_SAME_CODE);
    assert!(r.stacks[0].description.contains("NVRTC"), "{}", r.stacks[0].description);
    assert!(r.code_by.contains("--no-disassemble"), "{}", r.code_by);
    assert!(dir.path().join("job/stacks.json").is_file() && dir.path().join("job/upgrade.json").is_file());
}

/// The default of three rounds, from measured power: on cards recorded three times
/// (`tests/corpus/`), A/A with three runs a side leaves fewer metrics INSENSITIVE (detectable
/// effect above 10 %) than two runs a side.
#[test]
fn three_rounds_see_what_two_cannot() {
    use gpubench::verdict::{Side, compare, corpus};
    let rule = Config::discover(root()).unwrap().rule;
    let class = "nvidia-h100-80gb-hbm3-cc90-132sm-79gib";
    for card in ["7caff7ad", "fccaff75", "5f990d59"] {
        let path = root().join("tests/corpus").join(class).join(format!("runs-GPU-{card}.tar.xz"));
        let mut c = corpus::gather(&[path]).unwrap();
        corpus::split_chosen(&mut c.runs);
        let uuid = c.runs[0].1.gpu.uuid.clone();
        let runs: Vec<ResultsDocument> =
            c.runs.into_iter().filter(|(_, r)| r.gpu.uuid == uuid).map(|(_, r)| r).collect();
        assert_eq!(runs.len(), 3, "{class}");
        let insensitive = |n: usize| {
            let k = compare(Side::of("A", &runs[..n]), Side::of("B", &runs[..n]), &rule).unwrap();
            assert_eq!(k.counts.regressed, 0);
            (k.counts.insensitive, k.metrics.len())
        };
        let ((two, metrics), (three, _)) = (insensitive(2), insensitive(3));
        println!("{uuid}: of {metrics} metrics, {three} INSENSITIVE with three runs a side, {two} with two");
        assert!(three <= 10 && three <= two, "{class} {uuid}: {two} INSENSITIVE with two rounds, {three} with three");
    }
    assert_eq!(gpubench::upgrade::DEFAULT_ROUNDS, 3);
}
