//! The history database: an SQLite file with one row per run and one per metric of a run.
//! The schema is documented in docs/src/history-schema.md; every write is one transaction.

use std::path::{Path, PathBuf};

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use super::columns::{METRIC_COLUMNS, RUN_COLUMNS, definitions, insert, values};

use super::record::{MetricRow, RunRecord};
use crate::error::{Error, Result};

/// Version of the schema below, kept in the `meta` table; a database of another version is
/// refused rather than changed.
pub const HISTORY_SCHEMA_VERSION: i64 = 1;

/// The schema: `meta`, and `runs` and `metrics` from their column lists.
fn schema() -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
{runs}
);
CREATE INDEX IF NOT EXISTS runs_card_time ON runs (card_uuid, created_unix_s);
CREATE TABLE IF NOT EXISTS metrics (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
{metrics},
    PRIMARY KEY (run_id, benchmark, metric, unit)
);
CREATE INDEX IF NOT EXISTS metrics_series ON metrics (benchmark, metric, unit, params_hash);
",
        runs = definitions(RUN_COLUMNS),
        metrics = definitions(METRIC_COLUMNS)
    )
}

/// An open history database.
pub struct HistoryStore {
    conn: Connection,
    path: PathBuf,
}

/// What an import or append did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddOutcome {
    /// Runs added.
    pub added: usize,
    /// Runs already in the database (same run key), left as they were.
    pub already: usize,
}

fn sql_err(path: &Path, e: rusqlite::Error) -> Error {
    Error::data(path, format!("history database: {e}"))
}

impl HistoryStore {
    /// Opens (creating when missing) the database at `path`. A file that is not an SQLite
    /// database, or one of another history schema version, is a data error.
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let conn = Connection::open(path).map_err(|e| sql_err(path, e))?;
        let store = HistoryStore { conn, path: path.to_path_buf() };
        store.init()?;
        Ok(store)
    }

    /// Opens an existing database; a missing file is a usage error (nothing to show).
    pub fn open_existing(path: &Path) -> Result<Self> {
        if !path.is_file() {
            return Err(Error::Usage(format!(
                "no history database at {} (create one with `cargo gpubench history import` or a run with --history)",
                path.display()
            )));
        }
        Self::open(path)
    }

    fn init(&self) -> Result<()> {
        let p = &self.path;
        self.conn.busy_timeout(std::time::Duration::from_secs(30)).map_err(|e| sql_err(p, e))?;
        self.conn.pragma_update(None, "foreign_keys", "ON").map_err(|e| sql_err(p, e))?;
        // Another program's SQLite database is refused, never given our tables.
        let (tables, ours): (i64, i64) = self
            .conn
            .query_row(
                "SELECT COUNT(*), COALESCE(SUM(name = 'meta'), 0) FROM sqlite_master WHERE type = 'table'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| sql_err(p, e))?;
        if tables > 0 && ours == 0 {
            return Err(Error::data(p, "an SQLite database, but not a gpubench history database"));
        }
        self.conn.execute_batch(&schema()).map_err(|e| sql_err(p, e))?;
        let version: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| r.get(0))
            .optional()
            .map_err(|e| sql_err(p, e))?;
        match version {
            None => {
                self.conn
                    .execute(
                        "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
                        params![HISTORY_SCHEMA_VERSION.to_string()],
                    )
                    .map_err(|e| sql_err(p, e))?;
            }
            Some(v) if v == HISTORY_SCHEMA_VERSION.to_string() => {}
            Some(v) => {
                return Err(Error::data(
                    p,
                    format!("history schema version {v}, this gpubench reads version {HISTORY_SCHEMA_VERSION}"),
                ));
            }
        }
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection, for queries.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Adds runs in one transaction: all are stored or none. A run whose key is already
    /// there is skipped (importing the same file twice stores it once).
    pub fn add(&mut self, records: &[RunRecord]) -> Result<AddOutcome> {
        let path = self.path.clone();
        let e = |err| sql_err(&path, err);
        let tx = self.conn.transaction().map_err(e)?;
        let mut outcome = AddOutcome::default();
        for rec in records {
            let r = &rec.run;
            let inserted = tx
                .execute(&insert("OR IGNORE", "runs", &[], RUN_COLUMNS), params_from_iter(values(RUN_COLUMNS, r)))
                .map_err(e)?;
            if inserted == 0 {
                outcome.already += 1;
                continue;
            }
            let run_id = tx.last_insert_rowid();
            for m in &rec.metrics {
                insert_metric(&tx, run_id, m).map_err(e)?;
            }
            outcome.added += 1;
        }
        tx.commit().map_err(e)?;
        Ok(outcome)
    }

    /// Number of runs stored.
    pub fn run_count(&self) -> Result<usize> {
        let n: i64 =
            self.conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0)).map_err(|e| sql_err(&self.path, e))?;
        Ok(n as usize)
    }
}

fn insert_metric(tx: &rusqlite::Transaction<'_>, run_id: i64, m: &MetricRow) -> rusqlite::Result<usize> {
    let sql = insert("OR REPLACE", "metrics", &["run_id"], METRIC_COLUMNS);
    tx.execute(&sql, params_from_iter(std::iter::once(Value::Integer(run_id)).chain(values(METRIC_COLUMNS, m))))
}
