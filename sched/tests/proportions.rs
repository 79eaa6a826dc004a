//! Round-robin and weighted distribute packets in the configured proportions over 10 000 decisions (±1 %),
//! redundant returns every usable path, and every scheduler respects backup status.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use std::collections::BTreeMap;

use common::{backup, path, t0};
use mpquic_sched::{ConnView, Decision, PathId, PathView, registry};

/// Shares of 10 000 decisions on paths that can always send.
fn shares(spec: &str, paths: &[PathView]) -> BTreeMap<u32, f64> {
    let mut s = registry::build(spec).unwrap();
    let view = ConnView::new(paths, 1200);
    let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
    let now = t0();
    for _ in 0..10_000 {
        match s.select_send(&view, now) {
            Decision::Path(p) => *counts.entry(p.0).or_default() += 1,
            other => panic!("{spec}: unexpected {other:?}"),
        }
    }
    counts
        .into_iter()
        .map(|(k, v)| (k, f64::from(v) / 10_000.0))
        .collect()
}

fn assert_share(got: &BTreeMap<u32, f64>, path: u32, want: f64) {
    let g = got.get(&path).copied().unwrap_or(0.0);
    assert!(
        (g - want).abs() <= 0.01,
        "path {path}: share {g}, want {want} ± 0.01 ({got:?})"
    );
}

#[test]
fn roundrobin_gives_equal_shares() {
    let paths = [
        path(0, 1 << 30, 10, 1),
        path(1, 1 << 30, 50, 1),
        path(2, 1 << 30, 90, 1),
    ];
    for spec in [
        "roundrobin",
        "roundrobin:segments=3",
        "roundrobin:cwnd_limited=false",
    ] {
        let got = shares(spec, &paths);
        for id in 0..3 {
            assert_share(&got, id, 1.0 / 3.0);
        }
    }
}

#[test]
fn roundrobin_rotates_in_path_order_with_quota() {
    let paths = [path(0, 1 << 30, 10, 1), path(1, 1 << 30, 50, 1)];
    let mut s = registry::build("roundrobin:segments=2").unwrap();
    let view = ConnView::new(&paths, 1200);
    let seq: Vec<u32> = (0..6).map(|_| s.select_send(&view, t0()).paths()[0].0).collect();
    assert_eq!(seq, [0, 0, 1, 1, 0, 0]);
}

#[test]
fn strict_roundrobin_waits_for_the_path_whose_turn_it_is() {
    let mut full = path(1, 12_000, 50, 1);
    let free = path(0, 12_000, 10, 1);
    let mut s = registry::build("roundrobin:cwnd_limited=false").unwrap();
    let paths = [free.clone(), full.clone()];
    assert_eq!(
        s.select_send(&ConnView::new(&paths, 1200), t0()),
        Decision::Path(PathId(0))
    );
    full.bytes_in_flight = 12_000;
    let paths = [free.clone(), full];
    assert_eq!(s.select_send(&ConnView::new(&paths, 1200), t0()), Decision::Wait);
    // The ACK-clocked default skips the full path instead.
    let mut s = registry::build("roundrobin").unwrap();
    assert_eq!(
        s.select_send(&ConnView::new(&paths, 1200), t0()),
        Decision::Path(PathId(0))
    );
    assert_eq!(
        s.select_send(&ConnView::new(&paths, 1200), t0()),
        Decision::Path(PathId(0))
    );
}

#[test]
fn weighted_follows_the_configured_weights() {
    let paths = [path(1, 1 << 30, 10, 1), path(2, 1 << 30, 50, 1)];
    let got = shares("weighted:1=3,2=1", &paths);
    assert_share(&got, 1, 0.75);
    assert_share(&got, 2, 0.25);

    // A path without a weight gets the default weight (1, or `default`).
    let paths = [
        path(1, 1 << 30, 10, 1),
        path(2, 1 << 30, 50, 1),
        path(3, 1 << 30, 5, 1),
    ];
    let got = shares("weighted:1=3,2=1", &paths);
    assert_share(&got, 1, 0.6);
    assert_share(&got, 2, 0.2);
    assert_share(&got, 3, 0.2);
    let got = shares("weighted:1=3,2=1,default=0", &paths);
    assert_share(&got, 1, 0.75);
    assert_share(&got, 3, 0.0);
    let got = shares("weighted:1=7,2=2,3=1", &paths);
    assert_share(&got, 1, 0.7);
    assert_share(&got, 2, 0.2);
    assert_share(&got, 3, 0.1);
}

#[test]
fn weighted_skips_full_paths_and_waits_on_zero_weights() {
    let mut heavy = path(1, 12_000, 10, 1);
    heavy.bytes_in_flight = 12_000;
    let light = path(2, 12_000, 50, 1);
    let paths = [heavy, light];
    let mut s = registry::build("weighted:1=3,2=1").unwrap();
    assert_eq!(
        s.select_send(&ConnView::new(&paths, 1200), t0()),
        Decision::Path(PathId(2))
    );
    let mut s = registry::build("weighted:1=3,2=0").unwrap();
    assert_eq!(s.select_send(&ConnView::new(&paths, 1200), t0()), Decision::Wait);
}

#[test]
fn redundant_returns_every_usable_path() {
    let mut full = path(2, 12_000, 30, 1);
    full.bytes_in_flight = 12_000;
    let mut unvalidated = path(3, 12_000, 30, 1);
    unvalidated.validated = false;
    let paths = [
        path(0, 12_000, 10, 1),
        path(1, 12_000, 90, 1),
        full,
        unvalidated,
        backup(4, 12_000, 5),
    ];
    let mut s = registry::build("redundant").unwrap();
    assert_eq!(
        s.select_send(&ConnView::new(&paths, 1200), t0()),
        Decision::Paths(vec![PathId(0), PathId(1)])
    );
    // Retransmissions: one copy, minRTT.
    let mut view = ConnView::new(&paths, 1200);
    view.is_retransmission = true;
    assert_eq!(s.select_retrans(&view, t0()), Decision::Path(PathId(0)));
}

/// For every registered scheduler: a backup path carries nothing while an available path is alive, even
/// with a full window; it takes over when the available paths die.
#[test]
fn every_scheduler_uses_backup_only_for_failover() {
    let fast_backup = backup(0, 1 << 30, 1);
    let primary = path(1, 12_000, 40, 2);
    let mut primary_full = primary.clone();
    primary_full.bytes_in_flight = 12_000;
    let mut primary_dead = primary.clone();
    primary_dead.potentially_failed = true;
    for name in registry::names() {
        let mut s = registry::build(name).unwrap();
        let paths = [fast_backup.clone(), primary.clone()];
        assert_eq!(
            s.select_send(&ConnView::new(&paths, 1200), t0()),
            Decision::Path(PathId(1)),
            "{name}"
        );
        let paths = [fast_backup.clone(), primary_full.clone()];
        assert_eq!(
            s.select_send(&ConnView::new(&paths, 1200), t0()),
            Decision::Blocked,
            "{name}"
        );
        let paths = [fast_backup.clone(), primary_dead.clone()];
        assert_eq!(
            s.select_send(&ConnView::new(&paths, 1200), t0()),
            Decision::Path(PathId(0)),
            "{name}"
        );
        let paths = [fast_backup.clone(), {
            let mut p = primary.clone();
            p.abandoned = true;
            p
        }];
        assert_eq!(
            s.select_send(&ConnView::new(&paths, 1200), t0()),
            Decision::Path(PathId(0)),
            "{name}"
        );
    }
}
