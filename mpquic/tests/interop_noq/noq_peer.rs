//! The noq side: noq-proto's endpoint and connection (seeded connection IDs) behind the [`Peer`] interface.

use super::*;

/// Connection IDs from a seeded counter, so runs are reproducible.
pub(crate) struct SeqCids(u64);

impl noq_proto::ConnectionIdGenerator for SeqCids {
    fn generate_cid(&mut self) -> noq_proto::ConnectionId {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        noq_proto::ConnectionId::new(&self.0.to_be_bytes())
    }

    fn cid_len(&self) -> usize {
        8
    }

    fn cid_lifetime(&self) -> Option<Duration> {
        None
    }
}

/// noq's transport settings: multipath on with the same initial_max_path_id as mpquic, then `tweak`.
pub(crate) fn noq_transport(tweak: fn(&mut noq_proto::TransportConfig)) -> Arc<noq_proto::TransportConfig> {
    let mut t = noq_proto::TransportConfig::default();
    t.max_concurrent_multipath_paths(MAX_PATH_ID + 1);
    tweak(&mut t);
    Arc::new(t)
}

pub(crate) fn noq_endpoint(seed: u64, server: Option<Arc<noq_proto::ServerConfig>>) -> noq_proto::Endpoint {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &seed.to_be_bytes());
    let mut cfg = noq_proto::EndpointConfig::new(Arc::new(key));
    cfg.cid_generator(Arc::new(move || Box::new(SeqCids(seed))));
    let mut rng_seed = [0u8; 32];
    rng_seed[..8].copy_from_slice(&seed.to_be_bytes());
    cfg.rng_seed(Some(rng_seed));
    noq_proto::Endpoint::new(Arc::new(cfg), server, true)
}

/// noq's path IDs are opaque outside the crate except through `Display`.
pub(crate) fn noq_path(p: noq_proto::PathId) -> u32 {
    p.to_string().parse().unwrap()
}

pub(crate) struct NoqPeer {
    pub(crate) ep: noq_proto::Endpoint,
    pub(crate) conns: HashMap<noq_proto::ConnectionHandle, noq_proto::Connection>,
    pub(crate) addrs: Vec<SocketAddr>,
    pub(crate) events: Vec<noq_proto::Event>,
    pub(crate) pending: Vec<Dgram>,
    pub(crate) established: bool,
    pub(crate) is_client: bool,
    pub(crate) buf: Vec<u8>,
}

impl NoqPeer {
    pub(crate) fn client(
        now: Instant,
        seed: u64,
        addrs: Vec<SocketAddr>,
        server: SocketAddr,
        c: &common::Certs,
        tweak: fn(&mut noq_proto::TransportConfig),
    ) -> NoqPeer {
        let crypto = noq_proto::crypto::rustls::QuicClientConfig::try_from(rustls_client(c)).unwrap();
        let mut cfg = noq_proto::ClientConfig::new(Arc::new(crypto));
        cfg.transport_config(noq_transport(tweak));
        let mut ep = noq_endpoint(seed, None);
        let (h, conn) = ep.connect(now, cfg, server, "localhost").unwrap();
        let mut p = NoqPeer::new(ep, addrs, true);
        p.conns.insert(h, conn);
        p
    }

    pub(crate) fn server(
        seed: u64,
        addrs: Vec<SocketAddr>,
        c: &common::Certs,
        tweak: fn(&mut noq_proto::TransportConfig),
    ) -> NoqPeer {
        let crypto = noq_proto::crypto::rustls::QuicServerConfig::try_from(rustls_server(c)).unwrap();
        let mut cfg = noq_proto::ServerConfig::with_crypto(Arc::new(crypto));
        cfg.transport_config(noq_transport(tweak));
        NoqPeer::new(noq_endpoint(seed, Some(Arc::new(cfg))), addrs, false)
    }

    pub(crate) fn new(ep: noq_proto::Endpoint, addrs: Vec<SocketAddr>, is_client: bool) -> NoqPeer {
        NoqPeer {
            ep,
            conns: HashMap::new(),
            addrs,
            events: Vec::new(),
            pending: Vec::new(),
            established: false,
            is_client,
            buf: Vec::new(),
        }
    }

    pub(crate) fn conn(&self) -> Option<&noq_proto::Connection> {
        self.conns.values().next()
    }

    pub(crate) fn conn_mut(&mut self) -> Option<&mut noq_proto::Connection> {
        self.conns.values_mut().next()
    }

    /// Endpoint events of every connection, and the connection events they produce.
    pub(crate) fn endpoint_events(&mut self) {
        for (h, c) in self.conns.iter_mut() {
            while let Some(e) = c.poll_endpoint_events() {
                if let Some(ce) = self.ep.handle_event(*h, e) {
                    c.handle_event(ce);
                }
            }
        }
    }

    pub(crate) fn local_addr(&self, ip: Option<std::net::IpAddr>) -> SocketAddr {
        ip.and_then(|ip| self.addrs.iter().find(|a| a.ip() == ip).copied())
            .unwrap_or(self.addrs[0])
    }

    pub(crate) fn push_transmit(
        &mut self,
        now: Instant,
        t: &noq_proto::Transmit,
        buf: &[u8],
        out: &mut Vec<Dgram>,
    ) {
        let from = self.local_addr(t.src_ip);
        let seg = t.segment_size.unwrap_or(t.size).max(1);
        for chunk in buf[..t.size].chunks(seg) {
            out.push(Dgram {
                at: now,
                from,
                to: t.destination,
                ecn: t.ecn.map_or(0, |e| e as u8),
                data: chunk.to_vec(),
            });
        }
    }
}

impl Peer for NoqPeer {
    fn name(&self) -> &'static str {
        "noq"
    }

    fn owns(&self, a: SocketAddr) -> bool {
        self.addrs.contains(&a)
    }

    fn transmit(&mut self, now: Instant, out: &mut Vec<Dgram>) {
        out.append(&mut self.pending);
        self.endpoint_events();
        let mut buf = std::mem::take(&mut self.buf);
        let handles: Vec<_> = self.conns.keys().copied().collect();
        for h in handles {
            loop {
                buf.clear();
                let Some(t) = self
                    .conns
                    .get_mut(&h)
                    .unwrap()
                    .poll_transmit(now, NonZeroUsize::MIN, &mut buf)
                else {
                    break;
                };
                self.push_transmit(now, &t, &buf, out);
                assert!(out.len() < 100_000, "noq: runaway sender");
            }
        }
        self.buf = buf;
        self.endpoint_events();
    }

    fn receive(&mut self, now: Instant, d: Dgram) {
        let path = noq_proto::FourTuple::new(d.from, Some(d.to.ip()));
        let ecn = noq_proto::EcnCodepoint::from_bits(d.ecn);
        let mut buf = Vec::new();
        match self
            .ep
            .handle(now, path, ecn, BytesMut::from(&d.data[..]), &mut buf)
        {
            Some(noq_proto::DatagramEvent::ConnectionEvent(h, e)) => {
                if let Some(c) = self.conns.get_mut(&h) {
                    c.handle_event(e);
                }
            }
            Some(noq_proto::DatagramEvent::NewConnection(incoming)) => {
                let mut buf = Vec::new();
                match self.ep.accept(incoming, now, &mut buf, None) {
                    Ok((h, c)) => {
                        self.conns.insert(h, c);
                    }
                    Err(e) => {
                        if let Some(t) = e.response {
                            let mut out = Vec::new();
                            self.push_transmit(now, &t, &buf, &mut out);
                            self.pending.extend(out);
                        }
                        panic!("noq refused the connection: {:?}", e.cause);
                    }
                }
            }
            Some(noq_proto::DatagramEvent::Response(t)) => {
                let mut out = Vec::new();
                self.push_transmit(now, &t, &buf, &mut out);
                self.pending.extend(out);
            }
            None => {}
        }
        self.endpoint_events();
    }

    fn timeout(&self) -> Option<Instant> {
        self.conns.values().filter_map(|c| c.poll_timeout()).min()
    }

    fn on_timeout(&mut self, now: Instant) {
        for c in self.conns.values_mut() {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
        self.endpoint_events();
    }

    fn poll_events(&mut self) {
        for c in self.conns.values_mut() {
            while let Some(e) = c.poll() {
                match &e {
                    noq_proto::Event::HandshakeConfirmed => self.established = true,
                    noq_proto::Event::Connected if !self.is_client => self.established = true,
                    _ => {}
                }
                if !matches!(e, noq_proto::Event::Stream(_)) {
                    self.events.push(e);
                }
            }
        }
    }

    fn established(&self) -> bool {
        self.established
    }

    fn closed(&self) -> Option<String> {
        self.events.iter().find_map(|e| match e {
            noq_proto::Event::ConnectionLost { reason } => Some(format!("{reason:?}")),
            _ => None,
        })
    }

    fn multipath(&self) -> bool {
        self.conn().is_some_and(|c| c.is_multipath_negotiated())
    }

    fn open_bi(&mut self) -> Option<u64> {
        self.conn_mut()?.streams().open(noq_proto::Dir::Bi).map(u64::from)
    }

    fn accept_bi(&mut self) -> Option<u64> {
        self.conn_mut()?
            .streams()
            .accept(noq_proto::Dir::Bi)
            .map(u64::from)
    }

    fn write(&mut self, id: u64, data: &[u8]) -> usize {
        let c = self.conn_mut().unwrap();
        let id = noq_proto::StreamId::from(noq_proto::VarInt::from_u64(id).unwrap());
        match c.send_stream(id).write(data) {
            Ok(n) => n,
            Err(noq_proto::WriteError::Blocked) => 0,
            Err(e) => panic!("noq write: {e:?}"),
        }
    }

    fn finish(&mut self, id: u64) {
        let c = self.conn_mut().unwrap();
        let id = noq_proto::StreamId::from(noq_proto::VarInt::from_u64(id).unwrap());
        c.send_stream(id).finish().unwrap();
    }

    fn read(&mut self, _now: Instant, id: u64, out: &mut Vec<u8>) -> bool {
        let c = self.conn_mut().unwrap();
        let id = noq_proto::StreamId::from(noq_proto::VarInt::from_u64(id).unwrap());
        let mut rs = c.recv_stream(id);
        let mut chunks = rs.read(true).unwrap();
        let fin = loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => out.extend_from_slice(&chunk.bytes),
                Ok(None) => break true,
                Err(noq_proto::ReadError::Blocked) => break false,
                Err(e) => panic!("noq read: {e:?}"),
            }
        };
        let _ = chunks.finalize();
        fin
    }

    fn open_path(&mut self, now: Instant, local: SocketAddr, remote: SocketAddr) -> Result<u32, String> {
        let c = self.conn_mut().ok_or("no connection")?;
        let tuple = noq_proto::FourTuple::new(remote, Some(local.ip()));
        c.open_path(tuple, noq_proto::PathStatus::Available, now)
            .map(noq_path)
            .map_err(|e| format!("{e:?}"))
    }

    fn close_path(&mut self, now: Instant, id: u32) -> Result<(), String> {
        let c = self.conn_mut().ok_or("no connection")?;
        c.close_path(
            now,
            noq_proto::PathId::from(id),
            noq_proto::VarInt::from_u32(0x3e),
        )
        .map_err(|e| format!("{e:?}"))
    }

    fn set_backup(&mut self, id: u32) -> Result<(), String> {
        let c = self.conn_mut().ok_or("no connection")?;
        c.set_path_status(noq_proto::PathId::from(id), noq_proto::PathStatus::Backup)
            .map(|_| ())
            .map_err(|e| format!("{e:?}"))
    }

    fn paths(&self) -> Vec<u32> {
        self.conn()
            .map(|c| c.paths().into_iter().map(noq_path).collect())
            .unwrap_or_default()
    }

    fn path_validated(&mut self, id: u32) -> bool {
        self.events.iter().any(|e| {
            matches!(e, noq_proto::Event::Path(noq_proto::PathEvent::Established { id: p, .. })
                if noq_path(*p) == id)
        })
    }

    fn path_bytes(&mut self, id: u32) -> Option<(u64, u64)> {
        let s = self.conn_mut()?.path_stats(noq_proto::PathId::from(id))?;
        Some((s.udp_tx.bytes, s.udp_rx.bytes))
    }

    fn peer_says_backup(&self, id: u32) -> bool {
        self.conn()
            .and_then(|c| c.remote_path_status(noq_proto::PathId::from(id)))
            == Some(noq_proto::PathStatus::Backup)
    }

    fn saw_abandoned(&self, id: u32) -> bool {
        self.events.iter().any(|e| {
            matches!(e, noq_proto::Event::Path(noq_proto::PathEvent::Abandoned { id: p, .. })
                if noq_path(*p) == id)
        })
    }

    fn rtt(&mut self, id: u32) -> Option<Duration> {
        self.conn_mut()?
            .path_stats(noq_proto::PathId::from(id))
            .map(|s| s.rtt)
    }

    fn lost(&mut self) -> u64 {
        self.conn_mut().map_or(0, |c| c.stats().lost_packets)
    }

    fn summary(&mut self) -> String {
        let Some(c) = self.conn_mut() else {
            return String::new();
        };
        let s = c.stats();
        format!(
            "sent_packets {} lost_packets {} frame_tx {:?} frame_rx {:?}",
            s.sent_packets, s.lost_packets, s.frame_tx, s.frame_rx
        )
    }

    fn as_noq(&mut self) -> Option<&mut NoqPeer> {
        Some(self)
    }
}
