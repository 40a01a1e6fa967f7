//! Every embedded kernel source compiles with NVRTC for the architectures we measure.
//! Needs only libnvrtc (no GPU); skips with a printed reason where it is absent.

use gpubench::device::{compile, nvrtc_version};
use gpubench::kernels::ALL;

#[test]
fn every_kernel_source_compiles_for_hopper_and_ampere() {
    let version = match nvrtc_version() {
        Ok(v) => v,
        Err(e) => {
            println!("skipping: {e}");
            return;
        }
    };
    for arch in ["sm_90", "sm_80"] {
        for source in ALL {
            let compiled = compile(source, arch).unwrap_or_else(|e| {
                panic!("{} for {arch} with NVRTC {version}: {e}\n{}", source.file_name(), e.details().unwrap_or(""))
            });
            assert!(!compiled.cubin.is_empty(), "{} produced no machine code", source.file_name());
            assert!(
                std::str::from_utf8(&compiled.ptx).unwrap().contains(".entry"),
                "{} has no kernel entry in its PTX",
                source.file_name()
            );
            assert_eq!(compiled.provenance.arch, arch);
            assert_eq!(compiled.provenance.cubin_sha256.len(), 64);
        }
    }
}
