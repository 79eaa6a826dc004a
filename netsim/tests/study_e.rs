//! Study E (`netsim/scenarios/studies/e.study.toml`, docs/studies.md "E."): the claims we reproduce, on the
//! quick variant (symmetric 100/100 Mbit/s pair, 5 s; one run where the part is deterministic, the mean of
//! seeds 1–5 where its loss is random), with bounds set from the measured values
//! (in each test's comment; release and test builds give the same results).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use mpquic_netsim::engine::Engine;
use mpquic_netsim::study::{self, Study};

/// Goodput in Mbit/s of the tunnel flow per inner controller for the quick variant's `part`: the mean over
/// the part's seeds (one for the deterministic delay part, five where the loss is random).
fn goodput_by_cc(part: &str) -> BTreeMap<String, f64> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/studies");
    let s = Study::load(&study::find(&dir, "e").unwrap(), true).unwrap();
    let p = s.parts.iter().find(|p| p.spec.name == part).unwrap();
    let mut sums: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    for r in &p.runs {
        let cc = r.settings[0].value.clone();
        let out = Engine::run(r.scenario.clone()).unwrap();
        let e = sums.entry(cc).or_default();
        e.0 += out.result.flows[0].goodput_bps.unwrap() / 1e6;
        e.1 += 1;
    }
    sums.into_iter()
        .map(|(cc, (sum, n))| (cc, sum / f64::from(n)))
        .collect()
}

/// The study's delay claim, path 2 at 50 ms one way (quick variant, deterministic: one run), as far as we
/// reproduce it: HighSpeed is not worse than the other loss-based controllers. Measured: NewReno 161.87,
/// CUBIC 163.42, HighSpeed 166.95, BBR 9.45 Mbit/s of 200. The loss-based controllers are within 3 % of
/// each other (in the full variant, with LP and Illinois too, Illinois is 0.1 % ahead of HighSpeed: docs
/// say "not reproduced", since HighSpeed is never first there), so HighSpeed must be ≥ 0.99 × each of
/// these four and above 75 % of the pair (150 Mbit/s). (BBR's collapse is the contradiction docs/studies.md
/// explains; not asserted here.)
#[test]
fn highspeed_is_not_behind_the_loss_based_controllers_under_delay() {
    let g = goodput_by_cc("sym_delay");
    let hs = g["highspeed"];
    assert!(hs >= 150.0, "{g:?}");
    for (cc, v) in &g {
        assert!(hs >= 0.99 * v, "highspeed {hs:.2} < 0.99 × {cc} {v:.2}: {g:?}");
    }
}

/// The study's loss claims, path 2 losing 3 % (quick variant, mean of seeds 1–5): BBR is best, and every
/// controller collapses through the uncontrolled tunnel. Measured (mean ± 95 % half-width): NewReno
/// 1.78 ± 0.45, CUBIC 2.17 ± 0.54, HighSpeed 1.80 ± 0.44, LP 0.87 ± 0.20, BBR 6.34 ± 2.84, Illinois
/// 3.03 ± 1.00 Mbit/s of 200: each loss leaves a gap the reorder buffer holds for 300 ms (the window of 1600
/// packets is never reached at these rates), 15 × the 20 ms RTT, during which nothing reaches the inner
/// receiver; a loss-based controller also cuts its window at each loss, BBR does not. Bounds: BBR's mean
/// ≥ 1.5 × every other controller's (the closest, Illinois, is 2.09 × below it; the intervals of BBR and
/// Illinois overlap in this 5 s variant, so the test checks the ranking of the means, not a separation);
/// every controller below 10 Mbit/s (5 % of the pair).
#[test]
fn bbr_is_best_under_loss_and_the_uncontrolled_tunnel_collapses() {
    let g = goodput_by_cc("sym_loss");
    assert_eq!(g.len(), 6, "the study's six controllers: {g:?}");
    let bbr = g["bbr"];
    for (cc, v) in &g {
        assert!(*v < 10.0, "{cc} {v:.2} Mbit/s: no collapse: {g:?}");
        if cc != "bbr" {
            assert!(bbr >= 1.5 * v, "bbr {bbr:.2} < 1.5 × {cc} {v:.2}: {g:?}");
        }
    }
}

/// Beyond the study: with the outer connection under LIA and minRTT, 3 % loss on path 2 no longer
/// collapses the flow as badly, since LIA's window on path 2 shrinks and minRTT moves the packets to path 1.
/// Measured (quick, means of seeds 1–5): CUBIC 15.88 (2.17 uncontrolled), BBR 39.55 (6.34). Bound: ≥ 3 × the
/// uncontrolled mean for both.
#[test]
fn an_outer_coupled_controller_softens_the_collapse_under_loss() {
    let lia = goodput_by_cc("lia_minrtt_loss");
    let none = goodput_by_cc("sym_loss");
    for cc in ["cubic", "bbr"] {
        assert!(
            lia[cc] >= 3.0 * none[cc],
            "{cc}: LIA {:.2} vs none {:.2}",
            lia[cc],
            none[cc]
        );
    }
}
