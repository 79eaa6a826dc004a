//! A tiny deterministic generator (SplitMix64, Steele, Lea, Flood, OOPSLA 2014) for BBR's random initial
//! ProbeBW phase: randomness is an input (a seed), so every run is reproducible.

/// SplitMix64 state.
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64 {
    state: u64,
}

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    /// A generator for the `index`-th stream of `seed`.
    pub(crate) fn new(seed: u64, index: u64) -> Self {
        let mut g = SplitMix64 { state: seed };
        // Decorrelate the streams of different paths by mixing the index in through one output step.
        g.state ^= index.wrapping_mul(GAMMA);
        g
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_stream_dependent() {
        let mut a = SplitMix64::new(7, 0);
        let mut b = SplitMix64::new(7, 0);
        let mut c = SplitMix64::new(7, 1);
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        // Reference value of SplitMix64 seeded with 0: first output 0xE220A8397B1DCDAF.
        assert_eq!(SplitMix64::new(0, 0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }
}
