//! A token-bucket pacer for one path (RFC 9002 §7.7).
//!
//! RFC 9002 §7.7: "A sender SHOULD pace sending of all in-flight packets based on input from the congestion
//! controller." The controller gives a rate ([`crate::cc::CongestionController::pacing_rate`]); the bucket
//! refills at that rate and holds at most `burst` bytes, so after an idle period a burst of a few packets
//! leaves at once (like an initial window) and then packets are spread at the rate. Without a rate the pacer
//! does nothing: the path is limited by its window only.
//!
//! At high rates the bucket also holds what the rate produces in one *burst interval* (1 ms by default):
//! RFC 9002 §7.7 "Senders SHOULD limit bursts to the initial congestion window [...] A sender with knowledge
//! that the network path to the receiver can absorb larger bursts MAY use a higher limit." A sender woken by
//! timers cannot space packets more finely than its timer granularity (RFC 9002 §6.1.2, `kGranularity` =
//! 1 ms) anyway, and a path whose controller grants a rate of `r` absorbs `r · 1 ms` at once about as well
//! as it absorbs the same bytes spread over that millisecond: Linux TCP sizes its bursts the same way (TSO
//! autosizing, about 1 ms of data at the pacing rate). Without it a 1 Gbit/s sender would have to be woken
//! every 100 µs to send 10 packets, which costs a task hop per 10 packets and, on the receiving side, an ACK
//! per 10 packets. Below `burst · 8 / interval` (96 Mbit/s for 10 packets of 1200 B and 1 ms) nothing changes.
//!
//! That interval term is capped once the path has had a congestion event ([`Pacer::with_max_burst`],
//! [`Pacer::on_congestion`], `RecoveryConfig::pacer_max_burst_packets`): it then adds at most
//! `max(max_burst_packets · max_datagram_size, cwnd / 16)` (off by default; e.g. 32 packets). On a path whose RTT is
//! tens of microseconds (loopback, a data centre) the rate `1.25 · cwnd / srtt` makes one millisecond of it
//! many times the window, so without the cap the pacer lets the whole window out at once and CUBIC grows
//! the window until a receiver with a small socket buffer (the Linux default is 208 KiB) drops whole GSO
//! batches. With the cap a sender woken by acknowledgements and millisecond timers sends at most that many
//! packets (32: 46 KB at 1452 bytes) per wake-up, so the data in flight and the receiver's queue stay short;
//! that throttle also costs goodput where the receiver keeps up, which is why the cap is off by default. The
//! `cwnd / 16` term keeps bursts large where the window is large (a window of 16 MB allows 1 MB), so that a
//! sender woken only by acknowledgements and millisecond timers still fills it. RFC 9002 §7.7 asks for bursts
//! of at most the initial window unless the path is known to absorb more: a congestion event is the sign
//! that it does not, and a path that never had one keeps the larger bursts. `docs/pacing.md` has the
//! measurements and why the default is no cap.
//!
//! Tokens are kept in byte-nanoseconds (`bytes · 10^9`) in a `u128`, so refills are exact (no drift from
//! rounding) and no product can overflow: a rate below `2^64` B/s times an elapsed time below `2^64` ns fits.

use std::time::{Duration, Instant};

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Default burst, in packets of the maximum datagram size (as RFC 9002 §7.2's initial window of 10 packets).
pub const DEFAULT_BURST_PACKETS: u32 = 10;

/// Default burst interval: the bucket holds at least what the pacing rate produces in this time (see the
/// module documentation; `kGranularity` of RFC 9002 §6.1.2).
pub const DEFAULT_BURST_INTERVAL: Duration = Duration::from_millis(1);

/// Default cap on the high-rate bucket, in packets of the maximum datagram size (see the module
/// documentation): 0, no cap. On a quiet machine a cap of 32 packets cut the losses towards receivers with
/// small socket buffers by about 5× but also cut the goodput towards them by about a fifth (docs/pacing.md),
/// so it is an option for paths where losses cost more than throughput, not the default.
pub const DEFAULT_MAX_BURST_PACKETS: u32 = 0;

/// Largest accepted `pacer_max_burst_packets`: 2^16 packets (95 MB at 1452 bytes).
pub const MAX_MAX_BURST_PACKETS: u32 = 1 << 16;

/// The cap on the high-rate bucket rises with the congestion window: it is at least
/// `cwnd / MAX_BURST_WINDOW_DIVISOR`, so that on a path with a large window a sender woken only by
/// acknowledgements and millisecond timers still fills it.
pub const MAX_BURST_WINDOW_DIVISOR: u64 = 16;

/// A pacer setting of [`super::RecoveryConfig`] outside its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PacerConfigError {
    /// `pacer_max_burst_packets` is above [`MAX_MAX_BURST_PACKETS`].
    #[error("recovery.pacer_max_burst_packets = {0} is outside 0..={MAX_MAX_BURST_PACKETS} (0: no cap)")]
    MaxBurstPackets(u32),
}

/// A token bucket fed by the congestion controller's pacing rate.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// Capacity in bytes at low rates.
    burst: u64,
    /// At high rates the capacity is what the rate produces in this many nanoseconds.
    interval_nanos: u128,
    /// Packets of the high-rate cap (zero: no cap), see [`Pacer::with_max_burst`].
    max_burst_packets: u32,
    /// The high-rate cap in bytes (`max_burst_packets · max_datagram_size`; zero: no cap).
    max_burst: u64,
    /// The path has had a congestion event: the cap applies from then on.
    congested: bool,
    /// Tokens in byte-nanoseconds.
    tokens: u128,
    last: Option<Instant>,
}

impl Pacer {
    /// A full bucket of `burst_packets · max_datagram_size` bytes (at least one datagram) that grows to
    /// `rate · burst_interval` at high rates (zero: never). No cap on that: see [`Pacer::with_max_burst`].
    pub fn new(max_datagram_size: u16, burst_packets: u32, burst_interval: Duration) -> Self {
        let burst = Self::burst_bytes(max_datagram_size, burst_packets);
        Pacer {
            burst,
            interval_nanos: burst_interval.as_nanos(),
            max_burst_packets: 0,
            max_burst: 0,
            congested: false,
            tokens: u128::from(burst) * NANOS_PER_SEC,
            last: None,
        }
    }

    /// The same pacer with a cap on its high-rate capacity once the path has had a congestion event
    /// ([`Pacer::on_congestion`]): `max(max_burst_packets · max_datagram_size, window /
    /// MAX_BURST_WINDOW_DIVISOR)` (zero packets: never a cap, the capacity is `rate · burst_interval`). The
    /// cap never lowers the capacity below the burst.
    pub fn with_max_burst(mut self, max_datagram_size: u16, max_burst_packets: u32) -> Self {
        self.max_burst_packets = max_burst_packets;
        self.max_burst = Self::max_burst_bytes(max_datagram_size, max_burst_packets);
        self
    }

    fn max_burst_bytes(max_datagram_size: u16, max_burst_packets: u32) -> u64 {
        u64::from(max_datagram_size).max(1) * u64::from(max_burst_packets)
    }

    fn burst_bytes(max_datagram_size: u16, burst_packets: u32) -> u64 {
        u64::from(max_datagram_size).max(1) * u64::from(burst_packets.max(1))
    }

    /// Bucket capacity in bytes at low rates.
    pub fn burst(&self) -> u64 {
        self.burst
    }

    /// Bucket capacity in bytes at `rate` bytes per second and a congestion window of `window` bytes: the
    /// larger of the burst and what the rate produces in one burst interval, the latter at most the cap
    /// (see [`Pacer::with_max_burst`]).
    pub fn capacity_at(&self, rate: Option<u64>, window: u64) -> u64 {
        u64::try_from(self.capacity(rate, window) / NANOS_PER_SEC).unwrap_or(u64::MAX)
    }

    /// The path had a congestion event (packets declared lost, or an ECN-CE mark): from now on the high-rate
    /// capacity is capped (if a cap is set). The path has shown it does not absorb whatever the window
    /// allows, so the RFC 9002 §7.7 MAY of larger bursts no longer holds for it.
    pub fn on_congestion(&mut self) {
        self.congested = true;
    }

    /// Whether the cap applies (a cap is set and the path has had a congestion event).
    pub fn capped(&self) -> bool {
        self.congested && self.max_burst > 0
    }

    /// Changes the low-rate capacity and the cap (PMTU change); tokens above the new capacity are dropped.
    pub fn set_burst(&mut self, max_datagram_size: u16, burst_packets: u32) {
        self.burst = Self::burst_bytes(max_datagram_size, burst_packets);
        self.max_burst = Self::max_burst_bytes(max_datagram_size, self.max_burst_packets);
        self.tokens = self.tokens.min(self.capacity(None, u64::MAX));
    }

    /// Capacity in byte-nanoseconds (a rate in B/s times nanoseconds is bytes · 10^9, the tokens' unit).
    fn capacity(&self, rate: Option<u64>, window: u64) -> u128 {
        let burst = u128::from(self.burst) * NANOS_PER_SEC;
        rate.map_or(burst, |r| {
            let mut high = u128::from(r).saturating_mul(self.interval_nanos);
            if self.capped() {
                let cap = self.max_burst.max(window / MAX_BURST_WINDOW_DIVISOR);
                high = high.min(u128::from(cap) * NANOS_PER_SEC);
            }
            burst.max(high)
        })
    }

    /// Tokens available at `now` in whole bytes, at `rate` bytes per second and a window of `window` bytes.
    pub fn available(&self, now: Instant, rate: u64, window: u64) -> u64 {
        u64::try_from(self.refilled(now, rate, window) / NANOS_PER_SEC).unwrap_or(u64::MAX)
    }

    fn refilled(&self, now: Instant, rate: u64, window: u64) -> u128 {
        self.refilled_to(now, rate, self.capacity(Some(rate), window))
    }

    /// The tokens at `now` at `rate`, at most `capacity` (byte-nanoseconds).
    fn refilled_to(&self, now: Instant, rate: u64, capacity: u128) -> u128 {
        // Most questions come at the instant of the last packet (the polls after it): no elapsed time to
        // compute then.
        let elapsed = match self.last {
            Some(l) if l != now => now.saturating_duration_since(l),
            _ => Duration::ZERO,
        };
        // Below 2^32 s (136 years) the elapsed nanoseconds fit in 64 bits, and a 64 × 64-bit product cannot
        // overflow 128 bits: one widening multiplication gives what the saturating 128-bit one gives.
        let add = if elapsed.as_secs() < 1 << 32 {
            let nanos = elapsed.as_secs() * 1_000_000_000 + u64::from(elapsed.subsec_nanos());
            u128::from(rate) * u128::from(nanos)
        } else {
            u128::from(rate).saturating_mul(elapsed.as_nanos())
        };
        self.tokens.saturating_add(add).min(capacity)
    }

    /// When a packet of `size` bytes may leave: `None` if now (or if `rate` is `None`: no pacing), else the
    /// instant at which the bucket will hold `size` bytes (a packet larger than the bucket waits for a full
    /// bucket). `window` is the path's congestion window, for the window cap.
    pub fn next_send_time(&self, now: Instant, size: u64, rate: Option<u64>, window: u64) -> Option<Instant> {
        let rate = rate?;
        let capacity = self.capacity(Some(rate), window);
        let need = (u128::from(size) * NANOS_PER_SEC).min(capacity);
        // The refill only adds and `need` is at most the capacity: tokens already covering `need` cover it
        // at any later time, so the elapsed time need not be computed (the common case of an open pacer).
        if self.tokens >= need {
            return None;
        }
        let have = self.refilled_to(now, rate, capacity);
        if have >= need || rate == 0 {
            // A zero rate would never refill: treat it as "no pacing" rather than stalling the path forever.
            return None;
        }
        // Wait for the deficit, rounded up to the next nanosecond.
        // The deficit is at most one packet's byte-nanoseconds: a 64-bit division unless it is above 2^64.
        let deficit = need - have;
        let wait = match u64::try_from(deficit) {
            Ok(d) => d.div_ceil(rate),
            Err(_) => u64::try_from(deficit.div_ceil(u128::from(rate))).unwrap_or(u64::MAX),
        };
        let wait = Duration::from_nanos(wait);
        now.checked_add(wait)
    }

    /// A packet of `size` bytes left at `now` (the bucket may go down to zero; it never goes negative, so an
    /// over-sized or early send just empties it).
    pub fn on_sent(&mut self, now: Instant, size: u64, rate: Option<u64>, window: u64) {
        let Some(rate) = rate else {
            // Not pacing: keep the bucket full so that pacing starts with a burst when a rate appears.
            self.tokens = self.capacity(None, window);
            self.last = Some(now);
            return;
        };
        let have = self.refilled(now, rate, window);
        self.tokens = have.saturating_sub(u128::from(size) * NANOS_PER_SEC);
        self.last = Some(self.last.map_or(now, |l| l.max(now)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window too large to cap anything.
    const W: u64 = u64::MAX;

    #[allow(clippy::disallowed_methods)] // test set-up needs a base instant
    fn t0() -> Instant {
        Instant::now()
    }

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn burst_then_spread_at_rate_by_hand() {
        let t0 = t0();
        // 1.2 MB/s = 1200 B per ms; burst 2 packets of 1200 B.
        let rate = Some(1_200_000);
        let mut p = Pacer::new(1200, 2, Duration::ZERO);
        assert_eq!(p.burst(), 2400);
        // The full bucket lets two packets leave at t0.
        assert_eq!(p.next_send_time(t0, 1200, rate, W), None);
        p.on_sent(t0, 1200, rate, W);
        assert_eq!(p.next_send_time(t0, 1200, rate, W), None);
        p.on_sent(t0, 1200, rate, W);
        // Empty: the third waits 1200 B / 1.2 MB/s = 1 ms.
        assert_eq!(p.next_send_time(t0, 1200, rate, W), Some(t0 + us(1000)));
        // At 0.5 ms, 600 B have accumulated: 0.5 ms more.
        assert_eq!(p.next_send_time(t0 + us(500), 1200, rate, W), Some(t0 + us(1000)));
        assert_eq!(p.available(t0 + us(500), 1_200_000, W), 600);
        p.on_sent(t0 + us(1000), 1200, rate, W);
        // A 600 B packet right after: 0.5 ms.
        assert_eq!(p.next_send_time(t0 + us(1000), 600, rate, W), Some(t0 + us(1500)));
        // After a long idle period the bucket is full again (2400 B, not more).
        assert_eq!(p.available(t0 + Duration::from_secs(10), 1_200_000, W), 2400);
        // A packet larger than the bucket waits for a full bucket only.
        p.on_sent(t0 + us(1000), 5000, rate, W);
        assert_eq!(
            p.next_send_time(t0 + us(1000), 5000, rate, W),
            Some(t0 + us(3000))
        );
    }

    #[test]
    fn the_bucket_holds_one_burst_interval_at_high_rates_by_hand() {
        let t0 = t0();
        // 125 MB/s (1 Gbit/s), 10 packets of 1200 B, 1 ms: the bucket holds 125 000 B, not 12 000 B.
        let rate = Some(125_000_000);
        let mut p = Pacer::new(1200, 10, Duration::from_millis(1));
        assert_eq!(p.capacity_at(None, W), 12_000);
        assert_eq!(p.capacity_at(rate, W), 125_000);
        p.on_sent(t0, 1200, rate, W);
        let t1 = t0 + Duration::from_millis(10);
        assert_eq!(p.available(t1, 125_000_000, W), 125_000);
        // 104 packets (124 800 B) leave at once; 200 B are left and the 105th waits
        // (1200 − 200) B / 125 MB/s = 8 µs.
        for _ in 0..104 {
            assert_eq!(p.next_send_time(t1, 1200, rate, W), None);
            p.on_sent(t1, 1200, rate, W);
        }
        assert_eq!(p.next_send_time(t1, 1200, rate, W), Some(t1 + us(8)));
        // At or below burst · 1 s / interval (12 MB/s here) the capacity is the burst.
        assert_eq!(p.capacity_at(Some(12_000_000), W), 12_000);
        assert_eq!(p.capacity_at(Some(6_000_000), W), 12_000);
        assert_eq!(p.available(t1 + Duration::from_secs(1), 6_000_000, W), 12_000);
        // A zero interval keeps the burst at every rate.
        let q = Pacer::new(1200, 10, Duration::ZERO);
        assert_eq!(q.capacity_at(rate, W), 12_000);
    }

    #[test]
    fn no_rate_means_no_pacing() {
        let t0 = t0();
        let mut p = Pacer::new(1200, 1, Duration::ZERO);
        for _ in 0..100 {
            assert_eq!(p.next_send_time(t0, 1200, None, W), None);
            p.on_sent(t0, 1200, None, W);
        }
        // A zero rate does not stall the path either.
        assert_eq!(p.next_send_time(t0, 1200, Some(0), W), None);
    }

    #[test]
    fn the_cap_bounds_the_high_rate_bucket_by_hand() {
        let t0 = t0();
        // 10 packets of 1200 B (12 000 B), 1 ms, cap 32 packets: 38 400 B.
        let mut p = Pacer::new(1200, 10, Duration::from_millis(1)).with_max_burst(1200, 32);
        // 125 MB/s: one interval is 125 000 B.
        let rate = Some(125_000_000);
        // No cap before the path's first congestion event.
        assert!(!p.capped());
        assert_eq!(p.capacity_at(rate, 100_000), 125_000);
        p.on_congestion();
        assert!(p.capped());
        // cwnd 100 000 B: cwnd/16 = 6 250 < 38 400, so the cap is 38 400 (not 125 000).
        assert_eq!(p.capacity_at(rate, 100_000), 38_400);
        // cwnd 1.6 MB: cwnd/16 = 100 000 > 38 400, below the interval's 125 000.
        assert_eq!(p.capacity_at(rate, 1_600_000), 100_000);
        // cwnd 3.2 MB: cwnd/16 = 200 000; the interval's 125 000 is the smaller.
        assert_eq!(p.capacity_at(rate, 3_200_000), 125_000);
        // 30 MB/s: the interval's 30 000 B is below the cap, which changes nothing.
        assert_eq!(p.capacity_at(Some(30_000_000), 100_000), 30_000);
        // 6 MB/s (6 000 B per interval) and no rate: the burst of 12 000 B.
        assert_eq!(p.capacity_at(Some(6_000_000), 100_000), 12_000);
        assert_eq!(p.capacity_at(None, 100_000), 12_000);
        // Without the cap, as before: 125 000.
        let mut old = Pacer::new(1200, 10, Duration::from_millis(1));
        old.on_congestion();
        assert_eq!(old.capacity_at(rate, 100_000), 125_000);

        // After an idle period 32 packets leave at once; the 33rd waits 1200 B / 125 MB/s = 9.6 µs.
        p.on_sent(t0, 1200, rate, 100_000);
        let t1 = t0 + Duration::from_millis(10);
        assert_eq!(p.available(t1, 125_000_000, 100_000), 38_400);
        for _ in 0..32 {
            assert_eq!(p.next_send_time(t1, 1200, rate, 100_000), None);
            p.on_sent(t1, 1200, rate, 100_000);
        }
        assert_eq!(
            p.next_send_time(t1, 1200, rate, 100_000),
            Some(t1 + Duration::from_nanos(9_600))
        );

        // A path-MTU change to 1452 B moves the burst (14 520 B) and the cap (32 · 1452 = 46 464 B).
        p.set_burst(1452, 10);
        assert_eq!(p.burst(), 14_520);
        assert_eq!(p.capacity_at(rate, 100_000), 46_464);
        // A burst above the cap wins: 64 packets of 1200 B = 76 800 B.
        let mut big = Pacer::new(1200, 64, Duration::from_millis(1)).with_max_burst(1200, 32);
        big.on_congestion();
        assert_eq!(big.capacity_at(rate, 100_000), 76_800);
    }

    #[test]
    fn on_loopback_the_cap_is_far_below_the_window() {
        // The loopback case: cwnd 200 000 B, srtt 100 µs, so CUBIC's rate is 1.25 · 200 000 B / 100 µs =
        // 2.5 GB/s and one millisecond of it is 2.5 MB, twelve windows: without the cap the whole window
        // leaves at once. With it, 32 packets of 1452 B = 46 464 B (cwnd/16 = 12 500 is smaller).
        let rate = Some(2_500_000_000);
        let mut capped = Pacer::new(1452, 10, DEFAULT_BURST_INTERVAL).with_max_burst(1452, 32);
        capped.on_congestion();
        let mut uncapped = Pacer::new(1452, 10, DEFAULT_BURST_INTERVAL);
        uncapped.on_congestion();
        assert!(!uncapped.capped());
        assert_eq!(uncapped.capacity_at(rate, 200_000), 2_500_000);
        assert_eq!(capped.capacity_at(rate, 200_000), 46_464);
    }

    #[test]
    fn the_setting_is_range_checked() {
        use super::super::RecoveryConfig;
        let ok = |n| RecoveryConfig {
            pacer_max_burst_packets: n,
            ..RecoveryConfig::default()
        };
        assert_eq!(RecoveryConfig::default().pacer_max_burst_packets, 0);
        assert_eq!(ok(0).validate(), Ok(()));
        assert_eq!(ok(1).validate(), Ok(()));
        assert_eq!(ok(MAX_MAX_BURST_PACKETS).validate(), Ok(()));
        let e = ok(MAX_MAX_BURST_PACKETS + 1).validate().unwrap_err();
        assert_eq!(e, PacerConfigError::MaxBurstPackets(65_537));
        assert_eq!(
            e.to_string(),
            "recovery.pacer_max_burst_packets = 65537 is outside 0..=65536 (0: no cap)"
        );
    }

    #[test]
    fn extreme_rates_do_not_overflow() {
        let t0 = t0();
        let mut p = Pacer::new(u16::MAX, u32::MAX, Duration::MAX);
        p.on_sent(t0, u64::MAX, Some(u64::MAX), W);
        let _ = p.next_send_time(t0 + Duration::from_secs(1 << 40), u64::MAX, Some(u64::MAX), W);
        p.on_sent(t0, u64::MAX, Some(1), W);
        let t = p.next_send_time(t0, u64::MAX, Some(1), W);
        assert!(t.is_none_or(|t| t > t0));
        p.set_burst(1200, 10);
        assert_eq!(p.burst(), 12_000);
    }
}
