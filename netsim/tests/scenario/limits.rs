//! The documented ranges of scenario fields (`docs/limits.md`): a value `mpquic-sim run` could not survive
//! (billions of samples, a thousand-hour delay, a sweep of a million runs) is rejected at validation, and
//! the error names the field, the value and the range.

use std::fmt::Write as _;

use mpquic_netsim::Scenario;

use super::{BASE, error_of};

/// `BASE` with `from` replaced by `to` (which must occur).
fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "bad test case: {from}");
    BASE.replacen(from, to, 1)
}

/// The error of `text` as `field: message`, checking the field.
fn rejected(text: &str, field: &str) -> String {
    let e = error_of(text);
    assert_eq!(e.field(), Some(field), "{e}");
    e.to_string()
}

#[test]
fn a_sample_interval_giving_too_many_samples_is_rejected() {
    // 10 s in steps of 1 ns: 10^10 samples per path, where 100,000 is the most; the floor is 10 s / 10^5.
    let e = rejected(
        &with("[scenario]\n", "[scenario]\nsample_interval = \"1ns\"\n"),
        "scenario.sample_interval",
    );
    assert!(
        e.contains(
            "1ns is out of range: it gives 10000000000 samples per path over 10s; expected 100us to 10s"
        ),
        "{e}"
    );
    // 10 µs: 10^6 samples per path (the issue's 1.9 GB run).
    rejected(
        &with("[scenario]\n", "[scenario]\nsample_interval = \"10us\"\n"),
        "scenario.sample_interval",
    );
    // Just below the floor: ⌈10 s / 99 µs⌉ = 101,011 instants.
    let e = rejected(
        &with("[scenario]\n", "[scenario]\nsample_interval = \"99us\"\n"),
        "scenario.sample_interval",
    );
    assert!(e.contains("101011 samples per path"), "{e}");
    // The floor itself: exactly 100,000 instants, × 3 paths = 300,000 samples.
    Scenario::from_toml_str(&with("[scenario]\n", "[scenario]\nsample_interval = \"100us\"\n")).unwrap();
}

#[test]
fn samples_over_every_path_are_bounded_too() {
    // 100,000 instants × 21 paths (BASE's 3 and nine more flows of 2) = 2.1 M samples, above 2 M.
    let mut text = with("[scenario]\n", "[scenario]\nsample_interval = \"100us\"\n");
    for k in 2..11 {
        write!(
            text,
            "\n[[flows]]\nname = \"g{k}\"\nfrom = \"c\"\nto = \"s\"\ncc = \"lia\"\n\
             paths = [{{ route = [\"la\", \"bn\"] }}, {{ route = [\"lb\", \"bn\"] }}]\n"
        )
        .unwrap();
    }
    let e = rejected(&text, "scenario.sample_interval");
    assert!(
        e.contains("100000 instants × 21 paths = 2100000 samples, above the limit of 2000000"),
        "{e}"
    );
    // ⌈10 s / ⌊2,000,000 / 21⌋⌉ = ⌈10^10 ns / 95,238⌉ = 105,001 ns.
    assert!(e.contains("expected at least 105001ns"), "{e}");
}

#[test]
fn duration_thresholds_and_bytes_have_ranges() {
    let e = rejected(
        &with(r#"duration = "10s""#, r#"duration = "86401s""#),
        "scenario.duration",
    );
    assert!(
        e.contains("86401s is out of range: expected > 0 and at most 86400s"),
        "{e}"
    );
    Scenario::from_toml_str(&with(
        "duration = \"10s\"\n",
        "duration = \"86400s\"\nsample_interval = \"1s\"\n",
    ))
    .unwrap();
    let e = rejected(
        &with("[scenario]\n", "[scenario]\nabandon_path_after_ptos = 1001\n"),
        "scenario.abandon_path_after_ptos",
    );
    assert!(
        e.contains("1001 is out of range: expected 0 (never) to 1000"),
        "{e}"
    );
    let e = rejected(
        &with(r#"cc = "lia""#, "cc = \"lia\"\nbytes = 1_000_000_000_001"),
        "flows[1].bytes",
    );
    assert!(
        e.contains("1000000000001 is out of range: expected 1 to 1000000000000"),
        "{e}"
    );
}

#[test]
fn link_settings_have_ranges() {
    let lb = "delay = \"5ms\"\n\n[links.bn]";
    for (to, field, expected) in [
        (
            "delay = \"3601s\"\n[links.bn]",
            "links.lb.delay",
            "3601s is invalid: expected a one-way delay from 0 to 1 hour",
        ),
        (
            "delay = \"5ms\"\nreverse = { rate_bps = 1_000_000_000_001 }\n[links.bn]",
            "links.lb.reverse.rate_bps",
            "from 1 to 10^12",
        ),
        (
            "delay = \"5ms\"\nqueue = { kind = \"packets\", packets = 1_000_001 }\n[links.bn]",
            "links.lb.queue.packets",
            "from 1 to 10^6",
        ),
        (
            "delay = \"5ms\"\nqueue = { kind = \"bytes\", bytes = 1_000_000_001 }\n[links.bn]",
            "links.lb.queue.bytes",
            "from 1 to 10^9",
        ),
        (
            "delay = \"5ms\"\nqueue = { kind = \"bdp\", multiple = 1001.0 }\n[links.bn]",
            "links.lb.queue.multiple",
            "at most 1000",
        ),
        (
            "delay = \"5ms\"\njitter = { distribution = { kind = \"uniform\", max = \"3601s\" } }\n[links.bn]",
            "links.lb.jitter.distribution.max",
            "3601s is invalid: expected a duration from 0 to 1 hour",
        ),
        (
            "delay = \"5ms\"\njitter = { distribution = { kind = \"normal\", mean = \"1ms\", stddev = \"3601s\" } }\n[links.bn]",
            "links.lb.jitter.distribution.stddev",
            "3601s is invalid",
        ),
    ] {
        let text = with(lb, to);
        let e = rejected(&text, field);
        assert!(e.contains(expected), "{e}");
    }
    // A `set` event is held to the same ranges.
    let text = format!(
        "{BASE}\n[[events]]\nat = \"1s\"\nlink = \"la\"\naction = \"set\"\nset = {{ delay = \"3601s\" }}\n"
    );
    let e = rejected(&text, "events[0].set.delay");
    assert!(e.contains("3601s is invalid"), "{e}");
}

#[test]
fn counts_of_hosts_interfaces_paths_and_sweep_runs_are_bounded() {
    // 255 hosts: the engine's default addresses 10.0.h.i have room for 254.
    let mut text = BASE.to_owned();
    for h in 0..253 {
        write!(
            text,
            "\n[nodes.h{h}]\nkind = \"host\"\ninterfaces = [{{ name = \"e\" }}]\n"
        )
        .unwrap();
    }
    let e = rejected(&text, "nodes");
    assert!(e.contains("255 hosts is out of range: expected 1 to 254"), "{e}");

    // 17 paths in one flow: the transport keeps at most 16 path states.
    let mut text = String::from(
        "[scenario]\nname = \"p\"\nduration = \"1s\"\n[nodes.r]\nkind = \"router\"\n[nodes.s]\nkind = \"host\"\n\
         interfaces = [{ name = \"e\" }]\n[links.bn]\nbetween = [\"r\", \"s\"]\nrate_bps = 1_000_000\ndelay = \"1ms\"\n",
    );
    let ifaces: Vec<String> = (0..17).map(|k| format!("{{ name = \"i{k}\" }}")).collect();
    write!(
        text,
        "[nodes.c]\nkind = \"host\"\ninterfaces = [{}]\n",
        ifaces.join(", ")
    )
    .unwrap();
    for k in 0..17 {
        write!(
            text,
            "[links.l{k}]\nbetween = [\"c.i{k}\", \"r\"]\nrate_bps = 1_000_000\ndelay = \"1ms\"\n"
        )
        .unwrap();
    }
    let paths: Vec<String> = (0..17)
        .map(|k| format!("{{ route = [\"l{k}\", \"bn\"] }}"))
        .collect();
    write!(
        text,
        "[[flows]]\nname = \"f\"\nfrom = \"c\"\nto = \"s\"\ncc = \"lia\"\npaths = [{}]\n",
        paths.join(", ")
    )
    .unwrap();
    let e = rejected(&text, "flows[0].paths");
    assert!(e.contains("17 paths is out of range: expected 1 to 16"), "{e}");
    // 16 are fine.
    let sixteen = text.replace(", { route = [\"l16\", \"bn\"] }", "");
    Scenario::from_toml_str(&sixteen).unwrap();

    // A sweep of 101 values × 100 seeds = 10,100 runs, above 10,000: rejected before expanding.
    let values: Vec<String> = (0..101).map(|v| format!("{}", f64::from(v) / 1000.0)).collect();
    let seeds: Vec<String> = (1..=100).map(|s| s.to_string()).collect();
    let text = format!(
        "{BASE}\n[sweep]\nparameter = \"links.bn.loss.p\"\nvalues = [{}]\nseeds = [{}]\n",
        values.join(", "),
        seeds.join(", ")
    );
    let e = rejected(&text, "sweep");
    assert!(
        e.contains("10100 runs") && e.contains("expected 1 to 10000"),
        "{e}"
    );
}
