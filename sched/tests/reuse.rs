//! The promise of [`Scheduler::reuses_decisions`], checked on random views: for every scheduler that makes
//! it, once it names a path `p`, the views a connection may show it before an input event (more bytes in
//! flight on `p`, a smaller pacer budget or another window on `p`, another backlog, a retransmission or new
//! data, packets reported with `on_sent`) give the same answer as long as `p` can still send. And which
//! built-in schedulers make the promise: exactly the four whose documentation argues it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use std::time::Duration;

use mpquic_sched::{ConnView, Decision, PathId, PathStatus, PathView, SentInfo, registry, select};
use proptest::prelude::*;

/// Every registered name, then `variants`.
fn registry_and(variants: &[&str]) -> Vec<String> {
    let names = registry::names().into_iter().map(String::from);
    names.chain(variants.iter().map(|v| (*v).to_owned())).collect()
}

/// Every registered name and the parameter variants of the schedulers that reuse.
fn specs() -> Vec<String> {
    registry_and(&[
        "backup:2=0,strict=true",
        "backup:1=5,0=3",
        "llhd:beta=1",
        "llhd:beta=0",
    ])
}

#[test]
fn exactly_the_stateless_path_choosers_reuse_their_answers() {
    let reusing: Vec<&str> = registry::names()
        .into_iter()
        .filter(|n| registry::build(n).unwrap().reuses_decisions())
        .collect();
    assert_eq!(reusing, vec!["minrtt", "backup", "single", "llhd"]);
}

fn arb_path(id: u32) -> impl Strategy<Value = PathView> {
    (
        (
            prop::bool::weighted(0.9),
            prop::bool::weighted(0.3),
            prop::bool::weighted(0.1),
            prop::bool::weighted(0.1),
            0u64..40_000,
            0u64..40_000,
        ),
        (
            1u64..400,
            0u64..100,
            prop::option::of(0u64..10_000_000),
            prop::option::of(prop_oneof![Just(0u64), 0u64..3_000]),
            any::<bool>(),
        ),
    )
        .prop_map(
            move |((validated, is_backup, abandoned, pf, cwnd, bif), (srtt, rttvar, rate, pacing, ss))| {
                let mut p = PathView::new(id, cwnd, Duration::from_millis(srtt));
                p.validated = validated;
                p.status = if is_backup {
                    PathStatus::Backup
                } else {
                    PathStatus::Available
                };
                p.abandoned = abandoned;
                p.potentially_failed = pf;
                p.bytes_in_flight = bif;
                p.rttvar = Duration::from_millis(rttvar);
                p.min_rtt = Duration::from_millis(srtt / 2 + 1);
                p.delivery_rate = rate;
                p.pacing_budget = pacing;
                p.in_slow_start = ss;
                p
            },
        )
}

fn arb_paths() -> impl Strategy<Value = Vec<PathView>> {
    prop::collection::btree_set(0u32..5, 1..5)
        .prop_flat_map(|ids| ids.into_iter().map(arb_path).collect::<Vec<_>>())
}

/// What changes on the chosen path and in the connection between two questions without an input event.
#[derive(Debug, Clone)]
struct Send {
    /// Bytes added to the chosen path's bytes in flight (the packet just sent).
    sent: u64,
    /// The chosen path's pacer budget afterwards (`None`: not paced).
    pacing: Option<u64>,
    /// The chosen path's window moves by this much (a controller may adjust it as it sends).
    cwnd_delta: i64,
    bytes_waiting: u64,
    flow_credit: u64,
    retransmit_queue: u64,
    batch_packets: u64,
}

fn arb_send() -> impl Strategy<Value = Send> {
    (
        0u64..3_000,
        prop::option::of(0u64..5_000),
        -2_000i64..2_000,
        0u64..2_000_000,
        prop_oneof![Just(u64::MAX), 0u64..500_000],
        prop_oneof![Just(0u64), 0u64..50_000],
        1u64..64,
    )
        .prop_map(
            |(sent, pacing, cwnd_delta, bytes_waiting, flow_credit, retransmit_queue, batch_packets)| Send {
                sent,
                pacing,
                cwnd_delta,
                bytes_waiting,
                flow_credit,
                retransmit_queue,
                batch_packets,
            },
        )
}

fn view<'a>(paths: &'a [PathView], packet_size: u64, s: Option<&Send>) -> ConnView<'a> {
    let mut v = ConnView::new(paths, packet_size);
    if let Some(s) = s {
        v.bytes_waiting = s.bytes_waiting.max(packet_size);
        v.flow_credit = s.flow_credit;
        v.retransmit_queue = s.retransmit_queue;
        v.is_retransmission = s.retransmit_queue > 0;
        v.batch_packets = s.batch_packets;
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn a_reusing_scheduler_keeps_its_answer_while_the_path_can_send(
        paths in arb_paths(),
        packet_size in 1200u64..=1500,
        sends in prop::collection::vec(arb_send(), 1..30),
    ) {
        let now = common::t0();
        for spec in specs() {
            let mut s = registry::build(&spec).unwrap();
            if !s.reuses_decisions() {
                continue;
            }
            let mut paths = paths.clone();
            let Decision::Path(p) = select(s.as_mut(), &view(&paths, packet_size, None), now) else {
                continue;
            };
            for send in &sends {
                s.on_sent(&SentInfo {
                    path: p,
                    bytes: send.sent,
                    now,
                    retransmission: send.retransmit_queue > 0,
                    flow_blocked: send.flow_credit < packet_size,
                });
                let chosen = paths.iter_mut().find(|v| v.id == p).unwrap();
                chosen.bytes_in_flight = chosen.bytes_in_flight.saturating_add(send.sent);
                chosen.pacing_budget = send.pacing;
                chosen.cwnd = chosen.cwnd.saturating_add_signed(send.cwnd_delta);
                if !chosen.can_send(packet_size) {
                    // The connection asks again from here on.
                    break;
                }
                let again = select(s.as_mut(), &view(&paths, packet_size, Some(send)), now);
                prop_assert_eq!(&again, &Decision::Path(p), "{} changed its answer: {:?}", spec, paths);
            }
        }
    }

    #[test]
    fn with_no_path_able_to_send_a_reusing_scheduler_sends_nothing(
        paths in arb_paths(),
        packet_size in 1200u64..=1500,
    ) {
        let now = common::t0();
        // Close every path's window: nothing can send.
        let paths: Vec<PathView> = paths
            .into_iter()
            .map(|mut v| {
                v.bytes_in_flight = v.cwnd;
                v
            })
            .collect();
        prop_assume!(paths.iter().all(|v| !v.can_send(packet_size)));
        for spec in specs() {
            let mut s = registry::build(&spec).unwrap();
            if s.reuses_decisions() {
                let d = select(s.as_mut(), &view(&paths, packet_size, None), now);
                prop_assert!(!d.sends(), "{} sent: {:?}", spec, d);
            }
        }
    }
}

/// Specifications of schedulers whose state moves with every answer, with the parameters under which they
/// count reusable answers.
fn counting_specs() -> Vec<String> {
    registry_and(&[
        "roundrobin:segments=3",
        "roundrobin:cwnd_limited=false",
        "roundrobin:segments=5,cwnd_limited=false",
    ])
}

#[test]
fn exactly_roundrobin_counts_reusable_answers() {
    // Two open, identical paths and turns of 4 packets (batch_packets = 4): after its first answer a
    // scheduler that counts has 4 − 1 = 3 answers left.
    let now = common::t0();
    let paths = [common::path(0, 1 << 30, 10, 5), common::path(1, 1 << 30, 10, 5)];
    let mut view = ConnView::new(&paths, 1200);
    view.batch_packets = 4;
    let counting: Vec<&str> = registry::names()
        .into_iter()
        .filter(|n| {
            let mut s = registry::build(n).unwrap();
            select(s.as_mut(), &view, now);
            s.reusable_answers() > 0
        })
        .collect();
    assert_eq!(counting, vec!["roundrobin"]);
    let mut rr = registry::build("roundrobin").unwrap();
    select(rr.as_mut(), &view, now);
    assert_eq!(rr.reusable_answers(), 3);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The promise of [`mpquic_sched::Scheduler::reusable_answers`]: two copies of a scheduler, one asked
    /// for every packet, the other asked only when its count is spent and told of the packets in between
    /// with `on_answer_reused`, make the same decisions and end in the same state (their `Debug` forms
    /// agree), over the views a connection may show between two input events: the chosen path's bytes in
    /// flight, pacer and window move, the backlog moves, the batch stays.
    #[test]
    fn a_counted_answer_is_what_asking_would_answer(
        history in prop::collection::vec(arb_paths(), 0..6),
        paths in arb_paths(),
        packet_size in 1200u64..=1500,
        batch in 1u64..8,
        sends in prop::collection::vec(arb_send(), 1..40),
    ) {
        let now = common::t0();
        for spec in counting_specs() {
            let mut asked = registry::build(&spec).unwrap();
            if asked.reuses_decisions() {
                continue;
            }
            let mut reused = registry::build(&spec).unwrap();
            // Some earlier decisions, so that the quotas start anywhere.
            for h in &history {
                let mut v = view(h, packet_size, None);
                v.batch_packets = batch;
                let a = select(asked.as_mut(), &v, now);
                prop_assert_eq!(a, select(reused.as_mut(), &v, now), "{}", spec);
            }
            let mut paths = paths.clone();
            let mut v = view(&paths, packet_size, None);
            v.batch_packets = batch;
            let first = select(asked.as_mut(), &v, now);
            prop_assert_eq!(&first, &select(reused.as_mut(), &v, now), "{}", spec);
            let Decision::Path(mut p) = first else {
                continue;
            };
            let mut reuses = 0u32;
            for send in &sends {
                let chosen = paths.iter_mut().find(|v| v.id == p).unwrap();
                chosen.bytes_in_flight = chosen.bytes_in_flight.saturating_add(send.sent);
                chosen.pacing_budget = send.pacing;
                chosen.cwnd = chosen.cwnd.saturating_add_signed(send.cwnd_delta);
                if !chosen.can_send(packet_size) {
                    // The connection asks again from here on (and the views may show anything).
                    break;
                }
                let mut v = view(&paths, packet_size, Some(send));
                v.batch_packets = batch;
                let left = reused.reusable_answers();
                let a = select(asked.as_mut(), &v, now);
                if left > 0 {
                    reused.on_answer_reused(p);
                    reuses += 1;
                    prop_assert_eq!(&a, &Decision::Path(p), "{}: {} answers were left", spec, left);
                    // One fewer left; no limit stays no limit.
                    let want = if left == u64::MAX { left } else { left - 1 };
                    prop_assert_eq!(reused.reusable_answers(), want, "{}", spec);
                } else {
                    prop_assert_eq!(&a, &select(reused.as_mut(), &v, now), "{}", spec);
                }
                prop_assert_eq!(format!("{asked:?}"), format!("{reused:?}"), "{} after {} reuses", spec, reuses);
                match a {
                    Decision::Path(q) => p = q,
                    _ => break,
                }
            }
        }
    }
}

#[test]
fn min_rtt_keeps_the_fast_path_until_its_window_is_full() {
    // Hand-worked case: path 0 at 10 ms with 3 600 B of window, path 1 at 40 ms. minRTT names path 0 while
    // 1 200 more bytes fit (0, 1 200, 2 400 in flight), then path 1.
    let now = common::t0();
    let mut s = registry::build("minrtt").unwrap();
    let mut paths = [common::path(0, 3_600, 10, 5), common::path(1, 40_000, 40, 20)];
    for in_flight in [0, 1_200, 2_400] {
        paths[0].bytes_in_flight = in_flight;
        assert_eq!(
            s.select_send(&ConnView::new(&paths, 1200), now),
            Decision::Path(PathId(0))
        );
    }
    paths[0].bytes_in_flight = 3_600;
    assert_eq!(
        s.select_send(&ConnView::new(&paths, 1200), now),
        Decision::Path(PathId(1))
    );
}
