//! Validation of the receiver and workload settings: every out-of-range or inconsistent value is rejected
//! with an error that names the field and the value.

use mpquic_netsim::Scenario;
use mpquic_netsim::scenario::receiver::Update;

/// The one-link scenario of the workload tests with `flow` as extra keys of its flow, parsed.
fn parse(flow: &str) -> Result<Scenario, mpquic_netsim::ScenarioError> {
    let text = format!(
        r#"
[scenario]
name = "v"
duration = "2s"

[nodes.client]
kind = "host"
interfaces = [{{ name = "eth0" }}]

[nodes.server]
kind = "host"
interfaces = [{{ name = "eth0" }}]

[links.l]
between = ["client.eth0", "server.eth0"]
rate_bps = 10_000_000
delay = "10ms"

[[flows]]
name = "f"
from = "client"
to = "server"
cc = "cubic"
paths = [{{ route = ["l"] }}]
{flow}
"#
    );
    Scenario::from_toml_str(&text)
}

/// Asserts that `flow` is rejected at `field` with a message containing every one of `words`.
#[track_caller]
fn rejected(flow: &str, field: &str, words: &[&str]) {
    let err = parse(flow).expect_err(flow);
    let msg = err.to_string();
    assert_eq!(err.field(), Some(field), "{flow}: {msg}");
    for w in words {
        assert!(msg.contains(w), "{flow}: {msg} lacks {w:?}");
    }
}

#[test]
fn good_settings_parse() {
    let s = parse(
        r#"receiver = { policy = "linux", min_window = "4KiB", window = "128KiB", max_window = "6MiB", conn_window = 131072, min_conn_window = "4KiB", max_conn_window = "6MiB", read_rate = "20Mbit/s" }"#,
    )
    .unwrap();
    let r = s.flows[0].receiver.as_ref().unwrap();
    assert_eq!(r.window, Some(131_072));
    assert_eq!(r.max_window, Some(6 << 20));
    assert_eq!(r.read_rate, Some(20_000_000));
    // The update rule: `half` with `auto`, `eighth` with the others, unless set.
    assert_eq!(r.windows().update, Update::Eighth);
    let auto = |keys: &str| {
        let s = parse(&format!("receiver = {{ {keys} }}")).unwrap();
        s.flows[0].receiver.as_ref().unwrap().windows().update
    };
    assert_eq!(auto(r#"policy = "auto""#), Update::Half);
    assert_eq!(
        auto(r#"policy = "auto", window_update = "eighth""#),
        Update::Eighth
    );
    assert_eq!(auto(r#"policy = "fixed", window_update = "half""#), Update::Half);
    parse("kind = \"requests\"\nrequests = { sizes = [1000, \"10KiB\"], gap = \"10ms\", count = 5 }")
        .unwrap();
    for dist in [
        r#"{ dist = "lognormal", median = "30KiB", sigma = 1.5 }"#,
        r#"{ dist = "pareto", min = "10KiB", shape = 1.2, max = "10MiB" }"#,
        r#"{ dist = "exponential", mean = "100kB" }"#,
        r#"{ dist = "uniform", min = 1, max = "1MiB" }"#,
    ] {
        parse(&format!("kind = \"requests\"\nrequests = {{ size = {dist} }}")).unwrap();
    }
    let s = parse("kind = \"video\"\nvideo = { bitrate = \"5Mbit/s\" }").unwrap();
    let v = s.flows[0].video.as_ref().unwrap();
    assert_eq!((v.chunk.as_secs(), v.buffer.as_secs()), (2, 10));
    // The scenario survives a round trip through TOML.
    let text = toml::to_string(&s).unwrap();
    assert_eq!(Scenario::from_toml_str(&text).unwrap(), s);
}

#[test]
fn receiver_fields_are_checked() {
    let rx = |keys: &str| format!("receiver = {{ {keys} }}");
    rejected(&rx(r#"policy = "cubic""#), "flows[0].receiver.policy", &["cubic"]);
    rejected(
        &rx(r#"window_update = "quarter""#),
        "flows[0].receiver.window_update",
        &["quarter"],
    );
    rejected(
        &rx(r#"window = "512B""#),
        "flows[0].receiver.window",
        &["512", "1KiB"],
    );
    rejected(
        &rx(r#"window = "2GiB""#),
        "flows[0].receiver.window",
        &["2147483648"],
    );
    rejected(
        &rx(r#"window = "128Kb""#),
        "flows[0].receiver.window",
        &["128Kb", "unit"],
    );
    rejected(
        &rx(r#"window = "128KiB", max_window = "64KiB""#),
        "flows[0].receiver.max_window",
        &["65536", "`window`"],
    );
    rejected(
        &rx(r#"window = "128KiB", min_window = "256KiB""#),
        "flows[0].receiver.min_window",
        &["262144", "128KiB"],
    );
    rejected(
        &rx(r#"min_window = 100"#),
        "flows[0].receiver.min_window",
        &["100"],
    );
    rejected(
        &rx(r#"conn_window = 10"#),
        "flows[0].receiver.conn_window",
        &["10 bytes"],
    );
    rejected(
        &rx(r#"conn_window = "1MiB", max_conn_window = "512KiB""#),
        "flows[0].receiver.max_conn_window",
        &["524288"],
    );
    rejected(
        &rx(r#"conn_window = "64KiB", min_conn_window = "1MiB""#),
        "flows[0].receiver.min_conn_window",
        &["1048576"],
    );
    rejected(
        &rx(r#"read_rate = 100"#),
        "flows[0].receiver.read_rate",
        &["100 bit/s", "8kbit/s"],
    );
    rejected(
        &rx(r#"read_rate = "20 Mbps""#),
        "flows[0].receiver.read_rate",
        &["20 Mbps", "unit"],
    );
    rejected(
        &rx(r#"readrate = 1"#),
        "flows[0].receiver.readrate",
        &["unknown field"],
    );
}

#[test]
fn request_fields_are_checked() {
    let req = |keys: &str| format!("kind = \"requests\"\nrequests = {{ {keys} }}");
    rejected("kind = \"requests\"", "flows[0].requests", &["missing"]);
    rejected(&req(r#"gap = "1s""#), "flows[0].requests.sizes", &["missing"]);
    rejected(
        &req(r#"sizes = [1], size = { dist = "exponential", mean = 5 }"#),
        "flows[0].requests.size",
        &["not with `sizes`"],
    );
    rejected(
        &req("sizes = [10, 0]"),
        "flows[0].requests.sizes[1]",
        &["0 bytes"],
    );
    rejected(
        &req(r#"sizes = ["2GiB"]"#),
        "flows[0].requests.sizes[0]",
        &["2147483648"],
    );
    let many: Vec<String> = (0..1001).map(|_| "1".to_owned()).collect();
    rejected(
        &req(&format!("sizes = [{}]", many.join(","))),
        "flows[0].requests.sizes",
        &["1001 entries"],
    );
    rejected(
        &req(r#"sizes = [1], gap = "7200s""#),
        "flows[0].requests.gap",
        &["7200s", "1h"],
    );
    rejected(
        &req(r#"sizes = [1], count = 0"#),
        "flows[0].requests.count",
        &["0 is out of range"],
    );
    rejected(
        &req(r#"sizes = [1], count = 1000001"#),
        "flows[0].requests.count",
        &["1000001"],
    );
    rejected(
        &req(r#"size = { dist = "lognormal", median = "30KiB", sigma = 5.0 }"#),
        "flows[0].requests.size.sigma",
        &["5 is out of range"],
    );
    rejected(
        &req(r#"size = { dist = "lognormal", median = 0, sigma = 1.0 }"#),
        "flows[0].requests.size.median",
        &["0 bytes"],
    );
    rejected(
        &req(r#"size = { dist = "pareto", min = 1000, shape = 0.01 }"#),
        "flows[0].requests.size.shape",
        &["0.01"],
    );
    rejected(
        &req(r#"size = { dist = "pareto", min = 1000, shape = 1.5, max = 10 }"#),
        "flows[0].requests.size.max",
        &["10 bytes", "`min`"],
    );
    rejected(
        &req(r#"size = { dist = "exponential", mean = "3GiB" }"#),
        "flows[0].requests.size.mean",
        &["3221225472"],
    );
    rejected(
        &req(r#"size = { dist = "uniform", min = 100, max = 10 }"#),
        "flows[0].requests.size.max",
        &["10 bytes"],
    );
    rejected(
        &req(r#"size = { dist = "zipf", s = 1.0 }"#),
        "flows[0].requests.size.dist",
        &["zipf"],
    );
    rejected(
        &req(r#"size = { dist = "exponential", mean = 5, median = 3 }"#),
        "flows[0].requests.size",
        &["median"],
    );
    rejected(
        "kind = \"requests\"\nbytes = 1000\nrequests = { sizes = [1] }",
        "flows[0].bytes",
        &["1000", "bulk"],
    );
    rejected(
        "requests = { sizes = [1] }",
        "flows[0].requests",
        &["only for `kind = \"requests\"`", "bulk"],
    );
    rejected(
        "kind = \"video\"\nvideo = { bitrate = 100000 }\nrequests = { sizes = [1] }",
        "flows[0].requests",
        &["video"],
    );
}

#[test]
fn video_fields_are_checked() {
    let vid = |keys: &str| format!("kind = \"video\"\nvideo = {{ {keys} }}");
    rejected("kind = \"video\"", "flows[0].video", &["missing"]);
    rejected(&vid(r#"chunk = "1s""#), "flows[0].video", &["bitrate"]);
    rejected(&vid("bitrate = 1000"), "flows[0].video.bitrate", &["1000 bit/s"]);
    rejected(
        &vid(r#"bitrate = "20Gbit/s""#),
        "flows[0].video.bitrate",
        &["20000000000"],
    );
    rejected(
        &vid(r#"bitrate = "5Mbit/s", chunk = "5ms""#),
        "flows[0].video.chunk",
        &["5ms"],
    );
    rejected(
        &vid(r#"bitrate = "5Mbit/s", chunk = "61s", buffer = "120s""#),
        "flows[0].video.chunk",
        &["61s"],
    );
    rejected(
        &vid(r#"bitrate = "9Gbit/s", chunk = "2s""#),
        "flows[0].video.bitrate",
        &["2250000000 bytes", "1GiB"],
    );
    rejected(
        &vid(r#"bitrate = "5Mbit/s", buffer = "1s""#),
        "flows[0].video.buffer",
        &["1s", "`chunk`"],
    );
    rejected(
        &vid(r#"bitrate = "5Mbit/s", buffer = "7200s""#),
        "flows[0].video.buffer",
        &["7200s", "1h"],
    );
    rejected(
        &vid(r#"bitrate = "5Mbit/s", count = 0"#),
        "flows[0].video.count",
        &["0 is out of range"],
    );
    rejected(
        "video = { bitrate = 100000 }",
        "flows[0].video",
        &["only for `kind = \"video\"`"],
    );
    rejected(
        "kind = \"video\"\nbytes = 5\nvideo = { bitrate = 100000 }",
        "flows[0].bytes",
        &["video.count"],
    );
}
