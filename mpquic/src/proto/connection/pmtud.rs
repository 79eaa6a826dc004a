//! Datagram packetization-layer path MTU discovery (DPLPMTUD, RFC 8899 as applied to QUIC by RFC 9000 §14.3)
//! of one path: the search state machine, sans-IO, with time as an input.
//!
//! The connection asks [`Pmtud::poll_probe`] whether a probe of some size should be sent, sends a packet of
//! exactly that many bytes of UDP payload (PING and PADDING), reports its packet number with
//! [`Pmtud::on_probe_sent`], and feeds every acknowledged or lost packet of the path's application-data space
//! back ([`Pmtud::on_acked`], [`Pmtud::on_lost`]). The path's maximum datagram size is [`Pmtud::mtu`]; every
//! change is returned as an [`MtuChange`] for the connection to apply (packet sizes, the congestion
//! controller, qlog).
//!
//! # Search
//! The search starts from the current size (1200 bytes, RFC 8899's BASE_PLPMTU for QUIC) and first probes the
//! upper bound: the minimum of [`MtuDiscoveryConfig::upper_bound`] and the peer's max_udp_payload_size
//! (RFC 9000 §18.2). Most paths carry it (Ethernet-sized links), and then one probe ends the search. When a
//! size fails (`max_probes` probes of that size lost, RFC 8899 MAX_PROBES), the search is a binary search
//! between the largest acknowledged size `lo` and the smallest failed size `hi`: the next probe is
//! `lo + (hi − lo) / 2`, and the search ends when fewer than [`MtuDiscoveryConfig::min_step`] untested sizes
//! remain between them (`hi − 1 − lo < min_step`). Example, upper bound 1452 and a path that carries at most
//! 1400 bytes: 1452 ✗ (×3), 1326 ✓, 1389 ✓, 1420 ✗ (×3), 1404 ✗ (×3): 14 untested sizes remain, the path
//! settles at 1389. One probe is in flight at a time.
//!
//! Once the search is complete, the path is searched again after [`MtuDiscoveryConfig::interval`] (RFC 8899
//! PMTU_RAISE_TIMER): a path may have grown.
//!
//! # Black holes
//! RFC 8899 §4.3: a path whose MTU shrinks silently drops every packet above its new size. A loss event (the
//! packets one acknowledgement or one loss timer declares lost) is *suspicious* when every packet in it that
//! was not a probe is larger than BASE_PLPMTU and no larger-than-BASE packet sent after the oldest of them
//! (with at least the smallest lost size) has been acknowledged: a smaller MTU explains such an event
//! entirely, whereas congestion would have let the later large packets through. Packets larger than the
//! current MTU were sent under a size already given up and are ignored. After
//! [`MtuDiscoveryConfig::black_hole_threshold`] suspicious events without an acknowledgement of a large packet
//! sent after the first of them, the path falls back to BASE_PLPMTU and searches again at once (RFC 8899
//! §5.2, the PROBE_BASE state). An acknowledged larger-than-BASE packet sent after the first suspicious loss
//! clears the count.
//!
//! The connection keeps its loss-detection probes (RFC 9002 §6.2.4) at BASE_PLPMTU while the path's MTU is
//! above it, so that a path that stopped carrying large packets still acknowledges something: that
//! acknowledgement is what declares the large packets lost and feeds the detector.

use std::time::{Duration, Instant};

/// RFC 8899 §5.1.2 BASE_PLPMTU for QUIC, the size every QUIC path carries: RFC 9000 §14: "QUIC MUST NOT be
/// used if the network path cannot support a maximum datagram size of at least 1200 bytes."
pub const BASE_PLPMTU: u16 = 1200;

/// The largest UDP payload: RFC 9000 §18.2 "the maximum permitted UDP payload of 65527".
pub const MAX_UDP_PAYLOAD: u16 = 65_527;

/// Path MTU discovery settings ([`TransportConfig::mtu_discovery`](super::TransportConfig)); every field has
/// a documented range checked by [`MtuDiscoveryConfig::validate`].
///
/// Defaults: `upper_bound` 1452, `interval` 600 s, `max_probes` 3, `black_hole_threshold` 3, `min_step` 20.
/// quinn and noq use the same upper bound, interval and probe count (and a 20-byte stopping step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MtuDiscoveryConfig {
    /// The largest UDP payload the search tries (the peer's max_udp_payload_size caps it further). Default
    /// 1452: the UDP payload of a 1500-byte Ethernet frame under IPv6 (1500 − 40 − 8), which IPv4 (1472)
    /// carries too. The local interface's MTU is not queried: set it higher for jumbo-frame or loopback
    /// paths. Range 1200..=65527.
    pub upper_bound: u16,
    /// RFC 8899 PMTU_RAISE_TIMER: how long after a completed search the path is searched again. Default
    /// 600 s. Range 1 s ..= 1 day.
    pub interval: Duration,
    /// RFC 8899 MAX_PROBES: probes of one size lost before that size counts as too large. Default 3. Range
    /// 1..=10.
    pub max_probes: u8,
    /// Suspicious loss events (see the module documentation) after which the path falls back to 1200 bytes
    /// and searches again. Default 3. Range 1..=100.
    pub black_hole_threshold: u8,
    /// The search ends when fewer untested sizes than this remain between the largest acknowledged and the
    /// smallest failed probe size. Default 20 bytes. Range 1..=1024.
    pub min_step: u16,
}

impl Default for MtuDiscoveryConfig {
    fn default() -> Self {
        MtuDiscoveryConfig {
            upper_bound: 1452,
            interval: Duration::from_secs(600),
            max_probes: 3,
            black_hole_threshold: 3,
            min_step: 20,
        }
    }
}

/// An [`MtuDiscoveryConfig`] field outside its range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("mtu_discovery.{field} = {value} is outside {range}")]
pub struct MtuDiscoveryConfigError {
    /// The field.
    pub field: &'static str,
    /// Its value, as written.
    pub value: String,
    /// The accepted range.
    pub range: &'static str,
}

impl MtuDiscoveryConfig {
    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// The first field outside its range, with its value.
    pub fn validate(&self) -> Result<(), MtuDiscoveryConfigError> {
        let err = |field, value: String, range| Err(MtuDiscoveryConfigError { field, value, range });
        if !(BASE_PLPMTU..=MAX_UDP_PAYLOAD).contains(&self.upper_bound) {
            return err("upper_bound", self.upper_bound.to_string(), "1200..=65527");
        }
        if !(Duration::from_secs(1)..=Duration::from_secs(86_400)).contains(&self.interval) {
            return err("interval", format!("{:?}", self.interval), "1 s ..= 86400 s");
        }
        if !(1..=10).contains(&self.max_probes) {
            return err("max_probes", self.max_probes.to_string(), "1..=10");
        }
        if !(1..=100).contains(&self.black_hole_threshold) {
            return err(
                "black_hole_threshold",
                self.black_hole_threshold.to_string(),
                "1..=100",
            );
        }
        if !(1..=1024).contains(&self.min_step) {
            return err("min_step", self.min_step.to_string(), "1..=1024");
        }
        Ok(())
    }
}

/// A change of the path's maximum datagram size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MtuChange {
    /// The size before.
    pub(crate) old: u16,
    /// The size now.
    pub(crate) new: u16,
    /// The search is complete (qlog's `done`).
    pub(crate) done: bool,
    /// The change is a black-hole fallback.
    pub(crate) black_hole: bool,
}

/// One binary search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Search {
    /// The largest size known to pass (acknowledged, or where the search started).
    lo: u16,
    /// The smallest size known to fail, if any.
    hi: Option<u16>,
    /// The size being probed.
    size: u16,
    /// Probes of `size` lost so far.
    lost: u8,
    /// The packet number of the probe in flight.
    in_flight: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not started: the first [`Pmtud::poll_probe`] starts the search.
    Idle,
    Searching(Search),
    /// Searched; the next search starts at this time.
    Complete(Instant),
}

/// Black-hole detection (see the module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct BlackHole {
    /// Suspicious loss events counted.
    suspicious: u8,
    /// The smallest packet number of the first counted suspicious event.
    first_suspicious_pn: Option<u64>,
    /// The latest (highest packet number) acknowledged packet larger than BASE_PLPMTU: (pn, size).
    last_large_ack: Option<(u64, u16)>,
}

/// The path MTU discovery state of one path.
#[derive(Debug, Clone)]
pub(crate) struct Pmtud {
    config: MtuDiscoveryConfig,
    mtu: u16,
    peer_max: u16,
    phase: Phase,
    black_hole: BlackHole,
    black_holes: u64,
}

impl Pmtud {
    /// Discovery starting at `mtu`, the path's current size (taken as at least BASE_PLPMTU), searching up to
    /// `peer_max`, the peer's max_udp_payload_size, at most.
    pub(crate) fn new(config: MtuDiscoveryConfig, mtu: u16, peer_max: u64) -> Self {
        let peer_max = u16::try_from(peer_max)
            .unwrap_or(MAX_UDP_PAYLOAD)
            .clamp(BASE_PLPMTU, MAX_UDP_PAYLOAD);
        Pmtud {
            config,
            mtu: mtu.max(BASE_PLPMTU),
            peer_max,
            phase: Phase::Idle,
            black_hole: BlackHole::default(),
            black_holes: 0,
        }
    }

    /// The path's current maximum UDP payload (RFC 8899 PLPMTU).
    #[cfg(test)]
    pub(crate) fn mtu(&self) -> u16 {
        self.mtu
    }

    /// Black holes detected on this path.
    #[cfg(test)]
    pub(crate) fn black_holes(&self) -> u64 {
        self.black_holes
    }

    /// The largest size this path searches for.
    fn upper(&self) -> u16 {
        self.config.upper_bound.min(self.peer_max)
    }

    /// When the next search starts, if the search is complete.
    pub(crate) fn next_timeout(&self) -> Option<Instant> {
        match self.phase {
            Phase::Complete(t) => Some(t),
            Phase::Idle | Phase::Searching(_) => None,
        }
    }

    /// The packet number of the probe in flight.
    pub(crate) fn probe_in_flight(&self) -> Option<u64> {
        match self.phase {
            Phase::Searching(s) => s.in_flight,
            Phase::Idle | Phase::Complete(_) => None,
        }
    }

    /// A new search from the current size, or the complete state if there is nothing above it to try.
    fn start_search(&mut self, now: Instant) {
        let upper = self.upper();
        self.phase = if upper > self.mtu {
            Phase::Searching(Search {
                lo: self.mtu,
                hi: None,
                size: upper,
                lost: 0,
                in_flight: None,
            })
        } else {
            Phase::Complete(now + self.config.interval)
        };
    }

    /// The size of the probe to send now, if one is due: none while a probe is in flight or the search is
    /// complete and its raise timer has not expired.
    pub(crate) fn poll_probe(&mut self, now: Instant) -> Option<u16> {
        match self.phase {
            Phase::Idle => self.start_search(now),
            Phase::Complete(t) if now >= t => self.start_search(now),
            Phase::Complete(_) | Phase::Searching(_) => {}
        }
        match self.phase {
            Phase::Searching(s) if s.in_flight.is_none() => Some(s.size),
            _ => None,
        }
    }

    /// The probe asked for by [`Pmtud::poll_probe`] was sent with packet number `pn`.
    pub(crate) fn on_probe_sent(&mut self, pn: u64) {
        if let Phase::Searching(s) = &mut self.phase {
            s.in_flight = Some(pn);
        }
    }

    /// The next size to probe after a result (`lo` and `hi` updated), or `None` when the search is over.
    fn next_size(&self, s: &Search) -> Option<u16> {
        let hi = s.hi?;
        // Untested sizes strictly between the largest that passed and the smallest that failed.
        let untested = hi.saturating_sub(1).saturating_sub(s.lo);
        if untested < self.config.min_step {
            return None;
        }
        Some(s.lo + (hi - s.lo) / 2)
    }

    /// Moves the search on after the probe of `s.size` passed (`passed`) or failed for good.
    fn advance(&mut self, now: Instant, mut s: Search, passed: bool) -> bool {
        if passed {
            s.lo = s.size;
        } else {
            s.hi = Some(s.size);
        }
        s.lost = 0;
        s.in_flight = None;
        match self.next_size(&s) {
            Some(size) => {
                s.size = size;
                self.phase = Phase::Searching(s);
                false
            }
            None => {
                self.phase = Phase::Complete(now + self.config.interval);
                true
            }
        }
    }

    /// A packet of the path's application-data space (`pn`, `size` bytes of UDP payload for a probe, the QUIC
    /// packet size otherwise) was acknowledged.
    pub(crate) fn on_acked(&mut self, now: Instant, pn: u64, size: u16) -> Option<MtuChange> {
        if size > BASE_PLPMTU {
            let bh = &mut self.black_hole;
            if bh.last_large_ack.is_none_or(|(p, _)| pn > p) {
                bh.last_large_ack = Some((pn, size));
            }
            if bh.first_suspicious_pn.is_some_and(|f| pn > f) {
                bh.suspicious = 0;
                bh.first_suspicious_pn = None;
            }
        }
        let Phase::Searching(s) = self.phase else {
            return None;
        };
        if s.in_flight != Some(pn) {
            return None;
        }
        let old = self.mtu;
        // RFC 8899 §4.1: an acknowledged probe confirms that the path carries its size.
        self.mtu = self.mtu.max(s.size);
        let done = self.advance(now, s, true);
        (self.mtu != old).then_some(MtuChange {
            old,
            new: self.mtu,
            done,
            black_hole: false,
        })
    }

    /// One loss event: the packets (`pn`, size) that one acknowledgement or one loss timer declared lost on
    /// this path, in any order. Returns the fallback to BASE_PLPMTU when they complete a black-hole verdict.
    pub(crate) fn on_lost(
        &mut self,
        now: Instant,
        lost: impl IntoIterator<Item = (u64, u16)>,
    ) -> Option<MtuChange> {
        let probe = self.probe_in_flight();
        let mut evidence: Option<(u64, u16)> = None;
        let mut small = false;
        let mut probe_lost = false;
        for (pn, size) in lost {
            if Some(pn) == probe {
                probe_lost = true;
                continue;
            }
            if size > self.mtu {
                // Sent under a larger size that was already given up: no evidence about the current one.
                continue;
            }
            if size <= BASE_PLPMTU {
                small = true;
            }
            evidence = Some(evidence.map_or((pn, size), |(p, s)| (p.min(pn), s.min(size))));
        }
        if probe_lost {
            if let Phase::Searching(mut s) = self.phase {
                s.in_flight = None;
                s.lost = s.lost.saturating_add(1);
                // RFC 8899 §5.1.2: "The MAX_PROBES is the maximum value of the PROBE_COUNT counter".
                if s.lost >= self.config.max_probes {
                    self.advance(now, s, false);
                } else {
                    self.phase = Phase::Searching(s);
                }
            }
        }
        let (min_pn, min_size) = evidence?;
        if small || self.mtu <= BASE_PLPMTU {
            return None;
        }
        let bh = &mut self.black_hole;
        let contradicted = bh
            .last_large_ack
            .is_some_and(|(p, s)| p > min_pn && s >= min_size);
        if contradicted {
            return None;
        }
        bh.suspicious = bh.suspicious.saturating_add(1);
        bh.first_suspicious_pn.get_or_insert(min_pn);
        if bh.suspicious < self.config.black_hole_threshold {
            return None;
        }
        // RFC 8899 §4.3 and §5.2: a black hole takes the path back to BASE_PLPMTU, from where the search
        // starts again.
        let old = self.mtu;
        self.mtu = BASE_PLPMTU;
        self.black_hole = BlackHole::default();
        self.black_holes += 1;
        self.start_search(now);
        Some(MtuChange {
            old,
            new: self.mtu,
            done: false,
            black_hole: true,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )]

    use super::*;

    #[allow(clippy::disallowed_methods)] // test set-up needs a base instant
    fn t0() -> Instant {
        Instant::now()
    }

    /// Drives a search over a path that carries at most `path_mtu` bytes: every probe up to it is
    /// acknowledged, every larger one lost. Returns the probe sizes in the order sent.
    fn drive(p: &mut Pmtud, now: Instant, path_mtu: u16, pn: &mut u64) -> Vec<u16> {
        let mut sent = Vec::new();
        while let Some(size) = p.poll_probe(now) {
            sent.push(size);
            p.on_probe_sent(*pn);
            if size <= path_mtu {
                p.on_acked(now, *pn, size);
            } else {
                assert_eq!(
                    p.on_lost(now, [(*pn, size)]),
                    None,
                    "a lost probe is not a black hole"
                );
            }
            *pn += 1;
            assert!(sent.len() < 100, "search does not end");
        }
        sent
    }

    #[test]
    fn path_carrying_the_upper_bound_takes_one_probe() {
        let now = t0();
        let mut p = Pmtud::new(MtuDiscoveryConfig::default(), 1200, 65527);
        let mut pn = 0;
        assert_eq!(drive(&mut p, now, 1500, &mut pn), vec![1452]);
        assert_eq!(p.mtu(), 1452);
        // Complete: the raise timer runs.
        assert_eq!(p.next_timeout(), Some(now + Duration::from_secs(600)));
    }

    #[test]
    fn path_of_1400_settles_at_1389() {
        // Hand-computed: lo 1200; 1452 ✗×3 (hi 1452, 251 untested) → 1200 + 252/2 = 1326 ✓ → 1326 + 126/2 =
        // 1389 ✓ → 1389 + 63/2 = 1420 ✗×3 (hi 1420, 30 untested) → 1389 + 31/2 = 1404 ✗×3 (hi 1404, 14
        // untested < 20): done at 1389.
        let now = t0();
        let mut p = Pmtud::new(MtuDiscoveryConfig::default(), 1200, 65527);
        let mut pn = 0;
        let seq = drive(&mut p, now, 1400, &mut pn);
        assert_eq!(
            seq,
            vec![1452, 1452, 1452, 1326, 1389, 1420, 1420, 1420, 1404, 1404, 1404]
        );
        assert_eq!(p.mtu(), 1389);
    }

    #[test]
    fn path_of_1280_settles_at_1278() {
        // 1452 ✗×3 → 1326 ✗×3 (hi 1326, 125 untested) → 1200 + 126/2 = 1263 ✓ → 1263 + 63/2 = 1294 ✗×3
        // (30 untested) → 1263 + 31/2 = 1278 ✓ (15 untested < 20): done at 1278.
        let now = t0();
        let mut p = Pmtud::new(MtuDiscoveryConfig::default(), 1200, 65527);
        let mut pn = 0;
        let seq = drive(&mut p, now, 1280, &mut pn);
        assert_eq!(
            seq,
            vec![1452, 1452, 1452, 1326, 1326, 1326, 1263, 1294, 1294, 1294, 1278]
        );
        assert_eq!(p.mtu(), 1278);
    }

    #[test]
    fn peer_max_udp_payload_size_caps_the_search() {
        let now = t0();
        let mut p = Pmtud::new(MtuDiscoveryConfig::default(), 1200, 1300);
        let mut pn = 0;
        assert_eq!(drive(&mut p, now, 9000, &mut pn), vec![1300]);
        assert_eq!(p.mtu(), 1300);
        // A peer allowing only 1200: nothing to search.
        let mut q = Pmtud::new(MtuDiscoveryConfig::default(), 1200, 1200);
        assert_eq!(q.poll_probe(now), None);
        assert_eq!(q.mtu(), 1200);
    }

    #[test]
    fn only_one_probe_in_flight_and_max_probes_per_size() {
        let now = t0();
        let cfg = MtuDiscoveryConfig {
            max_probes: 2,
            ..MtuDiscoveryConfig::default()
        };
        let mut p = Pmtud::new(cfg, 1200, 65527);
        assert_eq!(p.poll_probe(now), Some(1452));
        p.on_probe_sent(7);
        assert_eq!(p.poll_probe(now), None, "a probe is in flight");
        // Another packet's ack does not resolve the probe.
        assert_eq!(p.on_acked(now, 6, 1200), None);
        assert_eq!(p.poll_probe(now), None);
        p.on_lost(now, [(7, 1452)]);
        assert_eq!(p.poll_probe(now), Some(1452), "second try of the same size");
        p.on_probe_sent(8);
        p.on_lost(now, [(8, 1452)]);
        // Two lost (max_probes 2): binary search.
        assert_eq!(p.poll_probe(now), Some(1326));
    }

    #[test]
    fn raise_timer_searches_again_and_finds_a_larger_path() {
        let start = t0();
        let mut p = Pmtud::new(MtuDiscoveryConfig::default(), 1200, 65527);
        let mut pn = 0;
        drive(&mut p, start, 1400, &mut pn);
        assert_eq!(p.mtu(), 1389);
        let t = p.next_timeout().unwrap();
        assert_eq!(t, start + Duration::from_secs(600));
        // Before the raise timer: nothing.
        assert_eq!(p.poll_probe(t - Duration::from_millis(1)), None);
        // The path grew to 1500: at the raise timer the search starts from 1389 and probes 1452 first.
        assert_eq!(drive(&mut p, t, 1500, &mut pn), vec![1452]);
        assert_eq!(p.mtu(), 1452);
        assert_eq!(p.next_timeout(), Some(t + Duration::from_secs(600)));
    }

    #[test]
    fn three_suspicious_loss_events_fall_back_to_base_and_search_again() {
        let now = t0();
        let mut p = Pmtud::new(MtuDiscoveryConfig::default(), 1200, 65527);
        let mut pn = 0;
        drive(&mut p, now, 1500, &mut pn);
        assert_eq!(p.mtu(), 1452);
        // Data at 1452 is acknowledged up to pn 20.
        assert_eq!(p.on_acked(now, 20, 1452), None);
        // The path shrinks to 1280: packets 21.. are lost. Each event below is one ACK of a 1200-byte PTO
        // probe declaring large packets sent after pn 20 lost.
        assert_eq!(p.on_lost(now, [(21, 1452), (22, 1452)]), None);
        assert_eq!(p.on_acked(now, 23, 1200), None, "a base-size ACK says nothing");
        assert_eq!(p.on_lost(now, [(24, 1452)]), None);
        let change = p.on_lost(now, [(26, 1452), (25, 1452)]).unwrap();
        assert_eq!(
            change,
            MtuChange {
                old: 1452,
                new: 1200,
                done: false,
                black_hole: true
            }
        );
        assert_eq!(p.mtu(), 1200);
        assert_eq!(p.black_holes(), 1);
        // Late losses of 1452-byte packets do not count again (larger than the MTU now).
        assert_eq!(p.on_lost(now, [(27, 1452)]), None);
        assert_eq!(p.on_lost(now, [(28, 1452)]), None);
        assert_eq!(p.on_lost(now, [(29, 1452)]), None);
        // The search starts again at once and settles under the new path MTU.
        let mut pn = 100;
        assert_eq!(drive(&mut p, now, 1280, &mut pn).last(), Some(&1278));
        assert_eq!(p.mtu(), 1278);
    }

    #[test]
    fn congestion_losses_are_not_a_black_hole() {
        let now = t0();
        let mut p = Pmtud::new(MtuDiscoveryConfig::default(), 1200, 65527);
        let mut pn = 0;
        drive(&mut p, now, 1500, &mut pn);
        for round in 0..10u64 {
            let base = 100 + round * 10;
            // Large packets sent after the lost ones are acknowledged in the same ACK: congestion.
            assert_eq!(p.on_acked(now, base + 5, 1452), None);
            assert_eq!(p.on_lost(now, [(base, 1452), (base + 1, 1452)]), None);
        }
        // Losses that include a base-size packet are not explained by a smaller MTU.
        for round in 0..5u64 {
            let base = 1000 + round * 10;
            assert_eq!(p.on_lost(now, [(base, 1452), (base + 1, 1100)]), None);
        }
        assert_eq!(p.mtu(), 1452);
    }

    #[test]
    fn a_later_large_ack_clears_the_suspicion() {
        let now = t0();
        let mut p = Pmtud::new(MtuDiscoveryConfig::default(), 1200, 65527);
        let mut pn = 0;
        drive(&mut p, now, 1500, &mut pn);
        assert_eq!(p.on_lost(now, [(10, 1452)]), None);
        assert_eq!(p.on_lost(now, [(11, 1452)]), None);
        // A 1452-byte packet sent after the first suspicious loss arrives: the path carries the size.
        assert_eq!(p.on_acked(now, 12, 1452), None);
        assert_eq!(p.on_lost(now, [(13, 1452)]), None);
        assert_eq!(p.on_lost(now, [(14, 1452)]), None);
        assert_eq!(p.mtu(), 1452, "only two suspicious events since the clearing ACK");
        assert!(p.on_lost(now, [(15, 1452)]).is_some(), "the third one falls back");
    }

    #[test]
    fn lost_probe_is_not_black_hole_evidence() {
        let now = t0();
        let mut p = Pmtud::new(MtuDiscoveryConfig::default(), 1200, 65527);
        let mut pn = 0;
        drive(&mut p, now, 1400, &mut pn);
        assert_eq!(p.mtu(), 1389);
        // Raise timer: probes of 1452 lost three times; no fallback.
        let t = p.next_timeout().unwrap();
        for i in 0..3 {
            assert_eq!(p.poll_probe(t), Some(1452));
            p.on_probe_sent(500 + i);
            assert_eq!(p.on_lost(t, [(500 + i, 1452)]), None);
        }
        assert_eq!(p.mtu(), 1389);
        assert_eq!(p.black_holes(), 0);
    }

    #[test]
    fn validate_names_the_field_and_value() {
        assert_eq!(MtuDiscoveryConfig::default().validate(), Ok(()));
        let bad = MtuDiscoveryConfig {
            upper_bound: 1199,
            ..MtuDiscoveryConfig::default()
        };
        let e = bad.validate().unwrap_err();
        assert_eq!(e.field, "upper_bound");
        assert_eq!(
            e.to_string(),
            "mtu_discovery.upper_bound = 1199 is outside 1200..=65527"
        );
        let bad = MtuDiscoveryConfig {
            upper_bound: 65528,
            ..MtuDiscoveryConfig::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "upper_bound");
        let ok = MtuDiscoveryConfig {
            upper_bound: 65527,
            ..MtuDiscoveryConfig::default()
        };
        assert_eq!(ok.validate(), Ok(()));
        for (cfg, field) in [
            (
                MtuDiscoveryConfig {
                    max_probes: 0,
                    ..MtuDiscoveryConfig::default()
                },
                "max_probes",
            ),
            (
                MtuDiscoveryConfig {
                    black_hole_threshold: 0,
                    ..MtuDiscoveryConfig::default()
                },
                "black_hole_threshold",
            ),
            (
                MtuDiscoveryConfig {
                    min_step: 0,
                    ..MtuDiscoveryConfig::default()
                },
                "min_step",
            ),
            (
                MtuDiscoveryConfig {
                    interval: Duration::from_millis(10),
                    ..MtuDiscoveryConfig::default()
                },
                "interval",
            ),
        ] {
            assert_eq!(cfg.validate().unwrap_err().field, field);
        }
    }
}
