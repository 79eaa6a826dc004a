//! Property tests over every registered scheduler, by name, on random views and random event sequences:
//! no unusable path is ever chosen, backup paths are used only when no available path can send, `Blocked`
//! and `Wait` mean what the crate documentation says, and decisions are deterministic and independent of the
//! order in which paths are listed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use std::time::Duration;

use mpquic_sched::{
    AckInfo, ConnView, Decision, LossInfo, PathEvent, PathId, PathStatus, PathView, SentInfo, registry,
    select, validate,
};
use proptest::prelude::*;

/// Every registered name plus parameter variants that change behaviour.
fn specs() -> Vec<String> {
    let mut v: Vec<String> = registry::names().into_iter().map(String::from).collect();
    v.extend(
        [
            "roundrobin:segments=3",
            "roundrobin:cwnd_limited=false",
            "weighted:1=3,2=1",
            "weighted:0=0,default=2",
            "backup:2=0,strict=true",
            "blest:lambda=1.0,adapt=false",
            "ecf:beta=0",
            "llhd:beta=1",
            "daps:step_ms=1,max_ticks=50",
        ]
        .map(String::from),
    );
    v
}

fn arb_path(id: u32) -> impl Strategy<Value = PathView> {
    (
        (
            prop::bool::weighted(0.85),
            prop::bool::weighted(0.3),
            prop::bool::weighted(0.1),
            prop::bool::weighted(0.1),
            0u64..40_000,
            0u64..40_000,
            any::<bool>(),
        ),
        (
            1u64..400,
            0u64..100,
            prop::option::of(0u64..10_000_000),
            prop::option::of(0u64..3_000),
            1200u64..1500,
            prop_oneof![Just(0u64), 0u64..20_000],
        ),
    )
        .prop_map(
            move |(
                (validated, is_backup, abandoned, pf, cwnd, bif, ss),
                (srtt, rttvar, rate, pacing, mss, queued),
            )| {
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
                p.in_slow_start = ss;
                p.rttvar = Duration::from_millis(rttvar);
                p.min_rtt = Duration::from_millis(srtt / 2 + 1);
                p.delivery_rate = rate;
                p.pacing_budget = pacing;
                p.mss = mss;
                p.queued_bytes = queued;
                p
            },
        )
}

fn arb_paths() -> impl Strategy<Value = Vec<PathView>> {
    prop::collection::btree_set(0u32..6, 0..5)
        .prop_flat_map(|ids| ids.into_iter().map(arb_path).collect::<Vec<_>>())
}

/// One step: a view, then events fed after the decision.
#[derive(Debug, Clone)]
struct Step {
    paths: Vec<PathView>,
    packet_size: u64,
    retransmission: bool,
    sent_on: Vec<PathId>,
    bytes_waiting: u64,
    flow_credit: u64,
    dt_ms: u64,
    event: (u8, u32, u64),
}

fn arb_step() -> impl Strategy<Value = Step> {
    (
        arb_paths(),
        1u64..=1500,
        prop::bool::weighted(0.2),
        prop::collection::vec(0u32..6, 0..3),
        0u64..2_000_000,
        prop_oneof![Just(u64::MAX), 0u64..500_000],
        0u64..200,
        (0u8..10, 0u32..6, 0u64..20_000),
    )
        .prop_map(
            |(paths, packet_size, retransmission, sent_on, bytes_waiting, flow_credit, dt_ms, event)| Step {
                paths,
                packet_size,
                retransmission,
                sent_on: sent_on.into_iter().map(PathId).collect(),
                bytes_waiting,
                flow_credit,
                dt_ms,
                event,
            },
        )
}

/// Runs `steps` through a fresh scheduler built from `spec`, checking the per-decision invariants; returns
/// the decisions.
fn run(spec: &str, steps: &[Step], reverse_order: bool) -> Result<Vec<Decision>, TestCaseError> {
    let mut s = registry::build(spec).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut now = common::t0();
    let mut out = Vec::new();
    for st in steps {
        now += Duration::from_millis(st.dt_ms);
        let mut paths = st.paths.clone();
        if reverse_order {
            paths.reverse();
        }
        let conn = ConnView {
            paths: &paths,
            packet_size: st.packet_size,
            is_retransmission: st.retransmission,
            sent_on: &st.sent_on,
            bytes_waiting: st.bytes_waiting,
            flow_credit: st.flow_credit,
            retransmit_queue: 0,
            batch_packets: 1,
        };
        let d = select(s.as_mut(), &conn, now);
        // Never an unvalidated, abandoned, failed or full path; lists non-empty, unique, sorted.
        prop_assert_eq!(validate(&d, &conn), Ok(()), "{} chose {:?}", spec, d);
        if let Decision::Paths(ids) = &d {
            prop_assert!(
                ids.len() >= 2 && ids.windows(2).all(|w| w[0] < w[1]),
                "{spec}: {ids:?}"
            );
        }
        // Backup paths only when no available path can send.
        let available_can_send = paths
            .iter()
            .any(|p| p.status == PathStatus::Available && p.can_send(st.packet_size));
        for id in d.paths() {
            let p = conn
                .path(*id)
                .ok_or_else(|| TestCaseError::fail("unknown path"))?;
            if p.status == PathStatus::Backup {
                prop_assert!(
                    !available_can_send,
                    "{spec} used backup {id} while an available path could send"
                );
            }
        }
        // Blocked: no eligible path could send. Wait: one could (the idle is deliberate).
        let eligible_can_send = conn.eligible().is_some_and(|e| e.sendable().next().is_some());
        match d {
            Decision::Blocked => prop_assert!(!eligible_can_send, "{spec}: Blocked although a path can send"),
            Decision::Wait => prop_assert!(eligible_can_send, "{spec}: Wait although nothing can send"),
            _ => {}
        }
        if spec == "redundant" && !st.retransmission {
            // Redundant: every usable path, exactly.
            let mut want: Vec<PathId> = conn
                .eligible()
                .map(|e| e.sendable().map(|p| p.id).collect())
                .unwrap_or_default();
            want.sort();
            prop_assert_eq!(d.paths().to_vec(), want);
        }
        for id in d.paths() {
            s.on_sent(&SentInfo {
                path: *id,
                bytes: st.packet_size,
                now,
                retransmission: st.retransmission,
                flow_blocked: st.flow_credit < st.packet_size,
            });
        }
        let (kind, pid, bytes) = st.event;
        let path = PathId(pid);
        match kind {
            0..=3 => s.on_ack(&AckInfo {
                path,
                bytes,
                now,
                rtt: Some(Duration::from_millis(bytes % 300 + 1)),
            }),
            4 => s.on_loss(&LossInfo { path, bytes, now }),
            5 => s.on_path_event(&PathEvent::Added(path)),
            6 => s.on_path_event(&PathEvent::Validated(path)),
            7 => s.on_path_event(&PathEvent::StatusChanged(path, PathStatus::Backup)),
            8 => s.on_path_event(&PathEvent::Abandoned(path)),
            _ => s.on_path_event(&PathEvent::Removed(path)),
        }
        out.push(d);
    }
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_scheduler_keeps_the_invariants(steps in prop::collection::vec(arb_step(), 1..25)) {
        for spec in specs() {
            let first = run(&spec, &steps, false)?;
            // Deterministic: same inputs, same decisions.
            let again = run(&spec, &steps, false)?;
            prop_assert_eq!(&first, &again, "{} is not deterministic", spec);
            // Ties are broken by path ID, not by the order of the view.
            let reversed = run(&spec, &steps, true)?;
            prop_assert_eq!(&first, &reversed, "{} depends on path order", spec);
        }
    }
}
