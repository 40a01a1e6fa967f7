//! The history database: an SQLite file with one row per run and one per metric of a run.
//! The schema is documented in docs/src/history-schema.md; every write is one transaction.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use super::record::{MetricRow, RunRecord};
use crate::error::{Error, Result};

/// Version of the schema below, kept in the `meta` table; a database of another version is
/// refused rather than changed.
pub const HISTORY_SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id                     INTEGER PRIMARY KEY,
    run_key                TEXT NOT NULL UNIQUE,
    created_unix_s         INTEGER NOT NULL,
    card_uuid              TEXT NOT NULL,
    gpu_name               TEXT NOT NULL,
    class_slug             TEXT NOT NULL,
    driver_version         TEXT,
    cuda_driver_api        TEXT NOT NULL,
    nvrtc_version          TEXT NOT NULL,
    cudarc_feature         TEXT NOT NULL,
    tool_version           TEXT NOT NULL,
    profile                TEXT NOT NULL,
    filter                 TEXT,
    sample_size            INTEGER NOT NULL,
    wall_time_s            REAL NOT NULL,
    samples                INTEGER,
    throttled_samples      INTEGER,
    throttle_share         REAL,
    throttle_reasons       TEXT,
    median_sm_mhz          REAL,
    median_power_w         REAL,
    sm_clock_max_mhz       REAL NOT NULL,
    power_limit_w          REAL,
    foreign_processes      INTEGER,
    foreign_processes_json TEXT,
    source                 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_card_time ON runs (card_uuid, created_unix_s);
CREATE TABLE IF NOT EXISTS metrics (
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    benchmark       TEXT NOT NULL,
    family          TEXT NOT NULL,
    metric          TEXT NOT NULL,
    unit            TEXT NOT NULL,
    params_hash     TEXT NOT NULL,
    params_json     TEXT NOT NULL,
    better          TEXT NOT NULL,
    domain          TEXT NOT NULL,
    n               INTEGER NOT NULL,
    median          REAL,
    stdev           REAL,
    min             REAL,
    max             REAL,
    norm_unit       TEXT,
    norm_median     REAL,
    eff_clock_mhz   REAL,
    mem_clock_mhz   REAL,
    power_w         REAL,
    throttle_share  REAL,
    kernel_hash     TEXT,
    sm_n            INTEGER,
    sm_median       REAL,
    sm_min          REAL,
    sm_max          REAL,
    sm_iqr          REAL,
    PRIMARY KEY (run_id, benchmark, metric, unit)
);
CREATE INDEX IF NOT EXISTS metrics_series ON metrics (benchmark, metric, unit, params_hash);
";

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
        self.conn.execute_batch(SCHEMA).map_err(|e| sql_err(p, e))?;
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
                .execute(
                    "INSERT OR IGNORE INTO runs (run_key, created_unix_s, card_uuid, gpu_name, class_slug,
                        driver_version, cuda_driver_api, nvrtc_version, cudarc_feature, tool_version, profile,
                        filter, sample_size, wall_time_s, samples, throttled_samples, throttle_share,
                        throttle_reasons, median_sm_mhz, median_power_w, sm_clock_max_mhz, power_limit_w,
                        foreign_processes, foreign_processes_json, source)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                        ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
                    params![
                        r.run_key,
                        r.created_unix_s,
                        r.card_uuid,
                        r.gpu_name,
                        r.class_slug,
                        r.driver_version,
                        r.cuda_driver_api,
                        r.nvrtc_version,
                        r.cudarc_feature,
                        r.tool_version,
                        r.profile,
                        r.filter,
                        r.sample_size,
                        r.wall_time_s,
                        r.samples,
                        r.throttled_samples,
                        r.throttle_share,
                        r.throttle_reasons,
                        r.median_sm_mhz,
                        r.median_power_w,
                        r.sm_clock_max_mhz,
                        r.power_limit_w,
                        r.foreign_processes,
                        r.foreign_processes_json,
                        r.source,
                    ],
                )
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
    let finite = |v: f64| v.is_finite().then_some(v);
    tx.execute(
        "INSERT OR REPLACE INTO metrics (run_id, benchmark, family, metric, unit, params_hash, params_json, better,
            domain, n, median, stdev, min, max, norm_unit, norm_median, eff_clock_mhz, mem_clock_mhz, power_w,
            throttle_share, kernel_hash, sm_n, sm_median, sm_min, sm_max, sm_iqr)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
            ?22, ?23, ?24, ?25, ?26)",
        params![
            run_id,
            m.benchmark,
            m.family,
            m.metric,
            m.unit,
            m.params_hash,
            m.params_json,
            m.better,
            m.domain,
            m.n,
            finite(m.median),
            finite(m.stdev),
            finite(m.min),
            finite(m.max),
            m.norm_unit,
            m.norm_median,
            m.eff_clock_mhz,
            m.mem_clock_mhz,
            m.power_w,
            m.throttle_share,
            m.kernel_hash,
            m.sm.map(|s| s.n),
            m.sm.map(|s| s.median),
            m.sm.map(|s| s.min),
            m.sm.map(|s| s.max),
            m.sm.map(|s| s.iqr),
        ],
    )
}
