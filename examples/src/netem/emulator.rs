//! Starting the emulator and controlling it: [`Emulator::start`] binds every socket and spawns the relay
//! tasks on the current tokio runtime (receivers, schedule, control port) and one sender thread per path
//! direction (see [`relay`]); the returned [`EmulatorHandle`] reports the bound addresses, brings
//! paths up and down, changes link parameters, reads counters and shuts everything down.
//!
//! [`Controller`] is the cloneable part of the handle (no task ownership), for other tasks: the schedule,
//! the control port, a signal handler.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use mpquic_netsim::link::{ConfigError, Link};
use tokio::net::UdpSocket;
use tokio::task::JoinSet;

use super::clock::Clock;
use super::config::{Direction, EmulatorConfig, PathSelector};
use super::control;
use super::direction::DirectionState;
use super::error::NetemError;
use super::relay::{self, PathShared, SharedDirection, lock};
use super::stats::PathCounters;

/// Entry point of the library API.
#[derive(Debug)]
pub struct Emulator;

impl Emulator {
    /// Validates `config`, binds the front and back sockets of every path (and the control port), and
    /// spawns the relay tasks. Must be called from within a tokio runtime. Scheduled events count from now.
    pub async fn start(config: EmulatorConfig) -> Result<EmulatorHandle, NetemError> {
        config.validate()?;
        let overhead = config.wire_overhead();
        let mut paths = Vec::with_capacity(config.paths.len());
        let mut sockets = Vec::with_capacity(config.paths.len());
        for (k, path) in config.paths.iter().enumerate() {
            let front = bind(path.listen, format!("path {k} front"))?;
            let back_bind = SocketAddr::new(unspecified(config.server.ip()), 0);
            let back = bind(back_bind, format!("path {k} back"))?;
            back.connect(config.server)?;
            let mut directions = Vec::with_capacity(2);
            for direction in Direction::BOTH {
                let link = Link::new(path.link(direction).clone(), config.link_seed(k, direction)).map_err(
                    |source| NetemError::Link {
                        path: k,
                        direction,
                        source,
                    },
                )?;
                directions.push(SharedDirection::new(DirectionState::new(link, overhead)));
            }
            let (Some(downlink), Some(uplink)) = (directions.pop(), directions.pop()) else {
                continue;
            };
            paths.push(Arc::new(PathShared {
                index: k,
                front_addr: front.local_addr()?,
                back_addr: back.local_addr()?,
                client: Mutex::new(None),
                uplink,
                downlink,
                stopped: AtomicBool::new(false),
            }));
            sockets.push((front, back));
        }
        let clock = Clock::start();
        let controller = Controller {
            inner: Arc::new(Inner { clock, paths }),
        };
        let mut tasks = JoinSet::new();
        let mut threads = Vec::with_capacity(2 * sockets.len());
        for (path, (front, back)) in controller.inner.paths.iter().zip(sockets) {
            // Two handles per socket: the task receives, the thread sends.
            let (front_tx, back_tx) = (front.try_clone()?, back.try_clone()?);
            let (front, back) = (UdpSocket::from_std(front)?, UdpSocket::from_std(back)?);
            tasks.spawn(relay::receive_uplink(Arc::clone(path), front, clock));
            tasks.spawn(relay::receive_downlink(Arc::clone(path), back, clock));
            for (direction, socket) in [(Direction::Uplink, back_tx), (Direction::Downlink, front_tx)] {
                let path = Arc::clone(path);
                let thread = std::thread::Builder::new()
                    .name(format!("netem-{}-{direction}", path.index))
                    .spawn(move || relay::send_thread(path, direction, socket, clock));
                match thread {
                    Ok(t) => threads.push(t),
                    Err(e) => {
                        controller.inner.paths.iter().for_each(|p| relay::stop(p));
                        return Err(NetemError::Io(e));
                    }
                }
            }
        }
        if !config.events.is_empty() {
            tasks.spawn(control::run_schedule(controller.clone(), config.events.clone()));
        }
        let control_addr = match config.control {
            Some(addr) => {
                let socket = UdpSocket::from_std(bind(addr, "control port".to_owned())?)?;
                let bound = socket.local_addr()?;
                tasks.spawn(control::serve(controller.clone(), socket));
                Some(bound)
            }
            None => None,
        };
        for p in &controller.inner.paths {
            tracing::info!(path = p.index, front = %p.front_addr, back = %p.back_addr, server = %config.server, "path ready");
        }
        Ok(EmulatorHandle {
            controller,
            control_addr,
            tasks,
            threads,
        })
    }
}

fn unspecified(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    }
}

/// A non-blocking UDP socket bound to `addr` (`what` names it in the error).
fn bind(addr: SocketAddr, what: String) -> Result<std::net::UdpSocket, NetemError> {
    let socket = std::net::UdpSocket::bind(addr).map_err(|source| NetemError::Bind { what, addr, source })?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

#[derive(Debug)]
struct Inner {
    clock: Clock,
    paths: Vec<Arc<PathShared>>,
}

/// A cloneable remote control of a running emulator (it does not keep the emulator running).
#[derive(Clone, Debug)]
pub struct Controller {
    inner: Arc<Inner>,
}

impl Controller {
    /// Number of paths.
    pub fn path_count(&self) -> usize {
        self.inner.paths.len()
    }

    fn path(&self, path: usize) -> Result<&Arc<PathShared>, NetemError> {
        self.inner.paths.get(path).ok_or(NetemError::UnknownPath {
            path,
            last: self.inner.paths.len().saturating_sub(1),
        })
    }

    fn selected(&self, paths: PathSelector) -> Result<Vec<&Arc<PathShared>>, NetemError> {
        match paths {
            PathSelector::One(k) => Ok(vec![self.path(k)?]),
            PathSelector::All => Ok(self.inner.paths.iter().collect()),
        }
    }

    /// Brings a path up or down, both directions at once. Going down destroys the datagrams the path holds.
    pub fn set_up(&self, path: usize, up: bool) -> Result<(), NetemError> {
        self.set_up_selected(PathSelector::One(path), up)
    }

    /// [`Controller::set_up`] for one path or all.
    pub fn set_up_selected(&self, paths: PathSelector, up: bool) -> Result<(), NetemError> {
        let now = self.inner.clock.now();
        for p in self.selected(paths)? {
            for direction in Direction::BOTH {
                lock(&p.direction(direction).state).set_up(now, up);
            }
            tracing::info!(path = p.index, up, "path state");
        }
        Ok(())
    }

    /// Whether a path is up (its uplink, which always agrees with its downlink unless changed through
    /// [`Controller::with_link`]).
    pub fn is_up(&self, path: usize) -> Result<bool, NetemError> {
        Ok(lock(&self.path(path)?.uplink.state).is_up())
    }

    /// Changes the link model of one direction of a path, e.g.
    /// `controller.with_link(0, Direction::Uplink, |link, now| link.set_rate(now, 10_000_000))`.
    pub fn with_link(
        &self,
        path: usize,
        direction: Direction,
        change: impl FnOnce(&mut Link, mpquic_netsim::time::SimTime) -> Result<(), ConfigError>,
    ) -> Result<(), NetemError> {
        let now = self.inner.clock.now();
        let p = self.path(path)?;
        let mut state = lock(&p.direction(direction).state);
        change(state.link_mut(), now).map_err(|source| NetemError::Link {
            path,
            direction,
            source,
        })
    }

    /// The front addresses (where the client sends), by path.
    pub fn front_addrs(&self) -> Vec<SocketAddr> {
        self.inner.paths.iter().map(|p| p.front_addr).collect()
    }

    /// The back addresses (the sources the server sees), by path.
    pub fn back_addrs(&self) -> Vec<SocketAddr> {
        self.inner.paths.iter().map(|p| p.back_addr).collect()
    }

    /// A snapshot of every path's counters.
    pub fn stats(&self) -> Vec<PathCounters> {
        self.inner
            .paths
            .iter()
            .map(|p| {
                let uplink = lock(&p.uplink.state);
                let up = uplink.is_up();
                let uplink = uplink.counters();
                let downlink = lock(&p.downlink.state).counters();
                PathCounters {
                    path: p.index,
                    front: p.front_addr,
                    back: p.back_addr,
                    client: *lock(&p.client),
                    up,
                    uplink,
                    downlink,
                }
            })
            .collect()
    }

    /// Time since the emulator started.
    pub fn elapsed(&self) -> std::time::Duration {
        self.inner.clock.now().since_epoch()
    }

    /// When a simulated time falls in real time (for tasks that sleep until scheduled events).
    pub(crate) fn clock(&self) -> Clock {
        self.inner.clock
    }
}

/// A running emulator. Dropping it stops the relay (as [`EmulatorHandle::shutdown`] does, without waiting).
#[derive(Debug)]
pub struct EmulatorHandle {
    controller: Controller,
    control_addr: Option<SocketAddr>,
    tasks: JoinSet<()>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for EmulatorHandle {
    /// Stops the sender threads (the tasks stop as the [`JoinSet`] is dropped).
    fn drop(&mut self) {
        self.controller.inner.paths.iter().for_each(|p| relay::stop(p));
    }
}

impl EmulatorHandle {
    /// A cloneable control of this emulator for other tasks.
    pub fn controller(&self) -> Controller {
        self.controller.clone()
    }

    /// The front addresses (where the client sends), by path.
    pub fn front_addrs(&self) -> Vec<SocketAddr> {
        self.controller.front_addrs()
    }

    /// The back addresses (the sources the server sees), by path.
    pub fn back_addrs(&self) -> Vec<SocketAddr> {
        self.controller.back_addrs()
    }

    /// Where the control port listens, if one was asked for.
    pub fn control_addr(&self) -> Option<SocketAddr> {
        self.control_addr
    }

    /// See [`Controller::set_up`].
    pub fn set_up(&self, path: usize, up: bool) -> Result<(), NetemError> {
        self.controller.set_up(path, up)
    }

    /// See [`Controller::stats`].
    pub fn stats(&self) -> Vec<PathCounters> {
        self.controller.stats()
    }

    /// Stops every task and thread and closes every socket; returns the final counters.
    pub async fn shutdown(mut self) -> Vec<PathCounters> {
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
        self.controller.inner.paths.iter().for_each(|p| relay::stop(p));
        let threads = std::mem::take(&mut self.threads);
        // Each thread returns as soon as it wakes; joining takes microseconds, off the runtime anyway.
        let joined = tokio::task::spawn_blocking(move || {
            for t in threads {
                let _ = t.join();
            }
        });
        let _ = joined.await;
        self.controller.stats()
    }
}
