//! Every registered scheduler answers without allocating: the connection asks `select_send` (or
//! `select_retrans`) for every data packet and reports `on_sent`, so an allocation there is paid for every
//! datagram. The one allocation the API itself requires is the path list of a [`Decision::Paths`]
//! (redundant scheduling): a scheduler may allocate that vector and nothing else.
//!
//! The check counts the heap allocations of the test's own thread (the `allocation-counter` crate's
//! counting allocator) while each scheduler places packets over three paths whose windows fill and empty,
//! with retransmissions, acknowledgements, losses and a backup path, after a warm-up long enough for any
//! internal history to reach its steady capacity.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::disallowed_methods,
    missing_docs
)]

mod common;

use std::time::Duration;

use mpquic_sched::{AckInfo, ConnView, Decision, LossInfo, PathId, PathStatus, PathView, SentInfo, registry};

/// Allocations (reallocations included) made by this thread while `f` runs, and what `f` returned.
fn allocations_in<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (info.count_total, out.unwrap())
}

/// Three paths: a short one, a long one and a backup; windows of 20, 60 and 10 packets.
fn paths() -> Vec<PathView> {
    let mut p = vec![
        common::path(0, 20 * 1200, 10, 2),
        common::path(1, 60 * 1200, 60, 10),
        common::backup(2, 10 * 1200, 30),
    ];
    for v in &mut p {
        v.min_rtt = v.srtt;
        v.delivery_rate = Some(v.cwnd * 1000 / v.srtt.as_millis().max(1) as u64);
    }
    p
}

/// Places `rounds` packets with `sched` over `paths` (windows fill as packets go out, every fourth round
/// acknowledges, every 37th loses a packet, every 11th is a retransmission); returns the number of
/// `Decision::Paths` answers.
fn drive(sched: &mut dyn mpquic_sched::Scheduler, paths: &mut [PathView], start: u64, rounds: u64) -> u64 {
    let t0 = common::t0();
    let sent_on = [PathId(0)];
    let mut lists = 0;
    for r in start..start + rounds {
        let now = t0 + Duration::from_micros(r * 250);
        let retransmission = r % 11 == 0;
        let conn = ConnView {
            paths,
            packet_size: 1200,
            is_retransmission: retransmission,
            sent_on: if retransmission { &sent_on } else { &[] },
            bytes_waiting: 1_000_000 - (r % 1000) * 1000,
            flow_credit: 4_000_000,
            retransmit_queue: if retransmission { 1200 } else { 0 },
            batch_packets: 1,
        };
        let d = if retransmission {
            sched.select_retrans(&conn, now)
        } else {
            sched.select_send(&conn, now)
        };
        if matches!(d, Decision::Paths(_)) {
            lists += 1;
        }
        for id in d.paths() {
            sched.on_sent(&SentInfo {
                path: *id,
                bytes: 1200,
                now,
                retransmission,
                // Now and then the sender runs out of flow-control credit (BLEST's λ).
                flow_blocked: r % 53 == 0,
            });
            if let Some(p) = paths.iter_mut().find(|p| p.id == *id) {
                p.bytes_in_flight += 1200;
            }
        }
        drop(d);
        if r % 4 == 0 {
            for p in paths.iter_mut() {
                let bytes = p.bytes_in_flight.min(4 * 1200);
                p.bytes_in_flight -= bytes;
                if bytes > 0 {
                    sched.on_ack(&AckInfo {
                        path: p.id,
                        bytes,
                        now,
                        rtt: Some(p.srtt),
                    });
                }
            }
        }
        if r % 37 == 0 {
            let p = &mut paths[(r as usize / 37) % 2];
            p.bytes_in_flight = p.bytes_in_flight.saturating_sub(1200);
            sched.on_loss(&LossInfo {
                path: p.id,
                bytes: 1200,
                now,
            });
        }
        // The backup path becomes available for a while, then backup again.
        paths[2].status = if (r / 500) % 2 == 1 {
            PathStatus::Available
        } else {
            PathStatus::Backup
        };
    }
    lists
}

#[test]
fn schedulers_allocate_nothing_but_the_path_lists_they_return() {
    let mut allocating = Vec::new();
    let mut lists_seen = 0;
    for name in registry::names() {
        let mut sched = registry::build(name).unwrap();
        let mut paths = paths();
        drive(sched.as_mut(), &mut paths, 0, 20_000);
        let (n, lists) = allocations_in(|| drive(sched.as_mut(), &mut paths, 20_000, 5_000));
        lists_seen += lists;
        if n > lists {
            allocating.push(format!(
                "{name} ({n} allocations, {lists} path lists, in 5,000 packets)"
            ));
        }
    }
    assert!(
        allocating.is_empty(),
        "schedulers allocating per packet: {allocating:?}"
    );
    // The redundant scheduler answered with path lists, so the allowance above was used.
    assert!(lists_seen > 0);
}

#[test]
fn the_counter_sees_an_allocation() {
    let (n, v) = allocations_in(|| (0..16).collect::<Vec<u64>>());
    assert!(n >= 1 && v.len() == 16);
}
