//! mpquic's qlog read back by an independent reader: quiche's `qlog` crate (0.16, the qlog 0.3 data model,
//! `QlogSeq` header and `Event` / `EventData` records in JSON-SEQ).
//!
//! Two mpquic endpoints (sans-IO core) are joined by the shared in-memory pair (`mpquic::proto::testing`) in
//! virtual time, each side logging into memory. The scenarios cover what the writer can log: path 1 set to
//! backup and back, a two-path transfer with 3 % seeded loss, PATH_ABANDON of path 1 in the middle of a
//! transfer, an active migration of path 0 to a new client address, a datagram, a reset stream and a stopped
//! one, a close, and a resumed connection that sends its request in 0-RTT packets. The test asserts that each
//! of these reached the logs (the events, the frame types, the packet types and the path states it expects).
//!
//! Every record of every log is then checked:
//! - the header parses as `qlog::QlogSeq` (version "0.3", format "JSON-SEQ", the right vantage point);
//! - an event whose name qlog 0.3 defines parses as `qlog::events::Event`; an error names the record, the
//!   event and serde's message. Multipath frames (not in qlog 0.3) are taken out of its `frames` first and each
//!   checked against the schema `docs/qlog.md` documents for it;
//! - what the crate reads is serialized again: a field of ours the crate dropped must be one of the documented
//!   extension fields (`path_id` in a packet header, ...), each checked for its type, never silently ignored;
//! - an event qlog 0.3 does not define (`multipath:path_updated`, `mpquic:reassembly_updated`) is checked
//!   against its documented schema: every required field, no undocumented one, each of the right type;
//! - the crate's own streaming reader (`QlogSeqReader`) agrees: it reads as typed events exactly the records
//!   that parsed, and the rest as generic JSON events.
//!
//! Run: `cargo test -p mpquic --features qlog-compat --test qlog_compat`. The feature only exists for this
//! test (see `mpquic/Cargo.toml` for why the reader is not a plain dev-dependency).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{certs, init_tracing, pattern, rustls_client_with, rustls_server_with};
use mpquic::cc::PathId;
use mpquic::proto::coding::VarInt;
use mpquic::proto::connection::{self as mpc, QlogFactory};
use mpquic::proto::crypto::TlsOptions;
use mpquic::proto::frame::PathAbandon;
use mpquic::proto::streams::{ReadError, StreamId, WriteError};
use mpquic::proto::testing::Pair;
use mpquic::sched::PathStatus;
use serde_json::Value;

const CLIENT2: &str = "10.0.1.1:5555";
/// Where the client migrates path 0 to.
const CLIENT3: &str = "10.0.2.1:6666";
const SERVER: &str = "10.0.0.2:443";

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

// ---------------------------------------------------------------------------------------------------------
// Logs in memory
// ---------------------------------------------------------------------------------------------------------

/// A writer into a buffer the test keeps.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every connection's log, by `<scenario>/<odcid>_<side>.sqlog`.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<BTreeMap<String, Shared>>>);

impl Logs {
    fn factory(&self, scenario: &'static str) -> QlogFactory {
        let logs = self.clone();
        QlogFactory::new(move |ctx| {
            let w = Shared::default();
            let name = format!("{scenario}/{}", ctx.file_name());
            logs.0.lock().unwrap().insert(name, w.clone());
            Some(Box::new(w) as Box<dyn Write + Send>)
        })
    }

    fn take(&self) -> BTreeMap<String, Vec<u8>> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.0.lock().unwrap().clone()))
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------------------
// Two mpquic endpoints on the shared in-memory pair (`mpquic::proto::testing`) in virtual time
// ---------------------------------------------------------------------------------------------------------

/// A one-way upload: the client writes `data` on a new bidirectional stream, the server reads it to the end.
struct Upload {
    data: Vec<u8>,
    client_stream: Option<StreamId>,
    written: usize,
    finished: bool,
    server_stream: Option<StreamId>,
    received: Vec<u8>,
    done: bool,
}

impl Upload {
    fn new(len: usize, seed: u8) -> Upload {
        Upload {
            data: pattern(len, seed),
            client_stream: None,
            written: 0,
            finished: false,
            server_stream: None,
            received: Vec::new(),
            done: false,
        }
    }
}

fn configs(early_data: bool, qlog: QlogFactory) -> (mpc::ClientConfig, mpc::ServerConfig) {
    let c = certs();
    let mut opts = TlsOptions::with_alpn(common::ALPN);
    opts.early_data = early_data;
    let transport = mpc::TransportConfig {
        initial_max_path_id: Some(4),
        qlog: Some(qlog),
        ..mpc::TransportConfig::default()
    };
    (
        mpc::ClientConfig {
            tls: rustls_client_with(&c, &opts),
            transport: transport.clone(),
        },
        mpc::ServerConfig {
            tls: rustls_server_with(&c, &opts),
            transport,
        },
    )
}

/// A pair whose client has two more interfaces (`CLIENT2`, `CLIENT3`) and whose link loses `loss` of the
/// datagrams (seeded).
fn world(seed: u64, loss: f64, early_data: bool, qlog: QlogFactory) -> Pair {
    init_tracing();
    #[allow(clippy::disallowed_methods)] // virtual time starts at an arbitrary instant
    let now = Instant::now();
    let (cc, sc) = configs(early_data, qlog);
    let mut p = Pair::start(cc, Arc::new(sc), seed, now).unwrap();
    p.loss = loss;
    p.client_extra_addrs = vec![addr(CLIENT2), addr(CLIENT3)];
    p
}

fn handshake(p: &mut Pair) {
    assert!(p.try_handshake(), "handshake did not complete");
}

/// Moves `u` forward: the client writes what flow control takes, the server reads what arrived.
fn pump(p: &mut Pair, u: &mut Upload) {
    let now = p.now;
    let c = p.client.conn();
    let id = match u.client_stream {
        Some(id) => id,
        None => {
            let Some(id) = c.open_bi() else { return };
            u.client_stream = Some(id);
            id
        }
    };
    while u.written < u.data.len() {
        let end = (u.written + 64 * 1024).min(u.data.len());
        match c.write(id, Bytes::copy_from_slice(&u.data[u.written..end])) {
            Ok(n) => u.written += n,
            Err(WriteError::Blocked) => break,
            Err(e) => panic!("write: {e:?}"),
        }
    }
    if u.written == u.data.len() && !u.finished {
        c.finish(id).unwrap();
        u.finished = true;
    }
    let Some(s) = p.server.first_conn() else {
        return;
    };
    if u.server_stream.is_none() {
        u.server_stream = s.accept_bi();
    }
    let Some(sid) = u.server_stream else { return };
    loop {
        match s.read(sid, usize::MAX, now) {
            Ok(Some(b)) => u.received.extend_from_slice(&b),
            Ok(None) => {
                u.done = true;
                break;
            }
            Err(ReadError::Blocked) => break,
            Err(e) => panic!("read: {e:?}"),
        }
    }
}

/// Runs `u` to the end (at most 30 s of virtual time); `at_half` runs once when the server has half.
fn upload(p: &mut Pair, u: &mut Upload, mut at_half: impl FnMut(&mut Pair)) {
    let mut half_done = false;
    let ok = p.drive_until(Duration::from_secs(30), |p| {
        pump(p, u);
        if !half_done && u.received.len() >= u.data.len() / 2 {
            half_done = true;
            at_half(p);
        }
        u.done
    });
    assert!(
        ok,
        "upload of {} bytes: {} arrived",
        u.data.len(),
        u.received.len()
    );
    assert!(u.received == u.data, "the upload arrived intact");
}

// ---------------------------------------------------------------------------------------------------------
// The scenarios
// ---------------------------------------------------------------------------------------------------------

/// Two paths with 3 % loss, PATH_ABANDON of path 1 mid-transfer, migration of path 0, close.
fn multipath_scenario(logs: &Logs) {
    let mut w = world(7, 0.03, false, logs.factory("multipath"));
    handshake(&mut w);
    let now = w.now;
    let p1 = w
        .client
        .conn()
        .open_path(now, Some(addr(CLIENT2)), addr(SERVER), PathStatus::Available)
        .unwrap();
    assert_eq!(p1, PathId(1));
    let ok = w.drive_until(Duration::from_secs(5), |w| {
        w.client.conn().path_stats(p1).is_some_and(|s| s.validated)
    });
    assert!(ok, "path 1 validated");
    // PATH_STATUS_BACKUP, then PATH_STATUS_AVAILABLE (the transfers alone send neither).
    w.client.conn().set_path_status(p1, PathStatus::Backup).unwrap();
    w.run_for(Duration::from_millis(200));
    w.client
        .conn()
        .set_path_status(p1, PathStatus::Available)
        .unwrap();
    w.run_for(Duration::from_millis(200));

    let mut u = Upload::new(400_000, 1);
    upload(&mut w, &mut u, |_| {});
    let lost = w.client.conn().stats().packets_lost;
    assert!(lost > 0, "3 % loss lost some of the client's packets");

    let mut u = Upload::new(400_000, 2);
    upload(&mut w, &mut u, |w| {
        let now = w.now;
        w.client
            .conn()
            .close_path(now, p1, PathAbandon::APPLICATION_ABANDON_PATH)
            .unwrap();
    });

    let now = w.now;
    w.client.conn().migrate(now, addr(CLIENT3)).unwrap();
    let mut u = Upload::new(100_000, 3);
    upload(&mut w, &mut u, |_| {});
    let ok = w.drive_until(Duration::from_secs(5), |w| {
        !w.client.conn().path_validation_pending(PathId(0))
    });
    assert!(ok, "the migrated path validated");

    // Frames the transfers do not send: a DATAGRAM, RESET_STREAM of a unidirectional stream that carried
    // data, STOP_SENDING on the receive side of a bidirectional one.
    let c = w.client.conn();
    c.send_datagram(Bytes::from_static(b"qlog")).unwrap();
    let reset = c.open_uni().unwrap();
    c.write(reset, Bytes::from_static(&[7; 1_000])).unwrap();
    c.reset(reset, VarInt::from_u32(5)).unwrap();
    let stopped = c.open_bi().unwrap();
    c.write(stopped, Bytes::from_static(&[8; 10])).unwrap();
    c.stop(stopped, VarInt::from_u32(6)).unwrap();
    w.run_for(Duration::from_millis(300));

    let now = w.now;
    w.client
        .conn()
        .close(now, VarInt::from_u32(0), Bytes::from_static(b"done"));
    w.run_for(Duration::from_secs(2));
    // Dropping the connections flushes the logs.
    drop(w);
}

/// A first connection leaves a session ticket; the second resumes and sends its request in 0-RTT packets.
fn zero_rtt_scenario(logs: &Logs) {
    let mut w = world(11, 0.0, true, logs.factory("zero_rtt"));
    handshake(&mut w);
    // The NewSessionTicket messages travel in 1-RTT CRYPTO frames after the handshake.
    w.run_for(Duration::from_millis(200));
    w.try_reconnect(None, 0).unwrap();
    assert!(
        w.client.conn().is_zero_rtt_available(),
        "0-RTT keys from the ticket"
    );
    let mut u = Upload::new(3_000, 4);
    // Written before the first transmit: the request leaves in 0-RTT packets.
    pump(&mut w, &mut u);
    assert!(u.finished, "the whole request was written in 0-RTT");
    upload(&mut w, &mut u, |_| {});
    assert!(w.client.conn().zero_rtt_packets() > 0, "0-RTT packets sent");
    let now = w.now;
    w.client
        .conn()
        .close(now, VarInt::from_u32(0), Bytes::from_static(b"done"));
    w.run_for(Duration::from_secs(1));
    drop(w);
}

// ---------------------------------------------------------------------------------------------------------
// The documented extensions (docs/qlog.md) and their schemas
// ---------------------------------------------------------------------------------------------------------

/// The JSON type of a documented field.
#[derive(Debug, Clone, Copy)]
enum Kind {
    U64,
    /// Any number (milliseconds).
    Num,
    Bool,
    /// Lowercase hex digits.
    Hex,
    /// A socket address (`ip:port`, `[ip6]:port`).
    Addr,
    /// `[[smallest, largest], ...]`.
    Ranges,
    OneOf(&'static [&'static str]),
}

/// A field: name, type, required.
type Field = (&'static str, Kind, bool);

const PATH_STATES: &[&str] = &[
    "new",
    "validated",
    "available",
    "backup",
    "migrated",
    "abandoned",
    "closed",
];

/// Events qlog 0.3 does not define, with their documented `data`.
fn extension_event(name: &str) -> Option<&'static [Field]> {
    Some(match name {
        "multipath:path_updated" => &[
            ("path_id", Kind::U64, true),
            ("state", Kind::OneOf(PATH_STATES), true),
            ("remote", Kind::Addr, true),
            ("local", Kind::Addr, false),
        ],
        "mpquic:reassembly_updated" => &[
            ("out_of_order_bytes", Kind::U64, true),
            ("max_out_of_order_bytes", Kind::U64, true),
            ("unread_bytes", Kind::U64, true),
            ("max_unread_bytes", Kind::U64, true),
            ("bytes", Kind::U64, true),
            ("out_of_order", Kind::U64, true),
            ("hol_delay_mean", Kind::Num, true),
            ("hol_delay_p95", Kind::Num, true),
            ("hol_delay_max", Kind::Num, true),
            ("recv_window", Kind::U64, true),
            ("max_data", Kind::U64, true),
        ],
        _ => return None,
    })
}

/// Multipath frames (draft-ietf-quic-multipath-21 §4), which qlog 0.3's `QuicFrame` does not have.
fn extension_frame(frame_type: &str) -> Option<&'static [Field]> {
    Some(match frame_type {
        "path_ack" => &[
            ("frame_type", Kind::OneOf(&["path_ack"]), true),
            ("path_id", Kind::U64, true),
            ("ack_delay", Kind::Num, true),
            ("acked_ranges", Kind::Ranges, true),
            ("ect0", Kind::U64, false),
            ("ect1", Kind::U64, false),
            ("ce", Kind::U64, false),
        ],
        "path_abandon" => &[
            ("frame_type", Kind::OneOf(&["path_abandon"]), true),
            ("path_id", Kind::U64, true),
            ("error_code", Kind::U64, true),
        ],
        "path_status_backup" | "path_status_available" => &[
            (
                "frame_type",
                Kind::OneOf(&["path_status_backup", "path_status_available"]),
                true,
            ),
            ("path_id", Kind::U64, true),
            ("path_status_sequence_number", Kind::U64, true),
        ],
        "path_new_connection_id" => &[
            ("frame_type", Kind::OneOf(&["path_new_connection_id"]), true),
            ("path_id", Kind::U64, true),
            ("sequence_number", Kind::U64, true),
            ("retire_prior_to", Kind::U64, true),
            ("connection_id_length", Kind::U64, true),
            ("connection_id", Kind::Hex, true),
            ("stateless_reset_token", Kind::Hex, true),
        ],
        "path_retire_connection_id" => &[
            ("frame_type", Kind::OneOf(&["path_retire_connection_id"]), true),
            ("path_id", Kind::U64, true),
            ("sequence_number", Kind::U64, true),
        ],
        "max_path_id" | "paths_blocked" => &[
            ("frame_type", Kind::OneOf(&["max_path_id", "paths_blocked"]), true),
            ("maximum_path_id", Kind::U64, true),
        ],
        "path_cids_blocked" => &[
            ("frame_type", Kind::OneOf(&["path_cids_blocked"]), true),
            ("path_id", Kind::U64, true),
            ("next_sequence_number", Kind::U64, true),
        ],
        _ => return None,
    })
}

/// Fields we add to events qlog 0.3 defines: (event name, path of the field in the record, type). The qlog
/// crate may drop them when it reads the event; nothing else may be dropped.
const EXTENSION_FIELDS: &[(&str, &str, Kind)] = &[
    ("transport:packet_sent", "data.header.path_id", Kind::U64),
    ("transport:packet_received", "data.header.path_id", Kind::U64),
    ("recovery:packet_lost", "data.header.path_id", Kind::U64),
    ("recovery:packet_lost", "data.path_abandoned", Kind::Bool),
    ("recovery:metrics_updated", "data.path_id", Kind::U64),
    ("connectivity:mtu_updated", "data.path_id", Kind::U64),
    ("transport:parameters_set", "data.initial_max_path_id", Kind::U64),
    // RFC 9221 §3; qlog 0.3 predates it (later qlog drafts name it the same).
    (
        "transport:parameters_set",
        "data.max_datagram_frame_size",
        Kind::U64,
    ),
];

/// Header fields the crate does not model: `ODCID` is a common field of the QUIC event definitions.
const HEADER_EXTENSION_FIELDS: &[(&str, Kind)] = &[("trace.common_fields.ODCID", Kind::Hex)];

fn kind_ok(v: &Value, k: Kind) -> bool {
    match k {
        Kind::U64 => v.is_u64(),
        Kind::Num => v.as_f64().is_some_and(|f| f.is_finite() && f >= 0.0),
        Kind::Bool => v.is_boolean(),
        Kind::Hex => v.as_str().is_some_and(|s| {
            s.len() % 2 == 0
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        }),
        Kind::Addr => v.as_str().is_some_and(|s| s.parse::<SocketAddr>().is_ok()),
        Kind::Ranges => v.as_array().is_some_and(|rs| {
            !rs.is_empty()
                && rs.iter().all(|r| {
                    r.as_array().is_some_and(|r| {
                        r.len() == 2 && r[0].is_u64() && r[1].is_u64() && r[0].as_u64() <= r[1].as_u64()
                    })
                })
        }),
        Kind::OneOf(values) => v.as_str().is_some_and(|s| values.contains(&s)),
    }
}

/// Checks `obj` against `schema`: every required field present, no field outside the schema, each of its type.
fn check_schema(obj: &Value, schema: &[Field]) -> Result<(), String> {
    let map = obj.as_object().ok_or("not an object")?;
    for (name, kind, required) in schema {
        match map.get(*name) {
            None if *required => return Err(format!("required field `{name}` missing")),
            None => {}
            Some(v) if !kind_ok(v, *kind) => return Err(format!("field `{name}` = {v} is not {kind:?}")),
            Some(_) => {}
        }
    }
    if let Some(extra) = map.keys().find(|k| !schema.iter().any(|(n, _, _)| n == k)) {
        return Err(format!("undocumented field `{extra}`"));
    }
    Ok(())
}

/// Every object key path of `v` (`a.b`, array elements as `a[]`).
fn key_paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(p.clone());
                key_paths(v, &p, out);
            }
        }
        Value::Array(a) => {
            for v in a {
                key_paths(v, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

// ---------------------------------------------------------------------------------------------------------
// The check of one log
// ---------------------------------------------------------------------------------------------------------

/// What was seen across the logs.
#[derive(Default)]
struct Seen {
    events: BTreeMap<String, usize>,
    extension_frames: BTreeMap<String, usize>,
    packet_types: BTreeSet<String>,
    /// Every `frame_type` in a packet event, qlog 0.3 and extension frames alike.
    frame_types: BTreeSet<String>,
    path_states: BTreeSet<String>,
    abandoned_losses: usize,
}

/// Checks one log; returns one line per problem.
fn check_log(name: &str, bytes: &[u8], seen: &mut Seen) -> Vec<String> {
    let mut errors = Vec::new();
    assert_eq!(
        bytes.first(),
        Some(&0x1e),
        "{name}: starts with a record separator"
    );
    let records: Vec<&[u8]> = bytes.split(|b| *b == 0x1e).skip(1).collect();
    assert!(records.len() > 1, "{name}: a header and events");

    // The header.
    let header: Value = serde_json::from_slice(records[0]).unwrap();
    match serde_json::from_slice::<qlog::QlogSeq>(records[0]) {
        Err(e) => errors.push(format!("{name}: header: qlog::QlogSeq rejects it: {e}")),
        Ok(h) => {
            assert_eq!(h.qlog_version, qlog::QLOG_VERSION, "{name}");
            assert_eq!(h.qlog_format, "JSON-SEQ", "{name}");
            let side = if name.ends_with("_client.sqlog") {
                qlog::VantagePointType::Client
            } else {
                qlog::VantagePointType::Server
            };
            assert_eq!(h.trace.vantage_point.ty, side, "{name}");
            let again = serde_json::to_value(&h).unwrap();
            errors.extend(dropped_fields(&header, &again).into_iter().filter_map(|p| {
                match HEADER_EXTENSION_FIELDS.iter().find(|(f, _)| *f == p) {
                    Some((_, k)) if lookup(&header, &p).is_some_and(|v| kind_ok(v, *k)) => None,
                    Some((_, k)) => Some(format!("{name}: header: extension field `{p}` is not {k:?}")),
                    None => Some(format!(
                        "{name}: header: field `{p}` is not read by the qlog crate"
                    )),
                }
            }));
        }
    }

    // The events.
    let mut typed = 0;
    for (i, raw) in records.iter().enumerate().skip(1) {
        let at = format!("{name} record {i}");
        let mut ev: Value = match serde_json::from_slice(raw) {
            Ok(v) => v,
            Err(e) => {
                errors.push(format!("{at}: not JSON: {e}"));
                continue;
            }
        };
        let ev_name = ev["name"].as_str().unwrap_or_default().to_owned();
        *seen.events.entry(ev_name.clone()).or_default() += 1;
        if let Some(schema) = extension_event(&ev_name) {
            // Not a qlog 0.3 event: the documented schema, and the generic qlog event shape.
            if let Err(e) = check_schema(&ev["data"], schema) {
                errors.push(format!("{at}: extension event {ev_name}: {e}"));
            }
            if let Err(e) = serde_json::from_value::<qlog::events::JsonEvent>(ev.clone()) {
                errors.push(format!("{at}: {ev_name}: not a generic qlog event: {e}"));
            }
            if ev_name == "multipath:path_updated" {
                seen.path_states
                    .insert(ev["data"]["state"].as_str().unwrap_or_default().to_owned());
            }
            continue;
        }
        if let Some(t) = lookup(&ev, "data.header.packet_type").and_then(Value::as_str) {
            seen.packet_types.insert(t.to_owned());
        }
        if lookup(&ev, "data.path_abandoned").is_some() {
            seen.abandoned_losses += 1;
        }
        if let Some(frames) = lookup(&ev, "data.frames").and_then(Value::as_array) {
            for f in frames {
                seen.frame_types
                    .insert(f["frame_type"].as_str().unwrap_or_default().to_owned());
            }
        }
        // Multipath frames out of `frames`, each checked against its schema.
        let mut had_extension_frames = false;
        if let Some(frames) = ev.pointer_mut("/data/frames").and_then(Value::as_array_mut) {
            let mut problems = Vec::new();
            let before = frames.len();
            frames.retain(|f| {
                let ty = f["frame_type"].as_str().unwrap_or_default();
                let Some(schema) = extension_frame(ty) else {
                    return true;
                };
                *seen.extension_frames.entry(ty.to_owned()).or_default() += 1;
                if let Err(e) = check_schema(f, schema) {
                    problems.push(format!("{at}: {ev_name}: extension frame {ty}: {e}"));
                }
                false
            });
            had_extension_frames = frames.len() != before;
            errors.extend(problems);
        }
        // The rest: qlog 0.3, as the crate reads it.
        let parsed = match serde_json::from_value::<qlog::events::Event>(ev.clone()) {
            Ok(p) => p,
            Err(e) => {
                errors.push(format!(
                    "{at}: qlog::events::Event rejects {ev_name}: {e}\n    {ev}"
                ));
                continue;
            }
        };
        if !had_extension_frames {
            typed += 1;
        }
        let again = serde_json::to_value(&parsed).unwrap();
        for p in dropped_fields(&ev, &again) {
            match EXTENSION_FIELDS.iter().find(|(n, f, _)| *n == ev_name && *f == p) {
                Some((_, _, k)) if lookup(&ev, &p).is_some_and(|v| kind_ok(v, *k)) => {}
                Some((_, _, k)) => errors.push(format!("{at}: {ev_name}: extension field `{p}` is not {k:?}")),
                None => errors.push(format!(
                    "{at}: {ev_name}: field `{p}` is not read by the qlog crate (neither qlog 0.3 nor a documented extension)"
                )),
            }
        }
        // Extension fields the crate keeps (`ex_data`) are checked for their type too.
        for (n, f, k) in EXTENSION_FIELDS.iter().filter(|(n, _, _)| *n == ev_name) {
            if let Some(v) = lookup(&ev, f) {
                if !kind_ok(v, *k) {
                    errors.push(format!("{at}: {n}: extension field `{f}` = {v} is not {k:?}"));
                }
            }
        }
    }

    // The crate's own streaming reader: the records that parsed (without multipath frames) come back typed.
    let reader = qlog::reader::QlogSeqReader::new(Box::new(std::io::Cursor::new(bytes.to_vec()))).unwrap();
    let read: Vec<qlog::reader::Event> = reader.collect();
    let reader_typed = read
        .iter()
        .filter(|e| matches!(e, qlog::reader::Event::Qlog(_)))
        .count();
    assert_eq!(
        read.len(),
        records.len() - 1,
        "{name}: QlogSeqReader read every event"
    );
    assert_eq!(
        reader_typed, typed,
        "{name}: QlogSeqReader reads as typed events exactly those without multipath frames"
    );
    errors
}

/// Key paths of `ours` that `again` (the crate's reading of it, serialized) lacks.
fn dropped_fields(ours: &Value, again: &Value) -> Vec<String> {
    let (mut a, mut b) = (BTreeSet::new(), BTreeSet::new());
    key_paths(ours, "", &mut a);
    key_paths(again, "", &mut b);
    a.difference(&b).cloned().collect()
}

#[test]
fn every_event_mpquic_writes_is_read_by_the_qlog_crate() {
    let logs = Logs::default();
    multipath_scenario(&logs);
    zero_rtt_scenario(&logs);
    let logs = logs.take();
    // multipath: one connection, two sides; zero_rtt: two connections, two sides each.
    assert_eq!(logs.len(), 6, "{:?}", logs.keys().collect::<Vec<_>>());

    let mut seen = Seen::default();
    let mut errors = Vec::new();
    for (name, bytes) in &logs {
        errors.extend(check_log(name, bytes, &mut seen));
    }
    eprintln!(
        "events {:?}\nmultipath frames {:?}\nframe types {:?}\npacket types {:?}\npath states {:?}\nabandoned losses {}",
        seen.events,
        seen.extension_frames,
        seen.frame_types,
        seen.packet_types,
        seen.path_states,
        seen.abandoned_losses
    );
    assert!(
        errors.is_empty(),
        "{} problems:\n{}",
        errors.len(),
        errors.join("\n")
    );

    // The scenarios reached what they were written for.
    for e in [
        "transport:parameters_set",
        "transport:packet_sent",
        "transport:packet_received",
        "recovery:packet_lost",
        "recovery:metrics_updated",
        "connectivity:connection_state_updated",
        "connectivity:mtu_updated",
        "multipath:path_updated",
        "mpquic:reassembly_updated",
    ] {
        assert!(seen.events.contains_key(e), "no {e} event: {:?}", seen.events);
    }
    for f in [
        "path_ack",
        "path_abandon",
        "path_new_connection_id",
        "path_retire_connection_id",
        "path_status_backup",
        "path_status_available",
        "max_path_id",
    ] {
        assert!(
            seen.extension_frames.contains_key(f),
            "no {f} frame: {:?}",
            seen.extension_frames
        );
    }
    // The qlog 0.3 frames the scenarios send, each read by the crate in some packet event.
    for f in [
        "padding",
        "ping",
        "ack",
        "crypto",
        "stream",
        "new_token",
        "handshake_done",
        "path_challenge",
        "path_response",
        "max_data",
        "max_stream_data",
        "datagram",
        "reset_stream",
        "stop_sending",
        "connection_close",
    ] {
        assert!(
            seen.frame_types.contains(f),
            "no {f} frame: {:?}",
            seen.frame_types
        );
    }
    for t in ["initial", "handshake", "0RTT", "1RTT"] {
        assert!(
            seen.packet_types.contains(t),
            "no {t} packet: {:?}",
            seen.packet_types
        );
    }
    for s in ["new", "validated", "backup", "available", "migrated", "abandoned"] {
        assert!(
            seen.path_states.contains(s),
            "no path {s}: {:?}",
            seen.path_states
        );
    }
    assert!(
        seen.abandoned_losses > 0,
        "no packet lost with its abandoned path"
    );
}

/// The checker fails on what the crate rejects, and on fields it would drop: a record with a misspelt state,
/// one with an undocumented field, and an extension frame missing a field, each named in the errors.
#[test]
fn the_checker_names_rejected_events_and_unread_fields() {
    let header = r#"{"qlog_version":"0.3","qlog_format":"JSON-SEQ","trace":{"vantage_point":{"type":"client"},"common_fields":{"ODCID":"ab","time_format":"relative","reference_time":0.0}}}"#;
    let records = [
        header,
        // qlog 0.3 has no state "handshake_done": the crate rejects the event.
        r#"{"time":1.0,"name":"connectivity:connection_state_updated","data":{"new":"handshake_done"}}"#,
        // `colour` is neither qlog 0.3 nor a documented extension: the crate would drop it.
        r#"{"time":2.0,"name":"connectivity:mtu_updated","data":{"new":1300,"colour":"red"}}"#,
        // PATH_ABANDON without its error code.
        r#"{"time":3.0,"name":"transport:packet_sent","data":{"header":{"packet_type":"1RTT","packet_number":1,"path_id":0},"frames":[{"frame_type":"path_abandon","path_id":1}]}}"#,
        // A documented extension event with a state it does not document.
        r#"{"time":4.0,"name":"multipath:path_updated","data":{"path_id":1,"state":"sleeping","remote":"10.0.0.2:443"}}"#,
        // A valid event: no error.
        r#"{"time":5.0,"name":"recovery:packet_lost","data":{"header":{"packet_type":"1RTT","packet_number":9,"path_id":1},"path_abandoned":true}}"#,
    ];
    let mut log = Vec::new();
    for r in records {
        log.push(0x1e);
        log.extend_from_slice(r.as_bytes());
        log.push(b'\n');
    }
    let errors = check_log("t/x_client.sqlog", &log, &mut Seen::default());
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert!(errors[0].contains("record 1") && errors[0].contains("connection_state_updated"));
    assert!(errors[1].contains("record 2") && errors[1].contains("`data.colour`"));
    assert!(errors[2].contains("path_abandon") && errors[2].contains("`error_code`"));
    assert!(errors[3].contains("path_updated") && errors[3].contains("sleeping"));
}
