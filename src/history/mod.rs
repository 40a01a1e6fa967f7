//! History: every run kept in an SQLite database, per metric and per card the series of run
//! medians over time, change points found against the series' own run-to-run noise, and the
//! change behind each (software stack, generated code, clock, power limit, throttling, other
//! processes). The schema is documented in docs/src/history-schema.md.
//!
//! Layers: [`record`] (what a results document contributes, no I/O), [`store`] (the database,
//! its tables' columns named once in `columns`), [`import`] (finding results files), [`series`]
//! (reading series back), [`changepoint`] (pure detection), [`attribution`] (what changed),
//! [`analysis`] (the report), [`render`] and [`plot`] (output).

pub mod analysis;
pub mod attribution;
pub mod changepoint;
mod columns;
pub mod import;
pub mod plot;
pub mod record;
pub mod render;
pub mod series;
pub mod store;

pub use analysis::{AnalysedSeries, AnalysisParams, HistoryReport, analyse, analyse_store};
pub use attribution::{Cause, ChangePoint};
pub use changepoint::{DetectParams, Segmentation, detect};
pub use record::RunRecord;
pub use series::{RunInfo, Series, SeriesFilter};
pub use store::{AddOutcome, HistoryStore};

use std::path::Path;

use crate::error::Result;
use crate::results::ResultsDocument;

/// Appends one finished run to the database at `db` (created when missing).
pub fn append_run(db: &Path, doc: &ResultsDocument) -> Result<AddOutcome> {
    let mut store = HistoryStore::open(db)?;
    store.add(&[RunRecord::from_document(doc, None, "run")])
}
