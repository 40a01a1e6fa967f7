//! What `cargo package` would publish: each crate under 10 MB, the library with every CUDA
//! source it embeds, neither with the recorded runs, baselines or docs of the repository.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The most a package may hold, bytes.
const LIMIT: u64 = 10 * 1000 * 1000;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `cargo package --list` of `package`: paths relative to its folder.
fn listed(package: &str) -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let o = Command::new(cargo)
        .args(["package", "--list", "--allow-dirty", "--no-verify", "--offline", "-p", package])
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(o.status.success(), "cargo package --list -p {package}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().lines().map(str::to_string).collect()
}

/// Total size of the listed files that exist in `dir` (cargo generates Cargo.toml.orig,
/// .cargo_vcs_info.json and the normalised Cargo.toml; the workspace's Cargo.lock stands in for
/// the package's).
fn total_bytes(dir: &Path, files: &[String]) -> u64 {
    files
        .iter()
        .map(|f| match f.as_str() {
            "Cargo.lock" => repo_root().join("Cargo.lock"),
            _ => dir.join(f),
        })
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

fn assert_nothing_of_the_repository(files: &[String]) {
    for f in files {
        for dir in ["tests/", "baselines/", "docs/", "scripts/", "deploy/", ".github/", ".ci/", ".cargo/"] {
            assert!(!f.starts_with(dir), "{f} is packaged");
        }
    }
}

#[test]
fn the_library_package_is_small_and_holds_every_kernel() {
    let root = repo_root();
    let files = listed("gpubench");
    let bytes = total_bytes(&root, &files);
    assert!(bytes < LIMIT, "gpubench packages {bytes} bytes");
    assert!(files.contains(&"src/lib.rs".to_string()));
    let mut kernels = 0;
    for entry in std::fs::read_dir(root.join("kernels")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(files.contains(&format!("kernels/{name}")), "kernels/{name} is not packaged");
        kernels += 1;
    }
    assert!(kernels >= gpubench::kernels::ALL.len(), "every embedded source has its file");
    for source in gpubench::kernels::ALL {
        assert!(files.contains(&format!("kernels/{}", source.file_name())), "{}", source.name);
    }
    assert_nothing_of_the_repository(&files);
}

#[test]
fn the_cli_package_is_small_and_holds_its_sources() {
    let dir = repo_root().join("cargo-gpubench");
    let files = listed("cargo-gpubench");
    let bytes = total_bytes(&dir, &files);
    assert!(bytes < LIMIT, "cargo-gpubench packages {bytes} bytes");
    assert!(files.contains(&"src/main.rs".to_string()));
    assert!(files.iter().any(|f| f.starts_with("src/cli/")));
    assert_nothing_of_the_repository(&files);
}
