//! The results document and its file format.

mod check;
mod io;
mod numbers;
pub mod scan;
mod schema;
mod tarball;

pub use check::{check_document, check_finite};
pub use io::{
    ENV_MAX_DOCUMENT_BYTES, MAX_DOCUMENT_BYTES, check_regular_file, decompressed, describe_limit, document_limit,
    gzipped, is_document_name, kind_of, open_regular, parse_json, read_document, read_document_within, read_json,
    read_to_end_limited, stored_as, write_atomic, write_atomic_checked, write_json, write_json_compact, xz_compressed,
};
pub use numbers::{SIGNIFICANT_DIGITS, round_significant, to_json_bytes};
pub use schema::*;
pub use tarball::{is_tarball, json_members, json_members_within, tarball_stem};

use std::path::Path;

use crate::error::Result;

impl ResultsDocument {
    /// Reads a results document, refusing corrupt or foreign files.
    pub fn read(path: &Path) -> Result<Self> {
        read_json(path, RESULTS_SCHEMA)
    }

    /// Reads a results document given as input to judge or report: its samples and
    /// summaries must also agree ([`check_document`]).
    pub fn read_checked(path: &Path) -> Result<Self> {
        let doc: Self = read_json(path, RESULTS_SCHEMA)?;
        check_document(&doc).map_err(|why| crate::error::Error::data(path, why))?;
        Ok(doc)
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
