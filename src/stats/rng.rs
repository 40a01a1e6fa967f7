//! A small seeded pseudo-random generator for reproducible bootstrap resampling.
//!
//! xoshiro256** (Blackman and Vigna, 2018) seeded through SplitMix64, as its authors
//! recommend. Verdicts must not change from one invocation to the next on the same data, so
//! every comparison seeds its own generator from the metric's name.

/// SplitMix64: a 64-bit generator used to expand one seed into xoshiro's state.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting at `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// xoshiro256**: fast, 256 bits of state, good statistical quality.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose state is expanded from `seed` by SplitMix64.
    pub fn seeded(seed: u64) -> Self {
        let mut sm = SplitMix64::new(seed);
        Rng { s: [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()] }
    }

    /// A generator with the given raw state (not all zero).
    pub fn from_state(s: [u64; 4]) -> Self {
        Rng { s }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (`n > 0`), without modulo bias (Lemire's multiply-and-shift
    /// with rejection; the division runs only on the rare draws near the boundary).
    pub fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let mut m = (self.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as usize
    }
}

/// FNV-1a hash of `text`: a stable seed derived from a name.
pub fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        let mut g = SplitMix64::new(1_234_567);
        assert_eq!(g.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(g.next_u64(), 3_203_168_211_198_807_973);
        assert_eq!(g.next_u64(), 9_817_491_932_198_370_423);
    }

    #[test]
    fn xoshiro256starstar_reference_values() {
        let mut g = Rng::from_state([1, 2, 3, 4]);
        let got: Vec<u64> = (0..4).map(|_| g.next_u64()).collect();
        assert_eq!(got, vec![11_520, 0, 1_509_978_240, 1_215_971_899_390_074_240]);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut g = Rng::seeded(7);
        let mut counts = [0usize; 10];
        for _ in 0..100_000 {
            counts[g.below(10)] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn same_seed_same_stream() {
        let a: Vec<u64> = {
            let mut g = Rng::seeded(42);
            (0..5).map(|_| g.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut g = Rng::seeded(42);
            (0..5).map(|_| g.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(fnv1a("stream/copy:bandwidth"), fnv1a("stream/copy:bandwidth "));
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
    }
}
