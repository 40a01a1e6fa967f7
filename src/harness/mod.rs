//! The bench side: what a criterion bench target of ours (or a user's) calls.
//!
//! ```no_run
//! use gpubench::harness::{self, Bench, Sample, Suite};
//! use gpubench::results::{Better, ClockDomain};
//!
//! fn main() {
//!     harness::main("example", |suite: &mut Suite| {
//!         let bench = Bench::new("noop").metric("time", "ns", Better::Lower, ClockDomain::Sm);
//!         suite.bench(bench, |_gpu, iters| Ok(Sample::timed(iters as f64, vec![1.0])))
//!     })
//! }
//! ```
//!
//! [`main`] opens the GPU, builds a criterion instance timed on the GPU ([`GpuTime`]), runs the
//! family's benchmarks, and writes one record per family: every benchmark's per-sample metric
//! values, clock readings and kernel provenance, for `cargo gpubench` to merge.

mod env;
mod measurement;
pub mod overhead;
mod probe;
mod record;

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use criterion::Criterion;
use regex::Regex;

pub use env::{
    ENV_DEVICE, ENV_DISCARD_THROTTLED, ENV_NO_TELEMETRY, ENV_PROFILE, ENV_PROGRESS, ENV_RECORD_DIR, PROGRESS_PREFIX,
    Profile, device_ordinal, progress_requested, record_dir,
};
pub use measurement::{GpuTime, GpuTimeFormatter};
pub use probe::{Probe, ProbeReading};
pub use record::{MeasuredSample, ThrottlePolicy, build_result};

use crate::device::Gpu;
use crate::error::{Error, Result, exit};
use crate::results::{
    BenchmarkResult, Better, ClockDomain, KernelClock, KernelProvenance, RESULTS_SCHEMA, ResultsDocument, Settings,
    Summary,
};
use crate::telemetry::Sampler;

/// What one criterion sample measured: GPU time of all its iterations, one value per declared
/// metric (same order as [`Bench::metric`] calls), and the in-kernel clock window if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// GPU nanoseconds of the sample's `iters` iterations (CUDA events).
    pub elapsed_ns: f64,
    /// One value per declared metric.
    pub values: Vec<f64>,
    /// SM cycles and ns counted by the kernel over the sample.
    pub clock: Option<KernelClock>,
    /// Per-SM values of metrics measured on every SM: (metric index, (SM id, value) pairs).
    pub per_sm: Vec<(usize, Vec<(u32, f64)>)>,
}

impl Sample {
    /// A sample without in-kernel clock readings.
    pub fn timed(elapsed_ns: f64, values: Vec<f64>) -> Self {
        Sample { elapsed_ns, values, clock: None, per_sm: Vec::new() }
    }

    /// A sample with the kernel's clock window.
    pub fn clocked(elapsed_ns: f64, values: Vec<f64>, clock: Option<KernelClock>) -> Self {
        Sample { elapsed_ns, values, clock, per_sm: Vec::new() }
    }

    /// Adds the per-SM values of the metric at `metric` (declaration order); the sample's value of
    /// that metric is a statistic of them (the median, or where the benchmark says so the mean).
    pub fn with_sm_values(mut self, metric: usize, pairs: Vec<(u32, f64)>) -> Self {
        self.per_sm.push((metric, pairs));
        self
    }
}

/// A metric a benchmark reports each sample.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSpec {
    /// Name, unique in the benchmark.
    pub name: String,
    /// Unit.
    pub unit: String,
    /// Good direction.
    pub better: Better,
    /// Clock it moves with.
    pub domain: ClockDomain,
}

/// Declaration of one benchmark: its name within the family, parameters and metrics.
#[derive(Debug, Clone, Default)]
pub struct Bench {
    name: String,
    params: BTreeMap<String, serde_json::Value>,
    chosen: BTreeMap<String, serde_json::Value>,
    metrics: Vec<MetricSpec>,
    kernels: Vec<KernelProvenance>,
    sm_groups: Vec<(u32, u32)>,
}

impl Bench {
    /// A benchmark called `family/name`.
    pub fn new(name: impl Into<String>) -> Self {
        Bench { name: name.into(), ..Default::default() }
    }

    /// Records a configuration parameter.
    pub fn param(mut self, key: &str, value: impl Into<serde_json::Value>) -> Self {
        self.params.insert(key.to_string(), value.into());
        self
    }

    /// Records the number of placements of the benchmark's targets when it is not
    /// [`crate::placement::DEFAULT_PLACEMENTS`] (`GPUBENCH_PLACEMENTS` changed it): such a run
    /// is not comparable with default runs, and history keeps its series apart.
    pub fn placements(self, count: u64) -> Self {
        if count == crate::placement::DEFAULT_PLACEMENTS { self } else { self.param("placements", count) }
    }

    /// Records a setting that a run-time search chose (and the search itself). Unlike
    /// [`Bench::param`], it does not decide whether two runs are comparable: a searched benchmark
    /// reports the best configuration's result, whichever configuration that was.
    pub fn chosen(mut self, key: &str, value: impl Into<serde_json::Value>) -> Self {
        self.chosen.insert(key.to_string(), value.into());
        self
    }

    /// [`Bench::chosen`] when `searched`, else [`Bench::param`].
    pub fn setting(self, searched: bool, key: &str, value: impl Into<serde_json::Value>) -> Self {
        if searched { self.chosen(key, value) } else { self.param(key, value) }
    }

    /// Declares a metric; [`Sample::values`] carries one value per declared metric, in order.
    pub fn metric(mut self, name: impl Into<String>, unit: &str, better: Better, domain: ClockDomain) -> Self {
        self.metrics.push(MetricSpec { name: name.into(), unit: unit.to_string(), better, domain });
        self
    }

    /// Records which compiled kernel sources the benchmark runs.
    pub fn kernels(mut self, provenance: &[&KernelProvenance]) -> Self {
        self.kernels.extend(provenance.iter().map(|p| (*p).clone()));
        self
    }

    /// The group (GPC) of each SM, (SM id, group) pairs, for the chip maps of this benchmark.
    pub fn sm_groups(mut self, groups: &[(u32, u32)]) -> Self {
        self.sm_groups = groups.to_vec();
        self
    }

    /// The name within the family.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A bench family in progress: the GPU, criterion, and the records gathered so far.
pub struct Suite {
    criterion: Criterion<GpuTime>,
    state: SuiteState,
}

struct SuiteState {
    family: String,
    gpu: Gpu,
    sampler: Sampler,
    throttle_policy: ThrottlePolicy,
    profile: Profile,
    settings: Settings,
    filter: Option<Regex>,
    progress: bool,
    created_unix_s: u64,
    results: Vec<BenchmarkResult>,
}

impl Suite {
    /// The GPU under test.
    pub fn gpu(&self) -> &Gpu {
        &self.state.gpu
    }

    /// The measurement profile.
    pub fn profile(&self) -> Profile {
        self.state.profile
    }

    /// Measured samples per benchmark (the profile's, or the command line's `--sample-size`).
    pub fn sample_size(&self) -> usize {
        self.state.settings.sample_size
    }

    /// Whether the benchmark `family/name` passes the command line's filter (so that expensive
    /// set-up can be skipped for benchmarks that will not run).
    pub fn wants(&self, name: &str) -> bool {
        self.state.wants(name)
    }

    /// Runs one benchmark under criterion. `routine(gpu, iters)` queues `iters` iterations of
    /// the work, times them on the GPU and returns the sample's metric values. The first error stops
    /// the process: the records of finished benchmarks are written, then it exits with the
    /// error's code.
    pub fn bench<F>(&mut self, bench: Bench, mut routine: F) -> Result<()>
    where
        F: FnMut(&Gpu, u64) -> Result<Sample>,
    {
        if !self.state.wants(&bench.name) {
            return Ok(());
        }
        let bench = match crate::measure::launch_size::window_scale_env() {
            Some(scale) => bench.param(crate::measure::launch_size::WINDOW_SCALE_PARAM, scale),
            None => bench,
        };
        let state = &self.state;
        let mut samples: Vec<MeasuredSample> = Vec::new();
        let n_metrics = bench.metrics.len();
        let started = Instant::now();
        {
            let mut group = self.criterion.benchmark_group(state.family.clone());
            group.bench_function(bench.name.clone(), |b| {
                b.iter_custom(|iters| {
                    let t0 = Instant::now();
                    let outcome = routine(&state.gpu, iters);
                    let telemetry = state.sampler.window(t0, Instant::now());
                    match outcome {
                        Ok(sample) if sample.values.len() == n_metrics => {
                            let t = sample.elapsed_ns;
                            samples.push(MeasuredSample { iters, sample, telemetry });
                            t
                        }
                        Ok(sample) => state.fail(Error::Usage(format!(
                            "benchmark {} returned {} values for {} declared metrics",
                            bench.name,
                            sample.values.len(),
                            n_metrics
                        ))),
                        Err(e) => state.fail(e),
                    }
                })
            });
            group.finish();
        }
        self.state.sampler.forget_before(started);
        // Criterion calls the routine for warm-up first; its last `sample_size` calls are the
        // measurement samples.
        let keep = samples.len().min(self.state.settings.sample_size);
        let measured = samples.split_off(samples.len() - keep);
        self.state.push(bench, measured);
        self.state.write_record()?;
        Ok(())
    }
}

impl SuiteState {
    fn wants(&self, name: &str) -> bool {
        let id = format!("{}/{}", self.family, name);
        self.filter.as_ref().is_none_or(|f| f.is_match(&id))
    }

    fn push(&mut self, bench: Bench, measured: Vec<MeasuredSample>) {
        let max_mhz = self.gpu.identity().sm_clock_max_khz as f64 / 1e3;
        let result = build_result(&self.family, &bench, &measured, max_mhz, self.throttle_policy);
        print_summary(&result);
        if self.progress {
            eprintln!("{}", crate::protocol::done_line(&result.id));
        }
        self.results.push(result);
    }

    fn document(&self) -> ResultsDocument {
        ResultsDocument {
            schema: RESULTS_SCHEMA.to_string(),
            created_unix_s: self.created_unix_s,
            gpu: self.gpu.identity().clone(),
            stack: self.gpu.stack().clone(),
            settings: self.settings.clone(),
            benchmarks: self.results.clone(),
            facts: Vec::new(),
            telemetry: None,
            wall_time_s: 0.0,
        }
    }

    fn write_record(&self) -> Result<()> {
        match record_dir() {
            Some(dir) => self.document().write(&crate::protocol::record_file(&dir, &self.family)),
            None => Ok(()),
        }
    }

    /// Writes what finished, reports `err` and exits with its code.
    fn fail(&self, err: Error) -> ! {
        let _ = self.write_record();
        report_and_exit(&self.family, err)
    }
}

fn print_summary(result: &BenchmarkResult) {
    let clock = Summary::of(&result.clocks.iter().filter_map(|c| c.mhz()).collect::<Vec<_>>());
    let power = Summary::of(&result.telemetry.iter().filter_map(|t| t.power_w).collect::<Vec<_>>());
    let throttled = result.telemetry.iter().filter(|t| t.throttled).count();
    let mut out = std::io::stdout().lock();
    for m in &result.metrics {
        let _ = write!(out, "{:<24}{}: {:.4} {} (median of {})", "", m.name, m.summary.median, m.unit, m.summary.n);
        if let Some(n) = &m.normalized {
            if n.unit != m.unit {
                let _ = write!(out, " = {:.4} {}", n.summary.median, n.unit);
            }
        }
        let _ = writeln!(out);
    }
    let _ = write!(out, "{:<24}[{}]", "", result.id);
    if clock.n > 0 {
        let _ = write!(out, " SM clock {:.0} MHz", clock.median);
    }
    if power.n > 0 {
        let _ = write!(out, ", {:.0} W", power.median);
    }
    if throttled > 0 {
        let _ = write!(out, ", {throttled} of {} samples throttled", result.telemetry.len());
    }
    let _ = writeln!(out);
}

fn report_and_exit(family: &str, err: Error) -> ! {
    eprintln!("error: {family}: {err}");
    if let Some(details) = err.details() {
        eprintln!("{details}");
    }
    if let Some(dir) = record_dir() {
        let _ = crate::results::write_atomic(&crate::protocol::error_file(&dir, family), format!("{err}\n").as_bytes());
    }
    std::process::exit(err.exit_code())
}

/// Checks that `filter` is a valid regular expression (criterion's filter syntax).
pub fn validate_filter(filter: &str) -> Result<()> {
    Regex::new(filter).map(|_| ()).map_err(|e| Error::Usage(format!("bad filter `{filter}`: {e}")))
}

/// Criterion's name filter, as its command line gives it (the first free argument).
fn filter_from_args() -> Result<Option<Regex>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let takes_value = [
        "--color",
        "-c",
        "--save-baseline",
        "-s",
        "--baseline",
        "-b",
        "--baseline-lenient",
        "--format",
        "--profile-time",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--plotting-backend",
        "--output-format",
    ];
    let exact = args.iter().any(|a| a == "--exact");
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if takes_value.contains(&a.as_str()) {
            i += 2;
            continue;
        }
        if !a.starts_with('-') {
            let pattern = if exact { format!("^{}$", regex::escape(a)) } else { a.clone() };
            return Regex::new(&pattern).map(Some).map_err(|e| Error::Usage(format!("bad filter `{a}`: {e}")));
        }
        i += 1;
    }
    Ok(None)
}

/// Entry point of a bench target (`harness = false`). Runs `body` with a [`Suite`] and exits.
///
/// Without `--bench` on the command line (`cargo test --benches`) and without a GPU, it prints
/// why it skips and exits 0; with `--bench` a missing GPU is an error with exit code 3.
pub fn main(family: &str, body: impl FnOnce(&mut Suite) -> Result<()>) -> ! {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let mut suite = match setup(family) {
        Ok(s) => s,
        Err(e) if !bench_mode && e.exit_code() == exit::ENVIRONMENT => {
            println!("skipping {family}: {e}");
            std::process::exit(exit::OK)
        }
        Err(e) => report_and_exit(family, e),
    };
    if let Err(e) = body(&mut suite) {
        suite.state.fail(e);
    }
    suite.criterion.final_summary();
    if let Err(e) = suite.state.write_record() {
        report_and_exit(family, e);
    }
    std::process::exit(exit::OK)
}

fn setup(family: &str) -> Result<Suite> {
    let profile = Profile::from_env()?;
    let filter = filter_from_args()?;
    let gpu = Gpu::open(device_ordinal()?)?;
    let criterion = Criterion::default()
        .with_measurement(GpuTime::new(gpu.stream().clone()))
        .sample_size(profile.sample_size())
        .warm_up_time(profile.warm_up())
        .measurement_time(profile.measurement())
        .nresamples(10_000)
        .without_plots()
        .configure_from_args();
    let settings = Settings {
        profile: profile.name().to_string(),
        filter: filter.as_ref().map(|f| f.as_str().to_string()),
        sample_size: sample_size_from_args().unwrap_or(profile.sample_size()),
        warm_up_s: profile.warm_up().as_secs_f64(),
        measurement_s: profile.measurement().as_secs_f64(),
    };
    let created_unix_s = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    Ok(Suite {
        criterion,
        state: SuiteState {
            family: family.to_string(),
            sampler: match std::env::var_os(ENV_NO_TELEMETRY) {
                Some(_) => Sampler::disabled("telemetry turned off"),
                None => Sampler::start(&gpu.identity().uuid, crate::telemetry::DEFAULT_PERIOD),
            },
            throttle_policy: if std::env::var_os(ENV_DISCARD_THROTTLED).is_some() {
                ThrottlePolicy::Discard
            } else {
                ThrottlePolicy::Normalize
            },
            gpu,
            profile,
            settings,
            filter,
            progress: progress_requested(),
            created_unix_s,
            results: Vec::new(),
        },
    })
}

fn sample_size_from_args() -> Option<usize> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == "--sample-size")?;
    args.get(i + 1)?.parse().ok()
}
