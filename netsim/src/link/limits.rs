//! The ranges of a link direction's settings, checked by [`super::LinkConfig::validate`] and by every
//! setter, for scenario files and `mpquic-netem` alike.
//!
//! Each bound is far beyond any network the simulator or the emulator is meant to model and keeps the
//! arithmetic and the memory of a run finite: a one-hour delay is 3.6 · 10¹² ns, a 1 Tbit/s link
//! serialises a byte in 8 ps. The table of every limit is `docs/limits.md`.
//!
//! | field | range |
//! |---|---|
//! | `rate_bps` | 1 to [`MAX_RATE_BPS`] (1 Tbit/s) |
//! | `delay`, jitter `max`, `mean`, `stddev`, `queue.base_rtt` | ≤ [`MAX_DELAY`] (1 hour; `base_rtt` > 0) |
//! | `queue.packets` | 1 to [`MAX_QUEUE_PACKETS`] |
//! | `queue.bytes` | 1 to [`MAX_QUEUE_BYTES`] (1 GB) |
//! | `queue.multiple` | > 0 and ≤ [`MAX_BDP_MULTIPLE`] |
//! | probabilities (`loss.*`, `impairments.*`) | 0 to 1 |
//! | `loss.burst` | 1 to [`super::loss::MAX_BURST`] (1024) |
//! | `mtu` | [`MIN_MTU`] (68) to [`MAX_MTU`] (65 535) |

use std::time::Duration;

/// The fastest link: 1 Tbit/s.
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000;
/// The longest one-way delay, jitter or base RTT: one hour.
pub const MAX_DELAY: Duration = Duration::from_secs(3_600);
/// The largest queue in packets.
pub const MAX_QUEUE_PACKETS: u64 = 1_000_000;
/// The largest queue in bytes: 1 GB.
pub const MAX_QUEUE_BYTES: u64 = 1_000_000_000;
/// The smallest MTU: IPv4's minimum (RFC 791: "Every internet module must be able to forward a datagram of
/// 68 octets without further fragmentation").
pub const MIN_MTU: u32 = 68;
/// The largest MTU: the largest IPv4 packet (its 16-bit Total Length).
pub const MAX_MTU: u32 = 65_535;
/// The largest queue as a multiple of the bandwidth-delay product.
pub const MAX_BDP_MULTIPLE: f64 = 1_000.0;
