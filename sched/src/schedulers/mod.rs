//! Every built-in scheduler, one per file, each citing the paper or kernel file it follows.
//!
//! All of them go through [`crate::ConnView::eligible`] (backup and reinjection rules of Linux MPTCP's
//! `mptcp_is_available`) and return only paths for which [`crate::PathView::can_send`] holds.

mod backup;
mod blest;
mod daps;
mod ecf;
mod llhd;
mod minrtt;
mod otias;
mod redundant;
mod roundrobin;
mod single;
mod sttf;
mod weighted;

pub use backup::Backup;
pub use blest::Blest;
pub use daps::Daps;
pub use ecf::Ecf;
pub use llhd::Llhd;
pub use minrtt::MinRtt;
pub use otias::Otias;
pub use redundant::Redundant;
pub use roundrobin::RoundRobin;
pub use single::Single;
pub use sttf::{MAX_ROUNDS as STTF_MAX_ROUNDS, Sttf};
pub use weighted::{MAX_WEIGHT, Weighted};
