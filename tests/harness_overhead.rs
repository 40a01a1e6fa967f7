//! The harness is never the measurement: on the runs the class baselines are built from, every
//! family's fixed per-launch cost (launch gap, empty clock bracket, timer ticks) against what one
//! launch or window times (`gpubench::harness::overhead`). The families below 0.2 % are held there; the ones above it
//! are named with the span their launches would need.

#[path = "support/recorded.rs"]
mod recorded;

use gpubench::harness::overhead::{self, FamilyShare, FixedCosts, LIMIT};
use gpubench::measure::launch_size;

use recorded::root;

/// Cycles of the empty timing bracket dissect measured on the cards of the committed dissect
/// runs (`timer_overhead_cycles`), the largest.
fn bracket_cycles() -> f64 {
    let dir = root().join("tests/fixtures/dissect");
    let mut most: f64 = 0.0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = e.path().join("sweeps.json.gz");
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()),
            &mut text,
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        most = most.max(v["timer_overhead_cycles"].as_f64().unwrap());
    }
    assert!(most > 0.0);
    most
}

/// Families over 0.2 % on the committed H100 runs, which predate launches sized to
/// `launch_size::MIN_LAUNCH_US` (each launch of them timed less than 500 launch gaps).
const H100_OVER_LIMIT: &[&str] = &["atomics", "dram", "stream"];

/// Over 0.2 % on the committed H200 runs, recorded with sized launches and windows: none.
const H200_OVER_LIMIT: &[&str] = &[];

/// The table of `docs/src/harness-overhead.md` under `heading`.
fn in_book(heading: &str) -> Vec<String> {
    let book = std::fs::read_to_string(root().join("docs/src/harness-overhead.md")).unwrap();
    let table = book.lines().skip_while(|l| *l != heading).skip(1).skip_while(|l| !l.starts_with('|'));
    table.take_while(|l| l.starts_with('|')).map(str::to_owned).collect()
}

fn families(class: &str) -> Vec<FamilyShare> {
    let runs = recorded::recorded_runs(class);
    let bracket = bracket_cycles();
    let mut worst: Vec<FamilyShare> = Vec::new();
    let mut gaps: Vec<f64> = Vec::new();
    for run in &runs {
        let (launch, from) = overhead::launch_ns(run).expect("latency benchmarks give the launch gap");
        assert!((500.0..10_000.0).contains(&launch), "{}: launch gap {launch} ns from {from}", run.gpu.uuid);
        gaps.push(launch);
        let tick = overhead::timer_tick_ns(run).unwrap();
        assert_eq!(tick, 32.0, "%globaltimer resolution on {}", run.gpu.uuid);
        let costs = FixedCosts { launch_ns: launch, bracket_cycles: bracket, timer_tick_ns: tick };
        for f in overhead::by_family(&overhead::shares(run, &costs)) {
            match worst.iter_mut().find(|w| w.family == f.family) {
                Some(w) if f.worst.share() > w.worst.share() => *w = f,
                Some(_) => {}
                None => worst.push(f),
            }
        }
    }
    worst.sort_by(|a, b| a.family.cmp(&b.family));
    let (lo, hi) = gaps.iter().fold((f64::MAX, 0.0f64), |(lo, hi), g| (lo.min(*g), hi.max(*g)));
    println!(
        "{class}: {} runs, launch gap {:.1}-{:.1} µs\n{}",
        runs.len(),
        lo / 1e3,
        hi / 1e3,
        overhead::markdown(&worst)
    );
    let gpu = runs[0].gpu.name.split(' ').find(|w| w.starts_with('H')).unwrap_or(&runs[0].gpu.name);
    let heading = format!("## {gpu} ({} runs)", runs.len());
    assert_eq!(
        in_book(&heading),
        overhead::markdown(&worst).lines().collect::<Vec<_>>(),
        "the table under {heading:?}: regenerate it with `cargo test --test harness_overhead -- --nocapture`"
    );
    worst
}

fn check(class: &str, over_limit: &[&str]) {
    let fams = families(class);
    let names: Vec<&str> = fams.iter().map(|f| f.family.as_str()).collect();
    for family in [
        "access_patterns",
        "atomics",
        "constant_memory",
        "dram",
        "instructions",
        "l1_bandwidth",
        "l2_bandwidth",
        "latency",
        "shared_bandwidth",
        "shared_banks",
        "spilling",
        "stream",
    ] {
        assert!(names.contains(&family), "{class}: {family} not modelled");
    }
    for f in &fams {
        let over = over_limit.contains(&f.family.as_str());
        assert_eq!(
            !f.passes(),
            over,
            "{class}: {} {:.3} % of {} ({:.0} {} per launch, {:.1} fixed)",
            f.family,
            100.0 * f.worst.share(),
            f.worst.key,
            f.worst.span,
            f.worst.timed.unit(),
            f.worst.fixed
        );
        if !over {
            assert!(f.worst.share() < LIMIT);
        }
    }
}

#[test]
fn fixed_costs_of_every_family_on_the_committed_h100_runs() {
    check("nvidia-h100-80gb-hbm3-cc90-132sm-79gib", H100_OVER_LIMIT);
}

#[test]
fn fixed_costs_of_every_family_on_the_committed_h200_runs() {
    const H200: &str = "nvidia-h200-cc90-132sm-140gib";
    check(H200, H200_OVER_LIMIT);
    // every event-timed benchmark of these runs was sized: passes per launch for the streams,
    // operations per thread for the atomics, recorded with the launch minimum
    let runs = recorded::recorded_runs(H200);
    let mut sized = 0;
    for b in runs.iter().flat_map(|r| &r.benchmarks) {
        let event_timed = match b.family.as_str() {
            "stream" | "dram" => true,
            // the throughput benchmarks, batched to an iteration minimum
            "atomics" => b.params.contains_key("iteration_us"),
            _ => false,
        };
        if event_timed {
            assert_eq!(b.params.get(launch_size::LAUNCH_PARAM), Some(&launch_size::MIN_LAUNCH_US.into()), "{}", b.id);
            assert!(b.family == "atomics" || b.params["passes_per_launch"].as_u64().unwrap() > 1, "{}", b.id);
            sized += 1;
        }
    }
    assert_eq!(sized, runs.len() * (4 + 6 + 7), "stream, dram and atomics throughput benchmarks");
}

/// Runs of the per-SM window families in `tests/fixtures/recorded/window-scale/<set>.tar.xz`, by
/// the factor their windows were lengthened by (`GPUBENCH_WINDOW_SCALE`, 1 where not set).
fn window_runs(set: &str) -> std::collections::BTreeMap<u64, Vec<gpubench::results::ResultsDocument>> {
    let path = root().join(format!("tests/fixtures/recorded/window-scale/{set}.tar.xz"));
    let mut by_scale = std::collections::BTreeMap::new();
    let scale_of = |b: &gpubench::results::BenchmarkResult| {
        b.params.get(launch_size::WINDOW_SCALE_PARAM).and_then(|v| v.as_u64()).unwrap_or(1)
    };
    for (_, run) in gpubench::verdict::corpus::gather(&[path]).unwrap().runs {
        let scale = scale_of(&run.benchmarks[0]);
        assert!(run.benchmarks.iter().all(|b| scale_of(b) == scale));
        by_scale.entry(scale).or_insert_with(Vec::new).push(run);
    }
    by_scale
}

/// Each family's worst metric by the share of a window at its recorded length that the window's
/// start and end take ([`overhead::window_fixed_share`]), from the mean over runs (and cards) of
/// its medians at scale 1 and at `long`; as (family, metric, share), and as the book's table.
fn window_shares(set: &str, long: u64) -> (Vec<(String, String, f64)>, String) {
    let runs = window_runs(set);
    let mean = |scale: u64, id: &str, metric: &str| {
        let v: Vec<f64> = runs[&scale]
            .iter()
            .flat_map(|r| &r.benchmarks)
            .filter(|b| b.id == id)
            .flat_map(|b| &b.metrics)
            .filter(|m| m.name == metric)
            .map(|m| m.summary.median)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let mut worst: std::collections::BTreeMap<String, (String, f64)> = std::collections::BTreeMap::new();
    for b in runs[&1][0].benchmarks.iter().filter(|b| !b.id.ends_with("/latency")) {
        for m in &b.metrics {
            if m.name.ends_with("efficiency") || m.name.ends_with("slowdown") || m.name.ends_with("_latency") {
                continue;
            }
            // `shared_add` sizes its work to the window in powers of two: the work's own ratio
            let work = |scale: u64| {
                runs[&scale][0].benchmarks.iter().find(|x| x.id == b.id).and_then(|x| {
                    x.chosen.get(&format!("{}_atomics_per_thread", m.name)).and_then(serde_json::Value::as_f64)
                })
            };
            let ratio = match (work(1), work(long)) {
                (Some(short), Some(longer)) => longer / short,
                _ => long as f64,
            };
            let short = mean(1, &b.id, &m.name);
            let share = overhead::window_fixed_share(short, mean(long, &b.id, &m.name), ratio, m.better)
                // the same work at both lengths: nothing to measure
                .unwrap_or(0.0);
            let e = worst.entry(b.family.clone()).or_insert((String::new(), -1.0));
            if share > e.1 {
                *e = (format!("{}:{}", b.id, m.name), share);
            }
        }
    }
    let mut table = String::from("| family | worst metric | share of a window |\n| --- | --- | ---: |\n");
    let rows: Vec<(String, String, f64)> = worst.into_iter().map(|(f, (k, s))| (f, k, s)).collect();
    for (f, k, s) in &rows {
        table.push_str(&format!("| {f} | `{k}` | {:.3} % |\n", 100.0 * s));
    }
    (rows, table)
}

/// The start and end of a per-SM window, measured: two H200s ran the windowed families with
/// their windows at the recorded length and 4 times (`after`: today's, 2^22 cycles) or 4 and 16
/// times longer (`before`: 2^18 cycles, `shared_add` still adding every shared word to one
/// global counter). Today every family's windows lose less than 0.2 % to their start and end;
/// before, the throughput families lost 0.2-1.3 % and `shared_add` up to 91 %.
#[test]
fn per_sm_windows_lose_less_than_the_limit_to_their_start_and_end() {
    let (after, table) = window_shares("after", 4);
    println!("today's windows, against windows 4 times longer:\n{table}");
    assert_eq!(in_book("## Per-SM windows today"), table.lines().collect::<Vec<_>>(), "regenerate the book's table");
    let families: Vec<&str> = after.iter().map(|(f, ..)| f.as_str()).collect();
    assert_eq!(
        families,
        ["atomics", "constant_memory", "instructions", "l1_bandwidth", "shared_bandwidth", "spilling"]
    );
    for (f, k, s) in &after {
        assert!(*s < LIMIT, "{f}: {k} loses {:.3} % to its window", 100.0 * s);
    }
    let (before, table) = window_shares("before", 16);
    println!("windows of 2^18 cycles, against windows 16 times longer:\n{table}");
    assert_eq!(in_book("## Per-SM windows before"), table.lines().collect::<Vec<_>>(), "regenerate the book's table");
    let share = |family: &str| before.iter().find(|(f, ..)| f == family).unwrap().2;
    assert!(share("atomics") > 0.5, "shared_add at one thread per word");
    assert!(share("instructions") > LIMIT && share("constant_memory") > LIMIT && share("spilling") > LIMIT);
}
