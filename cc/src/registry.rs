//! Builds any controller from a specification such as `"cubic"`, `"olia"` or `"ccubic:variant=a2"`, and lists
//! them all, so that a perf flag, a simulator scenario and a test name controllers the same way.
//!
//! A specification is `name` or `name:key=value,key=value` (see [`crate::params::Spec`]). Unknown names and
//! parameters are errors that list what is valid; values are range-checked.
//!
//! Applications add their own controllers with [`register`] (the crate documentation has an example); [`list`]
//! has the built-in ones, [`registered`] the added ones, and [`find`] and [`build`] know both.

use crate::params::{Params, Spec};
use crate::{CcError, CongestionController};

mod custom;
pub use custom::{MAX_NAME_LEN, MAX_REGISTERED, RegisterError, register, registered};

/// Whether an algorithm couples its paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coupling {
    /// A single-path algorithm run independently on each path ([`crate::Uncoupled`]).
    Uncoupled,
    /// A multipath algorithm whose paths share state.
    Coupled,
}

/// One registered algorithm.
#[derive(Clone, Copy, Debug)]
pub struct AlgorithmInfo {
    /// Registry name.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// One-line description.
    pub description: &'static str,
    /// Coupled or not.
    pub coupling: Coupling,
    /// Accepted parameter keys.
    pub params: &'static [&'static str],
    build: fn(&mut Params) -> Result<Box<dyn CongestionController>, CcError>,
}

impl AlgorithmInfo {
    /// Builds the algorithm with the given parameters; unknown keys are rejected.
    pub fn build(&self, pairs: Vec<(String, String)>) -> Result<Box<dyn CongestionController>, CcError> {
        let mut params = Params::new(self.name, pairs);
        let controller = (self.build)(&mut params)?;
        params.finish(self.params)?;
        Ok(controller)
    }
}

macro_rules! entry {
    ($module:ident, $name:literal, [$($alias:literal),*], $coupling:ident, $description:literal) => {
        AlgorithmInfo {
            name: $name,
            aliases: &[$($alias),*],
            description: $description,
            coupling: Coupling::$coupling,
            params: crate::$module::PARAMS,
            build: crate::$module::from_params,
        }
    };
}

static ALGORITHMS: &[AlgorithmInfo] = &[
    entry!(
        newreno,
        "newreno",
        ["reno"],
        Uncoupled,
        "NewReno as specified for QUIC (RFC 9002 §7)"
    ),
    entry!(
        cubic,
        "cubic",
        [],
        Uncoupled,
        "CUBIC (RFC 9438) with the QUIC adaptations (RFC 9002 recovery, byte windows)"
    ),
    entry!(
        vegas,
        "vegas",
        [],
        Uncoupled,
        "TCP Vegas: delay-based, keeps alpha..beta packets queued"
    ),
    entry!(
        bbr,
        "bbr",
        ["bbr1", "bbrv1"],
        Uncoupled,
        "BBRv1 (draft-cardwell-iccrg-bbr-congestion-control-00)"
    ),
    entry!(
        bic,
        "bic",
        ["bic-tcp"],
        Uncoupled,
        "BIC-TCP (Xu, Harfoush, Rhee, INFOCOM 2004): binary-search increase, max probing"
    ),
    entry!(
        westwood,
        "westwood",
        ["westwood+", "westwoodplus"],
        Uncoupled,
        "Westwood+ (Mascolo et al. 2001; Grieco, Mascolo 2004): ssthresh = bandwidth estimate x RTTmin"
    ),
    entry!(
        highspeed,
        "highspeed",
        ["hstcp"],
        Uncoupled,
        "HighSpeed TCP (RFC 3649): a(w), b(w) from the HighSpeed response function"
    ),
    entry!(
        hybla,
        "hybla",
        [],
        Uncoupled,
        "TCP Hybla (Caini, Firrincieli 2004): increases scaled by rho = RTT/25 ms"
    ),
    entry!(
        illinois,
        "illinois",
        [],
        Uncoupled,
        "TCP-Illinois (Liu, Basar, Srikant 2006): alpha, beta from the average queueing delay"
    ),
    entry!(
        htcp,
        "htcp",
        ["h-tcp"],
        Uncoupled,
        "H-TCP (Leith, Shorten 2004): alpha from the time since the last loss, beta = RTTmin/RTTmax"
    ),
    entry!(
        scalable,
        "scalable",
        ["stcp"],
        Uncoupled,
        "Scalable TCP (Kelly, CCR 2003): +0.01 segment per ACK, x0.875 on loss"
    ),
    entry!(
        veno,
        "veno",
        [],
        Uncoupled,
        "TCP Veno (Fu, Liew, JSAC 2003): Vegas backlog tells random from congestive losses"
    ),
    entry!(
        yeah,
        "yeah",
        ["yeah-tcp"],
        Uncoupled,
        "YeAH-TCP (Baiocchi, Castellani, Vacirca 2007): Scalable/Reno modes from a queue estimate"
    ),
    entry!(
        lp,
        "lp",
        ["tcp-lp"],
        Uncoupled,
        "TCP-LP (Kuzmanovic, Knightly, INFOCOM 2003): low priority, yields on delay (RTT as OWD)"
    ),
    entry!(
        nv,
        "nv",
        ["tcp-nv"],
        Uncoupled,
        "TCP-NV (Brakmo 2010; Linux tcp_nv.c): rate-based queue detection, proportional decrease"
    ),
    entry!(
        cdg,
        "cdg",
        ["tcp-cdg"],
        Uncoupled,
        "CDG (Hayes, Armitage, IFIP Networking 2011; Linux tcp_cdg.c): probabilistic delay-gradient backoff"
    ),
    entry!(
        lia,
        "lia",
        ["coupled"],
        Coupled,
        "Linked Increases (RFC 6356), the MPTCP default"
    ),
    entry!(
        olia,
        "olia",
        [],
        Coupled,
        "Opportunistic LIA (Khalili et al., ToN 2013): Pareto-optimal"
    ),
    entry!(
        balia,
        "balia",
        [],
        Coupled,
        "Balanced LIA (Peng et al., ToN 2016)"
    ),
    entry!(
        wvegas,
        "wvegas",
        [],
        Coupled,
        "Weighted Vegas (Cao et al., ICNP 2012): delay-based coupling"
    ),
    entry!(
        ccubic,
        "ccubic",
        ["coupled-cubic"],
        Coupled,
        "Coupled CUBIC (Lee et al. 2023): CUBIC on large-BDP paths, LIA elsewhere"
    ),
    entry!(
        cmpbbr,
        "c-mpbbr",
        ["cmpbbr"],
        Coupled,
        "C-MPBBR (Mahmud et al. 2020): BBR with shared-bottleneck rate division"
    ),
    entry!(
        dlia,
        "dlia",
        ["d-lia"],
        Coupled,
        "D-LIA: LIA increase with a delay-aware dynamic decrease"
    ),
    entry!(
        dolia,
        "dolia",
        ["d-olia"],
        Coupled,
        "D-OLIA (Lubna et al. 2021): OLIA increase with a delay-aware decrease"
    ),
];

/// Every registered algorithm, in a fixed order.
pub fn list() -> &'static [AlgorithmInfo] {
    ALGORITHMS
}

/// The algorithm registered under `name` or one of its aliases (case-insensitive), built in or added with
/// [`register`].
pub fn find(name: &str) -> Option<&'static AlgorithmInfo> {
    let name = name.trim().to_ascii_lowercase();
    ALGORITHMS
        .iter()
        .find(|a| a.name == name || a.aliases.contains(&name.as_str()))
        .or_else(|| custom::find(&name))
}

/// Builds a controller from a specification (`"olia"`, `"cubic:beta=0.8"`).
pub fn build(spec: &str) -> Result<Box<dyn CongestionController>, CcError> {
    let spec = Spec::parse(spec, "algorithm")?;
    let info = find(&spec.name).ok_or_else(|| CcError::UnknownAlgorithm {
        name: spec.name.clone(),
        valid: ALGORITHMS
            .iter()
            .chain(registered())
            .map(|a| a.name)
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    info.build(spec.params)
}
