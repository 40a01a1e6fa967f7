//! Archives of bench executables: round trip, and refusal of damaged archives.

use gpubench::error::exit;
use gpubench::runner::BenchBinary;
use gpubench::runner::archive::{create, open};

fn fake_exe(dir: &std::path::Path, name: &str) -> BenchBinary {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\necho {name}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    BenchBinary { package: "gpubench".into(), name: name.into(), path }
}

#[test]
fn an_archive_unpacks_to_runnable_benches() {
    let src = tempfile::tempdir().unwrap();
    let benches = vec![fake_exe(src.path(), "latency"), fake_exe(src.path(), "stream")];
    let cli = fake_exe(src.path(), "cli");
    let out = tempfile::tempdir().unwrap();
    let archive = out.path().join("a.tar.gz");
    let manifest = create(&archive, &benches, Some(&cli.path)).unwrap();
    assert_eq!(manifest.benches.len(), 2);
    let unpacked = open(&archive, &out.path().join("x")).unwrap();
    assert_eq!(unpacked.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(), ["latency", "stream"]);
    for b in &unpacked {
        assert!(b.path.is_absolute() || b.path.starts_with(out.path()));
        assert_eq!(std::fs::read(&b.path).unwrap(), std::fs::read(src.path().join(&b.name)).unwrap());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&b.path).unwrap().permissions().mode() & 0o111, 0o111);
        }
    }
    assert!(out.path().join("x/gpubench-archive/bin/cargo-gpubench").is_file());
    // the unpacked folder works as an archive too
    let again = open(&out.path().join("x/gpubench-archive"), &out.path().join("unused")).unwrap();
    assert_eq!(again.len(), 2);
}

#[test]
fn a_damaged_archive_is_a_data_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.tar.gz");
    std::fs::write(&bad, b"this is not gzip").unwrap();
    let err = open(&bad, &dir.path().join("x")).unwrap_err();
    assert_eq!(err.exit_code(), exit::DATA, "{err}");
    // an archive whose manifest lists a file it lacks
    let src = tempfile::tempdir().unwrap();
    let b = fake_exe(src.path(), "latency");
    let archive = dir.path().join("a.tar.gz");
    create(&archive, std::slice::from_ref(&b), None).unwrap();
    let unpacked = dir.path().join("y");
    open(&archive, &unpacked).unwrap();
    std::fs::remove_file(unpacked.join("gpubench-archive/benches/latency")).unwrap();
    let err = open(&unpacked.join("gpubench-archive"), &dir.path().join("z")).unwrap_err();
    assert!(err.to_string().contains("does not contain"), "{err}");
}
