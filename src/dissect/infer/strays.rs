//! Stray slow accesses in per-access traces: interruptions (other work on the GPU, ECC
//! scrubbing, preemption) make a single access slow, sometimes as slow as a miss. A cache's
//! misses have structure that strays lack: a cyclic chase misses on the same lap positions lap
//! after lap (every lap under LRU and FIFO, often under other policies), and an evicted line of
//! several fetch units misses on all of them in a row. A miss that is neither next to another
//! miss of its lap nor repeated at its position more often than chance repeats strays is one.
//!
//! How often strays repeat by chance comes from the data: the isolated misses at positions that
//! missed in one lap only give the stray rate per access; a position is structural once it
//! missed in more laps than that rate makes likely anywhere in the lap.

use std::collections::{BTreeMap, BTreeSet};

/// Expected number of lap positions that strays alone would make look structural.
const FALSE_POSITIONS: f64 = 0.05;

/// Missed positions per lap with the strays set aside.
#[derive(Debug, Clone, PartialEq)]
pub struct Cleaned {
    /// Missed positions of each lap, strays removed.
    pub laps: Vec<BTreeSet<u64>>,
    /// Misses set aside as strays.
    pub strays: usize,
    /// Laps a position must miss in (when isolated in its lap) to count as structural.
    pub min_repeats: usize,
    /// Lone misses kept because they are far more than strays explain.
    pub kept: usize,
}

/// P(X >= c) for X ~ Binomial(n, p).
fn binomial_tail(n: usize, p: f64, c: usize) -> f64 {
    if c == 0 {
        return 1.0;
    }
    if c > n || p <= 0.0 {
        return 0.0;
    }
    let mut term = (1.0 - p).powi(n as i32);
    let mut below = 0.0;
    for k in 0..c {
        below += term;
        term *= (n - k) as f64 / (k + 1) as f64 * p / (1.0 - p).max(1e-300);
    }
    (1.0 - below).max(0.0)
}

/// Sets aside the stray misses of `laps` (missed positions per lap of `lap` positions).
/// `rate` is the share of accesses strays make look like misses, where other measurements of
/// the same kernel tell it (see [`rate_below_knee`]); without it, the isolated misses at
/// positions that missed in one lap only give it. Where the isolated misses are many more than
/// that rate explains, they are the cache's own (a policy whose victims change from lap to
/// lap) and stay. With a single lap there is no repetition to go by: only isolated misses of a
/// lap with runs of misses are set aside, and only when the runs are the rule.
pub fn without_strays(laps: &[BTreeSet<u64>], lap: u64, rate: Option<f64>) -> Cleaned {
    let isolated = |m: &BTreeSet<u64>, i: u64| !(m.contains(&(i + 1)) || (i > 0 && m.contains(&(i - 1))));
    let mut count: BTreeMap<u64, usize> = BTreeMap::new();
    for &i in laps.iter().flatten() {
        *count.entry(i).or_default() += 1;
    }
    let n = laps.len();
    let keep_all = Cleaned { laps: laps.to_vec(), strays: 0, min_repeats: 1, kept: 0 };
    if n < 2 {
        // One lap: a miss beside another one is structural; isolated misses are strays only
        // where most misses come in runs (lines of several fetch units).
        let Some(m) = laps.first() else { return keep_all };
        let lone: Vec<u64> = m.iter().copied().filter(|&i| isolated(m, i)).collect();
        if m.len() >= 4 && 4 * lone.len() <= m.len() {
            let kept: BTreeSet<u64> = m.iter().copied().filter(|i| !lone.contains(i)).collect();
            return Cleaned { laps: vec![kept], strays: lone.len(), min_repeats: 1, kept: 0 };
        }
        return keep_all;
    }
    let accesses = lap.max(1) as f64 * n as f64;
    let singles: usize = laps.iter().map(|m| m.iter().filter(|&&i| count[&i] == 1 && isolated(m, i)).count()).sum();
    let p = match rate {
        Some(r) => {
            // Far more lone misses than strays explain: they are the cache's.
            let expected = r * accesses;
            if singles as f64 > (3.0 * expected).max(STRAYS_ALWAYS) {
                return Cleaned { kept: singles, ..keep_all };
            }
            r
        }
        // An upper bound of the stray count (Poisson, about 95 %): strays that fell together or
        // on a structural position are not singles, and few singles say little about the rate.
        None => (singles as f64 + 2.0 * (singles as f64).sqrt()) / accesses,
    };
    let min_repeats = (2..=n).find(|&c| lap as f64 * binomial_tail(n, p, c) < FALSE_POSITIONS).unwrap_or(n + 1).max(2);
    // A miss that does not repeat stays where it is part of a run of misses that do not repeat
    // either (a line of several fetch units evicted once); beside a repeating miss it is a
    // stray that happened to fall there.
    let repeats = |i: u64| count.get(&i).is_some_and(|c| *c >= min_repeats);
    let in_run = |m: &BTreeSet<u64>, i: u64| {
        (i > 0 && m.contains(&(i - 1)) && !repeats(i - 1)) || (m.contains(&(i + 1)) && !repeats(i + 1))
    };
    let mut strays = 0usize;
    let cleaned: Vec<BTreeSet<u64>> = laps
        .iter()
        .map(|m| {
            m.iter()
                .copied()
                .filter(|&i| {
                    let keep = repeats(i) || in_run(m, i);
                    if !keep {
                        strays += 1;
                    }
                    keep
                })
                .collect()
        })
        .collect();
    Cleaned { laps: cleaned, strays, min_repeats, kept: 0 }
}

/// Lone misses that are never more than strays, whatever the rate: a few interruptions.
const STRAYS_ALWAYS: f64 = 3.0;

/// The share of accesses that fall in the miss `window` where the level serves everything:
/// strays, from the points of a footprint sweep below its first knee (an upper bound, about
/// 95 %, of their rate). None without such points.
pub fn rate_below_knee(points: &[crate::dissect::data::Point], knee: u64, window: (f64, f64)) -> Option<f64> {
    let (mut slow, mut total) = (0u64, 0u64);
    for p in points.iter().filter(|p| p.x <= knee) {
        slow += p.hist.bins().filter(|(c, _)| *c >= window.0 && *c <= window.1).map(|(_, n)| n).sum::<u64>();
        total += p.hist.total();
    }
    (total > 0).then(|| (slow as f64 + 2.0 * (slow as f64).sqrt() + 2.0) / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[u64]) -> BTreeSet<u64> {
        v.iter().copied().collect()
    }

    #[test]
    fn isolated_misses_that_do_not_repeat_are_strays() {
        let mut laps: Vec<BTreeSet<u64>> = (0..20).map(|_| set(&[0, 4, 8])).collect();
        laps[3].insert(5);
        laps[11].insert(2);
        let c = without_strays(&laps, 9, None);
        assert_eq!(c.strays, 2, "beside a repeating miss or not, a lone stray is one");
        assert!(c.laps.iter().all(|m| *m == set(&[0, 4, 8])), "{c:?}");
        // Two neighbours that miss together once: a line of two fetch units evicted once.
        laps[12].extend([6, 7]);
        assert_eq!(without_strays(&laps, 9, None).laps[12], set(&[0, 4, 6, 7, 8]));
    }

    #[test]
    fn runs_of_misses_stay_even_once() {
        let laps = vec![set(&[0, 1, 2, 3, 40]), set(&[16, 17, 18, 19]), set(&[0, 1, 2, 3])];
        let c = without_strays(&laps, 64, None);
        assert_eq!(c.laps, vec![set(&[0, 1, 2, 3]), set(&[16, 17, 18, 19]), set(&[0, 1, 2, 3])]);
        assert_eq!(c.strays, 1);
    }

    #[test]
    fn one_lap_keeps_runs_and_drops_lone_misses_only_where_runs_are_the_rule() {
        let c = without_strays(&[set(&[0, 1, 2, 3, 8, 9, 10, 11, 30])], 64, None);
        assert_eq!(c.laps, vec![set(&[0, 1, 2, 3, 8, 9, 10, 11])]);
        let c = without_strays(&[set(&[0, 9, 30])], 64, None);
        assert_eq!(c.laps, vec![set(&[0, 9, 30])]);
    }

    #[test]
    fn many_strays_raise_the_repeats_a_position_needs() {
        // 200 laps of 1000 positions, one structural position, a stray in every other lap.
        let mut x = 12345u64;
        let laps: Vec<BTreeSet<u64>> = (0..200u64)
            .map(|k| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if k % 2 == 0 { set(&[7, 10 + x % 990]) } else { set(&[7]) }
            })
            .collect();
        let c = without_strays(&laps, 1000, None);
        assert!(c.min_repeats > 2, "{}", c.min_repeats);
        assert!(c.laps.iter().all(|m| *m == set(&[7])), "{:?}", c.laps.iter().find(|m| **m != set(&[7])));
        assert_eq!(c.strays, 100);
    }

    #[test]
    fn lone_misses_far_beyond_the_stray_rate_are_the_caches() {
        // A policy whose victims move on: eight lone misses in every lap, each position missing
        // once, where strays fall on one access in a million.
        let laps: Vec<BTreeSet<u64>> = (0..24u64).map(|k| (0..8).map(|j| 100 * j + k).collect()).collect();
        let c = without_strays(&laps, 1000, Some(1e-6));
        assert_eq!((c.strays, c.kept), (0, 192));
        assert_eq!(c.laps, laps);
        // The same misses where strays are common enough to explain them are strays.
        assert!(without_strays(&laps, 1000, Some(1e-2)).strays > 0);
    }
}
