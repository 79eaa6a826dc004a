//! Sender-side loss recovery (RFC 9002), one [`PathRecovery`] per path (draft-ietf-quic-multipath-21).
//!
//! # What a `PathRecovery` owns
//! Multipath QUIC gives every path ID its own Application-data packet-number space and its own RTT and
//! congestion state (draft-ietf-quic-multipath-21: "one [packet number space] per path ID ... RFC 9002 recovery
//! and congestion state per path"). So a [`PathRecovery`] owns, for one path:
//! * the sent-packet map of its Application-data space ([`SentPackets`]), and on path 0 the Initial and
//!   Handshake spaces too (they exist once, on the handshake path, and are discarded with their keys);
//! * its RTT estimator ([`RttEstimator`]), PTO backoff, loss timer and bytes in flight;
//! * its pacer ([`Pacer`]) and its delivery-rate estimator ([`DeliveryRateEstimator`]), with what the scheduler
//!   reads of them: the current delivery rate and whether the controller is in slow start.
//!
//! It does **not** own the congestion controller: that is one object per connection
//! ([`CongestionController`]), because coupled algorithms see every path at once. Each method that changes
//! what is in flight takes `&mut dyn CongestionController` and emits the controller's events itself, tagged
//! with this path's [`PathId`]: [`SentEvent`] for every in-flight packet sent, one [`AckEvent`] per ACK frame
//! that newly acknowledged in-flight packets, one [`CongestionEvent`] per loss-detection pass that declared
//! in-flight packets lost (for the newest of them, with the persistent-congestion verdict) and one per ECN-CE
//! count increase. Adding and removing the path in the controller is the connection's job
//! ([`CongestionController::on_path_added`] / [`CongestionController::on_path_removed`]).
//!
//! # Frame records
//! The connection decides what a sent packet carried: `T` is its record type (a list of frame descriptions, a
//! retransmission token…). Every record given to [`PathRecovery::on_packet_sent`] comes back exactly once:
//! acknowledged ([`AckOutcome::acked`]), lost ([`AckOutcome::lost`], [`TimeoutOutcome::Lost`],
//! [`PathRecovery::abandon`]) or discarded with its keys ([`PathRecovery::discard_space`]). Lost records are
//! the connection's to reschedule, on this path or any other.
//!
//! A packet declared lost and acknowledged later (a spurious loss) has already handed its record back as lost:
//! the late ACK reports only its packet number in [`AckOutcome::spurious_losses`] and is ignored by the
//! congestion controller (its window reduction already happened; its bytes already left the flight).
//!
//! # Calling contract
//! * Read [`PathRecovery::next_packet_number`] to build a packet's header, then record the packet with
//!   [`PathRecovery::on_packet_sent`] (which uses that number). [`PathRecovery::skip_packet_number`] leaves a
//!   number unused; an ACK for it is a PROTOCOL_VIOLATION.
//! * Feed every ACK / PATH_ACK frame for this path's spaces to [`PathRecovery::on_ack_frame`] (or
//!   [`PathRecovery::on_ack_ranges`]).
//! * Arm one timer at [`PathRecovery::loss_detection_timer`] and call [`PathRecovery::on_timeout`] when it
//!   fires; send the probes it asks for ([`PathRecovery::pending_probes`] says how many remain; probes may
//!   exceed the congestion window).
//! * Before sending an in-flight packet, respect the window and [`PathRecovery::next_send_time`] (pacing).
//!
//! # Choices where the RFCs leave room
//! * The ACK delay is ignored for Initial packets (RFC 9002 §5.3 MAY) and for nothing else.
//! * Persistent congestion looks at the acknowledged space only (RFC 9002 §7.6.2 MAY).
//! * The `app_limited` flag of an [`AckEvent`] is that of the newest acknowledged in-flight packet at the time
//!   it was sent, or set if the path's window is under-utilised (less than half of it in flight over the
//!   last two round trips, see `window_use.rs`): RFC 9002 §7.8 leaves the test of under-utilisation open.
//! * The ECN-CE congestion event uses the send time of the largest newly acknowledged packet (RFC 9002
//!   Appendix A.7 uses the largest acknowledged, which is the same packet whenever it is newly acknowledged).

mod episodes;
pub mod loss;
pub mod pacer;
pub mod rtt;
pub mod sent;
mod window_use;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use std::ops::RangeInclusive;
use std::time::{Duration, Instant};

use episodes::CongestionEpisodes;
pub use loss::{DetectedLoss, LostInfo, PACKET_THRESHOLD, PERSISTENT_CONGESTION_THRESHOLD};
pub use pacer::{
    DEFAULT_BURST_INTERVAL, DEFAULT_BURST_PACKETS, DEFAULT_MAX_BURST_PACKETS, MAX_BURST_WINDOW_DIVISOR,
    MAX_MAX_BURST_PACKETS, Pacer, PacerConfigError,
};
pub use rtt::{GRANULARITY, INITIAL_RTT, RttEstimator};
pub use sent::{AckedSlot, LostTombstone, SentPacket, SentPackets, TombstoneCursor};
use window_use::WindowUse;

use crate::cc::{
    AckEvent, AckedPacket, CongestionController, CongestionEvent, DeliveryRateEstimator, PathId, SentEvent,
};
use crate::proto::error::TransportError;
use crate::proto::frame::FrameType;
use crate::proto::frame::ack::{Ack, EcnCounts};

/// RFC 9000 §18.2, `max_ack_delay`: "If this value is absent, a default of 25 milliseconds is assumed."
pub const DEFAULT_MAX_ACK_DELAY: Duration = Duration::from_millis(25);

/// PTO probes sent when the probe timer fires (RFC 9002 §6.2.4: "An endpoint MAY send up to two full-sized
/// datagrams containing ack-eliciting packets").
pub const PTO_PROBES: u8 = 2;

/// A packet-number space (RFC 9000 §12.3). Initial and Handshake exist on path 0 only; every path has its own
/// Application-data space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpaceId {
    /// Initial packets.
    Initial = 0,
    /// Handshake packets.
    Handshake = 1,
    /// 0-RTT and 1-RTT packets.
    Data = 2,
}

impl SpaceId {
    /// All spaces, in the order RFC 9002 Appendix A scans them.
    pub const ALL: [SpaceId; 3] = [SpaceId::Initial, SpaceId::Handshake, SpaceId::Data];
}

/// Tunables of a path's recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoveryConfig {
    /// RTT assumed before the first sample (RFC 9002 §6.2.2, `kInitialRtt`, 333 ms by default).
    pub initial_rtt: Duration,
    /// Maximum datagram size of the path, for the pacer's burst.
    pub max_datagram_size: u16,
    /// Pacer burst in packets (RFC 9002 §7.7: the initial window's 10 by default).
    pub pacer_burst_packets: u32,
    /// The pacer's bucket holds at least what the pacing rate produces in this time (1 ms by default; zero:
    /// bursts of `pacer_burst_packets` only). See [`Pacer`] for why.
    pub pacer_burst_interval: Duration,
    /// Cap on what `pacer_burst_interval` adds to the bucket at high rates, in packets of the maximum
    /// datagram size, from the path's first congestion event on: the bucket then holds at most
    /// `max(pacer_max_burst_packets · max_datagram_size, cwnd / 16)` (never less than `pacer_burst_packets`).
    /// Default [`DEFAULT_MAX_BURST_PACKETS`]: 0, no cap (the bucket holds `rate · pacer_burst_interval`);
    /// otherwise 1 to [`MAX_MAX_BURST_PACKETS`], checked when a connection is created. See
    /// `docs/pacing.md` for why and what it costs.
    pub pacer_max_burst_packets: u32,
    /// Packet reordering threshold (RFC 9002 `kPacketThreshold`; values below 3 are raised to 3).
    pub packet_threshold: u64,
    /// The peer's `max_ack_delay` until its transport parameters say otherwise.
    pub max_ack_delay: Duration,
    /// How long tombstones of lost packets are kept to recognise spurious losses, in PTO periods.
    pub lost_retention_ptos: u32,
}

impl Default for RecoveryConfig {
    fn default() -> Self {
        RecoveryConfig {
            initial_rtt: INITIAL_RTT,
            max_datagram_size: 1200,
            pacer_burst_packets: DEFAULT_BURST_PACKETS,
            pacer_burst_interval: DEFAULT_BURST_INTERVAL,
            pacer_max_burst_packets: DEFAULT_MAX_BURST_PACKETS,
            packet_threshold: PACKET_THRESHOLD,
            max_ack_delay: DEFAULT_MAX_ACK_DELAY,
            lost_retention_ptos: 3,
        }
    }
}

impl RecoveryConfig {
    /// Checks the ranges of the settings that have one.
    pub fn validate(&self) -> Result<(), PacerConfigError> {
        if self.pacer_max_burst_packets > MAX_MAX_BURST_PACKETS {
            return Err(PacerConfigError::MaxBurstPackets(self.pacer_max_burst_packets));
        }
        Ok(())
    }
}

/// A packet about to be recorded as sent.
#[derive(Clone, Debug)]
pub struct OutgoingPacket<T> {
    /// Size of the QUIC packet in bytes.
    pub size: u16,
    /// It carries a frame other than ACK, PADDING and CONNECTION_CLOSE.
    pub ack_eliciting: bool,
    /// It counts in bytes in flight: ack-eliciting or padded (forced on for ack-eliciting packets).
    pub in_flight: bool,
    /// The sender is application- or flow-control-limited: it had no more data the window would have
    /// allowed (RFC 9002 §7.8).
    pub app_limited: bool,
    /// The connection's record of what the packet carries.
    pub frames: T,
}

/// A packet handed back to the connection: acknowledged, lost or discarded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketRecord<T> {
    /// Packet number.
    pub pn: u64,
    /// Send time.
    pub time_sent: Instant,
    /// Size in bytes.
    pub size: u16,
    /// Whether it was ack-eliciting.
    pub ack_eliciting: bool,
    /// Whether it counted in bytes in flight.
    pub in_flight: bool,
    /// The connection's record.
    pub frames: T,
}

impl<T> PacketRecord<T> {
    fn new(pn: u64, p: SentPacket<T>) -> Self {
        PacketRecord {
            pn,
            time_sent: p.time_sent,
            size: p.size,
            ack_eliciting: p.ack_eliciting,
            in_flight: p.in_flight,
            frames: p.frames,
        }
    }
}

/// What one ACK frame did.
#[derive(Debug)]
pub struct AckOutcome<T> {
    /// Newly acknowledged packets, in packet-number order.
    pub acked: Vec<PacketRecord<T>>,
    /// Packets declared lost by the loss detection this ACK triggered, in packet-number order.
    pub lost: Vec<PacketRecord<T>>,
    /// Packets declared lost earlier and acknowledged now (their records were already returned as lost).
    pub spurious_losses: Vec<u64>,
    /// The ACK produced an RTT sample.
    pub rtt_sample: bool,
    /// The losses establish persistent congestion (RFC 9002 §7.6).
    pub persistent_congestion: bool,
    /// The peer's ECN-CE count increased (RFC 9002 §7.1).
    pub ecn_ce_increased: bool,
}

impl<T> Default for AckOutcome<T> {
    fn default() -> Self {
        AckOutcome {
            acked: Vec::new(),
            lost: Vec::new(),
            spurious_losses: Vec::new(),
            rtt_sample: false,
            persistent_congestion: false,
            ecn_ce_increased: false,
        }
    }
}

/// An acknowledgement, as [`PathRecovery::on_ack_ranges`] takes it.
#[derive(Clone, Debug)]
pub struct AckInput<I> {
    /// Acknowledged packet numbers as inclusive ranges, **largest first**, disjoint (as [`Ack::iter`] yields
    /// them). Ranges that are not below the previous one are clamped below it.
    pub ranges: I,
    /// The decoded ACK Delay (RFC 9000 §19.3: field · 2^ack_delay_exponent µs).
    pub ack_delay: Duration,
    /// The ECN counts of an ACK_ECN / PATH_ACK_ECN frame.
    pub ecn: Option<EcnCounts>,
    /// The frame type, for errors.
    pub frame_type: FrameType,
}

/// What [`PathRecovery::on_timeout`] asks the connection to do.
#[derive(Debug)]
pub enum TimeoutOutcome<T> {
    /// The timer was not due (or not armed): nothing happened.
    NotDue,
    /// The loss timer fired: these packets of `space` are lost (in packet-number order).
    Lost {
        /// The space whose loss timer fired.
        space: SpaceId,
        /// The lost packets.
        lost: Vec<PacketRecord<T>>,
        /// They establish persistent congestion.
        persistent_congestion: bool,
    },
    /// The probe timer fired: send `probes` ack-eliciting packets in `space` (new data, or data still in
    /// flight; RFC 9002 §6.2.4), even beyond the congestion window.
    Probe {
        /// The space to probe.
        space: SpaceId,
        /// How many packets.
        probes: u8,
    },
    /// RFC 9002 §6.2.2.1 anti-deadlock probe (a client whose address the server has not validated, with
    /// nothing in flight): send one ack-eliciting Handshake packet if Handshake keys are available, else one
    /// padded Initial packet.
    AntiDeadlock,
}

/// One packet-number space's recovery state.
#[derive(Debug)]
struct PacketSpace<T> {
    sent: SentPackets<T>,
    largest_acked: Option<u64>,
    loss_time: Option<Instant>,
    time_of_last_ack_eliciting: Option<Instant>,
    ecn_ce: u64,
    pending_probes: u8,
}

impl<T> PacketSpace<T> {
    fn new() -> Self {
        PacketSpace {
            sent: SentPackets::new(),
            largest_acked: None,
            loss_time: None,
            time_of_last_ack_eliciting: None,
            ecn_ce: 0,
            pending_probes: 0,
        }
    }
}

type Spaces<T> = [Option<PacketSpace<T>>; 3];

fn space_mut<T>(spaces: &mut Spaces<T>, id: SpaceId) -> Option<&mut PacketSpace<T>> {
    spaces.get_mut(id as usize).and_then(Option::as_mut)
}

fn space_ref<T>(spaces: &Spaces<T>, id: SpaceId) -> Option<&PacketSpace<T>> {
    spaces.get(id as usize).and_then(Option::as_ref)
}

/// Loss recovery of one path: its packet-number space(s), RTT, loss and probe timers, pacing and delivery rate.
#[derive(Debug)]
pub struct PathRecovery<T> {
    path: PathId,
    config: RecoveryConfig,
    rtt: RttEstimator,
    pacer: Pacer,
    delivery: DeliveryRateEstimator,
    /// The path's delivery rate for schedulers (see [`PathRecovery::delivery_rate`]).
    delivery_rate: Option<u64>,
    /// The controller's state after its latest event (see [`PathRecovery::in_slow_start`]).
    slow_start: bool,
    bytes_in_flight: u64,
    window_use: WindowUse,
    pto_count: u32,
    spaces: Spaces<T>,
    max_ack_delay: Duration,
    handshake_confirmed: bool,
    peer_completed_address_validation: bool,
    amplification_limited: bool,
    timer: Option<Instant>,
    /// The Application-data packet number of the latest path-MTU probe ([`PathRecovery::set_mtu_probe`]).
    mtu_probe: Option<u64>,
    /// Reused by every ACK (empty between calls), so that an ACK allocates only the records it returns.
    scratch_newly: Vec<(u64, SentPacket<T>)>,
    /// Reused by every ACK: the controller's view of the newly acknowledged packets.
    scratch_acked: Vec<AckedPacket>,
    /// An empty vector handed back by [`PathRecovery::recycle_acked`]: the next ACK returns its records in
    /// it instead of allocating one.
    spare_acked: Vec<PacketRecord<T>>,
    /// Congestion events that began a recovery period ([`PathRecovery::congestion_events`]).
    episodes: CongestionEpisodes,
}

impl<T> PathRecovery<T> {
    /// Recovery for a path opened after the handshake (multipath path IDs ≥ 1, or path 0 rebuilt): an
    /// Application-data space only, handshake confirmed, peer address validated.
    pub fn new(path: PathId, config: RecoveryConfig) -> Self {
        let mut r = Self::build(path, config);
        r.handshake_confirmed = true;
        r.peer_completed_address_validation = true;
        r
    }

    /// Recovery for path 0 at connection start: Initial, Handshake and Application-data spaces, handshake not
    /// confirmed. A server has completed the peer's address validation by definition (RFC 9002 Appendix A.6:
    /// "Assume clients validate the server's address implicitly"); a client learns it from a Handshake ACK or
    /// handshake confirmation.
    pub fn new_handshake_path(config: RecoveryConfig, is_server: bool) -> Self {
        let mut r = Self::build(PathId(0), config);
        r.spaces = [
            Some(PacketSpace::new()),
            Some(PacketSpace::new()),
            Some(PacketSpace::new()),
        ];
        r.peer_completed_address_validation = is_server;
        r
    }

    fn build(path: PathId, mut config: RecoveryConfig) -> Self {
        config.packet_threshold = config.packet_threshold.max(PACKET_THRESHOLD);
        PathRecovery {
            path,
            config,
            rtt: RttEstimator::new(config.initial_rtt),
            pacer: Pacer::new(
                config.max_datagram_size,
                config.pacer_burst_packets,
                config.pacer_burst_interval,
            )
            .with_max_burst(config.max_datagram_size, config.pacer_max_burst_packets),
            delivery: DeliveryRateEstimator::new(),
            delivery_rate: None,
            slow_start: true,
            bytes_in_flight: 0,
            window_use: WindowUse::default(),
            pto_count: 0,
            spaces: [None, None, Some(PacketSpace::new())],
            max_ack_delay: config.max_ack_delay,
            handshake_confirmed: false,
            peer_completed_address_validation: false,
            amplification_limited: false,
            timer: None,
            mtu_probe: None,
            scratch_newly: Vec::new(),
            scratch_acked: Vec::new(),
            spare_acked: Vec::new(),
            episodes: CongestionEpisodes::default(),
        }
    }

    /// Congestion events on this path that began a new recovery period (RFC 9002 §7.3.2: losses or ECN-CE
    /// marks of packets sent before the current period began do not start another), counted by this rule
    /// whatever the controller does with them: the path's loss events, as congestion-control studies count
    /// them (a burst lost in one round trip is one).
    pub fn congestion_events(&self) -> u64 {
        self.episodes.count()
    }

    /// The path this recovery belongs to.
    pub fn path(&self) -> PathId {
        self.path
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Forgets the RTT estimate (RFC 9000 §9.4, a validated 4-tuple change on this path).
    pub fn reset_rtt(&mut self) {
        self.rtt.reset();
    }

    /// The delivery-rate estimator.
    pub fn delivery(&self) -> &DeliveryRateEstimator {
        &self.delivery
    }

    /// The path's current delivery rate in bytes per second, `None` before the first rate sample: the latest
    /// sample of the estimator (draft-cheng-iccrg-delivery-rate-estimation), except that an application-limited
    /// sample lower than the current value is ignored, since it measures the application rather than the
    /// path (the draft's rule for bandwidth estimates: such a sample only counts if it exceeds the estimate).
    pub fn delivery_rate(&self) -> Option<u64> {
        self.delivery_rate
    }

    /// Whether the path's congestion controller is in slow start (or BBR's Startup, its counterpart) as of its
    /// latest acknowledgement or congestion event; a new path starts in it. Read from the controller's
    /// [`CongestionController::state`] after each event, so the per-packet cost is a load.
    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    /// Reads the controller's state after an event it was given.
    fn refresh_cc_state(&mut self, cc: &dyn CongestionController) {
        if let Some(state) = cc.state(self.path) {
            self.slow_start = matches!(state, "slow_start" | "startup");
        }
    }

    /// The pacer.
    pub fn pacer(&self) -> &Pacer {
        &self.pacer
    }

    /// Bytes of in-flight packets sent on this path and neither acknowledged, lost nor discarded.
    pub fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }

    /// Consecutive PTO expirations (the backoff exponent).
    pub fn pto_count(&self) -> u32 {
        self.pto_count
    }

    /// Whether `space` exists (Initial and Handshake only on the handshake path, until discarded).
    pub fn has_space(&self, space: SpaceId) -> bool {
        space_ref(&self.spaces, space).is_some()
    }

    /// The packet number the next packet of `space` will carry (`None` if the space does not exist).
    pub fn next_packet_number(&self, space: SpaceId) -> Option<u64> {
        space_ref(&self.spaces, space).map(|s| s.sent.next_pn())
    }

    /// Leaves the next packet number of `space` unused (RFC 9000 §21.4 optimistic-ACK defence) and returns it.
    pub fn skip_packet_number(&mut self, space: SpaceId) -> Option<u64> {
        space_mut(&mut self.spaces, space).map(|s| s.sent.skip())
    }

    /// Outstanding (unacknowledged, not lost) packets of `space`.
    pub fn outstanding(&self, space: SpaceId) -> usize {
        space_ref(&self.spaces, space).map_or(0, |s| s.sent.outstanding())
    }

    /// The largest packet number the peer acknowledged in `space`.
    pub fn largest_acked(&self, space: SpaceId) -> Option<u64> {
        space_ref(&self.spaces, space).and_then(|s| s.largest_acked)
    }

    /// PTO probes still to send in `space` (they may exceed the congestion window).
    pub fn pending_probes(&self, space: SpaceId) -> u8 {
        space_ref(&self.spaces, space).map_or(0, |s| s.pending_probes)
    }

    fn ack_eliciting_in_flight(&self) -> bool {
        self.spaces
            .iter()
            .flatten()
            .any(|s| s.sent.ack_eliciting_outstanding() > 0)
    }

    /// The peer's `max_ack_delay` used for Application-data PTO and persistent congestion.
    pub fn max_ack_delay(&self) -> Duration {
        self.max_ack_delay
    }

    /// Adopts the peer's `max_ack_delay` transport parameter.
    pub fn set_max_ack_delay(&mut self, now: Instant, max_ack_delay: Duration) {
        self.max_ack_delay = max_ack_delay;
        self.set_loss_detection_timer(now);
    }

    /// The handshake is confirmed (RFC 9001 §4.1.2): the Application-data PTO may be armed, `max_ack_delay`
    /// caps the ACK delay, and the peer has validated our address.
    pub fn on_handshake_confirmed(&mut self, now: Instant) {
        self.handshake_confirmed = true;
        self.peer_completed_address_validation = true;
        self.set_loss_detection_timer(now);
    }

    /// The server is (or no longer is) blocked by the anti-amplification limit: RFC 9002 §6.2.2.1, "If no
    /// additional data can be sent, the server's PTO timer MUST NOT be armed until datagrams have been received
    /// from the client".
    pub fn set_amplification_limited(&mut self, now: Instant, limited: bool) {
        self.amplification_limited = limited;
        self.set_loss_detection_timer(now);
    }

    /// The path's maximum datagram size changed: resizes the pacer's burst.
    pub fn set_max_datagram_size(&mut self, max_datagram_size: u16) {
        self.config.max_datagram_size = max_datagram_size;
        self.pacer
            .set_burst(max_datagram_size, self.config.pacer_burst_packets);
    }

    /// The Application-data packet `pn` just sent is a path-MTU probe (RFC 9000 §14.4: "Loss of a QUIC packet
    /// that is carried in a PMTU probe is therefore not a reliable indication of congestion and SHOULD NOT
    /// trigger a congestion control reaction"). Its loss leaves the flight like any other, but it is kept out
    /// of the congestion event and of the persistent-congestion verdict. It is counted in flight while
    /// outstanding (the connection sends a probe only when the window has room for it).
    pub fn set_mtu_probe(&mut self, pn: u64) {
        self.mtu_probe = Some(pn);
    }

    /// The PTO period of `space` without backoff: `smoothed_rtt + max(4·rttvar, kGranularity)`, plus
    /// `max_ack_delay` for Application data (RFC 9002 §6.2.1). Also the unit of the "3 × PTO" waits of RFC 9000
    /// §10.2 and of the multipath draft.
    pub fn pto(&self, space: SpaceId) -> Duration {
        loss::pto_period(&self.rtt, self.space_max_ack_delay(space), 0)
    }

    /// The PTO period of `space` with the current backoff `2^pto_count`.
    pub fn pto_with_backoff(&self, space: SpaceId) -> Duration {
        loss::pto_period(&self.rtt, self.space_max_ack_delay(space), self.pto_count)
    }

    fn space_max_ack_delay(&self, space: SpaceId) -> Duration {
        // RFC 9002 §6.2.1: "When the PTO is armed for Initial or Handshake packet number spaces, the
        // max_ack_delay in the PTO period computation is set to 0".
        match space {
            SpaceId::Data => self.max_ack_delay,
            SpaceId::Initial | SpaceId::Handshake => Duration::ZERO,
        }
    }

    /// The payloads (frame records) of the packets of `space` still outstanding, oldest first: what a PTO
    /// probe may repeat (RFC 9002 §6.2.4).
    pub fn outstanding_frames(&self, space: SpaceId) -> impl Iterator<Item = &T> {
        space_ref(&self.spaces, space)
            .into_iter()
            .flat_map(|sp| sp.sent.outstanding_packets().map(|p| &p.frames))
    }

    /// The packets of `space` still outstanding, oldest first, as (send time, frame records).
    pub fn outstanding_sent(&self, space: SpaceId) -> impl Iterator<Item = (Instant, &T)> {
        space_ref(&self.spaces, space)
            .into_iter()
            .flat_map(|sp| sp.sent.outstanding_packets().map(|p| (p.time_sent, &p.frames)))
    }

    /// When the next packet of `size` bytes may leave under pacing (`None`: now). The controller's pacing
    /// rate drives the pacer; without a rate, the path is window-limited only.
    pub fn next_send_time(&self, now: Instant, size: u64, cc: &dyn CongestionController) -> Option<Instant> {
        self.pacer
            .next_send_time(now, size, cc.pacing_rate(self.path), cc.window(self.path))
    }

    /// Records a packet sent at `now` in `space` under [`Self::next_packet_number`], and returns that number
    /// (`None`, dropping the record, if the space does not exist).
    ///
    /// In-flight packets add to bytes in flight, consume pacing tokens, snapshot the delivery-rate state and
    /// are reported to `cc` ([`SentEvent`] with bytes in flight after the send). Ack-eliciting packets restart
    /// the PTO (RFC 9002 §6.2.1: "A sender SHOULD restart its PTO timer every time an ack-eliciting packet is
    /// sent") and count against pending probes.
    pub fn on_packet_sent(
        &mut self,
        now: Instant,
        space: SpaceId,
        packet: OutgoingPacket<T>,
        cc: &mut dyn CongestionController,
    ) -> Option<u64> {
        let sp = space_mut(&mut self.spaces, space)?;
        // RFC 9002 §2: "Packets are considered in flight when they are ack-eliciting or contain a PADDING
        // frame".
        let in_flight = packet.in_flight || packet.ack_eliciting;
        let size = u64::from(packet.size);
        let delivery = in_flight.then(|| {
            if packet.app_limited {
                self.delivery
                    .on_app_limited(self.bytes_in_flight.saturating_add(size));
            }
            self.delivery.on_packet_sent(now, self.bytes_in_flight)
        });
        let pn = sp.sent.push(SentPacket {
            time_sent: now,
            size: packet.size,
            ack_eliciting: packet.ack_eliciting,
            in_flight,
            app_limited: packet.app_limited,
            delivery,
            frames: packet.frames,
        });
        if packet.ack_eliciting {
            sp.time_of_last_ack_eliciting = Some(now);
            sp.pending_probes = sp.pending_probes.saturating_sub(1);
        }
        if in_flight {
            self.bytes_in_flight = self.bytes_in_flight.saturating_add(size);
            self.window_use.on_sent(now, self.bytes_in_flight);
            self.pacer
                .on_sent(now, size, cc.pacing_rate(self.path), cc.window(self.path));
            cc.on_packet_sent(&SentEvent {
                path: self.path,
                now,
                bytes: size,
                bytes_in_flight: self.bytes_in_flight,
                app_limited: packet.app_limited,
            });
        }
        self.set_loss_detection_timer(now);
        Some(pn)
    }

    /// Processes a decoded ACK or PATH_ACK frame for `space` of this path. `ack_delay_exponent` is the peer's
    /// transport parameter (RFC 9000 §19.3: the field is "decoded by multiplying the value in the field by 2 to
    /// the power of the ack_delay_exponent transport parameter sent by the sender of the ACK frame").
    pub fn on_ack_frame(
        &mut self,
        now: Instant,
        space: SpaceId,
        ack: &Ack<'_>,
        ack_delay_exponent: u8,
        cc: &mut dyn CongestionController,
    ) -> Result<AckOutcome<T>, TransportError> {
        let scale = 1u64
            .checked_shl(u32::from(ack_delay_exponent))
            .unwrap_or(u64::MAX);
        let ack_delay = Duration::from_micros(ack.delay.into_inner().saturating_mul(scale));
        let input = AckInput {
            ranges: ack.iter(),
            ack_delay,
            ecn: ack.ecn,
            frame_type: ack.ty(),
        };
        self.on_ack_ranges(now, space, input, cc)
    }

    /// RFC 9002 Appendix A.7 `OnAckReceived` for `space` of this path.
    ///
    /// Validates the whole acknowledgement before changing anything, then: marks the packets acknowledged,
    /// takes an RTT sample, reacts to an ECN-CE increase, detects losses, and reports to `cc` (congestion
    /// events first, then the [`AckEvent`] of the newly acknowledged in-flight packets with a delivery-rate
    /// sample).
    ///
    /// # Errors
    /// PROTOCOL_VIOLATION (with the frame type) for an acknowledgement of a packet number that was not sent:
    /// beyond the next packet number, or one that was skipped. Nothing is changed then.
    pub fn on_ack_ranges<I>(
        &mut self,
        now: Instant,
        space: SpaceId,
        ack: AckInput<I>,
        cc: &mut dyn CongestionController,
    ) -> Result<AckOutcome<T>, TransportError>
    where
        I: IntoIterator<Item = RangeInclusive<u64>>,
        I::IntoIter: Clone,
    {
        let mut out = AckOutcome::default();
        let Some(sp) = space_mut(&mut self.spaces, space) else {
            // The keys of the space were discarded: its acknowledgements cannot even be decrypted.
            return Ok(out);
        };
        let ranges = Clamped {
            inner: ack.ranges.into_iter(),
            below: None,
        };
        // Validation pass.
        let mut largest: Option<u64> = None;
        for (lo, hi) in ranges.clone() {
            // RFC 9000 §13.1: "An endpoint SHOULD treat receipt of an acknowledgment for a packet it did not
            // send as a connection error of type PROTOCOL_VIOLATION, if it is able to detect the condition."
            if hi >= sp.sent.next_pn() {
                return Err(
                    TransportError::protocol_violation("ACK of a packet number never sent")
                        .with_frame(ack.frame_type.0),
                );
            }
            if sp.sent.contains_skipped(lo, hi) {
                return Err(
                    TransportError::protocol_violation("ACK of a skipped packet number")
                        .with_frame(ack.frame_type.0),
                );
            }
            largest = Some(largest.map_or(hi, |l| l.max(hi)));
        }
        let Some(largest) = largest else {
            return Ok(out);
        };
        sp.largest_acked = Some(sp.largest_acked.map_or(largest, |l| l.max(largest)));

        // Mark the packets.
        let mut newly = std::mem::take(&mut self.scratch_newly);
        newly.clear();
        // The ranges come largest first (`Clamped`): one cursor finds each range's tombstones.
        let mut cursor = TombstoneCursor::default();
        for (lo, hi) in ranges {
            sp.sent
                .ack_range_from(lo, hi, &mut cursor, |pn, slot| match slot {
                    AckedSlot::Newly(p) => newly.push((pn, p)),
                    AckedSlot::Spurious(_) => out.spurious_losses.push(pn),
                    AckedSlot::Duplicate => {}
                });
        }
        out.spurious_losses.sort_unstable();
        if newly.is_empty() {
            self.scratch_newly = newly;
            return Ok(out);
        }
        newly.sort_unstable_by_key(|(pn, _)| *pn);

        // RFC 9002 §5.1: "An endpoint generates an RTT sample on receiving an ACK frame that meets the
        // following two conditions: the largest acknowledged packet number is newly acknowledged, and at
        // least one of the newly acknowledged packets was ack-eliciting."
        let newest = newly.last().map(|(pn, p)| (*pn, p.time_sent));
        if let Some((newest_pn, newest_sent)) = newest {
            if newest_pn == largest && newly.iter().any(|(_, p)| p.ack_eliciting) {
                let latest_rtt = now.saturating_duration_since(newest_sent);
                let ack_delay = match space {
                    // RFC 9002 §5.3: an endpoint "MAY ignore the acknowledgment delay for Initial packets,
                    // since these acknowledgments are not delayed by the peer".
                    SpaceId::Initial => Duration::ZERO,
                    // RFC 9002 §5.3: an endpoint "MUST use the lesser of the acknowledgment delay and the
                    // peer's max_ack_delay after the handshake is confirmed" and "SHOULD ignore the peer's
                    // max_ack_delay until the handshake is confirmed".
                    _ if self.handshake_confirmed => ack.ack_delay.min(self.max_ack_delay),
                    _ => ack.ack_delay,
                };
                self.rtt.update(now, latest_rtt, ack_delay);
                out.rtt_sample = true;
            }
        }
        if space == SpaceId::Handshake {
            // RFC 9002 Appendix A.6 PeerCompletedAddressValidation: "has received Handshake ACK".
            self.peer_completed_address_validation = true;
        }

        // ECN (RFC 9002 §7.1, Appendix A.7 ProcessECN): a CE count increase is a congestion signal.
        let mut ecn_sent_time = None;
        if let Some(ecn) = ack.ecn {
            let ce = ecn.ce.into_inner();
            if ce > sp.ecn_ce {
                sp.ecn_ce = ce;
                ecn_sent_time = newest.map(|(_, t)| t);
                out.ecn_ce_increased = true;
            }
        }

        // Loss detection (RFC 9002 §6.1).
        let prior_in_flight = self.bytes_in_flight;
        let detected = loss::detect_lost(
            &mut sp.sent,
            sp.largest_acked,
            now,
            &self.rtt,
            self.config.packet_threshold,
        );
        sp.loss_time = detected.loss_time;
        let pc_duration = loss::persistent_congestion_duration(&self.rtt, self.max_ack_delay);
        let probe = self.mtu_probe.filter(|_| space == SpaceId::Data);
        let pc = loss::persistent_congestion(
            detected
                .lost
                .iter()
                .filter(|(pn, _)| Some(*pn) != probe)
                .map(lost_info),
            self.rtt.first_sample_time(),
            pc_duration,
            |a, b| sp.sent.any_acked_between(a, b),
        );
        let keep_lost = self.lost_retention(space);
        if let Some(sp) = space_mut(&mut self.spaces, space) {
            sp.sent.trim(now, keep_lost);
        }

        // Bytes in flight and the delivery rate.
        let mut acked_packets = std::mem::take(&mut self.scratch_acked);
        acked_packets.clear();
        let mut app_limited = false;
        let mut newest_in_flight = None;
        for (_, p) in newly.iter().filter(|(_, p)| p.in_flight) {
            self.bytes_in_flight = self.bytes_in_flight.saturating_sub(u64::from(p.size));
            if let Some(d) = &p.delivery {
                self.delivery.on_packet_acked(now, d, u64::from(p.size));
            }
            acked_packets.push(AckedPacket {
                bytes: u64::from(p.size),
                time_sent: p.time_sent,
            });
            app_limited = p.app_limited;
            newest_in_flight = Some(p.time_sent);
        }

        if let Some(sent_time) = ecn_sent_time {
            self.episodes.on_event(now, sent_time, false);
            self.pacer.on_congestion();
            cc.on_congestion(&CongestionEvent {
                path: self.path,
                now,
                sent_time,
                lost_bytes: 0,
                bytes_in_flight: self.bytes_in_flight.saturating_sub(lost_bytes(&detected.lost)),
                persistent_congestion: false,
                ecn: true,
                rtt: self.rtt.snapshot(),
            });
        }
        out.persistent_congestion = pc;
        out.lost = self.on_packets_lost(now, detected.lost, pc, probe, cc);

        if let Some(sent) = newest_in_flight {
            self.window_use.on_ack(now, sent);
            // RFC 9002 §7.8: no growth while the window (as the losses above left it) is under-utilised,
            // whatever the reason.
            app_limited |= self.window_use.under_utilised(cc.window(self.path));
        }
        if !acked_packets.is_empty() {
            let min_rtt = self.rtt.has_sample().then(|| self.rtt.min());
            let rate_sample = self.delivery.generate_sample(now, prior_in_flight, min_rtt);
            if let Some(rs) = &rate_sample {
                if !rs.is_app_limited || self.delivery_rate.is_none_or(|r| rs.delivery_rate > r) {
                    self.delivery_rate = Some(rs.delivery_rate);
                }
            }
            cc.on_ack(&AckEvent {
                path: self.path,
                now,
                rtt: self.rtt.snapshot(),
                packets: &acked_packets,
                prior_bytes_in_flight: prior_in_flight,
                bytes_in_flight: self.bytes_in_flight,
                app_limited,
                rate_sample,
            });
            self.refresh_cc_state(cc);
        }
        self.scratch_acked = acked_packets;
        let mut acked = std::mem::take(&mut self.spare_acked);
        acked.extend(newly.drain(..).map(|(pn, p)| PacketRecord::new(pn, p)));
        out.acked = acked;
        self.scratch_newly = newly;

        // RFC 9002 §6.2.1: "The PTO backoff factor is reset when an acknowledgment is received, except ... a
        // client does not reset the PTO backoff factor on receiving acknowledgments in Initial packets."
        if self.peer_completed_address_validation {
            self.pto_count = 0;
        }
        self.set_loss_detection_timer(now);
        Ok(out)
    }

    /// Hands back the vector of an [`AckOutcome::acked`] once its records are taken (`drain(..)`), so that
    /// the next ACK fills it instead of allocating one. Its records, if any are left, are dropped. The
    /// vector kept is the largest handed back, and no larger than the largest number of packets one ACK
    /// acknowledged, which the sender's own flight bounds.
    pub fn recycle_acked(&mut self, mut records: Vec<PacketRecord<T>>) {
        records.clear();
        if records.capacity() > self.spare_acked.capacity() {
            self.spare_acked = records;
        }
    }

    /// How long tombstones of lost packets of `space` are kept.
    fn lost_retention(&self, space: SpaceId) -> Duration {
        self.pto(space).saturating_mul(self.config.lost_retention_ptos)
    }

    /// Removes lost packets from the flight, tells the delivery-rate estimator and the controller (one
    /// [`CongestionEvent`] for the newest lost in-flight packet other than the path-MTU probe `mtu_probe`),
    /// and returns the records.
    fn on_packets_lost(
        &mut self,
        now: Instant,
        lost: Vec<(u64, SentPacket<T>)>,
        persistent_congestion: bool,
        mtu_probe: Option<u64>,
        cc: &mut dyn CongestionController,
    ) -> Vec<PacketRecord<T>> {
        if lost.is_empty() && !persistent_congestion {
            // Nothing lost (the usual acknowledgement): nothing below would change anything.
            return Vec::new();
        }
        let all_bytes = lost_bytes(&lost);
        let probe_bytes: u64 = lost
            .iter()
            .filter(|(pn, p)| p.in_flight && Some(*pn) == mtu_probe)
            .map(|(_, p)| u64::from(p.size))
            .sum();
        // RFC 8899 §3 (probe loss recovery) and RFC 9000 §14.4: the loss of a probe is no congestion signal;
        // the probe leaves the flight without a controller event.
        self.bytes_in_flight = self.bytes_in_flight.saturating_sub(probe_bytes);
        let bytes = all_bytes.saturating_sub(probe_bytes);
        let newest_in_flight = lost
            .iter()
            .filter(|(pn, p)| p.in_flight && Some(*pn) != mtu_probe)
            .map(|(_, p)| p.time_sent)
            .max();
        if persistent_congestion {
            // RFC 9002 §5.2: "Endpoints SHOULD set the min_rtt to the newest RTT sample after persistent
            // congestion is established."
            self.rtt.on_persistent_congestion();
        }
        if let Some(sent_time) = newest_in_flight {
            self.bytes_in_flight = self.bytes_in_flight.saturating_sub(bytes);
            self.delivery.on_packets_lost(bytes);
            self.episodes.on_event(now, sent_time, persistent_congestion);
            // RFC 9002 §7.6.2: "When persistent congestion is declared, the sender's congestion window MUST be
            // reduced to the minimum congestion window": the controller does it on this flag.
            self.pacer.on_congestion();
            cc.on_congestion(&CongestionEvent {
                path: self.path,
                now,
                sent_time,
                lost_bytes: bytes,
                bytes_in_flight: self.bytes_in_flight,
                persistent_congestion,
                ecn: false,
                rtt: self.rtt.snapshot(),
            });
            self.refresh_cc_state(cc);
        }
        lost.into_iter().map(|(pn, p)| PacketRecord::new(pn, p)).collect()
    }

    /// The earliest loss time over the spaces (RFC 9002 Appendix A.8 `GetLossTimeAndSpace`).
    pub fn loss_time(&self) -> Option<Instant> {
        self.loss_time_and_space().map(|(t, _)| t)
    }

    fn loss_time_and_space(&self) -> Option<(Instant, SpaceId)> {
        SpaceId::ALL
            .into_iter()
            .filter_map(|id| Some((space_ref(&self.spaces, id)?.loss_time?, id)))
            .min_by_key(|(t, _)| *t)
    }

    /// When the probe timer fires, if it is the armed timer (no loss timer is pending).
    pub fn pto_deadline(&self) -> Option<Instant> {
        if self.loss_time().is_some() {
            None
        } else {
            self.timer
        }
    }

    /// The single loss-detection timer to arm: the loss time if any, else the PTO (RFC 9002 §6.2.1: "The PTO
    /// timer MUST NOT be set if a timer is set for time threshold loss detection").
    pub fn loss_detection_timer(&self) -> Option<Instant> {
        self.timer
    }

    /// RFC 9002 Appendix A.8 `GetPtoTimeAndSpace`.
    fn pto_time_and_space(&self, now: Instant) -> Option<(Instant, SpaceId)> {
        self.pto_time_and_space_with(now, self.ack_eliciting_in_flight())
    }

    /// [`Self::pto_time_and_space`] with `in_flight` = [`Self::ack_eliciting_in_flight`] already known.
    fn pto_time_and_space_with(&self, now: Instant, in_flight: bool) -> Option<(Instant, SpaceId)> {
        if !in_flight {
            // Anti-deadlock PTO of a client (RFC 9002 §6.2.2.1), measured from now.
            let d = loss::pto_period(&self.rtt, Duration::ZERO, self.pto_count);
            let space = if self.has_space(SpaceId::Handshake) {
                SpaceId::Handshake
            } else {
                SpaceId::Initial
            };
            return Some((now.checked_add(d)?, space));
        }
        let mut best: Option<(Instant, SpaceId)> = None;
        for id in SpaceId::ALL {
            let Some(sp) = space_ref(&self.spaces, id) else {
                continue;
            };
            if sp.sent.ack_eliciting_outstanding() == 0 {
                continue;
            }
            // RFC 9002 §6.2.1: "An endpoint MUST NOT set its PTO timer for the Application Data packet number
            // space until the handshake is confirmed."
            if id == SpaceId::Data && !self.handshake_confirmed {
                break;
            }
            let Some(last) = sp.time_of_last_ack_eliciting else {
                continue;
            };
            // RFC 9002 §6.2.1: "When ack-eliciting packets in multiple packet number spaces are in flight, the
            // timer MUST be set to the earlier value of the Initial and Handshake packet number spaces."
            let period = loss::pto_period(&self.rtt, self.space_max_ack_delay(id), self.pto_count);
            if let Some(t) = last.checked_add(period) {
                if best.is_none_or(|(b, _)| t < b) {
                    best = Some((t, id));
                }
            }
        }
        best
    }

    /// RFC 9002 Appendix A.8 `SetLossDetectionTimer`.
    fn set_loss_detection_timer(&mut self, now: Instant) {
        // One pass over the spaces for the earliest loss time and whether an ack-eliciting packet is in
        // flight (this runs for every packet sent and every ACK).
        let mut loss_time: Option<Instant> = None;
        let mut in_flight = false;
        for sp in self.spaces.iter().flatten() {
            if let Some(t) = sp.loss_time {
                loss_time = Some(loss_time.map_or(t, |l| l.min(t)));
            }
            in_flight |= sp.sent.ack_eliciting_outstanding() > 0;
        }
        if let Some(t) = loss_time {
            self.timer = Some(t);
            return;
        }
        if self.amplification_limited {
            self.timer = None;
            return;
        }
        if !in_flight && self.peer_completed_address_validation {
            self.timer = None;
            return;
        }
        self.timer = self.pto_time_and_space_with(now, in_flight).map(|(t, _)| t);
    }

    /// RFC 9002 Appendix A.9 `OnLossDetectionTimeout`: call when [`Self::loss_detection_timer`] has passed.
    ///
    /// Either declares packets lost by the time threshold (and reports them to `cc`), or counts a PTO
    /// expiration (RFC 9002 §6.2.1: "When a PTO timer expires, the PTO backoff MUST be increased") and asks for
    /// probes.
    pub fn on_timeout(&mut self, now: Instant, cc: &mut dyn CongestionController) -> TimeoutOutcome<T> {
        if self.timer.is_none_or(|t| now < t) {
            return TimeoutOutcome::NotDue;
        }
        if let Some((_, space)) = self.loss_time_and_space() {
            let Some(sp) = space_mut(&mut self.spaces, space) else {
                return TimeoutOutcome::NotDue;
            };
            let detected = loss::detect_lost(
                &mut sp.sent,
                sp.largest_acked,
                now,
                &self.rtt,
                self.config.packet_threshold,
            );
            sp.loss_time = detected.loss_time;
            let probe = self.mtu_probe.filter(|_| space == SpaceId::Data);
            let pc = loss::persistent_congestion(
                detected
                    .lost
                    .iter()
                    .filter(|(pn, _)| Some(*pn) != probe)
                    .map(lost_info),
                self.rtt.first_sample_time(),
                loss::persistent_congestion_duration(&self.rtt, self.max_ack_delay),
                |a, b| sp.sent.any_acked_between(a, b),
            );
            let lost = self.on_packets_lost(now, detected.lost, pc, probe, cc);
            self.set_loss_detection_timer(now);
            return TimeoutOutcome::Lost {
                space,
                lost,
                persistent_congestion: pc,
            };
        }
        let outcome = if !self.ack_eliciting_in_flight() {
            TimeoutOutcome::AntiDeadlock
        } else {
            match self.pto_time_and_space(now) {
                Some((_, space)) => {
                    if let Some(sp) = space_mut(&mut self.spaces, space) {
                        sp.pending_probes = PTO_PROBES;
                    }
                    TimeoutOutcome::Probe {
                        space,
                        probes: PTO_PROBES,
                    }
                }
                None => {
                    self.set_loss_detection_timer(now);
                    return TimeoutOutcome::NotDue;
                }
            }
        };
        self.pto_count = self.pto_count.saturating_add(1);
        self.set_loss_detection_timer(now);
        outcome
    }

    /// Discards the Initial or Handshake space with its keys and returns its outstanding packets (neither
    /// acknowledged nor lost). The Application-data space cannot be discarded (nothing happens).
    ///
    /// RFC 9002 §6.4: "The sender MUST discard all recovery state associated with those packets and MUST remove
    /// them from the count of bytes in flight." No controller event is emitted. RFC 9002 §6.2.2: "When Initial
    /// or Handshake keys are discarded, the PTO and loss detection timers MUST be reset".
    pub fn discard_space(&mut self, now: Instant, space: SpaceId) -> Vec<PacketRecord<T>> {
        if space == SpaceId::Data {
            return Vec::new();
        }
        let Some(mut sp) = self.spaces.get_mut(space as usize).and_then(Option::take) else {
            return Vec::new();
        };
        // Appendix A.11 OnPacketNumberSpaceDiscarded: "pto_count = 0".
        self.pto_count = 0;
        let out = self.take_outstanding(&mut sp);
        self.set_loss_detection_timer(now);
        out
    }

    /// Every packet outstanding in `sp`, removed from it and from the bytes in flight.
    fn take_outstanding(&mut self, sp: &mut PacketSpace<T>) -> Vec<PacketRecord<T>> {
        self.bytes_in_flight = self.bytes_in_flight.saturating_sub(sp.sent.in_flight_bytes());
        sp.sent
            .drain_all()
            .into_iter()
            .map(|(pn, p)| PacketRecord::new(pn, p))
            .collect()
    }

    /// The server rejected 0-RTT (RFC 9001 §4.6.2): every packet outstanding in the application data space
    /// (all of them 0-RTT packets at that point) is returned for its data to be sent again, and leaves the
    /// bytes in flight. The space stays usable: packet numbers continue where they were (RFC 9000 §17.2.3:
    /// "New packet numbers MUST be used for any new packets that are sent"). No controller event: the
    /// packets were not lost to congestion.
    pub fn drain_rejected_0rtt(&mut self, now: Instant) -> Vec<PacketRecord<T>> {
        let Some(mut sp) = self.spaces.get_mut(SpaceId::Data as usize).and_then(Option::take) else {
            return Vec::new();
        };
        sp.loss_time = None;
        sp.pending_probes = 0;
        let out = self.take_outstanding(&mut sp);
        // The space stays: only its outstanding packets go.
        if let Some(slot) = self.spaces.get_mut(SpaceId::Data as usize) {
            *slot = Some(sp);
        }
        self.set_loss_detection_timer(now);
        out
    }

    /// The path's state is deleted (draft-ietf-quic-multipath-21: "Packets still unacknowledged when path
    /// state is deleted count as lost"). Returns every outstanding packet of every space as lost, for the
    /// connection to reschedule on other paths; bytes in flight drop to zero and the timer is disarmed.
    ///
    /// No controller event is emitted: the connection removes the path from the controller
    /// ([`CongestionController::on_path_removed`]), so a loss signal would only disturb coupled algorithms.
    pub fn abandon(&mut self) -> Vec<PacketRecord<T>> {
        let mut out = Vec::new();
        for sp in self.spaces.iter_mut().flatten() {
            out.extend(
                sp.sent
                    .drain_all()
                    .into_iter()
                    .map(|(pn, p)| PacketRecord::new(pn, p)),
            );
            sp.loss_time = None;
            sp.pending_probes = 0;
        }
        self.bytes_in_flight = 0;
        self.timer = None;
        out
    }

    /// Checks internal invariants (tests only).
    #[cfg(test)]
    pub(crate) fn debug_check(&self) {
        let mut sum = 0;
        for sp in self.spaces.iter().flatten() {
            sp.sent.debug_check();
            sum += sp.sent.in_flight_bytes();
        }
        assert_eq!(sum, self.bytes_in_flight, "bytes in flight");
    }
}

fn lost_info<T>((pn, p): &(u64, SentPacket<T>)) -> LostInfo {
    LostInfo {
        pn: *pn,
        time_sent: p.time_sent,
        ack_eliciting: p.ack_eliciting,
    }
}

fn lost_bytes<T>(lost: &[(u64, SentPacket<T>)]) -> u64 {
    lost.iter()
        .filter(|(_, p)| p.in_flight)
        .map(|(_, p)| u64::from(p.size))
        .sum()
}

/// ACK ranges made strictly descending and disjoint: each range is clamped below the previous one, empty
/// results are skipped. Yields `(smallest, largest)`.
#[derive(Clone)]
struct Clamped<I> {
    inner: I,
    below: Option<u64>,
}

impl<I: Iterator<Item = RangeInclusive<u64>>> Iterator for Clamped<I> {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        loop {
            let r = self.inner.next()?;
            let hi = match self.below {
                Some(0) => return None,
                Some(b) => (*r.end()).min(b - 1),
                None => *r.end(),
            };
            let lo = *r.start();
            if lo > hi {
                continue;
            }
            self.below = Some(lo);
            return Some((lo, hi));
        }
    }
}
