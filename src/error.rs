//! Every error gpubench reports, and the process exit code that goes with it.
//!
//! Errors are one line (`Display`), name what is missing or wrong, and map to one of the
//! documented exit codes in [`exit`]. Long diagnostics (an NVRTC log) travel in a separate field
//! so that the one-line message stays one line.

use std::path::PathBuf;

/// Documented process exit codes (README, "Exit codes").
pub mod exit {
    /// Everything ran; no metric regressed.
    pub const OK: i32 = 0;
    /// At least one metric is REGRESSED against the baseline.
    pub const REGRESSION: i32 = 1;
    /// Bad command line or configuration.
    pub const USAGE: i32 = 2;
    /// The machine lacks something gpubench needs: a GPU, libcuda, NVRTC, a new enough driver.
    pub const ENVIRONMENT: i32 = 3;
    /// A benchmark failed: kernel compile error, launch failure, out of GPU memory, wrong result,
    /// watchdog timeout, bench process crash.
    pub const BENCH_FAILURE: i32 = 4;
    /// A results or baseline file is corrupt, truncated, or of another schema.
    pub const DATA: i32 = 5;
    /// Another gpubench run holds this GPU and `--no-wait` was given.
    pub const BUSY: i32 = 6;
    /// `--exclusive` was given and another process holds the GPU.
    pub const GPU_SHARED: i32 = 7;
    /// `history --fail-recent N`: a change point falls in the newest N runs of a series.
    pub const CHANGE_POINT: i32 = 8;
    /// `fleet` found an outlier card or a failed node; `health` found a GPU outside its class.
    pub const OUTLIER: i32 = 9;
    /// The run and the baseline are not comparable: a per-card baseline and a run on another
    /// card, or another GPU class without `--allow-other-class`.
    pub const MISMATCH: i32 = 10;
    /// `upgrade`: a metric REGRESSED and the code it measured is the same machine code on both
    /// stacks (the cubin, or the executed inner loop): not a compiler change.
    pub const REGRESSION_SAME_CODE: i32 = 11;
    /// `upgrade`: the job could not judge: a card lacks the runs of a stack, or (`--fail-on`)
    /// verdicts it names occurred.
    pub const NOT_JUDGED: i32 = 12;
    /// Interrupted by Ctrl-C (128 + SIGINT).
    pub const INTERRUPTED: i32 = 130;

    /// Every documented code with its one-line meaning: the one source of the README's table
    /// and the `--help` text (tests compare both with it).
    pub const TABLE: &[(i32, &str)] = &[
        (OK, "success, no regression (PASS, IMPROVED, INCONCLUSIVE, INSENSITIVE and NOT MEASURED verdicts only)"),
        (
            REGRESSION,
            "a metric or fact REGRESSED against the baseline (or INCONCLUSIVE / INSENSITIVE / NOT MEASURED with `--fail-on`)",
        ),
        (USAGE, "usage error (bad flags, or a configuration value missing or out of range)"),
        (ENVIRONMENT, "environment: no GPU, no libcuda, no NVRTC (or one lacking a symbol), or driver too old"),
        (
            BENCH_FAILURE,
            "a benchmark failed: kernel compile error, launch failure, out of GPU memory, wrong result, watchdog",
        ),
        (
            DATA,
            "a results, baseline or archive file is missing, not a regular file, corrupt, truncated, inconsistent \
             or of another schema, or a baseline save was refused",
        ),
        (BUSY, "the GPU is in use by another gpubench run (`--no-wait`)"),
        (GPU_SHARED, "another process uses the GPU (`--exclusive`)"),
        (CHANGE_POINT, "`history --fail-recent N`: a change point falls in the newest N runs of a metric"),
        (OUTLIER, "`fleet`: an outlier card or a failed node; `health`: a GPU outside its class envelope"),
        (
            MISMATCH,
            "run and baseline must not be compared: a per-card baseline and another card, or another GPU class \
             without `--allow-other-class`",
        ),
        (
            REGRESSION_SAME_CODE,
            "`upgrade`: a metric REGRESSED and the machine code it measured is identical on both stacks (not a \
             compiler change); exit 1 from `upgrade` means the code changed or is not known",
        ),
        (NOT_JUDGED, "`upgrade`: could not judge: a card lacks the runs of a stack, or `--fail-on` verdicts occurred"),
        (INTERRUPTED, "interrupted"),
    ];

    /// The table as `--help` shows it.
    pub fn help_text() -> String {
        let mut s = String::from("Exit codes:");
        for (code, meaning) in TABLE {
            s.push_str(&format!("\n  {code}  {}", meaning.replace('`', "")));
        }
        s
    }

    /// The table as the README shows it (Markdown).
    pub fn markdown_table() -> String {
        let mut s = String::from("| code | meaning |\n| --- | --- |\n");
        for (code, meaning) in TABLE {
            s.push_str(&format!("| {code} | {meaning} |\n"));
        }
        s
    }
}

/// Result alias used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// All failures gpubench distinguishes.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// libcuda could not be loaded.
    #[error(
        "no CUDA driver: libcuda.so.1 could not be loaded (install the NVIDIA driver, or add its folder to LD_LIBRARY_PATH)"
    )]
    NoDriverLibrary,
    /// libnvrtc could not be loaded.
    #[error(
        "no NVRTC: libnvrtc.so.13 or libnvrtc.so.12 could not be loaded (install the CUDA toolkit's NVRTC, or add its folder to LD_LIBRARY_PATH)"
    )]
    NoNvrtc,
    /// An NVRTC library named on the command line is missing or unusable.
    #[error("NVRTC library {}: {reason}", path.display())]
    NvrtcLibrary {
        /// The library file given.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// libcuda loaded but lacks an entry point gpubench calls.
    #[error(
        "no usable CUDA driver: libcuda.so.1 loads but lacks {0} (a stub or mismatched library? install the NVIDIA driver R570 or later)"
    )]
    DriverSymbol(String),
    /// libnvrtc loaded but lacks an entry point gpubench calls.
    #[error("no usable NVRTC: libnvrtc loads but lacks {0} (install NVRTC 12.x or 13.x from the CUDA toolkit)")]
    NvrtcSymbol(String),
    /// The driver loaded but shows no usable GPU.
    #[error("no CUDA GPU: {0}")]
    NoGpu(String),
    /// The driver is older than the CUDA API version the bindings need.
    #[error(
        "CUDA driver too old: it supports CUDA {found}, gpubench needs CUDA {needed} or newer (NVIDIA driver R570 or later)"
    )]
    DriverTooOld {
        /// CUDA version the driver supports, e.g. "12.4".
        found: String,
        /// Minimum CUDA version, e.g. "12.8".
        needed: String,
    },
    /// A CUDA driver call failed.
    #[error("CUDA error while {context}: {message}")]
    Cuda {
        /// What gpubench was doing.
        context: String,
        /// The driver's error name.
        message: String,
    },
    /// A device allocation failed for lack of memory.
    #[error("out of GPU memory while {context} ({bytes} bytes requested)")]
    OutOfMemory {
        /// What gpubench was allocating.
        context: String,
        /// Size of the failed request.
        bytes: usize,
    },
    /// NVRTC rejected a kernel source.
    #[error("kernel source {source_name} failed to compile with NVRTC {nvrtc} for {arch}: {first_line}")]
    KernelCompile {
        /// File name of the kernel source, e.g. "stream.cu".
        source_name: String,
        /// NVRTC version.
        nvrtc: String,
        /// Target, e.g. "sm_90".
        arch: String,
        /// First error line of the log.
        first_line: String,
        /// The full compiler log.
        log: String,
    },
    /// A kernel launch was refused on the host: its arguments do not match the kernel's
    /// parameters, or an index it would use lies outside a buffer.
    #[error("launch of {kernel} refused: {reason}")]
    Launch {
        /// Kernel name.
        kernel: String,
        /// What does not fit.
        reason: String,
    },
    /// A kernel produced a wrong result.
    #[error("{what} produced a wrong result: {detail}")]
    Verification {
        /// Which benchmark.
        what: String,
        /// What was wrong.
        detail: String,
    },
    /// A kernel ran past its time limit.
    #[error("{what} did not finish within {seconds} s (watchdog)")]
    Watchdog {
        /// Which benchmark or process.
        what: String,
        /// The limit.
        seconds: u64,
    },
    /// A bench executable failed.
    #[error("bench `{bench}` failed: {reason}")]
    BenchProcess {
        /// Bench target name.
        bench: String,
        /// One line: its own error, or how it ended.
        reason: String,
        /// Exit code to propagate.
        code: i32,
    },
    /// Building or describing the workspace through cargo failed.
    #[error("cargo: {0}")]
    Cargo(String),
    /// A file of ours is unreadable as what it should be.
    #[error("{}: {reason}", path.display())]
    Data {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// An I/O operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Another run holds the GPU.
    #[error("GPU {uuid} is in use by another gpubench run ({holder}); rerun without --no-wait to wait for it")]
    Busy {
        /// GPU UUID.
        uuid: String,
        /// Who holds the lock, as written in the lock file.
        holder: String,
    },
    /// `--exclusive` was given and another process uses the GPU.
    #[error(
        "GPU {uuid} is not exclusive (--exclusive): {processes}; rerun without --exclusive to measure beside it (the affected metrics are then INCONCLUSIVE)"
    )]
    GpuShared {
        /// GPU UUID.
        uuid: String,
        /// The processes, described.
        processes: String,
    },
    /// The user interrupted the run.
    #[error("interrupted")]
    Interrupted,
    /// Bad input from the user.
    #[error("{0}")]
    Usage(String),
    /// A run and a baseline that must not be compared (another card, another class).
    #[error("{0}")]
    Mismatch(String),
}

impl Error {
    /// The documented exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::NoDriverLibrary
            | Error::NoNvrtc
            | Error::NvrtcLibrary { .. }
            | Error::DriverSymbol(_)
            | Error::NvrtcSymbol(_)
            | Error::NoGpu(_)
            | Error::DriverTooOld { .. } => exit::ENVIRONMENT,
            Error::Cuda { .. }
            | Error::OutOfMemory { .. }
            | Error::KernelCompile { .. }
            | Error::Launch { .. }
            | Error::Verification { .. }
            | Error::Watchdog { .. } => exit::BENCH_FAILURE,
            Error::BenchProcess { code, .. } => *code,
            Error::Cargo(_) => exit::BENCH_FAILURE,
            Error::Data { .. } => exit::DATA,
            Error::Io { .. } => exit::DATA,
            Error::Busy { .. } => exit::BUSY,
            Error::GpuShared { .. } => exit::GPU_SHARED,
            Error::Interrupted => exit::INTERRUPTED,
            Error::Usage(_) => exit::USAGE,
            Error::Mismatch(_) => exit::MISMATCH,
        }
    }

    /// Extra lines worth printing after the one-line message (an NVRTC log), if any.
    pub fn details(&self) -> Option<&str> {
        match self {
            Error::KernelCompile { log, .. } => Some(log),
            _ => None,
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    /// A data error for `path`.
    pub fn data(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::Data { path: path.into(), reason: reason.into() }
    }

    /// Maps a driver error to [`Error::OutOfMemory`] or [`Error::Cuda`].
    pub fn cuda(context: impl Into<String>, err: cudarc::driver::DriverError) -> Self {
        Error::cuda_alloc(context, err, 0)
    }

    /// Like [`Error::cuda`], for an allocation of `bytes`.
    pub fn cuda_alloc(context: impl Into<String>, err: cudarc::driver::DriverError, bytes: usize) -> Self {
        use cudarc::driver::sys::cudaError_enum as E;
        let context = context.into();
        if err.0 == E::CUDA_ERROR_OUT_OF_MEMORY {
            return Error::OutOfMemory { context, bytes };
        }
        let message = err.error_name().ok().and_then(|c| c.to_str().ok().map(str::to_owned));
        Error::Cuda { context, message: message.unwrap_or_else(|| format!("{:?}", err.0)) }
    }
}

/// Adds a context to driver results: `ctx.alloc(...).cuda_context("allocating the chase array")`.
pub trait CudaResultExt<T> {
    /// Converts the driver error into an [`Error`] that says what gpubench was doing.
    fn cuda_context(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> CudaResultExt<T> for std::result::Result<T, cudarc::driver::DriverError> {
    fn cuda_context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::cuda(context(), e))
    }
}
