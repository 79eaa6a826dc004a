//! What moves datagrams: per path and direction, a receiver (a tokio task) that runs each datagram through
//! the link model, and a sender (a thread, see `send_thread`) that sends it at its arrival time.
//!
//! The receiver never waits for a send: it only files the datagram in the direction's [`DirectionState`]
//! (under a mutex held for microseconds, never across an `.await`) and wakes the sender if the datagram is
//! due before anything else held. The sender waits until the earliest arrival time, then sends everything
//! due, without holding the lock. Uplink: front socket → back socket (connected to the server). Downlink:
//! back socket → front socket, to the last client address seen on the front. Each socket is shared by a
//! receiving task and a sending thread through two handles on the same non-blocking socket.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::net::UdpSocket;

use super::clock::Clock;
use super::config::Direction;
use super::direction::DirectionState;

/// Largest datagram relayed (the UDP maximum; larger ones cannot exist).
pub const MAX_DATAGRAM: usize = 65_535;

/// Locks a mutex, ignoring poisoning (no code holding these locks can panic half-way through an update).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One direction shared between its receiver, its sender and the controller.
#[derive(Debug)]
pub(crate) struct SharedDirection {
    pub(crate) state: Mutex<DirectionState>,
    /// Wakes the sender when a datagram is due earlier than what it waits for, or when stopping.
    wake: Condvar,
}

impl SharedDirection {
    pub(crate) fn new(state: DirectionState) -> SharedDirection {
        SharedDirection {
            state: Mutex::new(state),
            wake: Condvar::new(),
        }
    }
}

/// Everything about one path the tasks, the sender threads and the controller share (not the sockets: only
/// the tasks and threads hold those, so that they close when these stop even if a controller is still
/// around).
#[derive(Debug)]
pub(crate) struct PathShared {
    pub(crate) index: usize,
    pub(crate) front_addr: SocketAddr,
    pub(crate) back_addr: SocketAddr,
    /// Last source address seen on the front socket.
    pub(crate) client: Mutex<Option<SocketAddr>>,
    pub(crate) uplink: SharedDirection,
    pub(crate) downlink: SharedDirection,
    /// Set once to stop the sender threads.
    pub(crate) stopped: AtomicBool,
}

impl PathShared {
    pub(crate) fn direction(&self, direction: Direction) -> &SharedDirection {
        match direction {
            Direction::Uplink => &self.uplink,
            Direction::Downlink => &self.downlink,
        }
    }
}

/// Whether a receive error is worth stopping for. ICMP errors from earlier sends (a server not listening
/// yet) surface on connected UDP sockets as `ConnectionRefused` and the like: the socket is still fine.
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
            | io::ErrorKind::HostUnreachable
            | io::ErrorKind::NetworkUnreachable
    )
}

/// Files a datagram received at the current time in `dir`, waking the sender if it is now due first.
fn file(dir: &SharedDirection, clock: &Clock, payload: Vec<u8>) {
    let earlier = lock(&dir.state).offer(clock.now(), payload);
    if earlier.is_some() {
        dir.wake.notify_one();
    }
}

/// Receives client datagrams on the front socket and files them in the uplink.
pub(crate) async fn receive_uplink(path: Arc<PathShared>, front: UdpSocket, clock: Clock) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    loop {
        let (len, from) = match front.recv_from(&mut buf).await {
            Ok(r) => r,
            Err(e) if is_transient(&e) => continue,
            Err(e) => {
                tracing::error!(path = path.index, error = %e, "front socket receive failed; path stops");
                return;
            }
        };
        {
            let mut client = lock(&path.client);
            if *client != Some(from) {
                tracing::info!(path = path.index, client = %from, "client address");
                *client = Some(from);
            }
        }
        let payload = buf.get(..len).unwrap_or_default().to_vec();
        file(&path.uplink, &clock, payload);
    }
}

/// Receives server datagrams on the back socket and files them in the downlink.
pub(crate) async fn receive_downlink(path: Arc<PathShared>, back: UdpSocket, clock: Clock) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    loop {
        let len = match back.recv(&mut buf).await {
            Ok(len) => len,
            Err(e) if is_transient(&e) => continue,
            Err(e) => {
                tracing::error!(path = path.index, error = %e, "back socket receive failed; path stops");
                return;
            }
        };
        if lock(&path.client).is_none() {
            lock(&path.downlink.state).undeliverable(len);
            continue;
        }
        let payload = buf.get(..len).unwrap_or_default().to_vec();
        file(&path.downlink, &clock, payload);
    }
}

/// How often, and how long apart, a send that would block is retried before the datagram is dropped.
const SEND_RETRIES: u32 = 20;
const SEND_RETRY_PAUSE: Duration = Duration::from_micros(50);

/// Sends one datagram on a non-blocking socket, retrying briefly while the socket buffer is full.
fn send_one(socket: &std::net::UdpSocket, payload: &[u8], to: Option<SocketAddr>) -> io::Result<()> {
    let mut tries = 0;
    loop {
        let sent = match to {
            Some(to) => socket.send_to(payload, to),
            None => socket.send(payload),
        };
        match sent {
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && tries < SEND_RETRIES => {
                tries += 1;
                std::thread::sleep(SEND_RETRY_PAUSE);
            }
            Err(e) => return Err(e),
        }
    }
}

/// The sender of one direction, on its own thread: sends each datagram at its arrival time from `socket`
/// (the back socket, connected to the server, for the uplink; the front socket, to the client, for the
/// downlink) until the path is stopped.
///
/// A thread rather than a tokio task because tokio's timer rounds every sleep up to the next millisecond,
/// which would add about a millisecond of latency per direction; a condition variable's timed wait ends
/// within tens of microseconds of the deadline, and never before it.
pub(crate) fn send_thread(
    path: Arc<PathShared>,
    direction: Direction,
    socket: std::net::UdpSocket,
    clock: Clock,
) {
    let dir = path.direction(direction);
    let mut due = Vec::new();
    let mut state = lock(&dir.state);
    loop {
        if path.stopped.load(Ordering::Acquire) {
            return;
        }
        let now = clock.now();
        let next = state.take_due(now, &mut due);
        if due.is_empty() {
            state = match next {
                Some(at) => dir
                    .wake
                    .wait_timeout(state, at.saturating_duration_since(now))
                    .map_or_else(|e| e.into_inner().0, |(guard, _)| guard),
                None => dir.wake.wait(state).unwrap_or_else(PoisonError::into_inner),
            };
            continue;
        }
        drop(state);
        let to = match direction {
            Direction::Uplink => None,
            Direction::Downlink => *lock(&path.client),
        };
        let mut failed = Vec::new();
        for payload in due.drain(..) {
            let sent = match (direction, to) {
                (Direction::Downlink, None) => {
                    Err(io::Error::new(io::ErrorKind::NotConnected, "no client address"))
                }
                _ => send_one(&socket, &payload, to),
            };
            if let Err(e) = sent {
                tracing::debug!(path = path.index, %direction, error = %e, "send failed");
                failed.push(payload.len());
            }
        }
        state = lock(&dir.state);
        for len in failed {
            state.send_failed(len);
        }
    }
}

/// Stops a path's sender threads (they return at their next wake-up, which this causes).
pub(crate) fn stop(path: &PathShared) {
    path.stopped.store(true, Ordering::Release);
    for direction in Direction::BOTH {
        let dir = path.direction(direction);
        // Taking the lock orders this wake-up after a sender's check of `stopped`, or before its wait.
        let _state = lock(&dir.state);
        dir.wake.notify_all();
    }
}
