//! The byte pattern every simulated application sends: the byte at stream offset `o` is `o mod 251`, so a
//! receiver checks every byte it reads without keeping a copy of what was sent.

use std::sync::OnceLock;

use bytes::Bytes;

/// Period of the byte pattern (a prime, so that it never lines up with packet sizes).
pub const PATTERN_PERIOD: usize = 251;
/// Largest single write or pattern comparison.
pub const CHUNK: usize = 1 << 20;

/// The pattern buffer: `CHUNK + PATTERN_PERIOD` bytes, byte `i` = `i mod 251`.
fn pattern() -> &'static Bytes {
    static PATTERN: OnceLock<Bytes> = OnceLock::new();
    PATTERN.get_or_init(|| {
        let v: Vec<u8> = (0..CHUNK + PATTERN_PERIOD)
            .map(|i| u8::try_from(i % PATTERN_PERIOD).unwrap_or(0))
            .collect();
        Bytes::from(v)
    })
}

/// `len` pattern bytes (at most [`CHUNK`]) starting at stream offset `offset`, without a copy.
pub fn pattern_at(offset: u64, len: usize) -> Bytes {
    let start = usize::try_from(offset % PATTERN_PERIOD as u64).unwrap_or(0);
    pattern().slice(start..start.saturating_add(len.min(CHUNK)))
}

/// Whether `data`, received at stream offset `offset`, matches the pattern.
pub fn matches_pattern(offset: u64, data: &[u8]) -> bool {
    let mut off = offset;
    data.chunks(CHUNK).all(|piece| {
        // A borrowed slice of the pattern: no reference count taken and dropped per comparison.
        let start = usize::try_from(off % PATTERN_PERIOD as u64).unwrap_or(0);
        let ok = pattern().get(start..start.saturating_add(piece.len())) == Some(piece);
        off = off.saturating_add(piece.len() as u64);
        ok
    })
}

/// The read count at which a sender whose write was refused writes again: another [`CHUNK`] beyond `read`,
/// but never beyond what was `written` (a sender whose acknowledgements were lost cannot wait forever).
/// Writing in large pieces keeps a stream's chunk list short, which matters because the stack walks it from
/// the acknowledged base to the offset it sends, for every packet.
pub fn refill_mark(read: u64, written: u64) -> u64 {
    read.saturating_add(CHUNK as u64).min(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_slices_line_up() {
        let a = pattern_at(0, 1000);
        let b = pattern_at(1000, 500);
        let whole: Vec<u8> = (0..1500u64).map(|i| (i % 251) as u8).collect();
        assert_eq!([a.as_ref(), b.as_ref()].concat(), whole);
        assert!(matches_pattern(1000, &b));
        assert!(!matches_pattern(1001, &b));
        let big: Vec<u8> = (0..200_000u64).map(|i| ((i + 7) % 251) as u8).collect();
        assert!(matches_pattern(7, &big));
    }
}
