//! Latency clusters: the levels a set of latency histograms shows, found as peaks of their
//! pooled density on a logarithmic latency axis, separated at the valleys between them, then
//! neighbours whose shares rise and fall together across the histograms merged (one level's
//! latency often has several modes: L2 slices at different distances, a trace kernel's two
//! timings of a hit). No latency threshold is fixed in advance: the boundaries come from the
//! data.

use crate::dissect::data::Histogram;

/// Width of a density bin on the log axis (ratio between neighbouring bins).
const LOG_BIN_RATIO: f64 = 1.02;
/// Half-width of the smoothing window, in log bins: narrow, so that a level 20 cycles from
/// another at 500 stays apart; the modes of one level are merged by their co-variation.
const SMOOTH_HALF: usize = 1;
/// Neighbouring clusters whose per-histogram shares have at least this cosine similarity move
/// together: modes of one level.
const SAME_LEVEL_COSINE: f64 = 0.98;
/// Histograms that must carry a pair of clusters for their co-variation to say anything.
const MIN_COVARYING: usize = 3;
/// A peak must hold at least this much pooled mass (in histograms' worth) to count.
const MIN_PEAK_MASS: f64 = 0.05;
/// Two peaks are separate only if the density between them falls below this share of the
/// smaller peak.
const VALLEY_SHARE: f64 = 0.5;

/// Latency levels found in a set of histograms.
#[derive(Debug, Clone, PartialEq)]
pub struct Clusters {
    /// Latency at the peak of each cluster, ascending, cycles.
    pub centers: Vec<f64>,
    /// Boundary between cluster `i` and `i + 1` (the valley), cycles.
    pub bounds: Vec<f64>,
    /// Pooled mass of each cluster, in histograms' worth.
    pub masses: Vec<f64>,
}

impl Clusters {
    /// Index of the cluster a latency belongs to.
    pub fn index_of(&self, cycles: f64) -> usize {
        self.bounds.iter().take_while(|b| cycles >= **b).count()
    }

    /// Latencies that count as a miss of the fastest level: from the first boundary up to
    /// twice the second cluster's latency (slower accesses are stray interruptions).
    pub fn miss_window(&self) -> Option<(f64, f64)> {
        Some((*self.bounds.first()?, 2.0 * self.centers[1]))
    }

    /// Share of a histogram's accesses in each cluster.
    pub fn shares(&self, h: &Histogram) -> Vec<f64> {
        let mut shares = vec![0.0; self.centers.len().max(1)];
        let total = h.total();
        if total == 0 {
            return shares;
        }
        for (c, n) in h.bins() {
            shares[self.index_of(c)] += n as f64 / total as f64;
        }
        shares
    }
}

fn log_bin(cycles: f64) -> f64 {
    cycles.max(1.0).ln() / LOG_BIN_RATIO.ln()
}

/// Finds the clusters of `hists`, each histogram weighted equally.
pub fn find(hists: &[&Histogram]) -> Clusters {
    let mut top = 0usize;
    for h in hists {
        for (c, _) in h.bins() {
            top = top.max(log_bin(c + h.bin_cycles as f64) as usize + 2);
        }
    }
    let mut density = vec![0.0f64; top + 1];
    for h in hists {
        let total = h.total();
        if total == 0 {
            continue;
        }
        let w = h.bin_cycles as f64;
        for (c, n) in h.bins() {
            // Spread each linear bin over the log bins it covers.
            let (a, b) = (log_bin(c - 0.5 * w), log_bin(c + 0.5 * w));
            let (ia, ib) = (a.floor() as usize, (b.floor() as usize).max(a.floor() as usize));
            let mass = n as f64 / total as f64;
            let span = (ib - ia + 1) as f64;
            for d in density.iter_mut().take(ib.min(top) + 1).skip(ia) {
                *d += mass / span;
            }
        }
    }
    let smooth: Vec<f64> = (0..density.len())
        .map(|i| {
            let lo = i.saturating_sub(SMOOTH_HALF);
            let hi = (i + SMOOTH_HALF).min(density.len() - 1);
            let mut s = 0.0;
            let mut wsum = 0.0;
            for (j, d) in density.iter().enumerate().take(hi + 1).skip(lo) {
                let w = (SMOOTH_HALF + 1 - i.abs_diff(j)) as f64;
                s += w * d;
                wsum += w;
            }
            s / wsum
        })
        .collect();
    // Local maxima (plateaus take their first bin).
    let mut peaks: Vec<usize> = Vec::new();
    for i in 0..smooth.len() {
        let left = if i == 0 { 0.0 } else { smooth[i - 1] };
        let right = smooth.get(i + 1).copied().unwrap_or(0.0);
        if smooth[i] > 0.0 && smooth[i] > left && smooth[i] >= right {
            peaks.push(i);
        }
    }
    // Merge neighbours whose valley is shallow, keeping the higher peak.
    // The lowest density between two peaks; where it is flat (an empty gap), its middle.
    let valley = |a: usize, b: usize| -> (usize, f64) {
        let low = (a..=b).map(|k| smooth[k]).fold(f64::INFINITY, f64::min);
        let at: Vec<usize> = (a..=b).filter(|&k| smooth[k] <= low).collect();
        match (at.first(), at.last()) {
            (Some(&x), Some(&y)) => ((x + y) / 2, low),
            _ => (a, 0.0),
        }
    };
    let mut merged = true;
    while merged && peaks.len() > 1 {
        merged = false;
        for k in 0..peaks.len() - 1 {
            let (a, b) = (peaks[k], peaks[k + 1]);
            let (_, v) = valley(a, b);
            if v > VALLEY_SHARE * smooth[a].min(smooth[b]) {
                let drop = if smooth[a] >= smooth[b] { k + 1 } else { k };
                peaks.remove(drop);
                merged = true;
                break;
            }
        }
    }
    // Masses between valleys; drop light peaks and merge again.
    loop {
        let cuts: Vec<usize> = peaks.windows(2).map(|w| valley(w[0], w[1]).0).collect();
        let mut masses = Vec::with_capacity(peaks.len());
        for k in 0..peaks.len() {
            let lo = if k == 0 { 0 } else { cuts[k - 1] };
            let hi = if k + 1 == peaks.len() { density.len() } else { cuts[k] };
            masses.push(density[lo..hi].iter().sum::<f64>());
        }
        let light = masses
            .iter()
            .enumerate()
            .filter(|(_, m)| **m < MIN_PEAK_MASS)
            .min_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| i);
        match light {
            Some(i) if peaks.len() > 1 => {
                peaks.remove(i);
            }
            _ => {
                let to_cycles = |bin: f64| LOG_BIN_RATIO.powf(bin);
                let found = Clusters {
                    centers: peaks.iter().map(|&p| to_cycles(p as f64 + 0.5)).collect(),
                    bounds: cuts.iter().map(|&c| to_cycles(c as f64 + 0.5)).collect(),
                    masses,
                };
                return merge_covarying(found, hists);
            }
        }
    }
}

/// Merges neighbouring clusters whose shares are proportional across the histograms (cosine
/// similarity of the share vectors), most similar pair first; the merged cluster keeps the
/// heavier one's center.
fn merge_covarying(mut k: Clusters, hists: &[&Histogram]) -> Clusters {
    loop {
        let shares: Vec<Vec<f64>> = hists.iter().filter(|h| h.total() > 0).map(|h| k.shares(h)).collect();
        let best = (0..k.bounds.len())
            .filter_map(|i| {
                let carried = shares.iter().filter(|s| s[i] + s[i + 1] >= 0.01).count();
                if carried < MIN_COVARYING {
                    return None;
                }
                let dot: f64 = shares.iter().map(|s| s[i] * s[i + 1]).sum();
                let na: f64 = shares.iter().map(|s| s[i] * s[i]).sum::<f64>().sqrt();
                let nb: f64 = shares.iter().map(|s| s[i + 1] * s[i + 1]).sum::<f64>().sqrt();
                (na > 0.0 && nb > 0.0).then(|| (i, dot / (na * nb)))
            })
            .filter(|(_, cos)| *cos >= SAME_LEVEL_COSINE)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, _)) = best else { return k };
        let keep = if k.masses[i] >= k.masses[i + 1] { k.centers[i] } else { k.centers[i + 1] };
        k.centers[i] = keep;
        k.centers.remove(i + 1);
        k.masses[i] += k.masses[i + 1];
        k.masses.remove(i + 1);
        k.bounds.remove(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(levels: &[(f64, usize)], seed: u64) -> Histogram {
        let mut s = seed | 1;
        let mut lat = Vec::new();
        for &(c, n) in levels {
            for _ in 0..n {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let u = (s >> 11) as f64 / (1u64 << 53) as f64;
                lat.push((c * (0.97 + 0.06 * u)).round() as u32);
            }
        }
        Histogram::of_latencies(2, &lat)
    }

    #[test]
    fn separates_l1_l2_and_dram() {
        let a = noisy(&[(40.0, 1000)], 1);
        let b = noisy(&[(40.0, 300), (290.0, 700)], 2);
        let c = noisy(&[(290.0, 500), (680.0, 500)], 3);
        let k = find(&[&a, &b, &c]);
        assert_eq!(k.centers.len(), 3, "{k:?}");
        assert!((k.centers[0] - 40.0).abs() < 4.0 && (k.centers[1] - 290.0).abs() < 15.0, "{k:?}");
        assert!(k.bounds[0] > 45.0 && k.bounds[0] < 270.0);
        assert!(k.bounds[1] > 300.0 && k.bounds[1] < 650.0);
        assert_eq!((k.index_of(41.0), k.index_of(290.0), k.index_of(700.0)), (0, 1, 2));
    }

    #[test]
    fn near_and_far_l2_are_two_clusters_but_jitter_is_one() {
        let a = noisy(&[(287.0, 800), (430.0, 800)], 4);
        assert_eq!(find(&[&a]).centers.len(), 2);
        let b = noisy(&[(287.0, 800), (300.0, 800)], 5);
        assert_eq!(find(&[&b]).centers.len(), 1, "{:?}", find(&[&b]));
    }

    #[test]
    fn stray_outliers_make_no_cluster() {
        let mut lat = vec![40u32; 5000];
        lat.extend([900, 1300, 2000]);
        let h = Histogram::of_latencies(2, &lat);
        assert_eq!(find(&[&h]).centers.len(), 1);
    }

    #[test]
    fn empty_input_has_no_clusters() {
        let k = find(&[]);
        assert!(k.centers.is_empty() && k.bounds.is_empty());
    }
}
