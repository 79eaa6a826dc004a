//! Sending: [`Connection::poll_transmit`] assembles one datagram per call.
//!
//! The loop is short: long-header work (CRYPTO, ACKs, probes of Initial and Handshake) goes on path 0,
//! coalesced Initial → Handshake → 1-RTT; otherwise path-bound work (ACKs due, PATH_RESPONSE, probes) goes on
//! its path; otherwise the scheduler picks the path for new data from a snapshot of every path. Packet
//! content order: ACK, CONNECTION_CLOSE, PATH_RESPONSE, HANDSHAKE_DONE, stream control frames, CRYPTO, STREAM,
//! DATAGRAM, PING for a probe that carries nothing else.

use std::time::Instant;

use bytes::BufMut;

use crate::cc::PathId;
use crate::proto::coding::VarInt;
use crate::proto::crypto::Level;
use crate::proto::error::TransportErrorCode;
use crate::proto::frame::{ApplicationClose, ConnectionClose, Crypto, Datagram, Frame};
use crate::proto::packet::{MIN_INITIAL_DATAGRAM_SIZE, OutgoingHeader};
use crate::proto::packet_number;
use crate::proto::recovery::{OutgoingPacket, SpaceId};
use crate::proto::transport_params::Side;

use super::close::{CloseFrame, State};
use super::frames_out::{FrameRecord, Records};
use super::scheduling::DataPlan;
use super::spaces::level_index;
use super::{Connection, Event, Transmit};

/// AEAD tag length of every QUIC v1 suite.
pub(super) const TAG_LEN: usize = 16;

/// What one call to the packet builder produced.
#[derive(Debug, Clone, Copy, Default)]
struct Built {
    ack_eliciting: bool,
}

/// What a packet may carry beyond ACKs and control frames.
#[derive(Debug, Clone, Copy, Default)]
struct Allow {
    data: bool,
    probe: bool,
}

fn space_of(level: Level) -> SpaceId {
    match level {
        Level::Initial => SpaceId::Initial,
        Level::Handshake => SpaceId::Handshake,
        // RFC 9000 §12.3: "0-RTT and 1-RTT packets share the application data packet number space".
        Level::ZeroRtt | Level::OneRtt => SpaceId::Data,
    }
}

impl Connection {
    /// Writes the next datagram to send into `buf` (cleared first), or returns `None` if there is nothing to
    /// send now.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        buf.clear();
        self.poll_transmit_append(now, buf)
    }

    /// Like [`Connection::poll_transmit`], but appends the datagram to `buf` instead of clearing it: the
    /// datagram is `buf[old_len..old_len + transmit.size]`, where `old_len` is the length `buf` had. When
    /// nothing is sent (`None`), `buf` keeps its old length. A caller batching datagrams (GSO) can so have
    /// each one built and sealed in place in its batch buffer.
    pub fn poll_transmit_append(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.qlog_sync(super::qlog::Call::Transmit);
        let base = buf.len();
        let t = self.build_transmit(now, buf, base);
        if t.is_none() {
            buf.truncate(base);
        }
        t
    }

    fn build_transmit(&mut self, now: Instant, buf: &mut Vec<u8>, base: usize) -> Option<Transmit> {
        self.last_now = now;
        match &self.state {
            State::Draining { .. } | State::Drained => return None,
            State::Closing { send_pending, .. } => {
                if !*send_pending {
                    return None;
                }
                return self.transmit_close(now, buf, base);
            }
            State::Handshake | State::Established => {}
        }
        if let Some(r) = self.off_path_response() {
            let dcid = self.paths.get(&r.path)?.remote_cid;
            let off = OffPath {
                path: r.path,
                frame: Frame::PathResponse(r.data),
                dcid,
                to: r.to,
                local: r.local,
                budget: r.budget,
            };
            return self.transmit_off_path(now, off, buf, base);
        }
        if let Some((path, data, alt)) = self.next_alt_probe() {
            let off = OffPath {
                path,
                frame: Frame::PathChallenge(data),
                dcid: alt.dcid,
                to: alt.remote,
                local: alt.local,
                budget: u64::MAX,
            };
            return self.transmit_off_path(now, off, buf, base);
        }
        self.paths.clear_duplicate_on();
        let long_work = [Level::Initial, Level::Handshake].map(|l| self.long_has_work(now, l));
        let zero_rtt_work = self.zero_rtt_has_work();
        if !long_work.iter().any(|w| *w) && !zero_rtt_work {
            if let Some((path, size)) = self.mtu_probe_due(now) {
                if let Some(t) = self.transmit_mtu_probe(now, path, size, buf, base) {
                    return Some(t);
                }
            }
        }
        // A scheduler decision is carried out by a data packet (see `scheduling`): when path-bound work
        // claims the datagram for another path, the decision waits for the next datagram.
        let (path_id, data_path) = if long_work.iter().any(|w| *w) || zero_rtt_work {
            let plan = self.plan_with_bound_work(now, PathId(0), false);
            (PathId(0), plan == DataPlan::On(PathId(0)))
        } else if let Some(p) = self.take_duplicate() {
            (p, true)
        } else if let Some(p) = self.path_bound_work(now) {
            match self.plan_with_bound_work(now, p, true) {
                DataPlan::On(q) => (q, true),
                DataPlan::None => (p, false),
            }
        } else {
            let p = self.plan_data_only(now)?;
            (p, true)
        };
        let path = self.paths.get(&path_id)?;
        let budget = usize::try_from(path.amplification_budget()).unwrap_or(usize::MAX);
        let max_size = self.pto_probe_size_cap(path_id, usize::from(path.mtu).min(budget));
        if max_size < 64 {
            if let Some(p) = self.paths.get_mut(&path_id) {
                p.recovery.set_amplification_limited(now, true);
            }
            return None;
        }
        let one_rtt_work = self.one_rtt_has_work(now, path_id, data_path);
        // The levels with something to send, in coalescing order (no allocation: this runs per datagram).
        let long = |i: usize| path_id == PathId(0) && long_work.get(i).copied().unwrap_or(false);
        // RFC 9000 §12.2 order of coalesced packets: Initial, 0-RTT, Handshake, 1-RTT.
        let wanted = [
            (Level::Initial, long(0)),
            (Level::ZeroRtt, path_id == PathId(0) && zero_rtt_work),
            (Level::Handshake, long(1)),
            (Level::OneRtt, one_rtt_work),
        ];
        let levels = wanted.iter().filter(|(_, w)| *w).map(|(l, _)| *l);
        let needs_pad = levels.clone().next() == Some(Level::Initial);
        if needs_pad && max_size < MIN_INITIAL_DATAGRAM_SIZE {
            return None;
        }
        // Packets are built at absolute offsets of `buf`: the datagram starts at `base`.
        let limit = base + max_size;
        // RFC 9000 §8.2.1: "An endpoint MUST expand datagrams that contain a PATH_CHALLENGE frame to at least the
        // smallest allowed maximum datagram size of 1200 bytes, unless the anti-amplification limit for the path
        // does not permit sending a datagram of this size." (§8.2.2 says the same of PATH_RESPONSE.)
        let probe_pad = self
            .paths
            .get(&path_id)
            .is_some_and(|p| p.challenge.as_ref().is_some_and(|c| c.pending) || p.path_response.is_some());
        let mut ack_eliciting = false;
        let count = levels.clone().count();
        for (i, level) in levels.enumerate() {
            let last = i + 1 == count;
            let pad_to = if needs_pad && last {
                Some(base + MIN_INITIAL_DATAGRAM_SIZE)
            } else if probe_pad && last && level == Level::OneRtt {
                Some(base + MIN_INITIAL_DATAGRAM_SIZE.min(max_size))
            } else {
                None
            };
            if level == Level::ZeroRtt {
                ack_eliciting |= self.build_zero_rtt_packet(now, buf, limit, pad_to);
                continue;
            }
            let probe = self
                .paths
                .get(&path_id)
                .is_some_and(|p| p.recovery.pending_probes(space_of(level)) > 0)
                || (self.anti_deadlock_probe && level != Level::OneRtt);
            // RFC 9002 §6.2.4: probes may exceed the congestion window and should carry data — except on a path
            // that looks failed while others work: its data was moved to them, and its probes only test it.
            let allow = Allow {
                data: level == Level::OneRtt
                    && (data_path || probe)
                    && (!probe || !self.paths.suspect(path_id)),
                probe,
            };
            if let Some(b) = self.build_packet(now, level, path_id, buf, limit, pad_to, allow) {
                ack_eliciting |= b.ack_eliciting;
                if level != Level::OneRtt && allow.probe {
                    self.anti_deadlock_probe = false;
                }
                if level == Level::Handshake && self.side == Side::Client && !self.sent_handshake {
                    // RFC 9001 §4.9.1: "a client MUST discard Initial keys when it first sends a Handshake
                    // packet".
                    self.sent_handshake = true;
                    self.discard_initial(now);
                }
            }
        }
        if buf.len() <= base {
            return None;
        }
        if needs_pad && buf.len() < base + MIN_INITIAL_DATAGRAM_SIZE {
            // The last packet could not carry the padding: pad the datagram (the receiver drops the tail).
            buf.resize(base + MIN_INITIAL_DATAGRAM_SIZE, 0);
        }
        if ack_eliciting {
            self.on_ack_eliciting_sent(now);
        }
        self.finish_transmit(path_id, buf.len() - base)
    }

    fn finish_transmit(&mut self, path_id: PathId, size: usize) -> Option<Transmit> {
        let path = self.paths.get_mut(&path_id)?;
        path.bytes_sent = path.bytes_sent.saturating_add(size as u64);
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += size as u64;
        Some(Transmit {
            path: path_id,
            local: path.local,
            remote: path.remote,
            ecn: path.ecn.codepoint(),
            size,
            segment_size: None,
        })
    }

    /// Whether a long-header space has something to send now.
    fn long_has_work(&self, now: Instant, level: Level) -> bool {
        let Some(space) = self.spaces.get(level) else {
            return false;
        };
        if space.keys.is_none() || space.discarded {
            return false;
        }
        let crypto = self
            .crypto
            .get(level_index(level))
            .is_some_and(|c| c.has_pending());
        let ack = space.ack.has_new_packets() && (space.ack.wants_immediate_ack() || space.ack.ack_due(now));
        let probe = self
            .paths
            .get(&PathId(0))
            .is_some_and(|p| p.recovery.pending_probes(space_of(level)) > 0);
        // RFC 9002 §6.2.2.1: the client's anti-deadlock probe is a Handshake packet if it has Handshake keys,
        // otherwise a padded Initial.
        let has_hs = self
            .spaces
            .get(Level::Handshake)
            .is_some_and(|s| s.keys.is_some());
        let anti = self.anti_deadlock_probe
            && match level {
                Level::Handshake => true,
                Level::Initial => !has_hs,
                Level::ZeroRtt | Level::OneRtt => false,
            };
        let raw = level == Level::Initial && self.injected.has_initial();
        crypto || ack || probe || anti || raw
    }

    /// A path with an ACK due, a PATH_RESPONSE or a probe to send.
    fn path_bound_work(&self, now: Instant) -> Option<PathId> {
        if self.one_rtt.is_none() || !self.handshake_complete {
            return None;
        }
        if let Some(p) = self
            .paths
            .values()
            .find(|p| p.ack.has_new_packets() && (p.ack.wants_immediate_ack() || p.ack.ack_due(now)))
        {
            return Some(self.paths.ack_target(p.id, self.config.ack_path));
        }
        // Whether connection-level frames wait is asked once (a dozen queues), not once per path, and the
        // control path is looked for only when they do (both are pure: the answer is the same).
        let mut frames: Option<bool> = None;
        self.paths
            .values()
            .filter(|p| p.abandoned_at.is_none())
            .find(|p| {
                p.path_response.is_some()
                    || p.challenge.as_ref().is_some_and(|c| c.pending)
                    || p.recovery.pending_probes(SpaceId::Data) > 0
                    || (*frames.get_or_insert_with(|| self.has_connection_frames())
                        && p.id == self.paths.control_path())
            })
            .map(|p| p.id)
    }

    /// The next redundant copy that its path can send now: its STREAM data is queued again and the packet goes
    /// on that path. Copies whose path cannot send are dropped (best effort: the original is in flight).
    fn take_duplicate(&mut self) -> Option<PathId> {
        if self.one_rtt.is_none() || !self.handshake_complete {
            return None;
        }
        let cc = self.cc.as_ref();
        let (p, records) = self
            .paths
            .next_duplicate(|x| x.abandoned_at.is_none() && x.validated && x.cwnd_allows(cc))?;
        self.on_records_lost(records);
        Some(p)
    }

    /// Connection-level frames wait for the control path: HANDSHAKE_DONE, multipath and CID frames,
    /// NEW_TOKEN, stream control frames, 1-RTT CRYPTO data (and frames injected by tests).
    fn has_connection_frames(&self) -> bool {
        self.handshake_done_pending
            || self.paths.has_frames()
            || self.injected.has_one_rtt()
            || self.streams.has_control_frames()
            || self.has_cid_frames()
            || self.has_new_token()
            || self.crypto.get(2).is_some_and(|c| c.has_pending())
    }

    fn one_rtt_has_work(&self, now: Instant, path_id: PathId, data_path: bool) -> bool {
        if self.one_rtt.is_none() || !self.handshake_complete {
            return false;
        }
        let Some(p) = self.paths.get(&path_id) else {
            return false;
        };
        let ack = self.paths.values().any(|q| {
            q.ack.has_new_packets()
                && (q.ack.wants_immediate_ack() || q.ack.ack_due(now))
                && self.paths.ack_target(q.id, self.config.ack_path) == path_id
        });
        let probe = p.recovery.pending_probes(SpaceId::Data) > 0;
        let control = self.has_connection_frames() && path_id == self.paths.control_path();
        let challenge = p.challenge.as_ref().is_some_and(|c| c.pending);
        ack || probe || control || p.path_response.is_some() || challenge || data_path
    }

    /// Builds one packet of `level` on `path_id` at the end of `buf`, ending at most at offset `max_size` of
    /// `buf` (the end of the datagram).
    #[allow(clippy::too_many_arguments)]
    fn build_packet(
        &mut self,
        now: Instant,
        level: Level,
        path_id: PathId,
        buf: &mut Vec<u8>,
        max_size: usize,
        pad_to: Option<usize>,
        allow: Allow,
    ) -> Option<Built> {
        let start = buf.len();
        let space = space_of(level);
        let parts = self.header_parts(level, space, path_id)?;
        let (pn, pn_len) = (parts.pn, parts.pn_len);
        let header = parts.header(level);
        if start + header.encoded_len(pn_len) + TAG_LEN + 8 > max_size {
            return None;
        }
        let pe = header.encode(pn, pn_len, buf);
        let body_start = buf.len();
        let end = max_size.saturating_sub(TAG_LEN);
        let mut records: Records = self.records_pool.take();
        let mut ack_eliciting = false;
        self.write_ack_frame(now, level, path_id, buf, end, &mut records);
        if level == Level::OneRtt {
            self.write_one_rtt_control(path_id, buf, end, &mut records, &mut ack_eliciting);
        }
        // CRYPTO
        if let Some(c) = self.crypto.get_mut(level_index(level)) {
            loop {
                let room = end.saturating_sub(buf.len()).saturating_sub(1 + 8 + 2);
                let Some((offset, data)) = c.poll(room) else {
                    break;
                };
                let frame = Crypto {
                    offset: VarInt::from_u64(offset).unwrap_or(VarInt::MAX),
                    data,
                };
                let len = data.len() as u64;
                frame.encode(buf);
                records.push(FrameRecord::Crypto { level, offset, len });
                ack_eliciting = true;
            }
        }
        if level == Level::Initial {
            for f in self.injected.take_initial() {
                buf.extend_from_slice(&f);
                ack_eliciting = true;
            }
        }
        let data_ok = allow.data
            && self.paths.get(&path_id).is_some_and(|p| {
                allow.probe
                    || (p.cwnd_allows(self.cc.as_ref())
                        && p.recovery
                            .next_send_time(now, u64::from(p.mtu), self.cc.as_ref())
                            .is_none_or(|t| t <= now))
            });
        if data_ok {
            let before = records.len();
            ack_eliciting |= self.write_data_frames(buf, end, &mut records);
            let stream_bytes: u64 = records
                .get(before..)
                .unwrap_or_default()
                .iter()
                .map(|r| match r {
                    FrameRecord::Stream(s) => s.len,
                    _ => 0,
                })
                .sum();
            if let Some(p) = self.paths.get_mut(&path_id) {
                p.stream_bytes_sent = p.stream_bytes_sent.saturating_add(stream_bytes);
            }
        }
        if self.paths.duplicating() && records.iter().any(|r| matches!(r, FrameRecord::Stream(_))) {
            let streams: Records = records
                .iter()
                .filter(|r| matches!(r, FrameRecord::Stream(_)))
                .cloned()
                .collect();
            // `ConnectionLimits::duplicates`: beyond it the oldest copy goes (the original is in flight anyway).
            self.paths
                .queue_duplicates(&streams, self.config.limits.duplicates());
        }
        if allow.probe && !ack_eliciting {
            Frame::Ping.encode(buf);
            ack_eliciting = true;
        }
        if buf.len() == body_start {
            buf.truncate(start);
            self.records_pool.give(records);
            return None;
        }
        self.seal_packet(
            now,
            level,
            path_id,
            pn,
            pe,
            start,
            buf,
            pad_to,
            Tracking::of(ack_eliciting),
            records,
        )?;
        Some(Built { ack_eliciting })
    }

    /// Writes STREAM frames (lost data first, then new) and queued DATAGRAMs up to offset `end` of `buf`;
    /// returns whether it wrote any.
    pub(super) fn write_data_frames(&mut self, buf: &mut Vec<u8>, end: usize, records: &mut Records) -> bool {
        let mut wrote = false;
        // New stream data uses connection credit, repeated data does not (RFC 9000 §4.1): more stream bytes
        // than credit used means the packet repeats stream data.
        let credit_before = self.streams.conn_send_credit();
        let mut stream_bytes = 0u64;
        while end.saturating_sub(buf.len()) > 16 {
            let Some(record) = self.streams.write_stream_frame_into(end - buf.len(), buf) else {
                break;
            };
            stream_bytes = stream_bytes.saturating_add(record.len);
            records.push(FrameRecord::Stream(record));
            wrote = true;
        }
        let new_bytes = credit_before.saturating_sub(self.streams.conn_send_credit());
        self.sched_state.packet_repeats_data = stream_bytes > new_bytes;
        while let Some(d) = self.datagrams_out.front() {
            let frame = Datagram { data: d };
            if frame.encoded_len(true) > end.saturating_sub(buf.len()) {
                break;
            }
            frame.encode(buf, true);
            self.datagrams_out.pop_front();
            wrote = true;
        }
        wrote
    }

    fn write_ack_frame(
        &mut self,
        now: Instant,
        level: Level,
        path_id: PathId,
        buf: &mut Vec<u8>,
        end: usize,
        records: &mut Records,
    ) {
        let exponent = crate::proto::transport_params::DEFAULT_ACK_DELAY_EXPONENT as u8;
        if level != Level::OneRtt {
            let room = end.saturating_sub(buf.len());
            let Some(tracker) = self.spaces.get_mut(level).map(|s| &mut s.ack) else {
                return;
            };
            if tracker.has_new_packets() {
                if let Some(w) = tracker.write_ack(now, None, exponent, buf, room) {
                    records.push(FrameRecord::Ack {
                        level,
                        path: PathId(0),
                        largest: w.largest,
                    });
                }
            }
            return;
        }
        // The acknowledgements this packet carries: those of every path whose ACK path (the configured
        // policy) is the packet's path. Walked by key, without collecting them: this runs for every packet.
        let multipath = self.paths.ids.multipath();
        let mut after = None;
        while let Some(q) = self.paths.next_to_ack(after, path_id, self.config.ack_path) {
            after = Some(q);
            let room = end.saturating_sub(buf.len());
            let Some(tracker) = self.paths.get_mut(&q).map(|p| &mut p.ack) else {
                continue;
            };
            // draft-ietf-quic-multipath-21 §5: once multipath is negotiated, 1-RTT acknowledgements are
            // PATH_ACKs, and they may travel on any path.
            let path_ack = multipath.then_some(q);
            if let Some(w) = tracker.write_ack(now, path_ack, exponent, buf, room) {
                records.push(FrameRecord::Ack {
                    level,
                    path: q,
                    largest: w.largest,
                });
            }
        }
    }

    fn write_one_rtt_control(
        &mut self,
        path_id: PathId,
        buf: &mut Vec<u8>,
        end: usize,
        records: &mut Records,
        ack_eliciting: &mut bool,
    ) {
        if let Some(p) = self.paths.get_mut(&path_id) {
            let here = p.response_to.is_none_or(|(to, local, _)| p.is_current(to, local));
            if end.saturating_sub(buf.len()) >= 10 && here {
                if let Some(data) = p.path_response.take() {
                    p.response_to = None;
                    Frame::PathResponse(data).encode(buf);
                    // RFC 9000 §9.3.3: "An endpoint that receives a PATH_CHALLENGE on an active path SHOULD send
                    // a non-probing packet in response" (it moves the peer back if an attacker's copies had
                    // moved it elsewhere).
                    Frame::Ping.encode(buf);
                    *ack_eliciting = true;
                }
            }
            if end.saturating_sub(buf.len()) >= 9 {
                if let Some(data) = p.challenge.as_mut().and_then(|c| c.take_pending()) {
                    Frame::PathChallenge(data).encode(buf);
                    *ack_eliciting = true;
                }
            }
        }
        if path_id != self.paths.control_path() {
            return;
        }
        self.paths.write_frames(buf, end, records, ack_eliciting);
        for f in self.injected.take_one_rtt() {
            buf.extend_from_slice(&f);
            *ack_eliciting = true;
        }
        if self.handshake_done_pending && end > buf.len() {
            Frame::HandshakeDone.encode(buf);
            self.handshake_done_pending = false;
            records.push(FrameRecord::HandshakeDone);
            *ack_eliciting = true;
        }
        self.write_cid_frames(buf, end, records, ack_eliciting);
        self.write_new_token(buf, end, records, ack_eliciting);
        while let Some(f) = self.streams.poll_control_frame(end.saturating_sub(buf.len())) {
            f.encode(buf);
            records.push(FrameRecord::Control(f));
            *ack_eliciting = true;
        }
    }

    /// Pads, patches the Length, encrypts, applies header protection and records the packet.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn seal_packet(
        &mut self,
        now: Instant,
        level: Level,
        path_id: PathId,
        pn: u64,
        pe: crate::proto::packet::PartialEncode,
        start: usize,
        buf: &mut Vec<u8>,
        pad_to: Option<usize>,
        tracking: Tracking,
        records: Records,
    ) -> Option<()> {
        let ack_eliciting = matches!(tracking, Tracking::AckEliciting | Tracking::MtuProbe);
        let mut target = start + pe.min_packet_len();
        if let Some(p) = pad_to {
            target = target.max(p);
        }
        let padded = buf.len() + TAG_LEN < target;
        if padded {
            buf.put_bytes(0, target - buf.len() - TAG_LEN);
        }
        let packet_len = buf.len() + TAG_LEN - start;
        let header_len = pe.header_len();
        if pe.set_length(buf.get_mut(start..)?, packet_len).is_err() {
            buf.truncate(start);
            return None;
        }
        self.qlog_packet_sent(now, level, path_id, pn, buf, start + header_len, packet_len);
        buf.put_bytes(0, TAG_LEN);
        let packet = buf.get_mut(start..)?;
        let sealed = match level {
            Level::OneRtt => {
                let keys = self.one_rtt.as_mut()?;
                keys.seal(path_id, pn, packet, header_len)
                    .and_then(|()| keys.local_header().apply(packet, pe.pn_offset()))
            }
            Level::ZeroRtt => {
                let keys = self.zero_rtt_seal_keys()?;
                keys.packet
                    .seal(PathId(0), pn, packet, header_len)
                    .and_then(|()| keys.header.apply(packet, pe.pn_offset()))
            }
            _ => {
                let keys = self.spaces.get(level)?.keys.as_ref()?;
                keys.local
                    .packet
                    .seal(PathId(0), pn, packet, header_len)
                    .and_then(|()| keys.local.header.apply(packet, pe.pn_offset()))
            }
        };
        if sealed.is_err() {
            buf.truncate(start);
            return None;
        }
        // RFC 9002 §7.8: app-limited means nothing more to send; queued DATAGRAM frames are data to send too (a
        // datagram-only sender, such as an IP tunnel, would otherwise never grow its window).
        let app_limited = !self.streams.has_stream_data() && self.datagrams_out.is_empty();
        let has_data = records.iter().any(|r| matches!(r, FrameRecord::Stream(_)));
        let path = self.paths.get_mut(&path_id)?;
        let size = u16::try_from(packet_len).unwrap_or(u16::MAX);
        path.recovery.on_packet_sent(
            now,
            space_of(level),
            OutgoingPacket {
                size,
                ack_eliciting,
                in_flight: ack_eliciting || (padded && tracking != Tracking::OffPath),
                app_limited,
                frames: records,
            },
            self.cc.as_mut(),
        );
        self.stats.packets_sent += 1;
        path.packets_sent += 1;
        if has_data {
            self.report_data_packet(now, path_id, u64::from(size));
        }
        if level == Level::OneRtt {
            self.maybe_update_keys(now);
        }
        Some(())
    }

    /// Initiates a key update when the AEAD limits or the configured interval ask for one (RFC 9001 §6).
    fn maybe_update_keys(&mut self, now: Instant) {
        let interval = self.config.key_update_interval;
        let Some(keys) = self.one_rtt.as_mut() else {
            return;
        };
        let due = keys.wants_update() || interval.is_some_and(|n| keys.sealed_with_current_key() >= n);
        if due && keys.initiate_update().is_ok() {
            self.stats.key_updates += 1;
            self.events.push_back(Event::KeyUpdated);
            self.key_discard_deadline = Some(now + self.three_pto());
            self.defer_next_keys(now);
        }
    }

    /// A datagram with one probing frame (PATH_CHALLENGE or PATH_RESPONSE, padded to 1200 bytes within
    /// `budget`) to a 4-tuple other than the path's current one. It is kept out of the path's congestion
    /// control, loss recovery and anti-amplification budget, which belong to the path's current address: the
    /// frame's own timers (the validation timer, the peer's challenge) repeat it if it is lost.
    fn transmit_off_path(
        &mut self,
        now: Instant,
        off: OffPath<'_>,
        buf: &mut Vec<u8>,
        base: usize,
    ) -> Option<Transmit> {
        let mut parts = self.header_parts(Level::OneRtt, SpaceId::Data, off.path)?;
        parts.dcid = off.dcid;
        let (pn, pn_len) = (parts.pn, parts.pn_len);
        let header = parts.header(Level::OneRtt);
        let pe = header.encode(pn, pn_len, buf);
        off.frame.encode(buf);
        let max = usize::try_from(off.budget).unwrap_or(usize::MAX);
        let pad_to = (max > buf.len() - base + TAG_LEN).then_some(base + MIN_INITIAL_DATAGRAM_SIZE.min(max));
        self.seal_packet(
            now,
            Level::OneRtt,
            off.path,
            pn,
            pe,
            base,
            buf,
            pad_to,
            Tracking::OffPath,
            Vec::new(),
        )?;
        let size = buf.len() - base;
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += size as u64;
        Some(Transmit {
            path: off.path,
            local: off.local,
            remote: off.to,
            ecn: None,
            size,
            segment_size: None,
        })
    }

    /// A path-MTU probe (RFC 9000 §14.4: PING and PADDING): one 1-RTT packet of exactly
    /// `size` bytes of UDP payload on `path_id`, ack-eliciting and in flight, carrying nothing to
    /// retransmit. Its loss is no congestion signal (`PathRecovery::set_mtu_probe`).
    fn transmit_mtu_probe(
        &mut self,
        now: Instant,
        path_id: PathId,
        size: u16,
        buf: &mut Vec<u8>,
        base: usize,
    ) -> Option<Transmit> {
        let parts = self.header_parts(Level::OneRtt, SpaceId::Data, path_id)?;
        let (pn, pn_len) = (parts.pn, parts.pn_len);
        let header = parts.header(Level::OneRtt);
        let size = usize::from(size);
        if header.encoded_len(pn_len) + 1 + TAG_LEN > size {
            return None;
        }
        let pe = header.encode(pn, pn_len, buf);
        // RFC 9000 §14.4: "Endpoints could limit the content of PMTU probes to PING and PADDING frames, since
        // packets that are larger than the current maximum datagram size are more likely to be dropped by
        // the network."
        Frame::Ping.encode(buf);
        self.seal_packet(
            now,
            Level::OneRtt,
            path_id,
            pn,
            pe,
            base,
            buf,
            Some(base + size),
            Tracking::MtuProbe,
            Vec::new(),
        )?;
        self.on_mtu_probe_sent(path_id, pn);
        self.on_ack_eliciting_sent(now);
        self.finish_transmit(path_id, buf.len() - base)
    }

    /// Sends CONNECTION_CLOSE at every level the peer may be able to read (RFC 9000 §10.2.3).
    fn transmit_close(&mut self, now: Instant, buf: &mut Vec<u8>, base: usize) -> Option<Transmit> {
        let State::Closing { frame, .. } = &self.state else {
            return None;
        };
        let frame = frame.clone();
        let path_id = PathId(0);
        let max_size = {
            let p = self.paths.get(&path_id)?;
            usize::from(p.mtu).min(usize::try_from(p.amplification_budget()).unwrap_or(usize::MAX))
        };
        let mut levels = Vec::new();
        for l in [Level::Initial, Level::Handshake] {
            if self.spaces.get(l).is_some_and(|s| s.keys.is_some()) {
                levels.push(l);
            }
        }
        if self.one_rtt.is_some() && self.handshake_complete {
            levels.push(Level::OneRtt);
        }
        let needs_pad = self.side == Side::Client && levels.first() == Some(&Level::Initial);
        let count = levels.len();
        for (i, level) in levels.into_iter().enumerate() {
            let pad_to =
                (needs_pad && i + 1 == count).then_some(base + MIN_INITIAL_DATAGRAM_SIZE.min(max_size));
            self.build_close_packet(now, level, path_id, buf, base + max_size, pad_to, &frame);
        }
        if let State::Closing { send_pending, .. } = &mut self.state {
            *send_pending = false;
        }
        if buf.len() <= base {
            return None;
        }
        self.finish_transmit(path_id, buf.len() - base)
    }

    #[allow(clippy::too_many_arguments)]
    fn build_close_packet(
        &mut self,
        now: Instant,
        level: Level,
        path_id: PathId,
        buf: &mut Vec<u8>,
        max_size: usize,
        pad_to: Option<usize>,
        frame: &CloseFrame,
    ) -> Option<()> {
        let start = buf.len();
        let space = space_of(level);
        let parts = self.header_parts(level, space, path_id)?;
        let (pn, pn_len) = (parts.pn, parts.pn_len);
        let header = parts.header(level);
        let pe = header.encode(pn, pn_len, buf);
        let room = max_size.saturating_sub(buf.len() + TAG_LEN + 16);
        match frame {
            CloseFrame::Application { code, reason } if level == Level::OneRtt => {
                let reason = reason.get(..reason.len().min(room)).unwrap_or_default();
                ApplicationClose {
                    error_code: *code,
                    reason,
                }
                .encode(buf);
            }
            CloseFrame::Application { .. } => {
                // RFC 9000 §10.2.3: "When sending a CONNECTION_CLOSE frame of type 0x1d in an Initial or
                // Handshake packet, an endpoint MUST replace it with a CONNECTION_CLOSE frame of type 0x1c with
                // an error code of APPLICATION_ERROR (0x0c) and an empty reason phrase."
                ConnectionClose {
                    error_code: VarInt::from_u64(TransportErrorCode::APPLICATION_ERROR.0)
                        .unwrap_or(VarInt::MAX),
                    frame_type: VarInt::ZERO,
                    reason: &[],
                }
                .encode(buf);
            }
            CloseFrame::Transport {
                code,
                frame_type,
                reason,
            } => {
                let bytes = reason.as_bytes();
                ConnectionClose {
                    error_code: VarInt::from_u64(code.0).unwrap_or(VarInt::MAX),
                    frame_type: VarInt::from_u64(*frame_type).unwrap_or(VarInt::ZERO),
                    reason: bytes.get(..bytes.len().min(room)).unwrap_or_default(),
                }
                .encode(buf);
            }
        }
        self.seal_packet(
            now,
            level,
            path_id,
            pn,
            pe,
            start,
            buf,
            pad_to,
            Tracking::NotAckEliciting,
            Vec::new(),
        )
    }
}

/// How a sealed packet is tracked by loss recovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tracking {
    /// Ack-eliciting, in flight, congestion controlled.
    AckEliciting,
    /// Not ack-eliciting (in flight only if padded).
    NotAckEliciting,
    /// A probe sent to another 4-tuple: remembered for ACK validation only.
    OffPath,
    /// A path-MTU probe: ack-eliciting and in flight, but its loss is no congestion signal.
    MtuProbe,
}

impl Tracking {
    fn of(ack_eliciting: bool) -> Self {
        if ack_eliciting {
            Tracking::AckEliciting
        } else {
            Tracking::NotAckEliciting
        }
    }
}

/// A single-frame datagram to another 4-tuple of a path.
struct OffPath<'a> {
    path: PathId,
    frame: Frame<'a>,
    dcid: crate::proto::packet::ConnectionId,
    to: std::net::SocketAddr,
    local: Option<std::net::SocketAddr>,
    budget: u64,
}

/// What the header of the next packet needs, owned so that [`OutgoingHeader`] can borrow it.
pub(super) struct HeaderParts {
    pub(super) dcid: crate::proto::packet::ConnectionId,
    pub(super) scid: crate::proto::packet::ConnectionId,
    token: bytes::Bytes,
    pub(super) pn: u64,
    pub(super) pn_len: usize,
    key_phase: bool,
}

impl HeaderParts {
    /// The header of a packet at `level`.
    fn header(&self, level: Level) -> OutgoingHeader<'_> {
        match level {
            Level::Initial => OutgoingHeader::Initial {
                dcid: &self.dcid,
                scid: &self.scid,
                token: &self.token,
            },
            Level::Handshake => OutgoingHeader::Handshake {
                dcid: &self.dcid,
                scid: &self.scid,
            },
            Level::ZeroRtt => OutgoingHeader::ZeroRtt {
                dcid: &self.dcid,
                scid: &self.scid,
            },
            Level::OneRtt => OutgoingHeader::Short {
                dcid: &self.dcid,
                spin: false,
                key_phase: self.key_phase,
            },
        }
    }
}

impl Connection {
    /// Connection IDs, token, next packet number (RFC 9000 §17.1 length) and key phase for the next packet of
    /// `space` on `path_id` (`None` for an unknown path or an exhausted packet-number space).
    pub(super) fn header_parts(&self, level: Level, space: SpaceId, path_id: PathId) -> Option<HeaderParts> {
        let path = self.paths.get(&path_id)?;
        let pn = path.recovery.next_packet_number(space)?;
        Some(HeaderParts {
            dcid: path.remote_cid,
            scid: self.local_cid,
            token: if self.side == Side::Client && level == Level::Initial {
                self.initial_token()
            } else {
                bytes::Bytes::new()
            },
            pn,
            pn_len: packet_number::encoded_len(pn, path.recovery.largest_acked(space)),
            key_phase: self.one_rtt.as_ref().is_some_and(|k| k.key_phase()),
        })
    }
}
