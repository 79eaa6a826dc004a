//! ACK (RFC 9000 §19.3) and PATH_ACK (draft-ietf-quic-multipath-21): one codec, the path ID present only in
//! PATH_ACK.
//!
//! Decoding validates every range once (no packet number below zero, RFC 9000 §19.3.1) and keeps the encoded
//! Gap/ACK Range pairs as a borrowed slice; [`Ack::iter`] walks them lazily. The work is bounded by the size of
//! the frame: a Range Count that cannot fit in the remaining bytes is rejected before any range is read.
//!
//! Encoding takes ranges of packet numbers, largest first ([`encode_ack`], [`ack_encoded_len`]), or the
//! fields and the Gap/ACK Range pairs a caller computed itself ([`AckFields`]).

use std::ops::RangeInclusive;

use bytes::BufMut;
use thiserror::Error;

use super::{FrameType, multipath};
use crate::cc::PathId;
use crate::proto::coding::{Decoder, VarInt};
use crate::proto::error::TransportError;

/// ECN counts of ACK_ECN / PATH_ACK_ECN (RFC 9000 §19.3.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct EcnCounts {
    /// Packets received with the ECT(0) codepoint.
    pub ect0: VarInt,
    /// Packets received with the ECT(1) codepoint.
    pub ect1: VarInt,
    /// Packets received with the ECN-CE codepoint.
    pub ce: VarInt,
}

impl EcnCounts {
    fn encoded_len(&self) -> usize {
        self.ect0.size() + self.ect1.size() + self.ce.size()
    }

    fn encode<B: BufMut>(&self, buf: &mut B) {
        self.ect0.encode(buf);
        self.ect1.encode(buf);
        self.ce.encode(buf);
    }

    fn decode(d: &mut Decoder<'_>) -> Result<Self, TransportError> {
        Ok(EcnCounts {
            ect0: d.varint()?,
            ect1: d.varint()?,
            ce: d.varint()?,
        })
    }
}

/// A decoded ACK or PATH_ACK frame. Its ranges were validated at decode time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack<'a> {
    /// The packet-number space acknowledged: `None` for ACK, the path ID for PATH_ACK.
    pub path_id: Option<PathId>,
    /// Largest Acknowledged.
    pub largest: VarInt,
    /// ACK Delay, in the sender's `ack_delay_exponent` units (unscaled).
    pub delay: VarInt,
    /// First ACK Range: packets `largest - first_range ..= largest` are acknowledged.
    pub first_range: VarInt,
    /// ECN counts (frame types 0x03 / 0x3f).
    pub ecn: Option<EcnCounts>,
    range_count: VarInt,
    ranges: &'a [u8],
}

/// The ranges given to [`encode_ack`] cannot be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum AckRangesError {
    /// No range was given.
    #[error("no ACK range")]
    Empty,
    /// A range is empty, not below the previous one with a gap of at least one packet number, or ≥ 2^62.
    #[error(
        "ACK ranges must be non-empty, descending, separated by at least one packet number and below 2^62"
    )]
    Unordered,
}

impl<'a> Ack<'a> {
    /// The frame type: ACK, ACK_ECN, PATH_ACK or PATH_ACK_ECN.
    pub fn ty(&self) -> FrameType {
        match (self.path_id.is_some(), self.ecn.is_some()) {
            (false, false) => FrameType::ACK,
            (false, true) => FrameType::ACK_ECN,
            (true, false) => FrameType::PATH_ACK,
            (true, true) => FrameType::PATH_ACK_ECN,
        }
    }

    /// Number of ACK Ranges after the first one (the frame's ACK Range Count).
    pub fn range_count(&self) -> u64 {
        self.range_count.into_inner()
    }

    /// The acknowledged packet numbers, as ranges from the largest down.
    pub fn iter(&self) -> AckIter<'a> {
        let largest = self.largest.into_inner();
        let smallest = largest.saturating_sub(self.first_range.into_inner());
        AckIter {
            d: Decoder::new(self.ranges),
            first: Some(smallest..=largest),
            smallest,
            left: self.range_count.into_inner(),
        }
    }

    /// The smallest acknowledged packet number.
    pub fn smallest(&self) -> u64 {
        self.iter().last().map_or(0, |r| *r.start())
    }

    /// Exact encoded size.
    pub fn encoded_len(&self) -> usize {
        self.ty().size()
            + self.path_id.map_or(0, |p| VarInt::from(p.0).size())
            + self.largest.size()
            + self.delay.size()
            + self.range_count.size()
            + self.first_range.size()
            + self.ranges.len()
            + self.ecn.map_or(0, |e| e.encoded_len())
    }

    /// Writes the frame as decoded.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        self.ty().encode(buf);
        if let Some(p) = self.path_id {
            VarInt::from(p.0).encode(buf);
        }
        self.largest.encode(buf);
        self.delay.encode(buf);
        self.range_count.encode(buf);
        self.first_range.encode(buf);
        buf.put_slice(self.ranges);
        if let Some(e) = &self.ecn {
            e.encode(buf);
        }
    }

    /// Decodes the body of an ACK, ACK_ECN, PATH_ACK or PATH_ACK_ECN frame.
    pub(super) fn decode(ty: FrameType, d: &mut Decoder<'a>) -> Result<Self, TransportError> {
        let path_id = if ty.is_multipath() {
            Some(multipath::decode_path_id(d)?)
        } else {
            None
        };
        let largest = d.varint()?;
        let delay = d.varint()?;
        let range_count = d.varint()?;
        let first_range = d.varint()?;
        // RFC 9000 §19.3.1: "If any computed packet number is negative, an endpoint MUST generate a connection
        // error of type FRAME_ENCODING_ERROR."
        let mut smallest = largest
            .into_inner()
            .checked_sub(first_range.into_inner())
            .ok_or(TransportError::frame_encoding("ACK range below packet number 0"))?;
        // Each further range takes at least two bytes (Gap, ACK Range Length): a count that cannot fit in what
        // is left of the packet is rejected before any work is done.
        if range_count.into_inner() > (d.remaining() / 2) as u64 {
            return Err(TransportError::frame_encoding(
                "ACK Range Count exceeds the frame",
            ));
        }
        let start = d.rest();
        for _ in 0..range_count.into_inner() {
            let gap = d.varint()?.into_inner();
            let len = d.varint()?.into_inner();
            smallest = next_range(smallest, gap, len)
                .map(|r| *r.start())
                .ok_or(TransportError::frame_encoding("ACK range below packet number 0"))?;
        }
        let ranges = start
            .get(..start.len().saturating_sub(d.remaining()))
            .unwrap_or_default();
        let ecn = if ty.0 & 1 == 1 {
            Some(EcnCounts::decode(d)?)
        } else {
            None
        };
        Ok(Ack {
            path_id,
            largest,
            delay,
            first_range,
            ecn,
            range_count,
            ranges,
        })
    }
}

/// The range that follows a range whose smallest packet number is `smallest` (RFC 9000 §19.3.1:
/// largest = smallest - gap - 2, smallest' = largest - ack_range_length), or `None` if it goes below 0.
fn next_range(smallest: u64, gap: u64, len: u64) -> Option<RangeInclusive<u64>> {
    let largest = smallest.checked_sub(gap)?.checked_sub(2)?;
    Some(largest.checked_sub(len)?..=largest)
}

/// The acknowledged ranges of an [`Ack`], largest first.
#[derive(Debug, Clone)]
pub struct AckIter<'a> {
    d: Decoder<'a>,
    first: Option<RangeInclusive<u64>>,
    smallest: u64,
    left: u64,
}

impl Iterator for AckIter<'_> {
    type Item = RangeInclusive<u64>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // The ranges were validated when the frame was decoded; these reads cannot fail.
        let gap = self.d.varint().ok()?.into_inner();
        let len = self.d.varint().ok()?.into_inner();
        let r = next_range(self.smallest, gap, len)?;
        self.smallest = *r.start();
        Some(r)
    }
}

/// The (Gap, ACK Range Length) pairs that encode `ranges` after the first, validating them.
fn gaps(
    ranges: &[RangeInclusive<u64>],
) -> impl Iterator<Item = Result<(VarInt, VarInt), AckRangesError>> + '_ {
    ranges.windows(2).map(|w| match w {
        [prev, next] if next.start() <= next.end() => {
            let gap = prev
                .start()
                .checked_sub(*next.end())
                .and_then(|v| v.checked_sub(2));
            let gap = gap
                .and_then(|g| VarInt::from_u64(g).ok())
                .ok_or(AckRangesError::Unordered)?;
            let len = VarInt::from_u64(next.end() - next.start()).map_err(|_| AckRangesError::Unordered)?;
            Ok((gap, len))
        }
        _ => Err(AckRangesError::Unordered),
    })
}

/// The fixed fields of an ACK for `ranges`: (largest, first range, range count).
fn head(ranges: &[RangeInclusive<u64>]) -> Result<(VarInt, VarInt, VarInt), AckRangesError> {
    let first = ranges.first().ok_or(AckRangesError::Empty)?;
    if first.start() > first.end() {
        return Err(AckRangesError::Unordered);
    }
    let largest = VarInt::from_u64(*first.end()).map_err(|_| AckRangesError::Unordered)?;
    let first_range = VarInt::from_u64(first.end() - first.start()).map_err(|_| AckRangesError::Unordered)?;
    let count = super::len_varint(ranges.len().saturating_sub(1));
    Ok((largest, first_range, count))
}

/// Exact size of the frame [`encode_ack`] writes for the same arguments.
pub fn ack_encoded_len(
    path_id: Option<PathId>,
    delay: VarInt,
    ranges: &[RangeInclusive<u64>],
    ecn: Option<&EcnCounts>,
) -> Result<usize, AckRangesError> {
    let (largest, first_range, count) = head(ranges)?;
    let mut n = 1 // ACK / ACK_ECN / PATH_ACK / PATH_ACK_ECN all fit one byte
        + path_id.map_or(0, |p| VarInt::from(p.0).size())
        + largest.size()
        + delay.size()
        + count.size()
        + first_range.size()
        + ecn.map_or(0, |e| e.encoded_len());
    for g in gaps(ranges) {
        let (gap, len) = g?;
        n += gap.size() + len.size();
    }
    Ok(n)
}

/// Writes an ACK (`path_id` = `None`) or PATH_ACK frame acknowledging `ranges`: inclusive packet-number
/// ranges, largest first, separated by at least one unacknowledged packet number. With `ecn`, the ECN
/// variant (0x03 / 0x3f) is written. Nothing is written if the ranges are invalid.
pub fn encode_ack<B: BufMut>(
    buf: &mut B,
    path_id: Option<PathId>,
    delay: VarInt,
    ranges: &[RangeInclusive<u64>],
    ecn: Option<&EcnCounts>,
) -> Result<(), AckRangesError> {
    // Validate everything before writing anything.
    ack_encoded_len(path_id, delay, ranges, ecn)?;
    let (largest, first_range, count) = head(ranges)?;
    let fields = AckFields {
        path_id,
        largest,
        delay,
        first_range,
        ecn: ecn.copied(),
    };
    fields.encode(buf, count, gaps(ranges).flatten());
    Ok(())
}

/// The fields of an ACK or PATH_ACK frame other than its Gap/ACK Range pairs, for a writer that computes
/// the pairs itself (the ACK tracker, from its own disjoint ranges) and so needs neither the validation nor
/// the second pass over the ranges of [`encode_ack`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckFields {
    /// `Some` for PATH_ACK.
    pub path_id: Option<PathId>,
    /// Largest Acknowledged.
    pub largest: VarInt,
    /// ACK Delay, already scaled by the exponent.
    pub delay: VarInt,
    /// First ACK Range (largest minus the smallest number of the first range).
    pub first_range: VarInt,
    /// The ECN counts of ACK_ECN / PATH_ACK_ECN.
    pub ecn: Option<EcnCounts>,
}

impl AckFields {
    /// Encoded size of these fields and the frame type, without the ACK Range Count and the pairs.
    pub fn len_without_ranges(&self) -> usize {
        1 // ACK / ACK_ECN / PATH_ACK / PATH_ACK_ECN all fit one byte
            + self.path_id.map_or(0, |p| VarInt::from(p.0).size())
            + self.largest.size()
            + self.delay.size()
            + self.first_range.size()
            + self.ecn.map_or(0, |e| e.encoded_len())
    }

    /// Writes the frame with `count` (Gap, ACK Range Length) `pairs` after the first range. Every value is
    /// already a varint, so nothing can fail; `count` must be the number of pairs for the frame to parse.
    pub fn encode<B: BufMut>(
        &self,
        buf: &mut B,
        count: VarInt,
        pairs: impl Iterator<Item = (VarInt, VarInt)>,
    ) {
        let ty = match (self.path_id.is_some(), self.ecn.is_some()) {
            (false, false) => FrameType::ACK,
            (false, true) => FrameType::ACK_ECN,
            (true, false) => FrameType::PATH_ACK,
            (true, true) => FrameType::PATH_ACK_ECN,
        };
        ty.encode(buf);
        if let Some(p) = self.path_id {
            VarInt::from(p.0).encode(buf);
        }
        self.largest.encode(buf);
        self.delay.encode(buf);
        count.encode(buf);
        self.first_range.encode(buf);
        for (gap, len) in pairs {
            gap.encode(buf);
            len.encode(buf);
        }
        if let Some(e) = &self.ecn {
            e.encode(buf);
        }
    }
}
