//! A bounded datagram flood against a local server, for the memory measurements of `docs/soak.md`
//! ("Memory after a flood"). It only sends to a loopback address, at most 100,000 datagrams.
//!
//! ```text
//! cargo run -p mpquic-tools --example flood -- garbage  127.0.0.1:4433 30000
//! cargo run -p mpquic-tools --example flood -- initials 127.0.0.1:4433 2000
//! ```
//!
//! - `garbage`: datagrams of 1200 random bytes (a long-header first byte half of the time), each from the
//!   same socket: nothing a server can decrypt.
//! - `initials`: valid client Initials (one new connection each, from the sans-IO endpoint), all from one
//!   socket, never answered: every one is a handshake the server starts and must time out.
//!
//! Datagrams go out in bursts of 100 with 1 ms between bursts, so the flood lasts at most about a second per
//! 100,000 datagrams.

use std::net::{SocketAddr, UdpSocket};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mpquic::proto::connection::{ClientConfig, TransportConfig};
use mpquic::proto::endpoint::{Endpoint, EndpointConfig};
use mpquic_tools::clock;
use rand::Rng;

const MAX_COUNT: u64 = 100_000;

/// Makes the next datagram to send (`None`: no more).
type Datagrams = Box<dyn FnMut() -> Option<Vec<u8>>>;

fn usage() -> ExitCode {
    eprintln!("usage: flood garbage|initials 127.0.0.1:PORT COUNT (COUNT 1 to {MAX_COUNT}; loopback only)");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kind, target, count] = args.as_slice() else {
        return usage();
    };
    let Ok(target) = target.parse::<SocketAddr>() else {
        return usage();
    };
    let count = match mpquic_netsim::units::parse_int_in(count, 1, MAX_COUNT) {
        Ok(c) => c,
        Err(_) => return usage(),
    };
    if !target.ip().is_loopback() {
        eprintln!("flood: {target} is not a loopback address; this tool only sends to this host");
        return ExitCode::from(2);
    }
    let socket = match UdpSocket::bind(if target.is_ipv4() {
        "127.0.0.1:0"
    } else {
        "[::1]:0"
    }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("flood: cannot bind: {e}");
            return ExitCode::FAILURE;
        }
    };
    let datagrams: Datagrams = match kind.as_str() {
        "garbage" => {
            let mut rng = rand::rng();
            Box::new(move || {
                let mut d = vec![0u8; 1200];
                rng.fill(d.as_mut_slice());
                if let Some(first) = d.first_mut().filter(|_| rng.random_bool(0.5)) {
                    *first |= 0xc0;
                }
                Some(d)
            })
        }
        "initials" => match initials(target) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("flood: {e}");
                return ExitCode::FAILURE;
            }
        },
        _ => return usage(),
    };
    let sent = send(&socket, target, count, datagrams);
    println!("flood: sent {sent} {kind} datagrams to {target}");
    ExitCode::SUCCESS
}

fn send(
    socket: &UdpSocket,
    target: SocketAddr,
    count: u64,
    mut next: Box<dyn FnMut() -> Option<Vec<u8>>>,
) -> u64 {
    let started = clock::now();
    let mut sent = 0;
    while sent < count && started.elapsed() < Duration::from_secs(60) {
        for _ in 0..100 {
            if sent == count {
                break;
            }
            let Some(d) = next() else { return sent };
            if socket.send_to(&d, target).is_ok() {
                sent += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    sent
}

/// A generator of client Initials to `target`: each call starts a new connection and returns its first
/// datagram.
fn initials(target: SocketAddr) -> Result<Datagrams, String> {
    let tls =
        mpquic_tools::perf::tls::client(mpquic_tools::perf::tls::Trust::Anyone).map_err(|e| e.to_string())?;
    let config = ClientConfig {
        tls: Arc::clone(&tls),
        transport: TransportConfig::default(),
    };
    let mut endpoint = Endpoint::new(EndpointConfig::default(), None);
    let mut buf = Vec::new();
    Ok(Box::new(move || {
        let now = clock::now();
        let (_, mut conn) = endpoint.connect(now, &config, target, "localhost").ok()?;
        conn.poll_transmit(now, &mut buf)?;
        Some(buf.clone())
    }))
}
