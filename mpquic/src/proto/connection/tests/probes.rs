//! PTO probes carry data when data is in flight (RFC 9002 §6.2.4).

use std::time::Duration;

use bytes::Bytes;

use super::harness::Pair;
use crate::proto::connection::TransportConfig;

#[test]
fn rfc9002_6_2_4_pto_probe_repeats_in_flight_data() {
    let mut p = Pair::new(None, TransportConfig::default(), 70);
    p.handshake();
    p.run_for(Duration::from_millis(300));
    let c = p.client.conn();
    let id = c.open_bi().unwrap();
    c.write(id, Bytes::from(vec![7u8; 3000])).unwrap();
    c.finish(id).unwrap();
    // The whole flight is lost; nothing new is written afterwards, so the PTO has no new data.
    p.loss = 1.0;
    p.step();
    p.loss = 0.0;
    let lost_before = p.client.conn().stats().packets_lost;
    let ok = p.drive_until(Duration::from_secs(5), |p| {
        let now = p.now;
        let s = p.server.conn();
        while s.accept_bi().is_some() {}
        s.read(id, 4000, now).ok().flatten().is_some()
    });
    assert!(ok, "data never arrived");
    // The data arrived through the probe itself: no loss had to be declared first (a bare PING probe would
    // have needed its ACK to declare the flight lost before repairing it).
    assert_eq!(p.client.conn().stats().packets_lost, lost_before);
}
