//! What the packet builder asks for (control frames, STREAM frames) and what the connection reports back
//! (acknowledgement and loss of each).
//!
//! STREAM frames are chosen round-robin among the streams that can send now, highest priority first; one
//! frame per call, so a packet filled by repeated calls interleaves streams fairly. Lost data of a stream
//! goes out before its new data.

use super::control::{PerStream, StreamControlFrame};
use super::id::{DIRS, StreamId, dir_index};
use super::send::{SendProgress, StreamFrame, StreamFrameRecord};
use super::{StreamEvent, Streams};

impl Streams {
    /// Whether a control frame may be due (a cheap check before building a packet).
    pub fn has_control_frames(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Whether some stream can send a STREAM frame now (within flow control).
    ///
    /// Asked several times for every poll: a connection without queued streams (one that only receives, or
    /// sends only datagrams) answers with one inlined test.
    #[inline]
    pub fn has_stream_data(&self) -> bool {
        !self.queue.is_empty() && self.queued_stream_data()
    }

    /// [`Streams::has_stream_data`] with streams queued.
    fn queued_stream_data(&self) -> bool {
        let conn = self.conn_send.available();
        self.queue
            .iter()
            .any(|id| self.send.get(id).is_some_and(|s| s.is_sendable(conn)))
    }

    /// The send backlog in one pass over the send queue: `(retransmit, sendable)`, where `retransmit` is the
    /// lost stream data waiting to be sent again (it goes out before new data) and `sendable` the stream
    /// bytes waiting to be packetised: every lost byte queued for retransmission, plus the new data written
    /// and not yet sent, whether or not the peer's flow-control credit lets it go now. This is what the
    /// schedulers that model a send queue read as their backlog (ECF's `k`, OTIAS's and STTF's queue): Linux
    /// MPTCP's ECF counts the meta socket's whole write queue, which the receive window does not shorten.
    /// Capping it at the credit made ECF read a small receive window as a small backlog and stop using the
    /// slow path (C2 with a 256 KiB window, 8 s runs: 94.7 Mbit/s, 0.02 on the slow path, against minRTT's
    /// 120).
    pub fn send_backlog(&self) -> (u64, u64) {
        let (unsent, retransmit) =
            self.queue
                .iter()
                .filter_map(|id| self.send.get(id))
                .fold((0u64, 0u64), |(u, r), s| {
                    (
                        u.saturating_add(s.unsent_len()),
                        r.saturating_add(s.retransmit_len()),
                    )
                });
        let sendable = retransmit.saturating_add(unsent);
        (retransmit, sendable)
    }

    /// The next pending control frame that fits in `max_len` bytes, with current values. Resets and
    /// STOP_SENDING come first, then credit (MAX_*), then *_BLOCKED.
    pub fn poll_control_frame(&mut self, max_len: usize) -> Option<StreamControlFrame> {
        // Every frame below is one that `pending` records: with nothing recorded there is nothing to look up
        // (the common case, asked once per packet).
        if self.pending.is_empty() {
            return None;
        }
        let fits = |f: &StreamControlFrame| f.encoded_len() <= max_len;
        if let Some(f) = self.poll_per_stream(max_len, &[PerStream::ResetStream, PerStream::StopSending]) {
            return Some(f);
        }
        if self.pending.max_data {
            let f = StreamControlFrame::MaxData(self.conn_recv.advertised());
            if fits(&f) {
                self.pending.max_data = false;
                self.flow.credit_handed_out();
                return Some(f);
            }
        }
        for dir in DIRS {
            let i = dir_index(dir);
            if self.pending.max_streams.get(i) == Some(&true) {
                let count = self.remote_max.get(i).copied().unwrap_or(0);
                let f = StreamControlFrame::MaxStreams { dir, count };
                if fits(&f) {
                    if let Some(p) = self.pending.max_streams.get_mut(i) {
                        *p = false;
                    }
                    return Some(f);
                }
            }
        }
        if let Some(f) = self.poll_per_stream(max_len, &[PerStream::MaxStreamData]) {
            self.flow.credit_handed_out();
            return Some(f);
        }
        if let Some(limit) = self.pending.data_blocked {
            let f = StreamControlFrame::DataBlocked(limit);
            if !self.conn_send.blocked_at(limit) {
                self.pending.data_blocked = None;
            } else if fits(&f) {
                self.pending.data_blocked = None;
                return Some(f);
            }
        }
        for dir in DIRS {
            let i = dir_index(dir);
            if let Some(limit) = self.pending.streams_blocked.get(i).copied().flatten() {
                let still = self.local_opened.get(i).is_some_and(|c| c.blocked_at(limit));
                let f = StreamControlFrame::StreamsBlocked { dir, limit };
                if !still || fits(&f) {
                    if let Some(p) = self.pending.streams_blocked.get_mut(i) {
                        *p = None;
                    }
                    if still {
                        return Some(f);
                    }
                }
            }
        }
        self.poll_per_stream(max_len, &[PerStream::StreamDataBlocked])
    }

    /// The first pending per-stream frame of one of `kinds` that fits; drops entries that are no longer due.
    fn poll_per_stream(&mut self, max_len: usize, kinds: &[PerStream]) -> Option<StreamControlFrame> {
        let mut stale = Vec::new();
        let mut found = None;
        for &(kind, id) in self.pending.per_stream.iter() {
            if !kinds.contains(&kind) {
                continue;
            }
            let Some(f) = self.current_frame(kind, id) else {
                stale.push((kind, id));
                continue;
            };
            if f.encoded_len() <= max_len {
                found = Some(((kind, id), f));
                break;
            }
        }
        for key in stale {
            self.pending.per_stream.remove(&key);
        }
        let (key, f) = found?;
        self.pending.per_stream.remove(&key);
        Some(f)
    }

    /// The frame of `kind` for `id` with current values, or `None` if it is no longer due.
    fn current_frame(&self, kind: PerStream, id: StreamId) -> Option<StreamControlFrame> {
        match kind {
            PerStream::ResetStream => {
                let r = self.send.get(&id)?.reset?;
                (!r.acked).then_some(StreamControlFrame::ResetStream {
                    id,
                    error_code: r.code,
                    final_size: r.final_size,
                })
            }
            PerStream::StopSending => {
                let rs = self.recv.get(&id)?;
                // RFC 9000 §3.5: "STOP_SENDING SHOULD only be sent for a stream that has not been reset by the
                // peer."
                if rs.reset.is_some() {
                    return None;
                }
                Some(StreamControlFrame::StopSending {
                    id,
                    error_code: rs.stopped?,
                })
            }
            PerStream::MaxStreamData => {
                let rs = self.recv.get(&id)?;
                // RFC 9000 §3.2: in "Size Known" "the endpoint no longer needs to send MAX_STREAM_DATA frames".
                rs.wants_credit().then(|| StreamControlFrame::MaxStreamData {
                    id,
                    max: rs.window.advertised(),
                })
            }
            PerStream::StreamDataBlocked => {
                let ss = self.send.get(&id)?;
                let limit = ss.credit.max();
                // RFC 9000 §3.1: no STREAM_DATA_BLOCKED after RESET_STREAM.
                (ss.reset.is_none() && ss.has_unsent() && ss.credit.blocked_at(limit))
                    .then_some(StreamControlFrame::StreamDataBlocked { id, limit })
            }
        }
    }

    /// The next STREAM frame, at most `max_frame_len` bytes long when encoded with a Length field, from the
    /// highest-priority stream that can send, round-robin among equals. Charges flow control; the connection
    /// keeps [`StreamFrame::record`] with the packet.
    pub fn write_stream_frame(&mut self, max_frame_len: usize) -> Option<StreamFrame> {
        self.next_stream_frame(|ss, id, conn| ss.poll_frame(id, max_frame_len, conn))
    }

    /// [`Streams::write_stream_frame`] encoded (with a Length field) at the end of `buf` straight from the
    /// send buffer, without building the frame's list of slices: the per-packet path. Returns the record to
    /// keep with the packet.
    pub fn write_stream_frame_into<B: bytes::BufMut>(
        &mut self,
        max_frame_len: usize,
        buf: &mut B,
    ) -> Option<StreamFrameRecord> {
        self.next_stream_frame(|ss, id, conn| ss.write_frame(id, max_frame_len, conn, buf))
    }

    /// The stream choice of [`Streams::write_stream_frame`]; `frame` builds the frame from the chosen stream
    /// (its ID and the connection credit) and says how many new bytes it sends.
    fn next_stream_frame<R>(
        &mut self,
        frame: impl FnOnce(&mut super::send::SendStream, StreamId, u64) -> Option<(R, u64)>,
    ) -> Option<R> {
        let conn = self.conn_send.available();
        // Drop streams with nothing left to send; note the ones flow control holds back.
        let mut held = Vec::new();
        let send = &mut self.send;
        self.queue.retain(|id| match send.get_mut(id) {
            Some(ss) if ss.has_pending() => {
                if !ss.is_sendable(conn) && ss.has_unsent() {
                    held.push(*id);
                }
                true
            }
            Some(ss) => {
                ss.queued = false;
                false
            }
            None => false,
        });
        for id in held {
            self.note_blocked(id);
        }
        let mut best: Option<(usize, i32)> = None;
        for (pos, id) in self.queue.iter().enumerate() {
            let Some(ss) = self.send.get(id) else {
                continue;
            };
            if ss.is_sendable(conn) && best.is_none_or(|(_, p)| ss.priority > p) {
                best = Some((pos, ss.priority));
            }
        }
        let (pos, _) = best?;
        let id = *self.queue.get(pos)?;
        let ss = self.send.get_mut(&id)?;
        let (frame, new) = frame(ss, id, conn)?;
        self.conn_send.consume(new);
        // Served: go to the back of the queue, or leave it.
        self.queue.remove(pos);
        if ss.has_pending() {
            self.queue.push_back(id);
        } else {
            ss.queued = false;
        }
        self.note_blocked(id);
        Some(frame)
    }

    /// A STREAM frame was acknowledged (on any path). Frees the acknowledged prefix of the send buffer.
    pub fn on_stream_frame_acked(&mut self, rec: StreamFrameRecord) {
        let Some(ss) = self.send.get_mut(&rec.id) else {
            return;
        };
        if ss.on_ack(rec.offset, rec.len, rec.fin) && ss.want_writable && ss.free_above_low_water() {
            ss.want_writable = false;
            self.events.push_back(StreamEvent::Writable { id: rec.id });
        }
        let hole = ss.has_hole();
        if hole != ss.listed_holey {
            ss.listed_holey = hole;
            if hole {
                self.holey.insert(rec.id);
            } else {
                self.holey.remove(&rec.id);
            }
        }
        if ss.is_done() {
            self.events.push_back(StreamEvent::Finished { id: rec.id });
            self.remove_send(rec.id);
        }
    }

    /// Where sending on `id` stands: lowest unacknowledged offset, highest sent, acknowledged bytes above the
    /// lowest hole (`None` for a stream without a sending part).
    pub fn send_progress(&self, id: StreamId) -> Option<SendProgress> {
        self.send.get(&id).map(|s| s.progress())
    }

    /// The sending streams that have a hole (data acknowledged above their lowest unacknowledged offset),
    /// in stream ID order, with their progress. Only streams that are not reset.
    pub fn holes(&self) -> impl Iterator<Item = (StreamId, SendProgress)> + '_ {
        self.holey.iter().filter_map(|id| {
            let ss = self.send.get(id)?;
            let p = ss.progress();
            (ss.reset.is_none() && p.has_hole()).then_some((*id, p))
        })
    }

    /// Whether some sending stream has a hole (a cheap check before [`Streams::holes`]).
    pub fn has_holes(&self) -> bool {
        !self.holey.is_empty()
    }

    /// Whether the connection-level credit (the peer's MAX_DATA) is used up to less than `min` bytes.
    pub fn conn_credit_below(&self, min: u64) -> bool {
        self.conn_send.available() < min
    }

    /// Opportunistic retransmission: queues the lowest hole of `id` (the part not re-sent this way before) to be
    /// sent again before new data. Returns the range and the bytes queued (see `SendStream::reinject`).
    pub fn reinject(&mut self, id: StreamId) -> Option<(std::ops::Range<u64>, u64)> {
        let r = self.send.get_mut(&id)?.reinject()?;
        self.enqueue(id);
        Some(r)
    }

    /// Whether data of `range` of `id` queued for sending again (lost or re-sent) still waits.
    pub fn resend_waiting(&self, id: StreamId, range: std::ops::Range<u64>) -> bool {
        self.send.get(&id).is_some_and(|s| s.retransmit_overlaps(range))
    }

    /// A STREAM frame was declared lost: its unacknowledged bytes are sent again, before new data.
    pub fn on_stream_frame_lost(&mut self, rec: StreamFrameRecord) {
        if let Some(ss) = self.send.get_mut(&rec.id) {
            if ss.on_lost(rec.offset, rec.len, rec.fin) {
                self.enqueue(rec.id);
            }
        }
    }

    /// A control frame was acknowledged. An acknowledged RESET_STREAM ends the sending part ("Reset Recvd").
    pub fn on_control_frame_acked(&mut self, frame: &StreamControlFrame) {
        if let StreamControlFrame::ResetStream { id, .. } = *frame {
            if let Some(ss) = self.send.get_mut(&id) {
                if let Some(r) = ss.reset.as_mut() {
                    r.acked = true;
                    self.remove_send(id);
                }
            }
        }
    }

    /// A control frame was declared lost: it is queued again if it still matters, and will carry the values
    /// current when it is next built.
    pub fn on_control_frame_lost(&mut self, frame: &StreamControlFrame) {
        match *frame {
            StreamControlFrame::MaxData(max) => {
                // A newer value sent since covers the loss; its own loss will be reported.
                if max == self.conn_recv.advertised() {
                    self.pending.max_data = true;
                }
            }
            StreamControlFrame::MaxStreams { dir, count } => {
                let i = dir_index(dir);
                if self.remote_max.get(i) == Some(&count) {
                    if let Some(p) = self.pending.max_streams.get_mut(i) {
                        *p = true;
                    }
                }
            }
            StreamControlFrame::MaxStreamData { id, max } => {
                if self
                    .recv
                    .get(&id)
                    .is_some_and(|rs| rs.wants_credit() && rs.window.advertised() == max)
                {
                    self.pending.per_stream.insert((PerStream::MaxStreamData, id));
                }
            }
            StreamControlFrame::DataBlocked(limit) => {
                if self.conn_send.blocked_at(limit) {
                    self.pending.data_blocked = Some(limit);
                }
            }
            StreamControlFrame::StreamsBlocked { dir, limit } => {
                let i = dir_index(dir);
                if self.local_opened.get(i).is_some_and(|c| c.blocked_at(limit)) {
                    if let Some(p) = self.pending.streams_blocked.get_mut(i) {
                        *p = Some(limit);
                    }
                }
            }
            StreamControlFrame::StreamDataBlocked { id, limit } => {
                if self
                    .send
                    .get(&id)
                    .is_some_and(|ss| ss.has_unsent() && ss.credit.blocked_at(limit))
                {
                    self.pending.per_stream.insert((PerStream::StreamDataBlocked, id));
                }
            }
            StreamControlFrame::ResetStream { id, .. } => {
                if self
                    .send
                    .get(&id)
                    .is_some_and(|ss| ss.reset.is_some_and(|r| !r.acked))
                {
                    self.pending.per_stream.insert((PerStream::ResetStream, id));
                }
            }
            StreamControlFrame::StopSending { id, .. } => {
                if self
                    .recv
                    .get(&id)
                    .is_some_and(|rs| rs.stopped.is_some() && rs.reset.is_none())
                {
                    self.pending.per_stream.insert((PerStream::StopSending, id));
                }
            }
        }
    }
}
