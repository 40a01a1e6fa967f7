//! The columns of the history's `runs` and `metrics` tables, each named once with its SQL type
//! and the row field it stores: the `CREATE TABLE` statements and the inserts are derived
//! from these lists, so the three cannot drift apart.

use rusqlite::types::Value;

use super::record::{MetricRow, RunRow};

/// One column: its name, its SQL type and constraints, and the value a row stores in it.
pub struct Column<R> {
    /// Column name.
    pub name: &'static str,
    /// SQL type and constraints, e.g. `TEXT NOT NULL`.
    pub sql: &'static str,
    /// The value of a row.
    pub value: fn(&R) -> Value,
}

const fn col<R>(name: &'static str, sql: &'static str, value: fn(&R) -> Value) -> Column<R> {
    Column { name, sql, value }
}

/// A finite number, else NULL (SQLite has no NaN).
fn finite(v: f64) -> Value {
    if v.is_finite() { Value::Real(v) } else { Value::Null }
}

/// The `runs` table after its `id INTEGER PRIMARY KEY`.
pub const RUN_COLUMNS: &[Column<RunRow>] = &[
    col("run_key", "TEXT NOT NULL UNIQUE", |r| r.run_key.clone().into()),
    col("created_unix_s", "INTEGER NOT NULL", |r| r.created_unix_s.into()),
    col("card_uuid", "TEXT NOT NULL", |r| r.card_uuid.clone().into()),
    col("gpu_name", "TEXT NOT NULL", |r| r.gpu_name.clone().into()),
    col("class_slug", "TEXT NOT NULL", |r| r.class_slug.clone().into()),
    col("driver_version", "TEXT", |r| r.driver_version.clone().into()),
    col("cuda_driver_api", "TEXT NOT NULL", |r| r.cuda_driver_api.clone().into()),
    col("nvrtc_version", "TEXT NOT NULL", |r| r.nvrtc_version.clone().into()),
    col("cudarc_feature", "TEXT NOT NULL", |r| r.cudarc_feature.clone().into()),
    col("tool_version", "TEXT NOT NULL", |r| r.tool_version.clone().into()),
    col("profile", "TEXT NOT NULL", |r| r.profile.clone().into()),
    col("filter", "TEXT", |r| r.filter.clone().into()),
    col("sample_size", "INTEGER NOT NULL", |r| r.sample_size.into()),
    col("wall_time_s", "REAL NOT NULL", |r| r.wall_time_s.into()),
    col("samples", "INTEGER", |r| r.samples.into()),
    col("throttled_samples", "INTEGER", |r| r.throttled_samples.into()),
    col("throttle_share", "REAL", |r| r.throttle_share.into()),
    col("throttle_reasons", "TEXT", |r| r.throttle_reasons.clone().into()),
    col("median_sm_mhz", "REAL", |r| r.median_sm_mhz.into()),
    col("median_power_w", "REAL", |r| r.median_power_w.into()),
    col("sm_clock_max_mhz", "REAL NOT NULL", |r| r.sm_clock_max_mhz.into()),
    col("power_limit_w", "REAL", |r| r.power_limit_w.into()),
    col("foreign_processes", "INTEGER", |r| r.foreign_processes.into()),
    col("foreign_processes_json", "TEXT", |r| r.foreign_processes_json.clone().into()),
    col("source", "TEXT NOT NULL", |r| r.source.clone().into()),
];

/// The `metrics` table after its `run_id` (the run's row id).
pub const METRIC_COLUMNS: &[Column<MetricRow>] = &[
    col("benchmark", "TEXT NOT NULL", |m| m.benchmark.clone().into()),
    col("family", "TEXT NOT NULL", |m| m.family.clone().into()),
    col("metric", "TEXT NOT NULL", |m| m.metric.clone().into()),
    col("unit", "TEXT NOT NULL", |m| m.unit.clone().into()),
    col("params_hash", "TEXT NOT NULL", |m| m.params_hash.clone().into()),
    col("params_json", "TEXT NOT NULL", |m| m.params_json.clone().into()),
    col("better", "TEXT NOT NULL", |m| m.better.clone().into()),
    col("domain", "TEXT NOT NULL", |m| m.domain.clone().into()),
    col("n", "INTEGER NOT NULL", |m| m.n.into()),
    col("median", "REAL", |m| finite(m.median)),
    col("stdev", "REAL", |m| finite(m.stdev)),
    col("min", "REAL", |m| finite(m.min)),
    col("max", "REAL", |m| finite(m.max)),
    col("norm_unit", "TEXT", |m| m.norm_unit.clone().into()),
    col("norm_median", "REAL", |m| m.norm_median.into()),
    col("eff_clock_mhz", "REAL", |m| m.eff_clock_mhz.into()),
    col("mem_clock_mhz", "REAL", |m| m.mem_clock_mhz.into()),
    col("power_w", "REAL", |m| m.power_w.into()),
    col("throttle_share", "REAL", |m| m.throttle_share.into()),
    col("kernel_hash", "TEXT", |m| m.kernel_hash.clone().into()),
    col("sm_n", "INTEGER", |m| m.sm.map(|s| s.n).into()),
    col("sm_median", "REAL", |m| m.sm.map(|s| s.median).into()),
    col("sm_min", "REAL", |m| m.sm.map(|s| s.min).into()),
    col("sm_max", "REAL", |m| m.sm.map(|s| s.max).into()),
    col("sm_iqr", "REAL", |m| m.sm.map(|s| s.iqr).into()),
];

/// `name sql` of every column, one a line, for a `CREATE TABLE`.
pub fn definitions<R>(columns: &[Column<R>]) -> String {
    columns.iter().map(|c| format!("    {} {}", c.name, c.sql)).collect::<Vec<_>>().join(",\n")
}

/// `INSERT {verb} INTO {table} (lead, names...) VALUES (?1, ...)` for `lead` columns given
/// first and then `columns`.
pub fn insert<R>(verb: &str, table: &str, lead: &[&str], columns: &[Column<R>]) -> String {
    let names: Vec<&str> = lead.iter().copied().chain(columns.iter().map(|c| c.name)).collect();
    let slots: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
    format!("INSERT {verb} INTO {table} ({}) VALUES ({})", names.join(", "), slots.join(", "))
}

/// The values of `row` in the order of `columns`.
pub fn values<'a, R>(columns: &'a [Column<R>], row: &'a R) -> impl Iterator<Item = Value> + 'a {
    columns.iter().map(move |c| (c.value)(row))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_name_every_column_once_in_order() {
        let sql = insert("OR IGNORE", "runs", &[], RUN_COLUMNS);
        assert!(sql.starts_with("INSERT OR IGNORE INTO runs (run_key, created_unix_s, card_uuid,"), "{sql}");
        assert!(sql.ends_with("foreign_processes_json, source) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)"), "{sql}");
        let sql = insert("OR REPLACE", "metrics", &["run_id"], METRIC_COLUMNS);
        assert!(sql.contains("(run_id, benchmark, family,") && sql.contains("?26)"), "{sql}");
        let defs = definitions(METRIC_COLUMNS);
        assert!(defs.starts_with("    benchmark TEXT NOT NULL,\n    family TEXT NOT NULL,\n"), "{defs}");
        assert!(defs.ends_with("    sm_iqr REAL"), "{defs}");
        for cols in
            [RUN_COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>(), METRIC_COLUMNS.iter().map(|c| c.name).collect()]
        {
            let mut unique = cols.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), cols.len(), "a column named twice");
        }
    }

    #[test]
    fn not_finite_summaries_are_stored_as_null() {
        assert_eq!(finite(f64::NAN), Value::Null);
        assert_eq!(finite(f64::INFINITY), Value::Null);
        assert_eq!(finite(2.5), Value::Real(2.5));
    }
}
