//! The committed runs of a GPU class, as the tests read them: every run of the class baseline
//! (`baselines/<class>/class.json.xz`) and of `tests/corpus/<class>/`, by card, and the runs the
//! class baseline is built from (`scripts/recorded.py`, which `scripts/rebuild-baselines.sh`
//! gives `baseline save --cards 3`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gpubench::results::ResultsDocument;
use gpubench::verdict::corpus::gather;

/// Runs of a card that the recording workflow takes (the first, oldest first).
pub const RUNS_PER_CARD: usize = 3;

/// The generated code of a run: every kernel source with its cubin's hash.
pub type Code = BTreeSet<(String, String)>;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn code_of(run: &ResultsDocument) -> Code {
    run.benchmarks.iter().flat_map(|b| &b.kernels).map(|k| (k.source.clone(), k.cubin_sha256.clone())).collect()
}

/// Every run of the class `slug`, by card, oldest first within a card (a run the class
/// baseline and the corpus both hold read once), and the generated code of the committed class
/// baseline (what the benchmarks run today).
pub fn runs_by_card(slug: &str) -> (BTreeMap<String, Vec<ResultsDocument>>, Code) {
    let mut paths: Vec<PathBuf> = vec![root().join(format!("baselines/{slug}/class.json.xz"))];
    let corpus = root().join("tests/corpus").join(slug);
    if corpus.is_dir() {
        paths.push(corpus);
    }
    let runs = gather(&paths).unwrap().runs;
    // the class baseline is read first
    assert!(runs[0].0.contains("class.json"), "{}", runs[0].0);
    let current = code_of(&runs[0].1);
    let mut by_card: BTreeMap<String, Vec<ResultsDocument>> = BTreeMap::new();
    for (_, run) in runs {
        let card = by_card.entry(run.gpu.uuid.clone()).or_default();
        if !card.iter().any(|r| r.created_unix_s == run.created_unix_s) {
            card.push(run);
        }
    }
    by_card.values_mut().for_each(|v| v.sort_by_key(|r| r.created_unix_s));
    (by_card, current)
}

/// The runs the class baseline of `slug` is built from: the first three of every card of its
/// code, oldest first.
#[allow(dead_code)]
pub fn recorded_runs(slug: &str) -> Vec<ResultsDocument> {
    let (by_card, current) = runs_by_card(slug);
    let mut runs: Vec<ResultsDocument> = by_card
        .into_values()
        .filter(|r| code_of(&r[0]) == current)
        .flat_map(|r| r.into_iter().take(RUNS_PER_CARD))
        .collect();
    runs.sort_by(|a, b| (a.created_unix_s, &a.gpu.uuid).cmp(&(b.created_unix_s, &b.gpu.uuid)));
    runs
}
