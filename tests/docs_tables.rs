//! Tables in the book that a command generates from committed recordings are what that command
//! prints now.

use std::path::Path;
use std::process::Command;

/// The table of `docs/src/measures.md` headed "| GPU | card |" is the output of
/// `scripts/bandwidth_vs_peers.py` on `tests/fixtures/recorded/bandwidth-vs-peers.tar.xz`, and
/// every figure in it is gpubench at or above the best peer.
#[test]
fn bandwidth_against_peers_table_is_generated_from_the_recording() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = match Command::new("python3")
        .arg(root.join("scripts/bandwidth_vs_peers.py"))
        .arg(root.join("tests/fixtures/recorded/bandwidth-vs-peers.tar.xz"))
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("python3 is needed to regenerate the book's tables: {e}"),
    };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let generated = String::from_utf8(out.stdout).unwrap();
    let book = std::fs::read_to_string(root.join("docs/src/measures.md")).unwrap();
    let in_book: Vec<&str> =
        book.lines().skip_while(|l| !l.starts_with("| GPU | card |")).take_while(|l| l.starts_with('|')).collect();
    assert_eq!(in_book, generated.lines().collect::<Vec<_>>(), "regenerate the table with the command beside it");
    let rows: Vec<&str> = generated.lines().skip(2).collect();
    assert!(rows.len() >= 15, "{} rows", rows.len());
    for row in rows {
        let delta = row.trim_end_matches(" |").rsplit("| ").next().unwrap();
        assert!(delta.starts_with('+'), "gpubench below the best peer: {row}");
    }
}
