//! Whether a results document is internally consistent: every metric has samples, every
//! sample and statistic is finite, and each stored summary is the summary of its samples.
//!
//! A file that fails is refused as input (compare, report, baseline save) rather than judged:
//! a results file with its samples removed would otherwise pass as "all INCONCLUSIVE", and a
//! summary that disagrees with its samples would be printed as if it were measured.

use super::numbers::SIGNIFICANT_DIGITS;
use super::{Metric, ResultsDocument, Summary};

/// Checks `doc`; the error names the benchmark and metric and says what is wrong.
pub fn check_document(doc: &ResultsDocument) -> Result<(), String> {
    if !doc.wall_time_s.is_finite() || doc.wall_time_s < 0.0 {
        return Err(format!("wall_time_s = {} is not a duration", doc.wall_time_s));
    }
    for b in &doc.benchmarks {
        if b.metrics.is_empty() {
            return Err(format!("benchmark {} has no metrics", b.id));
        }
        if let Some(t) = b.time_ns.iter().find(|t| !t.is_finite()) {
            return Err(format!("benchmark {}: time sample {t} is not finite", b.id));
        }
        for m in &b.metrics {
            check_metric(m).map_err(|why| format!("{} {}: {why}", b.id, m.name))?;
        }
    }
    for f in &doc.facts {
        if !(f.confidence.is_finite() && (0.0..=1.0).contains(&f.confidence)) {
            return Err(format!("fact {}: confidence {} is outside [0, 1]", f.name, f.confidence));
        }
        if let super::FactValue::Number(v) = f.value
            && !v.is_finite()
        {
            return Err(format!("fact {}: value {v} is not finite", f.name));
        }
    }
    Ok(())
}

/// The weaker check of documents that are read in bulk (`history import`, `fleet`,
/// `calibrate`): the wall time, every sample and every stored statistic finite, every metric
/// with samples, spreads not negative; the error names the benchmark and metric. Stored
/// summaries need not be those of their samples.
pub fn check_finite(doc: &ResultsDocument) -> Result<(), String> {
    if !doc.wall_time_s.is_finite() || doc.wall_time_s < 0.0 {
        return Err(format!("wall_time_s = {} is not a duration", doc.wall_time_s));
    }
    let summary = |s: &Summary| -> Result<(), String> {
        let values = [("median", s.median), ("mean", s.mean), ("min", s.min), ("max", s.max), ("stdev", s.stdev)];
        if let Some((name, v)) = values.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!("summary {name} = {v} is not finite"));
        }
        if s.stdev < 0.0 {
            return Err(format!("summary stdev = {} is negative", s.stdev));
        }
        Ok(())
    };
    for b in &doc.benchmarks {
        for m in &b.metrics {
            let at = |why: String| format!("{} {}: {why}", b.id, m.name);
            if m.samples.is_empty() {
                return Err(at("no samples".into()));
            }
            if let Some((i, v)) = m.samples.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(at(format!("sample {i} ({v}) is not finite")));
            }
            summary(&m.summary).map_err(at)?;
            if let Some(n) = &m.normalized {
                summary(&n.summary).map_err(|why| at(format!("normalised: {why}")))?;
            }
        }
    }
    Ok(())
}

fn check_metric(m: &Metric) -> Result<(), String> {
    check_series(&m.samples, &m.summary)?;
    if let Some(n) = &m.normalized {
        if n.samples.len() != m.samples.len() {
            return Err(format!("{} normalised samples for {} samples", n.samples.len(), m.samples.len()));
        }
        check_series(&n.samples, &n.summary).map_err(|why| format!("normalised: {why}"))?;
    }
    Ok(())
}

fn check_series(samples: &[f64], stored: &Summary) -> Result<(), String> {
    if samples.is_empty() {
        return Err("no samples".into());
    }
    if let Some((i, v)) = samples.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(format!("sample {i} ({v}) is not finite"));
    }
    let actual = Summary::of(samples);
    let stats = [actual.median, actual.mean, actual.min, actual.max, actual.stdev];
    if stats.iter().any(|s| !s.is_finite()) {
        return Err("the samples are too large for finite statistics".into());
    }
    if stored.n != actual.n {
        return Err(format!("summary says n = {}, but there are {} samples", stored.n, actual.n));
    }
    let pairs = [
        ("median", stored.median, actual.median),
        ("mean", stored.mean, actual.mean),
        ("min", stored.min, actual.min),
        ("max", stored.max, actual.max),
        ("stdev", stored.stdev, actual.stdev),
    ];
    let scale = samples.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    for (name, s, a) in pairs {
        if !close(s, a, scale) {
            return Err(format!("summary {name} = {s}, but the samples give {a}"));
        }
    }
    Ok(())
}

/// Equal up to rounding: summaries may be computed in another order or by another version, and
/// documents store every number to [`SIGNIFICANT_DIGITS`] significant digits, so a statistic may
/// differ from the one recomputed from the stored samples by a few units in that last digit of
/// the samples' magnitude `scale` (a standard deviation much smaller than the samples included).
fn close(stored: f64, actual: f64, scale: f64) -> bool {
    let unit = 10f64.powi(1 - SIGNIFICANT_DIGITS as i32);
    stored.is_finite() && (stored - actual).abs() <= unit * actual.abs().max(stored.abs()).max(scale) + 1e-12
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Better, ClockDomain};

    fn doc_with(samples: Vec<f64>) -> ResultsDocument {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/h200-quick-run.json");
        let mut doc = ResultsDocument::read(std::path::Path::new(path)).unwrap();
        doc.benchmarks.truncate(1);
        doc.benchmarks[0].metrics = vec![Metric::new("m", "ns", Better::Lower, ClockDomain::None, samples)];
        doc
    }

    #[test]
    fn consistent_documents_pass() {
        assert_eq!(check_document(&doc_with(vec![1.0, 2.0, 3.0])), Ok(()));
    }

    #[test]
    fn empty_huge_or_inconsistent_samples_are_refused() {
        let e = check_document(&doc_with(vec![])).unwrap_err();
        assert!(e.ends_with("m: no samples"), "{e}");
        let e = check_document(&doc_with(vec![1e155, 2e155])).unwrap_err();
        assert!(e.contains("too large for finite statistics"), "{e}");
        let mut d = doc_with(vec![1.0, 2.0, 3.0]);
        d.benchmarks[0].metrics[0].summary.n = 1_000_000_000_000_000_000;
        let e = check_document(&d).unwrap_err();
        assert!(e.contains("summary says n = 1000000000000000000, but there are 3 samples"), "{e}");
        let mut d = doc_with(vec![1.0, 2.0, 3.0]);
        d.benchmarks[0].metrics[0].summary.median = 2.5;
        assert!(check_document(&d).unwrap_err().contains("summary median = 2.5, but the samples give 2"));
    }
}
