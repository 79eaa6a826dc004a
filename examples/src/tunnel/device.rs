//! The TUN device: created, addressed, sized and brought up through the `tun-rs` crate, with the errors a
//! user can act on (no CAP_NET_ADMIN, no /dev/net/tun) told apart from the others.

use std::io::ErrorKind;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use tun_rs::{AsyncDevice, DeviceBuilder};

use super::TunnelError;

/// The character device every TUN device is opened through on Linux.
pub const CLONE_DEVICE: &str = "/dev/net/tun";

/// Creates the TUN device `name` with `address`/`prefix`, MTU `mtu`, and brings it up.
pub fn open(name: &str, (address, prefix): (IpAddr, u8), mtu: u16) -> Result<Arc<AsyncDevice>, TunnelError> {
    if !Path::new(CLONE_DEVICE).exists() {
        return Err(TunnelError::Privilege(format!(
            "{CLONE_DEVICE} is missing: load the tun module (modprobe tun) or give the container the device"
        )));
    }
    let builder = DeviceBuilder::new().name(name).mtu(mtu);
    let builder = match address {
        IpAddr::V4(a) => builder.ipv4(a, prefix, None),
        IpAddr::V6(a) => builder.ipv6(a, prefix),
    };
    builder.build_async().map(Arc::new).map_err(|e| match e.kind() {
        ErrorKind::PermissionDenied => TunnelError::Privilege(format!(
            "cannot create TUN device {name}: permission denied: needs CAP_NET_ADMIN (run as root or \
             `setcap cap_net_admin+ep` the binary) and read-write access to {CLONE_DEVICE}"
        )),
        ErrorKind::NotFound => TunnelError::Privilege(format!(
            "cannot create TUN device {name}: {CLONE_DEVICE} cannot be opened ({e}): load the tun module"
        )),
        _ => TunnelError::Io {
            what: format!("cannot create TUN device {name} with address {address}/{prefix} and MTU {mtu}"),
            source: e,
        },
    })
}

/// Sets the device's MTU.
pub fn set_mtu(dev: &AsyncDevice, name: &str, mtu: u16) -> Result<(), TunnelError> {
    dev.set_mtu(mtu).map_err(|source| TunnelError::Io {
        what: format!("cannot set the MTU of {name} to {mtu}"),
        source,
    })
}
