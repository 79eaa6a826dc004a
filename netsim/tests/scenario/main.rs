//! Scenario files: every shipped file validates and expands; errors name the bad field; sweeps set values by
//! path.

// Test helpers outside `#[test]` functions may panic on broken expectations.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::PathBuf;

use mpquic_netsim::Scenario;
use mpquic_netsim::link::LossModel;
use mpquic_netsim::scenario::sweep::{expand, set_path};
use mpquic_netsim::scenario::{Direction, ScenarioError};

fn scenario_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

#[test]
fn every_shipped_scenario_parses_validates_and_expands() {
    let mut seen = Vec::new();
    let files = std::fs::read_dir(scenario_dir())
        .unwrap()
        .chain(std::fs::read_dir(scenario_dir().join("studies")).unwrap());
    for entry in files {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") || name.ends_with(".study.toml") {
            continue;
        }
        let dir = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let scenario = Scenario::from_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let topology = scenario.topology().unwrap();
        assert!(!scenario.summary(&topology).is_empty());
        let text = std::fs::read_to_string(&path).unwrap();
        let runs = expand(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!runs.is_empty());
        for run in &runs {
            assert!(run.scenario.sweep.is_none());
            assert_eq!(run.scenario.scenario.seed, run.seed);
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        seen.push(if dir == "studies" {
            format!("studies/{stem}")
        } else {
            stem
        });
    }
    seen.sort();
    for required in [
        "studies/a_coupled_cubic",
        "studies/b1_two_subflows",
        "studies/b2_shared_competitor",
        "studies/b3_two_bottlenecks",
        "studies/b4_changing_competition",
        "studies/c1_homogeneous",
        "studies/c2_heterogeneous",
        "studies/c3_mixed",
        "competition",
        "competition_quick",
        "studies/d1_uncoupled_fairness",
        "studies/d4_wifi_5g",
        "studies/c_sweep",
        "studies/d2_loss_sweep",
        "studies/d3_competition",
        "studies/d5_low_priority",
        "fairness",
        "fairness_quick",
        "loss_sweep",
        "loss_sweep_quick",
        "two_paths",
    ] {
        assert!(
            seen.iter().any(|s| s == required),
            "missing scenarios/{required}.toml"
        );
    }
}

#[test]
fn loss_sweep_expands_loss_by_controller_by_seed() {
    let text = std::fs::read_to_string(scenario_dir().join("loss_sweep.toml")).unwrap();
    let runs = expand(&text).unwrap();
    assert_eq!(runs.len(), 9 * 3 * 3);
    // First axis slowest, seeds fastest.
    let r = &runs[4];
    assert_eq!(r.index, 4);
    assert_eq!(r.seed, 2);
    assert_eq!(r.settings[0].parameter, "links.bn.loss.p");
    assert_eq!(r.settings[0].value, "0.0");
    assert_eq!(r.settings[1].value, "bbr");
    assert_eq!(r.scenario.flows[0].cc, "bbr");
    let last = runs.last().unwrap();
    assert_eq!(last.scenario.links["bn"].loss, LossModel::Bernoulli { p: 0.2 });
    // The reverse direction keeps its own (lossless) override.
    assert_eq!(last.scenario.links["bn"].reverse().loss, LossModel::None);
}

#[test]
fn fairness_sweep_sets_both_flows_together() {
    let text = std::fs::read_to_string(scenario_dir().join("fairness_quick.toml")).unwrap();
    let runs = expand(&text).unwrap();
    assert_eq!(runs.len(), 3);
    for run in &runs {
        assert_eq!(run.scenario.flows[0].cc, run.scenario.flows[1].cc);
        assert_eq!(run.settings[0].parameter, "flows.a.cc,flows.b.cc");
    }
}

#[test]
fn routes_resolve_to_link_directions() {
    let s = Scenario::from_file(scenario_dir().join("studies/b3_two_bottlenecks.toml")).unwrap();
    let t = s.topology().unwrap();
    let mp = t.flow("mp").unwrap();
    assert_eq!(mp.paths.len(), 4);
    let p0 = &mp.paths[0];
    assert_eq!(p0.local.to_string(), "client.sf1");
    assert_eq!(p0.remote.to_string(), "server.e1");
    assert_eq!(p0.capacity_bps, 10_000_000);
    let dirs: Vec<(&str, Direction)> = p0
        .forward
        .iter()
        .map(|h| (h.link.as_str(), h.direction))
        .collect();
    assert_eq!(
        dirs,
        [
            ("acc1", Direction::Forward),
            ("bn1", Direction::Forward),
            ("out1", Direction::Forward)
        ]
    );
    let back: Vec<(&str, Direction)> = p0
        .reverse
        .iter()
        .map(|h| (h.link.as_str(), h.direction))
        .collect();
    assert_eq!(
        back,
        [
            ("out1", Direction::Reverse),
            ("bn1", Direction::Reverse),
            ("acc1", Direction::Reverse)
        ]
    );
}

const BASE: &str = r#"
[scenario]
name = "t"
duration = "10s"

[nodes.c]
kind = "host"
interfaces = [{ name = "a" }, { name = "b" }]

[nodes.r]
kind = "router"

[nodes.s]
kind = "host"
interfaces = [{ name = "eth0" }]

[links.la]
between = ["c.a", "r"]
rate_bps = 10_000_000
delay = "5ms"

[links.lb]
between = ["c.b", "r"]
rate_bps = 10_000_000
delay = "5ms"

[links.bn]
between = ["r", "s"]
rate_bps = 10_000_000
delay = "5ms"

[[flows]]
name = "f0"
from = "c"
to = "s"
cc = "cubic"
paths = [{ route = ["la", "bn"] }]

[[flows]]
name = "f1"
from = "c"
to = "s"
cc = "lia"
paths = [{ route = ["la", "bn"] }, { route = ["lb", "bn"] }]
"#;

fn error_of(text: &str) -> ScenarioError {
    match Scenario::from_toml_str(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

fn field_of(text: &str) -> String {
    error_of(text).field().unwrap().to_owned()
}

#[test]
fn the_base_example_is_valid() {
    let s = Scenario::from_toml_str(BASE).unwrap();
    assert_eq!(s.flows[1].sched, "minrtt");
    assert_eq!(s.scenario.seed, 1);
}

#[test]
fn unknown_link_in_a_route_names_the_hop() {
    let text = BASE.replace(r#"{ route = ["lb", "bn"] }"#, r#"{ route = ["lb", "bn2"] }"#);
    let e = error_of(&text);
    assert_eq!(e.to_string(), "flows[1].paths[1].route[1]: unknown link \"bn2\"");
}

#[test]
fn semantic_errors_name_the_field() {
    let cases: &[(&str, &str, &str)] = &[
        (r#"duration = "10s""#, r#"duration = "0""#, "scenario.duration"),
        (
            "[scenario]\n",
            "[scenario]\nsample_interval = \"20s\"\n",
            "scenario.sample_interval",
        ),
        (
            r#"between = ["c.a", "r"]"#,
            r#"between = ["c.x", "r"]"#,
            "links.la.between[0]",
        ),
        (
            r#"between = ["c.a", "r"]"#,
            r#"between = ["c", "r"]"#,
            "links.la.between[0]",
        ),
        (
            r#"between = ["c.b", "r"]"#,
            r#"between = ["c.a", "r"]"#,
            "links.lb.between[0]",
        ),
        (
            r#"between = ["r", "s"]"#,
            r#"between = ["r", "r"]"#,
            "links.bn.between",
        ),
        (r#"cc = "lia""#, r#"cc = "lia2""#, "flows[1].cc"),
        (r#"cc = "cubic""#, r#"cc = "cubic:nope=1""#, "flows[0].cc"),
        (
            r#"cc = "lia""#,
            "cc = \"lia\"\nsched = \"fastest\"",
            "flows[1].sched",
        ),
        (r#"name = "f1""#, r#"name = "f0""#, "flows[1].name"),
        (
            r#"to = "s"
cc = "lia""#,
            r#"to = "r"
cc = "lia""#,
            "flows[1].to",
        ),
        (
            r#"route = ["la", "bn"] }]"#,
            r#"route = ["bn"] }]"#,
            "flows[0].paths[0].route[0]",
        ),
        (
            r#"route = ["la", "bn"] }]"#,
            r#"route = ["la"] }]"#,
            "flows[0].paths[0].route",
        ),
        (
            r#"{ route = ["lb", "bn"] }"#,
            r#"{ route = ["la", "bn"] }"#,
            "flows[1].paths[1]",
        ),
        (
            r#"{ route = ["lb", "bn"] }"#,
            r#"{ route = ["lb", "bn"], reverse = ["bn", "la"] }"#,
            "flows[1].paths[1].reverse",
        ),
        (
            r#"{ route = ["lb", "bn"] }"#,
            r#"{ route = ["lb", "bn"], start = "20s" }"#,
            "flows[1].paths[1].start",
        ),
        (r#"cc = "lia""#, "cc = \"lia\"\nstop = \"11s\"", "flows[1].stop"),
        (r#"cc = "lia""#, "cc = \"lia\"\nbytes = 0", "flows[1].bytes"),
        (
            r#"delay = "5ms"

[links.bn]"#,
            r#"delay = "5ms"
loss = { kind = "bernoulli", p = 1.5 }
[links.bn]"#,
            "links.lb.loss.p",
        ),
        (
            r#"delay = "5ms"

[links.bn]"#,
            r#"delay = "5ms"
reverse = { rate_bps = 0 }
[links.bn]"#,
            "links.lb.reverse.rate_bps",
        ),
        (
            r#"delay = "5ms"

[links.bn]"#,
            r#"delay = "5ms"
mtu = 67
[links.bn]"#,
            "links.lb.mtu",
        ),
        (
            r#"delay = "5ms"

[links.bn]"#,
            r#"delay = "5ms"
reverse = { mtu = 65536 }
[links.bn]"#,
            "links.lb.reverse.mtu",
        ),
    ];
    for (from, to, field) in cases {
        assert!(BASE.contains(from), "bad test case: {from}");
        let text = BASE.replacen(from, to, 1);
        assert_eq!(&field_of(&text), field, "case {to}: {}", error_of(&text));
    }
}

#[test]
fn event_errors_name_the_field() {
    let with = |event: &str| format!("{BASE}\n[[events]]\n{event}\n");
    assert!(Scenario::from_toml_str(&with("at = \"1s\"\nlink = \"la\"\naction = \"down\"")).is_ok());
    assert!(
        Scenario::from_toml_str(&with(
            "at = \"1s\"\nlink = \"la\"\naction = \"set\"\ndirection = \"reverse\"\nset = { rate_bps = 5 }"
        ))
        .is_ok()
    );
    assert_eq!(
        field_of(&with("at = \"11s\"\nlink = \"la\"\naction = \"down\"")),
        "events[0].at"
    );
    assert_eq!(
        field_of(&with("at = \"1s\"\nlink = \"zz\"\naction = \"down\"")),
        "events[0].link"
    );
    assert_eq!(
        field_of(&with("at = \"1s\"\nlink = \"la\"\naction = \"set\"")),
        "events[0].set"
    );
    assert_eq!(
        field_of(&with(
            "at = \"1s\"\nlink = \"la\"\naction = \"set\"\nset = { loss = { kind = \"bernoulli\", p = 2.0 } }"
        )),
        "events[0].set.loss.p"
    );
    assert_eq!(
        field_of(&with(
            "at = \"1s\"\nlink = \"la\"\naction = \"up\"\nset = { rate_bps = 5 }"
        )),
        "events[0].set"
    );
    // A link MTU lowered mid-run (a path MTU black hole), and one out of range.
    assert!(
        Scenario::from_toml_str(&with(
            "at = \"1s\"\nlink = \"la\"\naction = \"set\"\nset = { mtu = 1308 }"
        ))
        .is_ok()
    );
    assert_eq!(
        field_of(&with(
            "at = \"1s\"\nlink = \"la\"\naction = \"set\"\nset = { mtu = 10 }"
        )),
        "events[0].set.mtu"
    );
}

#[test]
fn parse_errors_name_the_field() {
    let e = error_of(&BASE.replace(
        "rate_bps = 10_000_000\ndelay = \"5ms\"\n\n[links.bn]",
        "rate_bps = 10_000_000\ndelay = \"5ms\"\nrat_bps = 1\n\n[links.bn]",
    ));
    assert!(matches!(e, ScenarioError::Parse { .. }), "{e}");
    assert_eq!(e.field(), Some("links.lb.rat_bps"), "{e}");
    assert!(e.to_string().contains("line 26"), "{e}");
    assert!(e.to_string().contains("rat_bps"), "{e}");
    let e = error_of(
        &BASE
            .replace(r#"delay = "10s""#, "")
            .replace(r#"duration = "10s""#, r#"duration = "10""#),
    );
    assert_eq!(e.field(), Some("scenario.duration"), "{e}");
    let e = error_of(&BASE.replace(r#"cc = "lia""#, "cc = 3"));
    assert_eq!(e.field(), Some("flows[1].cc"), "{e}");
    let e = error_of("this is not toml");
    assert_eq!(e.field(), Some("."), "{e}");
}

#[test]
fn sweep_errors_name_the_axis() {
    let with = |sweep: &str| format!("{BASE}\n[sweep]\n{sweep}\n");
    let e = expand(&with("parameter = \"links.zz.rate_bps\"\nvalues = [1]")).unwrap_err();
    assert_eq!(e.field(), Some("sweep.parameter"), "{e}");
    let e = expand(&with("parameter = \"flows.f1.cc\"\nvalues = [\"lia\"]\n[[sweep.axes]]\nparameter = \"flows.nope.cc\"\nvalues = [\"x\"]")).unwrap_err();
    assert_eq!(e.field(), Some("sweep.axes[0].parameter"), "{e}");
    let e = expand(&with("parameter = \"flows.f1.cc\"\nvalues = [\"nope\"]")).unwrap_err();
    assert_eq!(e.field(), Some("flows[1].cc"), "{e}");
    assert!(
        e.to_string().contains("in sweep run flows.f1.cc=nope, seed 1"),
        "{e}"
    );
    let e = Scenario::from_toml_str(&with("parameter = \"flows.f1.cc\"")).unwrap_err();
    assert_eq!(e.field(), Some("sweep.values"), "{e}");
    let e = Scenario::from_toml_str(&with("seeds = [1]")).unwrap_err();
    assert_eq!(e.field(), Some("sweep"), "{e}");
    let runs = expand(&with(
        "parameter = \"flows[1].paths[1].route[0]\"\nvalues = [\"lb\"]\nseeds = [4, 5]",
    ))
    .unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].seed, 5);
    assert_eq!(runs[1].scenario.scenario.seed, 5);
}

#[test]
fn set_path_walks_tables_indices_and_names() {
    let mut doc: toml::Table = toml::from_str(BASE).unwrap();
    set_path(&mut doc, "links.la.rate_bps", toml::Value::Integer(5)).unwrap();
    set_path(&mut doc, "flows.f1.sched", toml::Value::String("ecf".into())).unwrap();
    set_path(&mut doc, "flows[0].cc", toml::Value::String("bbr".into())).unwrap();
    set_path(
        &mut doc,
        "flows.1.paths.0.route[1]",
        toml::Value::String("bn".into()),
    )
    .unwrap();
    let s = Scenario::from_toml_table(doc.clone()).unwrap();
    assert_eq!(s.links["la"].rate_bps, 5);
    assert_eq!(s.flows[1].sched, "ecf");
    assert_eq!(s.flows[0].cc, "bbr");
    assert!(set_path(&mut doc, "links.zz.rate_bps", toml::Value::Integer(1)).is_err());
    assert!(set_path(&mut doc, "flows[7].cc", toml::Value::Integer(1)).is_err());
    assert!(set_path(&mut doc, "flows[0.cc", toml::Value::Integer(1)).is_err());
    assert!(set_path(&mut doc, "links..x", toml::Value::Integer(1)).is_err());
    assert!(set_path(&mut doc, "scenario.name.x", toml::Value::Integer(1)).is_err());
}

/// The keys for attacks and churn: `spoof` (a third host's interface, with an explicit `reverse` to it),
/// `migrate` (a later path, same server interface), a path's `stop` (multipath flows, within the path's
/// life) and the flow's `direction`.
#[test]
fn spoof_migrate_stop_and_direction_are_validated() {
    let victim = "\n[nodes.v]\nkind = \"host\"\ninterfaces = [{ name = \"eth0\" }]\n\n[links.lv]\nbetween = [\"v.eth0\", \"r\"]\nrate_bps = 10_000_000\ndelay = \"5ms\"\n";
    let base = format!("{BASE}{victim}");
    let path1 = r#"{ route = ["lb", "bn"] }"#;
    let with = |to: &str| base.replacen(path1, to, 1);

    let ok = with(r#"{ route = ["lb", "bn"], reverse = ["bn", "lv"], spoof = "v" }"#);
    let s = Scenario::from_toml_str(&ok).unwrap();
    let t = s.topology().unwrap();
    let p = &t.flows[1].paths[1];
    assert_eq!(p.local.to_string(), "v.eth0");
    assert_eq!(p.leaves_from.as_ref().unwrap().to_string(), "c.b");
    assert!(s.summary(&t).contains("spoofed: leaves from c.b"));
    let ok = with(r#"{ route = ["lb", "bn"], stop = "5s" }"#).replacen(
        "cc = \"lia\"",
        "cc = \"lia\"\ndirection = \"download\"",
        1,
    );
    let s = Scenario::from_toml_str(&ok).unwrap();
    assert_eq!(s.flows[1].paths[1].stop, Some(std::time::Duration::from_secs(5)));
    assert!(s.summary(&s.topology().unwrap()).contains(", download"));
    let ok = with(r#"{ route = ["lb", "bn"], migrate = true, start = "2s" }"#);
    assert!(Scenario::from_toml_str(&ok).unwrap().flows[1].paths[1].migrate);

    let cases: &[(&str, &str)] = &[
        (
            r#"{ route = ["lb", "bn"], spoof = "v" }"#,
            "flows[1].paths[1].reverse",
        ),
        (
            r#"{ route = ["lb", "bn"], reverse = ["bn", "lv"], spoof = "c.a" }"#,
            "flows[1].paths[1].spoof",
        ),
        (
            r#"{ route = ["lb", "bn"], reverse = ["bn", "lv"], spoof = "r" }"#,
            "flows[1].paths[1].spoof",
        ),
        (
            r#"{ route = ["lb", "bn"], reverse = ["bn", "lb"], spoof = "v" }"#,
            "flows[1].paths[1].reverse",
        ),
        (
            r#"{ route = ["lb", "bn"], stop = "0" }"#,
            "flows[1].paths[1].stop",
        ),
        (
            r#"{ route = ["lb", "bn"], start = "3s", stop = "3s" }"#,
            "flows[1].paths[1].stop",
        ),
        (
            r#"{ route = ["lb", "bn"], stop = "11s" }"#,
            "flows[1].paths[1].stop",
        ),
        (
            r#"{ route = ["lb", "bn"], stop = "5s", migrate = true }"#,
            "flows[1].paths[1].stop",
        ),
    ];
    for (to, field) in cases {
        let text = with(to);
        assert_eq!(&field_of(&text), field, "case {to}: {}", error_of(&text));
    }
    let first = r#"paths = [{ route = ["la", "bn"] }, { route = ["lb", "bn"] }]"#;
    assert!(base.contains(first));
    assert_eq!(
        field_of(&base.replacen(
            first,
            r#"paths = [{ route = ["la", "bn"], migrate = true }, { route = ["lb", "bn"] }]"#,
            1
        )),
        "flows[1].paths[0].migrate"
    );
    assert_eq!(
        field_of(&base.replacen(
            r#"paths = [{ route = ["la", "bn"] }]"#,
            r#"paths = [{ route = ["la", "bn"], stop = "5s" }]"#,
            1
        )),
        "flows[0].paths[0].stop"
    );
    assert_eq!(
        field_of(&base.replacen("cc = \"lia\"", "cc = \"lia\"\ndirection = \"sideways\"", 1)),
        "flows[1].direction"
    );
    // A path the client migrates to must reach the first path's server interface.
    let two = base
        .replacen(
            r#"interfaces = [{ name = "eth0" }]"#,
            r#"interfaces = [{ name = "eth0" }, { name = "eth1" }]"#,
            1,
        )
        .replacen(r#"between = ["r", "s"]"#, r#"between = ["r", "s.eth0"]"#, 1)
        + "\n[links.bn2]\nbetween = [\"r\", \"s.eth1\"]\nrate_bps = 10_000_000\ndelay = \"5ms\"\n";
    assert!(Scenario::from_toml_str(&two).is_ok(), "{}", error_of(&two));
    assert_eq!(
        field_of(&two.replacen(path1, r#"{ route = ["lb", "bn2"], migrate = true }"#, 1)),
        "flows[1].paths[1].route"
    );
}

mod limits;

#[test]
fn crypto_defaults_to_aes128gcm_and_accepts_null_only_besides() {
    use mpquic_netsim::scenario::Crypto;
    let s = Scenario::from_toml_str(BASE).unwrap();
    assert_eq!(s.scenario.crypto, Crypto::Aes128gcm);
    assert!(!s.summary(&s.topology().unwrap()).contains("cipher"));
    let with = |v: &str| {
        BASE.replacen(
            "duration = \"10s\"",
            &format!("duration = \"10s\"\ncrypto = {v}"),
            1,
        )
    };
    let s = Scenario::from_toml_str(&with("\"null\"")).unwrap();
    assert_eq!(s.scenario.crypto, Crypto::Null);
    assert!(
        s.summary(&s.topology().unwrap())
            .contains("seed 1, sample every 100ms, null cipher\n")
    );
    assert_eq!(
        Scenario::from_toml_str(&with("\"aes128gcm\""))
            .unwrap()
            .scenario
            .crypto,
        Crypto::Aes128gcm
    );
    for bad in ["\"rot13\"", "\"AES128GCM\"", "1"] {
        let e = error_of(&with(bad));
        assert_eq!(e.field(), Some("scenario.crypto"), "{bad}: {e}");
    }
    assert!(
        error_of(&with("\"rot13\""))
            .to_string()
            .contains("expected `aes128gcm` or `null`")
    );
    // Written back out, the default is left out and `null` kept.
    let text = toml::to_string(&Scenario::from_toml_str(BASE).unwrap()).unwrap();
    assert!(!text.contains("crypto"), "{text}");
    let null = Scenario::from_toml_str(&with("\"null\"")).unwrap();
    assert!(toml::to_string(&null).unwrap().contains("crypto = \"null\""));
}
