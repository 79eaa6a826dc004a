//! Received frames that concern streams (RFC 9000 §19.4, §19.5, §19.8–§19.14): validation against the
//! stream's type and state, implicit opening of peer streams, and the flow-control and final-size rules.

use std::time::Instant;

use bytes::Bytes;

use super::control::PerStream;
use super::id::{MAX_STREAM_INDEX_COUNT, StreamId, dir_index};
use super::recv::{Received, RecvStream, flow_control_error};
use super::send::SendStream;
use super::{StreamEvent, Streams, recount};
use crate::proto::coding::VarInt;
use crate::proto::error::{TransportError, TransportErrorCode};
use crate::proto::frame::{Dir, FrameType, ResetStream, StopSending, Stream};

/// Which part of a stream a frame is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Our sending part (MAX_STREAM_DATA, STOP_SENDING).
    Send,
    /// Our receiving part (STREAM, RESET_STREAM, STREAM_DATA_BLOCKED).
    Recv,
}

fn stream_state_error(reason: &'static str) -> TransportError {
    TransportError::new(TransportErrorCode::STREAM_STATE_ERROR, reason)
}

/// Shares `data` out of `payload` without copying when it lies inside it and is a sizeable part of it;
/// copies otherwise. Copying small pieces keeps a peer from pinning whole datagrams with one-byte frames, so
/// the memory held stays within a small factor of the receive window.
fn share(payload: &Bytes, data: &[u8]) -> Bytes {
    let base = payload.as_ptr() as usize;
    let start = data.as_ptr() as usize;
    let inside = start >= base && start.saturating_add(data.len()) <= base.saturating_add(payload.len());
    if inside && data.len() >= payload.len() / 4 && !data.is_empty() {
        let from = start - base;
        payload.slice(from..from + data.len())
    } else {
        Bytes::copy_from_slice(data)
    }
}

impl Streams {
    /// Checks that a frame about `part` of `id` is allowed, opening peer streams as needed. Returns whether
    /// that part exists (`false`: the stream is closed and the frame is ignored).
    fn check_stream(
        &mut self,
        id: StreamId,
        part: Part,
        ty: FrameType,
        wrong_dir: &'static str,
    ) -> Result<bool, TransportError> {
        let ours = id.initiator() == self.side;
        let allowed = match part {
            Part::Send => id.can_send(self.side),
            Part::Recv => id.can_recv(self.side),
        };
        if !allowed {
            return Err(stream_state_error(wrong_dir).with_frame(ty.0));
        }
        if ours {
            if !self.is_opened(id) {
                // RFC 9000 §19.8: "An endpoint MUST terminate the connection with error STREAM_STATE_ERROR if
                // it receives a STREAM frame for a locally initiated stream that has not yet been created";
                // §19.5 and §19.10 say the same of STOP_SENDING and MAX_STREAM_DATA ("Receiving a ... frame
                // for a locally initiated stream that has not yet been created MUST be treated as a
                // connection error of type STREAM_STATE_ERROR").
                return Err(
                    stream_state_error("frame for a locally initiated stream not yet created")
                        .with_frame(ty.0),
                );
            }
        } else {
            self.open_remote_up_to(id, ty)?;
        }
        Ok(match part {
            Part::Send => self.send.contains_key(&id),
            Part::Recv => self.recv.contains_key(&id),
        })
    }

    /// Opens every peer stream of `id`'s type up to `id`.
    fn open_remote_up_to(&mut self, id: StreamId, ty: FrameType) -> Result<(), TransportError> {
        let dir = id.dir();
        let i = dir_index(dir);
        let max = self.remote_max.get(i).copied().unwrap_or(0);
        // RFC 9000 §4.6: "An endpoint that receives a frame with a stream ID exceeding the limit it has sent
        // MUST treat this as a connection error of type STREAM_LIMIT_ERROR".
        if id.index() >= max {
            return Err(TransportError::new(
                TransportErrorCode::STREAM_LIMIT_ERROR,
                "peer opened a stream above the advertised limit",
            )
            .with_frame(ty.0));
        }
        let opened = self.remote_opened.get(i).copied().unwrap_or(0);
        if id.index() < opened {
            return Ok(());
        }
        // RFC 9000 §3.2: "Before a stream is created, all streams of the same type with lower-numbered stream
        // IDs MUST be created." The count is bounded by the limit we advertised.
        let (window, peer_window) = match dir {
            Dir::Bi => (
                self.config.stream_window_bidi_remote,
                self.peer_windows.bidi_peer_opened,
            ),
            Dir::Uni => (self.config.stream_window_uni, 0),
        };
        for index in opened..=id.index() {
            let Some(sid) = StreamId::new(self.side.peer(), dir, index) else {
                break;
            };
            self.recv
                .insert(sid, RecvStream::new(self.config.stream_recv_window(window)));
            if dir == Dir::Bi {
                self.send
                    .insert(sid, SendStream::new(peer_window, self.config.send_buffer));
            }
        }
        if let Some(o) = self.remote_opened.get_mut(i) {
            *o = id.index() + 1;
        }
        if let Some(flag) = self.opened_event.get_mut(i) {
            if !*flag {
                *flag = true;
                self.events.push_back(StreamEvent::Opened { dir });
            }
        }
        self.maybe_raise_remote_limit(dir);
        Ok(())
    }

    /// A STREAM frame from a decrypted packet `payload` (the frame's data is shared out of it, not copied,
    /// when it lies inside it), received at `now`.
    pub fn on_stream_frame(
        &mut self,
        frame: &Stream<'_>,
        payload: &Bytes,
        now: Instant,
    ) -> Result<(), TransportError> {
        self.on_stream_data(
            StreamId::from_varint(frame.id),
            frame.offset.into_inner(),
            share(payload, frame.data),
            frame.fin,
            now,
        )
    }

    /// The contents of a STREAM frame: `data` at `offset` of stream `id`, ending it if `fin`, received at
    /// `now` (the arrival time the head-of-line delay of [`ReassemblyStats`](super::ReassemblyStats) is
    /// measured from).
    pub fn on_stream_data(
        &mut self,
        id: StreamId,
        offset: u64,
        data: Bytes,
        fin: bool,
        now: Instant,
    ) -> Result<(), TransportError> {
        let ty = Stream {
            id: id.to_varint(),
            offset: VarInt::from_u64(offset).unwrap_or(VarInt::MAX),
            fin,
            data: &[],
        }
        .ty(true);
        // RFC 9000 §19.8: "An endpoint MUST terminate the connection with error STREAM_STATE_ERROR if it
        // receives a STREAM frame for a locally initiated stream that has not yet been created, or for a
        // send-only stream."
        if !self.check_stream(id, Part::Recv, ty, "STREAM frame for a send-only stream")? {
            return Ok(());
        }
        let Some(rs) = self.recv.get_mut(&id) else {
            return Ok(());
        };
        let (before, occupied) = (rs.fragments(), rs.occupancy());
        let r = rs
            .on_data(offset, data, fin, now, &mut self.reassembly.hol)
            .map_err(|e| e.with_frame(ty.0))?;
        recount(&mut self.recv_fragments, before, rs.fragments());
        self.reassembly.recount(occupied, rs.occupancy());
        // RFC 9000 §21.6 (stream fragmentation and reassembly attacks): memory beyond the flow-control window
        // is bounded by the number of fragments buffered.
        if self.recv_fragments > self.max_recv_fragments {
            return Err(TransportError::new(
                TransportErrorCode::PROTOCOL_VIOLATION,
                "stream data fragmented beyond the receive fragment limit",
            )
            .with_frame(ty.0));
        }
        self.after_recv_input(id, r, ty, "stream data beyond MAX_DATA")
    }

    /// A RESET_STREAM frame (RFC 9000 §19.4).
    pub fn on_reset_stream(&mut self, frame: &ResetStream) -> Result<(), TransportError> {
        let id = StreamId::from_varint(frame.id);
        let ty = FrameType::RESET_STREAM;
        // RFC 9000 §19.4: "An endpoint that receives a RESET_STREAM frame for a send-only stream MUST terminate
        // the connection with error STREAM_STATE_ERROR."
        if !self.check_stream(id, Part::Recv, ty, "RESET_STREAM for a send-only stream")? {
            return Ok(());
        }
        let Some(rs) = self.recv.get_mut(&id) else {
            return Ok(());
        };
        let (before, occupied) = (rs.fragments(), rs.occupancy());
        let r = rs
            .on_reset(frame.error_code, frame.final_size.into_inner())
            .map_err(|e| e.with_frame(ty.0))?;
        recount(&mut self.recv_fragments, before, rs.fragments());
        self.reassembly.recount(occupied, rs.occupancy());
        self.after_recv_input(id, r, ty, "final size beyond MAX_DATA")
    }

    /// The common end of STREAM and RESET_STREAM processing: charge the connection-level flow controller,
    /// release discarded credit, raise `Readable` once, and drop a stream that is stopped and settled.
    ///
    /// RFC 9000 §4.1: "A receiver MUST close the connection with an error of type FLOW_CONTROL_ERROR if the
    /// sender violates the advertised connection or stream data limits"; §4.5: "The receiver MUST use the
    /// final size of the stream to account for all bytes sent on the stream in its connection-level flow
    /// controller."
    fn after_recv_input(
        &mut self,
        id: StreamId,
        r: Received,
        ty: FrameType,
        over_limit: &'static str,
    ) -> Result<(), TransportError> {
        let Some(rs) = self.recv.get_mut(&id) else {
            return Ok(());
        };
        let notify = r.readable && !rs.readable_notified;
        if notify {
            rs.readable_notified = true;
        }
        let settled = rs.stopped_and_settled();
        self.conn_recv
            .receive_more(r.grew)
            .map_err(|_| flow_control_error(over_limit).with_frame(ty.0))?;
        self.release_conn(r.discarded, None);
        if notify {
            self.events.push_back(StreamEvent::Readable { id });
        }
        if settled {
            self.remove_recv(id);
        }
        Ok(())
    }

    /// A STOP_SENDING frame (RFC 9000 §19.5): the stream is reset with the peer's code.
    pub fn on_stop_sending(&mut self, frame: &StopSending) -> Result<(), TransportError> {
        let id = StreamId::from_varint(frame.id);
        // RFC 9000 §19.5: "An endpoint that receives a STOP_SENDING frame for a receive-only stream MUST
        // terminate the connection with error STREAM_STATE_ERROR."
        let ty = FrameType::STOP_SENDING;
        if !self.check_stream(id, Part::Send, ty, "STOP_SENDING for a receive-only stream")? {
            return Ok(());
        }
        let Some(ss) = self.send.get_mut(&id) else {
            return Ok(());
        };
        if ss.stop_code.is_none() && ss.reset.is_none() {
            ss.stop_code = Some(frame.error_code);
            self.events.push_back(StreamEvent::Stopped {
                id,
                error_code: frame.error_code,
            });
        }
        // RFC 9000 §3.5: "An endpoint that receives a STOP_SENDING frame MUST send a RESET_STREAM frame if the
        // stream is in the "Ready" or "Send" state." and "An endpoint SHOULD copy the error code from the
        // STOP_SENDING frame to the RESET_STREAM frame it sends". We reset in "Data Sent" too.
        if ss.reset(frame.error_code) {
            self.pending.per_stream.insert((PerStream::ResetStream, id));
        }
        Ok(())
    }

    /// A MAX_DATA frame (RFC 9000 §19.9); limits that do not increase are ignored (§4.1).
    pub fn on_max_data(&mut self, max: VarInt) {
        self.conn_send.raise(max.into_inner());
    }

    /// A MAX_STREAM_DATA frame (RFC 9000 §19.10).
    pub fn on_max_stream_data(&mut self, id: VarInt, max: VarInt) -> Result<(), TransportError> {
        let id = StreamId::from_varint(id);
        // RFC 9000 §19.10: "An endpoint that receives a MAX_STREAM_DATA frame for a receive-only stream MUST
        // terminate the connection with error STREAM_STATE_ERROR."
        let ty = FrameType::MAX_STREAM_DATA;
        if !self.check_stream(id, Part::Send, ty, "MAX_STREAM_DATA for a receive-only stream")? {
            return Ok(());
        }
        if let Some(ss) = self.send.get_mut(&id) {
            // RFC 9000 §4.1: "A receiver MUST ignore any MAX_STREAM_DATA or MAX_DATA frames that do not increase
            // flow control limits."
            if ss.credit.raise(max.into_inner()) {
                self.enqueue(id);
            }
        }
        Ok(())
    }

    /// A MAX_STREAMS frame (RFC 9000 §19.11; counts above 2^60 are rejected by the codec).
    pub fn on_max_streams(&mut self, dir: Dir, count: VarInt) {
        // RFC 9000 §4.6: "MAX_STREAMS frames that do not increase the stream limit MUST be ignored."
        self.raise_local_limit(dir, count.into_inner().min(MAX_STREAM_INDEX_COUNT));
    }

    /// A DATA_BLOCKED frame (RFC 9000 §19.12): if we already raised the limit past it, our MAX_DATA may have
    /// been lost, so it is queued again (deduplicated).
    pub fn on_data_blocked(&mut self, limit: VarInt) {
        if self.conn_recv.advertised() > limit.into_inner() {
            self.pending.max_data = true;
        }
    }

    /// A STREAM_DATA_BLOCKED frame (RFC 9000 §19.13).
    pub fn on_stream_data_blocked(&mut self, id: VarInt, limit: VarInt) -> Result<(), TransportError> {
        let id = StreamId::from_varint(id);
        // RFC 9000 §19.13: "An endpoint that receives a STREAM_DATA_BLOCKED frame for a send-only stream MUST
        // terminate the connection with error STREAM_STATE_ERROR."
        let ty = FrameType::STREAM_DATA_BLOCKED;
        if !self.check_stream(id, Part::Recv, ty, "STREAM_DATA_BLOCKED for a send-only stream")? {
            return Ok(());
        }
        if let Some(rs) = self.recv.get(&id) {
            if rs.wants_credit() && rs.window.advertised() > limit.into_inner() {
                self.pending.per_stream.insert((PerStream::MaxStreamData, id));
            }
        }
        Ok(())
    }

    /// A STREAMS_BLOCKED frame (RFC 9000 §19.14): re-advertise our limit if it is already higher.
    pub fn on_streams_blocked(&mut self, dir: Dir, limit: VarInt) {
        let i = dir_index(dir);
        if self.remote_max.get(i).copied().unwrap_or(0) > limit.into_inner() {
            if let Some(p) = self.pending.max_streams.get_mut(i) {
                *p = true;
            }
        }
    }
}
