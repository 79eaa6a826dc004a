//! What a connection's application handles, its driver task and the endpoint share: the core connection
//! behind a lock with the wakers of the tasks waiting on it ([`ConnState`]), the transmit side, and the
//! flush and driver that send what the core writes.
//!
//! The core [`proto::connection::Connection`](crate::proto::connection::Connection) lives behind an
//! `Arc<Mutex<..>>` shared by the endpoint (which feeds it datagrams), the application handles (streams,
//! datagrams, close) and one driver task per connection. A flush ([`ConnShared::flush`]) fires a due timer,
//! writes every datagram the core has to send, groups them for GSO and sends them, and turns core events
//! into wake-ups of the tasks waiting on streams, datagrams, accepts or the end of the connection. The task
//! that changed the core's state flushes itself (the endpoint's receive task after a batch, a stream write,
//! a FIN, a close); the driver task sleeps on a timer that a flush moves earlier itself when the core wants
//! an earlier timer, and is woken only when the socket is full, a burst exceeds one turn or the connection
//! is closed from a drop. A read that makes flow-control credit due flushes it itself
//! ([`ConnShared::credit_released`]).
//!
//! Module dependencies run one way: `endpoint` → `connection` (the application handles) → `streams`,
//! `paths` → this module, which knows the endpoint only through [`EndpointLink`].

use std::collections::HashMap;
use std::future::{Future, poll_fn};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::Notify;

use crate::proto::coding::VarInt;
use crate::proto::connection::{Connection as CoreConnection, ConnectionError, EndpointEvent, Event};
use crate::proto::endpoint::ConnectionHandle;
use crate::proto::frame::Dir;
use crate::proto::streams::{StreamEvent, StreamId};

use super::clock;
use super::paths::PathEvent;
use super::socket::{Outgoing, Socket, TransmitStats};

/// How far ahead the driver's timer is parked when the core wants no timer.
const NO_TIMER: Duration = Duration::from_secs(24 * 3600);

/// Datagrams the driver writes per turn before it yields to other tasks.
const MAX_TRANSMITS_PER_TURN: usize = 64;

/// A hasher for the stream-ID keys of the waker maps: stream IDs are chosen by us or bounded by our stream
/// limits, so a multiplicative hash is enough and much cheaper than SipHash on this per-event path.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// Wakers of the tasks waiting on each stream.
pub(crate) type WakerMap = HashMap<StreamId, Waker, std::hash::BuildHasherDefault<IdHasher>>;

/// Adds `w` to `list` unless an equivalent waker is there already.
pub(crate) fn register(list: &mut Vec<Waker>, w: &Waker) {
    if !list.iter().any(|x| x.will_wake(w)) {
        list.push(w.clone());
    }
}

fn wake_all(list: &mut Vec<Waker>) {
    for w in list.drain(..) {
        w.wake();
    }
}

/// The state behind a connection's mutex: the core connection and who waits for what.
#[derive(Debug)]
pub(crate) struct ConnState {
    /// The core connection.
    pub(crate) conn: CoreConnection,
    /// The handshake completed.
    pub(super) handshake_done: bool,
    /// The handshake is confirmed (RFC 9001 §4.1.2): at the server when it completes, at the client when
    /// HANDSHAKE_DONE arrives.
    pub(super) handshake_confirmed: bool,
    /// Why the connection ended, once it did.
    pub(crate) error: Option<ConnectionError>,
    pub(super) connecting: Vec<Waker>,
    pub(crate) readable: WakerMap,
    pub(crate) writable: WakerMap,
    pub(super) accept_bi: Vec<Waker>,
    pub(super) accept_uni: Vec<Waker>,
    pub(super) open_bi: Vec<Waker>,
    pub(super) open_uni: Vec<Waker>,
    pub(super) datagrams: Vec<Waker>,
    pub(super) closed: Vec<Waker>,
    /// Path events not yet taken by [`Connection::path_event`](super::Connection::path_event) (bounded).
    pub(super) path_events: std::collections::VecDeque<PathEvent>,
    pub(super) path_event_wakers: Vec<Waker>,
    /// The time the driver task sleeps until (`None`: no timer). Whoever makes the core want an earlier
    /// timer moves `driver_timer` to it.
    pub(super) driver_deadline: Option<Instant>,
    /// The timer the driver task sleeps on ([`NO_TIMER`] ahead while `driver_deadline` is `None`). Kept here,
    /// under the same lock as `driver_deadline`, so that a task that flushes can move it earlier itself
    /// instead of waking the driver only for the driver to re-arm: a task hop, and often a wake-up of an idle
    /// worker thread, saved each time a send arms a loss-detection timer earlier than the one the driver
    /// sleeps on.
    pub(super) driver_timer: Pin<Box<tokio::time::Sleep>>,
}

impl ConnState {
    /// Feeds one received datagram to the core.
    pub(crate) fn handle_datagram(
        &mut self,
        now: std::time::Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Option<crate::proto::ack_tracker::EcnCodepoint>,
        data: bytes::BytesMut,
    ) {
        self.conn.handle_datagram_buf(now, local, remote, ecn, data);
    }

    /// Turns core events into wake-ups.
    fn process_events(&mut self) {
        while let Some(ev) = self.conn.poll_event() {
            match ev {
                Event::HandshakeCompleted => {
                    self.handshake_done = true;
                    wake_all(&mut self.connecting);
                }
                Event::HandshakeConfirmed => self.handshake_confirmed = true,
                Event::Stream(se) => match se {
                    StreamEvent::Opened { dir: Dir::Bi } => wake_all(&mut self.accept_bi),
                    StreamEvent::Opened { dir: Dir::Uni } => wake_all(&mut self.accept_uni),
                    StreamEvent::Available { dir: Dir::Bi } => wake_all(&mut self.open_bi),
                    StreamEvent::Available { dir: Dir::Uni } => wake_all(&mut self.open_uni),
                    StreamEvent::Readable { id } => {
                        if let Some(w) = self.readable.remove(&id) {
                            w.wake();
                        }
                    }
                    StreamEvent::Writable { id } | StreamEvent::Stopped { id, .. } => {
                        if let Some(w) = self.writable.remove(&id) {
                            w.wake();
                        }
                    }
                    _ => {}
                },
                Event::DatagramReceived => wake_all(&mut self.datagrams),
                Event::PathOpened { .. }
                | Event::PathValidated { .. }
                | Event::PathStatusChanged { .. }
                | Event::PathAbandoned { .. }
                | Event::PathClosed { .. }
                | Event::PeerAddressChanged { .. } => {
                    if let Some(pe) = PathEvent::from_core(&ev) {
                        self.push_path_event(pe);
                    }
                }
                Event::ConnectionLost(e) => {
                    tracing::debug!(error = ?e, "connection lost");
                    if self.error.is_none() {
                        self.error = Some(e);
                    }
                    self.wake_everyone();
                }
                _ => {}
            }
        }
    }

    /// Queues a path event for the application (the oldest is dropped beyond the bound).
    pub(super) fn push_path_event(&mut self, ev: PathEvent) {
        if self.path_events.len() >= super::paths::MAX_PATH_EVENTS {
            self.path_events.pop_front();
        }
        self.path_events.push_back(ev);
        wake_all(&mut self.path_event_wakers);
    }

    fn wake_everyone(&mut self) {
        wake_all(&mut self.path_event_wakers);
        wake_all(&mut self.connecting);
        wake_all(&mut self.accept_bi);
        wake_all(&mut self.accept_uni);
        wake_all(&mut self.open_bi);
        wake_all(&mut self.open_uni);
        wake_all(&mut self.datagrams);
        wake_all(&mut self.closed);
        for (_, w) in self.readable.drain() {
            w.wake();
        }
        for (_, w) in self.writable.drain() {
            w.wake();
        }
    }
}

/// The transmit side of a connection: whoever holds it builds and sends the core's datagrams, so that
/// datagrams leave in the order the core wrote them.
#[derive(Debug)]
struct Tx {
    out: Outgoing,
    endpoint_events: Vec<EndpointEvent>,
    max_segments: usize,
}

/// What a flush ([`ConnShared::flush`]) found.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Flushed {
    /// The next timer the core wants.
    deadline: Option<Instant>,
    /// The time the core was given.
    now: Option<Instant>,
    /// Datagrams were written.
    sent: bool,
    /// The connection finished draining.
    drained: bool,
    /// The socket would block: datagrams wait for it to become writable.
    blocked: bool,
    /// The per-turn transmit limit was hit: there may be more to send.
    more: bool,
    /// The driver must run: one of the above needs it.
    wake_driver: bool,
}

/// What a connection needs of its endpoint: the socket, the tokio runtime, and somewhere to report routing
/// updates and the end of the connection. The endpoint implements it (`endpoint.rs`); connections know the
/// endpoint only through it, so the module dependencies run one way (endpoint → connection).
pub(crate) trait EndpointLink: std::fmt::Debug + Send + Sync {
    /// The runtime the endpoint's tasks run on.
    fn runtime(&self) -> &tokio::runtime::Handle;
    /// The endpoint's current UDP socket.
    fn socket(&self) -> Arc<Socket>;
    /// Routing updates from connection `handle` (new or retired CIDs, reset tokens) for the core endpoint.
    fn connection_events(&self, handle: ConnectionHandle, events: &mut dyn Iterator<Item = EndpointEvent>);
    /// Connection `handle` finished draining: the endpoint forgets it.
    fn connection_drained(&self, handle: ConnectionHandle);
}

/// A received datagram that the endpoint's receive task left for the connection's driver ([`ConnShared::defer`]).
#[derive(Debug)]
pub(crate) struct Received {
    pub(crate) local: Option<SocketAddr>,
    pub(crate) remote: SocketAddr,
    pub(crate) ecn: Option<crate::proto::ack_tracker::EcnCodepoint>,
    pub(crate) data: bytes::BytesMut,
}

/// What the endpoint, the driver and the application handles share about one connection.
#[derive(Debug)]
pub(crate) struct ConnShared {
    pub(super) state: Mutex<ConnState>,
    /// Datagrams the endpoint's receive task left for the driver, oldest first: taken only under the `state`
    /// lock, so that a datagram the receive task processes itself once this is empty comes after them.
    inbox: Mutex<Vec<Received>>,
    /// The handshake is not confirmed yet (cleared by the flush that sees it confirmed: RFC 9001 §4.1.2, at the
    /// server when the handshake completes, at the client when HANDSHAKE_DONE arrives). The receive task
    /// leaves such a connection's datagrams to its driver when it has several handshakes to advance.
    ///
    /// A client's handshake counts until it is confirmed because the server's flight that confirms it also
    /// carries its TLS session tickets (rustls sends them on reading the client's Finished). Processed by the
    /// receive task, a batch delivered the tickets of every connection in it back to back, before any
    /// application task woken by that batch could open its next connection: rustls' client store keeps 8
    /// tickets per server, so a batch of 32 connections left tickets for 8 of their successors and the rest
    /// made full handshakes. Processed by each connection's driver, a connection's tickets are followed by
    /// its application's next step, as in a stack with one task per connection.
    handshaking: AtomicBool,
    /// The transmit side; see [`ConnShared::flush`].
    tx: Mutex<Tx>,
    /// A flush was asked for and has not run yet (whoever holds `tx` runs it).
    pub(super) tx_pending: AtomicBool,
    /// Wakes the driver: the core may have something to send, a new timer or events.
    pub(super) notify: Notify,
    /// Application handles alive ([`Connection`], [`Connecting`], streams); at zero the connection closes.
    pub(super) app_refs: AtomicUsize,
    pub(super) remote: SocketAddr,
    pub(super) handle: ConnectionHandle,
    pub(super) endpoint: Arc<dyn EndpointLink>,
}

impl ConnShared {
    pub(crate) fn new(
        mut conn: CoreConnection,
        remote: SocketAddr,
        handle: ConnectionHandle,
        endpoint: Arc<dyn EndpointLink>,
    ) -> Arc<ConnShared> {
        let max_segments = endpoint.socket().max_gso_segments();
        configure_send_batch(&mut conn, max_segments);
        let driver_timer = {
            // `connect` may be called from outside the runtime: the timer needs its time driver.
            let _guard = endpoint.runtime().enter();
            Box::pin(tokio::time::sleep_until(tokio::time::Instant::from_std(
                clock::now() + NO_TIMER,
            )))
        };
        Arc::new(ConnShared {
            state: Mutex::new(ConnState {
                conn,
                handshake_done: false,
                handshake_confirmed: false,
                error: None,
                connecting: Vec::new(),
                readable: WakerMap::default(),
                writable: WakerMap::default(),
                accept_bi: Vec::new(),
                accept_uni: Vec::new(),
                open_bi: Vec::new(),
                open_uni: Vec::new(),
                datagrams: Vec::new(),
                closed: Vec::new(),
                path_events: std::collections::VecDeque::new(),
                path_event_wakers: Vec::new(),
                driver_deadline: None,
                driver_timer,
            }),
            tx: Mutex::new(Tx {
                out: Outgoing::default(),
                endpoint_events: Vec::new(),
                max_segments,
            }),
            tx_pending: AtomicBool::new(false),
            inbox: Mutex::new(Vec::new()),
            handshaking: AtomicBool::new(true),
            notify: Notify::new(),
            app_refs: AtomicUsize::new(0),
            remote,
            handle,
            endpoint,
        })
    }

    /// Locks the connection state (a poisoned lock is still usable: the core never panics).
    /// The port of the endpoint's socket (every path of the connection uses it).
    pub(crate) fn socket_port(&self) -> u16 {
        self.endpoint.socket().local_addr().port()
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, ConnState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks the driver to run.
    pub(crate) fn wake_driver(&self) {
        self.notify.notify_one();
    }

    /// Whether the handshake is still in progress (as of the last flush).
    pub(crate) fn is_handshaking(&self) -> bool {
        self.handshaking.load(Ordering::Acquire)
    }

    /// Leaves datagrams for the driver, which processes them and sends the answer in its own task (on any
    /// worker thread). Returns them instead if nothing waits in the inbox and `defer` is false: the caller
    /// processes them itself. Datagrams keep their order either way: while older ones wait here, newer ones
    /// join them; and the driver takes them under the connection lock, so a caller that then processes one
    /// itself (under that lock) comes after.
    pub(crate) fn defer(&self, defer: bool, datagram: Received) -> Option<Received> {
        let mut inbox = self.inbox.lock().unwrap_or_else(PoisonError::into_inner);
        if !defer && inbox.is_empty() {
            return Some(datagram);
        }
        inbox.push(datagram);
        None
    }

    /// The driver processes the datagrams the receive task left for it ([`ConnShared::defer`]).
    fn process_inbox(&self) {
        if self
            .inbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
        {
            // Whatever arrives after this check comes with a wake-up: the next turn takes it.
            return;
        }
        let mut st = self.lock();
        let batch = std::mem::take(&mut *self.inbox.lock().unwrap_or_else(PoisonError::into_inner));
        let now = clock::now();
        for r in batch {
            st.handle_datagram(now, r.local, r.remote, r.ecn, r.data);
        }
    }

    /// The application consumed stream data and the window's update rule made flow-control credit due
    /// (`credit_due`, read under the connection lock): the reading task sends it at once, as a writing task
    /// sends its data. Waking the driver instead would leave the credit to a task that may not run soon: a
    /// task woken from a busy worker thread waits for that thread's current task to yield, and a reader
    /// that finds data ready at every read does not yield while the sender, out of credit, waits.
    pub(crate) fn credit_released(&self, credit_due: bool) {
        if credit_due {
            self.flush();
        }
    }

    /// Runs the driver's work in the calling task: fires a due timer, builds and sends what the core has to
    /// send (without waiting for the socket), turns core events into wake-ups and forwards routing updates
    /// to the endpoint. The driver task is woken only when it must re-arm its timer earlier, wait for the
    /// socket, send more than one turn's worth, or finish the connection.
    ///
    /// If another task is flushing, this one only marks the flush as pending and returns; the flushing task
    /// runs it before it lets go of the transmit side, so no request is lost and datagrams stay in order.
    pub(crate) fn flush(&self) {
        if self.flush_as(false).wake_driver {
            self.wake_driver();
        }
    }

    /// [`ConnShared::flush`]. The driver (`driver`) always gets a timer back: from its own turn, or, when
    /// another task holds the transmit side, from the core as it stands (that task runs the turn the driver
    /// asked for, and wakes the driver if the turn wants an earlier timer).
    fn flush_as(&self, driver: bool) -> Flushed {
        let mut total = Flushed::default();
        self.tx_pending.store(true, Ordering::Release);
        let mut first = true;
        while first || self.tx_pending.load(Ordering::Acquire) {
            let Ok(mut tx) = self.tx.try_lock() else {
                // Someone else holds the transmit side: they will see `tx_pending`.
                if driver && first {
                    total.deadline = self.arm_driver_timer();
                }
                break;
            };
            // The driver needs a turn of its own for its timer, even if a previous holder ran its request.
            let mut forced = driver && std::mem::take(&mut first);
            first = false;
            if forced {
                self.tx_pending.store(false, Ordering::Release);
            }
            while std::mem::take(&mut forced) || self.tx_pending.swap(false, Ordering::AcqRel) {
                let f = self.flush_once(&mut tx, driver);
                total.deadline = f.deadline;
                total.now = f.now.or(total.now);
                total.sent |= f.sent;
                total.drained |= f.drained;
                total.blocked = f.blocked;
                total.more = f.more;
                total.wake_driver |= f.wake_driver;
                if f.blocked {
                    break;
                }
            }
            if total.blocked {
                // Retried by the driver once the socket is writable.
                break;
            }
        }
        total
    }

    /// The driver could not run a turn: it sleeps until the core's current timer, or without a timer (any
    /// later turn then wakes it) if that timer is already due, since the turn that handles it is pending.
    fn arm_driver_timer(&self) -> Option<Instant> {
        let mut st = self.lock();
        let deadline = st.conn.poll_timeout().filter(|&d| d > clock::now());
        st.driver_deadline = deadline;
        deadline
    }

    /// Arms the driver's timer for its sleep: at `wanted`, the time its last turn chose from the core's timer
    /// `computed` (`None`: no timer), unless a flusher moved `driver_deadline` earlier since that turn.
    fn arm_sleep(&self, computed: Option<Instant>, wanted: Option<Instant>) {
        let mut st = self.lock();
        let deadline = if st.driver_deadline == computed {
            wanted
        } else {
            st.driver_deadline
        };
        st.driver_deadline = deadline;
        // Without a timer the sleep is parked far ahead; a flusher that needs one moves it.
        let at = tokio::time::Instant::from_std(deadline.unwrap_or_else(|| clock::now() + NO_TIMER));
        st.driver_timer.as_mut().reset(at);
    }

    /// Polls the driver's timer.
    fn poll_sleep(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.lock().driver_timer.as_mut().poll(cx)
    }

    /// One turn of [`ConnShared::flush`] by the holder of the transmit side.
    fn flush_once(&self, tx: &mut Tx, driver: bool) -> Flushed {
        let mut f = Flushed::default();
        let socket = &self.endpoint.socket();
        if tx.out.has_unsent() && !matches!(tx.out.send_now(socket), Ok(true)) {
            f.blocked = true;
            f.wake_driver = !driver;
            return f;
        }
        tx.out.clear();
        let now = clock::now();
        f.now = Some(now);
        {
            let mut st = self.lock();
            if st.conn.poll_timeout().is_some_and(|t| t <= now) {
                st.conn.handle_timeout(now);
            }
            let (n, more) = write_turn(&mut st.conn, now, &mut tx.out, tx.max_segments);
            f.more = more;
            f.sent = n > 0;
            tx.out.stats.turns += u64::from(f.sent);
            st.process_events();
            if st.handshake_confirmed {
                self.handshaking.store(false, Ordering::Release);
            }
            f.drained = st.conn.is_drained();
            while let Some(ev) = st.conn.poll_endpoint_event() {
                if ev == EndpointEvent::Drained {
                    f.drained = true;
                } else {
                    // CID routes and reset tokens for the endpoint; applied after the connection lock is
                    // released (lock order: endpoint, then connection).
                    tx.endpoint_events.push(ev);
                }
            }
            f.deadline = st.conn.poll_timeout();
            if driver {
                st.driver_deadline = f.deadline;
            } else if let Some(d) = f
                .deadline
                .filter(|&d| st.driver_deadline.is_none_or(|armed| d < armed))
            {
                // The driver sleeps on this timer (or re-arms it from `driver_deadline`): move it here.
                st.driver_timer.as_mut().reset(tokio::time::Instant::from_std(d));
                st.driver_deadline = Some(d);
            }
        }
        if !tx.endpoint_events.is_empty() {
            self.endpoint
                .connection_events(self.handle, &mut tx.endpoint_events.drain(..));
        }
        if !matches!(tx.out.send_now(socket), Ok(true)) {
            f.blocked = true;
        }
        if !driver && (f.drained || f.blocked || f.more) {
            f.wake_driver = true;
        }
        f
    }

    /// The counters of the datagrams handed to the socket so far.
    pub(crate) fn transmit_stats(&self) -> TransmitStats {
        self.tx.lock().unwrap_or_else(PoisonError::into_inner).out.stats
    }

    /// Closes the connection with an application error code.
    pub(crate) fn close(&self, code: VarInt, reason: Bytes) {
        {
            let mut st = self.lock();
            if st.conn.is_closed() {
                // Closing, draining or drained already: nothing changes, the driver has its timer.
                return;
            }
            st.conn.close(clock::now(), code, reason);
        }
        self.wake_driver();
    }
}

/// Tells the core how the runtime sends: GSO batches of up to `max_segments` datagrams and
/// [`MAX_GSO_BYTES`](super::socket::MAX_GSO_BYTES) to one destination. Schedulers see it (`ConnView::
/// batch_packets`): round-robin then gives each path turns of one batch instead of alternating every packet,
/// so each batch fills and each path's stream data stays contiguous. Without GSO (`max_segments` 1) nothing
/// changes.
pub(crate) fn configure_send_batch(conn: &mut CoreConnection, max_segments: usize) {
    conn.set_send_batch(max_segments, super::socket::MAX_GSO_BYTES);
}

/// One turn of a flush: queues the core's datagrams in `out`, grouped for GSO, until the core has nothing
/// more to send now or [`MAX_TRANSMITS_PER_TURN`] were written. Returns the number written and whether the
/// limit stopped the turn (there may be more).
pub(crate) fn write_turn(
    conn: &mut CoreConnection,
    now: Instant,
    out: &mut Outgoing,
    max_segments: usize,
) -> (usize, bool) {
    let mut n = 0;
    while out.push_with(max_segments, |buf| conn.poll_transmit_append(now, buf)) {
        n += 1;
        if n >= MAX_TRANSMITS_PER_TURN {
            return (n, true);
        }
    }
    (n, false)
}

/// The task that drives one connection: timers, sends the socket could not take at once, more than one
/// turn's worth of transmits, and the end of the connection. Most transmits are sent by the tasks that
/// feed the core ([`ConnShared::flush`]).
pub(crate) async fn drive(shared: Arc<ConnShared>) {
    loop {
        shared.process_inbox();
        let f = shared.flush_as(true);
        if f.drained {
            let mut st = shared.lock();
            if st.error.is_none() {
                st.error = Some(ConnectionError::LocallyClosed);
            }
            st.wake_everyone();
            drop(st);
            shared.endpoint.connection_drained(shared.handle);
            return;
        }
        if f.blocked {
            if let Err(e) = shared.endpoint.socket().writable().await {
                tracing::warn!(error = %e, "UDP socket failed");
            }
            continue;
        }
        if f.more {
            tokio::task::yield_now().await;
            continue;
        }
        // A deadline already past with nothing sent would spin: wait at least a millisecond.
        let wanted = f.deadline.map(|d| match f.now {
            Some(now) if d <= now && !f.sent => now + Duration::from_millis(1),
            _ => d,
        });
        let notified = shared.notify.notified();
        tokio::pin!(notified);
        // Registered before the timer is armed: a wake-up from here on is not lost.
        notified.as_mut().enable();
        shared.arm_sleep(f.deadline, wanted);
        tokio::select! {
            () = &mut notified => {}
            () = poll_fn(|cx| shared.poll_sleep(cx)) => {}
        }
    }
}

/// A counted application reference to a connection: when the last one is dropped, the connection is
/// closed with code 0 (as in quinn).
#[derive(Debug)]
pub(crate) struct ConnRef(pub(crate) Arc<ConnShared>);

impl ConnRef {
    pub(crate) fn new(shared: Arc<ConnShared>) -> ConnRef {
        shared.app_refs.fetch_add(1, Ordering::AcqRel);
        ConnRef(shared)
    }
}

impl Clone for ConnRef {
    fn clone(&self) -> Self {
        ConnRef::new(self.0.clone())
    }
}

impl Drop for ConnRef {
    fn drop(&mut self) {
        if self.0.app_refs.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.close(VarInt::from_u32(0), Bytes::new());
        }
    }
}

impl std::ops::Deref for ConnRef {
    type Target = ConnShared;
    fn deref(&self) -> &ConnShared {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waker_map_keys_stream_ids() {
        let mut m = WakerMap::default();
        for i in 0..1000u64 {
            let id = StreamId::new(crate::proto::transport_params::Side::Client, Dir::Bi, i).unwrap();
            m.insert(id, Waker::noop().clone());
        }
        assert_eq!(m.len(), 1000);
        let id = StreamId::new(crate::proto::transport_params::Side::Client, Dir::Bi, 7).unwrap();
        assert!(m.remove(&id).is_some());
        assert!(m.remove(&id).is_none());
    }
}
