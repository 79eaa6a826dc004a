//! The receiver's reorder buffer: packets that arrive over several paths come out in sequence order, within
//! a window of packets and a hold time, in the manner of multipath GRE tunnels.
//!
//! Packets carry the sender's sequence number ([`super::framing`]). The buffer delivers packet `next` as soon
//! as it arrives, together with every held packet that follows it without a gap. A packet beyond a gap is
//! held until one of three things happens:
//!
//! - the gap fills: the missing packet arrives and everything up to the next gap is delivered;
//! - the hold time expires: the hold runs from the arrival of the lowest-numbered held packet; when it ends,
//!   the gap is given up (the missing packets count as skipped), and delivery resumes from that packet;
//! - the window overflows: holding one more packet than `window` gives the lowest gap up at once.
//!
//! A packet numbered below `next` (its gap was given up, or a duplicate) is *late*: it is delivered at once,
//! since the IP layer above copes with reordering and a late packet is worth more than a drop. The buffer
//! holds at most `window` packets, so a peer cannot make it grow without bound.
//!
//! The buffer itself is the simulator's (`mpquic_netsim::engine::tunnel_reorder`), so the tunnel that
//! study E simulates and this one reorder alike; the tests below pin the behaviour the tunnel relies on.

use std::time::Duration;

use bytes::Bytes;

pub use mpquic_netsim::engine::tunnel_reorder::ReorderStats;

/// The largest `--reorder-window`: 65536 packets (about 94 MB of 1432-byte packets at the very most).
pub const MAX_WINDOW: usize = 65_536;

/// The longest `--reorder-hold`: 10 s.
pub const MAX_HOLD: Duration = Duration::from_secs(10);

/// The reorder buffer of one direction, over the tunnel's IP packets.
pub type ReorderBuffer = mpquic_netsim::engine::tunnel_reorder::ReorderBuffer<Bytes>;

/// A buffer holding at most `window` packets (1 to [`MAX_WINDOW`]) for at most about `hold` (at most
/// [`MAX_HOLD`]).
pub fn buffer(window: usize, hold: Duration) -> ReorderBuffer {
    ReorderBuffer::new(window.clamp(1, MAX_WINDOW), hold.min(MAX_HOLD))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;

    fn p(seq: u64) -> Bytes {
        Bytes::from(seq.to_be_bytes().to_vec())
    }

    fn seqs(out: &[Bytes]) -> Vec<u64> {
        out.iter()
            .map(|b| u64::from_be_bytes(b[..8].try_into().unwrap()))
            .collect()
    }

    #[test]
    fn in_order_packets_pass_straight_through() {
        let t = crate::clock::now();
        let mut r = buffer(8, Duration::from_millis(50));
        let mut out = Vec::new();
        for s in 0..5 {
            r.push(s, p(s), t, &mut out);
            assert!(r.is_empty());
        }
        assert_eq!(seqs(&out), [0, 1, 2, 3, 4]);
        assert_eq!(r.stats().in_order, 5);
        assert_eq!(r.deadline(), None);
    }

    #[test]
    fn a_gap_filled_within_the_hold_time_releases_everything_in_order() {
        let t = crate::clock::now();
        let hold = Duration::from_millis(50);
        let mut r = buffer(8, hold);
        let mut out = Vec::new();
        r.push(0, p(0), t, &mut out);
        // 1 is late: 2 and 3 wait, the hold runs from 2's arrival.
        r.push(2, p(2), t + Duration::from_millis(1), &mut out);
        r.push(3, p(3), t + Duration::from_millis(2), &mut out);
        assert_eq!(seqs(&out), [0]);
        assert_eq!(r.len(), 2);
        assert_eq!(r.deadline(), Some(t + Duration::from_millis(51)));
        r.expire(t + Duration::from_millis(50), &mut out);
        assert_eq!(seqs(&out), [0]);
        r.push(1, p(1), t + Duration::from_millis(30), &mut out);
        assert_eq!(seqs(&out), [0, 1, 2, 3]);
        assert!(r.is_empty());
        let s = r.stats();
        assert_eq!((s.in_order, s.held, s.late, s.skipped_timeout), (4, 2, 0, 0));
    }

    #[test]
    fn an_expired_gap_is_given_up_and_its_packet_counts_late() {
        let t = crate::clock::now();
        let mut r = buffer(8, Duration::from_millis(20));
        let mut out = Vec::new();
        r.push(0, p(0), t, &mut out);
        r.push(3, p(3), t + Duration::from_millis(5), &mut out);
        r.push(5, p(5), t + Duration::from_millis(6), &mut out);
        // 3's hold ends at 25 ms: 1 and 2 are skipped, 3 goes; 5 waits from 6 ms until 26 ms.
        r.expire(t + Duration::from_millis(24), &mut out);
        assert_eq!(seqs(&out), [0]);
        r.expire(t + Duration::from_millis(25), &mut out);
        assert_eq!(seqs(&out), [0, 3]);
        assert_eq!(r.deadline(), Some(t + Duration::from_millis(26)));
        r.expire(t + Duration::from_millis(26), &mut out);
        assert_eq!(seqs(&out), [0, 3, 5]);
        // 2 arrives after all: delivered at once, as late.
        r.push(2, p(2), t + Duration::from_millis(30), &mut out);
        assert_eq!(seqs(&out), [0, 3, 5, 2]);
        let s = r.stats();
        assert_eq!(
            (s.in_order, s.held, s.late, s.skipped_timeout, s.skipped_overflow),
            (3, 2, 1, 3, 0)
        );
        // A push past the deadline expires the gap too.
        r.push(8, p(8), t + Duration::from_millis(31), &mut out);
        r.push(9, p(9), t + Duration::from_millis(60), &mut out);
        assert_eq!(seqs(&out), [0, 3, 5, 2, 8, 9]);
    }

    #[test]
    fn window_overflow_gives_the_lowest_gap_up_at_once() {
        let t = crate::clock::now();
        let mut r = buffer(3, Duration::from_secs(1));
        let mut out = Vec::new();
        // 0 never comes; 1, 2, 3 fill the window; 5 makes four held packets: gap 0 is given up and 1, 2, 3
        // go; 5 stays behind gap 4.
        for s in [1, 2, 3] {
            r.push(s, p(s), t, &mut out);
        }
        assert!(out.is_empty());
        r.push(5, p(5), t, &mut out);
        assert_eq!(seqs(&out), [1, 2, 3]);
        assert_eq!(r.len(), 1);
        assert_eq!(r.stats().skipped_overflow, 1);
        r.push(4, p(4), t, &mut out);
        assert_eq!(seqs(&out), [1, 2, 3, 4, 5]);
        // A duplicate of a held packet is dropped, one of a delivered packet is late.
        r.push(7, p(7), t, &mut out);
        r.push(7, p(7), t, &mut out);
        assert_eq!(r.len(), 1);
        r.push(4, p(4), t, &mut out);
        assert_eq!(r.stats().late, 1);
    }
}
