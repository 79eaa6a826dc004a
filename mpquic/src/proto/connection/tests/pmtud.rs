//! Path MTU discovery between two connections of this crate over the pair harness (no size limit on the
//! link): each path of each side reaches the default upper bound, 1452 bytes, with one probe; the qlog
//! records the change; and discovery off keeps 1200.

use std::time::Duration;

use super::harness::Pair;
use super::multipath::mp_config;
use crate::cc::PathId;
use crate::proto::connection::{MtuDiscoveryConfig, TransportConfig};

#[test]
fn both_sides_reach_the_upper_bound_on_every_path() {
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
