//! The connection's qlog events ([`crate::proto::qlog`] writes them): what is logged, when, and with which
//! fields. Every hook starts with one branch on `self.qlog`: without a
//! [`QlogFactory`](crate::proto::qlog::QlogFactory) nothing is formatted or allocated.
//!
//! Events (qlog 0.3 names; `path_id` is the multipath addition, draft-ietf-quic-multipath-21):
//! - `transport:packet_sent` / `transport:packet_received` (hooks in `send.rs` / `recv.rs`, one per packet
//!   sealed / decrypted and not a duplicate): `header` {`packet_type`, `packet_number`, `path_id`}, `raw`
//!   {`length`, `payload_length`}, `frames` (decoded again from the plaintext, `qlog::frames`).
//! - `recovery:packet_lost` (`count_lost`, and `abandon_path` for the packets of an abandoned path): `header`
//!   {`packet_type`, `packet_number`, `path_id`}, `trigger` (`reordering_threshold` or `time_threshold`); a
//!   path's packets that count as lost when it is abandoned have no `trigger` but `path_abandoned: true`.
//! - `recovery:metrics_updated`, per path: `path_id`, `congestion_window`, `bytes_in_flight`,
//!   `smoothed_rtt`, `min_rtt`, `latest_rtt`, `rtt_variance` (ms), `pto_count`, `ssthresh` and
//!   `pacing_rate` when the controller has them. Written when the window or an RTT estimate changed, or when
//!   bytes in flight changed through received ACKs or a timer (not after every packet sent).
//! - `connectivity:mtu_updated` (`mtu::apply_mtu_change`, when path MTU discovery changes a path's
//!   maximum datagram size): `old`, `new` (bytes of UDP payload), `done` (the search is complete) and
//!   `path_id`. qlog 0.3's name; later qlog drafts call it `quic:mtu_updated` with the same fields.
//! - `connectivity:connection_state_updated`: `old`, `new` ∈ `handshake_completed`, `handshake_confirmed`,
//!   `closing`, `draining`, `closed` (spelled as quiche's `qlog` crate reads them).
//! - `transport:parameters_set`: `owner` `local` (when the connection is created) or `remote` (when the
//!   peer's parameters are applied), the RFC 9000 §18.2 parameters by their names, an empty
//!   `unknown_parameters` list, and the extension field `initial_max_path_id`.
//! - `multipath:path_updated` (a custom event: qlog has no path life-cycle event for multipath yet):
//!   `path_id`, `state` ∈ `new`, `validated`, `available`, `backup`, `migrated`, `abandoned`, `closed`,
//!   `remote` (and `local` once known).
//! - `mpquic:reassembly_updated` (a custom event: qlog has no receive-buffer event): the receiver
//!   statistics of [`ReassemblyStats`](crate::proto::streams::ReassemblyStats) under their field names
//!   (`out_of_order_bytes`, `max_out_of_order_bytes`, `unread_bytes`, `max_unread_bytes`, `bytes`,
//!   `out_of_order`, and `hol_delay_mean`, `hol_delay_p95`, `hol_delay_max` in ms), plus the connection
//!   receive window `recv_window` and the advertised connection limit `max_data`. Written when any of them
//!   changed, at most once per [`REASSEMBLY_QLOG_INTERVAL`] of connection time (and once more when the
//!   connection is dropped), so a bulk transfer adds at most 100 records per second.
//!
//! State, parameter, path and metrics events come from comparing the connection with a snapshot at the start
//! of every `handle_datagram`, `handle_timeout` and `poll_transmit` call (and when the connection is
//! dropped); they carry the time of the call that made the change (the latest `now`). This keeps the hooks
//! out of the state machine's many transition sites.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::cc::PathId;
use crate::proto::crypto::Level;
use crate::proto::qlog::{Obj, QlogStream, write_frames};
use crate::proto::recovery::PacketRecord;
use crate::proto::streams::ReassemblyStats;
use crate::proto::transport_params::{DEFAULT_ACK_DELAY_EXPONENT, TransportParameters};
use crate::sched::PathStatus;

use super::close::State;
use super::frames_out::{FrameRecord, Records};
use super::{Connection, NewConnection};

/// The `trigger` argument of [`Connection::qlog_packets_lost`] for the packets of an abandoned path; logged as
/// the extension field `"path_abandoned": true` (qlog 0.3's `PacketLost` triggers are only
/// `reordering_threshold`, `time_threshold` and `pto_expired`).
pub(super) const PATH_ABANDONED: &str = "path_abandoned";

/// The shortest time between two `mpquic:reassembly_updated` records.
pub(super) const REASSEMBLY_QLOG_INTERVAL: Duration = Duration::from_millis(10);

/// The receiver figures of one `mpquic:reassembly_updated` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ReassemblySnap {
    stats: ReassemblyStats,
    recv_window: u64,
    max_data: u64,
}

/// The API call a snapshot comparison follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Call {
    /// `handle_datagram`: ACKs may have changed bytes in flight.
    Receive,
    /// `handle_timeout`: losses may have.
    Timeout,
    /// `poll_transmit`: bytes in flight grew by the packets sent (not logged as metrics).
    Transmit,
}

/// A connection's qlog and the state last logged.
#[derive(Debug)]
pub(super) struct Qlog {
    stream: QlogStream,
    /// The call whose changes the next snapshot comparison sees.
    prev_call: Call,
    handshake_complete: bool,
    handshake_confirmed: bool,
    /// The closing state last logged.
    closing: Option<&'static str>,
    remote_params: bool,
    paths: BTreeMap<PathId, PathSnap>,
    /// The last `mpquic:reassembly_updated` record and when it was written.
    reassembly: Option<(Instant, ReassemblySnap)>,
}

/// What was last logged about a path.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PathSnap {
    validated: bool,
    backup: bool,
    abandoned: bool,
    remote: SocketAddr,
    metrics: Metrics,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Metrics {
    cwnd: u64,
    bytes_in_flight: u64,
    srtt: Duration,
    rttvar: Duration,
    min_rtt: Duration,
    latest_rtt: Duration,
}

impl Metrics {
    /// Whether `self` differs from `old` in a way worth an event.
    fn changed(&self, old: &Metrics, count_in_flight: bool) -> bool {
        let rtt = (self.srtt, self.rttvar, self.min_rtt, self.latest_rtt)
            != (old.srtt, old.rttvar, old.min_rtt, old.latest_rtt);
        self.cwnd != old.cwnd || rtt || (count_in_flight && self.bytes_in_flight != old.bytes_in_flight)
    }
}

fn packet_type(level: Level) -> &'static str {
    match level {
        Level::Initial => "initial",
        Level::Handshake => "handshake",
        Level::ZeroRtt => "0RTT",
        Level::OneRtt => "1RTT",
    }
}

fn header(o: &mut Obj<'_>, ty: &str, pn: u64, path: PathId) {
    o.obj("header", |o| {
        o.str("packet_type", ty);
        o.u64("packet_number", pn);
        o.u64("path_id", u64::from(path.0));
    });
}

/// The packet type of a lost packet, from what it carried (CRYPTO and ACK records know their level).
fn lost_packet_type(records: &Records) -> &'static str {
    records
        .iter()
        .find_map(|r| match r {
            FrameRecord::Crypto { level, .. } | FrameRecord::Ack { level, .. } => Some(packet_type(*level)),
            _ => None,
        })
        .unwrap_or("1RTT")
}

fn write_params(o: &mut Obj<'_>, owner: &str, p: &TransportParameters) {
    o.str("owner", owner);
    if let Some(c) = &p.original_destination_connection_id {
        o.hex("original_destination_connection_id", c);
    }
    if let Some(c) = &p.initial_source_connection_id {
        o.hex("initial_source_connection_id", c);
    }
    if let Some(c) = &p.retry_source_connection_id {
        o.hex("retry_source_connection_id", c);
    }
    if let Some(t) = &p.stateless_reset_token {
        o.hex("stateless_reset_token", &t.0);
    }
    o.bool("disable_active_migration", p.disable_active_migration);
    o.u64("max_idle_timeout", p.max_idle_timeout.into_inner());
    o.u64("max_udp_payload_size", p.max_udp_payload_size.into_inner());
    o.u64("ack_delay_exponent", p.ack_delay_exponent.into_inner());
    o.u64("max_ack_delay", p.max_ack_delay.into_inner());
    o.u64(
        "active_connection_id_limit",
        p.active_connection_id_limit.into_inner(),
    );
    o.u64("initial_max_data", p.initial_max_data.into_inner());
    o.u64(
        "initial_max_stream_data_bidi_local",
        p.initial_max_stream_data_bidi_local.into_inner(),
    );
    o.u64(
        "initial_max_stream_data_bidi_remote",
        p.initial_max_stream_data_bidi_remote.into_inner(),
    );
    o.u64(
        "initial_max_stream_data_uni",
        p.initial_max_stream_data_uni.into_inner(),
    );
    o.u64(
        "initial_max_streams_bidi",
        p.initial_max_streams_bidi.into_inner(),
    );
    o.u64("initial_max_streams_uni", p.initial_max_streams_uni.into_inner());
    if let Some(v) = p.max_datagram_frame_size {
        o.u64("max_datagram_frame_size", v.into_inner());
    }
    if let Some(v) = p.initial_max_path_id {
        o.u64("initial_max_path_id", u64::from(v));
    }
    // qlog 0.3: the parameters the schema does not name; every parameter mpquic knows is named above.
    o.arr("unknown_parameters", |_| {});
    if let Some(pa) = &p.preferred_address {
        o.obj("preferred_address", |o| {
            // RFC 9000 §18.2: "A server that chooses to send a preferred address of only one address family
            // [...] sends [...] an all-zero address and port (0.0.0.0:0 or [::]:0) for the other family";
            // qlog 0.3 requires all four fields, so the absent family is logged as the wire carries it.
            let v4 = pa
                .ipv4
                .map_or((std::net::Ipv4Addr::UNSPECIFIED, 0), |a| (*a.ip(), a.port()));
            let v6 = pa
                .ipv6
                .map_or((std::net::Ipv6Addr::UNSPECIFIED, 0), |a| (*a.ip(), a.port()));
            o.str("ip_v4", &v4.0.to_string());
            o.u64("port_v4", u64::from(v4.1));
            o.str("ip_v6", &v6.0.to_string());
            o.u64("port_v6", u64::from(v6.1));
            o.hex("connection_id", &pa.connection_id);
            o.hex("stateless_reset_token", &pa.stateless_reset_token.0);
        });
    }
}

fn path_event(
    q: &mut QlogStream,
    now: Instant,
    id: PathId,
    state: &str,
    remote: SocketAddr,
    local: Option<SocketAddr>,
) {
    q.event(now, "multipath:path_updated", |o| {
        o.u64("path_id", u64::from(id.0));
        o.str("state", state);
        o.str("remote", &remote.to_string());
        if let Some(l) = local {
            o.str("local", &l.to_string());
        }
    });
}

impl Connection {
    /// Opens the qlog of a new connection (if [`TransportConfig::qlog`](super::TransportConfig) is set) and
    /// logs our transport parameters.
    pub(super) fn qlog_open(new: &NewConnection, local_params: &TransportParameters) -> Option<Box<Qlog>> {
        let factory = new.config.qlog.as_ref()?;
        let mut stream = QlogStream::open(factory, new.side, &new.orig_dcid, new.now)?;
        stream.event(new.now, "transport:parameters_set", |o| {
            write_params(o, "local", local_params)
        });
        Some(Box::new(Qlog {
            stream,
            prev_call: Call::Transmit,
            handshake_complete: false,
            handshake_confirmed: false,
            closing: None,
            remote_params: false,
            paths: BTreeMap::new(),
            reassembly: None,
        }))
    }

    /// Ends the log if its writer failed.
    fn qlog_check(&mut self) {
        if self.qlog.as_ref().is_some_and(|q| q.stream.failed()) {
            self.qlog = None;
        }
    }

    /// `transport:packet_sent`: `buf[payload_start..]` is the packet's plaintext payload (frames and padding,
    /// before the AEAD tag is added), `len` its size on the wire.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn qlog_packet_sent(
        &mut self,
        now: Instant,
        level: Level,
        path: PathId,
        pn: u64,
        buf: &[u8],
        payload_start: usize,
        len: usize,
    ) {
        let Some(q) = self.qlog.as_deref_mut() else {
            return;
        };
        let payload = buf.get(payload_start..).unwrap_or_default();
        q.stream.event(now, "transport:packet_sent", |o| {
            header(o, packet_type(level), pn, path);
            o.obj("raw", |o| {
                o.u64("length", len as u64);
                o.u64("payload_length", payload.len() as u64);
            });
            o.arr("frames", |a| {
                write_frames(a, payload, DEFAULT_ACK_DELAY_EXPONENT as u8)
            });
        });
        self.qlog_check();
    }

    /// `transport:packet_received`: `payload` is the decrypted payload, after a header of `header_len` bytes.
    pub(super) fn qlog_packet_received(
        &mut self,
        now: Instant,
        level: Level,
        path: PathId,
        pn: u64,
        header_len: usize,
        payload: &[u8],
    ) {
        let Some(q) = self.qlog.as_deref_mut() else {
            return;
        };
        let exponent = match level {
            Level::OneRtt => self.peer_ack_delay_exponent,
            _ => DEFAULT_ACK_DELAY_EXPONENT as u8,
        };
        // The AEAD tag of every QUIC v1 suite is 16 bytes.
        let len = header_len + payload.len() + 16;
        q.stream.event(now, "transport:packet_received", |o| {
            header(o, packet_type(level), pn, path);
            o.obj("raw", |o| {
                o.u64("length", len as u64);
                o.u64("payload_length", payload.len() as u64);
            });
            o.arr("frames", |a| write_frames(a, payload, exponent));
        });
        self.qlog_check();
    }

    /// `recovery:packet_lost` for each packet of `lost` (sent on `path`). Without a `trigger`, the packet
    /// threshold or the time threshold declared it lost (RFC 9002 §6.1), told apart as the loss detection did.
    pub(super) fn qlog_packets_lost(
        &mut self,
        now: Instant,
        path: PathId,
        lost: &[PacketRecord<Records>],
        trigger: Option<&'static str>,
    ) {
        let Some(q) = self.qlog.as_deref_mut() else {
            return;
        };
        let rtt = self.paths.get(&path).map(|p| p.recovery.rtt());
        let lost_before = rtt.and_then(|r| now.checked_sub(r.loss_delay()));
        for r in lost {
            let trigger = trigger.unwrap_or(if lost_before.is_some_and(|t| r.time_sent <= t) {
                "time_threshold"
            } else {
                "reordering_threshold"
            });
            q.stream.event(now, "recovery:packet_lost", |o| {
                header(o, lost_packet_type(&r.frames), r.pn, path);
                match trigger {
                    // qlog 0.3 has no trigger for this: the extension field says why instead.
                    PATH_ABANDONED => o.bool("path_abandoned", true),
                    t => o.str("trigger", t),
                }
            });
        }
        self.qlog_check();
    }

    /// `connectivity:mtu_updated` for `path`.
    pub(super) fn qlog_mtu_updated(&mut self, now: Instant, path: PathId, change: super::pmtud::MtuChange) {
        let Some(q) = self.qlog.as_deref_mut() else {
            return;
        };
        q.stream.event(now, "connectivity:mtu_updated", |o| {
            o.u64("old", u64::from(change.old));
            o.u64("new", u64::from(change.new));
            o.bool("done", change.done);
            o.u64("path_id", u64::from(path.0));
        });
        self.qlog_check();
    }

    /// Logs what changed since the previous call (state, parameters, paths, metrics); `call` is the API call
    /// that starts now. Called at every poll: without a qlog it is one test, inlined at the caller.
    #[inline]
    pub(super) fn qlog_sync(&mut self, call: Call) {
        if self.qlog.is_some() {
            self.qlog_sync_log(call);
        }
    }

    /// [`Connection::qlog_sync`] with a qlog.
    #[inline(never)]
    fn qlog_sync_log(&mut self, call: Call) {
        let Some(mut q) = self.qlog.take() else {
            return;
        };
        let now = self.last_now;
        self.qlog_sync_state(&mut q, now);
        self.qlog_sync_paths(&mut q, now);
        self.qlog_sync_reassembly(&mut q, now, false);
        q.prev_call = call;
        if q.closing.is_some() {
            q.stream.flush();
        }
        if !q.stream.failed() {
            self.qlog = Some(q);
        }
    }

    fn qlog_sync_state(&self, q: &mut Qlog, now: Instant) {
        let mut current = q.closing.or(if q.handshake_confirmed {
            Some("handshake_confirmed")
        } else if q.handshake_complete {
            Some("handshake_completed")
        } else {
            None
        });
        let mut transition = |q: &mut Qlog, new: &'static str| {
            q.stream.event(now, "connectivity:connection_state_updated", |o| {
                if let Some(old) = current {
                    o.str("old", old);
                }
                o.str("new", new);
            });
            current = Some(new);
        };
        if self.handshake_complete && !q.handshake_complete {
            q.handshake_complete = true;
            transition(q, "handshake_completed");
        }
        if self.handshake_confirmed && !q.handshake_confirmed {
            q.handshake_confirmed = true;
            transition(q, "handshake_confirmed");
        }
        let closing = match self.state {
            State::Handshake | State::Established => None,
            State::Closing { .. } => Some("closing"),
            State::Draining { .. } => Some("draining"),
            State::Drained => Some("closed"),
        };
        if let Some(c) = closing.filter(|c| q.closing != Some(*c)) {
            q.closing = Some(c);
            transition(q, c);
        }
        if !q.remote_params {
            if let Some(p) = &self.peer_params {
                q.remote_params = true;
                q.stream
                    .event(now, "transport:parameters_set", |o| write_params(o, "remote", p));
            }
        }
    }

    /// `mpquic:reassembly_updated` when the receiver figures changed, at most once per
    /// [`REASSEMBLY_QLOG_INTERVAL`] unless `force`. The interval is checked first, so that most calls
    /// cost one comparison.
    fn qlog_sync_reassembly(&self, q: &mut Qlog, now: Instant, force: bool) {
        if let Some((at, _)) = q.reassembly {
            if !force && now.saturating_duration_since(at) < REASSEMBLY_QLOG_INTERVAL {
                return;
            }
        }
        let snap = ReassemblySnap {
            stats: self.streams.reassembly_stats(),
            recv_window: self.streams.conn_recv_window(),
            max_data: self.streams.conn_recv_limit(),
        };
        let changed = match q.reassembly {
            Some((_, last)) => last != snap,
            // Nothing before the first stream byte.
            None => snap.stats != ReassemblyStats::default(),
        };
        if !changed {
            return;
        }
        q.reassembly = Some((now, snap));
        let r = snap.stats;
        q.stream.event(now, "mpquic:reassembly_updated", |o| {
            o.u64("out_of_order_bytes", r.out_of_order_bytes);
            o.u64("max_out_of_order_bytes", r.max_out_of_order_bytes);
            o.u64("unread_bytes", r.unread_bytes);
            o.u64("max_unread_bytes", r.max_unread_bytes);
            o.u64("bytes", r.bytes);
            o.u64("out_of_order", r.out_of_order);
            o.ms("hol_delay_mean", r.hol_delay_mean);
            o.ms("hol_delay_p95", r.hol_delay_p95);
            o.ms("hol_delay_max", r.hol_delay_max);
            o.u64("recv_window", snap.recv_window);
            o.u64("max_data", snap.max_data);
        });
    }

    fn qlog_sync_paths(&self, q: &mut Qlog, now: Instant) {
        let count_in_flight = q.prev_call != Call::Transmit;
        for p in self.paths.values() {
            let id = &p.id;
            let rtt = p.recovery.rtt();
            let snap = PathSnap {
                validated: p.validated,
                backup: p.status == PathStatus::Backup,
                abandoned: p.abandoned_at.is_some(),
                remote: p.remote,
                metrics: Metrics {
                    cwnd: self.cc.window(*id),
                    bytes_in_flight: p.recovery.bytes_in_flight(),
                    srtt: rtt.smoothed(),
                    rttvar: rtt.var(),
                    min_rtt: rtt.min(),
                    latest_rtt: rtt.latest(),
                },
            };
            let old = q.paths.insert(*id, snap);
            if old == Some(snap) {
                continue;
            }
            let stream = &mut q.stream;
            let mut changed = |state: &str| path_event(stream, now, *id, state, p.remote, p.local);
            match old {
                None => {
                    changed("new");
                    if snap.validated {
                        changed("validated");
                    }
                    if snap.backup {
                        changed("backup");
                    }
                }
                Some(o) => {
                    if snap.remote != o.remote {
                        changed("migrated");
                    }
                    if snap.validated && !o.validated {
                        changed("validated");
                    }
                    if snap.backup != o.backup {
                        changed(if snap.backup { "backup" } else { "available" });
                    }
                    if snap.abandoned && !o.abandoned {
                        changed("abandoned");
                    }
                }
            }
            if old.is_none_or(|o| snap.metrics.changed(&o.metrics, count_in_flight)) {
                let m = snap.metrics;
                let cc = self.cc.metrics(*id);
                q.stream.event(now, "recovery:metrics_updated", |o| {
                    o.u64("path_id", u64::from(id.0));
                    o.u64("congestion_window", m.cwnd);
                    o.u64("bytes_in_flight", m.bytes_in_flight);
                    o.ms("smoothed_rtt", m.srtt);
                    o.ms("min_rtt", m.min_rtt);
                    o.ms("latest_rtt", m.latest_rtt);
                    o.ms("rtt_variance", m.rttvar);
                    o.u64("pto_count", u64::from(p.recovery.pto_count()));
                    if let Some(t) = cc.as_ref().and_then(|c| c.ssthresh) {
                        o.u64("ssthresh", t);
                    }
                    if let Some(r) = self.cc.pacing_rate(*id) {
                        // qlog's pacing_rate is in bits per second.
                        o.u64("pacing_rate", r.saturating_mul(8));
                    }
                });
            }
        }
        let gone: Vec<(PathId, SocketAddr)> = q
            .paths
            .iter()
            .filter(|(id, _)| !self.paths.contains(id))
            .map(|(id, s)| (*id, s.remote))
            .collect();
        for (id, remote) in gone {
            q.paths.remove(&id);
            path_event(&mut q.stream, now, id, "closed", remote, None);
        }
    }
}

impl Drop for Connection {
    /// Logs the last changes and flushes the qlog.
    fn drop(&mut self) {
        if self.qlog.is_some() {
            self.qlog_sync(Call::Transmit);
            if let Some(mut q) = self.qlog.take() {
                // The last receiver figures, even within the rate bound.
                self.qlog_sync_reassembly(&mut q, self.last_now, true);
                q.stream.flush();
            }
        }
    }
}
