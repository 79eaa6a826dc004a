//! Request/response workloads (`kind = "requests"` and `kind = "video"`): one object at a time, each on a
//! new bidirectional stream the client opens.
//!
//! The exchange of one object of `size` bytes (the scenario format documents the workloads themselves):
//! - **download**: the client writes an 8-byte request (the size, big-endian) and FIN; the server reads it,
//!   checks the size, and writes `size` pattern bytes and FIN on the same stream; the client reads them. The
//!   object is **done** when the client has read the FIN.
//! - **upload**: the client writes `size` pattern bytes and FIN; the server reads them (the object is done
//!   at its FIN) and answers with an 8-byte acknowledgement (the size it read) and FIN; the client's next
//!   request waits for it.
//!
//! The data's receiver reads through the flow's [`ReadLimiter`] when the receiver has a `read_rate`, and
//! checks every byte against the pattern (offsets count from 0 on each stream). The data's sender writes in
//! [`CHUNK`] pieces and, once a write is refused, writes again after the receiver has read another chunk,
//! as the bulk sender does.
//!
//! The next request is due `gap` after an object is done (requests), or for video when the chunk is done
//! and the playback buffer has room for another chunk: the player's media ends at `E = p_k + chunk` (with
//! `p_k` when chunk `k` starts playing, see [`crate::metrics::app::playback`]), and the buffer at `t` holds
//! `E − t`, so the next request is due at `max(now, E − (buffer − chunk))`.

use std::time::{Duration, Instant};

use mpquic::proto::VarInt;
use mpquic::proto::connection::Connection;
use mpquic::proto::streams::{ReadError, StreamId, WriteError};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::EngineError;
use super::pattern::{CHUNK, pattern_at, refill_mark};
use super::reader::{ReadLimiter, read_stream};
use crate::scenario::workload::{RequestsSpec, SizeDist, VideoSpec};
use crate::time::SimTime;

/// Length of a request or acknowledgement: the object size as a big-endian `u64`.
const CONTROL_LEN: usize = 8;

/// One completed object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectRecord {
    /// Its size in bytes.
    pub size: u64,
    /// When the client requested it (opened its stream).
    pub requested: SimTime,
    /// When the receiving application read its last byte.
    pub done: SimTime,
}

/// Where object sizes come from.
#[derive(Clone, Debug)]
enum Sizes {
    /// A list used in turn.
    List { sizes: Vec<u64>, next: usize },
    /// A distribution and the flow's random stream.
    Dist { dist: SizeDist, rng: Box<ChaCha8Rng> },
}

impl Sizes {
    fn next(&mut self) -> u64 {
        match self {
            Sizes::List { sizes, next } => {
                let size = sizes.get(*next).copied().unwrap_or(1);
                *next = next.saturating_add(1);
                if *next >= sizes.len() {
                    *next = 0;
                }
                size
            }
            Sizes::Dist { dist, rng } => dist.draw(rng.as_mut()),
        }
    }
}

/// When the next request goes out.
#[derive(Clone, Debug)]
enum Schedule {
    /// `gap` after each object.
    Requests { sizes: Sizes, gap: Duration },
    /// Chunks of `bytes`, each `chunk` of media, at most `buffer` ahead of playback.
    Video {
        bytes: u64,
        chunk: Duration,
        buffer: Duration,
        /// When the media downloaded so far finishes playing (`E`), once playback started.
        media_end: Option<SimTime>,
    },
}

/// The object in flight.
#[derive(Clone, Debug)]
struct Active {
    id: StreamId,
    size: u64,
    requested: SimTime,
    /// Data bytes written by the data's sender.
    written: u64,
    /// The data's sender finished (or gave up on) the stream.
    sent: bool,
    /// After a refused write: write again once the receiver has read this many bytes.
    refill_at: Option<u64>,
    /// Data bytes read by the data's receiver.
    read: u64,
    /// When the data's receiver read the FIN.
    done: Option<SimTime>,
    /// The control message (request or acknowledgement) was written.
    control_sent: bool,
    /// Control bytes read so far.
    control: Vec<u8>,
    /// The control message was read up to its FIN.
    control_read: bool,
    /// The server accepted the stream.
    accepted: bool,
}

impl Active {
    fn new(id: StreamId, size: u64, requested: SimTime) -> Active {
        Active {
            id,
            size,
            requested,
            written: 0,
            sent: false,
            refill_at: None,
            read: 0,
            done: None,
            control_sent: false,
            control: Vec::with_capacity(CONTROL_LEN),
            control_read: false,
            accepted: false,
        }
    }
}

/// What a pass of the client or the server did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pass {
    /// Data bytes the receiving application read.
    pub read: u64,
    /// The reading stopped at the read rate (data may be left).
    pub limited: bool,
    /// An object was done in this pass.
    pub done: bool,
}

/// The workload's state, both ends (see the module documentation).
#[derive(Clone, Debug)]
pub struct Objects {
    flow: usize,
    download: bool,
    schedule: Schedule,
    count: Option<u64>,
    issued: u64,
    next_at: Option<SimTime>,
    active: Option<Active>,
    records: Vec<ObjectRecord>,
    stopped: bool,
}

/// Writes the rest of the data of `a` (then FIN), in pieces of at most [`CHUNK`]; after a refused write,
/// waits until the receiver has read another chunk (`a.read`).
fn write_data(conn: &mut Connection, a: &mut Active) {
    if a.sent {
        return;
    }
    if let Some(at) = a.refill_at {
        if a.read < at {
            return;
        }
        a.refill_at = None;
    }
    loop {
        let want = a.size.saturating_sub(a.written);
        if want == 0 {
            let _ = conn.finish(a.id);
            a.sent = true;
            return;
        }
        let len = usize::try_from(want).unwrap_or(CHUNK).min(CHUNK);
        match conn.write(a.id, pattern_at(a.written, len)) {
            Ok(n) => {
                a.written = a.written.saturating_add(n as u64);
                if n < len {
                    a.refill_at = Some(refill_mark(a.read, a.written));
                    return;
                }
            }
            Err(WriteError::Blocked) => {
                a.refill_at = Some(refill_mark(a.read, a.written));
                return;
            }
            Err(WriteError::Stopped(_) | WriteError::ClosedStream) => {
                a.sent = true;
                return;
            }
        }
    }
}

/// Writes the 8-byte control message `value` and FIN on `id` (once; a refused write is retried later).
fn write_control(conn: &mut Connection, a: &mut Active, value: u64) {
    if a.control_sent {
        return;
    }
    let msg = bytes::Bytes::copy_from_slice(&value.to_be_bytes());
    if let Ok(CONTROL_LEN) = conn.write(a.id, msg) {
        let _ = conn.finish(a.id);
        a.control_sent = true;
    }
}

/// Reads the control message of `a` up to its FIN; returns its value once complete. A message that is not
/// 8 bytes long is a corruption of the stream.
fn read_control(
    conn: &mut Connection,
    a: &mut Active,
    now: Instant,
    flow: usize,
) -> Result<Option<u64>, EngineError> {
    if a.control_read {
        return Ok(None);
    }
    let bad = |offset: usize| EngineError::Corrupted {
        flow,
        offset: offset as u64,
    };
    loop {
        match conn.read(a.id, CONTROL_LEN, now) {
            Ok(Some(data)) => {
                if a.control.len().saturating_add(data.len()) > CONTROL_LEN {
                    return Err(bad(a.control.len()));
                }
                a.control.extend_from_slice(&data);
            }
            Ok(None) => {
                let bytes: [u8; CONTROL_LEN] = a
                    .control
                    .as_slice()
                    .try_into()
                    .map_err(|_| bad(a.control.len()))?;
                a.control_read = true;
                return Ok(Some(u64::from_be_bytes(bytes)));
            }
            Err(ReadError::Blocked) => return Ok(None),
            Err(ReadError::Reset(_) | ReadError::ClosedStream) => {
                a.control_read = true;
                return Ok(None);
            }
        }
    }
}

impl Objects {
    /// A `requests` workload for flow `flow`; `seed` feeds the size distribution; the first request is due
    /// at `start` (once the handshake allows it).
    pub fn requests(flow: usize, spec: &RequestsSpec, download: bool, seed: u64, start: SimTime) -> Objects {
        let sizes = match &spec.size {
            Some(dist) => Sizes::Dist {
                dist: dist.clone(),
                rng: Box::new(ChaCha8Rng::seed_from_u64(seed)),
            },
            None => Sizes::List {
                sizes: spec.sizes.clone(),
                next: 0,
            },
        };
        Objects::new(
            flow,
            download,
            Schedule::Requests { sizes, gap: spec.gap },
            spec.count,
            start,
        )
    }

    /// A `video` workload for flow `flow`, the first chunk requested at `start`.
    pub fn video(flow: usize, spec: &VideoSpec, download: bool, start: SimTime) -> Objects {
        Objects::new(
            flow,
            download,
            Schedule::Video {
                bytes: spec.chunk_bytes(),
                chunk: spec.chunk,
                buffer: spec.buffer,
                media_end: None,
            },
            spec.count,
            start,
        )
    }

    fn new(flow: usize, download: bool, schedule: Schedule, count: Option<u64>, start: SimTime) -> Objects {
        Objects {
            flow,
            download,
            schedule,
            count,
            issued: 0,
            next_at: Some(start),
            active: None,
            records: Vec::new(),
            stopped: false,
        }
    }

    /// The objects done so far, in order.
    pub fn records(&self) -> &[ObjectRecord] {
        &self.records
    }

    /// Whether every object of `count` is done.
    pub fn complete(&self) -> bool {
        self.count.is_some_and(|c| self.records.len() as u64 >= c)
    }

    /// When the client next needs to run for the workload (a request due after `sim_now`).
    pub fn wake(&self, sim_now: SimTime) -> Option<SimTime> {
        self.next_at.filter(|&t| t > sim_now && !self.stopped)
    }

    /// Stops the workload: no more requests; the data's sender resets the stream in flight (`sender` is
    /// the sending end's connection: the server's for a download).
    pub fn stop(&mut self, sender: Option<&mut Connection>) {
        self.stopped = true;
        self.next_at = None;
        if let (Some(a), Some(conn)) = (self.active.as_mut(), sender) {
            if !a.sent && a.done.is_none() {
                let _ = conn.reset(a.id, VarInt::from_u32(0));
                a.sent = true;
            }
        }
    }

    /// The server accepted stream `id` (a client-initiated bidirectional stream).
    pub fn on_accept(&mut self, id: StreamId) {
        if let Some(a) = self.active.as_mut() {
            if a.id == id {
                a.accepted = true;
            }
        }
    }

    /// Records the object in flight as done at `t` (the data's receiver read its FIN), and for a download
    /// (where the client is that receiver) finishes it.
    fn on_done(&mut self, t: SimTime) {
        let Some(a) = self.active.as_mut() else {
            return;
        };
        a.done = Some(t);
        self.records.push(ObjectRecord {
            size: a.size,
            requested: a.requested,
            done: t,
        });
        if let Schedule::Video { chunk, media_end, .. } = &mut self.schedule {
            // p_k = max(p_(k-1) + chunk, c_k) = max(E, c_k); the media then ends chunk later.
            let starts = media_end.map_or(t, |e| e.max(t));
            *media_end = Some(starts.saturating_add(*chunk));
        }
    }

    /// The client learned that the object in flight is done (download: it read the FIN; upload: it read
    /// the acknowledgement) at `sim_now`: the next request is scheduled.
    fn on_finished(&mut self, sim_now: SimTime) {
        self.active = None;
        if self.stopped || self.complete() {
            self.next_at = None;
            return;
        }
        self.next_at = Some(match &self.schedule {
            Schedule::Requests { gap, .. } => sim_now.saturating_add(*gap),
            Schedule::Video {
                chunk,
                buffer,
                media_end,
                ..
            } => {
                let room = buffer.saturating_sub(*chunk);
                let due = media_end.map_or(sim_now, |e| {
                    SimTime::from_nanos(
                        e.as_nanos()
                            .saturating_sub(u64::try_from(room.as_nanos()).unwrap_or(u64::MAX)),
                    )
                });
                due.max(sim_now)
            }
        });
    }

    /// The client's pass: issues a due request, writes an upload's data, reads a download's data (through
    /// `limiter`) or an upload's acknowledgement.
    pub fn client(
        &mut self,
        conn: &mut Connection,
        sim_now: SimTime,
        now: Instant,
        limiter: &mut Option<ReadLimiter>,
    ) -> Result<Pass, EngineError> {
        let mut pass = Pass::default();
        if self.active.is_none() && !self.stopped && self.next_at.is_some_and(|t| t <= sim_now) {
            if let Some(id) = conn.open_bi() {
                let size = match &mut self.schedule {
                    Schedule::Requests { sizes, .. } => sizes.next(),
                    Schedule::Video { bytes, .. } => *bytes,
                };
                self.issued = self.issued.saturating_add(1);
                self.next_at = None;
                self.active = Some(Active::new(id, size, sim_now));
            }
        }
        let download = self.download;
        let flow = self.flow;
        let Some(a) = self.active.as_mut() else {
            return Ok(pass);
        };
        if download {
            let size = a.size;
            write_control(conn, a, size);
            if a.done.is_none() {
                let mut offset = a.read;
                let got = read_stream(conn, a.id, &mut offset, limiter, now, flow)?;
                a.read = offset;
                pass.read = got.bytes;
                pass.limited = got.limited;
                if got.fin {
                    if a.read != a.size {
                        return Err(EngineError::Corrupted { flow, offset: a.read });
                    }
                    pass.done = true;
                    self.on_done(sim_now);
                    self.on_finished(sim_now);
                } else if got.reset {
                    self.on_finished(sim_now);
                }
            }
        } else {
            write_data(conn, a);
            if let Some(acked) = read_control(conn, a, now, flow)? {
                if acked != a.size {
                    return Err(EngineError::Corrupted { flow, offset: acked });
                }
                self.on_finished(sim_now);
            } else if a.control_read {
                // Reset before the acknowledgement: the stream is over.
                self.on_finished(sim_now);
            }
        }
        Ok(pass)
    }

    /// The server's pass: answers a download's request with the data, reads an upload's data (through
    /// `limiter`) and acknowledges it.
    pub fn server(
        &mut self,
        conn: &mut Connection,
        sim_now: SimTime,
        now: Instant,
        limiter: &mut Option<ReadLimiter>,
    ) -> Result<Pass, EngineError> {
        let mut pass = Pass::default();
        let download = self.download;
        let flow = self.flow;
        let Some(a) = self.active.as_mut().filter(|a| a.accepted) else {
            return Ok(pass);
        };
        if download {
            if !a.control_read {
                if let Some(size) = read_control(conn, a, now, flow)? {
                    if size != a.size {
                        return Err(EngineError::Corrupted { flow, offset: size });
                    }
                }
            }
            if a.control_read && !self.stopped {
                write_data(conn, a);
            }
        } else if a.done.is_none() {
            let mut offset = a.read;
            let got = read_stream(conn, a.id, &mut offset, limiter, now, flow)?;
            a.read = offset;
            pass.read = got.bytes;
            pass.limited = got.limited;
            if got.fin {
                if a.read != a.size {
                    return Err(EngineError::Corrupted { flow, offset: a.read });
                }
                let size = a.size;
                write_control(conn, a, size);
                pass.done = true;
                self.on_done(sim_now);
            }
        } else {
            let size = a.size;
            write_control(conn, a, size);
        }
        Ok(pass)
    }
}
