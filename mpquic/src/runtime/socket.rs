//! The UDP socket of an endpoint, through `quinn-udp`: batched sends with GSO where the platform has it,
//! batched receives with GRO, ECN codepoints both ways, and the destination address of each received
//! datagram (`IP_PKTINFO` / `IPV6_RECVPKTINFO`).
//!
//! One socket per endpoint. Multipath (issue 6) needs to know which local address each datagram arrived
//! on, to find or create its path: [`quinn_udp::RecvMeta::dst_ip`] gives it, and the endpoint already
//! hands it to the core as the `local` address of every datagram. Sending from a chosen local address uses
//! [`quinn_udp::Transmit::src_ip`], set from the core's [`Transmit::local`](crate::proto::connection::Transmit).

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
const MAX_GSO_BYTES: usize = 64_000;

/// One group of datagrams to send with a single system call.
#[derive(Debug, Clone, Copy)]
struct Batch {
    destination: SocketAddr,
    ecn: Option<quinn_udp::EcnCodepoint>,
    src_ip: Option<IpAddr>,
    segment_size: usize,
    start: usize,
    end: usize,
    segments: usize,
    /// No more datagrams may join (the last one was shorter, or the core batched it itself).
    closed: bool,
}

/// Datagrams written by the core, grouped for GSO: consecutive datagrams to the same destination with the
/// same ECN and source address, all of one size except a possibly shorter last one.
#[derive(Debug, Default)]
pub(crate) struct Outgoing {
    buf: Vec<u8>,
    batches: Vec<Batch>,
    /// Batches already handed to the socket by [`Outgoing::send_now`].
    sent: usize,
}

impl Outgoing {
    /// Whether some queued batch has not been sent yet.
    pub(crate) fn has_unsent(&self) -> bool {
        self.sent < self.batches.len()
    }

    /// Forgets everything queued, keeping the allocation.
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
        self.batches.clear();
        self.sent = 0;
    }

    /// Sends the unsent batches without waiting. `Ok(true)` when all went out, `Ok(false)` when the socket
    /// would block (the rest stays queued for the next call).
    pub(crate) fn send_now(&mut self, socket: &Socket) -> io::Result<bool> {
        while let Some(b) = self.batches.get(self.sent) {
            let Some(t) = self.transmit(b) else {
                self.sent += 1;
                continue;
            };
            match socket.try_send(&t) {
                Ok(()) => self.sent += 1,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
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
        let contents = self.buf.get(b.start..b.end)?;
        let segment_size =
            (b.segments > 1 || b.closed && b.segment_size < contents.len()).then_some(b.segment_size);
        Some(Transmit {
            destination: b.destination,
            ecn: b.ecn,
            contents,
            segment_size,
            src_ip: b.src_ip,
        })
    }

    /// Queues one core transmit whose bytes are `data`.
    #[cfg(test)]
    pub(crate) fn push(&mut self, t: &crate::proto::connection::Transmit, data: &[u8], max_segments: usize) {
        if data.is_empty() {
            return;
        }
        let start = self.buf.len();
        self.buf.extend_from_slice(data);
        self.queue(t, start, max_segments);
    }

    /// Lets `build` append one datagram to the batch buffer (as
    /// [`crate::proto::connection::Connection::poll_transmit_append`] does) and queues it: the datagram is
    /// built and sealed where it is sent from, without a copy. `false` when `build` had nothing to send.
    pub(crate) fn push_with(
        &mut self,
        max_segments: usize,
        build: impl FnOnce(&mut Vec<u8>) -> Option<crate::proto::connection::Transmit>,
    ) -> bool {
        let start = self.buf.len();
        let Some(t) = build(&mut self.buf) else {
            self.buf.truncate(start);
            return false;
        };
        self.buf.truncate(start.saturating_add(t.size));
        if self.buf.len() > start {
            self.queue(&t, start, max_segments);
        }
        true
    }

    /// Queues the datagram `buf[start..]` of core transmit `t`.
    fn queue(&mut self, t: &crate::proto::connection::Transmit, start: usize, max_segments: usize) {
        let end = self.buf.len();
        let len = end - start;
        let ecn = ecn_to_udp(t.ecn);
        let src_ip = t.local.map(|a| a.ip()).filter(|ip| !ip.is_unspecified());
        if t.segment_size.is_none()
            && let Some(b) = self.batches.last_mut()
            && !b.closed
            && b.destination == t.remote
            && b.ecn == ecn
            && b.src_ip == src_ip
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
        self.batches.push(Batch {
            destination: t.remote,
            ecn,
            src_ip,
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
}
