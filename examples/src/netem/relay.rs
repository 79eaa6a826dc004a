//! The tasks that move datagrams: per path and direction, a receiver that runs each datagram through the
//! link model and a sender that sends it at its arrival time.
//!
//! The receiver never waits for a send: it only files the datagram in the direction's [`DirectionState`]
//! (under a mutex held for microseconds, never across an `.await`) and wakes the sender if the datagram is
//! due before anything else held. The sender sleeps until the earliest arrival time, then sends everything
//! due (a batch when several fell into the same timer tick). Uplink: front socket → back socket (connected
//! to the server). Downlink: back socket → front socket, to the last client address seen on the front.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::net::UdpSocket;
use tokio::sync::Notify;

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
    /// Wakes the sender when a datagram is due earlier than what it sleeps for.
    wake: Notify,
}

impl SharedDirection {
    pub(crate) fn new(state: DirectionState) -> SharedDirection {
        SharedDirection {
            state: Mutex::new(state),
            wake: Notify::new(),
        }
    }
}

/// Everything about one path the tasks and the controller share (not the sockets: only the tasks hold
/// those, so that they close when the tasks stop even if a controller is still around).
#[derive(Debug)]
pub(crate) struct PathShared {
    pub(crate) index: usize,
    pub(crate) front_addr: SocketAddr,
    pub(crate) back_addr: SocketAddr,
    /// Last source address seen on the front socket.
    pub(crate) client: Mutex<Option<SocketAddr>>,
    pub(crate) uplink: SharedDirection,
    pub(crate) downlink: SharedDirection,
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
pub(crate) async fn receive_uplink(path: Arc<PathShared>, front: Arc<UdpSocket>, clock: Clock) {
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
pub(crate) async fn receive_downlink(path: Arc<PathShared>, back: Arc<UdpSocket>, clock: Clock) {
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

/// Sends the datagrams of one direction at their arrival times, from `socket` (the back socket for the
/// uplink, the front socket for the downlink).
pub(crate) async fn send(path: Arc<PathShared>, direction: Direction, socket: Arc<UdpSocket>, clock: Clock) {
    let dir = path.direction(direction);
    let mut due = Vec::new();
    loop {
        // Created before looking at the state: a datagram filed after the look leaves a permit.
        let woken = dir.wake.notified();
        let next = lock(&dir.state).take_due(clock.now(), &mut due);
        for payload in due.drain(..) {
            let sent = match direction {
                Direction::Uplink => socket.send(&payload).await.map(|_| ()),
                Direction::Downlink => {
                    let client = *lock(&path.client);
                    match client {
                        Some(to) => socket.send_to(&payload, to).await.map(|_| ()),
                        None => Err(io::Error::new(io::ErrorKind::NotConnected, "no client address")),
                    }
                }
            };
            if let Err(e) = sent {
                tracing::debug!(path = path.index, %direction, error = %e, "send failed");
                lock(&dir.state).send_failed(payload.len());
            }
        }
        match next {
            Some(at) => {
                tokio::select! {
                    () = tokio::time::sleep_until(clock.instant(at)) => {}
                    () = woken => {}
                }
            }
            None => woken.await,
        }
    }
}
