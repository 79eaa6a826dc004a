//! `mpquic-cc-demo`: runs one congestion controller over a synthetic multipath trace and prints each path's
//! window, RTT and goodput over time, so a newcomer sees the crate do something.
//!
//! The trace is a small packet-level model, not the project's simulator: each path is a bottleneck link (rate,
//! round-trip delay split evenly, drop-tail queue sized in BDPs, random loss); the receiver acknowledges every
//! packet at once; the sender is always backlogged, obeys the controller's windows and pacing rates, measures
//! RTT as RFC 9002 §5 says, and declares a packet lost when a packet sent three later is acknowledged
//! (RFC 9002 §6.1.1) or after a probe timeout with no acknowledgement.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::process::ExitCode;
use std::str::FromStr;
use std::time::{Duration, Instant};

use clap::Parser;
use mpquic_cc::{
    AckEvent, AckedPacket, CongestionController, CongestionEvent, DeliveryRateEstimator, PacketDeliveryState,
    PathId, RttSnapshot, SentEvent, registry,
};

/// Command line.
#[derive(Parser, Debug)]
#[command(about = "Print a congestion controller's per-path windows on a synthetic multipath trace")]
struct Args {
    /// List every congestion controller and exit.
    #[arg(long)]
    list: bool,
    /// Controller specification, e.g. `olia`, `cubic`, `ccubic:variant=a2`.
    #[arg(long, default_value = "lia")]
    cc: String,
    /// A path as `RATE_MBPS/RTT_MS/LOSS_PERCENT`; repeat for each path.
    #[arg(long = "path", default_values = ["20/20/0.01", "10/60/0.05"])]
    paths: Vec<PathSpec>,
    /// Simulated seconds.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Milliseconds between table rows.
    #[arg(long, default_value_t = 500)]
    interval_ms: u64,
    /// Drop-tail queue of each path, in multiples of its bandwidth-delay product.
    #[arg(long, default_value_t = 1.0)]
    queue_bdp: f64,
    /// Maximum datagram size in bytes.
    #[arg(long, default_value_t = 1200)]
    mss: u16,
    /// Seed of the random losses.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// One path of the trace.
#[derive(Clone, Copy, Debug)]
struct PathSpec {
    rate_bps: f64,
    rtt: Duration,
    loss: f64,
}

impl FromStr for PathSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split('/').collect();
        let [rate, rtt, loss] = parts.as_slice() else {
            return Err(format!("`{s}`: expected RATE_MBPS/RTT_MS/LOSS_PERCENT"));
        };
        let num = |v: &str, what: &str, max: f64| -> Result<f64, String> {
            match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 && x <= max => Ok(x),
                _ => Err(format!("`{s}`: bad {what} `{v}` (0..={max})")),
            }
        };
        let rate = num(rate, "rate", 100_000.0)?;
        let rtt = num(rtt, "RTT", 10_000.0)?;
        if rate <= 0.0 || rtt <= 0.0 {
            return Err(format!("`{s}`: rate and RTT must be positive"));
        }
        Ok(PathSpec {
            rate_bps: rate * 1e6,
            rtt: Duration::from_secs_f64(rtt / 1e3),
            loss: num(loss, "loss", 100.0)? / 100.0,
        })
    }
}

/// A small deterministic generator for the random losses (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct SentPacket {
    time: Duration,
    bytes: u64,
    delivery: PacketDeliveryState,
}

/// Sender and link state of one path.
struct Path {
    id: PathId,
    spec: PathSpec,
    queue_bytes: f64,
    /// When the bottleneck finishes serialising what it holds.
    busy_until: Duration,
    next_pn: u64,
    sent: BTreeMap<u64, SentPacket>,
    in_flight: u64,
    largest_acked: Option<u64>,
    rtt: Option<RttSnapshot>,
    next_send: Duration,
    wake_pending: bool,
    rate: DeliveryRateEstimator,
    delivered_bytes: u64,
    delivered_at_row: u64,
    lost_packets: u64,
}

impl Path {
    fn new(id: u32, spec: PathSpec, queue_bdp: f64, mss: u64) -> Path {
        let bdp = spec.rate_bps / 8.0 * spec.rtt.as_secs_f64();
        Path {
            id: PathId(id),
            spec,
            queue_bytes: (bdp * queue_bdp).max(2.0 * mss as f64),
            busy_until: Duration::ZERO,
            next_pn: 0,
            sent: BTreeMap::new(),
            in_flight: 0,
            largest_acked: None,
            rtt: None,
            next_send: Duration::ZERO,
            wake_pending: false,
            rate: DeliveryRateEstimator::new(),
            delivered_bytes: 0,
            delivered_at_row: 0,
            lost_packets: 0,
        }
    }

    /// RFC 9002 §5.3 RTT estimation (acknowledgements are immediate, so ack delay is 0).
    fn update_rtt(&mut self, sample: Duration) {
        self.rtt = Some(match self.rtt {
            None => RttSnapshot::from_rtt(sample),
            Some(r) => {
                let min = r.min.min(sample);
                let var_sample = r.smoothed.abs_diff(sample);
                RttSnapshot {
                    latest: sample,
                    smoothed: (r.smoothed * 7 + sample) / 8,
                    rttvar: (r.rttvar * 3 + var_sample) / 4,
                    min,
                }
            }
        });
    }

    /// RFC 9002 §6.2.1 probe timeout (no ack delay here).
    fn pto(&self) -> Duration {
        match self.rtt {
            Some(r) => r.smoothed + (r.rttvar * 4).max(Duration::from_millis(1)),
            None => Duration::from_millis(999),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The acknowledgement of packet `pn` reaches the sender.
    Ack { path: usize, pn: u64 },
    /// The pacer allows the next packet on `path`.
    Wake { path: usize },
    /// Probe-timeout check on `path`.
    Pto { path: usize },
}

struct Sim {
    t0: Instant,
    cc: Box<dyn CongestionController>,
    paths: Vec<Path>,
    events: BinaryHeap<Reverse<(Duration, u64, Event)>>,
    seq: u64,
    rng: Rng,
    mss: u64,
}

impl Sim {
    fn at(&self, t: Duration) -> Instant {
        self.t0 + t
    }

    fn schedule(&mut self, t: Duration, ev: Event) {
        self.seq += 1;
        self.events.push(Reverse((t, self.seq, ev)));
    }

    /// Sends on path `i` while its window and pacer allow.
    fn send(&mut self, i: usize, now: Duration) {
        loop {
            let Some(p) = self.paths.get_mut(i) else { return };
            let window = self.cc.window(p.id);
            let pacing = self.cc.pacing_rate(p.id);
            if p.in_flight + self.mss > window {
                return;
            }
            if now < p.next_send {
                if !p.wake_pending {
                    p.wake_pending = true;
                    let t = p.next_send;
                    self.schedule(t, Event::Wake { path: i });
                }
                return;
            }
            let pn = p.next_pn;
            p.next_pn += 1;
            let delivery = p.rate.on_packet_sent(self.t0 + now, p.in_flight);
            p.in_flight += self.mss;
            p.sent.insert(
                pn,
                SentPacket {
                    time: now,
                    bytes: self.mss,
                    delivery,
                },
            );
            if let Some(rate) = pacing.filter(|r| *r > 0) {
                p.next_send = now + Duration::from_secs_f64(self.mss as f64 / rate as f64);
            }
            // The bottleneck: tail drop when the queue is full, then random loss.
            let backlog = p.busy_until.saturating_sub(now).as_secs_f64() * p.spec.rate_bps / 8.0;
            let dropped = backlog + self.mss as f64 > p.queue_bytes || self.rng.next_f64() < p.spec.loss;
            let mut ack_at = None;
            if !dropped {
                p.busy_until =
                    p.busy_until.max(now) + Duration::from_secs_f64(self.mss as f64 * 8.0 / p.spec.rate_bps);
                ack_at = Some(p.busy_until + p.spec.rtt);
            }
            let (id, in_flight, pto) = (p.id, p.in_flight, p.pto());
            if let Some(t) = ack_at {
                self.schedule(t, Event::Ack { path: i, pn });
            }
            self.cc.on_packet_sent(&SentEvent {
                path: id,
                now: self.at(now),
                bytes: self.mss,
                bytes_in_flight: in_flight,
                app_limited: false,
            });
            self.schedule(now + pto, Event::Pto { path: i });
        }
    }

    fn on_ack(&mut self, i: usize, pn: u64, now: Duration) {
        let t = self.at(now);
        let Some(p) = self.paths.get_mut(i) else { return };
        let Some(packet) = p.sent.remove(&pn) else { return };
        let prior_in_flight = p.in_flight;
        p.in_flight -= packet.bytes;
        p.delivered_bytes += packet.bytes;
        p.update_rtt(now - packet.time);
        p.largest_acked = Some(p.largest_acked.map_or(pn, |l| l.max(pn)));
        p.rate.on_packet_acked(t, &packet.delivery, packet.bytes);
        // RFC 9002 §6.1.1: packet threshold 3.
        let lost: Vec<u64> = p.sent.range(..pn.saturating_sub(2)).map(|(k, _)| *k).collect();
        let lost_packets: Vec<SentPacket> = lost.iter().filter_map(|k| p.sent.remove(k)).collect();
        let lost_bytes: u64 = lost_packets.iter().map(|s| s.bytes).sum();
        p.in_flight -= lost_bytes;
        p.lost_packets += lost_packets.len() as u64;
        if lost_bytes > 0 {
            p.rate.on_packets_lost(lost_bytes);
        }
        let rtt = p.rtt.unwrap_or_else(|| RttSnapshot::from_rtt(now - packet.time));
        let sample = p.rate.generate_sample(t, prior_in_flight, Some(rtt.min));
        let (id, in_flight) = (p.id, p.in_flight);
        let acked = [AckedPacket {
            bytes: packet.bytes,
            time_sent: self.at(packet.time),
        }];
        self.cc.on_ack(&AckEvent {
            path: id,
            now: t,
            rtt,
            packets: &acked,
            prior_bytes_in_flight: prior_in_flight,
            bytes_in_flight: in_flight + lost_bytes,
            app_limited: false,
            rate_sample: sample,
        });
        if let Some(newest) = lost_packets.iter().map(|s| s.time).max() {
            self.cc.on_congestion(&CongestionEvent {
                path: id,
                now: t,
                sent_time: self.at(newest),
                lost_bytes,
                bytes_in_flight: in_flight,
                persistent_congestion: false,
                ecn: false,
                rtt,
            });
        }
        self.send(i, now);
    }

    fn on_pto(&mut self, i: usize, now: Duration) {
        let t = self.at(now);
        let Some(p) = self.paths.get_mut(i) else { return };
        let pto = p.pto();
        let expired: Vec<u64> = p
            .sent
            .iter()
            .filter(|(_, s)| s.time + pto <= now)
            .map(|(k, _)| *k)
            .collect();
        if expired.is_empty() {
            return;
        }
        let lost: Vec<SentPacket> = expired.iter().filter_map(|k| p.sent.remove(k)).collect();
        let lost_bytes: u64 = lost.iter().map(|s| s.bytes).sum();
        p.in_flight -= lost_bytes;
        p.lost_packets += lost.len() as u64;
        p.rate.on_packets_lost(lost_bytes);
        let newest = lost.iter().map(|s| s.time).max().unwrap_or(now);
        let rtt = p
            .rtt
            .unwrap_or_else(|| RttSnapshot::from_rtt(Duration::from_millis(333)));
        let (id, in_flight) = (p.id, p.in_flight);
        self.cc.on_congestion(&CongestionEvent {
            path: id,
            now: t,
            sent_time: self.at(newest),
            lost_bytes,
            bytes_in_flight: in_flight,
            persistent_congestion: false,
            ecn: false,
            rtt,
        });
        self.send(i, now);
    }
}

fn print_list() {
    println!("{:<10} {:<10} description (parameters)", "name", "coupling");
    for a in registry::list() {
        let params = if a.params.is_empty() {
            String::new()
        } else {
            format!(" ({})", a.params.join(", "))
        };
        println!(
            "{:<10} {:<10} {}{}",
            a.name,
            format!("{:?}", a.coupling).to_lowercase(),
            a.description,
            params
        );
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.list {
        print_list();
        return ExitCode::SUCCESS;
    }
    let cc = match registry::build(&args.cc) {
        Ok(cc) => cc,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if args.paths.is_empty() || args.duration <= 0.0 || args.interval_ms == 0 || args.mss < 1200 {
        eprintln!("error: need at least one path, a positive duration and interval, and --mss >= 1200");
        return ExitCode::from(2);
    }
    #[allow(clippy::disallowed_methods)] // the demo's virtual clock needs one real base instant
    let t0 = Instant::now();
    let mss = u64::from(args.mss);
    let mut sim = Sim {
        t0,
        cc,
        paths: args
            .paths
            .iter()
            .enumerate()
            .map(|(i, s)| Path::new(i as u32, *s, args.queue_bdp, mss))
            .collect(),
        events: BinaryHeap::new(),
        seq: 0,
        rng: Rng(args.seed),
        mss,
    };
    let ids: Vec<PathId> = sim.paths.iter().map(|p| p.id).collect();
    for (i, id) in ids.into_iter().enumerate() {
        sim.cc.on_path_added(id, t0, args.mss);
        sim.send(i, Duration::ZERO);
    }

    println!("controller: {}   ({})", sim.cc.name(), args.cc);
    for p in &sim.paths {
        println!(
            "{}: {:.1} Mbit/s, RTT {:.0} ms, loss {:.3} %, queue {:.0} packets",
            p.id,
            p.spec.rate_bps / 1e6,
            p.spec.rtt.as_secs_f64() * 1e3,
            p.spec.loss * 100.0,
            p.queue_bytes / mss as f64
        );
    }
    let mut header = format!("{:>7}", "t (s)");
    for p in &sim.paths {
        header += &format!(" | p{} cwnd(pkt) srtt(ms) Mbit/s", p.id.0);
    }
    println!("{header}");

    let end = Duration::from_secs_f64(args.duration);
    let interval = Duration::from_millis(args.interval_ms);
    let mut next_row = interval;
    while let Some(Reverse((t, _, ev))) = sim.events.pop() {
        while t >= next_row && next_row <= end {
            let mut row = format!("{:>7.2}", next_row.as_secs_f64());
            for p in &mut sim.paths {
                let cwnd = sim.cc.window(p.id) as f64 / mss as f64;
                let srtt = p.rtt.map_or(0.0, |r| r.smoothed.as_secs_f64() * 1e3);
                let mbps =
                    (p.delivered_bytes - p.delivered_at_row) as f64 * 8.0 / interval.as_secs_f64() / 1e6;
                p.delivered_at_row = p.delivered_bytes;
                row += &format!(" | {cwnd:>15.1} {srtt:>8.1} {mbps:>6.2}");
            }
            println!("{row}");
            next_row += interval;
        }
        if t > end {
            break;
        }
        match ev {
            Event::Ack { path, pn } => sim.on_ack(path, pn, t),
            Event::Wake { path } => {
                if let Some(p) = sim.paths.get_mut(path) {
                    p.wake_pending = false;
                }
                sim.send(path, t);
            }
            Event::Pto { path } => sim.on_pto(path, t),
        }
    }

    println!();
    let mut total = 0.0;
    for p in &sim.paths {
        let mbps = p.delivered_bytes as f64 * 8.0 / end.as_secs_f64() / 1e6;
        total += mbps;
        let metrics = sim.cc.metrics(p.id).unwrap_or_default();
        let extras: Vec<String> = metrics
            .extras
            .iter()
            .map(|m| format!("{}={:.4}", m.name, m.value))
            .collect();
        println!(
            "{}: {:.2} Mbit/s ({:.0} % of link), {} packets lost, state {}, {}",
            p.id,
            mbps,
            mbps * 1e6 / p.spec.rate_bps * 100.0,
            p.lost_packets,
            metrics.state,
            extras.join(" ")
        );
    }
    println!("total goodput: {total:.2} Mbit/s");
    ExitCode::SUCCESS
}
