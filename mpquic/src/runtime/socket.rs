//! The UDP socket of an endpoint, through `quinn-udp`: batched sends with GSO where the platform has it,
//! batched receives with GRO, ECN codepoints both ways, and the destination address of each received
//! datagram (`IP_PKTINFO` / `IPV6_RECVPKTINFO`).
//!
//! One socket per endpoint. Multipath needs to know which local address each datagram arrived
//! on, to find or create its path: [`quinn_udp::RecvMeta::dst_ip`] gives it, and the endpoint already
//! hands it to the core as the `local` address of every datagram. Sending from a chosen local address uses
//! [`quinn_udp::Transmit::src_ip`], set from the core's [`Transmit::local`](crate::proto::connection::Transmit).
//!
//! [`Outgoing`] groups a flush's datagrams for GSO per *lane* (destination, source address, ECN), so that a
//! scheduler alternating paths packet by packet still sends one batch per path rather than one datagram per
//! system call; datagrams of one lane keep the order the core wrote them in.

use std::io::{self, IoSliceMut};
use std::net::{IpAddr, SocketAddr};

use quinn_udp::{RecvMeta, Transmit, UdpSocketState};
use tokio::io::Interest;

use crate::proto::ack_tracker::EcnCodepoint;

/// Socket buffer size asked of the kernel, each direction.
const SOCKET_BUFFER_BYTES: usize = 4 << 20;

/// A UDP socket driven by tokio with quinn-udp's system-call layer.
#[derive(Debug)]
pub(crate) struct Socket {
    io: tokio::net::UdpSocket,
    state: UdpSocketState,
    local: SocketAddr,
}

impl Socket {
    /// Binds a socket to `addr` and configures it (ECN, packet info, GRO) through quinn-udp.
    pub(crate) fn bind(addr: SocketAddr) -> io::Result<Socket> {
        let std = std::net::UdpSocket::bind(addr)?;
        let state = UdpSocketState::new((&std).into())?;
        // Best effort: the kernel caps these at net.core.{r,w}mem_max (Linux's default receive buffer, ~208 KiB,
        // overflows within a millisecond at gigabit rates, and every overflow is a loss to recover).
        for (what, r) in [
            (
                "receive",
                state.set_recv_buffer_size((&std).into(), SOCKET_BUFFER_BYTES),
            ),
            (
                "send",
                state.set_send_buffer_size((&std).into(), SOCKET_BUFFER_BYTES),
            ),
        ] {
            if let Err(e) = r {
                tracing::debug!("cannot set the socket's {what} buffer: {e}");
            }
        }
        std.set_nonblocking(true)?;
        let io = tokio::net::UdpSocket::from_std(std)?;
        let local = io.local_addr()?;
        Ok(Socket { io, state, local })
    }

    /// The address the socket is bound to.
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// How many datagrams one GSO send may carry (1 without GSO).
    pub(crate) fn max_gso_segments(&self) -> usize {
        self.state.max_gso_segments().max(1)
    }

    /// How many datagrams one GRO receive may return in one buffer (1 without GRO).
    pub(crate) fn gro_segments(&self) -> usize {
        self.state.gro_segments().max(1)
    }

    /// Sends one transmit (one datagram, or several of `segment_size` bytes with GSO). Errors other than
    /// "would block" are logged by quinn-udp and ignored: QUIC recovers from loss.
    pub(crate) async fn send(&self, transmit: &Transmit<'_>) -> io::Result<()> {
        loop {
            self.io.writable().await?;
            match self.io.try_io(Interest::WRITABLE, || {
                self.state.send((&self.io).into(), transmit)
            }) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends one transmit if the socket can take it now; [`io::ErrorKind::WouldBlock`] otherwise (then wait
    /// with [`Socket::writable`]).
    pub(crate) fn try_send(&self, transmit: &Transmit<'_>) -> io::Result<()> {
        self.io.try_io(Interest::WRITABLE, || {
            self.state.send((&self.io).into(), transmit)
        })
    }

    /// Waits until the socket may accept a send again.
    pub(crate) async fn writable(&self) -> io::Result<()> {
        self.io.writable().await
    }

    /// Receives a batch of datagrams; returns how many entries of `meta` were filled.
    pub(crate) async fn recv(&self, bufs: &mut [IoSliceMut<'_>], meta: &mut [RecvMeta]) -> io::Result<usize> {
        loop {
            self.io.readable().await?;
            match self.io.try_io(Interest::READABLE, || {
                self.state.recv((&self.io).into(), bufs, meta)
            }) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// quinn-udp's ECN codepoint → the core's.
pub(crate) fn ecn_from_udp(ecn: Option<quinn_udp::EcnCodepoint>) -> Option<EcnCodepoint> {
    ecn.map(|e| match e {
        quinn_udp::EcnCodepoint::Ect0 => EcnCodepoint::Ect0,
        quinn_udp::EcnCodepoint::Ect1 => EcnCodepoint::Ect1,
        quinn_udp::EcnCodepoint::Ce => EcnCodepoint::Ce,
    })
}

/// The core's ECN codepoint → quinn-udp's (Not-ECT: none).
pub(crate) fn ecn_to_udp(ecn: Option<EcnCodepoint>) -> Option<quinn_udp::EcnCodepoint> {
    match ecn? {
        EcnCodepoint::NotEct => None,
        EcnCodepoint::Ect0 => Some(quinn_udp::EcnCodepoint::Ect0),
        EcnCodepoint::Ect1 => Some(quinn_udp::EcnCodepoint::Ect1),
        EcnCodepoint::Ce => Some(quinn_udp::EcnCodepoint::Ce),
    }
}

/// Largest GSO batch in bytes (the kernel limit of one UDP send is 64 KiB).
pub(crate) const MAX_GSO_BYTES: usize = 64_000;

/// Lanes kept (with their buffers) across [`Outgoing::clear`]: a connection rarely sends to more
/// destinations than it has paths; lanes beyond this are dropped when cleared, so their memory is returned.
const KEPT_LANES: usize = 16;

/// Where a datagram goes: datagrams share a GSO batch only within one lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LaneKey {
    destination: SocketAddr,
    ecn: Option<quinn_udp::EcnCodepoint>,
    src_ip: Option<IpAddr>,
}

/// The datagrams queued for one [`LaneKey`], contiguous in their own buffer.
#[derive(Debug, Default)]
struct Lane {
    /// `None`: the lane is free (after a clear).
    key: Option<LaneKey>,
    buf: Vec<u8>,
    /// The lane's batch that may still grow (an index into [`Outgoing::batches`]).
    open: Option<usize>,
}

/// One group of datagrams to send with a single system call: `lanes[lane].buf[start..end]`.
#[derive(Debug, Clone, Copy)]
struct Batch {
    lane: usize,
    segment_size: usize,
    start: usize,
    end: usize,
    segments: usize,
    /// No more datagrams may join (the last one was shorter, or the core batched it itself).
    closed: bool,
}

/// Counters of a connection's sends through the socket ([`crate::runtime::Connection::transmit_stats`]): how
/// well datagrams were grouped into GSO batches. Counted when the socket accepts a batch.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransmitStats {
    /// System calls that sent datagrams (one GSO batch each).
    pub batches: u64,
    /// Datagrams in those batches.
    pub datagrams: u64,
    /// Batches of a single datagram.
    pub single_datagram_batches: u64,
    /// UDP payload bytes in those batches.
    pub bytes: u64,
    /// Flush turns that wrote at least one datagram.
    pub turns: u64,
    /// Times the socket would not take a batch (the rest waited for it to become writable).
    pub would_block: u64,
    /// Datagrams written for another lane (destination, source address, ECN) than the datagram before them
    /// in the same turn: each is one copy into that lane's buffer, and for data each is a point where the
    /// connection's stream data switched paths.
    pub lane_switches: u64,
}

impl TransmitStats {
    /// Mean datagrams per batch (0 before the first batch).
    pub fn mean_segments(&self) -> f64 {
        if self.batches == 0 {
            return 0.0;
        }
        self.datagrams as f64 / self.batches as f64
    }
}

/// Datagrams written by the core, grouped for GSO per lane: datagrams to the same destination with the
/// same ECN and source address join that lane's open batch (all of one size except a possibly shorter
/// last one), whatever was queued for other lanes in between. A scheduler that alternates paths packet by
/// packet (round-robin) so still fills one batch per path instead of sending one datagram per system call.
///
/// Datagrams of one lane leave in the order the core wrote them (a lane's batches are sent in the order
/// they were opened, each with its datagrams in order); only datagrams of different lanes, which travel
/// different paths anyway, may leave in another order than written. The core writes each datagram into the
/// buffer of the lane the previous one went to, so a run to one destination costs no copy; a datagram for
/// another lane is moved into that lane's buffer (one copy of at most a datagram).
#[derive(Debug, Default)]
pub(crate) struct Outgoing {
    lanes: Vec<Lane>,
    batches: Vec<Batch>,
    /// Batches already handed to the socket by [`Outgoing::send_now`].
    sent: usize,
    /// The lane the last datagram went to: the next one is built in its buffer.
    last_lane: usize,
    /// What was sent so far.
    pub(crate) stats: TransmitStats,
}

impl Outgoing {
    /// Whether some queued batch has not been sent yet.
    pub(crate) fn has_unsent(&self) -> bool {
        self.sent < self.batches.len()
    }

    /// Forgets everything queued, keeping the allocations of up to [`KEPT_LANES`] lanes.
    pub(crate) fn clear(&mut self) {
        self.lanes.truncate(KEPT_LANES);
        for l in &mut self.lanes {
            l.key = None;
            l.buf.clear();
            l.open = None;
        }
        self.batches.clear();
        self.sent = 0;
        self.last_lane = 0;
    }

    /// Sends the unsent batches without waiting. `Ok(true)` when all went out, `Ok(false)` when the socket
    /// would block (the rest stays queued for the next call).
    pub(crate) fn send_now(&mut self, socket: &Socket) -> io::Result<bool> {
        while let Some(b) = self.batches.get(self.sent) {
            let Some(t) = self.transmit(b) else {
                self.sent += 1;
                continue;
            };
            let (segments, len) = (b.segments as u64, t.contents.len() as u64);
            match socket.try_send(&t) {
                Ok(()) => {
                    self.stats.batches += 1;
                    self.stats.datagrams += segments;
                    self.stats.single_datagram_batches += u64::from(segments == 1);
                    self.stats.bytes += len;
                    self.sent += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.stats.would_block += 1;
                    return Ok(false);
                }
                Err(e) => {
                    // Not retried: QUIC recovers from the loss.
                    self.sent += 1;
                    tracing::warn!(error = %e, "UDP send failed");
                }
            }
        }
        Ok(true)
    }

    fn transmit(&self, b: &Batch) -> Option<Transmit<'_>> {
        let lane = self.lanes.get(b.lane)?;
        let key = lane.key?;
        let contents = lane.buf.get(b.start..b.end)?;
        let segment_size =
            (b.segments > 1 || b.closed && b.segment_size < contents.len()).then_some(b.segment_size);
        Some(Transmit {
            destination: key.destination,
            ecn: key.ecn,
            contents,
            segment_size,
            src_ip: key.src_ip,
        })
    }

    /// Queues one core transmit whose bytes are `data`.
    #[cfg(test)]
    pub(crate) fn push(&mut self, t: &crate::proto::connection::Transmit, data: &[u8], max_segments: usize) {
        if data.is_empty() {
            return;
        }
        let lane = self.lane_for(Self::key_of(t));
        let Some(l) = self.lanes.get_mut(lane) else {
            return;
        };
        let start = l.buf.len();
        l.buf.extend_from_slice(data);
        self.queue(t, lane, start, max_segments);
    }

    /// Lets `build` append one datagram to a batch buffer (as
    /// [`crate::proto::connection::Connection::poll_transmit_append`] does) and queues it: a datagram for
    /// the lane of the previous one is built and sealed where it is sent from, without a copy; one for
    /// another lane is moved there. `false` when `build` had nothing to send.
    pub(crate) fn push_with(
        &mut self,
        max_segments: usize,
        build: impl FnOnce(&mut Vec<u8>) -> Option<crate::proto::connection::Transmit>,
    ) -> bool {
        if self.lanes.is_empty() {
            self.lanes.push(Lane::default());
        }
        let built_in = self.last_lane.min(self.lanes.len() - 1);
        let Some(l) = self.lanes.get_mut(built_in) else {
            return false;
        };
        let start = l.buf.len();
        let Some(t) = build(&mut l.buf) else {
            l.buf.truncate(start);
            return false;
        };
        l.buf.truncate(start.saturating_add(t.size));
        if l.buf.len() == start {
            return true;
        }
        let key = Self::key_of(&t);
        if l.key.is_none_or(|k| k == key) {
            l.key = Some(key);
            self.queue(&t, built_in, start, max_segments);
            return true;
        }
        let lane = self.lane_for(key);
        let start = move_tail(&mut self.lanes, built_in, lane, start);
        self.stats.lane_switches += 1;
        self.queue(&t, lane, start, max_segments);
        true
    }

    fn key_of(t: &crate::proto::connection::Transmit) -> LaneKey {
        LaneKey {
            destination: t.remote,
            ecn: ecn_to_udp(t.ecn),
            src_ip: t.local.map(|a| a.ip()).filter(|ip| !ip.is_unspecified()),
        }
    }

    /// The lane of `key`, taking a free one (or adding one) if it has none yet.
    fn lane_for(&mut self, key: LaneKey) -> usize {
        if let Some(i) = self.lanes.iter().position(|l| l.key == Some(key)) {
            return i;
        }
        if let Some(i) = self.lanes.iter().position(|l| l.key.is_none()) {
            if let Some(l) = self.lanes.get_mut(i) {
                l.key = Some(key);
            }
            return i;
        }
        self.lanes.push(Lane {
            key: Some(key),
            ..Lane::default()
        });
        self.lanes.len() - 1
    }

    /// Queues the datagram `lanes[lane].buf[start..]` of core transmit `t`: it joins the lane's open batch
    /// if it can, else opens a new one.
    fn queue(
        &mut self,
        t: &crate::proto::connection::Transmit,
        lane: usize,
        start: usize,
        max_segments: usize,
    ) {
        self.last_lane = lane;
        let Some(l) = self.lanes.get_mut(lane) else {
            return;
        };
        let end = l.buf.len();
        let len = end - start;
        if t.segment_size.is_none()
            && let Some(i) = l.open
            && i >= self.sent
            && let Some(b) = self.batches.get_mut(i)
            && !b.closed
            && b.end == start
            && b.segments < max_segments
            && len <= b.segment_size
            && end - b.start <= MAX_GSO_BYTES
        {
            b.end = end;
            b.segments += 1;
            b.closed = len < b.segment_size;
            return;
        }
        l.open = Some(self.batches.len());
        self.batches.push(Batch {
            lane,
            segment_size: t.segment_size.unwrap_or(len),
            start,
            end,
            segments: 1,
            closed: t.segment_size.is_some(),
        });
    }

    /// The queued transmits, ready for [`Socket::send`].
    #[cfg(test)]
    pub(crate) fn transmits(&self) -> impl Iterator<Item = Transmit<'_>> {
        self.batches.iter().filter_map(|b| self.transmit(b))
    }
}

/// Moves `lanes[from].buf[start..]` to the end of `lanes[to].buf`; returns where it starts there.
fn move_tail(lanes: &mut [Lane], from: usize, to: usize, start: usize) -> usize {
    let (src, dst) = if from < to {
        let (lo, hi) = lanes.split_at_mut(to);
        (lo.get_mut(from), hi.first_mut())
    } else {
        let (lo, hi) = lanes.split_at_mut(from);
        (hi.first_mut(), lo.get_mut(to))
    };
    let (Some(src), Some(dst)) = (src, dst) else {
        return start;
    };
    let at = dst.buf.len();
    dst.buf
        .extend_from_slice(src.buf.get(start..).unwrap_or_default());
    src.buf.truncate(start);
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::PathId;
    use crate::proto::connection::Transmit as CoreTransmit;

    fn t(remote: &str, size: usize) -> CoreTransmit {
        CoreTransmit {
            path: PathId(0),
            local: None,
            remote: remote.parse().unwrap(),
            ecn: None,
            size,
            segment_size: None,
        }
    }

    #[test]
    fn gso_batches_equal_sizes_and_a_shorter_tail() {
        let mut o = Outgoing::default();
        for size in [1200, 1200, 1200, 500, 1200] {
            o.push(&t("127.0.0.1:1", size), &vec![0u8; size], 10);
        }
        o.push(&t("127.0.0.1:2", 1200), &[0u8; 1200], 10);
        let v: Vec<_> = o
            .transmits()
            .map(|t| (t.contents.len(), t.segment_size))
            .collect();
        assert_eq!(v, vec![(4100, Some(1200)), (1200, None), (1200, None)]);
    }

    #[test]
    fn gso_respects_segment_limit() {
        let mut o = Outgoing::default();
        for _ in 0..5 {
            o.push(&t("127.0.0.1:1", 1000), &[0u8; 1000], 2);
        }
        let v: Vec<_> = o.transmits().map(|t| t.contents.len()).collect();
        assert_eq!(v, vec![2000, 2000, 1000]);
    }

    /// Builds a datagram of `size` bytes, all `fill`, through `push_with` (the path the runtime uses).
    fn build(o: &mut Outgoing, remote: &str, size: usize, fill: u8, max_segments: usize) {
        let tr = t(remote, size);
        assert!(o.push_with(max_segments, |buf| {
            buf.extend(std::iter::repeat_n(fill, size));
            Some(tr)
        }));
    }

    #[test]
    fn alternating_destinations_make_one_batch_per_destination() {
        // Round-robin over two paths: A, B, A, B, … 20 datagrams of 1200 bytes each way.
        let mut o = Outgoing::default();
        for i in 0..40u8 {
            let remote = if i % 2 == 0 { "127.0.0.1:1" } else { "127.0.0.2:1" };
            build(&mut o, remote, 1200, i, 64);
        }
        let v: Vec<_> = o.transmits().collect();
        assert_eq!(v.len(), 2, "one batch per destination");
        for (t, (remote, first)) in v.iter().zip([("127.0.0.1:1", 0u8), ("127.0.0.2:1", 1u8)]) {
            assert_eq!(t.destination, remote.parse().unwrap());
            assert_eq!((t.contents.len(), t.segment_size), (20 * 1200, Some(1200)));
            // Every segment, in the order the core wrote them to this destination.
            let fills: Vec<u8> = t.contents.chunks(1200).map(|c| c[0]).collect();
            let want: Vec<u8> = (0..20).map(|k| first + 2 * k).collect();
            assert_eq!(fills, want);
            assert!(t.contents.chunks(1200).all(|c| c.iter().all(|b| *b == c[0])));
        }
    }

    #[test]
    fn each_lane_keeps_its_own_segment_rules() {
        // A's batch closes after its shorter datagram; B's keeps growing meanwhile; A opens a second batch.
        let mut o = Outgoing::default();
        build(&mut o, "127.0.0.1:1", 1200, 1, 64);
        build(&mut o, "127.0.0.2:1", 1000, 2, 64);
        build(&mut o, "127.0.0.1:1", 700, 3, 64);
        build(&mut o, "127.0.0.2:1", 1000, 4, 64);
        build(&mut o, "127.0.0.1:1", 1200, 5, 64);
        build(&mut o, "127.0.0.2:1", 1000, 6, 2);
        let v: Vec<_> = o
            .transmits()
            .map(|t| {
                (
                    t.destination.ip().to_string(),
                    t.contents.len(),
                    t.segment_size,
                    t.contents[0],
                )
            })
            .collect();
        assert_eq!(
            v,
            vec![
                ("127.0.0.1".to_owned(), 1900, Some(1200), 1),
                ("127.0.0.2".to_owned(), 2000, Some(1000), 2),
                ("127.0.0.1".to_owned(), 1200, None, 5),
                ("127.0.0.2".to_owned(), 1000, None, 6),
            ]
        );
        // Cleared, the lanes are reused for other destinations.
        o.clear();
        build(&mut o, "127.0.0.3:1", 1200, 7, 64);
        build(&mut o, "127.0.0.3:1", 1200, 8, 64);
        let v: Vec<_> = o
            .transmits()
            .map(|t| (t.contents.len(), t.segment_size))
            .collect();
        assert_eq!(v, vec![(2400, Some(1200))]);
    }

    #[test]
    fn source_address_and_ecn_separate_lanes() {
        let mut o = Outgoing::default();
        let mut a = t("127.0.0.1:1", 1200);
        a.local = Some("127.0.0.5:9".parse().unwrap());
        let mut b = a;
        b.ecn = Some(EcnCodepoint::Ect0);
        for tr in [a, b, a, b] {
            o.push(&tr, &[0u8; 1200], 64);
        }
        let v: Vec<_> = o
            .transmits()
            .map(|t| (t.src_ip, t.ecn, t.contents.len()))
            .collect();
        let ip: IpAddr = "127.0.0.5".parse().unwrap();
        assert_eq!(
            v,
            vec![
                (Some(ip), None, 2400),
                (Some(ip), Some(quinn_udp::EcnCodepoint::Ect0), 2400)
            ]
        );
    }
}
