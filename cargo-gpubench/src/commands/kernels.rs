//! `cargo gpubench kernels`: compile every embedded kernel with NVRTC and show what came out.

use gpubench::device::{Gpu, compile};
use gpubench::error::{Error, Result, exit};
use gpubench::kernels::ALL;
use gpubench::report::provenance_table;

use crate::cli::KernelsArgs;

pub fn kernels(args: KernelsArgs) -> Result<i32> {
    let arch = match args.arch {
        Some(a) => a,
        None => Gpu::open(0)?.identity().arch(),
    };
    if !arch.starts_with("sm_") {
        return Err(Error::Usage(format!("--arch `{arch}`: expected an SM target such as sm_90")));
    }
    let mut provenance = Vec::new();
    for source in ALL {
        let compiled = compile(source, &arch)?;
        if let Some(dir) = &args.out {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            for (ext, bytes) in
                [("cu", compiled.source.as_bytes()), ("ptx", &compiled.ptx[..]), ("cubin", &compiled.cubin[..])]
            {
                let path = dir.join(format!("{}.{ext}", source.name));
                std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
            }
        }
        provenance.push(compiled.provenance);
    }
    if args.format.json {
        crate::output::emit(format!("{}", serde_json::to_string_pretty(&provenance).expect("provenance serialises")));
    } else {
        crate::output::emit(format!("{}", provenance_table(&provenance)));
    }
    Ok(exit::OK)
}
