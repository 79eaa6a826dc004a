//! D-LIA: LIA's coupled increase (RFC 6356, [`crate::lia`]) with the delay-state estimator and
//! dynamic decrease of the D-OLIA study (Lubna et al., Sensors 21:5764, 2021, Algorithms 1–2), as
//! implemented in [`crate::delay_state`] (see there for every choice the paper leaves open).
//!
//! With one path D-LIA grows exactly like NewReno (LIA's single-path case) but decreases by the dynamic β
//! when the path is judged less congested; with `beta_min = beta_max = 0.5` it is NewReno on one path.
//!
//! **Two decrease forms** (parameter `decrease`):
//! * `switch` (the default, and the form the shipped studies run): D-OLIA's switch, a path judged congested
//!   halves, a less-congested one uses the dynamic β.
//! * `dynamic`: every decrease uses the dynamic β, never the congested halving: D-LIA as the D-OLIA paper
//!   (Lubna, Mahmud, Kim, Cho, "D-OLIA: A Hybrid MPTCP Congestion Control Algorithm with Network Delay
//!   Estimation", Sensors 21(17):5764, 2021) describes it, whose contribution is to add the congested-state
//!   halving to it.

use crate::delay_state::{DelayConfig, DelayCoupled};
use crate::lia::{Lia, LiaConfig, max_window_param};
use crate::{CcError, CongestionController};

/// Parameter keys accepted by [`from_params`].
pub const PARAMS: &[&str] = &[
    "max_window",
    "probe_period",
    "beta_init",
    "beta_min",
    "beta_max",
    "factor",
    "cwnd_prev_init",
    "halving_updates_state",
    "halve_before_mid",
    "decrease",
];

/// The D-LIA controller.
pub type DLia = DelayCoupled<Lia>;

/// Configuration of [`DLia`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DLiaConfig {
    /// The increase's configuration.
    pub lia: LiaConfig,
    /// The estimator's and the decrease's configuration.
    pub delay: DelayConfig,
}

/// A D-LIA controller with no paths yet.
pub fn new(config: DLiaConfig) -> DLia {
    DelayCoupled::new("dlia", Lia::new(config.lia), config.delay)
}

/// Builds the controller from registry parameters (consumes the keys it knows; the registry rejects the rest):
/// `max_window`, the delay-state keys of [`crate::delay_state::DELAY_PARAMS`], and `decrease` = `switch`
/// (default) | `dynamic`.
pub fn from_params(params: &mut crate::params::Params) -> Result<Box<dyn CongestionController>, CcError> {
    let max_window = max_window_param(params)?;
    let mut delay = DelayConfig::from_params("dlia", params)?;
    delay.always_dynamic = params.choice("decrease", "switch", &["switch", "dynamic"])? == "dynamic";
    Ok(Box::new(new(DLiaConfig {
        lia: LiaConfig { max_window },
        delay,
    })))
}
