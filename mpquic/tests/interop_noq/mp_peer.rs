//! The mpquic side: its sans-IO endpoint and connection, driven through `proto::host::Host`, behind the
//! [`Peer`] interface.

use std::ops::ControlFlow;

use mpquic::proto::host::{Host, Received};

use super::*;

pub(crate) fn mp_transport() -> mpc::TransportConfig {
    mpc::TransportConfig {
        initial_max_path_id: Some(MAX_PATH_ID),
        ..mpc::TransportConfig::default()
    }
}

pub(crate) fn ecn_to_bits(e: Option<EcnCodepoint>) -> u8 {
    match e {
        None | Some(EcnCodepoint::NotEct) => 0,
        Some(EcnCodepoint::Ect1) => 0b01,
        Some(EcnCodepoint::Ect0) => 0b10,
        Some(EcnCodepoint::Ce) => 0b11,
    }
}

pub(crate) fn bits_to_ecn(b: u8) -> Option<EcnCodepoint> {
    match b & 0b11 {
        0b01 => Some(EcnCodepoint::Ect1),
        0b10 => Some(EcnCodepoint::Ect0),
        0b11 => Some(EcnCodepoint::Ce),
        _ => None,
    }
}

pub(crate) struct MpPeer {
    /// The endpoint and its connection; its default address is the first of `addrs`.
    pub(crate) host: Host,
    pub(crate) addrs: Vec<SocketAddr>,
    pub(crate) events: Vec<mpc::Event>,
    pub(crate) pending: Vec<Dgram>,
    pub(crate) established: bool,
    pub(crate) buf: Vec<u8>,
}

impl MpPeer {
    pub(crate) fn client(
        now: Instant,
        seed: u64,
        addrs: Vec<SocketAddr>,
        server: SocketAddr,
        c: &common::Certs,
        tweak: &dyn Fn(&mut mpc::TransportConfig),
    ) -> MpPeer {
        let mut transport = mp_transport();
        tweak(&mut transport);
        let cfg = mpc::ClientConfig {
            tls: rustls_client(c),
            transport,
        };
        let ep = mpe::Endpoint::new(mpe::EndpointConfig { seed, cid_len: 8 }, None);
        let mut peer = MpPeer::new(ep, addrs);
        peer.host.connect(now, &cfg, server, "localhost").unwrap();
        peer
    }

    pub(crate) fn server(
        seed: u64,
        addrs: Vec<SocketAddr>,
        c: &common::Certs,
        tweak: &dyn Fn(&mut mpc::TransportConfig),
    ) -> MpPeer {
        let mut transport = mp_transport();
        tweak(&mut transport);
        let cfg = mpc::ServerConfig {
            tls: rustls_server(c),
            transport,
        };
        let ep = mpe::Endpoint::new(mpe::EndpointConfig { seed, cid_len: 8 }, Some(Arc::new(cfg)));
        MpPeer::new(ep, addrs)
    }

    pub(crate) fn new(ep: mpe::Endpoint, addrs: Vec<SocketAddr>) -> MpPeer {
        MpPeer {
            host: Host::new(ep, addrs[0]),
            addrs,
            events: Vec::new(),
            pending: Vec::new(),
            established: false,
            buf: Vec::new(),
        }
    }

    pub(crate) fn conn(&self) -> Option<&mpc::Connection> {
        self.host.first()
    }

    pub(crate) fn conn_mut(&mut self) -> Option<&mut mpc::Connection> {
        self.host.first_mut()
    }
}

pub(crate) fn mp_stream(id: u64) -> StreamId {
    StreamId::from_varint(VarInt::from_u64(id).unwrap())
}

impl Peer for MpPeer {
    fn name(&self) -> &'static str {
        "mpquic"
    }

    fn owns(&self, a: SocketAddr) -> bool {
        self.addrs.contains(&a)
    }

    fn transmit(&mut self, now: Instant, out: &mut Vec<Dgram>) {
        out.append(&mut self.pending);
        self.host.poll_transmits(now, &mut self.buf, |d, buf| {
            let t = d.transmit;
            let seg = t.segment_size.unwrap_or(t.size).max(1);
            for chunk in buf[..t.size].chunks(seg) {
                out.push(Dgram {
                    at: now,
                    from: d.from,
                    to: t.remote,
                    ecn: ecn_to_bits(t.ecn),
                    data: chunk.to_vec(),
                });
            }
            assert!(out.len() < 100_000, "mpquic: runaway sender");
            ControlFlow::Continue(())
        });
    }

    fn receive(&mut self, now: Instant, mut d: Dgram) {
        let ecn = bits_to_ecn(d.ecn);
        // A stateless answer (Version Negotiation, Retry, Stateless Reset) leaves from where the datagram
        // arrived.
        if let Received::Response(t, data) = self.host.receive(now, Some(d.to), d.from, ecn, &mut d.data) {
            self.pending.push(Dgram {
                at: now,
                from: t.local.unwrap_or(d.to),
                to: t.remote,
                ecn: ecn_to_bits(t.ecn),
                data: data[..t.size].to_vec(),
            });
        }
    }

    fn timeout(&self) -> Option<Instant> {
        self.host.poll_timeout()
    }

    fn on_timeout(&mut self, now: Instant) {
        self.host.handle_timeouts(now);
    }

    fn poll_events(&mut self) {
        for c in self.host.conns.values_mut() {
            while let Some(e) = c.poll_event() {
                let server = c.side() == mpquic::proto::transport_params::Side::Server;
                match e {
                    mpc::Event::HandshakeConfirmed => self.established = true,
                    mpc::Event::HandshakeCompleted if server => self.established = true,
                    _ => {}
                }
                if !matches!(e, mpc::Event::Stream(_)) {
                    self.events.push(e);
                }
            }
        }
        self.host.forward_endpoint_events();
    }

    fn established(&self) -> bool {
        self.established
    }

    fn closed(&self) -> Option<String> {
        self.events.iter().find_map(|e| match e {
            mpc::Event::ConnectionLost(err) => Some(format!("{err:?}")),
            _ => None,
        })
    }

    fn multipath(&self) -> bool {
        self.conn().is_some_and(|c| c.multipath())
    }

    fn open_bi(&mut self) -> Option<u64> {
        self.conn_mut()?.open_bi().map(|s| s.into_inner())
    }

    fn accept_bi(&mut self) -> Option<u64> {
        self.conn_mut()?.accept_bi().map(|s| s.into_inner())
    }

    fn write(&mut self, id: u64, data: &[u8]) -> usize {
        let c = self.conn_mut().unwrap();
        match c.write(mp_stream(id), Bytes::copy_from_slice(data)) {
            Ok(n) => n,
            Err(WriteError::Blocked) => 0,
            Err(e) => panic!("mpquic write: {e:?}"),
        }
    }

    fn finish(&mut self, id: u64) {
        self.conn_mut().unwrap().finish(mp_stream(id)).unwrap();
    }

    fn read(&mut self, now: Instant, id: u64, out: &mut Vec<u8>) -> bool {
        let c = self.conn_mut().unwrap();
        loop {
            match c.read(mp_stream(id), usize::MAX, now) {
                Ok(Some(b)) => out.extend_from_slice(&b),
                Ok(None) => return true,
                Err(ReadError::Blocked) => return false,
                Err(e) => panic!("mpquic read: {e:?}"),
            }
        }
    }

    fn open_path(&mut self, now: Instant, local: SocketAddr, remote: SocketAddr) -> Result<u32, String> {
        let c = self.conn_mut().ok_or("no connection")?;
        c.open_path(now, Some(local), remote, PathStatus::Available)
            .map(|p| p.0)
            .map_err(|e| format!("{e:?}"))
    }

    fn close_path(&mut self, now: Instant, id: u32) -> Result<(), String> {
        let c = self.conn_mut().ok_or("no connection")?;
        c.close_path(now, PathId(id), PathAbandon::APPLICATION_ABANDON_PATH)
            .map_err(|e| format!("{e:?}"))
    }

    fn set_backup(&mut self, id: u32) -> Result<(), String> {
        let c = self.conn_mut().ok_or("no connection")?;
        c.set_path_status(PathId(id), mpquic::sched::PathStatus::Backup)
            .map_err(|e| format!("{e:?}"))
    }

    fn paths(&self) -> Vec<u32> {
        self.conn()
            .map(|c| c.paths().into_iter().map(|p| p.0).collect())
            .unwrap_or_default()
    }

    fn path_validated(&mut self, id: u32) -> bool {
        self.conn()
            .and_then(|c| c.path_stats(PathId(id)))
            .is_some_and(|s| s.validated)
    }

    fn path_bytes(&mut self, id: u32) -> Option<(u64, u64)> {
        let s = self.conn()?.path_stats(PathId(id))?;
        Some((s.bytes_sent, s.bytes_received))
    }

    fn peer_says_backup(&self, id: u32) -> bool {
        self.conn()
            .and_then(|c| c.path_stats(PathId(id)))
            .is_some_and(|s| s.backup)
    }

    fn saw_abandoned(&self, id: u32) -> bool {
        self.events
            .iter()
            .any(|e| *e == mpc::Event::PathAbandoned { path: PathId(id) })
    }

    fn rtt(&mut self, id: u32) -> Option<Duration> {
        self.conn()?.path_stats(PathId(id)).map(|s| s.srtt)
    }

    fn lost(&mut self) -> u64 {
        self.conn().map_or(0, |c| c.stats().packets_lost)
    }

    fn summary(&mut self) -> String {
        self.conn().map_or(String::new(), |c| format!("{:?}", c.stats()))
    }

    fn as_mp(&mut self) -> Option<&mut MpPeer> {
        Some(self)
    }
}
