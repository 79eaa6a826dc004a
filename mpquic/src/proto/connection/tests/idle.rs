//! The idle timer when the peer goes silent mid-transfer (RFC 9000 §10.1): the end that keeps sending
//! restarts its timer only with the first ack-eliciting packet after the last packet it received, so it
//! gives the peer up one idle timeout after that, not after its last probe.

use std::time::Duration;

use super::harness::{CLIENT, Pair, SERVER, addr};
use super::transfer::{Flow, pattern, pump};
use crate::cc::PathId;
use crate::proto::connection::{ConnectionError, Event, TransportConfig};
use crate::proto::recovery::SpaceId;

const IDLE: Duration = Duration::from_secs(2);

/// The connection of the end that sends the data.
fn sender(p: &mut Pair, upload: bool) -> &mut crate::proto::connection::Connection {
    if upload { p.client.conn() } else { p.server.conn() }
}

/// A transfer of 8 MB (an upload by the client, or a download from the server) over one 20 ms path; once
/// 300 000 B have arrived the receiving end goes silent for good (its address drops everything, both ways). Returns the
/// sender's last receipt, its PTO then, the time its connection was closed, and its idle deadlines seen
/// after the last receipt.
fn sender_after_silence(upload: bool, seed: u64) -> (Duration, Duration, Duration, Vec<std::time::Instant>) {
    let transport = TransportConfig {
        max_idle_timeout: IDLE,
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, seed);
    p.handshake();
    let start = p.now;
    let data = pattern(8_000_000, 1);
    let (mut fc, mut fs) = (Flow::default(), Flow::default());
    let (up, down): (&[u8], &[u8]) = if upload { (&data, b"") } else { (b"get", &data) };
    let started = p.drive_until(Duration::from_secs(5), |p| {
        pump(p, true, &mut fc, up);
        if p.server.conns.len() == 1 {
            pump(p, false, &mut fs, down);
        }
        let receiver = if upload { &fs } else { &fc };
        receiver.received.len() >= 300_000
    });
    assert!(started, "the transfer did not start");
    // The receiver goes silent.
    let dead = if upload { SERVER } else { CLIENT };
    p.blackholed.push(addr(dead));
    p.dead_sources.push(addr(dead));
    let mut received = sender(&mut p, upload).stats().packets_received;
    let mut last_rx = p.now;
    let mut pto = Duration::ZERO;
    let mut deadlines = Vec::new();
    let ok = p.drive_until(Duration::from_secs(60), |p| {
        let now = p.now;
        let c = sender(p, upload);
        if c.is_closed() {
            return true;
        }
        let r = c.stats().packets_received;
        if r != received {
            received = r;
            last_rx = now;
            deadlines.clear();
            pto = c.paths[&PathId(0)].recovery.pto(SpaceId::Data);
        }
        if let Some(d) = c.idle_deadline() {
            if deadlines.last() != Some(&d) {
                deadlines.push(d);
            }
        }
        false
    });
    assert!(ok, "the sender never gave up");
    let events = if upload {
        &p.client.events
    } else {
        &p.server.events
    };
    assert!(
        events
            .iter()
            .any(|(_, e)| *e == Event::ConnectionLost(ConnectionError::TimedOut)),
        "closed for another reason"
    );
    (last_rx - start, pto, p.now - start, deadlines)
}

/// RFC 9000 §10.1: "An endpoint also restarts its idle timer when sending an ack-eliciting packet if no
/// other ack-eliciting packets have been sent since last receiving and processing a packet." The sender
/// keeps sending into the silence (its window, then PTO probes with exponential backoff), but only its first
/// ack-eliciting packet after the last receipt restarts the timer: one idle deadline after the last receipt,
/// and the connection ends within one idle timeout (2 s; three PTOs of ≈ 60 ms are less) plus the time to
/// that first packet, which is at most one PTO (the PTO timer sends it if nothing else does). Before the
/// fix every probe restarted the timer: the sender gave up only once a backed-off PTO interval exceeded the
/// idle timeout, about twice the idle timeout after the silence.
#[test]
fn a_silent_receiver_is_given_up_one_idle_timeout_after_its_last_packet() {
    for (upload, seed) in [(false, 90), (true, 91)] {
        let (last_rx, pto, closed, deadlines) = sender_after_silence(upload, seed);
        let waited = closed - last_rx;
        assert!(
            waited >= IDLE && waited <= IDLE + pto,
            "upload {upload}: last receipt at {last_rx:?}, closed at {closed:?} ({waited:?} later, PTO {pto:?})"
        );
        // The deadline moved once, when the first ack-eliciting packet after the last receipt left.
        assert!(deadlines.len() <= 2, "upload {upload}: deadlines {deadlines:?}");
    }
}
