//! The receiving part of a stream (RFC 9000 §3.2): reassembly and the receive state machine.
//!
//! STREAM frames arrive out of order, overlapping and duplicated (retransmissions may take another path).
//! Only the bytes not held yet are kept, as slices of the received [`Bytes`] (zero-copy), never overlapping
//! and never below what the application has read. Every stored byte lies below the advertised stream limit,
//! so the buffer never exceeds the window.
//!
//! The buffer has two parts, split where the first gap starts (`contiguous_end`): the fragments below it,
//! readable in order, in a queue (an in-order arrival is appended, a read takes from the front: O(1), no
//! tree), and the fragments above it, waiting, in a map keyed by offset. When two paths carry one stream,
//! much of the data arrives above a gap: it is appended at the top of the map (or merged into its last
//! fragment), and when the frame that fills the gap arrives, the fragments it makes contiguous move from
//! the map to the queue, each once.
//!
//! For the receiver statistics ([`ReassemblyStats`](super::ReassemblyStats)) each waiting fragment keeps
//! when it arrived; when it moves to the queue its waiting time is recorded. Bytes that arrive in order
//! record no wait.
//!
//! States (RFC 9000 §3.2, Figure 3): "Recv" (no final size), "Size Known" (`final_size` set), "Data Recvd"
//! (all bytes up to the final size buffered), "Data Read" (the application read the end: the stream is
//! removed), "Reset Recvd" (`reset` set) and "Reset Read" (the application saw the reset: removed).

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};

use super::flow::RecvWindow;
use super::reassembly::{HolStats, Occupancy};
use crate::proto::coding::VarInt;
use crate::proto::error::{TransportError, TransportErrorCode};

/// Pieces smaller than this are merged into the fragment they continue ([`RecvStream::merged`]).
const MERGE_SMALL: usize = 256;

/// Merged fragments grow to at most this many bytes (the copy per merge stays small).
const MERGE_MAX: usize = 4096;

/// Why a read returned no data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// No data is available yet; a [`StreamEvent::Readable`](super::StreamEvent::Readable) follows.
    #[error("no data available")]
    Blocked,
    /// The peer reset the stream with this application error code.
    #[error("reset by peer with code {0}")]
    Reset(VarInt),
    /// The stream does not exist, cannot receive, or was already read to its end, reset or stopped.
    #[error("closed stream")]
    ClosedStream,
}

/// What a received frame changed, for the connection-level accounting.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Received {
    /// How much the stream's highest received offset grew (charged to connection flow control).
    pub(crate) grew: u64,
    /// Bytes the application will never read (reset or stopped stream): connection credit to release.
    pub(crate) discarded: u64,
    /// Whether the application has something new to learn (data at the read offset, the end, a reset).
    pub(crate) readable: bool,
}

/// FINAL_SIZE_ERROR.
fn final_size_error(reason: &'static str) -> TransportError {
    TransportError::new(TransportErrorCode::FINAL_SIZE_ERROR, reason)
}

/// FLOW_CONTROL_ERROR.
pub(crate) fn flow_control_error(reason: &'static str) -> TransportError {
    TransportError::new(TransportErrorCode::FLOW_CONTROL_ERROR, reason)
}

/// A received fragment above the first gap, and when it arrived.
#[derive(Debug, Clone)]
struct Chunk {
    data: Bytes,
    /// When its bytes arrived: the byte-weighted mean over small pieces merged into it (a single arrival
    /// otherwise), so that the sum of the waiting times stays exact.
    arrived: Instant,
    /// When its first byte arrived (the longest wait of its bytes).
    first: Instant,
}

impl Chunk {
    fn new(data: Bytes, now: Instant) -> Self {
        Chunk {
            data,
            arrived: now,
            first: now,
        }
    }

    fn len(&self) -> u64 {
        self.data.len() as u64
    }
}

/// The receiving part of a stream.
#[derive(Debug)]
pub(crate) struct RecvStream {
    /// Received data readable in order: non-empty fragments covering `read_offset..contiguous_end`, in
    /// order, without a gap.
    ready: VecDeque<Bytes>,
    /// Received data above the first gap: offset → fragment, disjoint, all starting above `contiguous_end`.
    waiting: BTreeMap<u64, Chunk>,
    /// Bytes in `ready` and `waiting`.
    buffered: u64,
    /// Bytes delivered to the application (or discarded for it).
    read_offset: u64,
    /// Where the first gap starts: the end of `ready`.
    contiguous_end: u64,
    /// Known once a FIN or RESET_STREAM arrived.
    pub(crate) final_size: Option<u64>,
    /// Stream-level flow control.
    pub(crate) window: RecvWindow,
    /// The peer's RESET_STREAM code ("Reset Recvd").
    pub(crate) reset: Option<VarInt>,
    /// The application's STOP_SENDING code: incoming data is discarded.
    pub(crate) stopped: Option<VarInt>,
    /// Offset up to which connection-level credit was given back.
    released: u64,
    /// A Readable event is outstanding.
    pub(crate) readable_notified: bool,
}

impl RecvStream {
    /// A stream whose flow control is `window`.
    pub(crate) fn new(window: RecvWindow) -> Self {
        RecvStream {
            ready: VecDeque::new(),
            waiting: BTreeMap::new(),
            buffered: 0,
            read_offset: 0,
            contiguous_end: 0,
            final_size: None,
            window,
            reset: None,
            stopped: None,
            released: 0,
            readable_notified: false,
        }
    }

    /// Bytes buffered for the application.
    pub(crate) fn buffered(&self) -> u64 {
        self.buffered
    }

    /// Unread bytes, and those of them above the first gap.
    pub(crate) fn occupancy(&self) -> Occupancy {
        let in_order = self.contiguous_end.saturating_sub(self.read_offset);
        Occupancy {
            unread: self.buffered,
            out_of_order: self.buffered.saturating_sub(in_order),
        }
    }

    /// Number of buffered fragments.
    pub(crate) fn fragments(&self) -> usize {
        self.ready.len() + self.waiting.len()
    }

    /// Whether the application will read no more from this stream (reset or stopped), so that incoming
    /// bytes are only counted.
    fn discarding(&self) -> bool {
        self.reset.is_some() || self.stopped.is_some()
    }

    /// Whether MAX_STREAM_DATA updates are still useful ("Recv" state, application still reading).
    pub(crate) fn wants_credit(&self) -> bool {
        self.final_size.is_none() && !self.discarding()
    }

    /// Checks a final size (from a FIN or a RESET_STREAM) and records it.
    fn set_final_size(&mut self, size: u64) -> Result<(), TransportError> {
        // RFC 9000 §4.5: "Once a final size for a stream is known, it cannot change. If a RESET_STREAM or
        // STREAM frame is received indicating a change in the final size for the stream, an endpoint SHOULD
        // respond with an error of type FINAL_SIZE_ERROR".
        if let Some(known) = self.final_size {
            if known != size {
                return Err(final_size_error("final size changed"));
            }
        }
        // RFC 9000 §4.5: the final size is "one higher than the offset of the byte with the largest offset
        // sent on the stream": a final size below data already received is a change of the final size.
        if size < self.window.received() {
            return Err(final_size_error("final size below data already received"));
        }
        self.final_size = Some(size);
        Ok(())
    }

    /// Flow control for data reaching `end`; returns how much the highest offset grew.
    fn receive_up_to(&mut self, end: u64) -> Result<u64, TransportError> {
        // RFC 9000 §4.1: "A receiver MUST close the connection with an error of type FLOW_CONTROL_ERROR if the
        // sender violates the advertised connection or stream data limits".
        self.window
            .receive_up_to(end)
            .map_err(|_| flow_control_error("stream data beyond MAX_STREAM_DATA"))
    }

    /// Bytes that became unreadable: credit up to the highest offset received goes back to the connection.
    fn release_discarded(&mut self) -> u64 {
        let upto = self.final_size.unwrap_or(self.window.received());
        let n = upto.saturating_sub(self.released);
        self.released = self.released.max(upto);
        n
    }

    /// A STREAM frame: `data` at `offset`, ending the stream if `fin`, received at `now`; the bytes it makes
    /// readable in order are recorded in `hol`.
    pub(crate) fn on_data(
        &mut self,
        offset: u64,
        data: Bytes,
        fin: bool,
        now: Instant,
        hol: &mut HolStats,
    ) -> Result<Received, TransportError> {
        let end = offset
            .checked_add(data.len() as u64)
            .ok_or(flow_control_error("stream offset overflow"))?;
        // Taken before the final size is set: a FIN alone (all data already read) makes the stream readable.
        let readable_before = self.is_readable();
        if fin {
            self.set_final_size(end)?;
        } else if let Some(size) = self.final_size {
            // RFC 9000 §4.5: "A receiver SHOULD treat receipt of data at or beyond the final size as an error
            // of type FINAL_SIZE_ERROR, even after a stream is closed."
            if end > size {
                return Err(final_size_error("data beyond the final size"));
            }
        }
        let grew = self.receive_up_to(end)?;
        if self.discarding() {
            // RFC 9000 §3.5: "STREAM frames received after sending a STOP_SENDING frame are still counted
            // toward connection and stream flow control, even though these frames can be discarded upon
            // receipt."
            return Ok(Received {
                grew,
                discarded: self.release_discarded(),
                readable: false,
            });
        }
        self.insert(offset, data, now, hol);
        Ok(Received {
            grew,
            discarded: 0,
            readable: !readable_before && self.is_readable(),
        })
    }

    /// A RESET_STREAM frame.
    pub(crate) fn on_reset(&mut self, code: VarInt, final_size: u64) -> Result<Received, TransportError> {
        self.set_final_size(final_size)?;
        let grew = self.receive_up_to(final_size)?;
        if self.reset.is_some() {
            return Ok(Received {
                grew,
                ..Received::default()
            });
        }
        // RFC 9000 §3.2: "An implementation MAY interrupt delivery of stream data, discard any data that was
        // not consumed, and signal the receipt of the RESET_STREAM."
        let readable = self.stopped.is_none();
        self.reset = Some(code);
        self.discard_buffer();
        Ok(Received {
            grew,
            discarded: self.release_discarded(),
            readable,
        })
    }

    /// The application stops reading: buffered data is dropped. Returns the connection credit released.
    pub(crate) fn stop(&mut self, code: VarInt) -> u64 {
        self.stopped = Some(code);
        self.discard_buffer();
        self.release_discarded()
    }

    /// Drops every buffered byte (reset or stopped): bytes still waiting above a gap never become
    /// readable, so the head-of-line figures do not count them.
    fn discard_buffer(&mut self) {
        self.ready.clear();
        self.waiting.clear();
        self.buffered = 0;
        self.contiguous_end = self.read_offset;
    }

    /// Whether the receiving part is finished with once stopped: the final size is known, so every byte is
    /// accounted for.
    pub(crate) fn stopped_and_settled(&self) -> bool {
        self.stopped.is_some() && self.final_size.is_some()
    }

    /// Whether a read would return something other than `Blocked`.
    pub(crate) fn is_readable(&self) -> bool {
        self.reset.is_some() || !self.ready.is_empty() || self.final_size == Some(self.read_offset)
    }

    /// Reads up to `max_len` contiguous bytes: `Ok(Some(data))`, `Ok(None)` at the end of the stream.
    pub(crate) fn read(&mut self, max_len: usize) -> Result<Option<Bytes>, ReadError> {
        if let Some(code) = self.reset {
            return Err(ReadError::Reset(code));
        }
        if self.stopped.is_some() {
            return Err(ReadError::ClosedStream);
        }
        if let Some(front) = self.ready.front_mut() {
            if max_len == 0 {
                return Ok(Some(Bytes::new()));
            }
            let data = if front.len() > max_len {
                front.split_to(max_len)
            } else {
                match self.ready.pop_front() {
                    Some(data) => data,
                    None => return Err(ReadError::Blocked),
                }
            };
            let n = data.len() as u64;
            self.read_offset += n;
            self.released = self.read_offset;
            self.buffered -= n;
            return Ok(Some(data));
        }
        if self.final_size == Some(self.read_offset) {
            return Ok(None);
        }
        Err(ReadError::Blocked)
    }

    /// Appends a small piece to the fragment it continues, by copying both (at most [`MERGE_MAX`] bytes), so
    /// that a peer sending many small frames does not use up the connection's fragment limit
    /// (`Streams::set_max_recv_fragments`). `None` if `data` is not small or does not fit.
    fn merged(prev: &Bytes, data: &Bytes) -> Option<Bytes> {
        if data.len() >= MERGE_SMALL || prev.len() + data.len() > MERGE_MAX {
            return None;
        }
        let mut merged = BytesMut::with_capacity(prev.len() + data.len());
        merged.extend_from_slice(prev);
        merged.extend_from_slice(data);
        Some(merged.freeze())
    }

    /// Appends a small piece above the first gap to the last waiting fragment, which ends at `offset`
    /// (see [`RecvStream::merged`]). `Some` if merged.
    ///
    /// The merged fragment's arrival becomes the byte-weighted mean of both, so the summed waiting time of
    /// its bytes is unchanged.
    fn merge_waiting(&mut self, offset: u64, data: &Bytes, now: Instant) -> Option<()> {
        let mut last = self.waiting.last_entry()?;
        let (start, prev) = (*last.key(), last.get());
        if start + prev.len() != offset {
            return None;
        }
        let merged = Self::merged(&prev.data, data)?;
        // mean = prev + (now − prev) · new / (old + new)
        let gap = now.saturating_duration_since(prev.arrived).as_nanos();
        let total = (prev.data.len() + data.len()) as u128;
        let shift = (gap * data.len() as u128).checked_div(total).unwrap_or(0);
        // shift ≤ now − prev.arrived, so the sum is at most `now`.
        let arrived = prev
            .arrived
            .checked_add(Duration::from_nanos(u64::try_from(shift).unwrap_or(u64::MAX)))
            .unwrap_or(now);
        *last.get_mut() = Chunk {
            data: merged,
            arrived,
            first: prev.first,
        };
        Some(())
    }

    /// Appends `data`, which starts at `contiguous_end`, to the readable part: readable at once, no wait.
    /// A small piece is merged into the last readable fragment when `merge` is set (see
    /// [`RecvStream::merged`]).
    fn push_ready(&mut self, data: Bytes, merge: bool, hol: &mut HolStats) {
        let n = data.len() as u64;
        self.contiguous_end += n;
        hol.in_order(n);
        if merge {
            if let Some(last) = self.ready.back_mut() {
                if let Some(merged) = Self::merged(last, &data) {
                    *last = merged;
                    return;
                }
            }
        }
        self.ready.push_back(data);
    }

    /// Moves the first gap past the waiting fragments that now continue the contiguous data, recording at
    /// `now` how long each waited. Each fragment moves once in its life.
    fn advance(&mut self, now: Instant, hol: &mut HolStats) {
        while let Some(entry) = self.waiting.first_entry() {
            if *entry.key() != self.contiguous_end {
                break;
            }
            let c = entry.remove();
            hol.waited(
                c.len(),
                now.saturating_duration_since(c.arrived),
                now.saturating_duration_since(c.first),
            );
            self.contiguous_end += c.len();
            self.ready.push_back(c.data);
        }
    }

    /// Stores the parts of `data` (at `offset`) not held or read yet.
    fn insert(&mut self, offset: u64, data: Bytes, now: Instant, hol: &mut HolStats) {
        let end = offset + data.len() as u64;
        // Past everything buffered, the common case (in order, or the newest data above a gap): nothing to
        // trim and no tree range to search.
        let top = self
            .waiting
            .last_key_value()
            .map_or(self.contiguous_end, |(&s, c)| s + c.len());
        if offset >= top {
            if !data.is_empty() {
                self.buffered += data.len() as u64;
                if offset == self.contiguous_end {
                    // In order: nothing waits above (`top` is the end of the readable part), so nothing
                    // else becomes readable.
                    self.push_ready(data, true, hol);
                } else if self.merge_waiting(offset, &data, now).is_none() {
                    self.waiting.insert(offset, Chunk::new(data, now));
                }
            }
            return;
        }
        // Everything below `contiguous_end` is held or read already.
        let mut pos = offset.max(self.contiguous_end);
        // A waiting fragment starting at or before `pos` may cover its beginning.
        if let Some((&s, c)) = self.waiting.range(..=pos).next_back() {
            pos = pos.max(s + c.len());
        }
        while pos < end {
            // A piece that filled the first gap made the fragments above it readable: bytes below
            // `contiguous_end` are held.
            pos = pos.max(self.contiguous_end);
            if pos >= end {
                break;
            }
            let next = self
                .waiting
                .range(pos..end)
                .next()
                .map(|(&s, c)| (s, s + c.len()));
            let gap_end = next.map_or(end, |(s, _)| s);
            if gap_end > pos {
                let piece = data.slice((pos - offset) as usize..(gap_end - offset) as usize);
                self.buffered += piece.len() as u64;
                if pos == self.contiguous_end {
                    // The piece fills the first gap: readable at once, and so are the waiting fragments
                    // it reaches.
                    self.push_ready(piece, false, hol);
                    self.advance(now, hol);
                } else {
                    self.waiting.insert(pos, Chunk::new(piece, now));
                }
            }
            match next {
                Some((_, e)) => pos = e,
                None => break,
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests take a wall-clock base instant once
mod tests {
    use super::*;

    fn read_all(s: &mut RecvStream) -> Vec<u8> {
        let mut out = Vec::new();
        while let Ok(Some(b)) = s.read(usize::MAX) {
            out.extend_from_slice(&b);
        }
        out
    }

    #[test]
    fn overlapping_frames_are_stored_once() {
        let (now, mut hol) = (Instant::now(), HolStats::default());
        let mut s = RecvStream::new(RecvWindow::new(100, 100));
        let data = Bytes::from_static(b"0123456789");
        s.on_data(2, data.slice(2..5), false, now, &mut hol).unwrap();
        s.on_data(7, data.slice(7..9), false, now, &mut hol).unwrap();
        assert_eq!(s.buffered(), 5);
        let r = s.on_data(0, data.slice(0..10), true, now, &mut hol).unwrap();
        assert!(r.readable);
        assert_eq!(s.buffered(), 10);
        assert_eq!(s.fragments(), 5);
        // A duplicate adds nothing.
        s.on_data(0, data.clone(), true, now, &mut hol).unwrap();
        assert_eq!(s.buffered(), 10);
        assert_eq!(read_all(&mut s), b"0123456789");
        assert_eq!(s.read(10), Ok(None));
        // Data already read is not stored again.
        s.on_data(3, data.slice(3..6), false, now, &mut hol).unwrap();
        assert_eq!(s.buffered(), 0);
    }

    #[test]
    fn partial_reads_split_fragments() {
        let (now, mut hol) = (Instant::now(), HolStats::default());
        let mut s = RecvStream::new(RecvWindow::new(100, 100));
        s.on_data(0, Bytes::from_static(b"abcdef"), false, now, &mut hol)
            .unwrap();
        assert_eq!(s.read(2).unwrap().unwrap(), &b"ab"[..]);
        assert_eq!(s.read(10).unwrap().unwrap(), &b"cdef"[..]);
        assert_eq!(s.read(10), Err(ReadError::Blocked));
    }

    /// (offset, length) of fragments.
    type Fragments = Vec<(u64, usize)>;

    /// The buffer's two parts: the readable fragments and the waiting ones.
    fn parts(s: &RecvStream) -> (Fragments, Fragments) {
        let mut pos = s.read_offset;
        let ready = s
            .ready
            .iter()
            .map(|b| {
                let at = pos;
                pos += b.len() as u64;
                (at, b.len())
            })
            .collect();
        let waiting = s.waiting.iter().map(|(&o, c)| (o, c.data.len())).collect();
        (ready, waiting)
    }

    /// Two paths carry alternate 10-byte frames: path A 0, 20, 40 and path B 10, 30, 50 (with the FIN).
    /// Path A's arrive first, then path B's, with a duplicate and an overlap. Hand-computed parts, first
    /// gap and head-of-line figures after each step.
    #[test]
    fn interleaved_arrivals_wait_above_the_gap_and_move_once() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut stats = super::super::reassembly::Reassembly::default();
        let mut s = RecvStream::new(RecvWindow::new(1000, 1000));
        let data: Bytes = (0..60u8).collect::<Vec<u8>>().into();
        let mut frame = |s: &mut RecvStream, a: usize, b: usize, fin: bool, t: Instant| {
            s.on_data(a as u64, data.slice(a..b), fin, t, &mut stats.hol)
                .unwrap()
        };
        // 0..10 in order at 0 ms: readable at once.
        assert!(frame(&mut s, 0, 10, false, ms(0)).readable);
        assert_eq!(parts(&s), (vec![(0, 10)], vec![]));
        // 20..30 at 1 ms and 40..50 at 2 ms wait above the gap 10..20 (not merged: 40 does not continue 30).
        frame(&mut s, 20, 30, false, ms(1));
        frame(&mut s, 40, 50, false, ms(2));
        assert_eq!(parts(&s), (vec![(0, 10)], vec![(20, 10), (40, 10)]));
        // 30..40 at 3 ms lands between them (a piece inside the buffer is never merged).
        frame(&mut s, 30, 40, false, ms(3));
        assert_eq!(parts(&s), (vec![(0, 10)], vec![(20, 10), (30, 10), (40, 10)]));
        assert_eq!(s.contiguous_end, 10);
        assert_eq!(
            s.occupancy(),
            Occupancy {
                unread: 40,
                out_of_order: 30
            }
        );
        // 10..20 at 5 ms fills the gap: the three waiting fragments become readable, having waited 4, 2 and
        // 3 ms.
        frame(&mut s, 10, 20, false, ms(5));
        assert_eq!(
            parts(&s),
            (vec![(0, 10), (10, 10), (20, 10), (30, 10), (40, 10)], vec![])
        );
        assert_eq!((s.contiguous_end, s.fragments(), s.buffered()), (50, 5, 50));
        // A duplicate adds nothing; 45..60 with the FIN brings only 50..60.
        frame(&mut s, 20, 30, false, ms(6));
        assert_eq!(s.buffered(), 50);
        frame(&mut s, 45, 60, true, ms(7));
        assert_eq!(parts(&s).0.last(), Some(&(50, 10)));
        assert_eq!((s.contiguous_end, s.fragments(), s.buffered()), (60, 6, 60));
        // 60 bytes: 30 in order, 30 waited 4, 2 and 3 ms (10 bytes each): mean 10 · 9 ms / 60 = 1.5 ms.
        let r = stats.stats();
        assert_eq!((r.bytes, r.out_of_order), (60, 30));
        assert_eq!(r.hol_delay_mean, Duration::from_micros(1500));
        assert_eq!(r.hol_delay_max, Duration::from_millis(4));
        // Reads: a whole fragment, then part of one (it is cut in place), then the rest and the end.
        assert_eq!(s.read(25).unwrap().unwrap(), data.slice(0..10));
        assert_eq!(s.read(5).unwrap().unwrap(), data.slice(10..15));
        assert_eq!(parts(&s).0.first(), Some(&(15, 5)));
        assert_eq!(s.fragments(), 5);
        assert_eq!(read_all(&mut s), data.slice(15..60).to_vec());
        assert_eq!(s.read(10), Ok(None));
        assert_eq!(s.fragments(), 0);
    }

    /// Small pieces are merged into the fragment they continue: in order into the last readable one, above
    /// the gap into the last waiting one (its arrival becomes the byte-weighted mean), never a piece that
    /// lands inside the buffer.
    #[test]
    fn small_pieces_merge_on_either_side_of_the_gap() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut stats = super::super::reassembly::Reassembly::default();
        let mut s = RecvStream::new(RecvWindow::new(1000, 1000));
        let data: Bytes = (0..500u32).map(|i| i as u8).collect::<Vec<u8>>().into();
        let mut frame = |s: &mut RecvStream, a: usize, b: usize, t: Instant| {
            s.on_data(a as u64, data.slice(a..b), false, t, &mut stats.hol)
                .unwrap();
        };
        frame(&mut s, 0, 100, ms(0));
        frame(&mut s, 100, 200, ms(0));
        assert_eq!(parts(&s), (vec![(0, 200)], vec![]));
        // 300..400 at 10 ms, 400..500 at 20 ms: one waiting fragment that arrived at 15 ms on average, its
        // first byte at 10 ms.
        frame(&mut s, 300, 400, ms(10));
        frame(&mut s, 400, 500, ms(20));
        assert_eq!(parts(&s), (vec![(0, 200)], vec![(300, 200)]));
        assert_eq!(
            s.waiting.get(&300).map(|c| (c.arrived, c.first)),
            Some((ms(15), ms(10)))
        );
        // 200..300 at 30 ms fills the gap as a fragment of its own; the waiting one waited 15 ms on average,
        // 20 ms at the longest.
        frame(&mut s, 200, 300, ms(30));
        assert_eq!(parts(&s), (vec![(0, 200), (200, 100), (300, 200)], vec![]));
        let r = stats.stats();
        // 500 bytes, 200 of them waited 15 ms: mean 200 · 15 / 500 = 6 ms.
        assert_eq!((r.bytes, r.out_of_order), (500, 200));
        assert_eq!(r.hol_delay_mean, Duration::from_millis(6));
        assert_eq!(r.hol_delay_max, Duration::from_millis(20));
        assert_eq!(read_all(&mut s), data.to_vec());
    }
}
