//! A receiving application that reads at a limited rate (`receiver.read_rate`): a token bucket.
//!
//! The bucket fills at the read rate up to a depth of 10 ms of reading (at least 3,000 bytes, two
//! datagrams' worth) and starts full. A read takes at most the whole bytes in the bucket. When a read
//! empties the bucket while data may be left, the application sleeps until the bucket holds half its depth
//! again ([`ReadLimiter::wake_at`]), so a limited reader wakes every 5 ms whatever its rate (every
//! 1.5 kB / rate when that is longer). Over any interval of length `T` the application reads at most
//! `rate · T + depth`: the depth is the only burst above the rate.
//!
//! Arithmetic is exact: tokens are counted in bit-nanoseconds (bits × 10⁹), so no rounding accumulates.

use std::time::Instant;

use mpquic::proto::connection::Connection;
use mpquic::proto::streams::{ReadError, StreamId};

use super::EngineError;
use super::pattern::matches_pattern;
use crate::time::SimTime;

/// Largest single read.
pub const READ_MAX: usize = 1 << 20;

/// How long a full bucket lasts at the read rate, in nanoseconds.
const DEPTH_NANOS: u128 = 10_000_000;
/// The smallest depth, bytes.
const MIN_DEPTH: u128 = 3_000;
/// Bit-nanoseconds per byte.
const BYTE: u128 = 8 * 1_000_000_000;

/// The token bucket of a rate-limited reader (see the module documentation).
#[derive(Clone, Debug)]
pub struct ReadLimiter {
    rate_bps: u128,
    /// Tokens in bit-nanoseconds.
    tokens: u128,
    /// Depth in bit-nanoseconds.
    depth: u128,
    /// When the bucket was last filled.
    last: SimTime,
}

impl ReadLimiter {
    /// A full bucket for `rate_bps` (at least 1) at time `now`.
    pub fn new(rate_bps: u64, now: SimTime) -> ReadLimiter {
        let rate_bps = u128::from(rate_bps.max(1));
        let depth = rate_bps
            .saturating_mul(DEPTH_NANOS)
            .max(MIN_DEPTH.saturating_mul(BYTE));
        ReadLimiter {
            rate_bps,
            tokens: depth,
            depth,
            last: now,
        }
    }

    /// Adds the tokens earned since the last fill, up to the depth.
    pub fn refill(&mut self, now: SimTime) {
        let dt = u128::from(now.as_nanos().saturating_sub(self.last.as_nanos()));
        self.tokens = self
            .tokens
            .saturating_add(self.rate_bps.saturating_mul(dt))
            .min(self.depth);
        self.last = self.last.max(now);
    }

    /// Whole bytes the application may read now.
    pub fn allowance(&self) -> u64 {
        u64::try_from(self.tokens / BYTE).unwrap_or(u64::MAX)
    }

    /// The application read `bytes` (at most [`ReadLimiter::allowance`]).
    pub fn consume(&mut self, bytes: u64) {
        self.tokens = self.tokens.saturating_sub(u128::from(bytes).saturating_mul(BYTE));
    }

    /// When the bucket holds half its depth (strictly after the last fill when it holds less now).
    pub fn wake_at(&self) -> SimTime {
        let target = self.depth / 2;
        let missing = target.saturating_sub(self.tokens);
        let nanos = missing.div_ceil(self.rate_bps).max(1);
        self.last
            .saturating_add_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}

/// What one pass over a stream read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamRead {
    /// Bytes read.
    pub bytes: u64,
    /// The stream ended (FIN read after all its data).
    pub fin: bool,
    /// The stream was reset or is gone.
    pub reset: bool,
    /// The reading stopped because the bucket was empty (data may be left).
    pub limited: bool,
}

/// Reads stream `id` of `conn` until nothing is left, the stream ends, or `limiter` (if any) allows no more;
/// checks every byte against the pattern from `offset` (advanced by what was read). `flow` names the flow in
/// a corruption error.
pub fn read_stream(
    conn: &mut Connection,
    id: StreamId,
    offset: &mut u64,
    limiter: &mut Option<ReadLimiter>,
    now: Instant,
    flow: usize,
) -> Result<StreamRead, EngineError> {
    let mut out = StreamRead::default();
    loop {
        let max = limiter.as_ref().map_or(READ_MAX, |l| {
            usize::try_from(l.allowance()).unwrap_or(READ_MAX).min(READ_MAX)
        });
        if max == 0 {
            out.limited = true;
            return Ok(out);
        }
        match conn.read(id, max, now) {
            Ok(Some(data)) => {
                if !matches_pattern(*offset, &data) {
                    return Err(EngineError::Corrupted {
                        flow,
                        offset: *offset,
                    });
                }
                let n = data.len() as u64;
                *offset = offset.saturating_add(n);
                out.bytes = out.bytes.saturating_add(n);
                if let Some(l) = limiter.as_mut() {
                    l.consume(n);
                }
            }
            Ok(None) => {
                out.fin = true;
                return Ok(out);
            }
            Err(ReadError::Blocked) => return Ok(out),
            Err(ReadError::Reset(_) | ReadError::ClosedStream) => {
                out.reset = true;
                return Ok(out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_at_the_rate_plus_one_depth() {
        // 20 Mbit/s = 2.5 MB/s; depth 10 ms = 25,000 bytes.
        let mut r = ReadLimiter::new(20_000_000, SimTime::ZERO);
        assert_eq!(r.allowance(), 25_000);
        r.consume(25_000);
        assert_eq!(r.allowance(), 0);
        // Half the depth (12,500 bytes) takes 5 ms.
        assert_eq!(r.wake_at(), SimTime::from_millis(5));
        r.refill(SimTime::from_millis(5));
        assert_eq!(r.allowance(), 12_500);
        // Reading everything it allows for one second: 2.5 MB on top of what was there.
        let mut read = 12_500u64;
        r.consume(12_500);
        for ms in 6..=1005 {
            r.refill(SimTime::from_millis(ms));
            let a = r.allowance();
            r.consume(a);
            read += a;
        }
        assert_eq!(read, 12_500 + 2_500_000);
        // The bucket never holds more than its depth.
        r.refill(SimTime::from_millis(5_000));
        assert_eq!(r.allowance(), 25_000);
    }

    #[test]
    fn slow_readers_keep_a_minimum_depth() {
        // 8 kbit/s = 1,000 bytes/s: depth 3,000 bytes; half of it refills in 1.5 s.
        let mut r = ReadLimiter::new(8_000, SimTime::ZERO);
        assert_eq!(r.allowance(), 3_000);
        r.consume(3_000);
        assert_eq!(r.wake_at(), SimTime::from_millis(1_500));
    }
}
