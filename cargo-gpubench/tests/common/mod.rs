//! Helpers shared by the CLI tests.

use std::path::{Path, PathBuf};

/// The committed H100 default run (stored gzipped), unpacked into `dir` as `name`.
pub fn recorded_h100_default(dir: &Path, name: &str) -> PathBuf {
    let gz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/recorded/h100-default.json.gz");
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(std::fs::File::open(gz).unwrap()), &mut text).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}
