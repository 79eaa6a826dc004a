//! Path MTU discovery between two connections of this crate over the pair harness (no size limit on the
//! link): each side reaches the default upper bound, 1452 bytes, or its own bound; discovery off keeps
//! 1200; a peer that moves to another IP address is searched again from 1200.

use std::time::Duration;

use super::harness::Pair;
use super::multipath::mp_config;
use crate::cc::PathId;
use crate::proto::connection::{MtuDiscoveryConfig, TransportConfig};

#[test]
fn both_sides_reach_the_upper_bound() {
    let transport = TransportConfig {
        mtu_discovery: Some(MtuDiscoveryConfig::default()),
        ..mp_config()
    };
    let mut p = Pair::new(None, transport, 901);
    p.handshake();
    p.run_for(Duration::from_millis(300));
    assert_eq!(p.client.conn().path_stats(PathId(0)).unwrap().mtu, 1452);
    assert_eq!(p.server.conn().path_stats(PathId(0)).unwrap().mtu, 1452);
    assert_eq!(p.client.conn().stats().mtu_black_holes, 0);
}

#[test]
fn discovery_off_keeps_the_configured_size() {
    let mut p = Pair::new(None, mp_config(), 902);
    p.handshake();
    p.run_for(Duration::from_millis(300));
    assert_eq!(p.client.conn().path_stats(PathId(0)).unwrap().mtu, 1200);
    assert_eq!(p.server.conn().path_stats(PathId(0)).unwrap().mtu, 1200);
}

#[test]
fn each_side_searches_up_to_its_own_upper_bound() {
    // Both sides advertise max_udp_payload_size 65527, so each side's own upper bound ends its search: the
    // client stops at 1300, the server reaches 9000 (the harness link carries any size).
    let bound = |upper_bound| TransportConfig {
        mtu_discovery: Some(MtuDiscoveryConfig {
            upper_bound,
            ..MtuDiscoveryConfig::default()
        }),
        ..TransportConfig::default()
    };
    let (cc, mut sc) = super::harness::configs(None, bound(1300));
    sc.transport = bound(9000);
    let mut p = Pair::from_configs(cc, sc, 903);
    p.handshake();
    p.run_for(Duration::from_millis(300));
    assert_eq!(p.client.conn().path_stats(PathId(0)).unwrap().mtu, 1300);
    assert_eq!(p.server.conn().path_stats(PathId(0)).unwrap().mtu, 9000);
}

#[test]
fn a_peer_that_moves_to_another_ip_is_searched_again_from_1200() {
    let transport = TransportConfig {
        initial_max_path_id: None,
        ..TransportConfig::default()
    };
    let mut p = Pair::new(None, transport, 904);
    p.handshake();
    p.run_for(Duration::from_millis(300));
    assert_eq!(p.server.conn().path_stats(PathId(0)).unwrap().mtu, 1452);
    // The client appears from another IP address (a NAT rebinding to a new address): the server's path 0
    // restarts its congestion state and its MTU, validates the address, then searches again.
    p.client_nat = Some(super::harness::addr("192.0.2.7:40000"));
    let mut raw = Vec::new();
    crate::proto::frame::Frame::Ping.encode(&mut raw);
    p.client.conn().injected.one_rtt.push(raw);
    let mut seen = Vec::new();
    p.drive_until(Duration::from_secs(2), |p| {
        let m = p.server.conn().path_stats(PathId(0)).unwrap().mtu;
        if seen.last() != Some(&m) {
            seen.push(m);
        }
        seen.len() >= 3
    });
    assert_eq!(seen, vec![1452, 1200, 1452]);
}
