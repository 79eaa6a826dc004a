//! A human-readable summary of a validated scenario: what `mpquic-sim validate` prints.

use std::fmt::Write as _;

use super::{EventAction, NodeSpec, Scenario, Topology};
use crate::link::{LinkConfig, LossModel, QueueLimit};
use crate::units::format_duration;

/// Formats a rate in bits per second with a decimal unit (`3 Gbit/s`, `12.5 Mbit/s`).
pub fn format_rate(bps: u64) -> String {
    let units = [
        (1_000_000_000u64, "Gbit/s"),
        (1_000_000, "Mbit/s"),
        (1_000, "kbit/s"),
    ];
    for (scale, unit) in units {
        if bps >= scale {
            // Exact to three decimals, trailing zeros dropped; precision loss above 2^53 bit/s is harmless.
            #[allow(clippy::cast_precision_loss)]
            let value = bps as f64 / scale as f64;
            let text = format!("{value:.3}");
            let text = text.trim_end_matches('0').trim_end_matches('.');
            return format!("{text} {unit}");
        }
    }
    format!("{bps} bit/s")
}

fn describe_direction(c: &LinkConfig) -> String {
    let mut parts = vec![format_rate(c.rate_bps), format_duration(c.delay)];
    match &c.loss {
        LossModel::None => {}
        LossModel::Bernoulli { p } => parts.push(format!("loss {}%", p * 100.0)),
        LossModel::GilbertElliott { .. } => {
            parts.push(format!("GE loss ≈{:.3}%", c.loss.stationary_loss_rate() * 100.0));
        }
        LossModel::Burst { p, burst } => parts.push(format!("loss {}% in bursts of {burst}", p * 100.0)),
    }
    parts.push(match &c.queue {
        QueueLimit::Bytes { bytes } => format!("queue {bytes} B"),
        QueueLimit::Packets { packets } => format!("queue {packets} pkts"),
        QueueLimit::Bdp { multiple, base_rtt } => match base_rtt {
            Some(rtt) => format!("queue {multiple}×BDP@{}", format_duration(*rtt)),
            None => format!("queue {multiple}×BDP"),
        },
    });
    if !c.up {
        parts.push("starts down".to_owned());
    }
    parts.join(", ")
}

impl Scenario {
    /// A multi-line summary: nodes, links, flows with their resolved paths, events and sweep size.
    pub fn summary(&self, topology: &Topology) -> String {
        let mut out = String::new();
        let meta = &self.scenario;
        let _ = writeln!(
            out,
            "scenario {}: {} simulated, seed {}, sample every {}{}",
            meta.name,
            format_duration(meta.duration),
            meta.seed,
            format_duration(meta.sample_interval),
            match meta.crypto {
                super::Crypto::Aes128gcm => "",
                super::Crypto::Null => ", null cipher",
            }
        );
        let _ = writeln!(out, "nodes:");
        for (name, node) in &self.nodes {
            match node {
                NodeSpec::Router => {
                    let _ = writeln!(out, "  {name} (router)");
                }
                NodeSpec::Host { interfaces } => {
                    let ifaces: Vec<String> = interfaces
                        .iter()
                        .map(|i| match i.address {
                            Some(a) => format!("{} {a}", i.name),
                            None => i.name.clone(),
                        })
                        .collect();
                    let _ = writeln!(out, "  {name} (host: {})", ifaces.join(", "));
                }
            }
        }
        let _ = writeln!(out, "links:");
        for (name, link) in &self.links {
            let ends = topology
                .links
                .get(name)
                .map(|[a, b]| format!("{a} <-> {b}"))
                .unwrap_or_default();
            let forward = link.forward();
            let reverse = link.reverse();
            if forward == reverse {
                let _ = writeln!(out, "  {name}: {ends}: {}", describe_direction(&forward));
            } else {
                let _ = writeln!(
                    out,
                    "  {name}: {ends}: forward {}; reverse {}",
                    describe_direction(&forward),
                    describe_direction(&reverse)
                );
            }
        }
        let _ = writeln!(out, "flows:");
        for (flow, resolved) in self.flows.iter().zip(&topology.flows) {
            let stop = format_duration(flow.stop_or(meta.duration));
            let mut bytes = flow.bytes.map(|b| format!(", {b} bytes")).unwrap_or_default();
            if flow.direction == super::flow::TransferDirection::Download {
                bytes.push_str(", download");
            }
            let _ = writeln!(
                out,
                "  {}: {} -> {}, cc {}, sched {}, {}..{stop}{bytes}",
                flow.name,
                flow.from,
                flow.to,
                flow.cc,
                flow.sched,
                format_duration(flow.start)
            );
            for (p, path) in resolved.paths.iter().enumerate() {
                let hops: Vec<String> = path.forward.iter().map(ToString::to_string).collect();
                let spec = flow.paths.get(p);
                let verb = if spec.is_some_and(|s| s.migrate) {
                    "migrates"
                } else {
                    "opens"
                };
                let mut opens = spec
                    .and_then(|s| s.start)
                    .map(|t| format!(", {verb} at {}", format_duration(t)))
                    .unwrap_or_default();
                if let Some(t) = spec.and_then(|s| s.stop) {
                    opens.push_str(&format!(", closes at {}", format_duration(t)));
                }
                if let Some(origin) = &path.leaves_from {
                    opens.push_str(&format!(", spoofed: leaves from {origin}"));
                }
                let _ = writeln!(
                    out,
                    "    path {p}: {} -> {} via {} (capacity {}{opens})",
                    path.local,
                    path.remote,
                    hops.join(" "),
                    format_rate(path.capacity_bps)
                );
            }
        }
        if !self.events.is_empty() {
            let _ = writeln!(out, "events:");
            for event in &self.events {
                let what = match event.action {
                    EventAction::Down => "down".to_owned(),
                    EventAction::Up => "up".to_owned(),
                    EventAction::Set => "set".to_owned(),
                };
                let _ = writeln!(
                    out,
                    "  {}: link {} {what} ({})",
                    format_duration(event.at),
                    event.link,
                    match event.direction {
                        super::EventDirection::Both => "both directions",
                        super::EventDirection::Forward => "forward",
                        super::EventDirection::Reverse => "reverse",
                    }
                );
            }
        }
        if let Some(sweep) = &self.sweep {
            let axes = sweep.all_axes();
            let combos: usize = axes.iter().map(|a| a.values.len()).product();
            let seeds = sweep.seeds.len().max(1);
            let _ = writeln!(
                out,
                "sweep: {} ({} combinations × {seeds} seed(s) = {} runs)",
                axes.iter()
                    .map(|a| a.parameter.label())
                    .collect::<Vec<_>>()
                    .join(" × "),
                combos,
                combos.saturating_mul(seeds)
            );
        }
        out
    }
}
