//! Target `stream_reassembly`: the receive side of the stream layer (RFC 9000 §2–§4): STREAM frames at
//! arbitrary offsets, lengths and FIN bits, RESET_STREAM, STOP_SENDING from our side, and reads, on a server's
//! [`Streams`] with small windows.
//!
//! Every STREAM frame carries the bytes of one fixed byte pattern per stream (the peer's data is
//! consistent), so what a read returns can be checked. Properties:
//! - reads deliver exactly the stream's bytes, in order, never beyond what was received contiguously;
//! - the end of the stream is reported exactly at the final size, once every byte before it was read;
//! - a frame that contradicts a known final size (RFC 9000 §4.5) is an error; after any error the run
//!   stops, as the connection would close;
//! - memory is bounded: bytes buffered per stream never exceed the largest stream window;
//! - at the end, every stream whose bytes all arrived reads to its end with the exact bytes.

use bytes::Bytes;
use mpquic::proto::coding::VarInt;
use mpquic::proto::frame::ResetStream;
use mpquic::proto::streams::{ReadError, StreamId, Streams, StreamsConfig};
use mpquic::proto::transport_params::Side;

use crate::input::Input;

/// Stream IDs the input picks from: client-initiated bidi and uni streams (the peer's), and two of ours that
/// the peer may not send on (a bidi stream we never opened, a uni stream that is send-only for us).
const IDS: [u64; 8] = [0, 4, 8, 12, 2, 6, 1, 3];

const STREAM_WINDOW: u64 = 8 * 1024;
const MAX_STREAM_WINDOW: u64 = 32 * 1024;

/// The byte at `offset` of stream `id`.
fn pattern(id: u64, offset: u64) -> u8 {
    (offset.wrapping_mul(31) ^ (offset >> 8) ^ id.wrapping_mul(101)) as u8
}

/// What the test knows about one stream.
#[derive(Default)]
struct Model {
    /// Received byte ranges, merged.
    received: Vec<(u64, u64)>,
    max_end: u64,
    final_size: Option<u64>,
    read: u64,
    reset: bool,
    stopped: bool,
    ended: bool,
    /// The application saw the end or the reset (or stopped reading): the stream's state may be gone, and
    /// with it the final size a late frame could contradict.
    forgotten: bool,
}

impl Model {
    fn insert(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        self.received.push((start, end));
        self.received.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.received.len());
        for &(s, e) in &self.received {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        self.received = merged;
    }

    /// End of the contiguous prefix received from offset 0.
    fn contiguous(&self) -> u64 {
        match self.received.first() {
            Some(&(0, e)) => e,
            _ => 0,
        }
    }
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let config = StreamsConfig {
        max_bidi_streams: 4,
        max_uni_streams: 4,
        stream_window_bidi_local: STREAM_WINDOW,
        stream_window_bidi_remote: STREAM_WINDOW,
        stream_window_uni: STREAM_WINDOW,
        max_stream_window: MAX_STREAM_WINDOW,
        conn_window: 2 * STREAM_WINDOW,
        max_conn_window: 4 * MAX_STREAM_WINDOW,
        send_buffer: 4096,
        ..StreamsConfig::default()
    };
    let mut streams = Streams::new(Side::Server, config);
    let mut models: [Model; 8] = Default::default();
    let mut now = crate::base_instant();
    let mut steps = 0;
    while !input.is_empty() && steps < 2048 {
        steps += 1;
        let op = input.u8();
        let which = usize::from(op >> 5);
        let Some(&raw_id) = IDS.get(which) else { return };
        let id = StreamId::from_varint(VarInt::from_u32(raw_id as u32));
        let Some(m) = models.get_mut(which) else { return };
        match op & 0x7 {
            0..=3 => {
                let offset = if op & 0x10 != 0 {
                    input.u64() >> 2
                } else {
                    u64::from(input.u16())
                };
                let len = if op & 0x08 != 0 {
                    u64::from(input.u16() % 4096)
                } else {
                    u64::from(input.u8())
                };
                let fin = op & 0x03 == 3;
                let Some(end) = offset.checked_add(len) else {
                    return;
                };
                let data: Bytes = (offset..end).map(|o| pattern(raw_id, o)).collect();
                let contradicts = !m.forgotten
                    && (m.final_size.is_some_and(|f| end > f || (fin && end != f))
                        || (fin && end < m.max_end));
                let result = streams.on_stream_data(id, offset, data, fin, now);
                if result.is_err() {
                    return;
                }
                assert!(!contradicts, "a STREAM frame against the final size is an error");
                m.insert(offset, end);
                m.max_end = m.max_end.max(end);
                if fin {
                    m.final_size = Some(end);
                }
            }
            4 => {
                let max_len = usize::from(input.u16() % 8192);
                read(&mut streams, id, raw_id, m, max_len, now);
            }
            5 => {
                let final_size = if op & 0x10 != 0 {
                    m.max_end
                } else {
                    u64::from(input.u16())
                };
                let contradicts =
                    !m.forgotten && (m.final_size.is_some_and(|f| f != final_size) || final_size < m.max_end);
                let frame = ResetStream {
                    id: id.to_varint(),
                    error_code: VarInt::from_u32(u32::from(input.u8())),
                    final_size: VarInt::from_u64(final_size).unwrap_or(VarInt::MAX),
                };
                if streams.on_reset_stream(&frame).is_err() {
                    return;
                }
                assert!(!contradicts, "a RESET_STREAM against the final size is an error");
                m.final_size = Some(final_size);
                m.max_end = m.max_end.max(final_size);
                m.reset = true;
            }
            6 => {
                if streams.stop(id, VarInt::from_u32(7)).is_ok() {
                    m.stopped = true;
                    m.forgotten = true;
                }
            }
            _ => {
                now += std::time::Duration::from_millis(u64::from(input.u8()));
                while streams.accept_bi().is_some() || streams.accept_uni().is_some() {}
                while streams.poll_event().is_some() {}
                while streams.poll_control_frame(1200).is_some() {}
            }
        }
        for (m, raw) in models.iter().zip(IDS) {
            let id = StreamId::from_varint(VarInt::from_u32(raw as u32));
            if let Some(b) = streams.read_buffered(id) {
                assert!(b <= MAX_STREAM_WINDOW, "stream {raw} buffers {b} bytes");
                assert!(
                    b <= m.max_end.saturating_sub(m.read),
                    "buffered bytes were received"
                );
            }
        }
    }
    // Everything that arrived reads out, exactly.
    for (m, raw) in models.iter_mut().zip(IDS) {
        let id = StreamId::from_varint(VarInt::from_u32(raw as u32));
        for _ in 0..64 {
            if m.ended || m.reset || m.stopped {
                break;
            }
            if !read(&mut streams, id, raw, m, 4096, now) {
                break;
            }
        }
        if !m.reset && !m.stopped && !m.ended && m.contiguous() > m.read {
            panic!(
                "stream {raw}: bytes {}..{} arrived but were not read",
                m.read,
                m.contiguous()
            );
        }
        if let Some(f) = m.final_size {
            if !m.reset && !m.stopped && m.contiguous() >= f {
                assert!(m.ended, "stream {raw}: complete but its end was not reported");
            }
        }
    }
}

/// One read; checks what it returns against the model. Returns whether it made progress.
fn read(
    streams: &mut Streams,
    id: StreamId,
    raw: u64,
    m: &mut Model,
    max_len: usize,
    now: std::time::Instant,
) -> bool {
    match streams.read(id, max_len, now) {
        Ok(Some(data)) => {
            assert!(!m.stopped && !m.ended, "stream {raw}: data after stop or end");
            assert!(data.len() <= max_len.max(1));
            let end = m.read + data.len() as u64;
            assert!(
                end <= m.contiguous(),
                "stream {raw}: read beyond what arrived contiguously"
            );
            for (i, b) in data.iter().enumerate() {
                assert_eq!(
                    *b,
                    pattern(raw, m.read + i as u64),
                    "stream {raw}: byte {}",
                    m.read + i as u64
                );
            }
            m.read = end;
            !data.is_empty()
        }
        Ok(None) => {
            assert!(!m.reset, "stream {raw}: a reset stream does not end cleanly");
            assert_eq!(Some(m.read), m.final_size, "stream {raw}: ends at its final size");
            m.ended = true;
            m.forgotten = true;
            false
        }
        Err(ReadError::Reset(_)) => {
            assert!(m.reset, "stream {raw}: reset reported but never received");
            m.forgotten = true;
            false
        }
        Err(ReadError::Blocked) => {
            assert!(
                m.reset || m.contiguous() <= m.read || max_len == 0,
                "stream {raw}: blocked with bytes {}..{} readable",
                m.read,
                m.contiguous()
            );
            false
        }
        Err(ReadError::ClosedStream) => false,
    }
}
