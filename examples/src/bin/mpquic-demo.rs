//! `mpquic-demo`: the README's main job. A multipath transfer on loopback over two emulated paths (server,
//! emulator and client started in this process), printing per-path and total goodput.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mpquic_tools::cli_exit::{init_tracing, parse_or_usage_error};
use mpquic_tools::demo::{self, DemoLink, DemoOptions};
use mpquic_tools::netem::stats::format_table;
use mpquic_tools::netem::units::{parse_duration, parse_rate};
use mpquic_tools::perf::cli::{parse_cc, parse_scheduler, parse_secs};
use mpquic_tools::perf::report::{fmt_rate, summary_text};

/// A real multipath QUIC transfer on loopback through two emulated paths, end to end.
#[derive(Debug, Parser)]
#[command(
    name = "mpquic-demo",
    version,
    after_help = "\
Example: mpquic-demo -t 5 --cc olia --link 50mbit/20ms --link 10mbit/80ms

The server, the link emulator (mpquic-netem) and the client (mpquic-perf) run in this process and talk over
UDP on 127.0.0.1; run them as separate processes with mpquic-perf and mpquic-netem (see the README)."
)]
struct Args {
    /// Transfer duration in seconds (more than 0, at most 86400).
    #[arg(short = 't', long, value_name = "SECS", default_value = "10", value_parser = parse_secs,
          allow_negative_numbers = true)]
    time: f64,
    /// Download (the server sends) instead of upload.
    #[arg(short = 'R', long)]
    reverse: bool,
    /// Congestion controller of the sender (`cubic`, `olia`, `lia`, `balia`, `bbr`, …).
    #[arg(long, value_name = "NAME[:PARAMS]", default_value = "cubic", value_parser = parse_cc)]
    cc: String,
    /// Scheduler of the sender (`minrtt`, `roundrobin`, `blest`, `ecf`, `redundant`, …).
    #[arg(long, value_name = "NAME[:PARAMS]", default_value = "minrtt", value_parser = parse_scheduler)]
    scheduler: String,
    /// Parallel streams, 1 to 100.
    #[arg(short = 'P', long, value_name = "N", default_value = "1", allow_negative_numbers = true,
          value_parser = |s: &str| mpquic_netsim::units::parse_int_in(s, 1, 100).map(|n| u16::try_from(n).unwrap_or(1)))]
    parallel: u16,
    /// An emulated path `RATE/RTT` (repeatable up to 16 times; default: 40mbit/10ms and 20mbit/40ms); RATE
    /// 1bit to 1000gbit, RTT more than 0 and at most 7200s (each direction gets half).
    #[arg(long = "link", value_name = "RATE/RTT", value_parser = parse_link)]
    links: Vec<DemoLink>,
    /// Print the client's report as JSON instead of text (iperf3's layout, as `mpquic-perf --json`).
    #[arg(long)]
    json: bool,
}

fn parse_link(s: &str) -> Result<DemoLink, String> {
    let (rate, rtt) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}`: expected RATE/RTT, e.g. 40mbit/10ms"))?;
    let link = DemoLink {
        rate_bps: parse_rate(rate).map_err(|e| e.to_string())?,
        rtt: parse_duration(rtt).map_err(|e| e.to_string())?,
    };
    if link.rtt.is_zero() {
        return Err(format!("`{s}`: the RTT must be more than 0"));
    }
    // Each direction is a link of the netsim model with half the RTT as its delay: its ranges apply.
    mpquic_netsim::link::LinkConfig::new(link.rate_bps, link.rtt / 2)
        .validate()
        .map_err(|e| format!("`{s}`: {e} (the delay is half the RTT)"))?;
    Ok(link)
}

/// The most `--link` options (the transport keeps at most 16 paths).
const MAX_LINKS: usize = 16;

fn main() -> ExitCode {
    let args: Args = match parse_or_usage_error("mpquic-demo") {
        Ok(a) => a,
        Err(code) => return code,
    };
    init_tracing();
    let mut options = DemoOptions {
        duration: Duration::from_secs_f64(args.time),
        download: args.reverse,
        cc: args.cc,
        scheduler: args.scheduler,
        streams: args.parallel,
        verbose: !args.json,
        progress: !args.json && std::io::stdout().is_terminal(),
        ..DemoOptions::default()
    };
    if args.links.len() > MAX_LINKS {
        eprintln!(
            "mpquic-demo: --link given {} times: expected 1 to {MAX_LINKS}",
            args.links.len()
        );
        return ExitCode::from(2);
    }
    if !args.links.is_empty() {
        options.links = args.links;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mpquic-demo: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(demo::run(&options)) {
        Ok(r) if args.json => {
            match serde_json::to_string_pretty(&mpquic_tools::perf::iperf3::to_iperf3(&r.report)) {
                Ok(json) => {
                    println!("{json}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("mpquic-demo: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Ok(r) => {
            print!("{}", summary_text(&r.report));
            let share = r.report.total.goodput_bps / r.capacity_bps as f64 * 100.0;
            println!(
                "goodput {} = {share:.0} % of the emulated {} (QUIC, UDP and IP headers take ~5 %)",
                fmt_rate(r.report.total.goodput_bps),
                fmt_rate(r.capacity_bps as f64)
            );
            println!("\nemulator counters:\n{}", format_table(&r.emulator).trim_end());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mpquic-demo: {e}");
            ExitCode::FAILURE
        }
    }
}
