//! Packet-number truncation and recovery (RFC 9000 §17.1, Appendix A.2 and A.3).
//!
//! A packet carries only the low 1–4 bytes of its 62-bit packet number. The sender picks enough bytes to cover
//! twice the distance to the largest acknowledged packet; the receiver recovers the full number as the value
//! closest to one more than the largest packet number it has processed in that packet-number space. In
//! multipath each path has its own packet-number space, so "largest" is per path.

/// The largest packet number, 2^62 − 1 (RFC 9000 §12.3).
pub const MAX_PACKET_NUMBER: u64 = (1 << 62) - 1;

/// How many bytes (1–4) the packet number `full_pn` needs, given the largest packet number the peer has
/// acknowledged in that space (RFC 9000 §17.1 and Appendix A.2).
pub fn encoded_len(full_pn: u64, largest_acked: Option<u64>) -> usize {
    // RFC 9000 §17.1: "the sender MUST use a packet number size able to represent more than twice as large a
    // range as the difference between the largest acknowledged packet number and the packet number being sent".
    let num_unacked = match largest_acked {
        Some(acked) => full_pn.saturating_sub(acked),
        None => full_pn.saturating_add(1),
    };
    let min_bits = 64 - num_unacked.leading_zeros() + 1;
    (min_bits.div_ceil(8) as usize).clamp(1, 4)
}

/// The low `len` bytes of `full_pn`, as written in the header.
pub fn truncate(full_pn: u64, len: usize) -> u32 {
    match len {
        1 => (full_pn & 0xff) as u32,
        2 => (full_pn & 0xffff) as u32,
        3 => (full_pn & 0xff_ffff) as u32,
        _ => (full_pn & 0xffff_ffff) as u32,
    }
}

/// Recovers the full packet number from the `len`-byte `truncated` value, given the largest packet number
/// processed so far in that space (RFC 9000 Appendix A.3).
pub fn decode(truncated: u32, len: usize, largest_pn: Option<u64>) -> u64 {
    let expected = largest_pn.map_or(0, |l| l.saturating_add(1));
    let bits = 8 * len.clamp(1, 4) as u32;
    let win = 1u64 << bits;
    let hwin = win / 2;
    let mask = win - 1;
    let candidate = (expected & !mask) | u64::from(truncated);
    if candidate.saturating_add(hwin) <= expected && candidate <= (1 << 62) - win {
        candidate + win
    } else if candidate > expected.saturating_add(hwin) && candidate >= win {
        candidate - win
    } else {
        candidate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rfc9000_appendix_a2_encoding_examples() {
        // 0xac5c02 with 0xabe8b3 acknowledged: 29,519 outstanding, twice that needs 16 bits.
        assert_eq!(encoded_len(0xac5c02, Some(0xabe8b3)), 2);
        // 0xace8fe with the same acknowledgement needs 24 bits.
        assert_eq!(encoded_len(0xace8fe, Some(0xabe8b3)), 3);
        assert_eq!(encoded_len(0, None), 1);
        assert_eq!(encoded_len(127, None), 2); // 128 outstanding needs 9 bits
        assert_eq!(encoded_len(126, None), 1);
        assert_eq!(encoded_len(u64::MAX >> 2, None), 4);
    }

    #[test]
    fn rfc9000_appendix_a3_decoding_example() {
        // Largest 0xa82f30ea, 16-bit value 0x9b32 decodes to 0xa82f9b32.
        assert_eq!(decode(0x9b32, 2, Some(0xa82f30ea)), 0xa82f9b32);
        assert_eq!(decode(0, 1, None), 0);
        assert_eq!(decode(0xff, 1, Some(0x100)), 0xff);
        assert_eq!(decode(0x01, 1, Some(0x1ff)), 0x201);
    }

    proptest! {
        /// Whatever the sender encodes, the receiver recovers, as long as the receiver's largest processed packet
        /// is within the window the sender assumed.
        #[test]
        fn encode_then_decode_recovers(acked in 0u64..(1 << 40), gap in 1u64..(1 << 20), lag in 0u64..(1 << 20)) {
            let pn = acked + gap;
            let len = encoded_len(pn, Some(acked));
            // The receiver has processed something between the acknowledged packet and pn - 1.
            let largest = acked + lag.min(gap - 1);
            prop_assert_eq!(decode(truncate(pn, len), len, Some(largest)), pn);
        }

        #[test]
        fn decode_never_panics(t in any::<u32>(), len in 0usize..8, largest in proptest::option::of(any::<u64>())) {
            let _ = decode(t, len, largest);
        }
    }
}
