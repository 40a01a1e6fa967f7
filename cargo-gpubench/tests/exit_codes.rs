//! The exit codes have one source, `gpubench::error::exit::TABLE`: the README's table and the
//! `--help` text must say the same, and the codes the README promises are the ones returned.

use std::path::Path;
use std::process::Command;

use gpubench::error::exit;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-gpubench");

fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_readme_table_is_the_error_module_table() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let section = readme.split("\n## Exit codes\n").nth(1).expect("README has an Exit codes section");
    let table: String =
        section.trim_start().lines().take_while(|l| l.starts_with('|')).map(|l| format!("{l}\n")).collect();
    assert_eq!(table, exit::markdown_table(), "README's exit-code table drifted from error.rs");
}

#[test]
fn help_shows_the_error_module_table() {
    let o = Command::new(BIN).args(["gpubench", "--help"]).output().unwrap();
    assert_eq!(o.status.code(), Some(exit::OK));
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(words(&help).ends_with(&words(&exit::help_text())), "{help}");
}

#[test]
fn every_documented_code_is_distinct() {
    let mut codes: Vec<i32> = exit::TABLE.iter().map(|(c, _)| *c).collect();
    codes.sort();
    codes.dedup();
    assert_eq!(codes.len(), exit::TABLE.len());
}

#[test]
fn baseline_show_of_a_missing_file_exits_5_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(BIN)
        .args(["gpubench", "baseline", "show", "missing.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(exit::DATA), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: missing.json: No such file or directory"), "{err}");
    // A name that is no file and no baseline stays a usage error.
    let o = Command::new(BIN)
        .args(["gpubench", "baseline", "show", "nosuchname"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit::USAGE));
}

#[test]
fn quarantine_moves_a_corrupt_baseline_aside() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("baselines/x.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, b"{ truncated").unwrap();
    let o = Command::new(BIN)
        .args(["gpubench", "baseline", "quarantine", "baselines/x.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(exit::OK), "{err}");
    assert!(err.starts_with("moved baselines/x.json to baselines/x.json.quarantined-"), "{err}");
    assert!(!file.exists());
    let o = Command::new(BIN).args(["gpubench", "baseline", "list"]).current_dir(dir.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(exit::OK), "the quarantined file is no longer listed");
}
