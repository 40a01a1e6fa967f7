//! The results document and its file format.

mod io;
mod schema;

pub use io::{parse_json, read_json, write_atomic, write_json, write_json_compact};
pub use schema::*;

use std::path::Path;

use crate::error::Result;

impl ResultsDocument {
    /// Reads a results document, refusing corrupt or foreign files.
    pub fn read(path: &Path) -> Result<Self> {
        read_json(path, RESULTS_SCHEMA)
    }

    /// Writes the document atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        write_json(path, self)
    }

    /// The benchmark with id `id`.
    pub fn benchmark(&self, id: &str) -> Option<&BenchmarkResult> {
        self.benchmarks.iter().find(|b| b.id == id)
    }
}
