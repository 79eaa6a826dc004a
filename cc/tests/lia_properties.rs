//! Property tests of the coupled loss-based controllers over random path sets and event sequences:
//! * LIA's increase is RFC 6356's formula (recomputed here independently, with the direct form of α, from the
//!   state before each acknowledgement) and never exceeds uncoupled NewReno's;
//! * with one path LIA and OLIA are NewReno bit for bit; D-LIA and D-OLIA grow like NewReno bit for bit and
//!   decrease by a β in [0.5, 0.9] (exactly 0.5 when congested), and with `beta_min = beta_max = 0.5` they
//!   are NewReno bit for bit.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::disallowed_methods,
    missing_docs
)]

use std::time::{Duration, Instant};

use mpquic_cc::delay_state::{DelayConfig, DelayCoupled, RenoCoupled};
use mpquic_cc::dlia::{self, DLiaConfig};
use mpquic_cc::dolia::{self, DOliaConfig};
use mpquic_cc::lia::{Lia, LiaConfig};
use mpquic_cc::olia::{Olia, OliaConfig};
use mpquic_cc::{
    AckEvent, AckedPacket, CongestionController, CongestionEvent, PathId, RenoWindow, RttSnapshot, SentEvent,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct PathSpec {
    mss: u16,
    rtt_ms: u64,
    /// Packets acknowledged in slow start at the beginning.
    ss_packets: usize,
    /// Whether a loss then moves the path into congestion avoidance.
    start_in_ca: bool,
}

#[derive(Clone, Debug)]
enum Ev {
    Ack {
        path: usize,
        packets: usize,
        app_limited: bool,
        /// Packets sent long ago (before any recovery period).
        old: bool,
        rtt_ms: u64,
    },
    Loss {
        path: usize,
        old: bool,
        persistent: bool,
    },
    Send {
        path: usize,
        app_limited: bool,
    },
}

fn path_spec() -> impl Strategy<Value = PathSpec> {
    (1200u16..=1500, 1u64..=400, 0usize..200, any::<bool>()).prop_map(
        |(mss, rtt_ms, ss_packets, start_in_ca)| PathSpec {
            mss,
            rtt_ms,
            ss_packets,
            start_in_ca,
        },
    )
}

fn event() -> impl Strategy<Value = Ev> {
    prop_oneof![
        6 => (0usize..8, 1usize..=4, prop::bool::weighted(0.15), prop::bool::weighted(0.1), 1u64..=500)
            .prop_map(|(path, packets, app_limited, old, rtt_ms)| Ev::Ack { path, packets, app_limited, old, rtt_ms }),
        1 => (0usize..8, prop::bool::weighted(0.2), prop::bool::weighted(0.05))
            .prop_map(|(path, old, persistent)| Ev::Loss { path, old, persistent }),
        2 => (0usize..8, prop::bool::weighted(0.3)).prop_map(|(path, app_limited)| Ev::Send { path, app_limited }),
    ]
}

/// What the test knows about each path from the events it fed.
#[derive(Clone, Debug)]
struct Model {
    mss: u64,
    in_flight: u64,
    app_limited: bool,
    srtt: Option<Duration>,
}

/// Feeds events to a controller and keeps the test's own model of each path.
struct Driver {
    t0: Instant,
    t: Instant,
    paths: Vec<Model>,
}

/// One step of the drive: the event as fed to the controller.
enum Fed {
    Ack {
        path: usize,
        packets: Vec<AckedPacket>,
        ev_rtt: Duration,
        app_limited: bool,
        prior: u64,
        after: u64,
        now: Instant,
    },
    Loss(CongestionEvent),
    Send(SentEvent),
}

impl Fed {
    fn ack_event(&self) -> Option<AckEvent<'_>> {
        match self {
            Fed::Ack {
                path,
                packets,
                ev_rtt,
                app_limited,
                prior,
                after,
                now,
            } => Some(AckEvent {
                path: PathId(*path as u32),
                now: *now,
                rtt: RttSnapshot::from_rtt(*ev_rtt),
                packets,
                prior_bytes_in_flight: *prior,
                bytes_in_flight: *after,
                app_limited: *app_limited,
                rate_sample: None,
            }),
            _ => None,
        }
    }
}

impl Driver {
    fn new() -> Self {
        let t0 = Instant::now();
        Driver {
            t0,
            t: t0,
            paths: Vec::new(),
        }
    }

    /// Turns a random event into the event to feed, updating the model.
    fn make(&mut self, ev: &Ev) -> Fed {
        self.t += Duration::from_millis(1);
        let n = self.paths.len();
        let fresh = self.t - Duration::from_micros(500);
        match *ev {
            Ev::Ack {
                path,
                packets,
                app_limited,
                old,
                rtt_ms,
            } => {
                let path = path % n;
                let m = &mut self.paths[path];
                let sent = if old { self.t0 } else { fresh };
                let bytes = m.mss * packets as u64;
                let prior = m.in_flight;
                m.in_flight = m.in_flight.saturating_sub(bytes);
                m.app_limited = app_limited;
                let rtt = Duration::from_millis(rtt_ms);
                m.srtt = Some(rtt);
                Fed::Ack {
                    path,
                    packets: vec![
                        AckedPacket {
                            bytes: m.mss,
                            time_sent: sent,
                        };
                        packets
                    ],
                    ev_rtt: rtt,
                    app_limited,
                    prior,
                    after: m.in_flight,
                    now: self.t,
                }
            }
            Ev::Loss {
                path,
                old,
                persistent,
            } => {
                let path = path % n;
                let m = &mut self.paths[path];
                m.in_flight = m.in_flight.saturating_sub(m.mss);
                let rtt = m.srtt.unwrap_or(Duration::from_millis(333));
                m.srtt = Some(rtt);
                Fed::Loss(CongestionEvent {
                    path: PathId(path as u32),
                    now: self.t,
                    sent_time: if old { self.t0 } else { fresh },
                    lost_bytes: m.mss,
                    bytes_in_flight: m.in_flight,
                    persistent_congestion: persistent,
                    ecn: false,
                    rtt: RttSnapshot::from_rtt(rtt),
                })
            }
            Ev::Send { path, app_limited } => {
                let path = path % n;
                let m = &mut self.paths[path];
                m.in_flight += m.mss;
                m.app_limited = app_limited;
                Fed::Send(SentEvent {
                    path: PathId(path as u32),
                    now: self.t,
                    bytes: m.mss,
                    bytes_in_flight: m.in_flight,
                    app_limited,
                })
            }
        }
    }

    /// Adds the paths and runs their set-up (slow start, then optionally a loss).
    fn setup(&mut self, cc: &mut dyn CongestionController, specs: &[PathSpec]) {
        for (i, s) in specs.iter().enumerate() {
            cc.on_path_added(PathId(i as u32), self.t, s.mss);
            self.paths.push(Model {
                mss: u64::from(s.mss),
                in_flight: 0,
                app_limited: false,
                srtt: None,
            });
        }
        for (i, s) in specs.iter().enumerate() {
            if s.ss_packets > 0 {
                let fed = self.make(&Ev::Ack {
                    path: i,
                    packets: s.ss_packets,
                    app_limited: false,
                    old: false,
                    rtt_ms: s.rtt_ms,
                });
                feed(cc, &fed);
            }
            if s.start_in_ca {
                let fed = self.make(&Ev::Loss {
                    path: i,
                    old: false,
                    persistent: false,
                });
                feed(cc, &fed);
            }
        }
    }
}

fn feed(cc: &mut dyn CongestionController, fed: &Fed) {
    match fed {
        Fed::Ack { .. } => cc.on_ack(&fed.ack_event().unwrap()),
        Fed::Loss(ev) => cc.on_congestion(ev),
        Fed::Send(ev) => cc.on_packet_sent(ev),
    }
}

/// α of RFC 6356 §3 in its direct form: `cwnd_total · max_i(w_i/rtt_i²) / (Σ_i w_i/rtt_i)²`.
fn alpha_direct(paths: &[(f64, f64)]) -> f64 {
    let total: f64 = paths.iter().map(|p| p.0).sum();
    let max = paths.iter().map(|(w, r)| w / (r * r)).fold(0.0_f64, f64::max);
    let sum: f64 = paths.iter().map(|(w, r)| w / r).sum();
    total * max / (sum * sum)
}

fn rel_close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn lia_increase_is_rfc6356_and_at_most_newreno(
        specs in prop::collection::vec(path_spec(), 1..=8),
        events in prop::collection::vec(event(), 0..80),
    ) {
        let mut cc = Lia::new(LiaConfig::default());
        let mut d = Driver::new();
        d.setup(&mut cc, &specs);
        let n = specs.len();
        for ev in &events {
            let fed = d.make(ev);
            let Fed::Ack { path: r, ev_rtt, .. } = &fed else {
                feed(&mut cc, &fed);
                continue;
            };
            let r = *r;
            let ack = fed.ack_event().unwrap();
            let pre: Vec<RenoWindow> = (0..n).map(|i| cc.reno_window(PathId(i as u32)).unwrap().clone()).collect();
            // The test's own model of the coupled sums (d.paths is already updated by this ack: its RTT,
            // app-limited flag and bytes in flight; the windows are the pre-ack ones).
            let eff = |i: usize| {
                let w = pre[i].cwnd();
                let m = &d.paths[i];
                if i != r && m.app_limited { w.min(pre[i].bytes_in_flight() as f64) } else { w }
            };
            let sampled: Vec<usize> = (0..n).filter(|&i| i == r || d.paths[i].srtt.is_some()).collect();
            let rtt = |i: usize| if i == r { ev_rtt.as_secs_f64() } else { d.paths[i].srtt.unwrap().as_secs_f64() };
            let alpha = alpha_direct(&sampled.iter().map(|&i| (eff(i), rtt(i))).collect::<Vec<_>>());
            let others: f64 = sampled.iter().filter(|&&i| i != r).map(|&i| eff(i)).sum();

            let mut expected = pre[r].clone();
            if n == 1 {
                expected.on_ack(&ack, RenoWindow::reno_increase);
            } else {
                expected.on_ack(&ack, |w, p| {
                    let b = p.bytes as f64;
                    let mss = w.max_datagram_size() as f64;
                    (alpha * b * mss / (others + w.cwnd())).min(b * mss / w.cwnd())
                });
            }
            let mut reno = pre[r].clone();
            reno.on_ack(&ack, RenoWindow::reno_increase);

            cc.on_ack(&ack);
            let got = cc.reno_window(PathId(r as u32)).unwrap().cwnd();
            if n == 1 {
                prop_assert_eq!(got.to_bits(), expected.cwnd().to_bits());
            } else {
                prop_assert!(rel_close(got, expected.cwnd()), "got {} expected {} (α {})", got, expected.cwnd(), alpha);
            }
            prop_assert!(got <= reno.cwnd(), "LIA {} above NewReno {}", got, reno.cwnd());
            // Other paths are untouched by an ack of path r.
            for (i, p) in pre.iter().enumerate() {
                if i != r {
                    prop_assert_eq!(cc.reno_window(PathId(i as u32)).unwrap().cwnd().to_bits(), p.cwnd().to_bits());
                }
            }
        }
    }

    #[test]
    fn one_path_lia_olia_and_halving_delay_variants_are_newreno(
        spec in path_spec(),
        events in prop::collection::vec(event(), 0..120),
    ) {
        let halving = DelayConfig { beta_min: 0.5, beta_max: 0.5, ..DelayConfig::default() };
        check_newreno(Lia::new(LiaConfig::default()), &spec, &events)?;
        check_newreno(Olia::new(OliaConfig::default()), &spec, &events)?;
        check_newreno(dlia::new(DLiaConfig { delay: halving, ..DLiaConfig::default() }), &spec, &events)?;
        check_newreno(dolia::new(DOliaConfig { delay: halving, ..DOliaConfig::default() }), &spec, &events)?;
    }

    #[test]
    fn one_path_delay_variants_grow_like_newreno_and_decrease_by_dynamic_beta(
        spec in path_spec(),
        events in prop::collection::vec(event(), 0..120),
    ) {
        check_delay_one_path(dlia::new(DLiaConfig::default()), &spec, &events)?;
        check_delay_one_path(dolia::new(DOliaConfig::default()), &spec, &events)?;
    }
}

/// Access to the window of a controller under test.
trait Reno: CongestionController {
    fn reno(&self, path: PathId) -> &RenoWindow;
}

impl Reno for Lia {
    fn reno(&self, path: PathId) -> &RenoWindow {
        self.reno_window(path).unwrap()
    }
}

impl Reno for Olia {
    fn reno(&self, path: PathId) -> &RenoWindow {
        self.reno_window(path).unwrap()
    }
}

impl<B: RenoCoupled> Reno for DelayCoupled<B> {
    fn reno(&self, path: PathId) -> &RenoWindow {
        self.reno_window(path).unwrap()
    }
}

/// With one path, `cc` and a NewReno [`RenoWindow`] (β = 0.5) have bit-identical windows after every event.
fn check_newreno(mut cc: impl Reno, spec: &PathSpec, events: &[Ev]) -> Result<(), TestCaseError> {
    let mut d = Driver::new();
    d.setup(&mut cc, std::slice::from_ref(spec));
    let p0 = PathId(0);
    let mut reno = cc.reno(p0).clone();
    for ev in events {
        let fed = d.make(ev);
        feed(&mut cc, &fed);
        match &fed {
            Fed::Ack { .. } => reno.on_ack(&fed.ack_event().unwrap(), RenoWindow::reno_increase),
            Fed::Loss(e) => {
                reno.on_congestion(e, 0.5);
            }
            Fed::Send(e) => reno.on_packet_sent(e),
        }
        let w = cc.reno(p0);
        prop_assert_eq!(
            w.cwnd().to_bits(),
            reno.cwnd().to_bits(),
            "{}: {} vs NewReno {}",
            cc.name(),
            w.cwnd(),
            reno.cwnd()
        );
        prop_assert_eq!(w.ssthresh().to_bits(), reno.ssthresh().to_bits());
        prop_assert_eq!(cc.window(p0), reno.window());
    }
    Ok(())
}

/// With one path, a delay variant's acks give NewReno's window from the same state, and each decrease
/// that starts a recovery period multiplies the window by the reported β ∈ [0.5, 0.9] (0.5 when congested).
fn check_delay_one_path(mut cc: impl Reno, spec: &PathSpec, events: &[Ev]) -> Result<(), TestCaseError> {
    let mut d = Driver::new();
    d.setup(&mut cc, std::slice::from_ref(spec));
    let p0 = PathId(0);
    for ev in events {
        let fed = d.make(ev);
        let pre = cc.reno(p0).clone();
        feed(&mut cc, &fed);
        let got = cc.reno(p0).cwnd();
        match &fed {
            Fed::Ack { .. } => {
                let mut reno = pre.clone();
                reno.on_ack(&fed.ack_event().unwrap(), RenoWindow::reno_increase);
                prop_assert_eq!(got.to_bits(), reno.cwnd().to_bits());
            }
            Fed::Loss(e) => {
                let m = cc.metrics(p0).unwrap();
                let beta = m.extra("beta").unwrap();
                if pre.will_reduce(e) {
                    prop_assert!((0.5..=0.9).contains(&beta), "β {}", beta);
                    if m.extra("congested") == Some(1.0) {
                        prop_assert_eq!(beta, 0.5);
                    }
                    let expected = if e.persistent_congestion {
                        pre.min_window()
                    } else {
                        (pre.cwnd() * beta).clamp(pre.min_window(), pre.max_window())
                    };
                    prop_assert_eq!(got.to_bits(), expected.to_bits());
                } else if !e.persistent_congestion {
                    prop_assert_eq!(got.to_bits(), pre.cwnd().to_bits());
                }
            }
            Fed::Send(_) => prop_assert_eq!(got.to_bits(), pre.cwnd().to_bits()),
        }
        prop_assert!(got.is_finite() && got >= pre.min_window());
    }
    Ok(())
}

/// Every window stays finite and within `[min window, max window]`, and every metric is finite.
fn check_bounds(mut cc: impl Reno, specs: &[PathSpec], events: &[Ev]) -> Result<(), TestCaseError> {
    let mut d = Driver::new();
    d.setup(&mut cc, specs);
    for ev in events {
        let fed = d.make(ev);
        feed(&mut cc, &fed);
        for i in 0..specs.len() {
            let p = PathId(i as u32);
            let w = cc.reno(p);
            prop_assert!(w.cwnd().is_finite() && w.cwnd() >= w.min_window() && w.cwnd() <= w.max_window());
            let m = cc.metrics(p).unwrap();
            for x in &m.extras {
                prop_assert!(x.value.is_finite(), "{}: {} = {}", cc.name(), x.name, x.value);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn coupled_windows_stay_bounded_and_metrics_finite(
        specs in prop::collection::vec(path_spec(), 1..=8),
        events in prop::collection::vec(event(), 0..80),
    ) {
        check_bounds(Lia::new(LiaConfig::default()), &specs, &events)?;
        check_bounds(Olia::new(OliaConfig::default()), &specs, &events)?;
        check_bounds(dlia::new(DLiaConfig::default()), &specs, &events)?;
        check_bounds(dolia::new(DOliaConfig::default()), &specs, &events)?;
    }
}
