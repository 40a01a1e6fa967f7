//! Shared-memory banks from one warp's latency at word strides 1, 2, ... (Qiu et al.'s table):
//! each candidate organisation (bank count x bank width) predicts how many distinct bank words
//! the busiest bank serves per access; the candidate whose prediction fits the latencies best
//! in a line `base + cost x (ways - 1)` wins.

use super::traces::Found;
use crate::dissect::data::BankPoint;

/// What the stride table shows.
#[derive(Debug, Clone, PartialEq)]
pub struct BankFit {
    /// Number of banks.
    pub banks: Found<u64>,
    /// Bank width, bytes.
    pub width: Found<u64>,
    /// Cycles of a conflict-free access.
    pub base_cycles: f64,
    /// Cycles each extra way of conflict adds.
    pub cycles_per_way: f64,
    /// Latency at every stride the fit says is free of conflicts (one sample per stride).
    pub base_samples: Vec<f64>,
    /// Per stride with conflicts: (cycles - base) / (ways - 1).
    pub per_way_samples: Vec<f64>,
}

/// Ways of conflict when 32 threads read 4-byte words `stride_words` apart from `banks` banks
/// of `width` bytes: the most distinct bank words any one bank serves.
pub fn conflict_ways(stride_words: u32, banks: u64, width: u64) -> u64 {
    let mut per_bank: Vec<Vec<u64>> = vec![Vec::new(); banks as usize];
    for t in 0..32u64 {
        let word = t * stride_words as u64 * 4 / width;
        let b = &mut per_bank[(word % banks) as usize];
        if !b.contains(&word) {
            b.push(word);
        }
    }
    per_bank.iter().map(|b| b.len() as u64).max().unwrap_or(1)
}

fn line_fit(x: &[f64], y: &[f64]) -> (f64, f64, f64) {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxx: f64 = x.iter().map(|v| (v - mx).powi(2)).sum();
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let icpt = my - slope * mx;
    let rss = x.iter().zip(y).map(|(a, b)| (b - icpt - slope * a).powi(2)).sum();
    (icpt, slope, rss)
}

/// Fits the bank organisation.
pub fn fit(points: &[BankPoint]) -> Option<BankFit> {
    if points.len() < 4 {
        return None;
    }
    let y: Vec<f64> = points.iter().map(|p| p.cycles).collect();
    let mut fits: Vec<(f64, u64, u64, f64, f64, Vec<u64>)> = Vec::new();
    for banks in [8u64, 16, 32, 64, 128] {
        for width in [4u64, 8, 16] {
            let ways: Vec<u64> = points.iter().map(|p| conflict_ways(p.stride_words, banks, width)).collect();
            let x: Vec<f64> = ways.iter().map(|w| (*w - 1) as f64).collect();
            let (base, per_way, rss) = line_fit(&x, &y);
            if per_way > 0.0 {
                fits.push((rss, banks, width, base, per_way, ways));
            }
        }
    }
    fits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)).then(a.1.cmp(&b.1)));
    let best = fits.first()?.clone();
    // Organisations that predict the same ways at every stride are indistinguishable here.
    let twins = fits.iter().filter(|f| f.5 == best.5).count();
    let rival = fits.iter().find(|f| f.5 != best.5).map(|f| f.0);
    let scale: f64 = y.iter().map(|v| v * v).sum::<f64>() / y.len() as f64;
    let gap = match rival {
        Some(r) => ((r - best.0) / (r + 1e-9 * scale)).clamp(0.0, 1.0),
        None => 0.5,
    };
    let conf = gap / twins as f64;
    let strides = format!("strides 1..{} words", points.iter().map(|p| p.stride_words).max().unwrap_or(0));
    Some(BankFit {
        banks: Found {
            value: best.1,
            confidence: conf,
            method: format!("best of 15 bank organisations fitted to one warp's latency at {strides}"),
        },
        width: Found {
            value: best.2,
            confidence: conf,
            method: format!("{} B banks: conflicts counted in distinct bank words", best.2),
        },
        base_cycles: best.3,
        cycles_per_way: best.4,
        base_samples: y.iter().zip(&best.5).filter(|(_, w)| **w == 1).map(|(c, _)| *c).collect(),
        per_way_samples: y
            .iter()
            .zip(&best.5)
            .filter(|(_, w)| **w > 1)
            .map(|(c, w)| (c - best.3) / (*w - 1) as f64)
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(banks: u64, width: u64) -> Vec<BankPoint> {
        (1..=64)
            .map(|s| BankPoint { stride_words: s, cycles: 29.0 + 2.0 * (conflict_ways(s, banks, width) - 1) as f64 })
            .collect()
    }

    #[test]
    fn ways_follow_seed_002s_diagonal() {
        let w: Vec<u64> = [1, 2, 4, 8, 16, 32].iter().map(|&s| conflict_ways(s, 32, 4)).collect();
        assert_eq!(w, vec![1, 2, 4, 8, 16, 32]);
        assert_eq!(conflict_ways(3, 32, 4), 1);
        assert_eq!(conflict_ways(1, 16, 8), 1);
    }

    #[test]
    fn recovers_32_by_4_and_16_by_8() {
        for (b, w) in [(32, 4), (16, 8), (64, 4)] {
            let f = fit(&table(b, w)).unwrap();
            assert_eq!((f.banks.value, f.width.value), (b, w));
            assert!((f.cycles_per_way - 2.0).abs() < 1e-6 && (f.base_cycles - 29.0).abs() < 1e-6);
            assert!(f.banks.confidence > 0.5, "{f:?}");
        }
    }
}
