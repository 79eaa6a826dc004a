//! Opportunistic retransmission and penalisation (`reinject`): the trigger on hand-built stream states, the
//! configuration's ranges, and a transfer over a fast and a slow path with small flow-control windows where
//! the slow path holds the window.

use std::time::Duration;

use super::harness::{Pair, addr};
use super::migration::transfer_with;
use super::multipath::{CLIENT2, mp_config};
use crate::cc::PathId;
use crate::proto::connection::reinject::{Trigger, trigger};
use crate::proto::connection::{
    MAX_ACK_THRESHOLD, MIN_ACK_THRESHOLD, ReinjectionConfig, ReinjectionConfigError, TransportConfig,
};
use crate::proto::streams::{SendProgress, StreamsConfig, WindowPolicy};

/// A stream with bytes 0..1000 acknowledged, a hole 1000..2200 and `above` bytes acknowledged above it.
fn holey(above: u64) -> SendProgress {
    SendProgress {
        acked_prefix: 1000,
        sent_end: 2200 + above + 5000,
        acked_above: above,
        next_hole: Some((1000, 2200)),
        reinjected_to: 1000,
        credit_blocked: false,
        has_unsent: true,
    }
}

#[test]
fn threshold_trigger_fires_at_the_threshold() {
    let t = 1 << 20;
    assert_eq!(trigger(&holey(t - 1), false, t, true), None);
    assert_eq!(trigger(&holey(t), false, t, true), Some(Trigger::AckThreshold));
    // Already re-sent: no hole left above `reinjected_to`.
    let done = SendProgress {
        next_hole: None,
        reinjected_to: 2200,
        ..holey(t)
    };
    assert_eq!(trigger(&done, false, t, true), None);
    // Nothing acknowledged above the lowest unacknowledged offset: no hole.
    let in_order = SendProgress {
        acked_above: 0,
        next_hole: None,
        ..holey(0)
    };
    assert_eq!(trigger(&in_order, true, t, true), None);
}

#[test]
fn flow_control_trigger_fires_below_the_threshold_when_enabled() {
    let t = 1 << 20;
    // Connection credit used up while data waits.
    assert_eq!(trigger(&holey(1200), true, t, true), Some(Trigger::FlowControl));
    // The stream's own credit used up.
    let stream_blocked = SendProgress {
        credit_blocked: true,
        ..holey(1200)
    };
    assert_eq!(
        trigger(&stream_blocked, false, t, true),
        Some(Trigger::FlowControl)
    );
    // Disabled: only the threshold counts.
    assert_eq!(trigger(&holey(1200), true, t, false), None);
    // Nothing waits to be sent: flow control holds nothing back.
    let all_sent = SendProgress {
        has_unsent: false,
        ..holey(1200)
    };
    assert_eq!(trigger(&all_sent, true, t, true), None);
}

#[test]
fn configuration_ranges_and_default_threshold() {
    let c = ReinjectionConfig::default();
    assert!(c.enabled && c.penalise && c.on_flow_control && c.ack_threshold.is_none());
    // An eighth of the default 8 MiB send buffer: 1 MiB.
    assert_eq!(c.threshold(8 << 20), 1 << 20);
    // Never below one packet.
    assert_eq!(c.threshold(1000), MIN_ACK_THRESHOLD);
    for bad in [0, MIN_ACK_THRESHOLD - 1, MAX_ACK_THRESHOLD + 1, u64::MAX] {
        let c = ReinjectionConfig {
            ack_threshold: Some(bad),
            ..Default::default()
        };
        assert_eq!(c.validate(), Err(ReinjectionConfigError::AckThreshold(bad)));
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("reinjection.ack_threshold")
        );
    }
    for good in [MIN_ACK_THRESHOLD, 1 << 20, MAX_ACK_THRESHOLD] {
        let c = ReinjectionConfig {
            ack_threshold: Some(good),
            ..Default::default()
        };
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.threshold(8 << 20), good);
    }
}

/// NewReno that reports every path past slow start ("congestion_avoidance"), so that the penalty, which spares
/// a path still in slow start, can be observed on a transfer too short to leave it.
#[derive(Debug)]
struct PastSlowStart(Box<dyn crate::cc::CongestionController>);

impl crate::cc::CongestionController for PastSlowStart {
    fn name(&self) -> &'static str {
        "newreno-past-slow-start"
    }
    fn on_path_added(&mut self, path: PathId, now: std::time::Instant, mtu: u16) {
        self.0.on_path_added(path, now, mtu);
    }
    fn on_path_removed(&mut self, path: PathId) {
        self.0.on_path_removed(path);
    }
    fn on_max_datagram_size(&mut self, path: PathId, mtu: u16) {
        self.0.on_max_datagram_size(path, mtu);
    }
    fn on_packet_sent(&mut self, ev: &crate::cc::SentEvent) {
        self.0.on_packet_sent(ev);
    }
    fn on_ack(&mut self, ev: &crate::cc::AckEvent<'_>) {
        self.0.on_ack(ev);
    }
    fn on_congestion(&mut self, ev: &crate::cc::CongestionEvent) {
        self.0.on_congestion(ev);
    }
    fn window(&self, path: PathId) -> u64 {
        self.0.window(path)
    }
    fn pacing_rate(&self, path: PathId) -> Option<u64> {
        self.0.pacing_rate(path)
    }
    fn metrics(&self, path: PathId) -> Option<crate::cc::CcMetrics> {
        self.0.metrics(path)
    }
    fn state(&self, _path: PathId) -> Option<&'static str> {
        Some("congestion_avoidance")
    }
}

/// 64 kB windows (fixed), path 1 80 ms slower each way than path 0 (whose RTT is the harness's 20 ms).
fn small_windows(reinjection: bool) -> TransportConfig {
    TransportConfig {
        streams: StreamsConfig {
            window_policy: WindowPolicy::Fixed,
            stream_window_bidi_local: 64_000,
            stream_window_bidi_remote: 64_000,
            conn_window: 64_000,
            ..Default::default()
        },
        reinjection: ReinjectionConfig {
            enabled: reinjection,
            ..Default::default()
        },
        ..mp_config()
    }
}

/// Runs a 600 kB transfer each way; returns the client's reinjection counters, the transfer's duration and
/// path 1's smallest RTT (the slow path's base RTT).
fn run(
    reinjection: bool,
    past_slow_start: bool,
) -> (crate::proto::connection::ReinjectionStats, Duration, Duration) {
    let mut config = small_windows(reinjection);
    if past_slow_start {
        config.congestion_controller_factory =
            Some(crate::proto::connection::CcFactory(std::sync::Arc::new(|| {
                let inner = crate::cc::registry::build("newreno").unwrap();
                Box::new(PastSlowStart(inner)) as Box<dyn crate::cc::CongestionController>
            })));
    }
    let mut p = Pair::new(None, config, 60);
    p.client_extra_addrs.push(addr(CLIENT2));
    // Path 1 is slow from its first packet on: its minimum RTT is 20 + 2 · 80 ms.
    p.extra_delay.insert(addr(CLIENT2), Duration::from_millis(80));
    p.handshake();
    super::multipath::open_second_path(&mut p, Duration::from_secs(3));
    let start = p.now;
    transfer_with(&mut p, 600_000, 1, |_| {});
    let elapsed = p.now - start;
    let c = p.client.conn();
    let min_rtt1 = c.path_stats(PathId(1)).unwrap().min_rtt;
    (c.stats().reinjection, elapsed, min_rtt1)
}

#[test]
fn slow_path_holes_are_resent_and_the_path_penalised_at_most_once_per_rtt() {
    let (off, slow, _) = run(false, true);
    assert_eq!(off, Default::default());
    let (on, fast, min_rtt1) = run(true, true);
    eprintln!("without: {slow:?}; with: {fast:?}, {on:?}, path 1 min RTT {min_rtt1:?}");
    // transfer_with checked every byte both ways (SHA-256).
    assert!(on.holes > 0 && on.bytes > 0 && on.packets > 0, "{on:?}");
    assert!(
        on.on_flow_control > 0,
        "64 kB windows bind before 1 MiB is acknowledged: {on:?}"
    );
    // At most once per smoothed RTT of path 1, which is never below its minimum RTT (≥ 20 + 160 ms).
    assert!(min_rtt1 >= Duration::from_millis(180), "{min_rtt1:?}");
    let most = (fast.as_nanos() / min_rtt1.as_nanos()) as u64 + 1;
    assert!(
        on.penalisations >= 1 && on.penalisations <= most,
        "{} penalisations in {fast:?} (at most {most})",
        on.penalisations
    );
    // Each hole is re-sent once: never more copies than the data.
    assert!(on.bytes < 600_000, "{on:?}");
    // The window no longer waits for the slow path: the transfer finishes sooner.
    assert!(fast < slow, "{fast:?} with, {slow:?} without");
}

/// The same transfer with the default controller: 64 kB windows keep both paths in slow start (no loss), so
/// holes are re-sent but path 1 is never penalised (Linux keeps a slow-starting subflow's threshold; a
/// congestion event would end its slow start).
#[test]
fn a_path_in_slow_start_is_not_penalised() {
    let (on, _, _) = run(true, false);
    assert!(on.holes > 0 && on.packets > 0, "{on:?}");
    assert_eq!(on.penalisations, 0, "{on:?}");
}

#[test]
fn a_single_path_never_reinjects() {
    let mut p = Pair::new(None, small_windows(true), 61);
    p.handshake();
    transfer_with(&mut p, 300_000, 1, |_| {});
    assert_eq!(p.client.conn().stats().reinjection, Default::default());
    assert_eq!(p.server.conn().stats().reinjection, Default::default());
}
