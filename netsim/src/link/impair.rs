//! Optional impairments: corruption and duplication.
//!
//! Applied to packets that survived the queue and the loss stage, in this order:
//! - **corruption**, with probability `corruption`: one bit of the payload, chosen uniformly, is flipped in
//!   place (an empty payload cannot be corrupted: the draw is made but nothing changes and the packet is not
//!   reported corrupted);
//! - **duplication**, with probability `duplication`: the wire delivers a second copy. The copy is made on the
//!   wire, after serialisation, so it uses no link capacity and no queue space; it gets its own jitter sample.
//!   It carries the same bytes as the original, corrupted or not (the caller copies the payload, which is the
//!   only copy the link model ever implies).
//!
//! Unlike netem, where a duplicate goes through the whole qdisc again, a duplicate here is never corrupted,
//! lost or duplicated independently; this keeps "one offered packet ⇒ at most two arrivals" and makes the
//! rates easy to reason about.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::error::{ConfigError, check_probability};

/// Corruption and duplication probabilities (both default to 0).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Impairments {
    /// Probability that a delivered packet has one random bit flipped, in `[0, 1]`.
    #[serde(default)]
    pub corruption: f64,
    /// Probability that a delivered packet arrives twice, in `[0, 1]`.
    #[serde(default)]
    pub duplication: f64,
}

impl Impairments {
    /// No corruption, no duplication.
    pub const NONE: Impairments = Impairments {
        corruption: 0.0,
        duplication: 0.0,
    };

    /// Checks both probabilities (fields `impairments.corruption`, `impairments.duplication`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_probability("impairments.corruption", self.corruption)?;
        check_probability("impairments.duplication", self.duplication)
    }
}

/// The impairment stage of a link.
#[derive(Clone, Debug)]
pub(crate) struct Impairer {
    config: Impairments,
    rng: ChaCha8Rng,
}

impl Impairer {
    pub(crate) fn new(config: Impairments, rng: ChaCha8Rng) -> Impairer {
        Impairer { config, rng }
    }

    pub(crate) fn config(&self) -> &Impairments {
        &self.config
    }

    pub(crate) fn set_config(&mut self, config: Impairments) {
        self.config = config;
    }

    /// With probability `corruption`, flips one uniformly chosen bit of `payload`; returns whether it did.
    pub(crate) fn corrupt(&mut self, payload: &mut [u8]) -> bool {
        if self.rng.random::<f64>() >= self.config.corruption || payload.is_empty() {
            return false;
        }
        let bit = self.rng.random_range(0..payload.len().saturating_mul(8));
        match payload.get_mut(bit / 8) {
            Some(byte) => {
                *byte ^= 1 << (bit % 8);
                true
            }
            None => false,
        }
    }

    /// Whether this packet is duplicated.
    pub(crate) fn duplicate(&mut self) -> bool {
        self.rng.random::<f64>() < self.config.duplication
    }
}
