//! The link model: one direction of a link, as a pure, deterministic state machine over simulated time.
//!
//! A packet offered to a [`Link`] goes through these stages, in order:
//!
//! 1. **state** ([`state`]): a down link drops it ([`DropReason::Down`]);
//! 1. **MTU**: a packet larger than the link's MTU, if it has one, is dropped ([`DropReason::TooLarge`]),
//!    as a router drops an IPv6 packet (or an IPv4 packet with Don't Fragment, as QUIC sends them) it
//!    cannot forward whole;
//! 2. **queue** ([`queue`]): drop-tail admission against the backlog not yet serialised
//!    ([`DropReason::QueueFull`]);
//! 3. **serialisation** ([`rate`]): it leaves at `departure = max(now, previous departure) + 8·len/rate`;
//! 4. **loss** ([`loss`]): Bernoulli or Gilbert–Elliott, on the wire ([`DropReason::Loss`]; the packet has used
//!    capacity);
//! 5. **propagation** ([`delay`]): `arrival = departure + delay + jitter`, order-preserving or not;
//! 6. **impairments** ([`impair`]): a bit flipped in place, a duplicate copy.
//!
//! [`Link::enqueue`] returns the outcome at once as a [`Delivery`]; the caller (the simulator's event loop, or
//! the emulator's timer wheel) delivers the packet at [`Arrival::at`]. The link never stores, copies or owns
//! payloads: it only flips a bit in the caller's buffer when corrupting.
//!
//! # Time and determinism
//!
//! Time is an input: every call takes `now` as a [`SimTime`]. A `now` earlier than one already seen is taken
//! as the latest time seen (time never runs backwards inside a link). Randomness comes from ChaCha8 streams
//! seeded by the `seed` given to [`Link::new`], one independent stream per stage (loss, jitter, impairments),
//! so that the same configuration, seed and sequence of calls always give the same results, and that, for
//! instance, enabling jitter does not change which packets are lost.
//!
//! # Changing parameters over time
//!
//! Scheduled changes (rate, delay, jitter, loss, queue limit, impairments, up/down) are applied by the caller
//! through the `set_*` methods at the times they are due. They affect packets offered from then on: a packet
//! already accepted keeps the delivery time it was given, so the backlog accepted before a rate change drains
//! at the rate it was accepted at (see [`rate`]); an outage does not recall packets already accepted unless the
//! caller checks [`Link::outage_since`].

pub mod delay;
pub mod error;
pub mod impair;
pub mod limits;
pub mod loss;
pub mod queue;
pub mod rate;
pub mod state;
pub mod stats;

use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

pub use delay::{JitterConfig, JitterDistribution};
pub use error::ConfigError;
pub use impair::Impairments;
pub use loss::LossModel;
pub use queue::{Backlog, QueueLimit, ResolvedLimit};
pub use rate::serialisation_time;
pub use state::OutageEpoch;
pub use stats::{LinkStats, PacketCount};

use delay::DelayLine;
use impair::Impairer;
use loss::LossProcess;
use queue::Queue;
use rate::Serialiser;
use state::LinkState;

use crate::time::SimTime;

/// Everything that defines a link direction, as written in a scenario file.
///
/// ```toml
/// rate_bps = 100_000_000
/// delay = "10ms"
/// queue = { kind = "bdp", multiple = 1.0 }
/// loss = { kind = "bernoulli", p = 0.001 }
/// jitter = { distribution = { kind = "uniform", max = "2ms" }, allow_reordering = false }
/// impairments = { corruption = 0.0, duplication = 0.0 }
/// up = true
/// mtu = 1500
/// ```
///
/// Only `rate_bps` and `delay` are required; the rest default to no jitter, no loss, a queue of one BDP over
/// twice `delay`, no impairments, up, no MTU (any size passes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Serialisation rate in bits per second: 1 to 10^12 (1 Tbit/s).
    pub rate_bps: u64,
    /// One-way propagation delay (the minimum latency; jitter adds to it): at most 1 hour.
    #[serde(with = "crate::units::duration")]
    pub delay: Duration,
    /// Extra per-packet delay and ordering.
    #[serde(default)]
    pub jitter: JitterConfig,
    /// Random loss.
    #[serde(default)]
    pub loss: LossModel,
    /// Drop-tail queue limit.
    #[serde(default)]
    pub queue: QueueLimit,
    /// Corruption and duplication.
    #[serde(default)]
    pub impairments: Impairments,
    /// Whether the link starts up.
    #[serde(default = "default_up")]
    pub up: bool,
    /// The largest packet the link carries, in bytes on the wire (the IP packet, headers included: in the
    /// simulator a datagram's UDP payload plus 28 bytes of IPv4 and UDP headers); larger ones are dropped.
    /// `None` (the default): any size passes. Range [`limits::MIN_MTU`] to [`limits::MAX_MTU`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
}

fn default_up() -> bool {
    true
}

impl LinkConfig {
    /// A link of `rate_bps` and one-way `delay` with the defaults described on [`LinkConfig`].
    pub fn new(rate_bps: u64, delay: Duration) -> LinkConfig {
        LinkConfig {
            rate_bps,
            delay,
            jitter: JitterConfig::NONE,
            loss: LossModel::None,
            queue: QueueLimit::default(),
            impairments: Impairments::NONE,
            up: true,
            mtu: None,
        }
    }

    /// This configuration with the given MTU (see [`LinkConfig::mtu`]).
    pub fn with_mtu(mut self, mtu: Option<u32>) -> LinkConfig {
        self.mtu = mtu;
        self
    }

    /// This configuration with the given queue limit.
    pub fn with_queue(mut self, queue: QueueLimit) -> LinkConfig {
        self.queue = queue;
        self
    }

    /// This configuration with the given loss model.
    pub fn with_loss(mut self, loss: LossModel) -> LinkConfig {
        self.loss = loss;
        self
    }

    /// This configuration with the given jitter.
    pub fn with_jitter(mut self, jitter: JitterConfig) -> LinkConfig {
        self.jitter = jitter;
        self
    }

    /// This configuration with the given impairments.
    pub fn with_impairments(mut self, impairments: Impairments) -> LinkConfig {
        self.impairments = impairments;
        self
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=limits::MAX_RATE_BPS).contains(&self.rate_bps) {
            return Err(ConfigError::new(
                "rate_bps",
                self.rate_bps,
                "a rate in bits per second from 1 to 10^12 (1 Tbit/s)",
            ));
        }
        if self.delay > limits::MAX_DELAY {
            return Err(ConfigError::new(
                "delay",
                crate::units::format_duration(self.delay),
                "a one-way delay from 0 to 1 hour (3600s)",
            ));
        }
        check_mtu(self.mtu)?;
        self.jitter.validate()?;
        self.loss.validate()?;
        self.queue.validate(self.delay)?;
        self.impairments.validate()
    }
}

/// Checks an MTU against [`limits::MIN_MTU`]..=[`limits::MAX_MTU`].
fn check_mtu(mtu: Option<u32>) -> Result<(), ConfigError> {
    match mtu {
        Some(m) if !(limits::MIN_MTU..=limits::MAX_MTU).contains(&m) => Err(ConfigError::new(
            "mtu",
            m,
            "a packet size in bytes from 68 (IPv4's minimum MTU) to 65535 (the largest IPv4 packet)",
        )),
        _ => Ok(()),
    }
}

/// Why a link dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The drop-tail queue was full.
    QueueFull,
    /// The loss model lost it on the wire.
    Loss,
    /// The link was down.
    Down,
    /// The packet was larger than the link's MTU.
    TooLarge,
}

/// When and how a packet that was not dropped reaches the far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// When its last bit left the sender (end of serialisation).
    pub departure: SimTime,
    /// When it arrives at the far end.
    pub at: SimTime,
    /// When a duplicate copy arrives, if the packet was duplicated.
    pub duplicate_at: Option<SimTime>,
    /// Whether one bit of the payload was flipped (in the caller's buffer, before any duplicate is copied).
    pub corrupted: bool,
    /// The link's outage epoch when the packet was accepted (see [`Link::outage_since`]).
    pub epoch: OutageEpoch,
}

/// The outcome of offering a packet to a link.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// The packet is gone.
    Dropped {
        /// Why.
        reason: DropReason,
    },
    /// The packet will arrive.
    Deliver(Arrival),
}

impl Delivery {
    /// The arrival, if the packet was not dropped.
    pub fn arrival(&self) -> Option<&Arrival> {
        match self {
            Delivery::Deliver(a) => Some(a),
            Delivery::Dropped { .. } => None,
        }
    }

    /// The drop reason, if the packet was dropped.
    pub fn drop_reason(&self) -> Option<DropReason> {
        match self {
            Delivery::Dropped { reason } => Some(*reason),
            Delivery::Deliver(_) => None,
        }
    }
}

/// Random stream numbers, one per stage (fixed: changing them changes every seeded result).
const STREAM_LOSS: u64 = 1;
const STREAM_JITTER: u64 = 2;
const STREAM_IMPAIR: u64 = 3;

fn stream(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

/// One direction of a link (see the module documentation).
#[derive(Clone, Debug)]
pub struct Link {
    serialiser: Serialiser,
    queue: Queue,
    queue_limit: QueueLimit,
    /// `queue_limit` resolved for the current rate and delay.
    resolved_limit: ResolvedLimit,
    delay: DelayLine,
    loss: LossProcess,
    impair: Impairer,
    state: LinkState,
    /// The largest packet carried ([`LinkConfig::mtu`]).
    mtu: Option<u32>,
    stats: LinkStats,
    /// Latest time seen.
    now: SimTime,
}

impl Link {
    /// A link with the given configuration, its random streams seeded with `seed`.
    ///
    /// The seed is not part of [`LinkConfig`] so that one configuration can serve several links: a scenario
    /// derives one seed per link from its own.
    pub fn new(config: LinkConfig, seed: u64) -> Result<Link, ConfigError> {
        config.validate()?;
        let resolved_limit = config.queue.resolve(config.rate_bps, config.delay);
        Ok(Link {
            serialiser: Serialiser::new(config.rate_bps),
            queue: Queue::default(),
            queue_limit: config.queue,
            resolved_limit,
            delay: DelayLine::new(config.delay, config.jitter, stream(seed, STREAM_JITTER)),
            loss: LossProcess::new(config.loss, stream(seed, STREAM_LOSS)),
            impair: Impairer::new(config.impairments, stream(seed, STREAM_IMPAIR)),
            state: LinkState::new(config.up),
            mtu: config.mtu,
            stats: LinkStats::default(),
            now: SimTime::ZERO,
        })
    }

    /// Offers a packet of `wire_len` bytes at `now`, whose payload is `payload` (which may be shorter than
    /// `wire_len`, e.g. without IP/UDP headers, or empty). Corruption flips a bit of `payload` in place.
    pub fn enqueue(&mut self, now: SimTime, wire_len: usize, payload: &mut [u8]) -> Delivery {
        let now = self.advance(now);
        let len = u64::try_from(wire_len).unwrap_or(u64::MAX);
        self.stats.offered.add(len);
        if !self.state.is_up() {
            self.stats.dropped_down.add(len);
            return Delivery::Dropped {
                reason: DropReason::Down,
            };
        }
        if self.mtu.is_some_and(|m| len > u64::from(m)) {
            self.stats.dropped_too_large.add(len);
            return Delivery::Dropped {
                reason: DropReason::TooLarge,
            };
        }
        let backlog = self.queue.backlog(now);
        if !Queue::admits(backlog, len, self.resolved_limit) {
            self.stats.dropped_queue_full.add(len);
            return Delivery::Dropped {
                reason: DropReason::QueueFull,
            };
        }
        let (start, departure) = self.serialiser.transmit(now, len);
        self.queue.push(start, departure, len);
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(backlog.bytes.saturating_add(len));
        self.stats.max_queue_packets = self
            .stats
            .max_queue_packets
            .max(backlog.packets.saturating_add(1));
        if self.loss.lose() {
            self.stats.dropped_loss.add(len);
            return Delivery::Dropped {
                reason: DropReason::Loss,
            };
        }
        let at = self.delay.arrival(departure);
        let corrupted = self.impair.corrupt(payload);
        let duplicate_at = if self.impair.duplicate() {
            Some(self.delay.arrival(departure))
        } else {
            None
        };
        self.stats.delivered.add(len);
        if corrupted {
            self.stats.corrupted.add(len);
        }
        if duplicate_at.is_some() {
            self.stats.duplicated.add(len);
        }
        Delivery::Deliver(Arrival {
            departure,
            at,
            duplicate_at,
            corrupted,
            epoch: self.state.epoch(),
        })
    }

    /// [`Link::enqueue`] for a packet without a payload buffer (it can never be reported corrupted).
    pub fn enqueue_len(&mut self, now: SimTime, wire_len: usize) -> Delivery {
        self.enqueue(now, wire_len, &mut [])
    }

    /// The backlog (bytes not yet serialised, packets not yet fully serialised) at `now`.
    pub fn backlog(&mut self, now: SimTime) -> Backlog {
        let now = self.advance(now);
        self.queue.backlog(now)
    }

    /// The current settings, as a configuration.
    pub fn config(&self) -> LinkConfig {
        LinkConfig {
            rate_bps: self.serialiser.rate_bps(),
            delay: self.delay.delay(),
            jitter: self.delay.jitter().clone(),
            loss: self.loss.model().clone(),
            queue: self.queue_limit.clone(),
            impairments: self.impair.config().clone(),
            up: self.state.is_up(),
            mtu: self.mtu,
        }
    }

    /// The queue limit in force (a BDP limit resolved for the current rate and delay).
    pub fn queue_limit(&self) -> ResolvedLimit {
        self.resolved_limit
    }

    /// Whether the link is up.
    pub fn is_up(&self) -> bool {
        self.state.is_up()
    }

    /// The current outage epoch.
    pub fn epoch(&self) -> OutageEpoch {
        self.state.epoch()
    }

    /// Whether the link has gone down since a packet accepted in `epoch` (e.g. [`Arrival::epoch`]) was
    /// accepted. A caller that processes its events in time order and wants outages to destroy packets queued
    /// or in flight drops an arrival when this is `true` at its arrival time.
    pub fn outage_since(&self, epoch: OutageEpoch) -> bool {
        self.state.epoch() != epoch
    }

    /// Counters since creation.
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// Changes the rate for packets offered from `now` on (a BDP queue limit follows the new rate).
    pub fn set_rate(&mut self, now: SimTime, rate_bps: u64) -> Result<(), ConfigError> {
        self.advance(now);
        let mut config = self.config();
        config.rate_bps = rate_bps;
        config.validate()?;
        self.serialiser.set_rate(rate_bps);
        self.resolve_limit();
        Ok(())
    }

    /// Changes the one-way propagation delay for packets offered from `now` on.
    pub fn set_delay(&mut self, now: SimTime, delay: Duration) -> Result<(), ConfigError> {
        self.advance(now);
        let mut config = self.config();
        config.delay = delay;
        config.validate()?;
        self.delay.set_delay(delay);
        self.resolve_limit();
        Ok(())
    }

    /// Changes the jitter for packets offered from `now` on.
    pub fn set_jitter(&mut self, now: SimTime, jitter: JitterConfig) -> Result<(), ConfigError> {
        self.advance(now);
        jitter.validate()?;
        self.delay.set_jitter(jitter);
        Ok(())
    }

    /// Changes the loss model for packets offered from `now` on (a Gilbert–Elliott chain restarts in Good).
    pub fn set_loss(&mut self, now: SimTime, loss: LossModel) -> Result<(), ConfigError> {
        self.advance(now);
        loss.validate()?;
        self.loss.set_model(loss);
        Ok(())
    }

    /// Changes the queue limit for packets offered from `now` on (packets already queued stay).
    pub fn set_queue_limit(&mut self, now: SimTime, queue: QueueLimit) -> Result<(), ConfigError> {
        self.advance(now);
        queue.validate(self.delay.delay())?;
        self.queue_limit = queue;
        self.resolve_limit();
        Ok(())
    }

    /// Changes corruption and duplication for packets offered from `now` on.
    pub fn set_impairments(&mut self, now: SimTime, impairments: Impairments) -> Result<(), ConfigError> {
        self.advance(now);
        impairments.validate()?;
        self.impair.set_config(impairments);
        Ok(())
    }

    /// Changes the MTU from `now` on (packets already accepted are not recalled).
    pub fn set_mtu(&mut self, now: SimTime, mtu: Option<u32>) -> Result<(), ConfigError> {
        check_mtu(mtu)?;
        self.advance(now);
        self.mtu = mtu;
        Ok(())
    }

    /// Brings the link up or down at `now` (see [`state`]).
    pub fn set_up(&mut self, now: SimTime, up: bool) {
        self.advance(now);
        self.state.set_up(up);
    }

    fn resolve_limit(&mut self) {
        self.resolved_limit = self
            .queue_limit
            .resolve(self.serialiser.rate_bps(), self.delay.delay());
    }

    /// Moves the link's clock to `now` (never backwards) and returns the time to use.
    fn advance(&mut self, now: SimTime) -> SimTime {
        self.now = self.now.max(now);
        self.now
    }
}
