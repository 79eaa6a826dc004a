//! The data every perf stream carries: byte `i` of a stream is `PATTERN[i mod 65521]`, so the receiver checks
//! each byte against its offset (a lost, duplicated or misplaced byte is detected) at the cost of a memcmp.

use std::sync::OnceLock;

use bytes::Bytes;

/// Period of the pattern: a prime, so that it never lines up with chunk or packet sizes.
const PERIOD: usize = 65_521;

/// Largest slice [`window`] returns.
pub const MAX_CHUNK: usize = 64 * 1024;

/// The pattern repeated to `PERIOD + MAX_CHUNK` bytes, so that any window of up to `MAX_CHUNK` bytes is
/// contiguous.
fn buffer() -> &'static [u8] {
    static BUF: OnceLock<Vec<u8>> = OnceLock::new();
    BUF.get_or_init(|| {
        (0..PERIOD + MAX_CHUNK)
            .map(|i| {
                let j = i % PERIOD;
                (j as u8).wrapping_mul(31) ^ ((j >> 8) as u8).wrapping_add(7)
            })
            .collect()
    })
}

/// The stream's bytes from `offset`, at most `len` (capped at [`MAX_CHUNK`]) of them.
pub fn window(offset: u64, len: usize) -> &'static [u8] {
    let start = (offset % PERIOD as u64) as usize;
    let len = len.min(MAX_CHUNK);
    buffer().get(start..start + len).unwrap_or_default()
}

/// [`window`] as `Bytes` that borrow the static pattern (no copy).
pub fn chunk(offset: u64, len: usize) -> Bytes {
    Bytes::from_static(window(offset, len))
}

/// Whether `data` is the stream's content at `offset`.
pub fn matches(offset: u64, data: &[u8]) -> bool {
    let mut at = offset;
    data.chunks(MAX_CHUNK).all(|c| {
        let ok = window(at, c.len()) == c;
        at += c.len() as u64;
        ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_the_period_and_detect_shifts() {
        // Byte i is PATTERN[i mod 65521], whatever window it is read through.
        let long: Vec<u8> = (0..200_000u64).flat_map(|o| window(o, 1).to_vec()).collect();
        assert_eq!(long.len(), 200_000);
        assert_eq!(long.get(..1000), long.get(PERIOD..PERIOD + 1000));
        assert!(matches(0, &long));
        assert!(matches(12_345, long.get(12_345..150_000).unwrap()));
        // One byte off, or the right bytes at the wrong offset, is detected.
        assert!(!matches(12_346, long.get(12_345..150_000).unwrap()));
        let mut bad = long.clone();
        bad[77_777] ^= 1;
        assert!(!matches(0, &bad));
        assert_eq!(window(5, 1 << 20).len(), MAX_CHUNK);
    }
}
