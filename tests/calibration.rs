//! Calibration of the verdict rule on the committed runs. The newest corpus,
//! `results/*/runs-l2-copies-2026-11-24.tar.xz` (three H100s and three H200s, L2 reads over
//! copies of their footprint), is judged with the repository's gpubench.toml; the runs of
//! atomics in batches before it (`runs-batched-atomics`, `runs-new-cards`, `runs-boards`) with
//! tests/fixtures/gpubench-before-l2-copies.toml; the older ones (16
//! default-profile runs on four H100 cards, `runs-GPU-*.tar.xz`; 18 on three H200 cards,
//! `aa/set{1,2,3}-runs.tar.gz`; the five- and four-card sets of 2026-11-24), recorded with one
//! launch per atomics sample, with the configuration of their time
//! (tests/fixtures/gpubench-before-atomics-batches.toml). The detection levels asserted are
//! those the rule reaches on these runs (README.md, "Verdicts"), held so that a change of the
//! logic that loses power fails here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gpubench::config::Config;
use gpubench::report::calibration_markdown;
use gpubench::results::{Better, ResultsDocument};
use gpubench::stats::median;
use gpubench::verdict::calibrate::{Calibration, LevelCalibration, MetricClass, SHIFTS, calibrate, shifted};
use gpubench::verdict::corpus::gather;
use gpubench::verdict::{Side, Verdict, compare};

const H100: &str = "results/nvidia-h100-80gb-hbm3-cc90-132sm-79gib";
const H200: &str = "results/nvidia-h200-cc90-132sm-140gib";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The class baseline committed before the global atomic chains ran on every SM (2026-11-24):
/// every run of [`L2_COPIES`] and [`L2_COPIES_MORE`] (three cards and two), and on H100 the
/// class check of `GPU-bcc71395`, oldest first. The tests written against it judge the runs of
/// its time.
fn baseline_before_every_sm_chains(class_dir: &str) -> Vec<ResultsDocument> {
    let dir = root().join(class_dir);
    let mut paths = vec![dir.join(L2_COPIES), dir.join(L2_COPIES_MORE)];
    if class_dir == H100 {
        paths.push(dir.join("class-check-l2-copies-GPU-bcc71395/GPU-bcc71395-run1.json.gz"));
    }
    let mut runs = documents(&paths);
    runs.sort_by_key(|r| r.created_unix_s);
    assert_eq!(runs.len(), if class_dir == H100 { 14 } else { 16 }, "{class_dir}");
    runs
}

/// The four H100s measured before atomics used 256 placements and DRAM streams flat grids.
const H100_FIRST_CARDS: [&str; 4] = ["19abbdb9", "64cff863", "6d44c635", "9b6aa616"];

fn h100_paths() -> Vec<PathBuf> {
    H100_FIRST_CARDS.iter().map(|c| root().join(H100).join(format!("runs-GPU-{c}.tar.xz"))).collect()
}

fn h200_paths() -> Vec<PathBuf> {
    let aa = root().join(H200).join("aa");
    (1..=3).map(|i| aa.join(format!("set{i}-runs.tar.gz"))).collect()
}

/// The repository's gpubench.toml, for runs recorded with the current code.
fn config() -> Config {
    Config::load(&root().join("gpubench.toml")).unwrap()
}

/// The configuration in force for runs recorded before the L2 reads rotated over copies of
/// their footprint (the fixture's header says more): every corpus below but the newest.
fn config_before_l2_copies() -> Config {
    Config::load(&root().join("tests/fixtures/gpubench-before-l2-copies.toml")).unwrap()
}

/// The configuration in force for runs recorded before the atomics kernels ran in batches of
/// launches: their atomics' measured run and card spreads (the fixture's header says more).
fn config_before_atomics_batches() -> Config {
    Config::load(&root().join("tests/fixtures/gpubench-before-atomics-batches.toml")).unwrap()
}

/// Calibration of runs recorded before atomics batches, with the configuration of their time.
fn committed_calibration(paths: &[PathBuf]) -> Calibration {
    calibration(paths, &config_before_atomics_batches())
}

/// Calibration of runs recorded after atomics batches and before the L2 copies, with the
/// configuration of their time.
fn current_calibration(paths: &[PathBuf]) -> Calibration {
    calibration(paths, &config_before_l2_copies())
}

/// Calibration of the runs in `paths` with `config`'s rule.
fn calibration(paths: &[PathBuf], config: &Config) -> Calibration {
    calibrate(gather(paths).unwrap().runs, &config.rule).unwrap()
}

/// The results documents in `paths` (files, folders, archives, baselines).
fn documents(paths: &[PathBuf]) -> Vec<ResultsDocument> {
    gather(paths).unwrap().runs.into_iter().map(|(_, r)| r).collect()
}

/// `run` judged against the runs of `reference`: the comparison and the metrics it calls
/// REGRESSED.
fn judged(
    reference: &[ResultsDocument],
    run: &ResultsDocument,
    rule: &gpubench::verdict::Rule,
) -> (gpubench::verdict::Comparison, Vec<String>) {
    let c = compare(
        Side { label: "baseline", runs: reference },
        Side { label: "candidate", runs: std::slice::from_ref(run) },
        rule,
    )
    .unwrap();
    let regressed = c.metrics.iter().filter(|m| m.verdict == Verdict::Regressed).map(|m| m.key()).collect();
    (c, regressed)
}

fn at_least(level: &LevelCalibration, class: MetricClass, shift: f64, min: f64, what: &str) {
    let d = level.detected(class, shift).unwrap();
    assert!(d >= min, "{what}: {} at {}: {d} < {min}", class.label(), shift);
}

#[test]
fn h200_runs_meet_the_calibration_targets() {
    let c = committed_calibration(&h200_paths());
    println!("{}", calibration_markdown(&c));
    assert_eq!(c.cards.len(), 3, "{:?}", c.cards);
    assert!(c.cards.values().all(|&n| n == 6), "{:?}", c.cards);
    let same = c.same_card.as_ref().unwrap();
    assert_eq!(same.comparisons, 18);
    assert_eq!(same.aa.regressed, 0, "same-card A/A false alarms: {:?}", same.false_alarms);
    for class in [MetricClass::Latency, MetricClass::Bandwidth, MetricClass::Instructions, MetricClass::SharedMemory] {
        at_least(same, class, 0.03, 0.9, "same card");
    }
    // Target 90 % at 5 %, not reached: seven atomics whose addresses hash to a few L2 slices
    // move by 1.5-3.5 % (sd) from run to run on one card (README, "Verdicts").
    at_least(same, MetricClass::Atomics, 0.05, 0.83, "same card");
    at_least(same, MetricClass::Atomics, 0.10, 0.9, "same card");
    let class = c.class.as_ref().unwrap();
    assert_eq!(class.comparisons, 18);
    assert_eq!(class.aa.regressed, 0, "class A/A false alarms: {:?}", class.false_alarms);
    // Two reference cards per comparison; where cards agree a 5 % shift is caught.
    for class_name in [MetricClass::Instructions, MetricClass::SharedMemory] {
        at_least(class, class_name, 0.05, 0.9, "class");
    }
}

#[test]
fn h100_runs_meet_the_calibration_targets() {
    let c = committed_calibration(&h100_paths());
    println!("{}", calibration_markdown(&c));
    assert_eq!(c.cards.len(), 4, "{:?}", c.cards);
    assert_eq!(c.cards.values().sum::<usize>(), 16, "{:?}", c.cards);
    let same = c.same_card.as_ref().unwrap();
    assert_eq!(same.comparisons, 16);
    assert_eq!(same.aa.regressed, 0, "same-card A/A false alarms: {:?}", same.false_alarms);
    for class in [MetricClass::Latency, MetricClass::Bandwidth, MetricClass::Instructions, MetricClass::SharedMemory] {
        at_least(same, class, 0.03, 0.9, "same card");
    }
    // Target 90 % at 5 %, not reached: on these cards eleven atomics move by 1-3.3 % (sd) from
    // run to run, where a 99 % band cannot tell a 5 % shift from noise (README, "Verdicts").
    at_least(same, MetricClass::Atomics, 0.05, 0.6, "same card");
    at_least(same, MetricClass::Atomics, 0.10, 0.75, "same card");
    let class = c.class.as_ref().unwrap();
    assert_eq!(class.comparisons, 16);
    assert_eq!(class.aa.regressed, 0, "class A/A false alarms: {:?}", class.false_alarms);
    for class_name in [MetricClass::Bandwidth, MetricClass::Instructions, MetricClass::SharedMemory] {
        at_least(class, class_name, 0.05, 0.9, "class");
    }
    // Eight DRAM-size latency chases were recorded with two versions of the benchmark
    // (placement all_sms on two cards, each_sm on the other two): not comparable, INCONCLUSIVE.
    at_least(class, MetricClass::Latency, 0.05, 0.6, "class");
}

/// `run` with the samples of the metrics of `family` moved by `shift` in the bad direction.
fn shift_family(run: &ResultsDocument, family: &str, shift: f64) -> ResultsDocument {
    let mut d = run.clone();
    for b in d.benchmarks.iter_mut().filter(|b| b.family == family) {
        for m in &mut b.metrics {
            let f = if m.better == Better::Lower { 1.0 + shift } else { 1.0 - shift };
            m.samples.iter_mut().for_each(|v| *v *= f);
            m.summary = gpubench::results::Summary::of(&m.samples);
            if let Some(n) = &mut m.normalized {
                n.samples.iter_mut().for_each(|v| *v *= f);
            }
        }
    }
    d
}

#[test]
fn injected_latency_and_atomics_shifts_are_caught() {
    // One H100 card with six runs: the five oldest are the baseline, the newest the candidate,
    // its latencies 3 % slower and its atomics 5 % slower.
    let mut runs: Vec<ResultsDocument> = gather(&[root().join(H100).join("runs-GPU-6d44c635.tar.xz")])
        .unwrap()
        .runs
        .into_iter()
        .map(|(_, r)| r)
        .filter(|r| r.settings.profile == "default")
        .collect();
    runs.sort_by_key(|r| r.created_unix_s);
    assert_eq!(runs.len(), 6);
    let candidate = shift_family(&shift_family(&runs[5], "latency", 0.03), "atomics", 0.05);
    let rule = config_before_atomics_batches().rule;
    let c = compare(Side { label: "baseline", runs: &runs[..5] }, Side { label: "new", runs: &[candidate] }, &rule)
        .unwrap();
    let share = |family: &str| {
        let m: Vec<_> = c.metrics.iter().filter(|m| m.family == family).collect();
        m.iter().filter(|m| m.verdict == Verdict::Regressed).count() as f64 / m.len() as f64
    };
    assert!(share("latency") >= 0.95, "latency at 3 %: {}", share("latency"));
    assert!(share("atomics") >= 0.6, "atomics at 5 %: {}", share("atomics"));
    let others = c.metrics.iter().filter(|m| m.family != "latency" && m.family != "atomics");
    assert!(others.clone().all(|m| m.verdict != Verdict::Regressed), "{:?}", c.counts);
}

/// Issue 13: coefficient of variation of the run medians of one card, raw and clock-normalised,
/// per family (median over the metrics that have both). Run with `-- --nocapture` to read it.
#[test]
fn raw_and_clock_normalised_run_to_run_spread() {
    for (name, paths) in [("H100", h100_paths()), ("H200", h200_paths())] {
        let corpus = gather(&paths).unwrap();
        // family -> metric -> card -> (raw medians, normalised medians)
        type Medians = BTreeMap<String, (Vec<f64>, Vec<f64>)>;
        let mut by: BTreeMap<String, BTreeMap<String, Medians>> = BTreeMap::new();
        for (_, run) in
            corpus.runs.iter().filter(|(_, r)| r.settings.profile == "default" && r.settings.filter.is_none())
        {
            for b in &run.benchmarks {
                for m in &b.metrics {
                    let Some(n) = &m.normalized else { continue };
                    let (Some(r), Some(v)) = (median(&m.samples), median(&n.samples)) else { continue };
                    let e = by
                        .entry(b.family.clone())
                        .or_default()
                        .entry(format!("{}:{}", b.id, m.name))
                        .or_default()
                        .entry(run.gpu.uuid.clone())
                        .or_default();
                    e.0.push(r);
                    e.1.push(v);
                }
            }
        }
        // Pooled coefficient of variation over the cards with two or more runs.
        let cv = |cards: &Medians, pick: fn(&(Vec<f64>, Vec<f64>)) -> &Vec<f64>| {
            let (mut ss, mut df) = (0.0, 0usize);
            for v in cards.values().map(pick).filter(|v| v.len() >= 2) {
                let mean = v.iter().sum::<f64>() / v.len() as f64;
                ss += v.iter().map(|x| (x / mean - 1.0).powi(2)).sum::<f64>();
                df += v.len() - 1;
            }
            (ss / df.max(1) as f64).sqrt()
        };
        println!("\n{name}: run-to-run CV of run medians, median over metrics (metrics where normalised is noisier)\n");
        println!("| family | metrics | raw | clock-normalised | normalised noisier |");
        println!("| --- | ---: | ---: | ---: | ---: |");
        for (family, metrics) in &by {
            let mut raw: Vec<f64> = metrics.values().map(|c| cv(c, |p| &p.0)).collect();
            let mut nor: Vec<f64> = metrics.values().map(|c| cv(c, |p| &p.1)).collect();
            let worse = raw.iter().zip(&nor).filter(|(r, n)| **n > **r * 1.1 && **n - **r > 1e-4).count();
            raw.sort_by(f64::total_cmp);
            nor.sort_by(f64::total_cmp);
            println!(
                "| {family} | {} | {:.3} % | {:.3} % | {worse} |",
                raw.len(),
                median(&raw).unwrap_or(0.0) * 100.0,
                median(&nor).unwrap_or(0.0) * 100.0
            );
            assert!(raw.iter().chain(&nor).all(|v| v.is_finite()));
        }
    }
}

/// Six default runs of one H100 with the current code (256 placements per atomic target, DRAM
/// streams on flat grids), five of them after the last change of the code's layout: same-card
/// leave one run out.
#[test]
fn current_code_h100_runs_meet_the_same_card_targets() {
    let c = committed_calibration(&[root().join(H100).join("runs-GPU-b8b327dc.tar.xz")]);
    println!("{}", calibration_markdown(&c));
    assert_eq!(c.cards.len(), 1, "{:?}", c.cards);
    let same = c.same_card.as_ref().unwrap();
    assert_eq!(same.aa.regressed, 0, "same-card A/A false alarms: {:?}", same.false_alarms);
    for class in [MetricClass::Latency, MetricClass::Bandwidth, MetricClass::Instructions, MetricClass::SharedMemory] {
        at_least(same, class, 0.03, 0.9, "same card");
    }
    // With 256 placements atomics reach 76 % at 5 % and 93 % at 10 % here (62 % and 79 % over
    // the older runs above); the target, 90 % at 5 %, is not reached (README, "Verdicts").
    at_least(same, MetricClass::Atomics, 0.05, 0.75, "same card");
    at_least(same, MetricClass::Atomics, 0.10, 0.9, "same card");
}

/// The calibration of one committed archive of several cards, checked for its card count, its
/// leave-one-card-out comparisons, no false alarm at either level, and same-card detection of
/// 90 % at 3 % for latency, instructions and shared memory.
fn several_cards(archive: PathBuf, cards: usize, class_comparisons: usize) -> Calibration {
    let c = committed_calibration(&[archive]);
    println!("{}", calibration_markdown(&c));
    assert_eq!(c.cards.len(), cards, "{:?}", c.cards);
    let same = c.same_card.as_ref().unwrap();
    assert_eq!(same.aa.regressed, 0, "same-card A/A false alarms: {:?}", same.false_alarms);
    let class = c.class.as_ref().unwrap();
    assert_eq!(class.comparisons, class_comparisons);
    assert_eq!(class.aa.regressed, 0, "class A/A false alarms: {:?}", class.false_alarms);
    for m in [MetricClass::Latency, MetricClass::Instructions, MetricClass::SharedMemory] {
        at_least(same, m, 0.03, 0.9, "same card");
    }
    c
}

/// Current-code default runs of five H100 cards measured on one day
/// (`runs-five-cards-2026-11-24.tar.xz`; `GPU-b8b327dc`'s runs above predate the last change of
/// the dram and l2_bandwidth kernels): the class level, leave one card out, on runs that did
/// not set the thresholds.
#[test]
fn current_code_h100_cards_meet_the_class_targets() {
    let c = several_cards(root().join(H100).join("runs-five-cards-2026-11-24.tar.xz"), 5, 7);
    let class = c.class.as_ref().unwrap();
    for m in [MetricClass::Latency, MetricClass::Instructions, MetricClass::SharedMemory] {
        at_least(class, m, 0.05, 0.9, "class");
    }
    // Measured: bandwidth 62 % at 5 % (README, "Verdicts"): below the target; atomics 38 %
    // before the atomics were judged as a family too, 99 % since.
    at_least(class, MetricClass::Bandwidth, 0.05, 0.6, "class");
    at_least(class, MetricClass::Atomics, 0.05, 0.95, "class");
    at_least(c.same_card.as_ref().unwrap(), MetricClass::Bandwidth, 0.03, 0.85, "same card");
}

/// Current-code default runs of four H200 cards measured on one day. Their DRAM latencies
/// fall in two groups 3.5 % apart (gpubench.toml, the H200 `card_spread` of DRAM latencies):
/// without that floor, leaving `GPU-d68cd735` out of the first three cards gave 8 REGRESSED.
/// Three H200 overrides were measured on runs that include these (l2_bandwidth full-grid and
/// private reads, coalescing:misaligned), so for those metrics this is in-sample.
#[test]
fn current_code_h200_cards_raise_no_false_alarm() {
    let c = several_cards(root().join(H200).join("runs-four-cards-2026-11-24.tar.xz"), 4, 7);
    let class = c.class.as_ref().unwrap();
    at_least(class, MetricClass::Instructions, 0.05, 0.9, "class");
    at_least(class, MetricClass::SharedMemory, 0.05, 0.9, "class");
}

/// The per-metric list of misses accounts for every verdict of the power table that was not
/// REGRESSED at the target shift of its class (3 %, atomics 5 %), class by class.
#[test]
fn missed_metrics_add_up_to_the_power_table() {
    let c = committed_calibration(&[root().join(H100).join("runs-GPU-b8b327dc.tar.xz")]);
    let same = c.same_card.as_ref().unwrap();
    assert!(!same.missed.is_empty());
    for row in &same.power {
        let missed: usize = same
            .missed
            .iter()
            .filter(|(k, _)| MetricClass::of_family(k.split('/').next().unwrap()) == row.class)
            .map(|(_, m)| m.missed)
            .sum();
        let expected = ((1.0 - same.detected(row.class, row.class.target_shift(same.level)).unwrap())
            * row.verdicts as f64)
            .round() as usize;
        assert_eq!(missed, expected, "{}", row.class.label());
        assert!(same.missed.values().all(|m| m.missed > 0 && m.missed <= m.of));
    }
    assert!(calibration_markdown(&c).contains("Not REGRESSED at 3 %, atomics at 5 % ("));
}

/// Current-code default runs, atomics in batches of launches (parameter `iteration_us`), of
/// cards that set no threshold except the contention override of gpubench.toml: same card and
/// class, judged with the repository's gpubench.toml.
const BATCHED: &str = "runs-batched-atomics-2026-11-24.tar.xz";

/// Checks a batched-atomics calibration: its cards, no false alarm at the per-card same-card
/// and class levels, and the detection shares at 3 % (latency, bandwidth, instructions, shared
/// memory) and 5 % (atomics) of the same card against its own runs (`same`) and against a
/// baseline of every card's runs (`in_class`), and at 5 % of the class (`class`), each at least
/// the given share. The same card in a class baseline with pooled run spreads
/// (`pool_run_spread`) is allowed `in_class.1` false alarms.
fn batched(class_dir: &str, cards: usize, same: [f64; 5], in_class: ([f64; 5], usize), class: [f64; 5]) {
    let c = current_calibration(&[root().join(class_dir).join(BATCHED)]);
    println!("{}", calibration_markdown(&c));
    assert_eq!(c.cards.len(), cards, "{:?}", c.cards);
    assert!(c.cards.values().all(|&n| n >= 3), "{:?}", c.cards);
    let classes = [
        MetricClass::Latency,
        MetricClass::Bandwidth,
        MetricClass::Instructions,
        MetricClass::SharedMemory,
        MetricClass::Atomics,
    ];
    let same_shift = |m: MetricClass| if m == MetricClass::Atomics { 0.05 } else { 0.03 };
    let same_level = c.same_card.as_ref().unwrap();
    assert_eq!(same_level.aa.regressed, 0, "same-card A/A false alarms: {:?}", same_level.false_alarms);
    for (m, min) in classes.iter().zip(same) {
        at_least(same_level, *m, same_shift(*m), min, "same card");
    }
    let in_class_level = c.same_card_in_class.as_ref().unwrap();
    assert_eq!(in_class_level.comparisons, same_level.comparisons);
    assert!(
        in_class_level.aa.regressed <= in_class.1,
        "same card in a class baseline, A/A false alarms: {:?}",
        in_class_level.false_alarms
    );
    for (m, min) in classes.iter().zip(in_class.0) {
        at_least(in_class_level, *m, same_shift(*m), min, "same card in a class baseline");
    }
    let class_level = c.class.as_ref().unwrap();
    assert_eq!(class_level.aa.regressed, 0, "class A/A false alarms: {:?}", class_level.false_alarms);
    for (m, min) in classes.iter().zip(class) {
        at_least(class_level, *m, 0.05, min, "class");
    }
}

/// Four H100s (`GPU-1ecfc2b4` four runs, `GPU-5ca491d2`, `GPU-71ecc017`, `GPU-a7442a0c` three
/// each). Measured: same card against its own runs 97 / 89 / 100 / 99 % at 3 %, atomics 91 % at
/// 5 %; against every card's runs, pooled, 99 / 93 / 100 / 99 %, atomics 97 %, no false alarm; class
/// at 5 %: 95 / 94 / 100 / 99 %, atomics 70 % (100 % and 68 % before the contended atomics took
/// their measured card spread and class bands their measured run spreads); 100 % since the atomics
/// are judged as a family too. Below the 90 % target: same-card bandwidth against two runs of
/// the card (the private L2 reads stray by 1-4 % between processes).
#[test]
fn batched_atomics_h100_cards() {
    batched(
        H100,
        4,
        [0.97, 0.88, 0.99, 0.98, 0.9],
        ([0.99, 0.92, 0.99, 0.98, 0.96], 0),
        [0.94, 0.93, 0.99, 0.98, 0.97],
    );
}

/// Four H200s, three runs each (`GPU-7723ddef`, `GPU-78bc2344`, `GPU-f4ab5a16`,
/// `GPU-f577dc86`). Measured: same card against its own runs 100 / 82 / 100 / 99 % at 3 %,
/// atomics 89 % at 5 %; against every card's runs, pooled, 100 / 89 / 100 / 99 %, atomics 98 %, no false
/// alarm; class at 5 %: 82 / 73 / 100 / 99 %, atomics 59 % (75 % and 60 % before the H200
/// DRAM-streaming loads and the contended atomics took their measured card spreads; atomics 98 %
/// since they are judged as a family too). The H200-only
/// `card_spread` of gpubench.toml for atomics on a sector, on a word per thread, at one thread
/// per address and for stride-32 loads was measured on these cards (in-sample: without it,
/// leaving `GPU-f577dc86` or `GPU-7723ddef` out gives REGRESSED).
#[test]
fn batched_atomics_h200_cards() {
    batched(
        H200,
        4,
        [0.99, 0.81, 0.99, 0.98, 0.88],
        ([0.99, 0.88, 0.99, 0.98, 0.98], 0),
        [0.81, 0.72, 0.99, 0.98, 0.95],
    );
}

/// Default runs of cards outside every set above, recorded after the rule's spreads were set
/// (three runs each; `results/*/runs-new-cards-2026-11-24.tar.xz`).
const NEW_CARDS: &str = "runs-new-cards-2026-11-24.tar.xz";

/// The class baseline committed before the L2 copies, which the runs of that time were judged
/// against: the last two runs of each card of the batched-atomics set (four cards).
fn baseline_before_l2_copies(class_dir: &str) -> Vec<ResultsDocument> {
    let mut runs = documents(&[root().join(class_dir).join(BATCHED)]);
    runs.sort_by_key(|r| (r.gpu.uuid.clone(), std::cmp::Reverse(r.created_unix_s)));
    let mut kept: BTreeMap<String, usize> = BTreeMap::new();
    runs.retain(|r| {
        let n = kept.entry(r.gpu.uuid.clone()).or_default();
        *n += 1;
        *n <= 2
    });
    runs.sort_by_key(|r| r.created_unix_s);
    runs
}

/// The new cards of one class: no false alarm against each card's own runs, and none for any
/// run against the class baseline committed at the time (whose cards it does not hold).
fn new_cards(class_dir: &str, cards: usize) {
    let archive = root().join(class_dir).join(NEW_CARDS);
    let c = current_calibration(std::slice::from_ref(&archive));
    println!("{}", calibration_markdown(&c));
    assert_eq!(c.cards.len(), cards, "{:?}", c.cards);
    let same = c.same_card.as_ref().unwrap();
    assert_eq!(same.aa.regressed, 0, "same-card A/A false alarms: {:?}", same.false_alarms);
    for m in [MetricClass::Latency, MetricClass::Instructions, MetricClass::SharedMemory] {
        at_least(same, m, 0.03, 0.9, "same card");
    }
    let reference = baseline_before_l2_copies(class_dir);
    assert_eq!(reference.len(), 8);
    let rule = config_before_l2_copies().rule;
    for (label, run) in gather(&[archive]).unwrap().runs {
        let (_, regressed) = judged(&reference, &run, &rule);
        assert!(regressed.is_empty(), "{label} against the class baseline: {regressed:?}");
    }
}

#[test]
fn new_h100_cards_raise_no_false_alarm() {
    new_cards(H100, 3);
}

#[test]
fn new_h200_cards_raise_no_false_alarm() {
    new_cards(H200, 3);
}

/// Default runs that carry their board part number (two runs each of six H200s: four of board
/// 692-2G520-0282-001, two of -000; three H100s: one of 692-2G520-0200-500, two of
/// 695-2G520-0200-000; `results/*/runs-boards-2026-11-24.tar.xz`, recorded after the rule's
/// spreads were set except the contended atomics' card spread, which a card of this set showed
/// was missing).
const BOARDS: &str = "runs-boards-2026-11-24.tar.xz";

fn without_boards(runs: Vec<(String, ResultsDocument)>) -> Vec<(String, ResultsDocument)> {
    runs.into_iter()
        .map(|(l, mut r)| {
            r.gpu.board_part_number = None;
            r.gpu.vbios_version = None;
            (l, r)
        })
        .collect()
}

/// H200 boards differ in their DRAM: -001 chases 128 MiB at 670 cycles, -000 at 694. A card
/// with three or more cards of its board in the class baseline is judged against those (8 of
/// the 12 leave-one-card-out comparisons here; the -000 cards, one left, against the class
/// whole). Measured at 5 %: latency 100 % (88 % with the class whole), bandwidth 81 % (86 %;
/// the H200 DRAM-streaming loads keep the measured spread of the more variable board),
/// instructions 100 %, shared memory 99 %, atomics 57 % (98 % judged as a family too); no false
/// alarm at any level.
#[test]
fn h200_cards_are_judged_against_their_board() {
    let archive = root().join(H200).join(BOARDS);
    let runs = gather(std::slice::from_ref(&archive)).unwrap().runs;
    let rule = config_before_l2_copies().rule;
    let c = calibrate(runs.clone(), &rule).unwrap();
    println!("{}", calibration_markdown(&c));
    assert_eq!(c.cards.len(), 6, "{:?}", c.cards);
    let same = c.same_card.as_ref().unwrap();
    assert_eq!(same.aa.regressed, 0, "same-card A/A false alarms: {:?}", same.false_alarms);
    let class = c.class.as_ref().unwrap();
    assert_eq!((class.comparisons, class.by_board), (12, 8));
    assert_eq!(class.aa.regressed, 0, "class A/A false alarms: {:?}", class.false_alarms);
    for (m, min) in [
        (MetricClass::Latency, 0.99),
        (MetricClass::Bandwidth, 0.8),
        (MetricClass::Instructions, 0.99),
        (MetricClass::SharedMemory, 0.98),
        (MetricClass::Atomics, 0.95),
    ] {
        at_least(class, m, 0.05, min, "class by board");
    }
    assert!(calibration_markdown(&c).contains("against the cards of the candidate's board: 8 of 12"));
    // The same runs without their boards: the DRAM chases of a -001 card hide in the -000 cards'.
    let whole = calibrate(without_boards(runs.clone()), &rule).unwrap();
    let whole_class = whole.class.as_ref().unwrap();
    assert_eq!((whole_class.by_board, whole_class.aa.regressed), (0, 0));
    let latency = |l: &LevelCalibration| l.detected(MetricClass::Latency, 0.05).unwrap();
    assert!(latency(class) > latency(whole_class) + 0.1, "{} vs {}", latency(class), latency(whole_class));

    // One run of a -001 card against the other five cards: the report names the board.
    let (candidate, baseline): (Vec<_>, Vec<_>) =
        runs.into_iter().map(|(_, r)| r).partition(|r| r.gpu.uuid.starts_with("GPU-b6472ce0"));
    let c =
        compare(Side { label: "baseline", runs: &baseline }, Side { label: "candidate", runs: &candidate[..1] }, &rule)
            .unwrap();
    let kind = &c.baseline_kind;
    assert_eq!((kind.board.as_deref(), kind.board_cards), (Some("692-2G520-0282-001"), Some(3)));
    assert!(kind.describe().contains("against the 3 cards of board 692-2G520-0282-001"), "{}", kind.describe());
    // Shifted by 5 %, its DRAM chases are REGRESSED; taken against the class whole they are not.
    let shifted = gpubench::verdict::calibrate::shifted(&candidate[0], 0.05);
    let judge = |baseline: &[ResultsDocument]| {
        compare(
            Side { label: "baseline", runs: baseline },
            Side { label: "candidate", runs: std::slice::from_ref(&shifted) },
            &rule,
        )
        .unwrap()
        .metrics
        .into_iter()
        .find(|m| m.key() == "latency/ca/128MiB:cycles_per_access")
        .unwrap()
        .verdict
    };
    assert_eq!(judge(&baseline), Verdict::Regressed);
    let anonymous: Vec<ResultsDocument> = without_boards(baseline.into_iter().map(|r| (String::new(), r)).collect())
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    assert_ne!(judge(&anonymous), Verdict::Regressed);
}

/// H100 boards differ little (692-2G520-0200-500 chases 128 MiB at 686 cycles, 695-...-000 at
/// 690) and no board has three cards here: every class comparison takes the class whole, with
/// no false alarm.
#[test]
fn h100_cards_of_two_boards_raise_no_false_alarm() {
    let c = current_calibration(&[root().join(H100).join(BOARDS)]);
    println!("{}", calibration_markdown(&c));
    assert_eq!(c.cards.len(), 3, "{:?}", c.cards);
    assert_eq!(c.same_card.as_ref().unwrap().aa.regressed, 0);
    let class = c.class.as_ref().unwrap();
    assert_eq!((class.by_board, class.aa.regressed), (0, 0), "{:?}", class.false_alarms);
}

/// One default run each of four more H200s (`runs-boards-out-of-sample-2026-11-24.tar.xz`):
/// two of board -001, two of -000. The first three were recorded after the rule was set; the
/// fourth made -000 four cards strong, and leaving `GPU-19767729` out of the ten then split
/// its comparison by board and called its stride-4 loads (3.8 % below the three other -000
/// cards) REGRESSED: the H200 DRAM-streaming loads took their measured within-board spread.
const BOARDS_OUT_OF_SAMPLE: &str = "runs-boards-out-of-sample-2026-11-24.tar.xz";

/// Each new card against a class baseline of the six cards with boards (0 REGRESSED; the -001
/// cards against the four of their board), and the ten cards together, leave one card out
/// (every comparison split by board): no false alarm; at 5 % latency 100 %, bandwidth 85 %,
/// instructions 100 %, shared memory 99 %, atomics 58 %.
#[test]
fn new_h200_cards_are_judged_by_board_without_false_alarm() {
    let rule = config_before_l2_copies().rule;
    let six = documents(&[root().join(H200).join(BOARDS)]);
    let new = gather(&[root().join(H200).join(BOARDS_OUT_OF_SAMPLE)]).unwrap().runs;
    assert_eq!(new.len(), 4);
    for (label, run) in &new {
        let (c, regressed) = judged(&six, run, &rule);
        assert!(regressed.is_empty(), "{label}: {regressed:?}");
        let fast = run.gpu.board_part_number.as_deref() == Some("692-2G520-0282-001");
        assert_eq!(c.baseline_kind.board_cards, Some(if fast { 4 } else { 2 }), "{label}");
    }
    let c = current_calibration(&[root().join(H200).join(BOARDS), root().join(H200).join(BOARDS_OUT_OF_SAMPLE)]);
    println!("{}", calibration_markdown(&c));
    let class = c.class.as_ref().unwrap();
    assert_eq!((c.cards.len(), class.comparisons, class.by_board), (10, 16, 16));
    assert_eq!(class.aa.regressed, 0, "class A/A false alarms: {:?}", class.false_alarms);
    for m in [MetricClass::Latency, MetricClass::Instructions, MetricClass::SharedMemory] {
        at_least(class, m, 0.05, 0.9, "class, ten cards");
    }
    at_least(class, MetricClass::Bandwidth, 0.05, 0.84, "class, ten cards");
    at_least(class, MetricClass::Atomics, 0.05, 0.95, "class, ten cards");
}

/// The batched-atomics and new-card sets as one corpus per class: seven cards, 21-22 runs,
/// none with a board. H100, same card against its own runs: 0 REGRESSED; at 3 % latency 97 %,
/// bandwidth 90 %, instructions 100 %, shared memory 99 %; atomics 90 % at 5 %. Class, leave
/// one card out: 0 REGRESSED on either class (on H200 only since a class band's run term takes
/// the measured run spread as its prior: `GPU-430b819e`'s misaligned loads strayed 4.7 % in one
/// run, where the other cards' runs agree within 0.5 %); at 5 % H100 latency 96 %, bandwidth
/// 93 %, instructions 100 %, shared memory 99 %, atomics 76 % (99 % judged as a family too; H200
/// 98 %).
#[test]
fn seven_cards_of_each_class() {
    let corpus = |dir: &str| current_calibration(&[root().join(dir).join(BATCHED), root().join(dir).join(NEW_CARDS)]);
    let h100 = corpus(H100);
    println!("{}", calibration_markdown(&h100));
    assert_eq!(h100.cards.len(), 7);
    let same = h100.same_card.as_ref().unwrap();
    assert_eq!(same.aa.regressed, 0, "{:?}", same.false_alarms);
    for m in [MetricClass::Latency, MetricClass::Bandwidth, MetricClass::Instructions, MetricClass::SharedMemory] {
        at_least(same, m, 0.03, 0.89, "H100 same card");
    }
    at_least(same, MetricClass::Atomics, 0.05, 0.89, "H100 same card");
    let class = h100.class.as_ref().unwrap();
    assert_eq!(class.aa.regressed, 0, "{:?}", class.false_alarms);
    for m in [MetricClass::Latency, MetricClass::Bandwidth, MetricClass::Instructions, MetricClass::SharedMemory] {
        at_least(class, m, 0.05, 0.9, "H100 class");
    }
    at_least(class, MetricClass::Atomics, 0.05, 0.95, "H100 class");
    let h200 = corpus(H200);
    println!("{}", calibration_markdown(&h200));
    assert_eq!(h200.cards.len(), 7);
    assert_eq!(h200.same_card.as_ref().unwrap().aa.regressed, 0);
    let class = h200.class.as_ref().unwrap();
    assert_eq!(class.aa.regressed, 0, "{:?}", class.false_alarms);
    at_least(class, MetricClass::Atomics, 0.05, 0.95, "H200 class");
}

/// Default runs of the current code, L2 reads over copies of their footprint (one per sample):
/// three H100s (`GPU-146ff2d9`, `GPU-231f3957`, `GPU-5758b77f`, three runs each) and three
/// H200s (`GPU-f7f0e716` and `GPU-a3b2e463` three, `GPU-fc9e41ea` six), recorded after the rule
/// was set. Only the H200 full-grid L2 reads' run spread in gpubench.toml comes from these
/// cards, from other processes (the L2 family alone, `l2-placements-2026-11-24.tar.gz`).
const L2_COPIES: &str = "runs-l2-copies-2026-11-24.tar.xz";

/// Two more cards of each class, two default runs each, recorded after the committed baselines
/// of [`L2_COPIES`]: H100 `GPU-81b99166` (whose one-SM atomic chains read REGRESSED against
/// them, +4.5 %, and set the H100 card spread of those metrics) and `GPU-d8cdbb21`; H200
/// `GPU-7834e710` (-001) and `GPU-a6bd0e36` (-000). With [`L2_COPIES`], the committed class
/// baselines (five cards each).
const L2_COPIES_MORE: &str = "runs-l2-copies-more-2026-11-24.tar.xz";

/// Least share of metric verdicts REGRESSED at a shift, per metric class, that a corpus's
/// calibration must reach (README.md, "Verdicts").
struct Floors {
    same_card_3: [f64; 4],
    same_card_atomics_5: f64,
    class_5: [f64; 5],
}

fn meets_floors(archives: &[PathBuf], cards: usize, floors: Floors) {
    let c = calibration(archives, &config());
    println!("{}", calibration_markdown(&c));
    assert_eq!(c.cards.len(), cards, "{:?}", c.cards);
    let same = c.same_card.as_ref().unwrap();
    let class = c.class.as_ref().unwrap();
    assert_eq!(same.aa.regressed, 0, "same-card A/A false alarms: {:?}", same.false_alarms);
    assert_eq!(class.aa.regressed, 0, "class A/A false alarms: {:?}", class.false_alarms);
    let classes = [MetricClass::Latency, MetricClass::Bandwidth, MetricClass::Instructions, MetricClass::SharedMemory];
    for (m, min) in classes.iter().zip(floors.same_card_3) {
        at_least(same, *m, 0.03, min, "same card");
    }
    at_least(same, MetricClass::Atomics, 0.05, floors.same_card_atomics_5, "same card");
    for (m, min) in classes.iter().chain([&MetricClass::Atomics]).zip(floors.class_5) {
        at_least(class, *m, 0.05, min, "class");
    }
}

/// Five cards of each class. H100: same card against its own runs, 0 REGRESSED; at 3 % latency
/// 91 %, bandwidth 88 %, instructions 100 %, shared memory 99 %; atomics 90 % at 5 %; class,
/// leave one card out, 0 REGRESSED, at 5 % latency 94 %, bandwidth 91 %, instructions 100 %,
/// shared memory 99 %, atomics 49 %. H200: same card, 0 REGRESSED; at 3 % latency 100 %,
/// bandwidth 90 %, instructions 100 %, shared memory 99 %; atomics 94 % at 5 %; class, 0
/// REGRESSED, at 5 % latency 93 %, bandwidth 74 %, instructions 100 %, shared memory 99 %,
/// atomics 66 %. Before a board held twice in the baseline split the metrics on which boards
/// differ, H200 class latency read 84 %, bandwidth 79 % (DRAM latency gains, the DRAM-streaming
/// loads of -001 cards against two cards of their board lose); before contention on 2-8 threads
/// per word took the run spread of the other contended atomics (1.5 -> 1.01 %), same-card
/// atomics read 84 % (H100) and 90 % (H200); before `cards_in_groups` class atomics read 52 %
/// and 60 %. Since H100 atomics on one sector's words fall in groups (gpubench.toml, set on
/// GPU-e245fb37 of the current baseline), class atomics read 48 -> 47.9 % here; judged as a
/// family too, H100 92 %, H200 99 %.
#[test]
fn l2_copies_cards_of_each_class() {
    let h100 = Floors {
        same_card_3: [0.9, 0.87, 0.99, 0.98],
        same_card_atomics_5: 0.89,
        class_5: [0.93, 0.9, 0.99, 0.98, 0.9],
    };
    let h200 = Floors {
        same_card_3: [0.99, 0.89, 0.99, 0.98],
        same_card_atomics_5: 0.93,
        class_5: [0.92, 0.73, 0.99, 0.98, 0.97],
    };
    for (class_dir, floors) in [(H100, h100), (H200, h200)] {
        meets_floors(&[L2_COPIES, L2_COPIES_MORE].map(|a| root().join(class_dir).join(a)), 5, floors);
    }
}

/// Every run recorded before the L2 copies (26 cards, 65 runs: the batched-atomics, new-card and
/// board sets) against the committed class baseline (five H200s, six H100s) recorded after them:
/// 0 REGRESSED; the L2 family is not comparable (another `placements`), so INCONCLUSIVE.
#[test]
fn older_runs_raise_no_false_alarm_against_the_committed_baselines() {
    let rule = config().rule;
    let sets = [BATCHED, NEW_CARDS, BOARDS, BOARDS_OUT_OF_SAMPLE];
    for class_dir in [H100, H200] {
        let reference = baseline_before_every_sm_chains(class_dir);
        let archives: Vec<PathBuf> =
            sets.iter().map(|s| root().join(class_dir).join(s)).filter(|p| p.exists()).collect();
        let runs = gather(&archives).unwrap().runs;
        assert!(runs.len() >= 26, "{class_dir}: {} runs", runs.len());
        for (label, run) in runs {
            let (c, regressed) = judged(&reference, &run, &rule);
            assert!(regressed.is_empty(), "{label} against the committed class baseline: {regressed:?}");
            let l2_not_comparable = c
                .metrics
                .iter()
                .filter(|m| m.key().starts_with("l2_bandwidth/") && m.reason.contains("placements"))
                .count();
            assert_eq!(l2_not_comparable, 15, "{label}");
        }
    }
}

/// One default run each of two more cards, recorded after the class baselines of [`L2_COPIES`]
/// (`class-check-l2-copies-GPU-*`), judged against the committed baselines as `cargo gpubench`
/// does on a new card: H200 `GPU-271aef9a` (board -001); H100 `GPU-bcc71395`, whose 32 MiB
/// chases read 309-311 cycles where most H100s read 295 (INCONCLUSIVE within the measured card
/// spread of those chases). The committed H100 baseline holds `GPU-bcc71395`'s run, as a card of
/// that group, so it is left out of the reference here.
#[test]
fn fresh_cards_against_the_committed_baselines() {
    let rule = config().rule;
    for (class_dir, card) in [(H200, "271aef9a"), (H100, "bcc71395")] {
        let mut reference = baseline_before_every_sm_chains(class_dir);
        reference.retain(|r| !r.gpu.uuid.contains(card));
        let dir = root().join(class_dir).join(format!("class-check-l2-copies-GPU-{card}"));
        let runs = gather(&[dir.join(format!("GPU-{card}-run1.json.gz"))]).unwrap().runs;
        assert_eq!(runs.len(), 1);
        let (c, regressed) = judged(&reference, &runs[0].1, &rule);
        assert!(regressed.is_empty(), "GPU-{card}: {regressed:?}");
        let not_pass: Vec<String> = c.metrics.iter().filter(|m| m.verdict != Verdict::Pass).map(|m| m.key()).collect();
        if card == "bcc71395" {
            assert!(not_pass.iter().any(|k| k.starts_with("latency/cg/32MiB:cycles")), "GPU-{card}: {not_pass:?}");
        }
    }
}

/// Two default runs each of seven more cards, recorded after the committed class baselines
/// and after the rule of [`L2_COPIES`]: H100 `GPU-574829d2`, `GPU-70d2c357` (board
/// 695-2G520-0200-000), `GPU-9599ec4f` (692-2G520-0200-000); H200 `GPU-85e83311`,
/// `GPU-a9a16c5d` (-001), `GPU-50c57d3d`, `GPU-b600a576` (-000). Only the card spreads of the
/// contended and shared-memory atomics in gpubench.toml (and their `cards_in_groups`) were set
/// with them.
const FRESH: &str = "runs-fresh-2026-11-24.tar.xz";

/// Three default runs each of five more cards, recorded after [`FRESH`] and after the run spread
/// of contention on 2-8 threads per word took that of the other contended atomics: H100
/// `GPU-1b75f3cf` (692-2G520-0200-500), `GPU-d2043975`, `GPU-f1c482d3` (695-2G520-0200-000);
/// H200 `GPU-3db224f2` (-001), `GPU-5837c906` (-000). They set the H100 card spread and
/// `cards_in_groups` of the word-per-thread atomics (`GPU-f1c482d3` reads them 5-8 % above
/// most H100s) and the `cards_in_groups` of the H100 one-SM metrics; nothing else.
const FRESH_THREE_RUNS: &str = "runs-fresh-three-runs-2026-11-24.tar.xz";

/// Every fresh run against the committed class baseline, as `cargo gpubench` judges a new card:
/// 0 REGRESSED. Before, `GPU-70d2c357`'s contention of two threads per word (8 % below the
/// other H100s in both runs) and `GPU-85e83311`'s warp CAS (5.6 % below) were: the first is now
/// INCONCLUSIVE through `cards_in_groups`, the second within the H200 card spread measured
/// with it. The runs of [`FRESH_THREE_RUNS`] likewise, all 15: 0 REGRESSED.
/// Then the five cards of each committed baseline and the fresh cards together (eleven cards of
/// each class), leave one run or one card out: 0 REGRESSED. Same card, at 3 %: H100 latency
/// 95 %, bandwidth 91 %, instructions 100 %, shared memory 99 %, atomics 93 % at 5 %; H200
/// 100 %, 90 %, 100 %, 99 %, atomics 95 % at 5 %. Class at 5 %: H100 latency 95 %, bandwidth
/// 93 %, instructions 100 %, shared memory 99 %, atomics 57 %; H200 100 %, 85 %, 100 %, 99 %,
/// atomics 68 % (every H200 comparison split by board). Before `cycled_samples`, the H100 L2
/// read and whole-L2 run spreads and a clock gate that reads the direction of the metric's
/// unit, same card was H100 92 / 88 / 100 / 99 %, atomics 88 %; H200 100 / 89 / 100 / 99 %,
/// atomics 92 %. Since H100 atomics on one sector's words fall in groups (gpubench.toml, set on
/// GPU-e245fb37 of the current baseline), H100 class atomics read 59 -> 54 % here: no card of
/// these eleven is in the rare group, so the entry only costs power on them. With the atomics
/// judged as a family too, class atomics read H100 92 %, H200 99 %.
#[test]
fn fresh_cards_against_the_committed_baselines_and_together() {
    let rule = config().rule;
    for (class_dir, cards) in [(H100, 3), (H200, 4)] {
        let reference = baseline_before_every_sm_chains(class_dir);
        let runs =
            gather(&[root().join(class_dir).join(FRESH), root().join(class_dir).join(FRESH_THREE_RUNS)]).unwrap().runs;
        assert_eq!(runs.len(), 2 * cards + if class_dir == H100 { 9 } else { 6 }, "{class_dir}");
        for (label, run) in &runs {
            let (c, regressed) = judged(&reference, run, &rule);
            assert!(regressed.is_empty(), "{label} against the committed class baseline: {regressed:?}");
            // The rare group's card, first run: INCONCLUSIVE; REGRESSED without `cards_in_groups`.
            // (`GPU-85e83311`'s warp CAS is within the band of the measured H200 card spread.)
            if !(class_dir == H100 && label.contains("70d2c357") && label.contains("run-1")) {
                continue;
            }
            let metric = "k=2";
            let grouped = c.metrics.iter().find(|m| m.metric == metric && m.benchmark == "atomics/contention").unwrap();
            assert_eq!(grouped.verdict, Verdict::Inconclusive, "{label}: {}", grouped.reason);
            assert!(grouped.reason.contains("fall in groups"), "{}", grouped.reason);
            let mut ungrouped = rule.clone();
            ungrouped.overrides.iter_mut().for_each(|o| o.cards_in_groups = false);
            let (_, regressed) = judged(&reference, run, &ungrouped);
            assert!(regressed.iter().any(|k| k.ends_with(metric)), "{label}: {regressed:?}");
        }
    }
    let h100 = Floors {
        same_card_3: [0.95, 0.905, 0.99, 0.98],
        same_card_atomics_5: 0.92,
        class_5: [0.95, 0.93, 0.99, 0.98, 0.9],
    };
    let h200 = Floors {
        same_card_3: [0.99, 0.90, 0.99, 0.98],
        same_card_atomics_5: 0.95,
        class_5: [0.99, 0.85, 0.99, 0.98, 0.97],
    };
    for (class_dir, floors) in [(H100, h100), (H200, h200)] {
        let archives = [L2_COPIES, L2_COPIES_MORE, FRESH, FRESH_THREE_RUNS].map(|a| root().join(class_dir).join(a));
        meets_floors(&archives, 11, floors);
    }
}

/// Three default runs each of cards measured after `cycled_samples`, the clock gate that reads
/// the unit's direction and the L2 run spreads were set, none of them in any set above
/// (`results/*/runs-out-of-sample-2026-11-24.tar.xz`, driver 580.159.04; the `.txt` beside it
/// names the cards): each card against its own other runs, and every run against the committed
/// class baseline, 0 REGRESSED (30 runs). Same card, at 3 %: H100 (five cards) latency 98 %,
/// bandwidth 93 %, instructions 100 %, shared memory 99 %, atomics 97 % at 5 %; H200 (five)
/// 100 / 90 / 100 / 99 %, atomics 97 %. The rule before (f7bba3b) on the same runs: H100
/// 98 / 89 / 100 / 99 %, atomics 94 %; H200 100 / 87 / 100 / 99 %, atomics 93 %. Class, leave
/// one card out, atomics at 5 %: H100 99 %, H200 96 % (judged as a family too).
const OUT_OF_SAMPLE: &str = "runs-out-of-sample-2026-11-24.tar.xz";

/// Cards of [`OUT_OF_SAMPLE`]: H100, H200.
const OUT_OF_SAMPLE_CARDS: (usize, usize) = (5, 5);

#[test]
fn cards_measured_after_the_rule_was_set() {
    let rule = config().rule;
    for (class_dir, cards) in [(H100, OUT_OF_SAMPLE_CARDS.0), (H200, OUT_OF_SAMPLE_CARDS.1)] {
        let archive = root().join(class_dir).join(OUT_OF_SAMPLE);
        let c = calibration(std::slice::from_ref(&archive), &config());
        println!("{}", calibration_markdown(&c));
        assert_eq!(c.cards.len(), cards, "{:?}", c.cards);
        let same = c.same_card.as_ref().unwrap();
        assert_eq!(same.aa.regressed, 0, "same-card A/A false alarms: {:?}", same.false_alarms);
        assert_eq!(c.class.as_ref().unwrap().aa.regressed, 0, "class A/A false alarms");
        at_least(c.class.as_ref().unwrap(), MetricClass::Atomics, 0.05, 0.95, "class");
        for m in [MetricClass::Latency, MetricClass::Bandwidth, MetricClass::Instructions, MetricClass::SharedMemory] {
            at_least(same, m, 0.03, 0.9, "same card");
        }
        at_least(same, MetricClass::Atomics, 0.05, 0.9, "same card");
        let reference = baseline_before_every_sm_chains(class_dir);
        for (label, run) in gather(std::slice::from_ref(&archive)).unwrap().runs {
            let (_, regressed) = judged(&reference, &run, &rule);
            assert!(regressed.is_empty(), "{label} against the committed class baseline: {regressed:?}");
        }
    }
}

/// The atomics family alone, on cards measured after the shared-memory atomics kept each SM's
/// rate (`results/*/runs-atomics-sm-maps-2026-11-25.tar.xz`; the `.txt` beside it names the
/// cards and runs). On the first H100 cards the benchmark was still `atomics/shared` (the median
/// over SMs); the rest ran `atomics/shared_add` (the mean over SMs).
const SM_MAPS: &str = "runs-atomics-sm-maps-2026-11-25.tar.xz";

/// Cards of [`SM_MAPS`]: H100, H200.
const SM_MAPS_CARDS: (usize, usize) = (8, 4);

/// Over the cards of one class: the relative sd of the cards' median over SMs and of their mean
/// over SMs, of the per-SM rates of the shared-memory atomics at `metric`.
fn card_spread_of_sm_statistics(runs: &[ResultsDocument], metric: &str) -> (f64, f64, usize) {
    let mut cards: BTreeMap<String, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for run in runs {
        let Some(map) = run
            .benchmarks
            .iter()
            .filter(|b| b.id == "atomics/shared" || b.id == "atomics/shared_add")
            .find_map(|b| b.sm_map(metric))
        else {
            continue;
        };
        let e = cards.entry(run.gpu.uuid.clone()).or_default();
        e.0.push(median(&map.values).unwrap());
        e.1.push(mean(&map.values));
    }
    let medians: Vec<f64> = cards.values().map(|c| mean(&c.0)).collect();
    let means: Vec<f64> = cards.values().map(|c| mean(&c.1)).collect();
    (relative_sd(&medians), relative_sd(&means), cards.len())
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Sample standard deviation over the mean.
fn relative_sd(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len().max(2) - 1) as f64).sqrt() / m
}

/// The calibration of one archive with the repository's rule, printed, after checking that it
/// raises no false alarm: 0 REGRESSED at A/A, same card and class.
fn calibration_without_false_alarms(archive: &Path) -> Calibration {
    let c = calibration(&[archive.to_path_buf()], &config());
    println!("{}", calibration_markdown(&c));
    let same = c.same_card.as_ref().unwrap();
    assert_eq!(same.aa.regressed, 0, "same-card A/A false alarms: {:?}", same.false_alarms);
    let class = c.class.as_ref().unwrap();
    assert_eq!(class.aa.regressed, 0, "class A/A false alarms: {:?}", class.false_alarms);
    c
}

/// Shared-memory atomics at one and two threads per word: each SM runs at one of a few rates,
/// the same in every run (per-SM correlation between runs 0.999-1.000), and how many SMs run at
/// each differs between cards. The median over SMs follows the mix (H100, four cards: sd 4.2 %
/// at k=1, 2.4 % at k=2); the mean over SMs does not (0.26 %, 0.18 %). `atomics/shared_add`
/// reports the mean: leave one card out, a class baseline judges it without `cards_in_groups`,
/// no false alarm, and a 5 % shift is caught.
#[test]
fn shared_atomics_are_judged_by_the_mean_over_sms() {
    for (class_dir, cards) in [(H100, SM_MAPS_CARDS.0), (H200, SM_MAPS_CARDS.1)] {
        let archive = root().join(class_dir).join(SM_MAPS);
        let runs = documents(std::slice::from_ref(&archive));
        for metric in ["k=1", "k=2"] {
            let (by_median, by_mean, n) = card_spread_of_sm_statistics(&runs, metric);
            println!(
                "{class_dir} {metric}: {n} cards, sd of the median over SMs {by_median:.4}, of the mean {by_mean:.4}"
            );
            assert_eq!(n, cards);
            assert!(by_mean < 0.005, "{class_dir} {metric}: the mean over SMs spreads {by_mean} between cards");
            if class_dir == H100 {
                // H100 cards of both mixes are in the set (the H200s measured may all share one)
                assert!(by_median > 3.0 * by_mean, "{class_dir} {metric}: median {by_median}, mean {by_mean}");
            }
        }
        calibration_without_false_alarms(&archive);
        // Every run of the new benchmark against the other cards' runs: caught at 5 %, and not
        // REGRESSED unshifted.
        let rule = config().rule;
        let mut caught = 0;
        for run in runs.iter().filter(|r| r.benchmarks.iter().any(|b| b.id == "atomics/shared_add")) {
            let others: Vec<ResultsDocument> = runs.iter().filter(|r| r.gpu.uuid != run.gpu.uuid).cloned().collect();
            let (_, regressed) = judged(&others, run, &rule);
            assert!(!regressed.iter().any(|k| k.starts_with("atomics/shared_add")), "{regressed:?}");
            let (c, regressed) = judged(&others, &shifted(run, 0.05), &rule);
            for k in ["k=1", "k=2", "k=32", "k=all"] {
                let key = format!("atomics/shared_add:{k}");
                let row = c.metrics.iter().find(|m| m.key() == key).unwrap();
                assert!(regressed.contains(&key), "{} {key}: {:?} {}", run.gpu.uuid, row.verdict, row.reason);
                caught += 1;
            }
        }
        assert!(caught >= 4 * 3 * 2, "{class_dir}: {caught} class verdicts");
    }
}

/// Two default runs each of cards measured after the dependent global atomic chains moved to
/// every SM at once (`atomics/global_latency`, the mean over SMs): the committed class baselines
/// (`baselines/*.json.gz`) are these runs and nothing else; `results/*/runs-every-sm-chains-
/// 2026-11-25.txt` names the cards, runs and exit codes.
fn every_sm_chains(class_dir: &str) -> PathBuf {
    let class = class_dir.rsplit('/').next().unwrap();
    root().join("baselines").join(format!("{class}.json.gz"))
}

/// Cards of [`every_sm_chains`]: H100, H200.
const EVERY_SM_CHAINS_CARDS: (usize, usize) = (8, 10);

/// Over the cards of `runs`: the relative sd of the cards' means of their run medians of
/// `benchmark:metric`, and the number of cards.
fn card_spread(runs: &[ResultsDocument], benchmark: &str, metric: &str) -> (f64, usize) {
    let mut cards: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for run in runs {
        let samples =
            run.benchmarks.iter().filter(|b| b.id == benchmark).flat_map(|b| &b.metrics).find(|m| m.name == metric);
        if let Some(m) = samples.filter(|m| !m.samples.is_empty()) {
            cards.entry(run.gpu.uuid.as_str()).or_default().push(median(&m.samples).unwrap());
        }
    }
    let means: Vec<f64> = cards.values().map(|v| mean(v)).collect();
    (relative_sd(&means), means.len())
}

/// Dependent global atomic chains: one thread's chain carried the distance of its SM to the L2,
/// the same SM run after run on a card, so H100 cards differed by 1.3 % (sd) where each card's
/// runs agreed within 0.1 %, and a class comparison was INCONCLUSIVE at most
/// (`cards_in_groups`). On every SM at once, each SM's latency spans several percent of the
/// card's mean, and the mean over SMs agrees between cards within a few tenths of a percent: a
/// class baseline judges it without `cards_in_groups`, no false alarm, and a 5 % shift is
/// caught in every class comparison.
#[test]
fn global_atomic_chains_are_judged_by_the_mean_over_sms() {
    for (class_dir, cards) in [(H100, EVERY_SM_CHAINS_CARDS.0), (H200, EVERY_SM_CHAINS_CARDS.1)] {
        let archive = every_sm_chains(class_dir);
        let runs = documents(std::slice::from_ref(&archive));
        let one_sm = documents(&[SM_MAPS, OUT_OF_SAMPLE].map(|a| root().join(class_dir).join(a)));
        for (metric, before) in [("add", "global_add"), ("cas", "global_cas")] {
            let (every_sm, n) = card_spread(&runs, "atomics/global_latency", metric);
            let (single, m) = card_spread(&one_sm, "atomics/latency", before);
            println!(
                "{class_dir} {metric}: {n} cards, sd of the mean over SMs {every_sm:.4}; one SM, {m} cards, {single:.4}"
            );
            assert_eq!(n, cards);
            assert!(every_sm < 0.005, "{class_dir} {metric}: the mean over SMs spreads {every_sm} between cards");
            if class_dir == H100 {
                assert!(single > 3.0 * every_sm, "{class_dir} {metric}: one SM {single}, every SM {every_sm}");
            }
            for run in &runs {
                let map =
                    run.benchmarks.iter().find(|b| b.id == "atomics/global_latency").and_then(|b| b.sm_map(metric));
                let v = &map.unwrap().values;
                assert_eq!(v.len(), run.gpu.sm_count as usize, "{}", run.gpu.uuid);
                let (lo, hi) = v.iter().fold((f64::MAX, 0.0f64), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
                assert!(hi / lo > 1.04, "{} {metric}: every SM within {lo}-{hi}", run.gpu.uuid);
            }
        }
        let c = calibration_without_false_alarms(&archive);
        let (same, class) = (c.same_card.as_ref().unwrap(), c.class.as_ref().unwrap());
        for metric in ["add", "cas"] {
            let key = format!("atomics/global_latency:{metric}");
            assert!(!class.missed.contains_key(&key), "{class_dir} {key}: {:?}", class.missed.get(&key));
            assert!(!same.missed.contains_key(&key), "{class_dir} {key}: {:?}", same.missed.get(&key));
        }
    }
}

/// The committed class baselines (the runs of [`every_sm_chains`]) against every card measured
/// before them with the current rule's benchmarks (the fresh, three-run fresh and out-of-sample
/// sets, 2026-11-24): 0 REGRESSED. The benchmarks whose measurement changed since (the shared
/// chains, `atomics/shared`, the one-SM chains) are not comparable or have no baseline.
#[test]
fn earlier_cards_against_the_committed_baselines() {
    let rule = config().rule;
    for class_dir in [H100, H200] {
        let reference = documents(&[every_sm_chains(class_dir)]);
        let runs =
            gather(&[FRESH, FRESH_THREE_RUNS, OUT_OF_SAMPLE].map(|a| root().join(class_dir).join(a))).unwrap().runs;
        assert!(runs.len() >= 20, "{class_dir}: {} runs", runs.len());
        let mut judged_metrics = 0;
        for (label, run) in &runs {
            let (c, regressed) = judged(&reference, run, &rule);
            assert!(regressed.is_empty(), "{label} against the committed class baseline: {regressed:?}");
            judged_metrics += c.metrics.iter().filter(|m| m.verdict == Verdict::Pass).count();
        }
        println!("{class_dir}: {} runs, {judged_metrics} PASS verdicts", runs.len());
        assert!(judged_metrics > 250 * runs.len(), "{class_dir}: {judged_metrics}");
    }
}

/// Three default runs of an H100 measured after atomics were judged as a family
/// (`GPU-1bdf8f56`, board 692-2G520-0200-500, in no other set; `scripts/gpu/family-check.sh`,
/// `results/.../runs-family-verdicts-2026-11-26.txt`).
const FAMILY_CHECK: &str = "runs-family-verdicts-2026-11-26.tar.xz";

/// Atomics judged as a family against a class baseline (gpubench.toml `family_verdicts`):
/// healthy cards differ on single atomics by more than 5 % (H100 contention on two threads per
/// word, H200 atomics on a word per thread), but the median over the family of each metric's
/// change spreads by a few tenths of a percent between cards. On the committed class baselines,
/// leave one card out: 0 REGRESSED, the family never other than PASS unshifted, and every
/// metric class caught in at least 90 % of its verdicts at 5 % (atomics 98 % H100, 99 % H200;
/// 66 % and 80 % without family verdicts). The same card against its one other run: atomics
/// 97 % and 100 % at 5 % (88 % and 92 % without), bandwidth 93 % at 3 % on both (92 %, 89 %). Out of sample: every earlier card with the current
/// rule's benchmarks (the fresh, three-run fresh and out-of-sample sets, and on H100
/// [`FAMILY_CHECK`]; none in the baselines) shifted by 5 % against the committed baseline: the family REGRESSED in every run, and at
/// least 90 % of its comparable metrics with it; unshifted, the family PASS in every run.
#[test]
fn atomics_are_judged_as_a_family_against_the_class() {
    let rule = config().rule;
    let mut without = rule.clone();
    without.family_verdicts = None;
    without.same_card_family_verdicts = None;
    for class_dir in [H100, H200] {
        let archive = every_sm_chains(class_dir);
        let c = calibration_without_false_alarms(&archive);
        let class = c.class.as_ref().unwrap();
        let family = &class.families["atomics"];
        assert_eq!((family.comparisons, family.aa_not_pass), (class.comparisons, 0), "{family:?}");
        assert_eq!(family.detected[SHIFTS.iter().position(|s| *s == 0.05).unwrap()], 1.0, "{family:?}");
        for m in [
            MetricClass::Latency,
            MetricClass::Bandwidth,
            MetricClass::Instructions,
            MetricClass::SharedMemory,
            MetricClass::Atomics,
            MetricClass::Other,
        ] {
            at_least(class, m, 0.05, 0.9, "class");
        }
        at_least(class, MetricClass::Atomics, 0.05, 0.97, "class");
        // On the same card against one other run of it, the atomics and access patterns are
        // judged as families too, their band from the measured run-to-run prior
        // (`family_run_spread`): atomics 88 -> 97 % (H100), 92 -> 100 % (H200) at 5 %; bandwidth
        // 92 -> 93 %, 89 -> 93 % at 3 %.
        let same = c.same_card.as_ref().unwrap();
        for family in ["atomics", "access_patterns"] {
            assert_eq!(same.families[family].aa_not_pass, 0, "{:?}", same.families);
        }
        for m in [MetricClass::Latency, MetricClass::Bandwidth, MetricClass::Instructions, MetricClass::SharedMemory] {
            at_least(same, m, 0.03, 0.9, "same card");
        }
        at_least(same, MetricClass::Atomics, 0.05, 0.95, "same card");
        let alone = calibration(std::slice::from_ref(&archive), &Config { rule: without.clone(), ..config() });
        let alone = alone.class.as_ref().unwrap();
        assert!(alone.families.is_empty());
        let gain =
            class.detected(MetricClass::Atomics, 0.05).unwrap() - alone.detected(MetricClass::Atomics, 0.05).unwrap();
        assert!(gain > 0.15, "{class_dir}: family verdicts gain {gain}");

        let reference = documents(std::slice::from_ref(&archive));
        let mut sets = vec![FRESH, FRESH_THREE_RUNS, OUT_OF_SAMPLE];
        if class_dir == H100 {
            sets.push(FAMILY_CHECK);
        }
        let runs = gather(&sets.iter().map(|a| root().join(class_dir).join(a)).collect::<Vec<_>>()).unwrap().runs;
        let (mut judged_atomics, mut caught) = (0, 0);
        for (label, run) in &runs {
            let (c, _) = judged(&reference, run, &rule);
            let f = c.families.iter().find(|f| f.family == "atomics").unwrap();
            assert_eq!(f.verdict, Verdict::Pass, "{label}: {}", f.reason);
            let (c, _) = judged(&reference, &shifted(run, 0.05), &rule);
            let f = c.families.iter().find(|f| f.family == "atomics").unwrap();
            assert_eq!(f.verdict, Verdict::Regressed, "{label} shifted: {}", f.reason);
            for m in c.metrics.iter().filter(|m| m.family == "atomics" && m.ratio.is_some()) {
                judged_atomics += 1;
                caught += usize::from(m.verdict == Verdict::Regressed);
            }
        }
        let share = caught as f64 / judged_atomics as f64;
        println!(
            "{class_dir}: {} runs not in the baseline, shifted 5 %: {caught} of {judged_atomics} atomics REGRESSED",
            runs.len()
        );
        assert!(share >= 0.9, "{class_dir}: {share}");
    }
}
