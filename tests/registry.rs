//! The names that cross a boundary agree: every `[[bench]]` target of Cargo.toml is a family of
//! the registry, its `benches/<name>.rs` records under the target's name and runs that family,
//! and every file the registry names exists.

use std::path::Path;

use gpubench::families::{NOT_FAMILIES, REGISTRY};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn bench_targets() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let manifest: toml::Table = toml::from_str(&text).unwrap();
    manifest["bench"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.get("name").and_then(|n| n.as_str()).unwrap().to_string())
        .collect()
}

#[test]
fn every_bench_target_records_under_its_own_name_and_is_in_the_registry() {
    let targets = bench_targets();
    assert!(!targets.is_empty());
    for name in &targets {
        let file = root().join("benches").join(format!("{name}.rs"));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let call = format!("gpubench::harness::main(\"{name}\", gpubench::families::{name}::run)");
        assert!(text.contains(&call), "{} must call `{call}`", file.display());
        let family = gpubench::families::family(name).unwrap_or_else(|| panic!("`{name}` is not in the registry"));
        assert_eq!(family.bench_file(), format!("benches/{name}.rs"));
    }
    let registered: Vec<&str> = REGISTRY.iter().map(|f| f.name).collect();
    assert_eq!(registered, targets.iter().map(String::as_str).collect::<Vec<_>>(), "registry order = Cargo.toml order");
}

#[test]
fn every_file_the_registry_names_exists_and_every_kernel_file_has_an_owner() {
    for f in REGISTRY {
        for path in f.host.iter().chain(f.kernel_files) {
            assert!(root().join(path).exists(), "{}: {path}", f.name);
        }
    }
    let apart: Vec<String> = NOT_FAMILIES.iter().map(|s| format!("kernels/{}", s.file_name())).collect();
    for entry in std::fs::read_dir(root().join("kernels")).unwrap() {
        let name = format!("kernels/{}", entry.unwrap().file_name().to_string_lossy());
        let owners = REGISTRY.iter().filter(|f| f.kernel_files.contains(&name.as_str())).count();
        let shared = name == "kernels/common.cuh" || apart.contains(&name);
        assert_eq!(owners + usize::from(shared), 1, "{name}");
    }
}
