//! A UDP relay in front of the server that can change the client's apparent source port (rebind-port): the
//! client sends to the relay's front socket, the relay forwards from its back socket; [`Relay::rebind`] replaces
//! the back socket with a fresh one (a new port), as a NAT rebinding would. Like a NAT whose old binding has not
//! expired yet, the old back sockets still deliver what the server sends them: a client in the middle of a
//! download often has nothing of its own to send, and would never reveal its new port to a server whose packets
//! all vanished (the transfer would then stall until the idle timeout, whatever the stacks).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::UdpSocket;
use tokio::task::JoinHandle;

use crate::error::InteropError;

/// Datagrams the relay moved.
#[derive(Debug, Default)]
pub struct RelayCounters {
    /// Client → server datagrams forwarded.
    pub up: AtomicU64,
    /// Server → client datagrams forwarded.
    pub down: AtomicU64,
    /// Server → client datagrams that arrived on the newest back socket (sent by the server to the new port).
    pub down_since_rebind: AtomicU64,
    /// Rebinds done.
    pub rebinds: AtomicU64,
}

/// The relay.
pub struct Relay {
    front: Arc<UdpSocket>,
    back: Arc<Mutex<Arc<UdpSocket>>>,
    client: Arc<Mutex<Option<SocketAddr>>>,
    /// Counters.
    pub counters: Arc<RelayCounters>,
    up_task: JoinHandle<()>,
    down_tasks: Mutex<Vec<JoinHandle<()>>>,
}

async fn bind() -> Result<Arc<UdpSocket>, InteropError> {
    UdpSocket::bind("127.0.0.1:0")
        .await
        .map(Arc::new)
        .map_err(|e| InteropError::io("relay socket", e))
}

fn spawn_down(
    generation: u64,
    back: Arc<UdpSocket>,
    front: Arc<UdpSocket>,
    client: Arc<Mutex<Option<SocketAddr>>>,
    counters: Arc<RelayCounters>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 65_536];
        while let Ok((n, _)) = back.recv_from(&mut buf).await {
            let to = client.lock().ok().and_then(|c| *c);
            if let (Some(to), Some(d)) = (to, buf.get(..n)) {
                let _ = front.send_to(d, to).await;
                counters.down.fetch_add(1, Ordering::Relaxed);
                if counters.rebinds.load(Ordering::Relaxed) == generation {
                    counters.down_since_rebind.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    })
}

impl Relay {
    /// Starts a relay to `server`.
    pub async fn start(server: SocketAddr) -> Result<Relay, InteropError> {
        let front = bind().await?;
        let back0 = bind().await?;
        let back = Arc::new(Mutex::new(back0.clone()));
        let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
        let counters = Arc::new(RelayCounters::default());
        let up_task = {
            let (front, back, client, counters) =
                (front.clone(), back.clone(), client.clone(), counters.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65_536];
                while let Ok((n, from)) = front.recv_from(&mut buf).await {
                    if let Ok(mut c) = client.lock() {
                        *c = Some(from);
                    }
                    let sock = back.lock().ok().map(|b| b.clone());
                    if let (Some(sock), Some(d)) = (sock, buf.get(..n)) {
                        let _ = sock.send_to(d, server).await;
                        counters.up.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        };
        let down = spawn_down(0, back0, front.clone(), client.clone(), counters.clone());
        Ok(Relay {
            front,
            back,
            client,
            counters,
            up_task,
            down_tasks: Mutex::new(vec![down]),
        })
    }

    /// Where the client sends.
    pub fn front_addr(&self) -> Result<SocketAddr, InteropError> {
        self.front
            .local_addr()
            .map_err(|e| InteropError::io("relay address", e))
    }

    /// Moves the server-facing side to a new port.
    pub async fn rebind(&self) -> Result<(), InteropError> {
        let fresh = bind().await?;
        if let Ok(mut b) = self.back.lock() {
            *b = fresh.clone();
        }
        self.counters.down_since_rebind.store(0, Ordering::Relaxed);
        let generation = self.counters.rebinds.fetch_add(1, Ordering::Relaxed) + 1;
        let down = spawn_down(
            generation,
            fresh,
            self.front.clone(),
            self.client.clone(),
            self.counters.clone(),
        );
        if let Ok(mut d) = self.down_tasks.lock() {
            d.push(down);
        }
        Ok(())
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.up_task.abort();
        if let Ok(d) = self.down_tasks.lock() {
            for t in d.iter() {
                t.abort();
            }
        }
    }
}
