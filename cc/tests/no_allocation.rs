//! Every registered controller handles the per-packet events without allocating: `on_packet_sent`,
//! `on_ack`, `on_congestion`, `on_penalize`, `window`, `pacing_rate` and `state` are called for every
//! datagram a connection sends or acknowledges, so an allocation in any of them is paid millions of times
//! per second at gigabit rates (in the simulator and in the runtime alike).
//!
//! The check counts the heap allocations the test's own thread makes (the `allocation-counter` crate's
//! counting global allocator, which forwards to the system's) while a controller with three paths of
//! different RTTs runs through sends, acknowledgements with rate samples, losses, ECN signals and
//! penalties, after a warm-up long enough for every internal history (filters, sample windows, queues) to
//! reach its steady capacity. `metrics()` is excluded: it is read per sample interval and returns a vector
//! by design.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::disallowed_methods,
    missing_docs
)]

use std::time::{Duration, Instant};

use mpquic_cc::{
    AckEvent, AckedPacket, CongestionController, CongestionEvent, PathId, RateSample, RttSnapshot, SentEvent,
    registry,
};

/// Allocations (reallocations included) made by this thread while `f` runs.
fn allocations_in(f: impl FnOnce()) -> u64 {
    allocation_counter::measure(f).count_total
}

const MSS: u16 = 1200;
const PATHS: [(u32, u64); 3] = [(0, 10), (1, 40), (2, 120)];

/// A sender driving `cc` over the three paths: per round, each path sends a flight, gets it acknowledged in
/// groups of two packets (with a rate sample), and every few rounds sees a loss, an ECN mark or a penalty.
struct Driver {
    now: Instant,
    in_flight: [u64; 3],
    delivered: [u64; 3],
    acked: Vec<AckedPacket>,
    round: u64,
}

impl Driver {
    fn new(cc: &mut dyn CongestionController) -> Self {
        let now = Instant::now();
        for (id, _) in PATHS {
            cc.on_path_added(PathId(id), now, MSS);
        }
        Driver {
            now,
            in_flight: [0; 3],
            delivered: [0; 3],
            acked: Vec::with_capacity(2),
            round: 0,
        }
    }

    /// One round on every path; the reads a connection makes after each event included.
    fn round(&mut self, cc: &mut dyn CongestionController) {
        self.round += 1;
        for (i, (id, rtt_ms)) in PATHS.into_iter().enumerate() {
            let path = PathId(id);
            // Jitter of a few per cent, so that delay-based controllers see changing samples.
            let rtt = Duration::from_micros(
                rtt_ms * 1000 + (self.round * 7919 + u64::from(id) * 104_729) % (rtt_ms * 50),
            );
            let bytes = u64::from(MSS);
            let flight = (cc.window(path) / bytes).clamp(2, 64);
            let sent_at = self.now;
            for _ in 0..flight {
                self.in_flight[i] += bytes;
                cc.on_packet_sent(&SentEvent {
                    path,
                    now: self.now,
                    bytes,
                    bytes_in_flight: self.in_flight[i],
                    app_limited: false,
                });
                let _ = (cc.window(path), cc.pacing_rate(path), cc.state(path));
            }
            let ack_time = self.now + rtt;
            for _ in 0..flight / 2 {
                self.acked.clear();
                self.acked.extend((0..2).map(|_| AckedPacket {
                    bytes,
                    time_sent: sent_at,
                }));
                let prior = self.in_flight[i];
                self.in_flight[i] -= 2 * bytes;
                self.delivered[i] += 2 * bytes;
                let rate = RateSample {
                    delivery_rate: cc.window(path).max(bytes) * 1_000_000 / rtt.as_micros().max(1) as u64,
                    delivered: 2 * bytes,
                    interval: rtt,
                    prior_delivered: self.delivered[i] - 2 * bytes,
                    total_delivered: self.delivered[i],
                    rtt,
                    is_app_limited: false,
                    prior_in_flight: prior,
                    newly_acked: 2 * bytes,
                    newly_lost: 0,
                };
                cc.on_ack(&AckEvent {
                    path,
                    now: ack_time,
                    rtt: RttSnapshot {
                        latest: rtt,
                        smoothed: rtt,
                        rttvar: rtt / 8,
                        min: Duration::from_millis(rtt_ms),
                    },
                    packets: &self.acked,
                    prior_bytes_in_flight: prior,
                    bytes_in_flight: self.in_flight[i],
                    app_limited: false,
                    rate_sample: Some(rate),
                });
                let _ = (cc.window(path), cc.pacing_rate(path), cc.state(path));
            }
            // The odd packet of the flight is lost, marked or penalised in turn.
            if flight % 2 == 1 {
                self.in_flight[i] -= bytes;
                let kind = (self.round + u64::from(id)) % 4;
                let ev = CongestionEvent {
                    path,
                    now: ack_time,
                    sent_time: sent_at,
                    lost_bytes: if kind == 1 { 0 } else { bytes },
                    bytes_in_flight: self.in_flight[i],
                    persistent_congestion: false,
                    ecn: kind == 1,
                    rtt: RttSnapshot::from_rtt(rtt),
                };
                match kind {
                    0 | 1 => cc.on_congestion(&ev),
                    2 => cc.on_penalize(&ev),
                    _ => {}
                }
                let _ = (cc.window(path), cc.pacing_rate(path), cc.state(path));
            }
            self.in_flight[i] = 0;
        }
        self.now += Duration::from_millis(10);
    }
}

#[test]
fn per_packet_events_allocate_nothing() {
    let mut allocating = Vec::new();
    for info in registry::list() {
        let mut cc = registry::build(info.name).unwrap();
        let mut driver = Driver::new(cc.as_mut());
        // Warm-up: 60 simulated seconds, longer than any controller's history (BBR's 10 s min-RTT window,
        // CDG's and the delay-based sample windows).
        for _ in 0..6_000 {
            driver.round(cc.as_mut());
        }
        let n = allocations_in(|| {
            for _ in 0..500 {
                driver.round(cc.as_mut());
            }
        });
        if n > 0 {
            allocating.push(format!("{} ({n} allocations in 500 rounds)", info.name));
        }
    }
    assert!(
        allocating.is_empty(),
        "controllers allocating per event: {allocating:?}"
    );
}

#[test]
fn the_counter_sees_an_allocation() {
    // The check above can fail: a vector built inside the counted region is seen.
    let n = allocations_in(|| {
        let v: Vec<u64> = (0..16).collect();
        std::hint::black_box(v);
    });
    assert!(n >= 1);
}
