//! Every embedded kernel source compiles with NVRTC for the architectures we measure.
//! Needs only libnvrtc (no GPU): ignored by default, run with `--ignored` where NVRTC is
//! installed (the GPU machine), where a missing NVRTC fails it.

use gpubench::device::{compile, nvrtc_version};
use gpubench::kernels::ALL;

#[test]
#[ignore = "needs NVRTC: run with --ignored on the GPU machine"]
fn every_kernel_source_compiles_for_hopper_and_ampere() {
    let version = nvrtc_version().unwrap_or_else(|e| panic!("needs NVRTC: {e}"));
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
