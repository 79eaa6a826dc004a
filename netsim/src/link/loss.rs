//! Random loss on the wire: Bernoulli, Gilbert–Elliott and fixed-length bursts.
//!
//! The loss decision is made for each packet that has been serialised (a lost packet used link capacity, as
//! with loss on a radio hop), after the queue and before propagation.
//!
//! # Gilbert–Elliott parameterisation
//!
//! A two-state Markov chain, Good (G) and Bad (B), advanced once per packet. The packet is lost with the
//! probability of the *current* state, then the chain moves:
//!
//! | parameter | meaning |
//! |---|---|
//! | `p` | P(G → B) per packet |
//! | `r` | P(B → G) per packet |
//! | `k` | P(delivered \| G): loss probability in Good is `1 − k` (default `k = 1`: no loss in Good) |
//! | `h` | P(delivered \| B): loss probability in Bad is `1 − h` (default `h = 0`: everything lost in Bad) |
//!
//! With the defaults this is the simple Gilbert model. netem's `loss gemodel p r 1-h 1-k` takes the same
//! quantities (in percent, with the two loss probabilities given directly). The chain starts in Good.
//!
//! Stationary probabilities: `π_B = p / (p + r)`, `π_G = r / (p + r)`; stationary loss rate
//!
//! ```text
//! L = π_G · (1 − k) + π_B · (1 − h) = (r · (1 − k) + p · (1 − h)) / (p + r)
//! ```
//!
//! A stay in Bad lasts a geometric number of packets with mean `1 / r` (and in Good, `1 / p`); in the simple
//! Gilbert model a stay in Bad is exactly a loss burst, so the mean loss-burst length is `1 / r`.
//! `p` and `r` may not both be 0 (the stationary distribution would be undefined).
//!
//! # Fixed-length bursts (segmentation offload)
//!
//! A qdisc in front of a NIC with GSO/TSO sees *super-packets* of up to 64 KiB, split into MTU-sized
//! segments only by the driver or the NIC. A random loss applied by such a qdisc (netem's `loss`, Dummynet's
//! `plr`) therefore drops a whole super-packet: a run of consecutive segments. The `burst` model reproduces
//! this at the segment level: a packet that is not already part of a burst starts a *loss event* with
//! probability `q`; an event drops that packet and the next `N − 1` (`N` = `burst`, the segments per
//! super-packet), and no new event starts inside a burst.
//!
//! `q` is derived from the configured average loss rate `L` (field `p`) so that the long-run fraction of
//! packets lost is `L` whatever `N`. Between two events the number of delivered packets is geometric with
//! mean `(1 − q) / q` (a failure count before the first success), and each event loses `N` packets, so
//!
//! ```text
//! L = N / (N + (1 − q) / q) = N·q / (N·q + 1 − q)   ⇔   q = L / (N − (N − 1)·L)
//! ```
//!
//! (`N = 1` gives `q = L`, the Bernoulli model; `L = 1` gives `q = 1`.) Example: `L = 1 %`, `N = 10` gives
//! `q = 0.01 / 9.91 ≈ 0.001009`: one event every ≈ 991 packets, each losing 10. Losses come in runs whose
//! length is a multiple of `N` (an event may start right after the previous burst). Range of `burst`:
//! 1 to [`MAX_BURST`].

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::error::{ConfigError, check_probability};

/// The longest loss burst, in packets: a 64 KiB super-packet of 64-byte segments is 1024 of them.
pub const MAX_BURST: u32 = 1_024;

/// How a link loses packets at random.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossModel {
    /// No random loss (TOML: `{ kind = "none" }`).
    #[default]
    None,
    /// Each packet is lost independently with probability `p` (TOML: `{ kind = "bernoulli", p = 0.001 }`).
    Bernoulli {
        /// Loss probability, in `[0, 1]`.
        p: f64,
    },
    /// Two-state bursty loss; see the module documentation
    /// (TOML: `{ kind = "gilbert_elliott", p = 0.01, r = 0.3 }`, optionally with `k` and `h`).
    GilbertElliott {
        /// P(Good → Bad) per packet, in `[0, 1]`.
        p: f64,
        /// P(Bad → Good) per packet, in `[0, 1]`.
        r: f64,
        /// P(delivered | Good), in `[0, 1]`; default 1.
        #[serde(default = "one")]
        k: f64,
        /// P(delivered | Bad), in `[0, 1]`; default 0.
        #[serde(default)]
        h: f64,
    },
    /// Loss events that each drop `burst` consecutive packets, with an average loss rate of `p`; see the
    /// module documentation (TOML: `{ kind = "burst", p = 0.01, burst = 10 }`).
    Burst {
        /// The average fraction of packets lost, in `[0, 1]`.
        p: f64,
        /// Packets dropped by one loss event: 1 to [`MAX_BURST`].
        burst: u32,
    },
}

fn one() -> f64 {
    1.0
}

impl LossModel {
    /// Checks every probability (field names as in a configuration file: `loss.p`, …).
    pub fn validate(&self) -> Result<(), ConfigError> {
        match *self {
            LossModel::None => Ok(()),
            LossModel::Bernoulli { p } => check_probability("loss.p", p),
            LossModel::GilbertElliott { p, r, k, h } => {
                check_probability("loss.p", p)?;
                check_probability("loss.r", r)?;
                check_probability("loss.k", k)?;
                check_probability("loss.h", h)?;
                if p + r == 0.0 {
                    return Err(ConfigError::new(
                        "loss.r",
                        r,
                        "p + r > 0 (p and r cannot both be 0)",
                    ));
                }
                Ok(())
            }
            LossModel::Burst { p, burst } => {
                check_probability("loss.p", p)?;
                if !(1..=MAX_BURST).contains(&burst) {
                    return Err(ConfigError::new(
                        "loss.burst",
                        burst,
                        "a number of packets from 1 to 1024",
                    ));
                }
                Ok(())
            }
        }
    }

    /// The probability that a packet outside a burst starts a loss event: `p` for Bernoulli, and
    /// `L / (N − (N − 1)·L)` for bursts of `N` (see the module documentation); `None` for the other models.
    pub fn event_probability(&self) -> Option<f64> {
        match *self {
            LossModel::Bernoulli { p } => Some(p),
            LossModel::Burst { p, burst } => {
                let n = f64::from(burst);
                let denominator = n - (n - 1.0) * p;
                Some(if denominator > 0.0 { p / denominator } else { 1.0 })
            }
            LossModel::None | LossModel::GilbertElliott { .. } => None,
        }
    }

    /// The long-run fraction of packets lost (see the module documentation for the Gilbert–Elliott formula).
    pub fn stationary_loss_rate(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott { p, r, k, h } => (r * (1.0 - k) + p * (1.0 - h)) / (p + r),
            LossModel::Burst { p, .. } => p,
        }
    }
}

/// The loss stage of a link: the model, its Markov state and its random stream.
#[derive(Clone, Debug)]
pub(crate) struct LossProcess {
    model: LossModel,
    /// Gilbert–Elliott state (`true` = Bad); unused by the other models.
    bad: bool,
    /// Packets still to drop in the current burst (burst model only).
    burst_left: u32,
    rng: ChaCha8Rng,
}

impl LossProcess {
    pub(crate) fn new(model: LossModel, rng: ChaCha8Rng) -> LossProcess {
        LossProcess {
            model,
            bad: false,
            burst_left: 0,
            rng,
        }
    }

    pub(crate) fn model(&self) -> &LossModel {
        &self.model
    }

    /// Replaces the model; a Gilbert–Elliott chain restarts in Good and a burst in progress ends.
    pub(crate) fn set_model(&mut self, model: LossModel) {
        self.model = model;
        self.bad = false;
        self.burst_left = 0;
    }

    /// Decides whether the next packet is lost.
    pub(crate) fn lose(&mut self) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => self.draw(p),
            LossModel::GilbertElliott { p, r, k, h } => {
                let lost = if self.bad {
                    self.draw(1.0 - h)
                } else {
                    self.draw(1.0 - k)
                };
                self.bad = if self.bad { !self.draw(r) } else { self.draw(p) };
                lost
            }
            LossModel::Burst { burst, .. } => {
                if self.burst_left > 0 {
                    self.burst_left = self.burst_left.saturating_sub(1);
                    return true;
                }
                let q = self.model.event_probability().unwrap_or(0.0);
                if self.draw(q) {
                    self.burst_left = burst.saturating_sub(1);
                    true
                } else {
                    false
                }
            }
        }
    }

    /// `true` with probability `prob` (`prob ≥ 1` always, `prob ≤ 0` never).
    fn draw(&mut self, prob: f64) -> bool {
        self.rng.random::<f64>() < prob
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::float_cmp, clippy::cast_precision_loss)]

    use rand::SeedableRng;

    use super::*;

    fn pattern(model: LossModel, n: usize, seed: u64) -> Vec<bool> {
        let mut process = LossProcess::new(model, ChaCha8Rng::seed_from_u64(seed));
        (0..n).map(|_| process.lose()).collect()
    }

    /// Lengths of the maximal runs of consecutive losses.
    fn runs(pattern: &[bool]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut run = 0;
        for &lost in pattern.iter().chain(std::iter::once(&false)) {
            if lost {
                run += 1;
            } else if run > 0 {
                out.push(run);
                run = 0;
            }
        }
        out
    }

    #[test]
    fn burst_event_probability_matches_the_hand_computed_formula() {
        // q = L / (N − (N − 1)·L). L = 0.01, N = 10: 0.01 / (10 − 9 · 0.01) = 0.01 / 9.91 = 0.001009082…
        let q = LossModel::Burst { p: 0.01, burst: 10 }
            .event_probability()
            .unwrap();
        assert!((q - 0.001_009_082).abs() < 1e-9, "{q}");
        // L = 0.1, N = 4: 0.1 / (4 − 0.3) = 0.1 / 3.7 = 0.027027…
        let q = LossModel::Burst { p: 0.1, burst: 4 }.event_probability().unwrap();
        assert!((q - 0.027_027_027).abs() < 1e-9, "{q}");
        // N = 1 is Bernoulli; L = 1 loses everything; L = 0 nothing.
        assert_eq!(
            LossModel::Burst { p: 0.3, burst: 1 }.event_probability(),
            Some(0.3)
        );
        assert_eq!(
            LossModel::Burst { p: 1.0, burst: 64 }.event_probability(),
            Some(1.0)
        );
        assert_eq!(
            LossModel::Burst { p: 0.0, burst: 64 }.event_probability(),
            Some(0.0)
        );
    }

    #[test]
    fn bursts_have_the_configured_length_and_the_configured_average_rate() {
        let (l, n_burst, packets) = (0.02, 8_u32, 400_000_usize);
        let lost = pattern(LossModel::Burst { p: l, burst: n_burst }, packets, 7);
        let runs = runs(&lost);
        // An event drops exactly N packets; back-to-back events make runs of 2N, 3N, … but never anything else.
        assert!(
            runs.iter().all(|r| r % 8 == 0),
            "{:?}",
            &runs[..runs.len().min(20)]
        );
        assert!(runs.iter().filter(|&&r| r == 8).count() * 10 > runs.len() * 9);
        // Events: ≈ packets · L / N = 1000. The count of events is close to Poisson, σ ≈ √1000 ≈ 31.6, so the
        // observed rate has a relative σ of ≈ 3.2 %: allow 4 σ (12.6 %).
        let rate = lost.iter().filter(|&&x| x).count() as f64 / packets as f64;
        assert!((rate - l).abs() < 0.126 * l, "rate {rate}");
        // Against the naive reading (each packet starts a burst with probability L, giving ≈ N·L = 16 %).
        assert!(rate < 0.05);
    }

    #[test]
    fn burst_validation_names_the_field_and_the_value() {
        let err = LossModel::Burst { p: 0.01, burst: 0 }.validate().unwrap_err();
        assert_eq!((err.field, err.value.as_str()), ("loss.burst", "0"));
        let err = LossModel::Burst { p: 0.01, burst: 1025 }.validate().unwrap_err();
        assert_eq!((err.field, err.value.as_str()), ("loss.burst", "1025"));
        let err = LossModel::Burst { p: 1.5, burst: 4 }.validate().unwrap_err();
        assert_eq!(err.field, "loss.p");
        assert!(LossModel::Burst { p: 0.01, burst: 1024 }.validate().is_ok());
        let parsed: LossModel = toml::from_str("kind = \"burst\"\np = 0.01\nburst = 10").unwrap();
        assert_eq!(parsed, LossModel::Burst { p: 0.01, burst: 10 });
        assert!(toml::from_str::<LossModel>("kind = \"burst\"\np = 0.01").is_err());
    }

    #[test]
    fn a_new_model_ends_a_burst_in_progress() {
        let mut process = LossProcess::new(
            LossModel::Burst { p: 1.0, burst: 100 },
            ChaCha8Rng::seed_from_u64(1),
        );
        assert!(process.lose());
        process.set_model(LossModel::None);
        assert!(!process.lose());
    }
}
