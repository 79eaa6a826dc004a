//! The stream layer (RFC 9000 §2–§4): stream IDs, send and receive buffers, stream and connection flow
//! control, stream limits, and the control frames they need.
//!
//! [`Streams`] is sans-IO and owned by the connection. Its API has three faces:
//! - **application**: [`open_bi`](Streams::open_bi) / [`open_uni`](Streams::open_uni),
//!   [`accept_bi`](Streams::accept_bi) / [`accept_uni`](Streams::accept_uni), [`write`](Streams::write),
//!   [`finish`](Streams::finish), [`reset`](Streams::reset), [`read`](Streams::read), [`stop`](Streams::stop),
//!   and [`poll_event`](Streams::poll_event);
//! - **input** from received frames: `on_stream_frame`, `on_reset_stream`, `on_stop_sending`, `on_max_data`,
//!   `on_max_stream_data`, `on_max_streams`, `on_*_blocked`, each returning the
//!   [`TransportError`](crate::proto::error::TransportError) that must
//!   close the connection when the peer breaks a rule;
//! - **output** for the packet builder: [`poll_control_frame`](Streams::poll_control_frame) and
//!   [`write_stream_frame`](Streams::write_stream_frame), with acknowledgement and loss reported back per
//!   frame ([`on_stream_frame_acked`](Streams::on_stream_frame_acked), …). Stream data is tracked by offset,
//!   so a loss on one path is repaired on whichever path the scheduler picks.
//!
//! Everything a peer can grow is bounded: the number of peer streams by the limits we advertise, reassembly
//! buffers by the stream windows, pending control frames by deduplication (at most a few per live stream).
//! Maps are ordered (`BTreeMap`) so that a simulation with a fixed seed is reproducible.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::proto::coding::VarInt;
use crate::proto::frame::Dir;
use crate::proto::transport_params::{Side, TransportParameters};

mod control;
mod flow;
mod flow_stats;
mod id;
mod input;
mod output;
mod policy;
mod ranges;
mod reassembly;
mod recv;
mod send;

#[cfg(test)]
mod tests;

pub use control::StreamControlFrame;
pub use flow_stats::FlowControlStats;
pub use id::{MAX_STREAM_INDEX_COUNT, StreamId};
pub use policy::{ParseWindowPolicyError, ParseWindowUpdateError, WindowPolicy, WindowUpdate};
pub use reassembly::ReassemblyStats;
pub use recv::ReadError;
pub use send::{SendProgress, StreamFrame, StreamFrameRecord, WriteError};

use control::{PendingControl, PerStream};
use flow::{RecvWindow, SendCredit};
use flow_stats::FlowBook;
use id::dir_index;
use reassembly::{Occupancy, Reassembly};
use recv::RecvStream;
use send::SendStream;

/// How many STOP_SENDING codes of already-removed send parts are kept for the application by default (oldest
/// dropped); `ConnectionLimits::remembered_stops` configures it.
pub const DEFAULT_REMEMBERED_STOPS: usize = 1024;

/// Updates the connection's count of buffered fragments after one stream's went from `before` to `now`.
fn recount(total: &mut usize, before: usize, now: usize) {
    *total = (*total + now).saturating_sub(before);
}

/// Received stream fragments a connection buffers at most by default, over all its streams
/// (`ConnectionLimits::recv_fragments` configures it). RFC 9000 §21.6: a peer that sends stream data in tiny
/// pieces with gaps between them makes the receiver commit memory out of proportion to the flow-control
/// window (each fragment costs a map entry and a buffer besides its bytes). Flow control bounds the bytes;
/// this bounds the fragments. A well-behaved peer stays far below it: a full 24 MiB connection window
/// (`max_conn_window`) holds ≈ 21 700 fragments of 1160 bytes, and small adjacent fragments are merged.
pub const DEFAULT_MAX_RECV_FRAGMENTS: usize = 65_536;

/// The largest window (and flow-control limit) QUIC can express: 2^62 − 1 (RFC 9000 §16, variable-length
/// integers).
pub const MAX_WINDOW: u64 = (1 << 62) - 1;

/// A [`StreamsConfig`] value outside its documented range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamsConfigError {
    /// A window is above [`MAX_WINDOW`].
    #[error("{field} = {value} is above the largest flow-control limit 2^62-1")]
    WindowTooLarge {
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// A minimum window is above its maximum.
    #[error("{min_field} = {min} is above {max_field} = {max}")]
    MinAboveMax {
        /// The minimum's field.
        min_field: &'static str,
        /// Its value.
        min: u64,
        /// The maximum's field.
        max_field: &'static str,
        /// Its value.
        max: u64,
    },
}

/// Limits and buffer sizes of the stream layer. The `max_*_streams` and initial `*_window` values are what
/// we advertise in our transport parameters ([`StreamsConfig::apply_to`]; under [`WindowPolicy::Linux`]
/// an initial window below its minimum is advertised as the minimum). Every window ranges over 0 to
/// [`MAX_WINDOW`] (2^62 − 1) with each minimum at most its maximum ([`StreamsConfig::validate`]; a
/// connection refuses to start with a configuration outside them). See `docs/receive-windows.md` for the
/// policies, the defaults and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamsConfig {
    /// How many bidirectional streams the peer may have open at once (initial_max_streams_bidi).
    pub max_bidi_streams: u64,
    /// How many unidirectional streams the peer may have open at once (initial_max_streams_uni).
    pub max_uni_streams: u64,
    /// How the stream and connection receive windows grow ([`WindowPolicy`], default
    /// [`WindowPolicy::Auto`]); one stream's can be changed at run time
    /// (`Connection::set_stream_receive_window`).
    pub window_policy: WindowPolicy,
    /// When freed credit is sent to the peer ([`WindowUpdate`], default [`WindowUpdate::Eighth`]: once it
    /// raises the limit by an eighth of the window).
    pub window_update: WindowUpdate,
    /// Initial receive window of bidirectional streams we open (initial_max_stream_data_bidi_local).
    pub stream_window_bidi_local: u64,
    /// Initial receive window of bidirectional streams the peer opens (initial_max_stream_data_bidi_remote).
    pub stream_window_bidi_remote: u64,
    /// Initial receive window of unidirectional streams the peer opens (initial_max_stream_data_uni).
    pub stream_window_uni: u64,
    /// The largest a stream receive window may grow by auto-tuning.
    pub max_stream_window: u64,
    /// The smallest a stream receive window may be under [`WindowPolicy::Linux`] (Linux's `tcp_rmem[0]`):
    /// a smaller initial window is raised to it. Ignored by the other policies.
    pub min_stream_window: u64,
    /// Initial connection receive window (initial_max_data).
    pub conn_window: u64,
    /// The largest the connection receive window may grow by auto-tuning.
    pub max_conn_window: u64,
    /// The smallest the connection receive window may be under [`WindowPolicy::Linux`] (Linux's
    /// `tcp_rmem[0]`): a smaller initial window is raised to it. Ignored by the other policies.
    pub min_conn_window: u64,
    /// Unacknowledged bytes buffered per sending stream; writes beyond it are refused. It caps one stream's
    /// rate at `send_buffer / RTT`: the default 8 MiB allows ≈ 670 Mbit/s at 100 ms (1 MiB, the default
    /// until session 5, allowed 84 Mbit/s; quinn's default send window is 10 MB per connection). Only data
    /// the application wrote is buffered, never more than it chose to write.
    pub send_buffer: u64,
}

impl Default for StreamsConfig {
    fn default() -> Self {
        StreamsConfig {
            max_bidi_streams: 100,
            max_uni_streams: 100,
            window_policy: WindowPolicy::Auto,
            window_update: WindowUpdate::Eighth,
            stream_window_bidi_local: 256 * 1024,
            stream_window_bidi_remote: 256 * 1024,
            stream_window_uni: 256 * 1024,
            max_stream_window: 16 * 1024 * 1024,
            min_stream_window: 4096,
            conn_window: 1024 * 1024,
            max_conn_window: 24 * 1024 * 1024,
            min_conn_window: 4096,
            send_buffer: 8 * 1024 * 1024,
        }
    }
}

impl StreamsConfig {
    /// Writes our initial limits into our transport parameters.
    pub fn apply_to(&self, params: &mut TransportParameters) {
        let v = |x: u64| VarInt::from_u64(x).unwrap_or(VarInt::MAX);
        let streams = |x: u64| v(x.min(MAX_STREAM_INDEX_COUNT));
        // The windows the receive side starts from (the Linux policy raises them to its minimum), so that
        // the peer learns exactly the limits we enforce.
        let stream = |x: u64| v(RecvWindow::initial(self.window_policy, x, self.min_stream_window));
        params.initial_max_data = v(self.conn_recv_window().advertised());
        params.initial_max_stream_data_bidi_local = stream(self.stream_window_bidi_local);
        params.initial_max_stream_data_bidi_remote = stream(self.stream_window_bidi_remote);
        params.initial_max_stream_data_uni = stream(self.stream_window_uni);
        params.initial_max_streams_bidi = streams(self.max_bidi_streams);
        params.initial_max_streams_uni = streams(self.max_uni_streams);
    }

    /// Checks every window against its documented range (see [`StreamsConfigError`]).
    pub fn validate(&self) -> Result<(), StreamsConfigError> {
        let windows = [
            ("stream_window_bidi_local", self.stream_window_bidi_local),
            ("stream_window_bidi_remote", self.stream_window_bidi_remote),
            ("stream_window_uni", self.stream_window_uni),
            ("max_stream_window", self.max_stream_window),
            ("min_stream_window", self.min_stream_window),
            ("conn_window", self.conn_window),
            ("max_conn_window", self.max_conn_window),
            ("min_conn_window", self.min_conn_window),
        ];
        for (field, value) in windows {
            if value > MAX_WINDOW {
                return Err(StreamsConfigError::WindowTooLarge { field, value });
            }
        }
        let pairs = [
            (
                "min_stream_window",
                self.min_stream_window,
                "max_stream_window",
                self.max_stream_window,
            ),
            (
                "min_conn_window",
                self.min_conn_window,
                "max_conn_window",
                self.max_conn_window,
            ),
        ];
        for (min_field, min, max_field, max) in pairs {
            if min > max {
                return Err(StreamsConfigError::MinAboveMax {
                    min_field,
                    min,
                    max_field,
                    max,
                });
            }
        }
        Ok(())
    }

    /// The flow control of a new receiving stream with the initial window `initial`.
    fn stream_recv_window(&self, initial: u64) -> RecvWindow {
        RecvWindow::with_policy(
            self.window_policy,
            initial,
            self.min_stream_window,
            self.max_stream_window,
        )
        .with_update(self.window_update)
    }

    /// The connection's flow control.
    fn conn_recv_window(&self) -> RecvWindow {
        RecvWindow::with_policy(
            self.window_policy,
            self.conn_window,
            self.min_conn_window,
            self.max_conn_window,
        )
        .with_update(self.window_update)
    }

    fn max_streams(&self, dir: Dir) -> u64 {
        match dir {
            Dir::Bi => self.max_bidi_streams,
            Dir::Uni => self.max_uni_streams,
        }
        .min(MAX_STREAM_INDEX_COUNT)
    }
}

/// Something the application should know about. Each is queued at most once per stream (or direction)
/// until polled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEvent {
    /// The peer opened streams of this type: call [`Streams::accept_bi`] / [`Streams::accept_uni`].
    Opened {
        /// Stream type.
        dir: Dir,
    },
    /// Data, the end of the stream or a reset can be read.
    Readable {
        /// Stream ID.
        id: StreamId,
    },
    /// Send buffer space freed up after a write was refused.
    Writable {
        /// Stream ID.
        id: StreamId,
    },
    /// All data and the end of the stream were acknowledged by the peer.
    Finished {
        /// Stream ID.
        id: StreamId,
    },
    /// The peer sent STOP_SENDING; the stream was reset with its code.
    Stopped {
        /// Stream ID.
        id: StreamId,
        /// The peer's application error code.
        error_code: VarInt,
    },
    /// The peer raised its stream limit after an open failed: streams of this type can be opened again.
    Available {
        /// Stream type.
        dir: Dir,
    },
}

/// Why [`Streams::set_recv_window`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SetWindowError {
    /// The stream has no receiving part (never opened, send-only, or already read to its end, reset or
    /// stopped).
    #[error("closed stream")]
    ClosedStream,
    /// `max_window` is outside 1 to 2^62 − 1.
    #[error("max_window = {0} is outside 1..=2^62-1")]
    InvalidWindow(u64),
}

/// The stream was never opened, cannot do this, or is already closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("closed stream")]
pub struct ClosedStream;

/// The peer's initial per-stream limits (its transport parameters).
#[derive(Debug, Clone, Copy, Default)]
struct PeerWindows {
    /// For streams the peer opens (its initial_max_stream_data_bidi_local).
    bidi_peer_opened: u64,
    /// For bidirectional streams we open (its initial_max_stream_data_bidi_remote).
    bidi_we_opened: u64,
    /// For unidirectional streams we open (its initial_max_stream_data_uni).
    uni: u64,
}

/// All streams of a connection: see the [module documentation](self).
#[derive(Debug)]
pub struct Streams {
    side: Side,
    config: StreamsConfig,
    send: BTreeMap<StreamId, SendStream>,
    recv: BTreeMap<StreamId, RecvStream>,
    /// STOP_SENDING codes of send parts removed before the application saw them (at most `max_stopped`).
    stopped: BTreeMap<StreamId, VarInt>,
    /// Bound on `stopped` ([`Streams::set_remembered_stops`], default [`DEFAULT_REMEMBERED_STOPS`]).
    max_stopped: usize,
    /// Received fragments buffered over all receiving streams (out of order, or in order and not read yet).
    recv_fragments: usize,
    /// Bound on `recv_fragments` ([`Streams::set_max_recv_fragments`], default
    /// [`DEFAULT_MAX_RECV_FRAGMENTS`]).
    max_recv_fragments: usize,
    /// Streams we opened (used) against the peer's MAX_STREAMS (max), per direction.
    local_opened: [SendCredit; 2],
    /// An open failed at the peer's limit: report when it rises.
    open_blocked: [bool; 2],
    /// Streams the peer opened (the next index), per direction.
    remote_opened: [u64; 2],
    /// Peer streams handed to the application.
    remote_accepted: [u64; 2],
    /// Peer streams fully closed.
    remote_closed: [u64; 2],
    /// The stream limit we advertised.
    remote_max: [u64; 2],
    /// The peer's MAX_DATA.
    conn_send: SendCredit,
    /// Our MAX_DATA.
    conn_recv: RecvWindow,
    peer_windows: PeerWindows,
    /// Streams with something to send, in round-robin order.
    queue: VecDeque<StreamId>,
    pending: PendingControl,
    events: VecDeque<StreamEvent>,
    /// An Opened event is queued, per direction.
    opened_event: [bool; 2],
    /// The connection's smoothed RTT, for auto-tuning.
    rtt: Duration,
    /// The largest smoothed RTT over the paths, for the Linux policy ([`Streams::set_sizing_rtt`]).
    sizing_rtt: Option<Duration>,
    /// Receiver statistics over all receiving streams.
    reassembly: Reassembly,
    /// Sending streams with data acknowledged above their lowest unacknowledged offset (a hole), for
    /// opportunistic retransmission (`output`).
    holey: std::collections::BTreeSet<StreamId>,
    /// Flow-control statistics ([`FlowControlStats`]).
    flow: FlowBook,
}

impl Streams {
    /// The streams of a connection where we are `side`. The peer's limits are zero until
    /// [`Streams::set_peer_params`].
    pub fn new(side: Side, config: StreamsConfig) -> Self {
        let remote_max = [config.max_streams(Dir::Bi), config.max_streams(Dir::Uni)];
        Streams {
            side,
            conn_recv: config.conn_recv_window(),
            config,
            send: BTreeMap::new(),
            stopped: BTreeMap::new(),
            max_stopped: DEFAULT_REMEMBERED_STOPS,
            recv_fragments: 0,
            max_recv_fragments: DEFAULT_MAX_RECV_FRAGMENTS,
            recv: BTreeMap::new(),
            local_opened: [SendCredit::new(0), SendCredit::new(0)],
            open_blocked: [false; 2],
            remote_opened: [0; 2],
            remote_accepted: [0; 2],
            remote_closed: [0; 2],
            remote_max,
            conn_send: SendCredit::new(0),
            peer_windows: PeerWindows::default(),
            queue: VecDeque::new(),
            pending: PendingControl::default(),
            events: VecDeque::new(),
            opened_event: [false; 2],
            rtt: Duration::from_millis(333),
            sizing_rtt: None,
            reassembly: Reassembly::default(),
            holey: std::collections::BTreeSet::new(),
            flow: FlowBook::default(),
        }
    }

    /// Keeps at most `n` STOP_SENDING codes of send parts already removed (0: none; the application's next
    /// write on such a stream then reports `ClosedStream` instead of `Stopped`).
    pub fn set_remembered_stops(&mut self, n: usize) {
        self.max_stopped = n;
        while self.stopped.len() > n {
            self.stopped.pop_first();
        }
    }

    /// Bounds the received fragments buffered over all streams (at least 1); beyond it the connection closes
    /// with PROTOCOL_VIOLATION (see [`DEFAULT_MAX_RECV_FRAGMENTS`]).
    pub fn set_max_recv_fragments(&mut self, n: usize) {
        self.max_recv_fragments = n.max(1);
    }

    /// Received fragments buffered over all streams.
    pub fn recv_fragments(&self) -> usize {
        self.recv_fragments
    }

    /// Receiver statistics: reassembly-buffer occupancy and head-of-line delay.
    pub fn reassembly_stats(&self) -> ReassemblyStats {
        self.reassembly.stats()
    }

    /// Number of STOP_SENDING codes remembered for send parts already removed.
    pub fn remembered_stops(&self) -> usize {
        self.stopped.len()
    }

    /// Applies the peer's transport parameters (RFC 9000 §18.2): connection and stream limits. Limits only
    /// grow, so this also works after 0-RTT with remembered parameters.
    pub fn set_peer_params(&mut self, params: &TransportParameters) {
        self.conn_send.raise(params.initial_max_data.into_inner());
        self.peer_windows = PeerWindows {
            bidi_peer_opened: params.initial_max_stream_data_bidi_local.into_inner(),
            bidi_we_opened: params.initial_max_stream_data_bidi_remote.into_inner(),
            uni: params.initial_max_stream_data_uni.into_inner(),
        };
        for (&id, s) in self.send.iter_mut() {
            s.credit
                .raise(Self::peer_window(self.side, &self.peer_windows, id));
        }
        self.raise_local_limit(Dir::Bi, params.initial_max_streams_bidi.into_inner());
        self.raise_local_limit(Dir::Uni, params.initial_max_streams_uni.into_inner());
        let ids: Vec<StreamId> = self.send.keys().copied().collect();
        for id in ids {
            self.enqueue(id);
        }
    }

    /// Updates the RTT estimate used by window auto-tuning ([`WindowPolicy::Auto`]): the smoothed RTT of
    /// the path whose acknowledgement arrived last.
    pub fn set_rtt(&mut self, rtt: Duration) {
        self.rtt = rtt;
    }

    /// Updates the measurement period of [`WindowPolicy::Linux`]'s right-sizing: the largest smoothed RTT
    /// over the connection's paths (one path: its smoothed RTT).
    pub fn set_sizing_rtt(&mut self, rtt: Duration) {
        self.sizing_rtt = Some(rtt);
    }

    /// The RTT a window with `policy` is tuned with, from the `rtt` and `sizing_rtt` fields: the Linux
    /// policy's measurement period falls back to the last path's RTT until [`Streams::set_sizing_rtt`].
    fn tuning_rtt(policy: WindowPolicy, rtt: Duration, sizing_rtt: Option<Duration>) -> Duration {
        match policy {
            WindowPolicy::Linux => sizing_rtt.unwrap_or(rtt),
            WindowPolicy::Fixed | WindowPolicy::Auto => rtt,
        }
    }

    /// Which endpoint we are.
    pub fn side(&self) -> Side {
        self.side
    }

    /// The peer's initial limit for data we send on `id`.
    fn peer_window(side: Side, w: &PeerWindows, id: StreamId) -> u64 {
        match (id.dir(), id.initiator() == side) {
            (Dir::Uni, _) => w.uni,
            (Dir::Bi, true) => w.bidi_we_opened,
            (Dir::Bi, false) => w.bidi_peer_opened,
        }
    }

    fn raise_local_limit(&mut self, dir: Dir, count: u64) {
        let i = dir_index(dir);
        let Some(credit) = self.local_opened.get_mut(i) else {
            return;
        };
        if credit.raise(count.min(MAX_STREAM_INDEX_COUNT)) {
            if let Some(blocked) = self.open_blocked.get_mut(i) {
                if *blocked {
                    *blocked = false;
                    self.events.push_back(StreamEvent::Available { dir });
                }
            }
        }
    }

    // ----- application API -----

    /// Opens a bidirectional stream, or `None` at the peer's limit (a STREAMS_BLOCKED is then queued and a
    /// [`StreamEvent::Available`] follows when the limit rises).
    pub fn open_bi(&mut self) -> Option<StreamId> {
        self.open(Dir::Bi)
    }

    /// Opens a unidirectional stream, or `None` at the peer's limit.
    pub fn open_uni(&mut self) -> Option<StreamId> {
        self.open(Dir::Uni)
    }

    fn open(&mut self, dir: Dir) -> Option<StreamId> {
        let i = dir_index(dir);
        let credit = self.local_opened.get_mut(i)?;
        if credit.available() == 0 {
            // RFC 9000 §4.6: "An endpoint that is unable to open a new stream due to the peer's limits SHOULD
            // send a STREAMS_BLOCKED frame".
            if let Some(limit) = credit.take_blocked() {
                if let Some(p) = self.pending.streams_blocked.get_mut(i) {
                    *p = Some(limit);
                }
            }
            if let Some(b) = self.open_blocked.get_mut(i) {
                *b = true;
            }
            return None;
        }
        let id = StreamId::new(self.side, dir, credit.used())?;
        credit.consume(1);
        let window = Self::peer_window(self.side, &self.peer_windows, id);
        self.send
            .insert(id, SendStream::new(window, self.config.send_buffer));
        if dir == Dir::Bi {
            let rs = RecvStream::new(
                self.config
                    .stream_recv_window(self.config.stream_window_bidi_local),
            );
            self.recv.insert(id, rs);
        }
        Some(id)
    }

    /// The next stream the peer opened of this type, in order, if any.
    pub fn accept_bi(&mut self) -> Option<StreamId> {
        self.accept(Dir::Bi)
    }

    /// The next unidirectional stream the peer opened, if any.
    pub fn accept_uni(&mut self) -> Option<StreamId> {
        self.accept(Dir::Uni)
    }

    fn accept(&mut self, dir: Dir) -> Option<StreamId> {
        let i = dir_index(dir);
        let next = self.remote_accepted.get_mut(i)?;
        if *next >= *self.remote_opened.get(i)? {
            return None;
        }
        let id = StreamId::new(self.side.peer(), dir, *next)?;
        *next += 1;
        Some(id)
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<StreamEvent> {
        let ev = self.events.pop_front()?;
        match ev {
            StreamEvent::Opened { dir } => {
                if let Some(f) = self.opened_event.get_mut(dir_index(dir)) {
                    *f = false;
                }
            }
            StreamEvent::Readable { id } => {
                if let Some(rs) = self.recv.get_mut(&id) {
                    rs.readable_notified = false;
                }
            }
            _ => {}
        }
        Some(ev)
    }

    /// Queues up to the whole of `data` on stream `id` (zero-copy: the chunk is kept and sliced). Returns how
    /// many bytes were accepted; [`WriteError::Blocked`] when the send buffer is full.
    pub fn write(&mut self, id: StreamId, data: Bytes) -> Result<usize, WriteError> {
        let Some(ss) = self.send.get_mut(&id) else {
            return Err(self.stopped_error(id));
        };
        let n = ss.write(data)?;
        self.enqueue(id);
        self.note_blocked(id);
        self.update_flow_blocked();
        Ok(n)
    }

    /// Ends the stream after the data written so far.
    pub fn finish(&mut self, id: StreamId) -> Result<(), WriteError> {
        let Some(ss) = self.send.get_mut(&id) else {
            return Err(self.stopped_error(id));
        };
        ss.finish()?;
        self.enqueue(id);
        Ok(())
    }

    /// Abandons sending on `id` with an application error code (RESET_STREAM, RFC 9000 §3.1).
    pub fn reset(&mut self, id: StreamId, error_code: VarInt) -> Result<(), ClosedStream> {
        let ss = self.send.get_mut(&id).ok_or(ClosedStream)?;
        if !ss.reset(error_code) {
            return Err(ClosedStream);
        }
        self.pending.per_stream.insert((PerStream::ResetStream, id));
        Ok(())
    }

    /// Sets the scheduling priority of a sending stream: streams with data of a higher priority are served
    /// first; equal priorities share round-robin. The default is 0.
    pub fn set_priority(&mut self, id: StreamId, priority: i32) -> Result<(), ClosedStream> {
        self.send.get_mut(&id).ok_or(ClosedStream)?.priority = priority;
        Ok(())
    }

    /// Reads up to `max_len` bytes in order from stream `id`: `Ok(Some(data))`, or `Ok(None)` at the end of
    /// the stream. `now` drives window auto-tuning. Consuming data gives credit back to the peer
    /// (MAX_STREAM_DATA / MAX_DATA once less than half the window is left).
    pub fn read(&mut self, id: StreamId, max_len: usize, now: Instant) -> Result<Option<Bytes>, ReadError> {
        let rs = self.recv.get_mut(&id).ok_or(ReadError::ClosedStream)?;
        rs.readable_notified = false;
        let (before, occupied) = (rs.fragments(), rs.occupancy());
        let read = rs.read(max_len);
        recount(&mut self.recv_fragments, before, rs.fragments());
        self.reassembly.recount(occupied, rs.occupancy());
        match read {
            Ok(Some(data)) => {
                let n = data.len() as u64;
                let rtt = Self::tuning_rtt(rs.window.policy(), self.rtt, self.sizing_rtt);
                if rs.window.consume(n, Some(now), rtt) && rs.wants_credit() {
                    self.pending.per_stream.insert((PerStream::MaxStreamData, id));
                    self.flow.credit_due(now);
                }
                // The connection window must not be what holds back a single stream.
                self.conn_recv.ensure_window(rs.window.window());
                self.release_conn(n, Some(now));
                Ok(Some(data))
            }
            Ok(None) => {
                self.remove_recv(id);
                Ok(None)
            }
            Err(ReadError::Reset(code)) => {
                self.remove_recv(id);
                Err(ReadError::Reset(code))
            }
            Err(e) => Err(e),
        }
    }

    /// Stops reading stream `id`: buffered and future data is discarded and the peer is asked to stop with
    /// STOP_SENDING (RFC 9000 §3.5).
    pub fn stop(&mut self, id: StreamId, error_code: VarInt) -> Result<(), ClosedStream> {
        let rs = self.recv.get_mut(&id).ok_or(ClosedStream)?;
        if rs.stopped.is_some() {
            return Err(ClosedStream);
        }
        if rs.reset.is_some() {
            // RFC 9000 §3.5: "STOP_SENDING SHOULD only be sent for a stream that has not been reset by the
            // peer."
            self.remove_recv(id);
            return Ok(());
        }
        let (before, occupied) = (rs.fragments(), rs.occupancy());
        let released = rs.stop(error_code);
        recount(&mut self.recv_fragments, before, rs.fragments());
        self.reassembly.recount(occupied, rs.occupancy());
        let settled = rs.stopped_and_settled();
        self.release_conn(released, None);
        if settled {
            self.remove_recv(id);
        } else {
            self.pending.per_stream.insert((PerStream::StopSending, id));
        }
        Ok(())
    }

    /// Bytes buffered for reading on `id`.
    pub fn read_buffered(&self, id: StreamId) -> Option<u64> {
        self.recv.get(&id).map(|rs| rs.buffered())
    }

    /// Bytes written and not yet acknowledged on `id`.
    pub fn send_buffered(&self, id: StreamId) -> Option<u64> {
        self.send.get(&id).map(|ss| ss.buffered())
    }

    /// The current stream receive window of `id` (it grows by auto-tuning).
    pub fn recv_window(&self, id: StreamId) -> Option<u64> {
        self.recv.get(&id).map(|rs| rs.window.window())
    }

    /// The limit advertised to the peer for stream `id` (its MAX_STREAM_DATA, sent or about to be): the
    /// peer may send up to this offset.
    pub fn recv_limit(&self, id: StreamId) -> Option<u64> {
        self.recv.get(&id).map(|rs| rs.window.advertised())
    }

    /// The connection-level limit advertised to the peer (its MAX_DATA, sent or about to be).
    pub fn conn_recv_limit(&self) -> u64 {
        self.conn_recv.advertised()
    }

    /// The receive-window policy of `id`.
    pub fn recv_window_policy(&self, id: StreamId) -> Option<WindowPolicy> {
        self.recv.get(&id).map(|rs| rs.window.policy())
    }

    /// Changes how the receive window of stream `id` grows from now on: [`WindowPolicy::Fixed`] makes it
    /// exactly `max_window`; [`WindowPolicy::Auto`] and [`WindowPolicy::Linux`] keep the current window
    /// (cut to `max_window`, and raised to `min_stream_window` under Linux) and let it grow up to
    /// `max_window`. The limit already advertised to the peer never decreases; if the new window allows
    /// more, a MAX_STREAM_DATA is queued at once.
    ///
    /// `max_window` ranges over 1 to [`MAX_WINDOW`] (2^62 − 1).
    pub fn set_recv_window(
        &mut self,
        id: StreamId,
        max_window: u64,
        policy: WindowPolicy,
    ) -> Result<(), SetWindowError> {
        if !(1..=MAX_WINDOW).contains(&max_window) {
            return Err(SetWindowError::InvalidWindow(max_window));
        }
        let rs = self.recv.get_mut(&id).ok_or(SetWindowError::ClosedStream)?;
        if rs.window.set_policy(policy, max_window) && rs.wants_credit() {
            self.pending.per_stream.insert((PerStream::MaxStreamData, id));
        }
        Ok(())
    }

    /// The current connection receive window.
    pub fn conn_recv_window(&self) -> u64 {
        self.conn_recv.window()
    }

    /// The connection-level send credit left (the peer's MAX_DATA minus what we sent).
    pub fn conn_send_credit(&self) -> u64 {
        self.conn_send.available()
    }

    /// Number of streams with any state (either part alive).
    pub fn stream_count(&self) -> usize {
        let only_recv = self.recv.keys().filter(|id| !self.send.contains_key(id)).count();
        self.send.len() + only_recv
    }

    // ----- internal bookkeeping -----

    /// Gives `n` bytes of connection credit back; queues MAX_DATA when due.
    fn release_conn(&mut self, n: u64, now: Option<Instant>) {
        let rtt = Self::tuning_rtt(self.conn_recv.policy(), self.rtt, self.sizing_rtt);
        if n > 0 && self.conn_recv.consume(n, now, rtt) {
            self.pending.max_data = true;
            if let Some(now) = now {
                self.flow.credit_due(now);
            }
        }
    }

    /// Flow-control statistics: time blocked on credit as a sender, due credit left unsent as a receiver.
    pub fn flow_stats(&self) -> FlowControlStats {
        self.flow.stats()
    }

    /// Whether a MAX_DATA or MAX_STREAM_DATA is due and not yet sent.
    pub fn credit_due(&self) -> bool {
        self.pending.max_data
            || self
                .pending
                .per_stream
                .iter()
                .any(|(kind, _)| *kind == PerStream::MaxStreamData)
    }

    /// The connection sent an ack-eliciting packet at `now`: ends the due-credit episode if the packet took
    /// the last pending MAX_DATA / MAX_STREAM_DATA, and starts a blocked episode if the packet used the last
    /// credit while data waits.
    pub fn on_packet_sent(&mut self, now: Instant) {
        let still_due = self.flow.credit_pending() && self.credit_due();
        self.flow.packet_sent(now, still_due);
        self.update_flow_blocked();
    }

    /// Tells the stream layer the time of an event that may change whether the sender is blocked on flow
    /// control (a MAX_DATA or MAX_STREAM_DATA received).
    pub fn note_time(&mut self, now: Instant) {
        self.flow.tick(Some(now));
        self.update_flow_blocked();
    }

    /// Re-evaluates, at the latest known time, whether the sender is blocked on flow control.
    fn update_flow_blocked(&mut self) {
        let blocked = self.flow_stalled();
        self.flow.set_blocked(blocked);
    }

    /// Whether some stream has new data that stream or connection credit holds back while no stream can send
    /// anything ([`FlowControlStats`]).
    fn flow_stalled(&self) -> bool {
        let conn = self.conn_send.available();
        let mut held = false;
        for ss in self.queue.iter().filter_map(|id| self.send.get(id)) {
            if ss.is_sendable(conn) {
                return false;
            }
            held |= ss.has_unsent();
        }
        held
    }

    /// Puts `id` in the send queue if it has something to send and is not there yet.
    fn enqueue(&mut self, id: StreamId) {
        if let Some(ss) = self.send.get_mut(&id) {
            if !ss.queued && ss.has_pending() {
                ss.queued = true;
                self.queue.push_back(id);
            }
        }
    }

    /// Queues STREAM_DATA_BLOCKED / DATA_BLOCKED when `id` has data that flow control holds back.
    fn note_blocked(&mut self, id: StreamId) {
        let Some(ss) = self.send.get_mut(&id) else {
            return;
        };
        if !ss.has_unsent() {
            return;
        }
        if ss.credit.available() == 0 {
            if ss.credit.take_blocked().is_some() {
                self.pending.per_stream.insert((PerStream::StreamDataBlocked, id));
            }
        } else if let Some(limit) = self.conn_send.take_blocked() {
            self.pending.data_blocked = Some(limit);
        }
    }

    /// Removes the receiving part of `id`.
    fn remove_recv(&mut self, id: StreamId) {
        if let Some(rs) = self.recv.remove(&id) {
            self.recv_fragments = self.recv_fragments.saturating_sub(rs.fragments());
            self.reassembly.recount(rs.occupancy(), Occupancy::default());
            self.on_part_closed(id);
        }
    }

    /// Removes the sending part of `id`.
    fn remove_send(&mut self, id: StreamId) {
        self.holey.remove(&id);
        if let Some(ss) = self.send.remove(&id) {
            if let Some(code) = ss.stop_code.filter(|_| self.max_stopped > 0) {
                // The application may not have written since the peer's STOP_SENDING: keep the code so its
                // next write or finish reports `Stopped` rather than `ClosedStream` (bounded by
                // `ConnectionLimits::remembered_stops`; oldest dropped).
                while self.stopped.len() >= self.max_stopped {
                    self.stopped.pop_first();
                }
                self.stopped.insert(id, code);
            }
            self.on_part_closed(id);
        }
    }

    /// The peer's STOP_SENDING code for a send part already removed, reported (once) to the application.
    fn stopped_error(&mut self, id: StreamId) -> WriteError {
        match self.stopped.remove(&id) {
            Some(code) => WriteError::Stopped(code),
            None => WriteError::ClosedStream,
        }
    }

    /// A part of `id` was removed: when the whole stream is gone and the peer opened it, it no longer counts
    /// against the concurrency limit.
    fn on_part_closed(&mut self, id: StreamId) {
        if id.initiator() == self.side || self.send.contains_key(&id) || self.recv.contains_key(&id) {
            return;
        }
        let dir = id.dir();
        if let Some(c) = self.remote_closed.get_mut(dir_index(dir)) {
            *c += 1;
        }
        self.maybe_raise_remote_limit(dir);
    }

    /// Raises the peer's stream limit to keep `max_*_streams` concurrently available, once less than half
    /// of it is left unused.
    fn maybe_raise_remote_limit(&mut self, dir: Dir) {
        let i = dir_index(dir);
        let initial = self.config.max_streams(dir);
        let (Some(&closed), Some(&opened), Some(max)) = (
            self.remote_closed.get(i),
            self.remote_opened.get(i),
            self.remote_max.get_mut(i),
        ) else {
            return;
        };
        let target = closed.saturating_add(initial).min(MAX_STREAM_INDEX_COUNT);
        if target > *max && max.saturating_sub(opened) <= initial / 2 {
            *max = target;
            if let Some(p) = self.pending.max_streams.get_mut(i) {
                *p = true;
            }
        }
    }

    /// Whether the peer has opened the stream `id` (or we have, for our own).
    fn is_opened(&self, id: StreamId) -> bool {
        let i = dir_index(id.dir());
        let opened = if id.initiator() == self.side {
            self.local_opened.get(i).map_or(0, SendCredit::used)
        } else {
            self.remote_opened.get(i).copied().unwrap_or(0)
        };
        id.index() < opened
    }
}
