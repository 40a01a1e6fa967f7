//! Discrete facts (cache sizes, line sizes, bank counts) compare exactly.

use serde::{Deserialize, Serialize};

use super::{Rule, Verdict};
use crate::results::{Fact, FactValue};

/// The verdict on one fact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactVerdict {
    /// Dotted name, e.g. "l2.size_bytes".
    pub name: String,
    /// Unit.
    pub unit: String,
    /// Baseline's value.
    pub baseline: Option<FactValue>,
    /// New value.
    pub candidate: Option<FactValue>,
    /// PASS when equal, REGRESSED when confidently different, INCONCLUSIVE otherwise.
    pub verdict: Verdict,
    /// One line.
    pub reason: String,
}

/// Compares the facts of the newest run of each side. Facts only the new run has are not
/// judged; a baseline fact the new run did not infer is INCONCLUSIVE when the new run inferred
/// any facts at all (otherwise the run simply did not dissect the GPU), unless the baseline had
/// not established it either (confidence below the floor): a guess that one run makes and the
/// next does not is not evidence of a change.
pub(crate) fn compare_facts(old: &[Fact], new: &[Fact], rule: &Rule) -> Vec<FactVerdict> {
    old.iter()
        .filter_map(|o| {
            let n = new.iter().find(|n| n.name == o.name);
            if n.is_none() && new.is_empty() {
                return None;
            }
            let (verdict, reason) = match n {
                None if o.confidence < rule.min_fact_confidence => (
                    Verdict::Pass,
                    format!(
                        "not established on either side (baseline {} at confidence {:.2} < {:.2}, not inferred by the new run)",
                        show(&o.value, &o.unit),
                        o.confidence,
                        rule.min_fact_confidence
                    ),
                ),
                None => (Verdict::Inconclusive, "not inferred by the new run".to_string()),
                Some(n) if same(&o.value, &n.value) => {
                    (Verdict::Pass, format!("unchanged: {}", show(&o.value, &o.unit)))
                }
                Some(n) => {
                    let change = format!("{} -> {}", show(&o.value, &o.unit), show(&n.value, &n.unit));
                    let confidence = o.confidence.min(n.confidence);
                    let floor = rule.min_fact_confidence;
                    if o.confidence < floor && n.confidence < floor {
                        // Neither side established the fact: a change between two guesses is
                        // not evidence of anything.
                        (
                            Verdict::Pass,
                            format!(
                                "not established on either side ({change}, confidence {:.2} and {:.2} < {floor:.2})",
                                o.confidence, n.confidence
                            ),
                        )
                    } else if confidence >= floor {
                        (Verdict::Regressed, format!("changed: {change}"))
                    } else {
                        (
                            Verdict::Inconclusive,
                            format!(
                                "changed: {change}, but confidence {confidence:.2} < {:.2}",
                                rule.min_fact_confidence
                            ),
                        )
                    }
                }
            };
            Some(FactVerdict {
                name: o.name.clone(),
                unit: o.unit.clone(),
                baseline: Some(o.value.clone()),
                candidate: n.map(|n| n.value.clone()),
                verdict,
                reason,
            })
        })
        .collect()
}

fn same(a: &FactValue, b: &FactValue) -> bool {
    match (a, b) {
        (FactValue::Number(x), FactValue::Number(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        (FactValue::Text(x), FactValue::Text(y)) => x == y,
        _ => false,
    }
}

/// "65536 bytes", "lru".
pub fn show(v: &FactValue, unit: &str) -> String {
    let s = match v {
        FactValue::Number(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", *x as i64),
        FactValue::Number(x) => format!("{x}"),
        FactValue::Text(t) => t.clone(),
    };
    if unit.is_empty() { s } else { format!("{s} {unit}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(name: &str, value: FactValue, confidence: f64) -> Fact {
        Fact { name: name.into(), value, unit: "bytes".into(), confidence, method: "test".into() }
    }

    #[test]
    fn equal_changed_and_unsure_facts() {
        let rule = Rule::default();
        let old = [
            fact("l2.size_bytes", FactValue::Number(62_914_560.0), 0.99),
            fact("l1.line_bytes", FactValue::Number(128.0), 0.99),
            fact("l1.policy", FactValue::Text("lru".into()), 0.5),
            fact("tlb.reach", FactValue::Number(1.0), 0.99),
            fact("l1.ways", FactValue::Number(4.0), 0.95),
            fact("tlb.l2.entries", FactValue::Number(24.0), 0.47),
        ];
        let new = [
            fact("l2.size_bytes", FactValue::Number(62_914_560.0), 0.97),
            fact("l1.line_bytes", FactValue::Number(64.0), 0.95),
            fact("l1.policy", FactValue::Text("random".into()), 0.5),
            fact("l1.ways", FactValue::Number(8.0), 0.5),
        ];
        let v = compare_facts(&old, &new, &rule);
        let verdicts: Vec<Verdict> = v.iter().map(|f| f.verdict).collect();
        // equal; changed and sure; changed, unsure on both sides (two guesses); missing;
        // changed, sure before and unsure now; missing, but never established
        assert_eq!(
            verdicts,
            [
                Verdict::Pass,
                Verdict::Regressed,
                Verdict::Pass,
                Verdict::Inconclusive,
                Verdict::Inconclusive,
                Verdict::Pass
            ]
        );
        assert!(v[5].reason.contains("not inferred by the new run"), "{}", v[5].reason);
        assert_eq!(v[1].reason, "changed: 128 bytes -> 64 bytes");
        assert!(v[2].reason.starts_with("not established on either side"), "{}", v[2].reason);
        assert!(compare_facts(&old, &[], &rule).is_empty());
    }
}
