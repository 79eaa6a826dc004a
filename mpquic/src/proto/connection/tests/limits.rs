//! Endpoint and per-connection limits, each pushed past. Endpoint: beyond `max_connections` a
//! client is refused with CONNECTION_REFUSED (RFC 9000 §5.2.2); at `max_handshakes` a client whose address is
//! not validated gets a Retry (RFC 9000 §8.1.2) and one whose address is validated is refused. Connection
//! (`ConnectionLimits`, path limits in `path_limits.rs`): PATH_CHALLENGE floods, the CRYPTO buffer, datagram
//! queues, remembered STOP_SENDING codes, probe records, redundant copies, and the retransmission queue
//! inside the send buffer.

use std::time::Duration;

use super::harness::{Pair, SERVER, addr};
use crate::proto::connection::{Connection, ConnectionError, Event, TransportConfig};
use crate::proto::endpoint::{DatagramEvent, Endpoint, EndpointConfig, EndpointLimits};
use crate::proto::error::TransportErrorCode;

/// A second client, with its own endpoint and address, connecting to the pair's server.
struct OtherClient {
    _ep: Endpoint,
    conn: Connection,
    from: &'static str,
}

impl OtherClient {
    fn new(p: &Pair, seed: u64, from: &'static str) -> OtherClient {
        let mut ep = Endpoint::new(EndpointConfig { seed, cid_len: 8 }, None);
        let (_, conn) = ep
            .connect(p.now, &p.client_config, addr(SERVER), "localhost")
            .unwrap();
        OtherClient { _ep: ep, conn, from }
    }

    /// Its next datagram (the Initial, at first).
    fn datagram(&mut self, p: &Pair) -> Vec<u8> {
        let mut buf = Vec::new();
        let t = self.conn.poll_transmit(p.now, &mut buf).unwrap();
        buf.truncate(t.size);
        buf
    }

    /// The server endpoint's decision about the client's next datagram.
    fn offer(&mut self, p: &mut Pair) -> DatagramEvent {
        let mut d = self.datagram(p);
        let now = p.now;
        p.server
            .ep
            .handle(now, None, addr(self.from), None, &mut d)
            .unwrap()
    }

    fn receive(&mut self, p: &Pair, datagram: &[u8]) {
        let mut d = datagram.to_vec();
        self.conn.handle_datagram(p.now, None, addr(SERVER), None, &mut d);
    }

    /// The transport error code the server closed the connection with, if it did.
    fn closed_with(&mut self) -> Option<TransportErrorCode> {
        let mut code = None;
        while let Some(e) = self.conn.poll_event() {
            if let Event::ConnectionLost(ConnectionError::ConnectionClosed { code: c, .. }) = e {
                code = Some(c);
            }
        }
        code
    }
}

/// Long-header packet type bits of a QUIC v1 first byte: 0b11 is Retry (RFC 9000 §17.2.5).
fn is_retry(datagram: &[u8]) -> bool {
    datagram.first().is_some_and(|b| b & 0xf0 == 0xf0)
}

fn pair_with(limits: EndpointLimits, seed: u64) -> Pair {
    let mut p = Pair::new(None, TransportConfig::default(), seed);
    p.server.ep.set_limits(limits);
    p
}

#[test]
fn rfc9000_5_2_2_connections_beyond_the_limit_are_refused() {
    let mut p = pair_with(
        EndpointLimits {
            max_connections: 1,
            ..EndpointLimits::default()
        },
        90,
    );
    p.handshake();
    assert_eq!(p.server.ep.connection_count(), 1);
    let mut other = OtherClient::new(&p, 91, "10.0.0.9:5000");
    let DatagramEvent::Response(t, close) = other.offer(&mut p) else {
        panic!("expected a stateless answer");
    };
    assert_eq!(t.remote, addr("10.0.0.9:5000"));
    assert!(!is_retry(&close));
    assert_eq!(
        p.server.ep.connection_count(),
        1,
        "no state for the refused client"
    );
    other.receive(&p, &close);
    assert_eq!(other.closed_with(), Some(TransportErrorCode::CONNECTION_REFUSED));
    // Once the first connection is gone, a new client gets in.
    p.client.conn().close(p.now, 0u32.into(), bytes::Bytes::new());
    p.run_for(Duration::from_secs(5));
    assert_eq!(p.server.ep.connection_count(), 0);
    let mut third = OtherClient::new(&p, 92, "10.0.0.10:5000");
    assert!(matches!(third.offer(&mut p), DatagramEvent::NewConnection(..)));
}

#[test]
fn rfc9000_8_1_2_at_the_handshake_limit_unvalidated_clients_get_a_retry_and_validated_ones_are_refused() {
    let mut p = pair_with(
        EndpointLimits {
            max_handshakes: 1,
            ..EndpointLimits::default()
        },
        93,
    );
    // A client that sends its Initial and then nothing: its handshake stays in progress.
    let mut first = OtherClient::new(&p, 94, "10.0.0.11:5000");
    let DatagramEvent::NewConnection(h, conn) = first.offer(&mut p) else {
        panic!("the first client is accepted");
    };
    p.server.conns.insert(h, *conn);
    assert_eq!(p.server.ep.handshakes_in_progress(), 1);

    // Another client, address not validated: a Retry, and no state on the server.
    let mut second = OtherClient::new(&p, 95, "10.0.0.12:5000");
    let DatagramEvent::Response(_, retry) = second.offer(&mut p) else {
        panic!("expected a Retry");
    };
    assert!(is_retry(&retry));
    assert_eq!(p.server.ep.connection_count(), 1);
    // With the Retry token its address is validated, but the limit still holds: refused.
    second.receive(&p, &retry);
    assert!(second.conn.retried());
    let DatagramEvent::Response(_, close) = second.offer(&mut p) else {
        panic!("expected a refusal");
    };
    assert!(!is_retry(&close));
    second.receive(&p, &close);
    assert_eq!(second.closed_with(), Some(TransportErrorCode::CONNECTION_REFUSED));

    // The silent client's handshake times out (the pair's own client stays out of the way meanwhile) and
    // frees its slot; a new client then completes its handshake, which frees the slot again.
    p.client.conns.clear();
    p.run_for(Duration::from_secs(60));
    assert_eq!(
        p.server.ep.handshakes_in_progress(),
        0,
        "the abandoned handshake timed out"
    );
    assert_eq!(p.server.ep.connection_count(), 0);
    p.reconnect(None, 96);
    p.handshake();
    assert_eq!(
        p.server.ep.handshakes_in_progress(),
        0,
        "a completed handshake frees its slot"
    );
    assert_eq!(p.server.ep.connection_count(), 1);
}

/// Attack: a peer floods PATH_CHALLENGE frames, 100 per packet. RFC 9000 §8.2.2 asks for an
/// echo of each, but one slot per path keeps only the newest unanswered challenge, so the server answers at
/// most once per path per packet it sends: its state stays bounded and its answers do not multiply.
#[test]
fn a_path_challenge_flood_is_answered_with_bounded_state_and_traffic() {
    use crate::proto::frame::Frame;
    let mut p = Pair::new(None, TransportConfig::default(), 97);
    p.handshake();
    p.run_for(Duration::from_secs(1));
    let (cs, ss) = (p.client.conn().stats(), p.server.conn().stats());
    let client_before = (cs.bytes_sent, cs.datagrams_sent);
    let server_before = (ss.bytes_sent, ss.datagrams_sent);
    for round in 0..50u8 {
        let mut f = Vec::new();
        for i in 0..100u8 {
            Frame::PathChallenge([round, i, 0, 0, 0, 0, 0, 1]).encode(&mut f);
        }
        p.client.conn().inject_raw_frame_for_test(f);
        p.run_for(Duration::from_millis(5));
    }
    p.run_for(Duration::from_secs(1));
    assert!(super::cids::lost(&p.client.events).is_none());
    assert!(super::cids::lost(&p.server.events).is_none());
    let (cs, ss) = (p.client.conn().stats(), p.server.conn().stats());
    let client = cs.bytes_sent - client_before.0;
    let server = ss.bytes_sent - server_before.0;
    let (client_dgrams, server_dgrams) = (
        cs.datagrams_sent - client_before.1,
        ss.datagrams_sent - server_before.1,
    );
    eprintln!("flood: client {client} B in {client_dgrams} datagrams, server {server} B in {server_dgrams}");
    // 50 packets of 900 B of challenges. Each PATH_RESPONSE goes in a datagram padded to 1200 B (RFC 9000
    // §8.2.2 "MUST expand datagrams that contain a PATH_RESPONSE frame to at least [...] 1200 bytes"), so the
    // server answers each flood datagram with at most one such datagram, never one per challenge (that would
    // be 5000 PATH_RESPONSE frames).
    assert!(client > 45_000, "client sent {client} B");
    assert!(
        server_dgrams <= client_dgrams + 2,
        "server sent {server_dgrams} datagrams for the client's {client_dgrams}"
    );
    assert!(server <= 1200 * (client_dgrams + 2), "server sent {server} B");
    assert!(!p.server.conn().is_closed() && !p.client.conn().is_closed());
}

fn limited(limits: crate::proto::connection::ConnectionLimits, seed: u64) -> Pair {
    let transport = TransportConfig {
        limits,
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, seed);
    p.handshake();
    p
}

/// RFC 9000 §7.5: CRYPTO data beyond the configured buffer is CRYPTO_BUFFER_EXCEEDED; the same frame within
/// the default 64 KiB is buffered.
#[test]
fn rfc9000_7_5_crypto_data_beyond_the_configured_buffer_is_crypto_buffer_exceeded() {
    use crate::proto::coding::VarInt;
    use crate::proto::frame::{Crypto, Frame};
    let frame = || {
        let mut f = Vec::new();
        Frame::Crypto(Crypto {
            offset: VarInt::from_u32(5000),
            data: &[0u8; 100],
        })
        .encode(&mut f);
        f
    };
    let small = crate::proto::connection::ConnectionLimits {
        crypto_buffer: 4096,
        ..Default::default()
    };
    let mut p = limited(small, 98);
    p.client.conn().inject_raw_frame_for_test(frame());
    assert!(p.drive_until(Duration::from_secs(5), |p| {
        super::cids::lost(&p.client.events).is_some()
    }));
    assert_eq!(
        super::cids::closed_with(&p.client.events),
        Some(TransportErrorCode::CRYPTO_BUFFER_EXCEEDED)
    );
    let mut p = limited(Default::default(), 99);
    p.client.conn().inject_raw_frame_for_test(frame());
    p.run_for(Duration::from_secs(1));
    assert!(super::cids::lost(&p.server.events).is_none());
}

/// A peer that sends datagrams faster than the application reads them costs at most `datagrams_in` of them;
/// an application that queues faster than the path sends keeps at most `datagrams_out`. The oldest go.
#[test]
fn datagram_queues_keep_the_newest_within_their_limits() {
    let limits = crate::proto::connection::ConnectionLimits {
        datagrams_in: 4,
        datagrams_out: 3,
        ..Default::default()
    };
    // The server keeps 4 of the client's 10 (nobody reads until the end).
    let mut p = limited(limits, 100);
    for i in 0..10u8 {
        p.client
            .conn()
            .send_datagram(bytes::Bytes::from(vec![i; 100]))
            .unwrap();
        p.run_for(Duration::from_millis(20));
    }
    p.run_for(Duration::from_secs(1));
    let mut got = Vec::new();
    while let Some(d) = p.server.conn().recv_datagram() {
        got.push(d[0]);
    }
    assert_eq!(got, [6, 7, 8, 9]);
    // The client queues 10 at once: only the newest 3 leave.
    for i in 20..30u8 {
        p.client
            .conn()
            .send_datagram(bytes::Bytes::from(vec![i; 100]))
            .unwrap();
    }
    p.run_for(Duration::from_secs(1));
    let mut got = Vec::new();
    while let Some(d) = p.server.conn().recv_datagram() {
        got.push(d[0]);
    }
    assert_eq!(got, [27, 28, 29]);
}

/// `remembered_stops: 3`: the peer stops 10 of our streams one after the other; once their sending parts
/// are gone (RESET_STREAM acknowledged) only 3 STOP_SENDING codes are kept (the highest stream IDs), so a
/// write on an older stream reports `ClosedStream`, one on the newest three `Stopped` with the peer's code.
#[test]
fn remembered_stop_sending_codes_are_bounded() {
    use crate::proto::coding::VarInt;
    use crate::proto::streams::WriteError;
    let limits = crate::proto::connection::ConnectionLimits {
        remembered_stops: 3,
        ..Default::default()
    };
    let mut p = limited(limits, 101);
    let mut ids = Vec::new();
    for _ in 0..10 {
        let c = p.client.conn();
        let id = c.open_uni().unwrap();
        c.write(id, bytes::Bytes::from_static(b"hello")).unwrap();
        ids.push(id);
    }
    p.run_for(Duration::from_millis(200));
    for id in &ids {
        p.server.conn().stop(*id, VarInt::from_u32(7)).unwrap();
        p.run_for(Duration::from_millis(30));
    }
    p.run_for(Duration::from_secs(1));
    assert_eq!(p.client.conn().streams.remembered_stops(), 3);
    for (i, id) in ids.iter().enumerate() {
        let got = p.client.conn().write(*id, bytes::Bytes::from_static(b"more"));
        let want = if i < 7 {
            WriteError::ClosedStream
        } else {
            WriteError::Stopped(VarInt::from_u32(7))
        };
        assert_eq!(got, Err(want), "stream {i}");
    }
    assert!(super::cids::lost(&p.client.events).is_none());
}

/// Lost stream data waits in the retransmission queue, which lives inside the send buffer: under 30 % loss
/// the bytes queued for retransmission never exceed the stream's unacknowledged bytes, which never exceed
/// `send_buffer`, however much the application writes.
#[test]
fn the_retransmission_queue_stays_within_the_send_buffer_under_heavy_loss() {
    use super::transfer::{Flow, pattern, pump};
    use crate::proto::streams::StreamsConfig;
    let send_buffer = 64 * 1024;
    let transport = TransportConfig {
        streams: StreamsConfig {
            send_buffer,
            ..StreamsConfig::default()
        },
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 103);
    p.handshake();
    p.loss = 0.3;
    let data = pattern(300_000, 4);
    let (mut fc, mut fs) = (Flow::default(), Flow::default());
    let mut most = 0;
    let ok = p.drive_until(Duration::from_secs(600), |p| {
        pump(p, true, &mut fc, &data);
        pump(p, false, &mut fs, &[]);
        let c = p.client.conn();
        let queued = c.streams.send_backlog().0;
        let buffered = fc.stream.and_then(|id| c.streams.send_buffered(id)).unwrap_or(0);
        assert!(
            queued <= buffered,
            "{queued} B to retransmit, {buffered} B buffered"
        );
        assert!(buffered <= send_buffer, "{buffered} B buffered");
        most = most.max(queued);
        fs.fin_seen
    });
    assert!(ok && fs.received == data, "transfer incomplete");
    assert!(most > 1200, "nothing waited for retransmission ({most} B)");
}

/// `duplicates: 2`: with the `redundant` scheduler every packet of stream data is queued for a copy on the
/// other path. Outside the handshake each `poll_transmit` sends or drops the waiting copies first, so the
/// queue stays short anyway; the cap is the safety net should that change (the lead tunes `send.rs`). The
/// copies never exceed 2 between calls, copies are sent (path 1 carries most of the data again) and the
/// transfer completes.
#[test]
fn redundant_copies_waiting_are_bounded() {
    use super::transfer::{Flow, pattern, pump};
    use crate::cc::PathId;
    let transport = TransportConfig {
        scheduler: "redundant".to_owned(),
        limits: crate::proto::connection::ConnectionLimits {
            duplicates: 2,
            ..Default::default()
        },
        ..TransportConfig::default()
    };
    let mut p = super::multipath::two_paths_with(104, transport);
    let data = pattern(1_000_000, 5);
    let (mut fc, mut fs) = (Flow::default(), Flow::default());
    let ok = p.drive_until(Duration::from_secs(30), |p| {
        pump(p, true, &mut fc, &data);
        pump(p, false, &mut fs, &[]);
        let n = p.client.conn().paths.duplicates_len();
        assert!(n <= 2, "{n} copies waiting");
        fs.fin_seen
    });
    assert!(ok && fs.received == data, "transfer incomplete");
    let c = p.client.conn();
    let copies = c.path_stats(PathId(1)).unwrap().stream_bytes_sent;
    assert!(copies > data.len() as u64 / 2, "path 1 carried {copies} B");
}

/// `Endpoint::handle_deferred` (what the runtime uses, so that the ClientHello's TLS work runs outside the
/// endpoint lock): the new connection comes back without having processed its Initial (the harness asserts
/// 0 packets received, then feeds it), counts as a handshake in progress until it completes, and the
/// handshake and a 300 kB transfer complete as with `Endpoint::handle`.
#[test]
fn deferred_first_datagram_completes_the_handshake_and_counts_as_in_progress() {
    let mut p = Pair::new(None, TransportConfig::default(), 96);
    p.deferred_accept = true;
    let ok = p.drive_until(Duration::from_secs(5), |p| !p.server.conns.is_empty());
    assert!(ok, "the server never created the connection");
    assert_eq!(p.server.ep.handshakes_in_progress(), 1);
    p.handshake();
    assert_eq!(p.server.ep.handshakes_in_progress(), 0);
    super::migration::transfer_with(&mut p, 300_000, 0, |_| {});
}
