//! The data half of a perf stream, the same for both roles: sending the [`pattern`] for an [`Amount`], and
//! receiving it to the stream's end with every byte checked. Chunks are `Bytes` over the static pattern on the
//! way out and the stream's own chunks on the way in: no copy either way.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use mpquic::runtime::{RecvStream, SendStream};

use super::PerfError;
use super::pattern::{self, MAX_CHUNK};
use super::wire::Amount;

/// Sends the pattern from offset 0: `amount` bytes, or until `amount`'s time has passed since `start`.
/// Counts what it sends in `moved`; returns the total. Does not finish the stream.
pub async fn send_pattern(
    send: &mut SendStream,
    amount: Amount,
    start: Instant,
    moved: &AtomicU64,
) -> Result<u64, PerfError> {
    let mut offset = 0u64;
    loop {
        let len = match amount {
            Amount::Bytes(n) => usize::try_from(n.saturating_sub(offset))
                .unwrap_or(MAX_CHUNK)
                .min(MAX_CHUNK),
            Amount::Time(d) if start.elapsed() < d => MAX_CHUNK,
            Amount::Time(_) => 0,
        };
        if len == 0 {
            return Ok(offset);
        }
        send.write_chunk(pattern::chunk(offset, len)).await?;
        offset += len as u64;
        moved.fetch_add(len as u64, Ordering::Relaxed);
    }
}

/// Reads a stream to its end, checking every byte against the pattern; counts in `moved`, returns the
/// length.
pub async fn receive_pattern(recv: &mut RecvStream, moved: &AtomicU64) -> Result<u64, PerfError> {
    let mut offset = 0u64;
    while let Some(chunk) = recv.read_chunk(usize::MAX).await? {
        if !pattern::matches(offset, &chunk) {
            return Err(PerfError::Corrupt { offset });
        }
        offset += chunk.len() as u64;
        moved.fetch_add(chunk.len() as u64, Ordering::Relaxed);
    }
    Ok(offset)
}
