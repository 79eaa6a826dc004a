//! What sits between client and server for each test case, and the runner's mid-transfer actions on it.
//!
//! - direct: the client sends to the server itself; in multipath cases its second path runs from 127.0.0.2.
//! - emulator: `mpquic_tools::netem` in-process, one emulated path per client path (100 Mbit/s, 5 ms each
//!   way, drop-tail queue), path k's front socket on 127.0.0.1; the second client path runs from 127.0.0.2 to
//!   front 1. transferloss adds 2 % Bernoulli loss both ways; blackhole and mp-failover take paths down;
//!   mp-transfer, mp-failover, mp-cid-rotation and both mp-path-abandon cases run two 25 Mbit/s paths (the
//!   acting side acts once a few megabytes have moved; on unlimited loopback the transfer could be over before
//!   its control loop looks).
//! - relay: [`super::relay::Relay`] for rebind-port.
//!
//! Actions fire when the client's downloads reach a fraction of the total size (the runner watches the files
//! grow), so they land mid-transfer whatever the machine's speed.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::Ordering;
use std::time::Duration;

use mpquic_netsim::link::{LinkConfig, LossModel};
use mpquic_tools::netem::{Emulator, EmulatorConfig, EmulatorHandle, PathConfig, PathCounters};

use super::relay::Relay;
use crate::cases::TestCase;
use crate::error::InteropError;

/// The client's second local address.
pub const SECOND_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
/// Outage length in blackhole.
pub const OUTAGE: Duration = Duration::from_secs(2);
/// Emulated link rate.
const RATE_BPS: u64 = 100_000_000;
/// Emulated link rate in mp-transfer and mp-failover: low enough that one path cannot carry the transfer alone,
/// so any scheduler that fills one path before the next (noq does) uses both, and path 1 has data in flight
/// when it is blackholed.
const MP_TRANSFER_RATE_BPS: u64 = 25_000_000;
/// Emulated one-way delay.
const DELAY: Duration = Duration::from_millis(5);

/// One mid-transfer action.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// Emulated path down for [`OUTAGE`], then up again.
    Outage(usize),
    /// Emulated path down for good.
    Down(usize),
    /// The relay moves to a new port.
    Rebind,
}

/// The network of a case.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Emulated paths (0: no emulator).
    pub emulated_paths: usize,
    /// Random loss on the emulated paths.
    pub loss: f64,
    /// Rate of each emulated path, bits per second.
    pub rate_bps: u64,
    /// A rebinding relay.
    pub relay: bool,
    /// Actions at fractions of the download.
    pub steps: Vec<(f64, Action)>,
    /// Emulated paths given link by link (`mpquic-interop bench`); when not empty they replace
    /// `emulated_paths`, `loss` and `rate_bps`. Each path's front socket listens on 127.0.0.1.
    pub links: Vec<PathConfig>,
}

impl Plan {
    /// The plan of `case`.
    pub fn of(case: TestCase) -> Plan {
        let direct = Plan {
            emulated_paths: 0,
            loss: 0.0,
            rate_bps: RATE_BPS,
            relay: false,
            steps: Vec::new(),
            links: Vec::new(),
        };
        match case {
            TestCase::TransferLoss => Plan {
                emulated_paths: 1,
                loss: 0.02,
                ..direct
            },
            TestCase::Blackhole => Plan {
                emulated_paths: 1,
                steps: vec![(0.2, Action::Outage(0)), (0.6, Action::Outage(0))],
                ..direct
            },
            // mp-cid-rotation too: the client rotates once per megabyte received and needs the peer's fresh
            // connection IDs (one round trip) before the next round; on unlimited loopback the 5 MB can be over
            // within four ticks of its control loop.
            TestCase::MpTransfer
            | TestCase::MpPathAbandon
            | TestCase::MpPathAbandonServer
            | TestCase::MpCidRotation => Plan {
                emulated_paths: 2,
                rate_bps: MP_TRANSFER_RATE_BPS,
                ..direct
            },
            TestCase::MpFailover => Plan {
                emulated_paths: 2,
                rate_bps: MP_TRANSFER_RATE_BPS,
                steps: vec![(0.3, Action::Down(1))],
                ..direct
            },
            TestCase::RebindPort => Plan {
                relay: true,
                steps: vec![(0.25, Action::Rebind), (0.6, Action::Rebind)],
                ..direct
            },
            _ => direct,
        }
    }
}

/// A running network.
pub enum Network {
    /// Nothing in between.
    Direct,
    /// The emulator.
    Emulated(EmulatorHandle),
    /// The relay.
    Relayed(Relay),
}

/// What the network saw, for the checks.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct NetStats {
    /// Per emulated path: datagrams forwarded both ways.
    pub forwarded: Vec<u64>,
    /// Per emulated path: datagrams dropped by random loss.
    pub dropped_loss: Vec<u64>,
    /// Per emulated path: datagrams dropped while down.
    pub dropped_down: Vec<u64>,
    /// Per emulated path: datagrams forwarded before the first action.
    pub forwarded_before_action: Vec<u64>,
    /// Relay rebinds.
    pub rebinds: u64,
    /// Relay: server → client datagrams since the last rebind.
    pub down_since_rebind: u64,
    /// Actions done.
    pub actions_done: usize,
}

fn counts(paths: &[PathCounters], f: impl Fn(&PathCounters) -> u64) -> Vec<u64> {
    paths.iter().map(f).collect()
}

impl Network {
    /// Starts the network of `plan` in front of `server`.
    pub async fn start(plan: &Plan, server: SocketAddr, seed: u64) -> Result<Network, InteropError> {
        if plan.relay {
            return Ok(Network::Relayed(Relay::start(server).await?));
        }
        if !plan.links.is_empty() {
            let cfg = plan
                .links
                .iter()
                .fold(EmulatorConfig::new(server).with_seed(seed), |cfg, path| {
                    cfg.with_path(PathConfig {
                        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
                        ..path.clone()
                    })
                });
            let h = Emulator::start(cfg)
                .await
                .map_err(|e| InteropError::Network(e.to_string()))?;
            return Ok(Network::Emulated(h));
        }
        if plan.emulated_paths == 0 {
            return Ok(Network::Direct);
        }
        let mut link = LinkConfig::new(plan.rate_bps, DELAY);
        if plan.loss > 0.0 {
            link = link.with_loss(LossModel::Bernoulli { p: plan.loss });
        }
        let mut cfg = EmulatorConfig::new(server).with_seed(seed);
        for _ in 0..plan.emulated_paths {
            cfg = cfg.with_path(PathConfig::symmetric(
                SocketAddr::from(([127, 0, 0, 1], 0)),
                link.clone(),
            ));
        }
        let h = Emulator::start(cfg)
            .await
            .map_err(|e| InteropError::Network(e.to_string()))?;
        Ok(Network::Emulated(h))
    }

    /// `SERVER_ADDR` and `CLIENT_PATHS` for the client.
    pub fn client_addrs(
        &self,
        server: SocketAddr,
        multipath: bool,
    ) -> Result<(SocketAddr, String), InteropError> {
        let (first, second) = match self {
            Network::Direct => (server, None),
            Network::Relayed(r) => (r.front_addr()?, None),
            Network::Emulated(h) => {
                let f = h.front_addrs();
                (
                    f.first()
                        .copied()
                        .ok_or_else(|| InteropError::Network("no emulated path".to_owned()))?,
                    f.get(1).copied(),
                )
            }
        };
        let paths = match (multipath, second) {
            (false, _) => String::new(),
            (true, None) => SECOND_IP.to_string(),
            (true, Some(front)) => format!("{SECOND_IP}@{front}"),
        };
        Ok((first, paths))
    }

    /// Performs `action`.
    pub async fn act(&self, action: Action) -> Result<(), InteropError> {
        let net = |e: mpquic_tools::netem::NetemError| InteropError::Network(e.to_string());
        match (self, action) {
            (Network::Emulated(h), Action::Down(p)) => h.set_up(p, false).map_err(net),
            (Network::Emulated(h), Action::Outage(p)) => {
                h.set_up(p, false).map_err(net)?;
                tracing::info!(path = p, "outage starts");
                tokio::time::sleep(OUTAGE).await;
                h.set_up(p, true).map_err(net)?;
                tracing::info!(path = p, "outage ends");
                Ok(())
            }
            (Network::Relayed(r), Action::Rebind) => r.rebind().await,
            (_, a) => Err(InteropError::Network(format!("{a:?} on a network without it"))),
        }
    }

    /// Datagrams forwarded per emulated path so far.
    pub fn forwarded(&self) -> Vec<u64> {
        match self {
            Network::Emulated(h) => counts(&h.stats(), |p| {
                p.uplink.forwarded.packets + p.downlink.forwarded.packets
            }),
            _ => Vec::new(),
        }
    }

    /// The counters for the checks.
    pub fn stats(&self, before: Vec<u64>, actions_done: usize) -> NetStats {
        let mut s = NetStats {
            forwarded_before_action: before,
            actions_done,
            ..NetStats::default()
        };
        match self {
            Network::Emulated(h) => {
                let p = h.stats();
                s.forwarded = counts(&p, |p| p.uplink.forwarded.packets + p.downlink.forwarded.packets);
                s.dropped_loss = counts(&p, |p| {
                    p.uplink.dropped_loss.packets + p.downlink.dropped_loss.packets
                });
                s.dropped_down = counts(&p, |p| {
                    p.uplink.dropped_down.packets + p.downlink.dropped_down.packets
                });
            }
            Network::Relayed(r) => {
                s.rebinds = r.counters.rebinds.load(Ordering::Relaxed);
                s.down_since_rebind = r.counters.down_since_rebind.load(Ordering::Relaxed);
            }
            Network::Direct => {}
        }
        s
    }

    /// Stops it.
    pub async fn stop(self) {
        if let Network::Emulated(h) = self {
            h.shutdown().await;
        }
    }
}
