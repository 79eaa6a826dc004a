//! A reader slower than the network, mpquic to mpquic over loopback: the client reads a download 64 KiB at a
//! time and after each read awaits a simulated disk write of a few milliseconds, so the server keeps running
//! into flow control. The connection statistics (not wall time) must show that the receiver never kept
//! credit its update rule had made due for longer than about one round trip, while the sender did wait on
//! credit (the test exercises what it claims to). The reader runs in a task of its own; with a blocking
//! disk write, a runtime that left due credit to a task woken from the reader's worker thread kept it
//! unsent until the reader ran dry (measured: 33 ms at worst, 1.1 s in all over 8 MiB; now 40 µs and
//! 0.4 ms).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::time::Duration;

use common::{certs, init_tracing, pattern, rustls_client, rustls_server, sha256};
use mpquic::runtime::{self as mp, TransportConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Bytes downloaded: 128 reads of 64 KiB.
const DOWNLOAD: usize = 8 << 20;
/// What the application asks for per read.
const READ: usize = 64 * 1024;
/// The simulated disk write after each read.
const DISK_WRITE: Duration = Duration::from_millis(8);

/// How the application waits for its simulated disk write.
#[derive(Debug, Clone, Copy)]
enum DiskWrite {
    /// An awaited write (tokio sleep): the task yields meanwhile.
    Awaited,
    /// A blocking write (as `std::fs::File::write_all` is) in the reading task: the task does not yield
    /// between reads as long as data is ready, and neither does its worker thread.
    Blocking,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn due_credit_leaves_within_a_round_trip_when_the_reader_is_slow() {
    slow_reader(DiskWrite::Awaited).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn due_credit_leaves_within_a_round_trip_when_the_reader_blocks_its_thread() {
    slow_reader(DiskWrite::Blocking).await;
}

async fn slow_reader(disk: DiskWrite) {
    tokio::time::timeout(Duration::from_secs(120), async {
        init_tracing();
        let c = certs();
        let server = mp::Endpoint::server(
            mp::ServerConfig {
                tls: rustls_server(&c),
                transport: TransportConfig::default(),
            },
            common::loopback(),
        )
        .unwrap();
        let addr = server.local_addr();
        let data = pattern(DOWNLOAD, 5);
        let served = data.clone();
        let srv = tokio::spawn(async move {
            let conn = server.accept().await.unwrap().await.unwrap();
            let (mut send, mut recv) = conn.accept_bi().await.unwrap();
            let req = recv.read_to_end(64).await.unwrap();
            assert_eq!(req, b"GET");
            send.write_all(&served).await.unwrap();
            send.finish().unwrap();
            conn.closed().await;
            conn.stats()
        });
        let client = mp::Endpoint::client(common::loopback()).unwrap();
        client.set_default_client_config(mp::ClientConfig {
            tls: rustls_client(&c),
            transport: TransportConfig::default(),
        });
        let conn = client.connect(addr, "localhost").unwrap().await.unwrap();
        let (mut send, mut recv) = conn.open_bi().await.unwrap();
        send.write_all(b"GET").await.unwrap();
        send.shutdown().await.unwrap();
        // The application reads in a task of its own, on a worker thread of the runtime (as a server's
        // per-request task would): what it wakes from there runs on that thread only once it yields.
        let reader = tokio::spawn(async move {
            let mut got = Vec::with_capacity(DOWNLOAD);
            let mut buf = vec![0u8; READ];
            let mut reads = 0usize;
            loop {
                // tokio's `AsyncRead`, as an application copying into a file would use it.
                let n = AsyncReadExt::read(&mut recv, &mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
                reads += 1;
                // A read returns what is ready, up to the buffer, not one packet's worth: with the reader
                // this slow the receive buffer holds more than 64 KiB at almost every read (the window is
                // 256 KiB and credit goes out when half of it is consumed), so 128 reads carry the
                // download; twice that means reads come back short, and the application pays its per-read
                // work per packet.
                assert!(
                    reads <= 2 * DOWNLOAD / READ,
                    "{reads} reads for {} bytes",
                    got.len()
                );
                match disk {
                    DiskWrite::Awaited => tokio::time::sleep(DISK_WRITE).await,
                    DiskWrite::Blocking => std::thread::sleep(DISK_WRITE),
                }
            }
            (got, reads)
        });
        let (got, reads) = reader.await.unwrap();
        assert_eq!((got.len(), sha256(&got)), (DOWNLOAD, sha256(&data)));
        let rx = conn.stats();
        let rtt = conn.rtt().unwrap();
        conn.close(mp::VarInt::from_u32(0), b"done");
        let tx = srv.await.unwrap();
        eprintln!(
            "reads {reads} rtt {rtt:?}\nreceiver {:?}\nsender {:?}",
            rx.flow, tx.flow
        );
        // The reader is slower than loopback: 64 KiB per 8 ms is at most 66 Mbit/s, so the sender must
        // have waited on credit, many times (about once per half window: 8 MiB / 128 KiB = 64).
        assert!(tx.flow.send_blocked_episodes >= 32, "{:?}", tx.flow);
        assert!(tx.flow.send_blocked_time > Duration::ZERO, "{:?}", tx.flow);
        assert!(rx.flow.credit_updates >= 32, "{:?}", rx.flow);
        // Due credit leaves at once: a read that makes it due wakes the connection, which sends it (measured
        // here: about 0.1 ms). "About one RTT": loopback's smoothed RTT is well under a millisecond, but a
        // loaded test machine delays the wake-up of the connection's task by scheduling quanta (one run
        // under a load of 7 on 2 cores saw 3.9 ms); three quarters of the disk write still tell such a delay
        // from credit that waits for the next read (at least one disk write, 8 ms, later) or for a timer (an
        // ACK delay of 25 ms, a PTO), which this guards against.
        let bound = rtt.max(DISK_WRITE * 3 / 4);
        assert!(
            rx.flow.credit_due_unsent_max <= bound,
            "{:?} > {bound:?}",
            rx.flow
        );
    })
    .await
    .unwrap();
}
