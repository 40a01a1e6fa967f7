//! The rule's confidence taken as the whole comparison's (`confidence_scope = "comparison"`,
//! `gpubench::verdict::multiplicity`) on a recorded run and the committed class baseline.

#[path = "support/judging.rs"]
mod judging;

use std::path::Path;

use gpubench::verdict::{ConfidenceScope, Rule};
use judging::judge;

/// With the confidence the comparison's, the metrics that could pass their minimum effect by
/// chance share it: their bands widen, the quiet metrics' stay as they were, and the header
/// states the level each metric was judged at (a run of GPU-24386ad7 against the committed
/// H100 class baseline).
#[test]
fn a_comparisons_confidence_widens_only_the_bands_of_metrics_that_could_err() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let class = "nvidia-h100-80gb-hbm3-cc90-132sm-79gib";
    let b = gpubench::baseline::Baseline::read(&root.join(format!("baselines/{class}/class.json.xz"))).unwrap();
    let corpus = root.join(format!("tests/corpus/{class}/runs-GPU-24386ad7.tar.xz"));
    let (_, run) = gpubench::verdict::corpus::gather(&[corpus]).unwrap().runs.into_iter().next().unwrap();
    let each = judge(&b, &run, &Rule::default());
    let whole = judge(&b, &run, &Rule { confidence_scope: ConfidenceScope::Comparison, ..Rule::default() });
    assert_eq!(each.metric_confidence.confidence, 0.99);
    let level = whole.metric_confidence.confidence;
    let at_risk = whole.metric_confidence.at_risk;
    assert!(level > 0.99 && level < 1.0 && at_risk >= 5 && at_risk < each.metrics.len() / 2, "{level} {at_risk}");
    let (mut wider, mut same) = (0, 0);
    for (m, w) in each.metrics.iter().zip(&whole.metrics) {
        let (Some(a), Some(b)) = (m.threshold, w.threshold) else { continue };
        assert!(b >= a, "{}: {b} < {a}", m.key());
        if b > a { wider += 1 } else { same += 1 }
    }
    // A metric that cannot pass its minimum effect by chance as often keeps its threshold; the
    // chance is reckoned on the between-card spread's degrees of freedom alone, so a few of
    // those counted keep theirs too.
    assert!(
        wider <= at_risk && wider * 10 >= at_risk * 9 && same > wider,
        "{wider} wider, {same} unchanged, {at_risk} at risk, level {level}"
    );
    let header = gpubench::report::header::rule_line(&whole);
    assert!(header.contains("for the comparison") && header.contains(&format!("shared by {at_risk}")), "{header}");
}
