//! Judging a run: before it, read the configuration and the baseline (so that a bad file fails
//! before minutes of measuring); after it, compare, write the verdict reports, and save.

use std::path::{Path, PathBuf};

use crate::baseline::{BaselineKey, RunsFile, SaveMode, Store, validate_name};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::report::{comparison_json, html, junit, markdown};
use crate::results::{GpuIdentity, ResultsDocument, write_atomic};
use crate::verdict::{Comparison, NoiseModel, Side, check_comparable, compare};

use super::Observer;

/// Where baselines and the configuration are.
#[derive(Debug, Clone, Default)]
pub struct Place {
    /// Folder of baseline files [default: `[baseline] dir` of gpubench.toml, else `baselines`
    /// in the root].
    pub baseline_dir: Option<PathBuf>,
    /// Configuration file [default: the nearest gpubench.toml].
    pub config: Option<PathBuf>,
}

impl Place {
    /// The configuration: `config`, else the nearest gpubench.toml from `start` upwards.
    pub fn config(&self, start: &Path) -> Result<Config> {
        match &self.config {
            Some(path) => Config::load(path),
            None => Config::discover(start),
        }
    }

    /// The baselines folder: `baseline_dir`, else the configuration's, else `<root>/baselines`.
    pub fn store(&self, config: &Config, root: &Path) -> Store {
        let dir =
            self.baseline_dir.clone().or_else(|| config.baseline_dir.clone()).unwrap_or_else(|| root.join("baselines"));
        Store::new(dir)
    }
}

/// Report files of a comparison.
#[derive(Debug, Clone, Default)]
pub struct ReportFiles {
    /// Markdown (a CI step summary).
    pub markdown: Option<PathBuf>,
    /// JUnit XML (one test case per metric).
    pub junit: Option<PathBuf>,
    /// JSON.
    pub json: Option<PathBuf>,
    /// One self-contained HTML page [default: next to `json`, with the extension `.html`].
    pub html: Option<PathBuf>,
}

impl ReportFiles {
    /// Whether any file is asked for.
    pub fn any(&self) -> bool {
        self.markdown.is_some() || self.junit.is_some() || self.json.is_some() || self.html.is_some()
    }

    /// Where the HTML page goes: `html`, else next to the JSON (`verdicts.json` ->
    /// `verdicts.html`).
    pub fn html_path(&self) -> Option<PathBuf> {
        self.html.clone().or_else(|| self.json.as_ref().map(|j| j.with_extension("html")))
    }

    /// Writes the requested report files, telling `obs` about each.
    pub fn write(&self, c: &Comparison, obs: &mut dyn Observer) -> Result<()> {
        let html_path = self.html_path();
        let files: [(&Option<PathBuf>, fn(&Comparison) -> String); 4] =
            [(&self.markdown, markdown), (&self.junit, junit), (&self.json, comparison_json), (&html_path, html)];
        for (path, render) in files {
            if let Some(path) = path {
                write_atomic(path, render(c).as_bytes())?;
                obs.note(&format!("wrote {}", path.display()));
            }
        }
        Ok(())
    }
}

/// What a run is judged against and how.
#[derive(Debug, Clone, Default)]
pub struct JudgeRequest {
    /// Where baselines and the configuration are.
    pub place: Place,
    /// Compare with the baseline NAME, or a baseline or results FILE; `Some("")` or `None`: this
    /// GPU class's baseline, when there is one (`Some` requires it to exist).
    pub baseline: Option<String>,
    /// Do not compare.
    pub no_baseline: bool,
    /// Key baselines by the GPU's UUID too.
    pub per_gpu: bool,
    /// Save the run as a baseline, under this name when not empty.
    pub save_baseline: Option<String>,
    /// Add the run to the baseline's runs instead of replacing them.
    pub append: bool,
    /// Compare with a baseline of another GPU class.
    pub allow_other_class: bool,
}

impl JudgeRequest {
    /// Checks the baseline names before anything runs.
    pub fn check_names(&self) -> Result<()> {
        if let Some(name) = self.save_baseline.as_deref().filter(|n| !n.is_empty()) {
            validate_name(name)?;
        }
        if let Some(name) = self.baseline.as_deref().filter(|n| !n.is_empty() && !is_file_argument(n)) {
            validate_name(name)?;
        }
        Ok(())
    }
}

/// What the run will be judged against, read before it starts.
pub struct Judge {
    config: Config,
    store: Store,
    /// Label, runs, and the card a per-card baseline is for.
    baseline: Option<(String, Vec<ResultsDocument>, Option<String>)>,
    /// What the baseline learned of its noise.
    noise: Option<NoiseModel>,
    save_key: Option<BaselineKey>,
    append: bool,
}

impl Judge {
    /// Reads the configuration, the baseline to compare with and (to refuse early) the baseline
    /// a save would update, for a run on `gpu` in the workspace `root`.
    pub fn prepare(req: &JudgeRequest, gpu: &GpuIdentity, root: &Path, obs: &mut dyn Observer) -> Result<Judge> {
        let config = req.place.config(root)?;
        let store = req.place.store(&config, root);
        let (baseline, noise) = match if req.no_baseline { None } else { read_baseline(req, gpu, &store, obs)? } {
            Some((label, runs, per_card, noise)) => (Some((label, runs, per_card)), noise),
            None => (None, None),
        };
        // Refuse another card or class before minutes of measuring.
        if let Some((_, runs, per_card)) = &baseline {
            check_comparable(per_card.as_deref(), runs, gpu, req.allow_other_class)?;
        }
        let save_key = match &req.save_baseline {
            Some(name) => {
                let key = BaselineKey::for_gpu(gpu, Some(name), req.per_gpu)?;
                store.load(&key)?;
                Some(key)
            }
            None => None,
        };
        Ok(Judge { config, store, baseline, noise, save_key, append: req.append })
    }

    /// Compares `doc` with the baseline, when there is one.
    pub fn compare(&self, doc: &ResultsDocument) -> Result<Option<Comparison>> {
        let Some((label, runs, _)) = &self.baseline else { return Ok(None) };
        let current = [doc.clone()];
        let side = Side { label, runs, noise: self.noise.as_ref() };
        compare(side, Side::of("this run", &current), &self.config.rule).map(Some)
    }

    /// Saves `doc` as a baseline when asked.
    pub fn save(&self, doc: &ResultsDocument, now_unix_s: u64, obs: &mut dyn Observer) -> Result<()> {
        let Some(key) = &self.save_key else { return Ok(()) };
        let mode = if self.append { SaveMode::Append { max_runs: self.config.max_runs } } else { SaveMode::Replace };
        let (path, b) = self.store.save(key, vec![doc.clone()], mode, now_unix_s)?;
        let runs = b.runs.len();
        obs.note(&format!(
            "saved the {} ({runs} run{}) to {}",
            key.describe(),
            if runs == 1 { "" } else { "s" },
            shown(&path)
        ));
        let of_this_card = b.runs.iter().filter(|r| r.gpu.uuid == doc.gpu.uuid).count();
        let lent = b.noise_model().prior_runs.is_some();
        if of_this_card == 1 && !lent {
            let name = key.name.as_deref().map(|n| format!(" {n}")).unwrap_or_default();
            let per_gpu = if key.uuid.is_some() { " --per-gpu" } else { "" };
            obs.note(&format!(
                "one run of this card shows nothing of how far its runs stray, so a change against it is INCONCLUSIVE at most: `cargo gpubench --save-baseline{name} --append{per_gpu}` twice more gives three"
            ));
        }
        Ok(())
    }
}

fn read_baseline(
    req: &JudgeRequest,
    gpu: &GpuIdentity,
    store: &Store,
    obs: &mut dyn Observer,
) -> Result<Option<(String, Vec<ResultsDocument>, Option<String>, Option<NoiseModel>)>> {
    match req.baseline.as_deref() {
        Some(file) if is_file_argument(file) => {
            let read = RunsFile::read(Path::new(file))?;
            let per_card = match &read {
                RunsFile::Baseline(b) => b.gpu_uuid.clone(),
                RunsFile::Results(_) => None,
            };
            let noise = read.noise_model();
            Ok(Some((file.to_string(), read.into_runs(), per_card, noise)))
        }
        requested => {
            let key = BaselineKey::for_gpu(gpu, requested.filter(|n| !n.is_empty()), req.per_gpu)?;
            match store.load(&key)? {
                Some((path, b)) => {
                    let noise = Some(b.noise_model());
                    Ok(Some((shown(&path), b.runs, b.gpu_uuid, noise)))
                }
                None if requested.is_some() => Err(Error::Usage(format!(
                    "no {} in {} (`cargo gpubench baseline list` shows what there is)",
                    key.describe(),
                    shown(store.dir())
                ))),
                None => {
                    obs.note(&format!(
                        "no {} in {}: the run will not be compared (a new GPU class: `cargo gpubench --no-baseline -o runs/CARD-N.json` three times on each card, then `cargo gpubench baseline save runs/*.json`; docs/src/new-gpu-model.md)",
                        key.describe(),
                        shown(store.dir())
                    ));
                    Ok(None)
                }
            }
        }
    }
}

/// `path` relative to the current folder when it lies below it (shorter labels in reports).
pub fn shown(path: &Path) -> String {
    let relative = std::env::current_dir().ok().and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf));
    relative.unwrap_or_else(|| path.to_path_buf()).display().to_string()
}

/// Whether a `--baseline` value names a file rather than a baseline in the folder.
pub fn is_file_argument(value: &str) -> bool {
    value.contains('/') || crate::results::is_document_name(value)
}

/// The current folder.
pub fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().map_err(|e| Error::io(".", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Notes(Vec<String>);

    impl Observer for Notes {
        fn note(&mut self, line: &str) {
            self.0.push(line.to_string());
        }
    }

    #[test]
    fn a_baseline_of_one_run_says_how_to_get_a_verdict() {
        let dir = tempfile::tempdir().unwrap();
        let doc =
            ResultsDocument::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-quick-run.json"))
                .unwrap();
        let place = Place { baseline_dir: Some(dir.path().join("baselines")), config: None };
        let save = |append: bool, created: u64, notes: &mut Notes| {
            let req = JudgeRequest {
                place: place.clone(),
                no_baseline: true,
                save_baseline: Some("before".into()),
                append,
                ..JudgeRequest::default()
            };
            let judge = Judge::prepare(&req, &doc.gpu, dir.path(), notes).unwrap();
            let run = ResultsDocument { created_unix_s: created, ..doc.clone() };
            judge.save(&run, created, notes).unwrap();
        };
        let mut first = Notes::default();
        save(false, doc.created_unix_s, &mut first);
        assert!(
            first.0.iter().any(|n| n.contains("`cargo gpubench --save-baseline before --append` twice more")),
            "{:?}",
            first.0
        );
        let mut second = Notes::default();
        save(true, doc.created_unix_s + 60, &mut second);
        assert!(second.0.iter().any(|n| n.contains("(2 runs)")), "{:?}", second.0);
        assert!(!second.0.iter().any(|n| n.contains("twice more")), "{:?}", second.0);
    }
}
