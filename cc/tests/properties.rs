//! Properties every registered controller keeps, checked by proptest over random path sets (1–8 paths, random
//! MSS and RTTs) and random event sequences:
//! * no panic, windows within `[2·mds, max window]`, finite pacing rates, metrics agreeing with `window()` and `state()`
//!   (every algorithm of [`registry::list`], so the single-path controllers of the published studies — BIC,
//!   Westwood+, HighSpeed, Hybla, Illinois, H-TCP, Scalable, Veno, YeAH, TCP-LP — too);
//! * determinism: the same events give the same windows;
//! * with a single path, each coupled algorithm gives exactly the windows of its single-path counterpart.
//!
//! Set `PROPTEST_CASES` to run more cases.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::disallowed_methods,
    missing_docs
)]

use std::time::{Duration, Instant};

use mpquic_cc::window::DEFAULT_MAX_WINDOW;
use mpquic_cc::{
    AckEvent, AckedPacket, CongestionController, CongestionEvent, PathId, RateSample, RttSnapshot, SentEvent,
    registry,
};
use proptest::prelude::*;

/// One step of a random scenario. Times are offsets from the previous step.
#[derive(Clone, Debug)]
enum Step {
    Send {
        path: u32,
        packets: u8,
        app_limited: bool,
    },
    Ack {
        path: u32,
        packets: u8,
        rtt_ms: u32,
        app_limited: bool,
        rate_kbps: Option<u32>,
    },
    Loss {
        path: u32,
        packets: u8,
        persistent: bool,
        ecn: bool,
        sent_ago_ms: u16,
    },
    RemovePath {
        path: u32,
    },
    AddPath {
        path: u32,
        mss: u16,
    },
    Mtu {
        path: u32,
        mss: u16,
    },
}

fn step(max_path: u32) -> impl Strategy<Value = (u16, Step)> {
    let p = 0..=max_path;
    let s = prop_oneof![
        6 => (p.clone(), 1u8..40, any::<bool>()).prop_map(|(path, packets, app_limited)| Step::Send { path, packets, app_limited: app_limited && packets % 4 == 0 }),
        8 => (p.clone(), 1u8..40, prop_oneof![8 => 1u32..600, 1 => Just(0u32), 1 => Just(100_000u32)], any::<bool>(), proptest::option::of(1u32..2_000_000))
            .prop_map(|(path, packets, rtt_ms, a, rate_kbps)| Step::Ack { path, packets, rtt_ms, app_limited: a && rtt_ms % 5 == 0, rate_kbps }),
        2 => (p.clone(), 1u8..20, any::<bool>(), any::<bool>(), 0u16..2000)
            .prop_map(|(path, packets, persistent, ecn, sent_ago_ms)| Step::Loss { path, packets, persistent: persistent && packets % 5 == 0, ecn: ecn && packets % 3 == 0, sent_ago_ms }),
        1 => p.clone().prop_map(|path| Step::RemovePath { path }),
        1 => (p.clone(), 1200u16..=1500).prop_map(|(path, mss)| Step::AddPath { path, mss }),
        1 => (p, 1200u16..=9000).prop_map(|(path, mss)| Step::Mtu { path, mss }),
    ];
    (0u16..300, s)
}

fn scenario(max_paths: u32) -> impl Strategy<Value = (Vec<u16>, Vec<(u16, Step)>)> {
    (1..=max_paths).prop_flat_map(|n| {
        (
            proptest::collection::vec(1200u16..=1500, n as usize),
            proptest::collection::vec(step(n - 1), 1..300),
        )
    })
}

/// Feeds a scenario to `cc`, calling `check` after every step with the current max datagram sizes.
fn run(
    cc: &mut dyn CongestionController,
    mss: &[u16],
    steps: &[(u16, Step)],
    mut check: impl FnMut(&dyn CongestionController, &[(PathId, u16)]),
) {
    let t0 = Instant::now();
    let mut now = t0 + Duration::from_secs(1);
    let mut live: Vec<(PathId, u16)> = Vec::new();
    let mut in_flight = vec![0u64; mss.len()];
    let mut delivered = vec![0u64; mss.len()];
    for (i, m) in mss.iter().enumerate() {
        cc.on_path_added(PathId(i as u32), t0, *m);
        live.push((PathId(i as u32), *m));
    }
    check(cc, &live);
    for (dt, s) in steps {
        now += Duration::from_millis(u64::from(*dt));
        let size_of = |path: u32, live: &[(PathId, u16)]| {
            live.iter()
                .find(|(id, _)| id.0 == path)
                .map_or(1200, |(_, m)| u64::from(*m))
        };
        match s.clone() {
            Step::Send {
                path,
                packets,
                app_limited,
            } => {
                let size = size_of(path, &live);
                for _ in 0..packets {
                    in_flight[path as usize] += size;
                    cc.on_packet_sent(&SentEvent {
                        path: PathId(path),
                        now,
                        bytes: size,
                        bytes_in_flight: in_flight[path as usize],
                        app_limited,
                    });
                }
            }
            Step::Ack {
                path,
                packets,
                rtt_ms,
                app_limited,
                rate_kbps,
            } => {
                let size = size_of(path, &live);
                let rtt = Duration::from_millis(u64::from(rtt_ms));
                let sent = now.checked_sub(rtt).unwrap_or(t0).max(t0);
                let acked: Vec<AckedPacket> = (0..packets)
                    .map(|k| AckedPacket {
                        bytes: size,
                        time_sent: sent + Duration::from_micros(u64::from(k)),
                    })
                    .collect();
                let bytes = size * u64::from(packets);
                let prior = in_flight[path as usize];
                in_flight[path as usize] = prior.saturating_sub(bytes);
                delivered[path as usize] += bytes;
                let rate_sample = rate_kbps.map(|kbps| RateSample {
                    delivery_rate: u64::from(kbps) * 125,
                    delivered: bytes,
                    interval: rtt,
                    prior_delivered: delivered[path as usize] - bytes,
                    total_delivered: delivered[path as usize],
                    rtt,
                    is_app_limited: app_limited,
                    prior_in_flight: prior,
                    newly_acked: bytes,
                    newly_lost: 0,
                });
                cc.on_ack(&AckEvent {
                    path: PathId(path),
                    now,
                    rtt: RttSnapshot {
                        latest: rtt,
                        smoothed: rtt,
                        rttvar: rtt / 4,
                        min: rtt / 2,
                    },
                    packets: &acked,
                    prior_bytes_in_flight: prior,
                    bytes_in_flight: in_flight[path as usize],
                    app_limited,
                    rate_sample,
                });
            }
            Step::Loss {
                path,
                packets,
                persistent,
                ecn,
                sent_ago_ms,
            } => {
                let size = size_of(path, &live);
                let lost = if ecn { 0 } else { size * u64::from(packets) };
                in_flight[path as usize] = in_flight[path as usize].saturating_sub(lost);
                let rtt = Duration::from_millis(50);
                cc.on_congestion(&CongestionEvent {
                    path: PathId(path),
                    now,
                    sent_time: now
                        .checked_sub(Duration::from_millis(u64::from(sent_ago_ms)))
                        .unwrap_or(t0)
                        .max(t0),
                    lost_bytes: lost,
                    bytes_in_flight: in_flight[path as usize],
                    persistent_congestion: persistent,
                    ecn,
                    rtt: RttSnapshot::from_rtt(rtt),
                });
            }
            Step::RemovePath { path } => {
                cc.on_path_removed(PathId(path));
                live.retain(|(id, _)| id.0 != path);
                in_flight[path as usize] = 0;
            }
            Step::AddPath { path, mss } => {
                if !live.iter().any(|(id, _)| id.0 == path) {
                    cc.on_path_added(PathId(path), now, mss);
                    live.push((PathId(path), mss));
                    live.sort();
                    in_flight[path as usize] = 0;
                    delivered[path as usize] = 0;
                }
            }
            Step::Mtu { path, mss } => {
                cc.on_max_datagram_size(PathId(path), mss);
                if let Some(entry) = live.iter_mut().find(|(id, _)| id.0 == path) {
                    entry.1 = mss;
                }
            }
        }
        while cc.poll_path_advice().is_some() {}
        check(cc, &live);
    }
}

/// The number of proptest cases: `PROPTEST_CASES` if set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn windows(cc: &dyn CongestionController, live: &[(PathId, u16)]) -> Vec<(u64, Option<u64>)> {
    live.iter()
        .map(|(id, _)| (cc.window(*id), cc.pacing_rate(*id)))
        .collect()
}

fn check_invariants(name: &str, cc: &dyn CongestionController, live: &[(PathId, u16)]) {
    for (id, mss) in live {
        let w = cc.window(*id);
        assert!(
            w >= 2 * u64::from(*mss),
            "{name}: {id} window {w} below 2·mss {mss}"
        );
        assert!(
            w <= DEFAULT_MAX_WINDOW,
            "{name}: {id} window {w} above the maximum"
        );
        let m = cc.metrics(*id).expect("metrics of a live path");
        assert_eq!(m.cwnd, w, "{name}: metrics.cwnd disagrees with window()");
        assert_eq!(
            cc.state(*id),
            Some(m.state),
            "{name}: state() disagrees with metrics().state"
        );
        for extra in &m.extras {
            assert!(!extra.value.is_nan(), "{name}: metric {} is NaN", extra.name);
        }
        if let Some(rate) = cc.pacing_rate(*id) {
            assert!(rate < u64::MAX / 2, "{name}: absurd pacing rate {rate}");
        }
    }
    assert_eq!(cc.window(PathId(99)), 0);
    assert!(cc.metrics(PathId(99)).is_none());
    assert!(cc.state(PathId(99)).is_none());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    #[test]
    fn every_controller_keeps_windows_bounded_and_is_deterministic((mss, steps) in scenario(8)) {
        for info in registry::list() {
            let mut a = registry::build(info.name).unwrap();
            let mut trace_a = Vec::new();
            run(a.as_mut(), &mss, &steps, |cc, live| {
                check_invariants(info.name, cc, live);
                trace_a.push(windows(cc, live));
            });
            let mut b = registry::build(info.name).unwrap();
            let mut trace_b = Vec::new();
            run(b.as_mut(), &mss, &steps, |cc, live| trace_b.push(windows(cc, live)));
            prop_assert_eq!(trace_a, trace_b, "{} is not deterministic", info.name);
        }
    }
}

/// (coupled spec, single-path spec): with one path the two must give identical windows and pacing rates.
#[rustfmt::skip]
const SINGLE_PATH_EQUIVALENTS: &[(&str, &str)] = &[
    ("lia", "newreno"),
    ("olia", "newreno"),
    ("balia", "newreno"),
    // D-LIA and D-OLIA keep NewReno's increase; with their dynamic decrease pinned to 0.5 they are NewReno.
    ("dlia:beta_min=0.5,beta_max=0.5", "newreno"),
    ("dolia:beta_min=0.5,beta_max=0.5", "newreno"),
    // wVegas on one path: weight 1, alpha = total_alpha for both thresholds, average RTT, queue drain on.
    ("wvegas", "vegas:alpha=10,beta=10,rtt_stat=avg,drain=on"),
    ("c-mpbbr", "bbr"),
    // Coupled CUBIC on a large-BDP path is CUBIC, on a small-BDP path LIA (= NewReno on one path).
    ("ccubic:classify=cubic", "cubic"),
    ("ccubic:variant=a2,classify=cubic", "cubic"),
    ("ccubic:classify=lia", "newreno"),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    #[test]
    fn coupled_controllers_on_one_path_match_their_single_path_counterpart((mss, steps) in scenario(1)) {
        for (coupled, single) in SINGLE_PATH_EQUIVALENTS {
            let mut a = registry::build(coupled).unwrap();
            let mut b = registry::build(single).unwrap();
            let mut ta = Vec::new();
            let mut tb = Vec::new();
            run(a.as_mut(), &mss, &steps, |cc, live| ta.push(windows(cc, live)));
            run(b.as_mut(), &mss, &steps, |cc, live| tb.push(windows(cc, live)));
            prop_assert_eq!(ta, tb, "{} differs from {} on one path", coupled, single);
        }
    }
}

#[test]
fn registry_lists_every_required_controller_and_rejects_bad_specs() {
    let names: Vec<&str> = registry::list().iter().map(|a| a.name).collect();
    for required in [
        "newreno",
        "cubic",
        "bbr",
        "lia",
        "olia",
        "balia",
        "wvegas",
        "ccubic",
        "c-mpbbr",
        "dlia",
        "dolia",
        "vegas",
        "bic",
        "westwood",
        "highspeed",
        "hybla",
        "illinois",
        "htcp",
        "scalable",
        "veno",
        "yeah",
        "lp",
        "nv",
        "cdg",
    ] {
        assert!(names.contains(&required), "{required} missing from {names:?}");
    }
    for info in registry::list() {
        let cc = registry::build(info.name).unwrap();
        assert_eq!(cc.name(), info.name);
        for alias in info.aliases {
            assert_eq!(registry::build(alias).unwrap().name(), info.name);
        }
    }
    let err = registry::build("nosuch").unwrap_err().to_string();
    assert!(
        err.contains("unknown congestion controller `nosuch`") && err.contains("olia"),
        "{err}"
    );
    let err = registry::build("cubic:nosuch=1").unwrap_err().to_string();
    assert!(err.contains("no parameter `nosuch`"), "{err}");
    assert!(registry::build("lia:").is_ok());
}
