//! The iperf3-shape check the tests share: a JSON report compared key by key with iperf3's documented output
//! (`fixtures/iperf3_tcp_client.json`, a TCP client's `iperf3 --json` report written after iperf3's documented
//! output format): the same keys with the same kinds of values, ours only adding `mpquic` keys and leaving
//! out exactly the TCP- and host-specific keys of `iperf3::OMITTED`.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mpquic_tools::perf::iperf3::OMITTED;
use serde_json::Value;

/// iperf3's report.
pub const FIXTURE: &str = include_str!("../fixtures/iperf3_tcp_client.json");

/// Keys whose values are times in seconds: iperf3 writes an interval that starts at 0 as the integer 0 and
/// others as fractions, so any number matches there. Every other number that is an integer in the fixture
/// must be an integer in ours.
const TIMES: &[&str] = &["start", "end", "seconds"];

/// Compares `ours` with iperf3's `theirs` at `at`: same JSON kinds, same object keys (ours may add `mpquic`
/// and leave out the [`OMITTED`] ones), array elements each against iperf3's first. Returns the mismatches.
pub fn compare(at: &str, key: &str, ours: &Value, theirs: &Value, errors: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(o), Value::Object(t)) => {
            for k in t.keys() {
                if !o.contains_key(k) && !OMITTED.contains(&k.as_str()) {
                    errors.push(format!("{at}: missing key `{k}`"));
                }
            }
            for (k, v) in o {
                match t.get(k) {
                    Some(tv) => compare(&format!("{at}.{k}"), k, v, tv, errors),
                    None if k == "mpquic" => {}
                    None => errors.push(format!("{at}: extra key `{k}` outside `mpquic`")),
                }
            }
        }
        (Value::Array(o), Value::Array(t)) => {
            if let Some(first) = t.first() {
                for (n, v) in o.iter().enumerate() {
                    compare(&format!("{at}[{n}]"), key, v, first, errors);
                }
            }
        }
        (Value::Number(o), Value::Number(t)) => {
            if t.is_u64() && !o.is_u64() && !TIMES.contains(&key) {
                errors.push(format!("{at}: iperf3 has an integer ({t}), ours is {o}"));
            }
        }
        (Value::String(_), Value::String(_)) | (Value::Bool(_), Value::Bool(_)) => {}
        (o, t) => errors.push(format!("{at}: ours is {o}, iperf3 has {t}")),
    }
}

/// Panics with every mismatch if `report` does not have iperf3's layout.
pub fn check(report: &Value) {
    let theirs: Value = serde_json::from_str(FIXTURE).unwrap();
    let mut errors = Vec::new();
    compare("", "", report, &theirs, &mut errors);
    assert!(errors.is_empty(), "{}\n{report:#}", errors.join("\n"));
}
