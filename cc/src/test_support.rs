//! Helpers for the unit tests of the single-path controllers: a base instant, and builders of ACK and
//! congestion events with a chosen RTT. Compiled only for tests.

use std::time::{Duration, Instant};

use crate::{AckEvent, AckedPacket, CongestionEvent, PathController, PathId, RttSnapshot};

/// A base instant for a test.
#[allow(clippy::disallowed_methods)] // test set-up needs a base instant
pub(crate) fn t0() -> Instant {
    Instant::now()
}

/// `x` milliseconds.
pub(crate) fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

/// Whether `a` and `b` differ by at most `tol`.
pub(crate) fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// Calls `f` with an ACK at `now` of `n` packets of `bytes` sent at `sent`, every RTT estimate equal to `rtt`.
pub(crate) fn ack_event<R>(
    now: Instant,
    sent: Instant,
    n: usize,
    bytes: u64,
    rtt: Duration,
    f: impl FnOnce(&AckEvent<'_>) -> R,
) -> R {
    ack_event_rtt(now, sent, n, bytes, RttSnapshot::from_rtt(rtt), false, f)
}

/// Like [`ack_event`] with a full RTT snapshot and the app-limited flag.
pub(crate) fn ack_event_rtt<R>(
    now: Instant,
    sent: Instant,
    n: usize,
    bytes: u64,
    rtt: RttSnapshot,
    app_limited: bool,
    f: impl FnOnce(&AckEvent<'_>) -> R,
) -> R {
    let packets = vec![
        AckedPacket {
            bytes,
            time_sent: sent
        };
        n
    ];
    f(&AckEvent {
        path: PathId(0),
        now,
        rtt,
        packets: &packets,
        prior_bytes_in_flight: bytes * n as u64,
        bytes_in_flight: 0,
        app_limited,
        rate_sample: None,
    })
}

/// Feeds `c` an ACK at `now` of `n` packets of `bytes` sent at `sent`, every RTT estimate equal to `rtt`.
pub(crate) fn ack(
    c: &mut impl PathController,
    now: Instant,
    sent: Instant,
    n: usize,
    bytes: u64,
    rtt: Duration,
) {
    ack_event(now, sent, n, bytes, rtt, |ev| c.on_ack(ev));
}

/// A loss at `now` of a packet sent at `sent` (RTT estimates 100 ms).
pub(crate) fn loss(now: Instant, sent: Instant) -> CongestionEvent {
    CongestionEvent {
        path: PathId(0),
        now,
        sent_time: sent,
        lost_bytes: 1000,
        bytes_in_flight: 0,
        persistent_congestion: false,
        ecn: false,
        rtt: RttSnapshot::from_rtt(Duration::from_millis(100)),
    }
}

/// Like [`loss`], establishing persistent congestion.
pub(crate) fn persistent_loss(now: Instant, sent: Instant) -> CongestionEvent {
    CongestionEvent {
        persistent_congestion: true,
        ..loss(now, sent)
    }
}

/// Builds a controller from `spec` with `from_params`, rejecting keys outside `keys` (as the registry does).
pub(crate) fn build_spec(
    spec: &str,
    from_params: fn(
        &mut crate::params::Params,
    ) -> Result<Box<dyn crate::CongestionController>, crate::CcError>,
    keys: &[&str],
) -> Result<Box<dyn crate::CongestionController>, crate::CcError> {
    let spec = crate::params::Spec::parse(spec, "algorithm")?;
    let mut p = crate::params::Params::new(&spec.name, spec.params);
    let cc = from_params(&mut p)?;
    p.finish(keys)?;
    Ok(cc)
}
