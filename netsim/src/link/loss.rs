//! Random loss on the wire: Bernoulli and Gilbert–Elliott.
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

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::error::{ConfigError, check_probability};

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
        }
    }

    /// The long-run fraction of packets lost (see the module documentation for the Gilbert–Elliott formula).
    pub fn stationary_loss_rate(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott { p, r, k, h } => (r * (1.0 - k) + p * (1.0 - h)) / (p + r),
        }
    }
}

/// The loss stage of a link: the model, its Markov state and its random stream.
#[derive(Clone, Debug)]
pub(crate) struct LossProcess {
    model: LossModel,
    /// Gilbert–Elliott state (`true` = Bad); unused by the other models.
    bad: bool,
    rng: ChaCha8Rng,
}

impl LossProcess {
    pub(crate) fn new(model: LossModel, rng: ChaCha8Rng) -> LossProcess {
        LossProcess {
            model,
            bad: false,
            rng,
        }
    }

    pub(crate) fn model(&self) -> &LossModel {
        &self.model
    }

    /// Replaces the model; a Gilbert–Elliott chain restarts in Good.
    pub(crate) fn set_model(&mut self, model: LossModel) {
        self.model = model;
        self.bad = false;
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
        }
    }

    /// `true` with probability `prob` (`prob ≥ 1` always, `prob ≤ 0` never).
    fn draw(&mut self, prob: f64) -> bool {
        self.rng.random::<f64>() < prob
    }
}
