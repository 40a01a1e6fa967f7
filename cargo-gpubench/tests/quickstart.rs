//! docs/src/quickstart.md, followed: its marked code blocks become a fresh workspace in a
//! temporary folder (gpubench by `path` on this checkout), the bench file is built against the
//! library, and `cargo gpubench` runs there. Without a GPU the run must end the way the page
//! says: exit code 3 and the page's one line, no panic.
//!
//! The build is offline with this workspace's Cargo.lock (every dependency was fetched for this
//! build) into `<target>/quickstart`, which later runs reuse.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gpubench::error::exit;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-gpubench");

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn page() -> String {
    std::fs::read_to_string(repo_root().join("docs/src/quickstart.md")).unwrap()
}

/// The fenced blocks whose info string carries `tag` (```lang,tag): their text.
fn blocks(markdown: &str, tag: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<(bool, String)> = None;
    for line in markdown.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(info)) => current = Some((info.split(',').any(|w| w.trim() == tag), String::new())),
            (Some((wanted, text)), Some("")) => {
                if *wanted {
                    found.push(std::mem::take(text));
                }
                current = None;
            }
            (Some((_, text)), _) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(current.is_none(), "an unclosed code block in quickstart.md");
    found
}

/// The one block tagged `tag`.
fn block(tag: &str) -> String {
    let mut found = blocks(&page(), tag);
    assert_eq!(found.len(), 1, "quickstart.md should have exactly one block tagged {tag}");
    found.remove(0)
}

/// The page's Cargo.toml with its gpubench line swapped for the page's `path` form, the path
/// pointing at this checkout.
fn manifest() -> String {
    let cargo = block("quickstart-cargo");
    let path_line = block("quickstart-path");
    let path_line = path_line.trim();
    assert!(path_line.starts_with("gpubench = { path = \""), "{path_line}");
    let here = repo_root().display().to_string().replace('\\', "\\\\").replace('"', "\\\"");
    let path_line = format!("gpubench = {{ path = \"{here}\" }}");
    let lines: Vec<&str> = cargo.lines().collect();
    let git = lines.iter().filter(|l| l.starts_with("gpubench = ")).count();
    assert_eq!(git, 1, "the Cargo.toml block names gpubench once:\n{cargo}");
    let swapped: Vec<String> =
        lines.iter().map(|l| if l.starts_with("gpubench = ") { path_line.clone() } else { l.to_string() }).collect();
    // A workspace of its own, whatever folder the temporary one lies in.
    format!("{}\n\n[workspace]\n", swapped.join("\n"))
}

/// The name of the page's `[[bench]]` target.
fn bench_name(manifest: &str) -> String {
    let after = manifest.split("[[bench]]").nth(1).expect("a [[bench]] section");
    let line = after.lines().find(|l| l.trim_start().starts_with("name")).expect("a bench name");
    line.split('"').nth(1).expect("a quoted name").to_string()
}

fn cargo() -> PathBuf {
    std::env::var_os("CARGO").map(PathBuf::from).unwrap_or_else(|| "cargo".into())
}

/// The temporary workspace: Cargo.toml, an empty lib, the bench file, this Cargo.lock.
fn write_workspace(dir: &Path) -> String {
    let manifest = manifest();
    let name = bench_name(&manifest);
    std::fs::write(dir.join("Cargo.toml"), &manifest).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "").unwrap();
    std::fs::create_dir_all(dir.join("benches")).unwrap();
    std::fs::write(dir.join(format!("benches/{name}.rs")), block("quickstart-bench")).unwrap();
    std::fs::copy(repo_root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    name
}

fn show(o: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn the_page_says_how_to_install_and_run() {
    let install = block("quickstart-install");
    assert!(install.lines().any(|l| l.starts_with("cargo install --locked ")), "{install}");
    assert!(page().contains("`--locked`"), "the page says why --locked");
    assert_eq!(block("quickstart-run").trim(), "cargo gpubench");
    let line = block("quickstart-no-gpu");
    assert_eq!(line.lines().count(), 1, "{line}");
    let err = gpubench::Error::NoDriverLibrary.to_string();
    assert_eq!(line.trim(), format!("error: {err}"), "the page quotes the library's message");
}

#[test]
fn the_blocks_make_a_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let name = write_workspace(dir.path());
    assert_eq!(name, "saxpy");
    let manifest = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
    assert!(manifest.contains("harness = false"), "{manifest}");
    assert!(!manifest.contains("git = "), "the git line is swapped for the path one:\n{manifest}");
    let bench = std::fs::read_to_string(dir.path().join("benches/saxpy.rs")).unwrap();
    assert!(bench.contains("harness::main(\"saxpy\""), "the family is named after the bench target");
}

#[test]
#[ignore = "builds a fresh workspace and its dependencies (minutes), run apart: cargo test --workspace --test quickstart -- --ignored"]
fn the_quickstart_workspace_builds_and_runs_to_its_documented_end() {
    let dir = tempfile::tempdir().unwrap();
    write_workspace(dir.path());
    let target = Path::new(BIN).parent().unwrap().parent().unwrap().join("quickstart");

    // The bench file compiles against the library.
    let o = Command::new(cargo())
        .args(["build", "--benches", "--offline", "--quiet"])
        .current_dir(dir.path())
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(o.status.success(), "the quickstart bench does not build\n{}", show(&o));

    // `cargo gpubench`, this build of it found first on the PATH (and an empty CARGO_HOME, whose
    // bin/ cargo would search before the PATH).
    let bin_dir = Path::new(BIN).parent().unwrap();
    let home = tempfile::tempdir().unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin_dir.to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let o = Command::new(cargo())
        .arg("gpubench")
        .current_dir(dir.path())
        .env("PATH", path)
        .env("CARGO_HOME", home.path())
        .env("CARGO_TARGET_DIR", &target)
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{}", show(&o));
    if gpubench::device::preflight().is_ok() {
        // A GPU machine: the whole documented run happens instead.
        assert_eq!(o.status.code(), Some(exit::OK), "{}", show(&o));
        assert!(target.join("gpubench/results.json").is_file(), "{}", show(&o));
        return;
    }
    assert_eq!(o.status.code(), Some(exit::ENVIRONMENT), "{}", show(&o));
    assert_eq!(stderr.lines().count(), 1, "one line\n{}", show(&o));
    let documented = block("quickstart-no-gpu");
    if gpubench::device::preflight().is_err_and(|e| matches!(e, gpubench::Error::NoDriverLibrary)) {
        assert_eq!(stderr.trim(), documented.trim(), "the page's line");
    } else {
        assert!(stderr.starts_with("error: "), "{}", show(&o));
    }
    assert!(o.stdout.is_empty(), "{}", show(&o));
}

#[test]
#[ignore = "builds a fresh workspace and its dependencies (minutes), run apart: cargo test --workspace --test quickstart -- --ignored"]
fn cargo_flags_reach_the_bench_build() {
    let dir = tempfile::tempdir().unwrap();
    write_workspace(dir.path());
    let target = Path::new(BIN).parent().unwrap().parent().unwrap().join("quickstart");
    let archive = |extra: &[&str]| {
        Command::new(BIN)
            .args(["gpubench", "archive", "--color", "always", "-o", "a.tar.gz"])
            .args(extra)
            .current_dir(dir.path())
            .env("CARGO_TARGET_DIR", &target)
            .env("CARGO_NET_OFFLINE", "true")
            .output()
            .unwrap()
    };
    for (extra, cargo_says) in [
        (&["-p", "no-such-package"][..], "no-such-package"),
        (&["--features", "no-such-feature"], "no-such-feature"),
        (&["--profile", "no-such-profile"], "no-such-profile"),
    ] {
        let o = archive(extra);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(exit::BENCH_FAILURE), "{extra:?}\n{}", show(&o));
        assert!(stderr.contains(cargo_says), "cargo got {extra:?}\n{}", show(&o));
        assert!(stderr.contains("\x1b["), "cargo got --color always (its stderr is no terminal)\n{}", show(&o));
        assert!(!dir.path().join("a.tar.gz").exists());
    }
}
