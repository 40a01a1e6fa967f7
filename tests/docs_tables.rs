//! Tables and figures in the book that a command generates from committed recordings are what
//! that command prints now.

#[path = "support/book.rs"]
mod book;

use std::path::Path;
use std::process::Command;

use book::{assert_generated, book, table};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// What `python3 scripts/<script> <args>` prints, run from the repository root.
fn script(script: &str, args: &[&str]) -> String {
    let out = match Command::new("python3")
        .arg(root().join("scripts").join(script))
        .args(args)
        .current_dir(root())
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("python3 is needed to regenerate the book's tables: {e}"),
    };
    assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Every figure a script prints as "what: figure" stands in one of `pages`, as printed (line
/// breaks of the page read as spaces).
fn figures_stand_in(printed: &str, pages: &[&str]) {
    let text: Vec<String> = pages.iter().map(|p| book(p).split_whitespace().collect::<Vec<_>>().join(" ")).collect();
    let mut missing = Vec::new();
    for line in printed.lines() {
        let (what, figure) = line.split_once(": ").unwrap_or_else(|| panic!("not \"what: figure\": {line}"));
        if !text.iter().any(|t| t.contains(figure)) {
            missing.push(format!("{what}: {figure}"));
        }
    }
    assert!(missing.is_empty(), "not in {pages:?} as the script prints them:\n{}", missing.join("\n"));
}

/// The table of `docs/src/measures.md` headed "| GPU | card |" is the output of
/// `scripts/bandwidth_vs_peers.py` on `tests/fixtures/recorded/bandwidth-vs-peers.tar.xz`, and
/// every figure in it is gpubench at or above the best peer.
#[test]
fn bandwidth_against_peers_table_is_generated_from_the_recording() {
    let generated = script("bandwidth_vs_peers.py", &["tests/fixtures/recorded/bandwidth-vs-peers.tar.xz"]);
    assert_generated("docs/src/measures.md", "| GPU | card |", &generated);
    let rows: Vec<&str> = generated.lines().skip(2).collect();
    assert!(rows.len() >= 15, "{} rows", rows.len());
    for row in rows {
        let delta = row.trim_end_matches(" |").rsplit("| ").next().unwrap();
        assert!(delta.starts_with('+'), "gpubench below the best peer: {row}");
    }
}

/// The peers' settings and the wall times of the same job.
#[test]
fn bandwidth_notes_are_the_recording_s() {
    let notes = script("bandwidth_vs_peers.py", &["--notes", "tests/fixtures/recorded/bandwidth-vs-peers.tar.xz"]);
    assert!(notes.lines().count() >= 5, "{notes}");
    figures_stand_in(&notes, &["docs/src/measures.md"]);
}

/// The between-process spread of the batched atomics in `docs/src/measures.md` is
/// `scripts/process_spread.py` on the H100s of `tests/corpus`, and, on every card there, the figure of `l2_bandwidth/private`
/// in `docs/src/calibration.md`.
#[test]
fn spread_between_processes_is_generated_from_the_corpus() {
    let generated = script("process_spread.py", &["tests/corpus/nvidia-h100-80gb-hbm3-cc90-132sm-79gib"]);
    assert_generated("docs/src/measures.md", "| metric | cards | spread of a card's runs", &generated);
    let private = script("process_spread.py", &["tests/corpus", "l2_bandwidth/private:bandwidth"]);
    let row = private.lines().nth(2).unwrap();
    let gap = row.trim_end_matches(" |").rsplit("| ").next().unwrap();
    figures_stand_in(&format!("largest gap between two runs: span up to {gap}"), &["docs/src/calibration.md"]);
}

/// The levels processes of one card land on, and how one copy of a target against many, copies
/// in one allocation against sixteen, eager against lazy module loading and private L2 slices
/// by SM against by block move their spread, in `docs/src/calibration.md`:
/// `scripts/process_spread.py` on `tests/fixtures/recorded/process-levels/`.
#[test]
fn process_levels_are_generated_from_their_runs() {
    let at = |file: &str| format!("tests/fixtures/recorded/process-levels/{file}.tar.xz");
    let (family, alone) = (at("banks-family"), at("banks-alone"));
    let levels = script("process_spread.py", &["--levels", &family, &alone, "shared_banks/threads=256:stride=4"]);
    assert_generated("docs/src/calibration.md", "| processes of | metric | processes |", &levels);
    let two = ["atomics/cas:distinct", "l2_bandwidth/private:bandwidth"];
    let private = ["l2_bandwidth/private:bandwidth", "l2_bandwidth/private:bytes_per_clk_per_sm"];
    let tables = [
        (
            "| copies of the target (`GPUBENCH_PLACEMENTS`)",
            two,
            [("default", "placements-default"), ("one", "placements-1")],
        ),
        ("| allocations holding the copies", two, [("one", "allocations-1"), ("sixteen", "allocations-16")]),
        ("| module loading", two, [("lazy", "loading-lazy"), ("eager", "loading-eager")]),
        (
            "| private slices assigned by",
            private,
            [("the block's index", "slices-by-block"), ("the block's SM", "slices-by-sm")],
        ),
    ];
    for (head, metrics, arms) in tables {
        let rows = table("docs/src/calibration.md", head);
        for (arm, file) in arms {
            let printed = script("process_spread.py", &[&at(file), metrics[0], metrics[1]]);
            for (line, metric) in printed.lines().skip(2).zip(metrics) {
                // | `metric` | cards | spread (median over cards) | largest | gap |
                let cells: Vec<&str> = line.split(" | ").collect();
                let (spread, gap) = (cells[2], cells[4].trim_end_matches(" |"));
                assert!(
                    rows.iter().any(|r| r.starts_with(&format!("| {arm}"))
                        && r.contains(&format!("`{metric}` | {spread} | {gap} |"))),
                    "no row of {arm}, `{metric}`, {spread}, {gap} in {rows:#?}"
                );
            }
        }
    }
}

/// The card of the H200 corpus whose distinct-word atomics every other card sets apart, in
/// `docs/src/calibration.md`.
#[test]
fn the_card_apart_is_the_corpus_card_apart() {
    let printed = script(
        "process_spread.py",
        &["--cards", "tests/corpus/nvidia-h200-cc90-132sm-140gib", "atomics/add_u32/distinct:ops_per_s"],
    );
    assert_generated("docs/src/calibration.md", "| card | runs | `atomics/add_u32/distinct:ops_per_s`", &printed);
}

/// The figures of the class baselines in "What it measures", "Baselines and verdicts", "How the
/// verdict rule was calibrated" and the harness chapter.
#[test]
fn baseline_figures_are_the_committed_runs_figures() {
    let printed = script(
        "baseline_figures.py",
        &[
            "baselines/nvidia-h100-80gb-hbm3-cc90-132sm-79gib/class.json.xz",
            "baselines/nvidia-h200-cc90-132sm-140gib/class.json.xz",
        ],
    );
    assert!(printed.lines().count() >= 20, "{printed}");
    figures_stand_in(
        &printed,
        &["docs/src/measures.md", "docs/src/verdicts.md", "docs/src/calibration.md", "docs/src/harness-overhead.md"],
    );
}

/// The figures of the dissect chapter from the committed dissect runs.
#[test]
fn dissect_figures_are_the_committed_runs_figures() {
    let printed = script("dissect_figures.py", &[]);
    assert!(printed.lines().count() >= 25, "{printed}");
    figures_stand_in(&printed, &["docs/src/dissect.md"]);
}

/// The before/after job of "How the verdict rule was calibrated" is the recorded one
/// (`tests/fixtures/recorded/upgrade-jobs.tar.xz`, `upgrade-before-after/`).
#[test]
fn the_before_after_job_in_the_book_is_the_recorded_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recorded/upgrade-jobs.tar.xz");
    let mut archive = tar::Archive::new(xz2::read::XzDecoder::new(std::fs::File::open(path).unwrap()));
    let mut report = String::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        if entry.path().unwrap().to_string_lossy() == "upgrade-before-after/report.txt" {
            std::io::Read::read_to_string(&mut entry, &mut report).unwrap();
        }
    }
    let line = report.lines().find(|l| l.contains("runs of A")).expect("the card's line");
    let counts = line.split_once(": ").unwrap().1;
    figures_stand_in(&format!("card: {counts}"), &["docs/src/calibration.md"]);
    assert!(report.contains("NVRTC 12.9") && report.contains("per-card baselines `before`"), "{report}");
}
