//! The soak scenario: a random network, connections, path churn, loss and outages, drawn from one seed.
//!
//! **Topology.** `hosts` client hosts `c0…`, each with three interfaces on its own access link to one of
//! three access routers: `wifi` (router `rw`), `lte` (`rl`, slower upstream) and `wired` (`rf`). Each access
//! router reaches both of the server's gateways `g0`, `g1` over a core link (6 core links), and each
//! gateway the server's interface `s0` or `s1`. A path is one (client interface, server interface) pair,
//! so a connection has up to 6 paths, each its own route: access link, core link, server link.
//!
//! | links | rate (forward / reverse) | one-way delay | random loss |
//! |---|---|---|---|
//! | `c<h>_wifi` | 8 Mbit/s | 4–12 ms | Bernoulli, p ∈ [0, 1 %] |
//! | `c<h>_lte` | 3 / 6 Mbit/s (client → server / back) | 20–40 ms | Gilbert–Elliott bursts (mean burst 3 packets), ≈ 0.1–1 % |
//! | `c<h>_wired` | 12 Mbit/s | 1–3 ms | none |
//! | `core_<r>_<g>` | 200 Mbit/s | 2–10 ms | Bernoulli, p ∈ [0, 0.1 %] |
//! | `srv<g>` | 500 Mbit/s | 1 ms | none |
//!
//! The access links are the bottlenecks (default queues: one BDP). Every 10 % of the run each access link
//! may draw a new loss rate (a `set` event).
//!
//! **Connections.** Each is one flow of a random client host to the server, starting at a uniform time in
//! the first 70 % of the run, transferring a log-uniform number of bytes in `[min_bytes, max_bytes]`,
//! upload or download with equal odds, with 1 to 4 distinct paths (1: 40 %, 2: 30 %, 3: 20 %, 4: 10 %).
//! Single-path flows run `cubic`, `newreno` or `bbr`; multipath ones one of `lia`, `olia`, `balia`,
//! `cubic`, `bbr` with the `minrtt`, `ecf`, `blest` or `roundrobin` scheduler. With `T` the transfer's
//! time at a nominal 2 Mbit/s (at least 1 s), a later path opens at a uniform time in the flow's first
//! `T / 2`, and with probability 0.5 a path of a multipath flow (the first included) closes again `T / 10`
//! to `T` after it opened, so that the churn falls inside the transfers. The engine closes a path only
//! while another is validated, and its dead-path policy (3 PTOs) abandons and re-opens paths on top of
//! that.
//!
//! **Outages.** Every link goes down at the times of a Poisson process of mean interval `duration / 10`
//! (the server links: `duration / 3`), each time for a uniform `duration / 3000` to `duration / 60`
//! (0.2–10 s of 10 minutes), outages of a link never overlapping, all over by 90 % of the run so that the
//! last transfers can finish.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;

use super::SoakConfig;

/// The access technologies: interface and router name suffix, and the access router.
const ACCESS: [(&str, &str); 3] = [("wifi", "rw"), ("lte", "rl"), ("wired", "rf")];

/// The rate that scales a connection's path churn (see the module documentation).
const NOMINAL_BPS: f64 = 2e6;

/// Share of the run during which connections start.
const ARRIVALS: f64 = 0.7;
/// Share of the run by which every outage is over.
const OUTAGES_END: f64 = 0.9;

/// What the generator drew, for the report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Drawn {
    /// Bytes per connection, in flow order.
    pub bytes: Vec<u64>,
    /// Connections with two or more paths.
    pub multipath: usize,
    /// Download connections.
    pub downloads: usize,
    /// Paths over all connections.
    pub paths: usize,
    /// Paths with a scheduled close.
    pub scheduled_closes: usize,
    /// Link outages (down/up pairs).
    pub outages: usize,
    /// Loss changes (`set` events).
    pub loss_changes: usize,
}

fn secs(d: f64) -> String {
    format!("{:.6}s", d.max(0.0))
}

fn uniform(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    if hi <= lo { lo } else { rng.random_range(lo..hi) }
}

/// One event line of the `events` array, with its time for sorting.
struct Ev {
    at: f64,
    text: String,
}

/// The scenario's TOML text and what was drawn (see the module documentation).
pub fn generate(config: &SoakConfig) -> (String, Drawn) {
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let d = config.duration.as_secs_f64();
    let mut drawn = Drawn::default();
    let mut t = String::new();
    let _ = writeln!(
        t,
        "[scenario]\nname = \"soak\"\ndescription = \"{} connections, {} client hosts, random paths, loss and outages\"\n\
         duration = \"{}\"\nseed = {}\nsample_interval = \"{}\"\n",
        config.connections,
        config.hosts,
        secs(d),
        config.seed,
        secs(d / 10.0)
    );
    // Nodes.
    let _ = writeln!(
        t,
        "[nodes.srv]\nkind = \"host\"\ninterfaces = [{{ name = \"s0\" }}, {{ name = \"s1\" }}]\n"
    );
    for r in ["rw", "rl", "rf", "g0", "g1"] {
        let _ = writeln!(t, "[nodes.{r}]\nkind = \"router\"\n");
    }
    for h in 0..config.hosts {
        let _ = writeln!(
            t,
            "[nodes.c{h}]\nkind = \"host\"\ninterfaces = [{{ name = \"wifi\" }}, {{ name = \"lte\" }}, {{ name = \"wired\" }}]\n"
        );
    }
    // Links.
    let mut access = Vec::new();
    for h in 0..config.hosts {
        for (iface, router) in ACCESS {
            let name = format!("c{h}_{iface}");
            let body = match iface {
                "wifi" => format!(
                    "rate_bps = 8_000_000\ndelay = \"{}\"\nloss = {{ kind = \"bernoulli\", p = {:.5} }}",
                    secs(uniform(&mut rng, 0.004, 0.012)),
                    uniform(&mut rng, 0.0, 0.01)
                ),
                "lte" => format!(
                    "rate_bps = 3_000_000\ndelay = \"{}\"\nloss = {}\nreverse = {{ rate_bps = 6_000_000 }}",
                    secs(uniform(&mut rng, 0.020, 0.040)),
                    ge_loss(&mut rng)
                ),
                _ => format!(
                    "rate_bps = 12_000_000\ndelay = \"{}\"",
                    secs(uniform(&mut rng, 0.001, 0.003))
                ),
            };
            let _ = writeln!(
                t,
                "[links.{name}]\nbetween = [\"c{h}.{iface}\", \"{router}\"]\n{body}\n"
            );
            access.push((name, iface));
        }
    }
    let mut core = Vec::new();
    for (_, router) in ACCESS {
        for g in 0..2 {
            let name = format!("core_{router}_g{g}");
            let _ = writeln!(
                t,
                "[links.{name}]\nbetween = [\"{router}\", \"g{g}\"]\nrate_bps = 200_000_000\ndelay = \"{}\"\n\
                 loss = {{ kind = \"bernoulli\", p = {:.5} }}\n",
                secs(uniform(&mut rng, 0.002, 0.010)),
                uniform(&mut rng, 0.0, 0.001)
            );
            core.push(name);
        }
    }
    for g in 0..2 {
        let _ = writeln!(
            t,
            "[links.srv{g}]\nbetween = [\"g{g}\", \"srv.s{g}\"]\nrate_bps = 500_000_000\ndelay = \"1ms\"\n"
        );
    }
    // Flows.
    let window = (d * ARRIVALS).max(0.001);
    let lo = (config.min_bytes.max(1) as f64).ln();
    let hi = (config.max_bytes.max(config.min_bytes).max(1) as f64).ln();
    for f in 0..config.connections {
        let host = rng.random_range(0..config.hosts.max(1));
        let start = uniform(&mut rng, 0.0, window);
        let bytes = uniform(&mut rng, lo, hi).exp().round().max(1.0) as u64;
        // The transfer's time at a nominal 2 Mbit/s (at least 1 s): the scale of its path churn.
        let nominal = (bytes as f64 * 8.0 / NOMINAL_BPS).max(1.0);
        let download = rng.random_bool(0.5);
        let n = match rng.random_range(0..10u32) {
            0..=3 => 1,
            4..=6 => 2,
            7..=8 => 3,
            _ => 4,
        };
        // Distinct (client interface, server interface) pairs.
        let mut pairs: Vec<(usize, usize)> = (0..3).flat_map(|a| (0..2).map(move |s| (a, s))).collect();
        for i in 0..pairs.len() {
            let j = rng.random_range(i..pairs.len());
            pairs.swap(i, j);
        }
        pairs.truncate(n);
        let (cc, sched) = if n == 1 {
            (pick(&mut rng, &["cubic", "newreno", "bbr"]), "minrtt")
        } else {
            (
                pick(&mut rng, &["lia", "olia", "balia", "cubic", "bbr"]),
                pick(&mut rng, &["minrtt", "ecf", "blest", "roundrobin"]),
            )
        };
        let mut paths = Vec::with_capacity(n);
        for (k, &(a, s)) in pairs.iter().enumerate() {
            let (iface, router) = ACCESS.get(a).copied().unwrap_or(("wifi", "rw"));
            let mut p = format!("{{ route = [\"c{host}_{iface}\", \"core_{router}_g{s}\", \"srv{s}\"]");
            let opens = if k == 0 {
                start
            } else {
                (start + uniform(&mut rng, 0.0, 0.5 * nominal)).min(d * 0.999)
            };
            if k > 0 && opens > start {
                let _ = write!(p, ", start = \"{}\"", secs(opens));
            }
            if n > 1 && rng.random_bool(0.5) {
                let close = opens + uniform(&mut rng, 0.1 * nominal, nominal);
                if close < d {
                    let _ = write!(p, ", stop = \"{}\"", secs(close));
                    drawn.scheduled_closes += 1;
                }
            }
            p.push_str(" }");
            paths.push(p);
        }
        let _ = writeln!(
            t,
            "[[flows]]\nname = \"f{f}\"\nfrom = \"c{host}\"\nto = \"srv\"\nstart = \"{}\"\nbytes = {bytes}\ncc = \"{cc}\"\n\
             sched = \"{sched}\"\ndirection = \"{}\"\npaths = [{}]\n",
            secs(start),
            if download { "download" } else { "upload" },
            paths.join(", ")
        );
        drawn.bytes.push(bytes);
        drawn.paths += n;
        drawn.multipath += usize::from(n > 1);
        drawn.downloads += usize::from(download);
    }
    // Events: outages on every link, loss changes on the access links.
    let mut events = Vec::new();
    let server_links = ["srv0".to_owned(), "srv1".to_owned()];
    let all = access
        .iter()
        .map(|(n, _)| (n.clone(), d / 10.0))
        .chain(core.iter().map(|n| (n.clone(), d / 10.0)))
        .chain(server_links.iter().map(|n| (n.clone(), d / 3.0)));
    for (link, mean_gap) in all {
        let mut at = 0.0;
        loop {
            // Exponential gap: −mean · ln(U).
            at += -mean_gap * uniform(&mut rng, 1e-9, 1.0).ln();
            let len = uniform(&mut rng, d / 3000.0, d / 60.0);
            if at + len > d * OUTAGES_END {
                break;
            }
            events.push(Ev {
                at,
                text: format!("at = \"{}\"\nlink = \"{link}\"\naction = \"down\"", secs(at)),
            });
            events.push(Ev {
                at: at + len,
                text: format!("at = \"{}\"\nlink = \"{link}\"\naction = \"up\"", secs(at + len)),
            });
            drawn.outages += 1;
            at += len;
        }
    }
    for (link, iface) in &access {
        for step in 1..10 {
            if *iface == "wired" || !rng.random_bool(0.5) {
                continue;
            }
            let at = d * f64::from(step) / 10.0;
            let loss = if *iface == "lte" {
                ge_loss(&mut rng)
            } else {
                format!(
                    "{{ kind = \"bernoulli\", p = {:.5} }}",
                    uniform(&mut rng, 0.0, 0.01)
                )
            };
            events.push(Ev {
                at,
                text: format!(
                    "at = \"{}\"\nlink = \"{link}\"\naction = \"set\"\ndirection = \"forward\"\nset = {{ loss = {loss} }}",
                    secs(at)
                ),
            });
            drawn.loss_changes += 1;
        }
    }
    // Stable: a down and an up of one link at the same instant keep their order.
    events.sort_by(|a, b| a.at.total_cmp(&b.at));
    for e in &events {
        let _ = writeln!(t, "[[events]]\n{}\n", e.text);
    }
    (t, drawn)
}

/// One of `choices`, uniformly.
fn pick<'a>(rng: &mut ChaCha8Rng, choices: &[&'a str]) -> &'a str {
    choices
        .get(rng.random_range(0..choices.len().max(1)))
        .copied()
        .unwrap_or_default()
}

/// A Gilbert–Elliott loss model with mean bursts of 3 packets and a stationary loss rate of ≈ 0.1–1 %.
fn ge_loss(rng: &mut ChaCha8Rng) -> String {
    let r = 1.0 / 3.0;
    let rate = uniform(rng, 0.001, 0.01);
    // L = p / (p + r) with the simple Gilbert model: p = r · L / (1 − L).
    let p = r * rate / (1.0 - rate);
    format!("{{ kind = \"gilbert_elliott\", p = {p:.6}, r = {r:.6} }}")
}
