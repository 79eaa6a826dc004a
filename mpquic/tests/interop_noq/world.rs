//! The in-memory link in virtual time and the world of one client and one server; transfers and reports.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// mpquic client, noq server.
    MpClient,
    /// noq client, mpquic server.
    NoqClient,
}

pub(crate) struct World {
    pub(crate) now: Instant,
    pub(crate) client: Box<dyn Peer>,
    pub(crate) server: Box<dyn Peer>,
    pub(crate) role: Role,
    pub(crate) delay: Duration,
    pub(crate) loss: f64,
    pub(crate) rng: Rng,
    pub(crate) link: Vec<Dgram>,
    /// Datagrams to these addresses are lost.
    pub(crate) blackholed: Vec<SocketAddr>,
    /// Bytes put on the link, by (source, destination).
    pub(crate) sent: HashMap<(SocketAddr, SocketAddr), u64>,
    /// A NAT in front of the client: client source address → the address the server sees.
    pub(crate) nat: HashMap<SocketAddr, SocketAddr>,
    /// A side closed the connection on purpose: closes no longer fail the test.
    pub(crate) closing: bool,
    /// The client's receiver reads its second socket only when the first is empty: a datagram addressed to
    /// `CLIENT2` is delivered only once no datagram addressed to `CLIENT` is on the link (sent and not yet
    /// delivered). Models a peer that polls its sockets in order and is kept busy by the first one.
    pub(crate) second_socket_waits: bool,
    /// A bottleneck in front of every destination address: bytes per second (`None`: no rate limit) and the
    /// longest queueing delay it accepts (drop-tail beyond).
    pub(crate) rate: Option<(u64, Duration)>,
    /// When each destination's bottleneck is free again.
    pub(crate) busy_until: HashMap<SocketAddr, Instant>,
    /// Times a due datagram to `CLIENT2` was held back by [`World::second_socket_waits`] (a datagram held
    /// over several steps counts once per step).
    pub(crate) held: u64,
}

impl World {
    pub(crate) fn new(role: Role, seed: u64) -> World {
        World::with_noq(role, seed, |_| {})
    }

    /// A world whose noq endpoint's transport settings are adjusted by `tweak`.
    pub(crate) fn with_noq(role: Role, seed: u64, tweak: fn(&mut noq_proto::TransportConfig)) -> World {
        World::with_tweaks(role, seed, tweak, &|_| {})
    }

    /// A world whose noq endpoint's transport settings are adjusted by `tweak` and mpquic's by `mp_tweak`.
    pub(crate) fn with_tweaks(
        role: Role,
        seed: u64,
        tweak: fn(&mut noq_proto::TransportConfig),
        mp_tweak: &dyn Fn(&mut mpc::TransportConfig),
    ) -> World {
        init_tracing();
        #[allow(clippy::disallowed_methods)] // virtual time starts at an arbitrary instant
        let now = Instant::now();
        let c = certs();
        let client_addrs = vec![addr(CLIENT), addr(CLIENT2)];
        let server_addrs = vec![addr(SERVER)];
        let (client, server): (Box<dyn Peer>, Box<dyn Peer>) = match role {
            Role::MpClient => (
                Box::new(MpPeer::client(
                    now,
                    seed,
                    client_addrs,
                    addr(SERVER),
                    &c,
                    mp_tweak,
                )),
                Box::new(NoqPeer::server(seed ^ 0x5555, server_addrs, &c, tweak)),
            ),
            Role::NoqClient => (
                Box::new(NoqPeer::client(now, seed, client_addrs, addr(SERVER), &c, tweak)),
                Box::new(MpPeer::server(seed ^ 0x5555, server_addrs, &c, mp_tweak)),
            ),
        };
        World {
            now,
            client,
            server,
            role,
            delay: Duration::from_millis(10),
            loss: 0.0,
            rng: Rng::new(seed.wrapping_mul(31).wrapping_add(7)),
            link: Vec::new(),
            blackholed: Vec::new(),
            sent: HashMap::new(),
            nat: HashMap::new(),
            closing: false,
            second_socket_waits: false,
            rate: None,
            busy_until: HashMap::new(),
            held: 0,
        }
    }

    /// The mpquic side.
    pub(crate) fn mp(&mut self) -> &mut dyn Peer {
        match self.role {
            Role::MpClient => self.client.as_mut(),
            Role::NoqClient => self.server.as_mut(),
        }
    }

    /// The noq side.
    pub(crate) fn noq(&mut self) -> &mut dyn Peer {
        match self.role {
            Role::MpClient => self.server.as_mut(),
            Role::NoqClient => self.client.as_mut(),
        }
    }

    pub(crate) fn mpp(&mut self) -> &mut MpPeer {
        self.mp().as_mp().unwrap()
    }

    pub(crate) fn noqp(&mut self) -> &mut NoqPeer {
        self.noq().as_noq().unwrap()
    }

    /// noq's frame counters (received, sent).
    pub(crate) fn noq_frames(&mut self) -> (noq_proto::FrameStats, noq_proto::FrameStats) {
        let s = self.noqp().conn_mut().unwrap().stats();
        (s.frame_rx, s.frame_tx)
    }

    pub(crate) fn lose(&mut self) -> bool {
        if self.loss <= 0.0 {
            return false;
        }
        let r = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        r < self.loss
    }

    pub(crate) fn flush(&mut self) {
        let mut out = Vec::new();
        self.client.transmit(self.now, &mut out);
        self.server.transmit(self.now, &mut out);
        for mut d in out {
            if let Some(outside) = self.nat.get(&d.from) {
                d.from = *outside;
            }
            *self.sent.entry((d.from, d.to)).or_default() += d.data.len() as u64;
            if self.blackholed.contains(&d.to) || self.lose() {
                continue;
            }
            let mut depart = self.now;
            if let Some((rate, max_queue)) = self.rate {
                let free = self
                    .busy_until
                    .get(&d.to)
                    .copied()
                    .unwrap_or(self.now)
                    .max(self.now);
                if free - self.now > max_queue {
                    continue; // drop-tail
                }
                let tx = Duration::from_nanos(d.data.len() as u64 * 1_000_000_000 / rate.max(1));
                depart = free + tx;
                self.busy_until.insert(d.to, depart);
            }
            d.at = depart + self.delay;
            self.link.push(d);
        }
        self.client.poll_events();
        self.server.poll_events();
    }

    pub(crate) fn check_open(&self) {
        if self.closing {
            return;
        }
        for p in [&self.client, &self.server] {
            if let Some(why) = p.closed() {
                panic!("{} connection closed: {why}", p.name());
            }
        }
    }

    pub(crate) fn next_time(&self) -> Option<Instant> {
        [
            self.link.iter().map(|d| d.at).min(),
            self.client.timeout(),
            self.server.timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Sends, advances to the next event, fires timers, delivers. Returns false when nothing is left to do.
    pub(crate) fn step(&mut self) -> bool {
        self.flush();
        let Some(t) = self.next_time() else {
            return false;
        };
        self.now = self.now.max(t);
        let now = self.now;
        if self.client.timeout().is_some_and(|t| t <= now) {
            self.client.on_timeout(now);
        }
        if self.server.timeout().is_some_and(|t| t <= now) {
            self.server.on_timeout(now);
        }
        let (due, mut rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.link)
            .into_iter()
            .partition(|d| d.at <= now);
        let due = if self.second_socket_waits {
            // The first socket is read first and the second only when the first has nothing: while a datagram
            // to `CLIENT` is still on its way, the ones to `CLIENT2` wait (a receiver kept busy by a steady
            // flow on its first socket); they are read when the last one to `CLIENT` has arrived.
            let first = addr(CLIENT);
            let second = addr(CLIENT2);
            let first_busy = rest.iter().any(|d| d.to == first);
            if first_busy {
                let (wait, go): (Vec<_>, Vec<_>) = due.into_iter().partition(|d| d.to == second);
                self.held += wait.len() as u64;
                for mut d in wait {
                    // Due again as soon as the first socket's queue drains (the next event).
                    d.at = rest
                        .iter()
                        .filter(|r| r.to == first)
                        .map(|r| r.at)
                        .min()
                        .unwrap_or(now);
                    rest.push(d);
                }
                go
            } else {
                due
            }
        } else {
            due
        };
        self.link = rest;
        for mut d in due {
            // Only the current NAT mappings translate back; datagrams to an old mapping are lost.
            if let Some((inside, _)) = self.nat.iter().find(|(_, o)| **o == d.to) {
                d.to = *inside;
            } else if self.nat.contains_key(&d.to) {
                continue;
            }
            if self.client.owns(d.to) {
                self.client.receive(now, d);
            } else if self.server.owns(d.to) {
                self.server.receive(now, d);
            }
        }
        self.client.poll_events();
        self.server.poll_events();
        true
    }

    /// Steps until `done` holds (true), or `max` of virtual time passes (false). Fails at once if a connection
    /// closes.
    pub(crate) fn drive_until(&mut self, max: Duration, mut done: impl FnMut(&mut World) -> bool) -> bool {
        let end = self.now + max;
        for _ in 0..2_000_000 {
            self.check_open();
            if done(self) {
                return true;
            }
            if !self.step() || self.now > end {
                self.check_open();
                return done(self);
            }
        }
        false
    }

    /// Steps while there is work due before `now + d`.
    pub(crate) fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        for _ in 0..2_000_000 {
            self.flush();
            self.check_open();
            match self.next_time() {
                Some(t) if t <= end => {}
                _ => break,
            }
            self.step();
        }
        self.now = self.now.max(end);
    }

    pub(crate) fn handshake(&mut self) {
        let ok = self.drive_until(Duration::from_secs(5), |w| {
            w.client.established() && w.server.established()
        });
        assert!(ok, "handshake did not complete");
    }

    /// Link bytes from `from` to `to`.
    pub(crate) fn sent(&self, from: &str, to: &str) -> u64 {
        self.sent.get(&(addr(from), addr(to))).copied().unwrap_or(0)
    }

    /// The client opens path 1 from `CLIENT2`; both sides validate it.
    pub(crate) fn open_second_path(&mut self) -> u32 {
        // The path-1 connection IDs travel after the handshake.
        self.run_for(Duration::from_millis(50));
        let now = self.now;
        let id = self
            .client
            .open_path(now, addr(CLIENT2), addr(SERVER))
            .unwrap_or_else(|e| panic!("{} client could not open a path: {e}", self.client.name()));
        assert_eq!(id, 1);
        let ok = self.drive_until(Duration::from_secs(3), |w| {
            w.client.path_validated(id) && w.server.path_validated(id)
        });
        assert!(
            ok,
            "path 1 not validated: client ({}) {}, server ({}) {}",
            self.client.name(),
            self.client.path_validated(id),
            self.server.name(),
            self.server.path_validated(id)
        );
        id
    }
}

/// One direction of a transfer on one bidirectional stream.
#[derive(Default)]
pub(crate) struct Flow {
    pub(crate) id: Option<u64>,
    pub(crate) sent: usize,
    pub(crate) fin_sent: bool,
    pub(crate) received: Vec<u8>,
    pub(crate) fin_seen: bool,
}

pub(crate) fn pump(p: &mut dyn Peer, now: Instant, f: &mut Flow, data: &[u8], opener: bool) {
    if f.id.is_none() {
        f.id = if opener { p.open_bi() } else { p.accept_bi() };
    }
    let Some(id) = f.id else { return };
    while f.sent < data.len() {
        let n = p.write(id, &data[f.sent..(f.sent + 256 * 1024).min(data.len())]);
        if n == 0 {
            break;
        }
        f.sent += n;
    }
    if f.sent == data.len() && !f.fin_sent {
        p.finish(id);
        f.fin_sent = true;
    }
    if !f.fin_seen {
        f.fin_seen = p.read(now, id, &mut f.received);
    }
}

/// `size` bytes each way on one bidirectional stream the client opens; `at(w)` runs once when the server has
/// received `trigger` bytes. Checks both directions with SHA-256.
pub(crate) fn transfer(w: &mut World, size: usize, trigger: usize, mut at: impl FnMut(&mut World)) {
    let a = pattern(size, 1);
    let b = pattern(size, 2);
    let mut fc = Flow::default();
    let mut fs = Flow::default();
    let mut fired = false;
    let ok = w.drive_until(Duration::from_secs(30), |w| {
        let now = w.now;
        pump(w.client.as_mut(), now, &mut fc, &a, true);
        pump(w.server.as_mut(), now, &mut fs, &b, false);
        if !fired && fs.received.len() >= trigger {
            fired = true;
            at(w);
        }
        fc.fin_seen && fs.fin_seen
    });
    assert!(fired, "trigger never reached");
    assert!(
        ok,
        "transfer incomplete: client ({}) got {} of {size}, server ({}) got {} of {size}",
        w.client.name(),
        fc.received.len(),
        w.server.name(),
        fs.received.len()
    );
    assert_eq!(sha256(&fs.received), sha256(&a), "client → server data corrupted");
    assert_eq!(sha256(&fc.received), sha256(&b), "server → client data corrupted");
}

/// Prints what each side and the link say about each path (for the report, `--nocapture`).
pub(crate) fn report(w: &mut World, what: &str) {
    let mut lines = vec![format!("[{what}] role {:?}", w.role)];
    for (label, p) in [("client", &mut w.client), ("server", &mut w.server)] {
        for id in p.paths() {
            lines.push(format!(
                "  {label} {} path {id}: (sent, received) = {:?}, srtt {:?}",
                p.name(),
                p.path_bytes(id),
                p.rtt(id)
            ));
        }
        lines.push(format!(
            "  {label} {} lost {}: {}",
            p.name(),
            p.lost(),
            p.summary()
        ));
    }
    let mut tuples: Vec<_> = w.sent.iter().collect();
    tuples.sort();
    for ((from, to), n) in tuples {
        lines.push(format!("  link {from} -> {to}: {n} bytes"));
    }
    eprintln!("{}", lines.join("\n"));
}
