//! The sending part of a stream (RFC 9000 §3.1): the send buffer and the send state machine.
//!
//! The application writes [`Bytes`] chunks; they are kept as they are (zero-copy) and sliced into STREAM
//! frames. Everything is tracked by stream offset, never by packet: the connection records
//! `(stream, offset, len, fin)` for each frame it sends, and reports acknowledgements and losses back by
//! range, so a lost range can be retransmitted on any path. Lost ranges are sent before new data. The chunks
//! below the acknowledged prefix are released as soon as that prefix moves past them.
//!
//! Each chunk is kept with its stream offset, so the chunk holding an offset is found by binary search: the
//! cost of building a frame does not grow with the number of chunks in flight (an application that writes
//! one small message at a time, such as a tunnel writing one IP packet per write, has thousands of them).
//!
//! States (RFC 9000 §3.1, Figure 2): "Ready"/"Send" (`!finished`), "Data Sent" (`finished`, data in flight),
//! "Data Recvd" ([`SendStream::is_done`] after everything and the FIN were acknowledged), "Reset Sent"
//! (`reset` set) and "Reset Recvd" (`reset.acked`).

use std::collections::VecDeque;

use bytes::{BufMut, Bytes};

use super::flow::SendCredit;
use super::id::StreamId;
use super::ranges::RangeSet;
use crate::proto::coding::VarInt;
use crate::proto::frame::Stream;

/// Upper bound of the free space that wakes a blocked writer (see [`SendStream::free_above_low_water`]).
pub(crate) const WRITABLE_LOW_WATER_MAX: u64 = 256 * 1024;

/// A STREAM frame to send: a view of the send buffer (the data stays in the application's chunks until the
/// frame is written into a packet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamFrame {
    /// Stream ID.
    pub id: StreamId,
    /// Offset of the first byte.
    pub offset: u64,
    /// Whether the frame ends the stream.
    pub fin: bool,
    /// The data, as slices of the application's chunks, in order.
    pub data: Vec<Bytes>,
}

/// What the connection keeps about a sent STREAM frame, to report its acknowledgement or loss with
/// [`Streams::on_stream_frame_acked`](super::Streams::on_stream_frame_acked) /
/// [`Streams::on_stream_frame_lost`](super::Streams::on_stream_frame_lost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamFrameRecord {
    /// Stream ID.
    pub id: StreamId,
    /// Offset of the first byte.
    pub offset: u64,
    /// Number of data bytes.
    pub len: u64,
    /// Whether the frame carried the FIN bit.
    pub fin: bool,
}

impl StreamFrame {
    /// Number of data bytes.
    pub fn len(&self) -> u64 {
        self.data.iter().map(|b| b.len() as u64).sum()
    }

    /// Whether the frame carries no data (a bare FIN).
    pub fn is_empty(&self) -> bool {
        self.data.iter().all(Bytes::is_empty)
    }

    /// The record to keep with the sent packet.
    pub fn record(&self) -> StreamFrameRecord {
        StreamFrameRecord {
            id: self.id,
            offset: self.offset,
            len: self.len(),
            fin: self.fin,
        }
    }

    /// Size of everything but the data.
    pub fn header_len(&self, with_len: bool) -> usize {
        header_len(self.id, self.offset, with_len.then(|| self.len()))
    }

    /// Exact encoded size.
    pub fn encoded_len(&self, with_len: bool) -> usize {
        self.header_len(with_len) + self.len() as usize
    }

    /// Writes the frame; without `with_len` the data runs to the end of the packet, so the frame must be last.
    pub fn encode<B: BufMut>(&self, buf: &mut B, with_len: bool) {
        encode_header(buf, self.id, self.offset, self.fin, with_len.then(|| self.len()));
        for chunk in &self.data {
            buf.put_slice(chunk);
        }
    }
}

/// Writes a STREAM frame's type, ID, offset (if not 0) and, if given, Length field.
fn encode_header<B: BufMut>(buf: &mut B, id: StreamId, offset: u64, fin: bool, len: Option<u64>) {
    let header = Stream {
        id: id.to_varint(),
        offset: VarInt::from_u64(offset).unwrap_or(VarInt::MAX),
        fin,
        data: &[],
    };
    header.ty(len.is_some()).encode(buf);
    header.id.encode(buf);
    if offset != 0 {
        header.offset.encode(buf);
    }
    if let Some(len) = len {
        VarInt::from_u64(len).unwrap_or(VarInt::MAX).encode(buf);
    }
}

/// Size of a STREAM frame header (type, ID, offset if not 0, length if given).
fn header_len(id: StreamId, offset: u64, len: Option<u64>) -> usize {
    1 + id.to_varint().size()
        + if offset != 0 {
            VarInt::size_of(offset).unwrap_or(8)
        } else {
            0
        }
        + len.map_or(0, |l| VarInt::size_of(l).unwrap_or(8))
}

/// The most data bytes a STREAM frame (with a Length field) at `offset` can carry in `max_frame_len` bytes,
/// or `None` if not even an empty frame fits.
fn max_payload(id: StreamId, offset: u64, max_frame_len: usize) -> Option<u64> {
    let room = (max_frame_len as u64).checked_sub(header_len(id, offset, None) as u64)?;
    // The largest `d` with size_of(d) + d <= room: for each length-field size k, the most it can encode.
    [
        (1u64, (1u64 << 6) - 1),
        (2, (1 << 14) - 1),
        (4, (1 << 30) - 1),
        (8, (1 << 62) - 1),
    ]
    .into_iter()
    .filter_map(|(k, most)| Some(room.checked_sub(k)?.min(most)))
    .max()
}

/// Why a write was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The send buffer is full; a [`StreamEvent::Writable`](super::StreamEvent::Writable) follows when space
    /// frees up.
    #[error("send buffer full")]
    Blocked,
    /// The peer sent STOP_SENDING with this application error code; the stream was reset.
    #[error("stopped by peer with code {0}")]
    Stopped(VarInt),
    /// The stream does not exist, cannot send, or was already finished or reset.
    #[error("closed stream")]
    ClosedStream,
}

/// A reset of the sending part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reset {
    /// Application error code.
    pub(crate) code: VarInt,
    /// Final size: every byte ever sent.
    pub(crate) final_size: u64,
    /// Whether the RESET_STREAM frame was acknowledged ("Reset Recvd").
    pub(crate) acked: bool,
}

/// The sending part of a stream.
#[derive(Debug)]
pub(crate) struct SendStream {
    /// Data not yet acknowledged as a prefix, from `base` to `write_offset`: contiguous chunks, each with
    /// the stream offset of its first byte.
    chunks: VecDeque<(u64, Bytes)>,
    /// Offset of the first byte of `chunks`: everything below is acknowledged.
    base: u64,
    /// End of the data written by the application.
    write_offset: u64,
    /// First offset never sent: the stream-level flow control credit used.
    next_unsent: u64,
    /// Lost ranges waiting for retransmission (within `base..next_unsent`).
    retransmit: RangeSet,
    /// Acknowledged ranges above `base`.
    acked: RangeSet,
    /// Bytes in `acked` (kept, so that reading it costs nothing).
    acked_bytes: u64,
    /// The application called finish: `write_offset` is the final size.
    finished: bool,
    /// The FIN has to be (re)sent.
    fin_pending: bool,
    /// The FIN was acknowledged.
    fin_acked: bool,
    /// The peer's MAX_STREAM_DATA.
    pub(crate) credit: SendCredit,
    /// Set once reset ("Reset Sent").
    pub(crate) reset: Option<Reset>,
    /// The peer's STOP_SENDING code.
    pub(crate) stop_code: Option<VarInt>,
    /// Buffer limit: unacknowledged bytes.
    max_buffer: u64,
    /// Scheduling priority: higher first.
    pub(crate) priority: i32,
    /// Whether the stream is in the connection's send queue.
    pub(crate) queued: bool,
    /// A write was refused for lack of buffer space: report when space frees up.
    pub(crate) want_writable: bool,
    /// Opportunistic retransmission: everything below this offset was already re-sent once as a hole
    /// (see [`SendStream::reinject`]); a hole is re-sent at most once.
    reinjected_to: u64,
    /// Whether the stream is in the connection's set of streams with a hole (`Streams::holey`), so that
    /// an acknowledgement touches that set only when [`SendStream::has_hole`] changes.
    pub(crate) listed_holey: bool,
}

/// Where a stream's sending stands: what [`Streams::send_progress`](super::Streams::send_progress) reports,
/// and what opportunistic retransmission reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SendProgress {
    /// The lowest unacknowledged offset: everything below was acknowledged.
    pub acked_prefix: u64,
    /// The highest offset sent so far (exclusive).
    pub sent_end: u64,
    /// Bytes acknowledged above `acked_prefix` (out of order).
    pub acked_above: u64,
    /// The lowest hole not re-sent yet by opportunistic retransmission, as `(start, end)`: an unacknowledged
    /// range with acknowledged data above it, at or above [`SendProgress::reinjected_to`].
    pub next_hole: Option<(u64, u64)>,
    /// Everything below this offset was already re-sent once by opportunistic retransmission.
    pub reinjected_to: u64,
    /// New data waits but the stream's own flow-control credit (MAX_STREAM_DATA) is used up.
    pub credit_blocked: bool,
    /// New data waits to be sent (written by the application, never sent).
    pub has_unsent: bool,
}

impl SendProgress {
    /// The unacknowledged span: highest offset sent minus lowest unacknowledged offset.
    pub fn span(&self) -> u64 {
        self.sent_end.saturating_sub(self.acked_prefix)
    }

    /// Whether the lowest unacknowledged range has acknowledged data above it (a hole).
    pub fn has_hole(&self) -> bool {
        self.acked_above > 0
    }
}

impl SendStream {
    /// A stream whose peer allows `max_data` bytes, buffering at most `max_buffer` unacknowledged bytes.
    pub(crate) fn new(max_data: u64, max_buffer: u64) -> Self {
        SendStream {
            chunks: VecDeque::new(),
            base: 0,
            write_offset: 0,
            next_unsent: 0,
            retransmit: RangeSet::default(),
            acked: RangeSet::default(),
            acked_bytes: 0,
            finished: false,
            fin_pending: false,
            fin_acked: false,
            credit: SendCredit::new(max_data),
            reset: None,
            stop_code: None,
            max_buffer,
            priority: 0,
            queued: false,
            want_writable: false,
            reinjected_to: 0,
            listed_holey: false,
        }
    }

    /// Whether data above the lowest unacknowledged offset was acknowledged (a hole): one comparison, for
    /// every acknowledgement.
    pub(crate) fn has_hole(&self) -> bool {
        self.acked_bytes > 0
    }

    /// Where sending stands (see [`SendProgress`]).
    pub(crate) fn progress(&self) -> SendProgress {
        let reinjected_to = self.reinjected_to.max(self.base);
        SendProgress {
            acked_prefix: self.base,
            sent_end: self.next_unsent,
            acked_above: self.acked_bytes,
            next_hole: self.acked.hole_from(reinjected_to).map(|r| (r.start, r.end)),
            reinjected_to,
            credit_blocked: self.has_unsent() && self.credit.available() == 0,
            has_unsent: self.has_unsent(),
        }
    }

    /// Opportunistic retransmission of the lowest hole not re-sent yet ([`SendProgress::next_hole`]): queues
    /// its bytes that are not already queued as lost for sending again (before new data, like lost data).
    /// Returns the hole and how many bytes were queued; `None` when there is no such hole.
    pub(crate) fn reinject(&mut self) -> Option<(std::ops::Range<u64>, u64)> {
        if self.reset.is_some() {
            return None;
        }
        let hole = self.acked.hole_from(self.reinjected_to.max(self.base))?;
        let hole = hole.start..hole.end.min(self.next_unsent);
        if hole.is_empty() {
            return None;
        }
        let mut queued = 0;
        // A hole lies between acknowledged ranges: none of its bytes is acknowledged.
        for gap in self.retransmit.gaps(hole.clone()) {
            queued += gap.end - gap.start;
            self.retransmit.insert(gap);
        }
        self.reinjected_to = hole.end;
        Some((hole, queued))
    }

    /// Whether lost or re-sent data within `range` still waits to be sent.
    pub(crate) fn retransmit_overlaps(&self, range: std::ops::Range<u64>) -> bool {
        self.reset.is_none() && !self.retransmit.is_empty() && self.retransmit.gaps(range.clone()) != [range]
    }

    /// Bytes held in the buffer (written, not acknowledged as a prefix).
    pub(crate) fn buffered(&self) -> u64 {
        self.write_offset - self.base
    }

    /// Whether a writer that found the buffer full should be woken: at least an eighth of the buffer (at
    /// most [`WRITABLE_LOW_WATER_MAX`] bytes) is free. Waking it for every acknowledgement that frees a
    /// packet's worth would cost a wake-up and a lock per packet for writes of a packet each.
    pub(crate) fn free_above_low_water(&self) -> bool {
        let free = self.max_buffer.saturating_sub(self.buffered());
        free >= (self.max_buffer / 8).clamp(1, WRITABLE_LOW_WATER_MAX)
    }

    /// Appends a prefix of `data` that fits in the buffer; returns how many bytes were taken.
    pub(crate) fn write(&mut self, data: Bytes) -> Result<usize, WriteError> {
        if let Some(code) = self.stop_code {
            return Err(WriteError::Stopped(code));
        }
        if self.finished || self.reset.is_some() {
            return Err(WriteError::ClosedStream);
        }
        if data.is_empty() {
            return Ok(0);
        }
        // Offsets stay below 2^62 (RFC 9000 §4.5: no data beyond what flow control can express).
        let space = self
            .max_buffer
            .saturating_sub(self.buffered())
            .min(VarInt::MAX.into_inner() - self.write_offset);
        if space == 0 {
            self.want_writable = true;
            return Err(WriteError::Blocked);
        }
        let n = (data.len() as u64).min(space) as usize;
        let data = if n < data.len() { data.slice(..n) } else { data };
        self.chunks.push_back((self.write_offset, data));
        self.write_offset += n as u64;
        Ok(n)
    }

    /// Marks the end of the stream.
    pub(crate) fn finish(&mut self) -> Result<(), WriteError> {
        if let Some(code) = self.stop_code {
            return Err(WriteError::Stopped(code));
        }
        if self.finished || self.reset.is_some() {
            return Err(WriteError::ClosedStream);
        }
        self.finished = true;
        self.fin_pending = true;
        Ok(())
    }

    /// Abandons the data and enters "Reset Sent"; `false` if already reset or fully acknowledged.
    pub(crate) fn reset(&mut self, code: VarInt) -> bool {
        if self.reset.is_some() || self.is_done() {
            return false;
        }
        self.reset = Some(Reset {
            code,
            final_size: self.next_unsent,
            acked: false,
        });
        self.chunks.clear();
        self.base = self.write_offset;
        self.retransmit.clear();
        self.acked.clear();
        self.acked_bytes = 0;
        self.fin_pending = false;
        true
    }

    /// "Data Recvd" or "Reset Recvd": the sending part is finished with.
    pub(crate) fn is_done(&self) -> bool {
        match self.reset {
            Some(r) => r.acked,
            None => self.finished && self.fin_acked && self.base == self.write_offset,
        }
    }

    /// Whether anything is waiting to be sent, regardless of flow control.
    pub(crate) fn has_pending(&self) -> bool {
        self.reset.is_none()
            && (!self.retransmit.is_empty() || self.next_unsent < self.write_offset || self.fin_pending)
    }

    /// Whether new data is waiting but the stream's own credit is exhausted.
    pub(crate) fn has_unsent(&self) -> bool {
        self.reset.is_none() && self.next_unsent < self.write_offset
    }

    /// Bytes written by the application and not yet sent once (regardless of flow control).
    pub(crate) fn unsent_len(&self) -> u64 {
        if self.reset.is_some() {
            return 0;
        }
        self.write_offset.saturating_sub(self.next_unsent)
    }

    /// Bytes of lost data waiting to be sent again.
    pub(crate) fn retransmit_len(&self) -> u64 {
        if self.reset.is_some() {
            return 0;
        }
        self.retransmit.total()
    }

    /// Whether a frame can be produced now, given `conn_credit` bytes of connection-level credit.
    pub(crate) fn is_sendable(&self, conn_credit: u64) -> bool {
        if self.reset.is_some() {
            return false;
        }
        !self.retransmit.is_empty()
            || (self.next_unsent < self.write_offset && self.credit.available().min(conn_credit) > 0)
            || (self.fin_pending && self.next_unsent == self.write_offset)
    }

    /// The next frame for this stream in at most `max_frame_len` bytes (with a Length field), lost data
    /// first. Returns the frame and how many new bytes it sends (to charge against connection credit).
    pub(crate) fn poll_frame(
        &mut self,
        id: StreamId,
        max_frame_len: usize,
        conn_credit: u64,
    ) -> Option<(StreamFrame, u64)> {
        let (r, new) = self.next_frame(id, max_frame_len, conn_credit)?;
        let frame = StreamFrame {
            id,
            offset: r.offset,
            fin: r.fin,
            data: self.slices(r.offset, r.offset + r.len),
        };
        Some((frame, new))
    }

    /// [`SendStream::poll_frame`] written straight into `buf` (with a Length field; the same bytes as
    /// [`StreamFrame::encode`]) from the chunks: no list of slices is built. Returns the frame's record and
    /// how many new bytes it sends.
    pub(crate) fn write_frame<B: BufMut>(
        &mut self,
        id: StreamId,
        max_frame_len: usize,
        conn_credit: u64,
        buf: &mut B,
    ) -> Option<(StreamFrameRecord, u64)> {
        let (r, new) = self.next_frame(id, max_frame_len, conn_credit)?;
        let (start, end) = (r.offset, r.offset + r.len);
        encode_header(buf, id, r.offset, r.fin, Some(r.len));
        for (pos, chunk) in self.chunks.range(self.chunk_range(start, end)) {
            let pos = *pos;
            let from = start.saturating_sub(pos) as usize;
            let to = (end.min(pos + chunk.len() as u64) - pos) as usize;
            buf.put_slice(chunk.get(from..to).unwrap_or_default());
        }
        Some((r, new))
    }

    /// Chooses the next frame (lost data first) and updates the sending state as if it were sent: its range
    /// and FIN, and how many new bytes it sends.
    fn next_frame(
        &mut self,
        id: StreamId,
        max_frame_len: usize,
        conn_credit: u64,
    ) -> Option<(StreamFrameRecord, u64)> {
        if self.reset.is_some() {
            return None;
        }
        let (offset, len, new) = if let Some(lost) = self.retransmit.first() {
            let room = max_payload(id, lost.start, max_frame_len)?;
            let len = (lost.end - lost.start).min(room);
            if len == 0 {
                return None;
            }
            self.retransmit.remove(lost.start..lost.start + len);
            (lost.start, len, 0)
        } else {
            let offset = self.next_unsent;
            let room = max_payload(id, offset, max_frame_len)?;
            let allowed = (self.write_offset - offset)
                .min(self.credit.available())
                .min(conn_credit);
            let len = allowed.min(room);
            let fin_now = self.fin_pending && offset + len == self.write_offset;
            if len == 0 && !fin_now {
                return None;
            }
            self.next_unsent += len;
            self.credit.consume(len);
            (offset, len, len)
        };
        let end = offset + len;
        let fin = self.finished && self.fin_pending && end == self.write_offset;
        if fin {
            self.fin_pending = false;
        }
        Some((StreamFrameRecord { id, offset, len, fin }, new))
    }

    /// The buffered data in `start..end` (within `base..write_offset`), as slices of the chunks.
    fn slices(&self, start: u64, end: u64) -> Vec<Bytes> {
        let chunks = self.chunk_range(start, end);
        let mut out = Vec::with_capacity(chunks.len());
        for (pos, chunk) in self.chunks.range(chunks) {
            let pos = *pos;
            let chunk_end = pos + chunk.len() as u64;
            let from = start.saturating_sub(pos) as usize;
            let to = (end.min(chunk_end) - pos) as usize;
            out.push(chunk.slice(from..to));
        }
        out
    }

    /// The indices of the chunks holding bytes of `start..end`, found by binary search (chunks are
    /// contiguous and in offset order): O(log n) in the chunks held, whatever the write sizes.
    fn chunk_range(&self, start: u64, end: u64) -> std::ops::Range<usize> {
        let first = self
            .chunks
            .partition_point(|(pos, chunk)| pos + chunk.len() as u64 <= start);
        let last = self.chunks.partition_point(|(pos, _)| *pos < end);
        first..last.max(first)
    }

    /// The frame `offset..offset + len` (with `fin`) was acknowledged. Returns whether buffer space was freed.
    pub(crate) fn on_ack(&mut self, offset: u64, len: u64, fin: bool) -> bool {
        if self.reset.is_some() {
            return false;
        }
        if fin {
            self.fin_acked = true;
            self.fin_pending = false;
        }
        let start = offset.max(self.base);
        let end = offset.saturating_add(len).min(self.next_unsent);
        if start >= end {
            return false;
        }
        if !self.retransmit.is_empty() {
            self.retransmit.remove(start..end);
        }
        if start > self.base {
            // Above a hole: the prefix stays; only the acknowledged ranges grow (O(1) at their top).
            self.acked_bytes += self.acked.insert(start..end);
            return false;
        }
        // The acknowledged prefix grows to `end`, and past every acknowledged range that it reaches: those
        // leave the set (each once), with their bytes.
        let mut new_base = end;
        while let Some(first) = self.acked.first() {
            if first.start > new_base {
                break;
            }
            self.acked.pop_front();
            self.acked_bytes = self.acked_bytes.saturating_sub(first.end - first.start);
            new_base = new_base.max(first.end);
        }
        // Release the chunks below the new acknowledged prefix (each chunk leaves once), and cut the front
        // of the one the prefix ends in.
        while let Some((pos, front)) = self.chunks.front_mut() {
            let chunk_end = *pos + front.len() as u64;
            if chunk_end <= new_base {
                self.chunks.pop_front();
            } else {
                if *pos < new_base {
                    *front = front.slice((new_base - *pos) as usize..);
                    *pos = new_base;
                }
                break;
            }
        }
        self.base = new_base;
        true
    }

    /// The frame `offset..offset + len` (with `fin`) was declared lost: queue what was not acknowledged
    /// since. Returns whether something needs sending again.
    pub(crate) fn on_lost(&mut self, offset: u64, len: u64, fin: bool) -> bool {
        if self.reset.is_some() {
            return false;
        }
        let mut again = false;
        if fin && !self.fin_acked && self.finished {
            self.fin_pending = true;
            again = true;
        }
        let start = offset.max(self.base);
        let end = offset.saturating_add(len).min(self.next_unsent);
        if start < end {
            for gap in self.acked.gaps(start..end) {
                self.retransmit.insert(gap);
                again = true;
            }
        }
        again
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::frame::{Frame, decode_frames};
    use crate::proto::transport_params::Side;

    fn id() -> StreamId {
        StreamId::new(Side::Client, crate::proto::frame::Dir::Bi, 0).unwrap()
    }

    fn concat(f: &StreamFrame) -> Vec<u8> {
        f.data.iter().flat_map(|b| b.iter().copied()).collect()
    }

    #[test]
    fn max_payload_is_the_largest_that_fits() {
        let id = id();
        for max in 0..20_000usize {
            for offset in [0u64, 1, 100, 1 << 20] {
                match max_payload(id, offset, max) {
                    Some(d) => {
                        let used = |d: u64| header_len(id, offset, Some(d)) as u64 + d;
                        assert!(used(d) <= max as u64, "{max} {offset} {d}");
                        assert!(
                            used(d + 1) > max as u64 && used(d + 2) > max as u64,
                            "{max} {offset} {d}"
                        );
                    }
                    None => assert!(max < header_len(id, offset, Some(0))),
                }
            }
        }
    }

    #[test]
    fn frames_span_chunks_and_encode_like_the_codec() {
        let mut s = SendStream::new(1000, 1000);
        s.write(Bytes::from_static(b"hello ")).unwrap();
        s.write(Bytes::from_static(b"world")).unwrap();
        s.finish().unwrap();
        let (f, new) = s.poll_frame(id(), 100, 1000).unwrap();
        assert_eq!(new, 11);
        assert!(f.fin);
        assert_eq!(concat(&f), b"hello world");
        for with_len in [true, false] {
            let mut buf = Vec::new();
            f.encode(&mut buf, with_len);
            assert_eq!(buf.len(), f.encoded_len(with_len));
            let frames: Vec<_> = decode_frames(&buf).collect::<Result<_, _>>().unwrap();
            let Frame::Stream(d) = &frames[0] else { panic!() };
            assert_eq!(
                (d.id, d.offset.into_inner(), d.fin, d.data),
                (id().to_varint(), 0, true, &b"hello world"[..])
            );
        }
        assert!(s.poll_frame(id(), 100, 1000).is_none());
    }

    /// An application writing small pieces (a tunnel writes one IP packet at a time) has one chunk per
    /// write in flight. Building a frame looks up only the chunks it covers: with 100 000 one-byte-to-
    /// ten-byte chunks held, a frame is built from the chunks of its own range, found by binary search,
    /// at the start, in the middle and at the end of the buffer, and after the acknowledged prefix moved
    /// into the middle of a chunk.
    #[test]
    fn frames_touch_only_their_own_chunks_among_many_small_writes() {
        const N: usize = 100_000;
        let mut s = SendStream::new(u64::MAX >> 2, u64::MAX >> 2);
        // Chunk i holds (i % 10) + 1 bytes, each byte equal to i as u8: 550 000 bytes in all.
        let mut starts = Vec::with_capacity(N);
        let mut total = 0u64;
        for i in 0..N {
            let len = i % 10 + 1;
            starts.push(total);
            s.write(Bytes::from(vec![i as u8; len])).unwrap();
            total += len as u64;
        }
        assert_eq!(total, 550_000);
        let expect = |a: u64, b: u64| -> Vec<u8> {
            (a..b)
                .map(|off| (starts.partition_point(|&st| st <= off) - 1) as u8)
                .collect()
        };
        let flat = |v: &[Bytes]| v.iter().flat_map(|b| b.iter().copied()).collect::<Vec<u8>>();
        // Chunk 50 000 starts at 5000 · 55 = 275 000 and holds 1 byte; chunk 50 001 2 bytes: a frame of
        // 275 000..275 003 spans exactly those two chunks.
        assert_eq!(starts[50_000], 275_000);
        assert_eq!(s.chunk_range(275_000, 275_003), 50_000..50_002);
        assert_eq!(flat(&s.slices(275_000, 275_003)), [80, 81, 81]);
        // The start and the end of the buffer: one byte of the first chunk, the last chunk (10 bytes).
        assert_eq!(s.chunk_range(0, 1), 0..1);
        assert_eq!(s.chunk_range(549_990, 550_000), N - 1..N);
        for (a, b) in [(0, 1200), (274_500, 275_700), (548_800, 550_000), (3, 4)] {
            assert_eq!(flat(&s.slices(a, b)), expect(a, b), "{a}..{b}");
        }
        // As if 300 000 bytes were sent; 0..275 002 is acknowledged in order: the prefix ends one byte into
        // chunk 50 001 (275 001..275 003), which is cut to its last byte.
        s.next_unsent = 300_000;
        assert!(s.on_ack(0, 275_002, false));
        assert_eq!(s.chunks.len(), N - 50_001);
        assert_eq!(
            s.chunks.front().map(|(pos, c)| (*pos, c.len())),
            Some((275_002, 1))
        );
        assert_eq!(s.chunk_range(275_002, 275_005), 0..2);
        assert_eq!(flat(&s.slices(275_002, 275_005)), expect(275_002, 275_005));
        // A frame built by `poll_frame` at the send offset.
        let (f, _) = s.poll_frame(id(), 1200, u64::MAX).unwrap();
        assert_eq!(f.offset, 300_000);
        assert_eq!(concat(&f), expect(300_000, 300_000 + f.len()));
        assert!(f.data.len() <= 1200 / 5 + 2);
    }

    /// `write_frame` writes the bytes `poll_frame(..).encode(.., true)` writes, with the same record and
    /// the same state afterwards: new data across chunk boundaries, a lost range first, and the FIN.
    #[test]
    fn write_frame_writes_what_poll_frame_encodes() {
        let mut a = SendStream::new(100_000, 100_000);
        let mut b = SendStream::new(100_000, 100_000);
        for s in [&mut a, &mut b] {
            for i in 0..40u8 {
                s.write(Bytes::from(vec![i; 7 + usize::from(i) * 13])).unwrap();
            }
            s.finish().unwrap();
        }
        let mut round = 0;
        loop {
            round += 1;
            let max = 50 + (round * 37) % 700;
            let polled = a.poll_frame(id(), max, 100_000);
            let mut written = Vec::new();
            let record = b.write_frame(id(), max, 100_000, &mut written);
            let Some((f, new_a)) = polled else {
                assert!(record.is_none());
                break;
            };
            let (r, new_b) = record.unwrap();
            let mut encoded = Vec::new();
            f.encode(&mut encoded, true);
            assert_eq!(written, encoded, "round {round}");
            assert_eq!((f.record(), new_a), (r, new_b));
            assert!(written.len() <= max);
            // Round 5's frame is lost once: it is sent again before new data.
            if round == 5 {
                assert!(a.on_lost(r.offset, r.len, r.fin));
                assert!(b.on_lost(r.offset, r.len, r.fin));
            }
        }
        assert!(round > 20);
        assert_eq!((a.next_unsent, a.fin_pending), (b.next_unsent, b.fin_pending));
        assert!(!b.fin_pending && b.next_unsent == b.write_offset);
    }

    #[test]
    fn write_is_bounded_by_the_buffer() {
        let mut s = SendStream::new(1000, 10);
        assert_eq!(s.write(Bytes::from_static(b"0123456789abc")), Ok(10));
        assert_eq!(s.write(Bytes::from_static(b"x")), Err(WriteError::Blocked));
        assert!(s.want_writable);
        let (f, _) = s.poll_frame(id(), 100, 1000).unwrap();
        assert!(s.on_ack(f.offset, f.len(), f.fin));
        assert_eq!(s.buffered(), 0);
        assert_eq!(s.write(Bytes::from_static(b"x")), Ok(1));
    }

    #[test]
    fn holes_are_resent_lowest_first_and_once() {
        // Ten 100-byte frames; frames 1 and 3 are still out when 0, 2 and 4..=9 are acknowledged.
        let mut s = SendStream::new(10_000, 10_000);
        s.write(Bytes::from(vec![7u8; 1000])).unwrap();
        let frames: Vec<_> = (0..10)
            .map(|i| {
                let max = header_len(id(), i * 100, Some(100)) + 100;
                s.poll_frame(id(), max, 10_000).unwrap().0.record()
            })
            .collect();
        assert!(frames.iter().all(|f| f.len == 100));
        for i in [0usize, 2, 4, 5, 6, 7, 8, 9] {
            s.on_ack(frames[i].offset, frames[i].len, frames[i].fin);
        }
        let p = s.progress();
        // Bytes 0..100 acknowledged in order; 200..300 and 400..1000 above the lowest hole 100..200.
        assert_eq!((p.acked_prefix, p.sent_end, p.acked_above), (100, 1000, 700));
        assert_eq!(p.acked_above, s.acked.total());
        assert_eq!(p.next_hole, Some((100, 200)));
        assert_eq!(s.reinject(), Some((100..200, 100)));
        assert_eq!(s.progress().next_hole, Some((300, 400)));
        assert_eq!(s.reinject(), Some((300..400, 100)));
        // Each hole once.
        assert_eq!(s.progress().next_hole, None);
        assert_eq!(s.reinject(), None);
        // The copies go out before new data, as one frame each.
        let a = s.poll_frame(id(), 1000, 10_000).unwrap().0;
        assert_eq!((a.offset, a.len()), (100, 100));
        assert!(s.retransmit_overlaps(300..400));
        let b = s.poll_frame(id(), 1000, 10_000).unwrap().0;
        assert_eq!((b.offset, b.len()), (300, 100));
        assert!(!s.retransmit_overlaps(100..400));
        // The original of 100..200 is acknowledged: the prefix moves to the next hole, the count follows.
        s.on_ack(100, 100, false);
        let p = s.progress();
        assert_eq!((p.acked_prefix, p.acked_above), (300, 600));
        assert_eq!(p.acked_above, s.acked.total());
        s.on_ack(300, 100, false);
        let p = s.progress();
        assert_eq!((p.acked_prefix, p.acked_above, p.next_hole), (1000, 0, None));
        assert!(!p.has_hole());
    }

    /// Two paths carry alternate 100-byte frames of one 1000-byte stream (written as four 250-byte
    /// chunks): path A the even frames, path B the odd ones, and their acknowledgements interleave, with a
    /// duplicate and an overlap. Hand-computed prefix, ranges above it, their byte count and the chunks
    /// held after each step.
    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn interleaved_acknowledgements_move_the_prefix_and_free_chunks() {
        let mut s = SendStream::new(10_000, 10_000);
        for i in 0..4u8 {
            s.write(Bytes::from(vec![i; 250])).unwrap();
        }
        s.finish().unwrap();
        let frames: Vec<_> = (0..10)
            .map(|i| {
                let max = header_len(id(), i * 100, Some(100)) + 100;
                s.poll_frame(id(), max, 10_000).unwrap().0.record()
            })
            .collect();
        assert!(frames.iter().all(|f| f.len == 100));
        assert!(frames[9].fin && !frames[8].fin);
        let ack = |s: &mut SendStream, i: usize| {
            let f = frames[i];
            s.on_ack(f.offset, f.len, f.fin)
        };
        let state = |s: &SendStream| {
            let ranges = s.acked.to_vec();
            let chunks: Vec<_> = s.chunks.iter().map(|(pos, c)| (*pos, c.len())).collect();
            (s.base, ranges, s.acked_bytes, chunks)
        };
        // Path A: frame 0 moves the prefix to 100 (the first chunk is cut); 2, 4 and 8 wait above holes.
        assert!(ack(&mut s, 0));
        assert!(!ack(&mut s, 2));
        assert!(!ack(&mut s, 4));
        assert!(!ack(&mut s, 8));
        assert_eq!(
            state(&s),
            (
                100,
                vec![200..300, 400..500, 800..900],
                300,
                vec![(100, 150), (250, 250), (500, 250), (750, 250)]
            )
        );
        assert_eq!(s.progress().next_hole, Some((100, 200)));
        // Path B: frame 1 fills 100..200 and joins 200..300: prefix 300, the first chunk leaves whole.
        assert!(ack(&mut s, 1));
        assert_eq!(
            state(&s),
            (
                300,
                vec![400..500, 800..900],
                200,
                vec![(300, 200), (500, 250), (750, 250)]
            )
        );
        // Frame 3 joins 400..500: prefix 500, the chunk 250..500 leaves.
        assert!(ack(&mut s, 3));
        assert_eq!(
            state(&s),
            (500, vec![800..900], 100, vec![(500, 250), (750, 250)])
        );
        // A duplicate of frame 2 (below the prefix) changes nothing.
        assert!(!ack(&mut s, 2));
        assert_eq!(s.base, 500);
        // Frame 7 joins 800..900 from below; an overlapping 600..750 joins it too: 100 new bytes (700..750
        // was held).
        assert!(!ack(&mut s, 7));
        assert!(!s.on_ack(600, 150, false));
        assert_eq!(
            state(&s),
            (500, vec![600..900], 300, vec![(500, 250), (750, 250)])
        );
        // Frame 9 with the FIN: acknowledged above the hole 500..600; not done yet.
        assert!(!ack(&mut s, 9));
        assert_eq!(state(&s).1, vec![600..1000]);
        assert_eq!(s.acked_bytes, 400);
        assert!(!s.is_done());
        assert_eq!(s.progress().next_hole, Some((500, 600)));
        // Frame 5 closes the last hole: everything and the FIN acknowledged, the buffer empty.
        assert!(ack(&mut s, 5));
        assert_eq!(state(&s), (1000, vec![], 0, vec![]));
        assert!(s.is_done() && !s.has_hole());
        assert_eq!(s.buffered(), 0);
    }
}
