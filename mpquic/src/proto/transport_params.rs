//! Transport parameters (RFC 9000 §7.4 and §18): every RFC 9000 §18.2 parameter, max_datagram_frame_size
//! (RFC 9221 §3) and initial_max_path_id (draft-ietf-quic-multipath-21 §2), with their defaults, encoding
//! (optionally with a GREASE parameter, RFC 9000 §18.1) and validating decoding.
//!
//! [`TransportParameters::decode`] enforces every rule that can be checked from the parameters alone, given
//! which side sent them. The rules that need handshake state (the connection IDs the endpoint saw in Initial
//! and Retry packets, RFC 9000 §7.3, and the multipath CID rule) are pure functions here too:
//! [`check_client_cids`], [`check_server_cids`] and [`check_multipath_cids`]; the connection calls them once
//! the peer's parameters arrive.
//!
//! Memory is bounded: duplicates are detected for the parameters this endpoint knows (a bitmap), and unknown
//! parameters are skipped without being stored.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};

use bytes::BufMut;

use crate::proto::coding::{Decoder, UnexpectedEnd, VarInt};
use crate::proto::error::TransportError;
use crate::proto::packet::{ConnectionId, RESET_TOKEN_SIZE, ResetToken};

/// Which endpoint of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The endpoint that initiated the connection.
    Client,
    /// The endpoint that accepted it.
    Server,
}

impl Side {
    /// The other side.
    pub const fn peer(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
}

/// Transport parameter identifiers (RFC 9000 §18.2, RFC 9221 §3, draft-ietf-quic-multipath-21 §2).
pub mod id {
    /// original_destination_connection_id.
    pub const ORIGINAL_DESTINATION_CONNECTION_ID: u64 = 0x00;
    /// max_idle_timeout.
    pub const MAX_IDLE_TIMEOUT: u64 = 0x01;
    /// stateless_reset_token.
    pub const STATELESS_RESET_TOKEN: u64 = 0x02;
    /// max_udp_payload_size.
    pub const MAX_UDP_PAYLOAD_SIZE: u64 = 0x03;
    /// initial_max_data.
    pub const INITIAL_MAX_DATA: u64 = 0x04;
    /// initial_max_stream_data_bidi_local.
    pub const INITIAL_MAX_STREAM_DATA_BIDI_LOCAL: u64 = 0x05;
    /// initial_max_stream_data_bidi_remote.
    pub const INITIAL_MAX_STREAM_DATA_BIDI_REMOTE: u64 = 0x06;
    /// initial_max_stream_data_uni.
    pub const INITIAL_MAX_STREAM_DATA_UNI: u64 = 0x07;
    /// initial_max_streams_bidi.
    pub const INITIAL_MAX_STREAMS_BIDI: u64 = 0x08;
    /// initial_max_streams_uni.
    pub const INITIAL_MAX_STREAMS_UNI: u64 = 0x09;
    /// ack_delay_exponent.
    pub const ACK_DELAY_EXPONENT: u64 = 0x0a;
    /// max_ack_delay.
    pub const MAX_ACK_DELAY: u64 = 0x0b;
    /// disable_active_migration.
    pub const DISABLE_ACTIVE_MIGRATION: u64 = 0x0c;
    /// preferred_address.
    pub const PREFERRED_ADDRESS: u64 = 0x0d;
    /// active_connection_id_limit.
    pub const ACTIVE_CONNECTION_ID_LIMIT: u64 = 0x0e;
    /// initial_source_connection_id.
    pub const INITIAL_SOURCE_CONNECTION_ID: u64 = 0x0f;
    /// retry_source_connection_id.
    pub const RETRY_SOURCE_CONNECTION_ID: u64 = 0x10;
    /// max_datagram_frame_size (RFC 9221 §3).
    pub const MAX_DATAGRAM_FRAME_SIZE: u64 = 0x20;
    /// initial_max_path_id (draft-ietf-quic-multipath-21 §2).
    pub const INITIAL_MAX_PATH_ID: u64 = 0x3e;
}

/// Default max_udp_payload_size (RFC 9000 §18.2: "the maximum permitted UDP payload of 65527").
pub const DEFAULT_MAX_UDP_PAYLOAD_SIZE: u64 = 65527;
/// Default ack_delay_exponent (RFC 9000 §18.2).
pub const DEFAULT_ACK_DELAY_EXPONENT: u64 = 3;
/// Default max_ack_delay in milliseconds (RFC 9000 §18.2).
pub const DEFAULT_MAX_ACK_DELAY: u64 = 25;
/// Default active_connection_id_limit (RFC 9000 §18.2).
pub const DEFAULT_ACTIVE_CONNECTION_ID_LIMIT: u64 = 2;
/// Largest stream count a peer may allow (RFC 9000 §4.6: 2^60).
pub const MAX_STREAMS_LIMIT: u64 = 1 << 60;
/// Largest path ID (draft-ietf-quic-multipath-21: 2^32 − 1).
pub const MAX_PATH_ID: u64 = u32::MAX as u64;

/// The server's preferred address (RFC 9000 §18.2, Figure 22).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreferredAddress {
    /// IPv4 address and port; `None` is sent as the all-zero address and port.
    pub ipv4: Option<SocketAddrV4>,
    /// IPv6 address and port; `None` is sent as the all-zero address and port.
    pub ipv6: Option<SocketAddrV6>,
    /// Connection ID with sequence number 1 (path ID 0 in multipath). Never empty.
    pub connection_id: ConnectionId,
    /// Stateless reset token of `connection_id`.
    pub stateless_reset_token: ResetToken,
}

impl PreferredAddress {
    fn encoded_len(&self) -> usize {
        4 + 2 + 16 + 2 + 1 + self.connection_id.len() + RESET_TOKEN_SIZE
    }

    fn encode<B: BufMut>(&self, buf: &mut B) {
        let v4 = self.ipv4.unwrap_or(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0));
        buf.put_slice(&v4.ip().octets());
        buf.put_u16(v4.port());
        let v6 = self
            .ipv6
            .unwrap_or(SocketAddrV6::new(Ipv6Addr::UNSPECIFIED, 0, 0, 0));
        buf.put_slice(&v6.ip().octets());
        buf.put_u16(v6.port());
        self.connection_id.encode_with_len(buf);
        buf.put_slice(&self.stateless_reset_token.0);
    }

    fn decode(value: &[u8]) -> Result<Self, TransportError> {
        let malformed = |_: UnexpectedEnd| TransportError::transport_parameter("preferred_address malformed");
        let mut d = Decoder::new(value);
        let ip4 = Ipv4Addr::from(d.array::<4>().map_err(malformed)?);
        let port4 = d.u16().map_err(malformed)?;
        let ip6 = Ipv6Addr::from(d.array::<16>().map_err(malformed)?);
        let port6 = d.u16().map_err(malformed)?;
        let connection_id = ConnectionId::decode_with_len(&mut d).map_err(malformed)?.ok_or(
            TransportError::transport_parameter("preferred_address connection ID longer than 20"),
        )?;
        let token = ResetToken(d.array::<RESET_TOKEN_SIZE>().map_err(malformed)?);
        if !d.is_empty() {
            return Err(TransportError::transport_parameter("preferred_address malformed"));
        }
        // RFC 9000 §18.2: "a server MUST NOT include a zero-length connection ID in this transport parameter.
        // A client MUST treat a violation of these requirements as a connection error of type
        // TRANSPORT_PARAMETER_ERROR."
        if connection_id.is_empty() {
            return Err(TransportError::transport_parameter(
                "preferred_address with a zero-length connection ID",
            ));
        }
        // RFC 9000 §18.2: "Servers MAY choose to only send a preferred address of one address family by sending
        // an all-zero address and port (0.0.0.0:0 or [::]:0) for the other family."
        let ipv4 = (!(ip4.is_unspecified() && port4 == 0)).then(|| SocketAddrV4::new(ip4, port4));
        let ipv6 = (!(ip6.is_unspecified() && port6 == 0)).then(|| SocketAddrV6::new(ip6, port6, 0, 0));
        Ok(PreferredAddress {
            ipv4,
            ipv6,
            connection_id,
            stateless_reset_token: token,
        })
    }
}

/// A GREASE transport parameter to add when encoding (RFC 9000 §18.1: "Transport parameters with an identifier
/// of the form 31 * N + 27 for integer values of N are reserved to exercise the requirement that unknown
/// transport parameters be ignored."). Randomness is an input: the identifier and value derive from `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grease {
    /// Source of the identifier, the value length (0–15) and the value.
    pub seed: u64,
}

impl Grease {
    /// The reserved identifier 31 * N + 27, with N from the seed (kept small enough for a 4-byte varint).
    pub fn id(&self) -> u64 {
        31 * (self.seed % (1 << 24)) + 27
    }

    fn value(&self) -> ([u8; 16], usize) {
        let mut x = self.seed;
        let mut out = [0u8; 16];
        for chunk in out.chunks_mut(8) {
            // splitmix64
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            chunk.copy_from_slice(&z.to_be_bytes());
        }
        (out, ((self.seed >> 40) % 16) as usize)
    }
}

/// Whether `id` is a reserved (GREASE) transport parameter identifier (RFC 9000 §18.1).
pub const fn is_grease_id(id: u64) -> bool {
    id >= 27 && (id - 27) % 31 == 0
}

/// One endpoint's transport parameters. [`Default`] gives the RFC defaults (what an absent parameter means).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportParameters {
    /// DCID of the client's first Initial (server only; RFC 9000 §7.3).
    pub original_destination_connection_id: Option<ConnectionId>,
    /// Maximum idle timeout in milliseconds; 0 disables it.
    pub max_idle_timeout: VarInt,
    /// Stateless reset token for the handshake connection ID (server only).
    pub stateless_reset_token: Option<ResetToken>,
    /// Largest UDP payload the endpoint is willing to receive (≥ 1200; default 65527).
    pub max_udp_payload_size: VarInt,
    /// Initial connection-level flow-control limit.
    pub initial_max_data: VarInt,
    /// Initial limit for bidirectional streams opened by the sender of the parameters.
    pub initial_max_stream_data_bidi_local: VarInt,
    /// Initial limit for bidirectional streams opened by the receiver of the parameters.
    pub initial_max_stream_data_bidi_remote: VarInt,
    /// Initial limit for unidirectional streams opened by the receiver of the parameters.
    pub initial_max_stream_data_uni: VarInt,
    /// How many bidirectional streams the receiver may open (≤ 2^60).
    pub initial_max_streams_bidi: VarInt,
    /// How many unidirectional streams the receiver may open (≤ 2^60).
    pub initial_max_streams_uni: VarInt,
    /// Exponent for the ACK Delay field (≤ 20; default 3).
    pub ack_delay_exponent: VarInt,
    /// Maximum ACK delay in milliseconds (< 2^14; default 25).
    pub max_ack_delay: VarInt,
    /// The endpoint does not support active migration on its handshake address.
    pub disable_active_migration: bool,
    /// The server's preferred address (server only).
    pub preferred_address: Option<PreferredAddress>,
    /// How many peer connection IDs the endpoint stores (≥ 2; default 2; per path in multipath).
    pub active_connection_id_limit: VarInt,
    /// SCID of the sender's first Initial (RFC 9000 §7.3). Required from both sides.
    pub initial_source_connection_id: Option<ConnectionId>,
    /// SCID of the server's Retry (server only, only after a Retry).
    pub retry_source_connection_id: Option<ConnectionId>,
    /// Largest DATAGRAM frame the endpoint accepts (RFC 9221 §3); absent or 0 means DATAGRAM is unsupported.
    pub max_datagram_frame_size: Option<VarInt>,
    /// Largest path ID the endpoint maintains at start (draft-ietf-quic-multipath-21); `Some` enables
    /// multipath, `Some(0)` without extra paths yet.
    pub initial_max_path_id: Option<u32>,
}

impl Default for TransportParameters {
    fn default() -> Self {
        TransportParameters {
            original_destination_connection_id: None,
            max_idle_timeout: VarInt::ZERO,
            stateless_reset_token: None,
            max_udp_payload_size: VarInt::from_u32(DEFAULT_MAX_UDP_PAYLOAD_SIZE as u32),
            initial_max_data: VarInt::ZERO,
            initial_max_stream_data_bidi_local: VarInt::ZERO,
            initial_max_stream_data_bidi_remote: VarInt::ZERO,
            initial_max_stream_data_uni: VarInt::ZERO,
            initial_max_streams_bidi: VarInt::ZERO,
            initial_max_streams_uni: VarInt::ZERO,
            ack_delay_exponent: VarInt::from_u32(DEFAULT_ACK_DELAY_EXPONENT as u32),
            max_ack_delay: VarInt::from_u32(DEFAULT_MAX_ACK_DELAY as u32),
            disable_active_migration: false,
            preferred_address: None,
            active_connection_id_limit: VarInt::from_u32(DEFAULT_ACTIVE_CONNECTION_ID_LIMIT as u32),
            initial_source_connection_id: None,
            retry_source_connection_id: None,
            max_datagram_frame_size: None,
            initial_max_path_id: None,
        }
    }
}

/// A parameter value, as the encoder visits it.
enum Value<'a> {
    Int(VarInt),
    Bytes(&'a [u8]),
    Empty,
    Preferred(&'a PreferredAddress),
}

impl Value<'_> {
    fn len(&self) -> usize {
        match self {
            Value::Int(v) => v.size(),
            Value::Bytes(b) => b.len(),
            Value::Empty => 0,
            Value::Preferred(p) => p.encoded_len(),
        }
    }
}

fn varint_len(v: usize) -> usize {
    VarInt::size_of(v as u64).unwrap_or(8)
}

impl TransportParameters {
    /// Visits the parameters to encode, skipping those equal to their default.
    fn for_each(&self, mut f: impl FnMut(u64, Value<'_>)) {
        let mut int = |id: u64, v: VarInt, default: u64| {
            if v.into_inner() != default {
                f(id, Value::Int(v));
            }
        };
        int(id::MAX_IDLE_TIMEOUT, self.max_idle_timeout, 0);
        int(
            id::MAX_UDP_PAYLOAD_SIZE,
            self.max_udp_payload_size,
            DEFAULT_MAX_UDP_PAYLOAD_SIZE,
        );
        int(id::INITIAL_MAX_DATA, self.initial_max_data, 0);
        int(
            id::INITIAL_MAX_STREAM_DATA_BIDI_LOCAL,
            self.initial_max_stream_data_bidi_local,
            0,
        );
        int(
            id::INITIAL_MAX_STREAM_DATA_BIDI_REMOTE,
            self.initial_max_stream_data_bidi_remote,
            0,
        );
        int(
            id::INITIAL_MAX_STREAM_DATA_UNI,
            self.initial_max_stream_data_uni,
            0,
        );
        int(id::INITIAL_MAX_STREAMS_BIDI, self.initial_max_streams_bidi, 0);
        int(id::INITIAL_MAX_STREAMS_UNI, self.initial_max_streams_uni, 0);
        int(
            id::ACK_DELAY_EXPONENT,
            self.ack_delay_exponent,
            DEFAULT_ACK_DELAY_EXPONENT,
        );
        int(id::MAX_ACK_DELAY, self.max_ack_delay, DEFAULT_MAX_ACK_DELAY);
        int(
            id::ACTIVE_CONNECTION_ID_LIMIT,
            self.active_connection_id_limit,
            DEFAULT_ACTIVE_CONNECTION_ID_LIMIT,
        );
        if let Some(cid) = &self.original_destination_connection_id {
            f(id::ORIGINAL_DESTINATION_CONNECTION_ID, Value::Bytes(cid));
        }
        if let Some(token) = &self.stateless_reset_token {
            f(id::STATELESS_RESET_TOKEN, Value::Bytes(&token.0));
        }
        if self.disable_active_migration {
            f(id::DISABLE_ACTIVE_MIGRATION, Value::Empty);
        }
        if let Some(p) = &self.preferred_address {
            f(id::PREFERRED_ADDRESS, Value::Preferred(p));
        }
        if let Some(cid) = &self.initial_source_connection_id {
            f(id::INITIAL_SOURCE_CONNECTION_ID, Value::Bytes(cid));
        }
        if let Some(cid) = &self.retry_source_connection_id {
            f(id::RETRY_SOURCE_CONNECTION_ID, Value::Bytes(cid));
        }
        if let Some(v) = self.max_datagram_frame_size {
            f(id::MAX_DATAGRAM_FRAME_SIZE, Value::Int(v));
        }
        if let Some(v) = self.initial_max_path_id {
            f(id::INITIAL_MAX_PATH_ID, Value::Int(VarInt::from_u32(v)));
        }
    }

    /// Writes the parameters (RFC 9000 §18, Figure 20/21), omitting those equal to their default, plus one
    /// GREASE parameter if `grease` is given. Encodes what it is given: check a local configuration with
    /// [`validate`](Self::validate) first.
    pub fn encode<B: BufMut>(&self, buf: &mut B, grease: Option<Grease>) {
        self.for_each(|id, value| {
            VarInt::from_u64(id).unwrap_or(VarInt::MAX).encode(buf);
            VarInt::try_from(value.len()).unwrap_or(VarInt::MAX).encode(buf);
            match value {
                Value::Int(v) => v.encode(buf),
                Value::Bytes(b) => buf.put_slice(b),
                Value::Empty => {}
                Value::Preferred(p) => p.encode(buf),
            }
        });
        if let Some(g) = grease {
            let (value, len) = g.value();
            VarInt::from_u64(g.id()).unwrap_or(VarInt::MAX).encode(buf);
            VarInt::try_from(len).unwrap_or(VarInt::ZERO).encode(buf);
            buf.put_slice(value.get(..len).unwrap_or(&[]));
        }
    }

    /// Exact size of [`encode`](Self::encode)'s output.
    pub fn encoded_len(&self, grease: Option<Grease>) -> usize {
        let mut n = 0;
        self.for_each(|id, value| {
            n += VarInt::size_of(id).unwrap_or(8) + varint_len(value.len()) + value.len();
        });
        if let Some(g) = grease {
            let len = g.value().1;
            n += VarInt::size_of(g.id()).unwrap_or(8) + varint_len(len) + len;
        }
        n
    }

    /// Decodes and validates the parameters sent by `sender` (RFC 9000 §7.4, §18). Every violation is a
    /// TRANSPORT_PARAMETER_ERROR.
    pub fn decode(buf: &[u8], sender: Side) -> Result<Self, TransportError> {
        let mut params = TransportParameters::default();
        let mut seen: u64 = 0;
        let mut d = Decoder::new(buf);
        while !d.is_empty() {
            let truncated =
                |_: UnexpectedEnd| TransportError::transport_parameter("transport parameters truncated");
            let id = d.varint().map_err(truncated)?.into_inner();
            // RFC 9000 §18: "The Transport Parameter Length field contains the length of the Transport Parameter
            // Value field in bytes." A length past the end of the extension is malformed.
            let value = d.varint_prefixed().map_err(|_| {
                TransportError::transport_parameter("transport parameter length exceeds the extension")
            })?;
            let Some(bit) = seen_bit(id) else {
                // RFC 9000 §7.4.2: "An endpoint MUST ignore transport parameters that it does not support."
                continue;
            };
            // RFC 9000 §7.4: "An endpoint SHOULD treat receipt of duplicate transport parameters as a connection
            // error of type TRANSPORT_PARAMETER_ERROR."
            if seen & bit != 0 {
                return Err(TransportError::transport_parameter(
                    "duplicate transport parameter",
                ));
            }
            seen |= bit;
            params.set(id, value)?;
        }
        params.validate(sender)?;
        Ok(params)
    }

    /// Stores one known parameter's value, checking that its length fits its type.
    fn set(&mut self, param: u64, value: &[u8]) -> Result<(), TransportError> {
        match param {
            id::ORIGINAL_DESTINATION_CONNECTION_ID => {
                self.original_destination_connection_id = Some(cid(value)?)
            }
            id::INITIAL_SOURCE_CONNECTION_ID => self.initial_source_connection_id = Some(cid(value)?),
            id::RETRY_SOURCE_CONNECTION_ID => self.retry_source_connection_id = Some(cid(value)?),
            id::STATELESS_RESET_TOKEN => {
                // RFC 9000 §18.2: "This parameter is a sequence of 16 bytes."
                let token = value.try_into().map_err(|_| {
                    TransportError::transport_parameter("stateless_reset_token is not 16 bytes")
                })?;
                self.stateless_reset_token = Some(ResetToken(token));
            }
            id::DISABLE_ACTIVE_MIGRATION => {
                // RFC 9000 §18.2: "This parameter is a zero-length value."
                if !value.is_empty() {
                    return Err(TransportError::transport_parameter(
                        "disable_active_migration has a value",
                    ));
                }
                self.disable_active_migration = true;
            }
            id::PREFERRED_ADDRESS => self.preferred_address = Some(PreferredAddress::decode(value)?),
            id::INITIAL_MAX_PATH_ID => {
                let v = int(value)?.into_inner();
                // draft-ietf-quic-multipath-21 §2: "The value of the initial_max_path_id parameter MUST NOT exceed
                // 2^32-1 [...] An endpoint receiving a value larger than 2^32-1 MUST close the connection with an
                // error of type TRANSPORT_PARAMETER_ERROR."
                let v = u32::try_from(v)
                    .map_err(|_| TransportError::transport_parameter("initial_max_path_id above 2^32-1"))?;
                self.initial_max_path_id = Some(v);
            }
            id::MAX_DATAGRAM_FRAME_SIZE => self.max_datagram_frame_size = Some(int(value)?),
            _ => {
                let v = int(value)?;
                let field = match param {
                    id::MAX_IDLE_TIMEOUT => &mut self.max_idle_timeout,
                    id::MAX_UDP_PAYLOAD_SIZE => &mut self.max_udp_payload_size,
                    id::INITIAL_MAX_DATA => &mut self.initial_max_data,
                    id::INITIAL_MAX_STREAM_DATA_BIDI_LOCAL => &mut self.initial_max_stream_data_bidi_local,
                    id::INITIAL_MAX_STREAM_DATA_BIDI_REMOTE => &mut self.initial_max_stream_data_bidi_remote,
                    id::INITIAL_MAX_STREAM_DATA_UNI => &mut self.initial_max_stream_data_uni,
                    id::INITIAL_MAX_STREAMS_BIDI => &mut self.initial_max_streams_bidi,
                    id::INITIAL_MAX_STREAMS_UNI => &mut self.initial_max_streams_uni,
                    id::ACK_DELAY_EXPONENT => &mut self.ack_delay_exponent,
                    id::MAX_ACK_DELAY => &mut self.max_ack_delay,
                    id::ACTIVE_CONNECTION_ID_LIMIT => &mut self.active_connection_id_limit,
                    _ => return Ok(()),
                };
                *field = v;
            }
        }
        Ok(())
    }

    /// Checks every value rule, for parameters sent by `sender`. [`decode`](Self::decode) calls it; call it on a
    /// local configuration before sending it.
    pub fn validate(&self, sender: Side) -> Result<(), TransportError> {
        let err = TransportError::transport_parameter;
        // RFC 9000 §7.4: "An endpoint MUST treat receipt of a transport parameter with an invalid value as a
        // connection error of type TRANSPORT_PARAMETER_ERROR."
        // RFC 9000 §18.2 max_udp_payload_size: "Values below 1200 are invalid."
        if self.max_udp_payload_size.into_inner() < 1200 {
            return Err(err("max_udp_payload_size below 1200"));
        }
        // RFC 9000 §18.2 ack_delay_exponent: "Values above 20 are invalid."
        if self.ack_delay_exponent.into_inner() > 20 {
            return Err(err("ack_delay_exponent above 20"));
        }
        // RFC 9000 §18.2 max_ack_delay: "Values of 2^14 or greater are invalid."
        if self.max_ack_delay.into_inner() >= 1 << 14 {
            return Err(err("max_ack_delay of 2^14 or more"));
        }
        // RFC 9000 §18.2: "An endpoint that receives a value less than 2 MUST close the connection with an error
        // of type TRANSPORT_PARAMETER_ERROR."
        if self.active_connection_id_limit.into_inner() < 2 {
            return Err(err("active_connection_id_limit below 2"));
        }
        // RFC 9000 §4.6: "If a max_streams transport parameter [...] is received with a value greater than 2^60
        // [...] the connection MUST be closed immediately with a connection error of type
        // TRANSPORT_PARAMETER_ERROR if the offending value was received in a transport parameter".
        if self.initial_max_streams_bidi.into_inner() > MAX_STREAMS_LIMIT {
            return Err(err("initial_max_streams_bidi above 2^60"));
        }
        if self.initial_max_streams_uni.into_inner() > MAX_STREAMS_LIMIT {
            return Err(err("initial_max_streams_uni above 2^60"));
        }
        if sender == Side::Client {
            // RFC 9000 §18.2: "A client MUST NOT include any server-only transport parameter:
            // original_destination_connection_id, preferred_address, retry_source_connection_id, or
            // stateless_reset_token. A server MUST treat receipt of any of these transport parameters as a
            // connection error of type TRANSPORT_PARAMETER_ERROR."
            if self.original_destination_connection_id.is_some() {
                return Err(err("client sent original_destination_connection_id"));
            }
            if self.preferred_address.is_some() {
                return Err(err("client sent preferred_address"));
            }
            if self.retry_source_connection_id.is_some() {
                return Err(err("client sent retry_source_connection_id"));
            }
            if self.stateless_reset_token.is_some() {
                return Err(err("client sent stateless_reset_token"));
            }
        }
        // RFC 9000 §18.2: "A server that chooses a zero-length connection ID MUST NOT provide a preferred
        // address. [...] A client MUST treat a violation of these requirements as a connection error of type
        // TRANSPORT_PARAMETER_ERROR."
        if let Some(p) = &self.preferred_address {
            if p.connection_id.is_empty() {
                return Err(err("preferred_address with a zero-length connection ID"));
            }
            if self.initial_source_connection_id.is_some_and(|c| c.is_empty()) {
                return Err(err(
                    "preferred_address from a server using a zero-length connection ID",
                ));
            }
        }
        Ok(())
    }

    /// Whether the endpoint accepts DATAGRAM frames (RFC 9221 §3: a value greater than 0).
    pub fn datagrams_supported(&self) -> bool {
        self.max_datagram_frame_size.is_some_and(|v| v.into_inner() > 0)
    }
}

/// Bit of `id` in the duplicate-detection bitmap, for the parameters this endpoint knows.
fn seen_bit(param: u64) -> Option<u64> {
    match param {
        0x00..=0x10 => Some(1 << param),
        id::MAX_DATAGRAM_FRAME_SIZE => Some(1 << 17),
        id::INITIAL_MAX_PATH_ID => Some(1 << 18),
        _ => None,
    }
}

/// A varint value that fills its parameter exactly.
fn int(value: &[u8]) -> Result<VarInt, TransportError> {
    let mut d = Decoder::new(value);
    let v = d
        .varint()
        .map_err(|_| TransportError::transport_parameter("integer parameter truncated"))?;
    if !d.is_empty() {
        return Err(TransportError::transport_parameter(
            "integer parameter length does not match its value",
        ));
    }
    Ok(v)
}

/// A connection ID value (RFC 9000 §17.2: at most 20 bytes in version 1).
fn cid(value: &[u8]) -> Result<ConnectionId, TransportError> {
    ConnectionId::new(value).ok_or(TransportError::transport_parameter(
        "connection ID longer than 20 bytes",
    ))
}

/// The server's check of the client's connection IDs (RFC 9000 §7.3). `client_initial_scid` is the Source
/// Connection ID of the client's first Initial packet.
pub fn check_client_cids(
    client: &TransportParameters,
    client_initial_scid: &ConnectionId,
) -> Result<(), TransportError> {
    check_initial_scid(client, client_initial_scid)
}

/// The client's check of the server's connection IDs (RFC 9000 §7.3). `server_initial_scid` is the SCID of
/// the server's first Initial, `original_dcid` the DCID of the client's first Initial, `retry_scid` the SCID
/// of the Retry the client processed, if it processed one.
pub fn check_server_cids(
    server: &TransportParameters,
    server_initial_scid: &ConnectionId,
    original_dcid: &ConnectionId,
    retry_scid: Option<&ConnectionId>,
) -> Result<(), TransportError> {
    let err = TransportError::transport_parameter;
    check_initial_scid(server, server_initial_scid)?;
    // RFC 9000 §7.3: "An endpoint MUST treat the absence of [...] the original_destination_connection_id
    // transport parameter from the server as a connection error of type TRANSPORT_PARAMETER_ERROR."
    let odcid = server
        .original_destination_connection_id
        .as_ref()
        .ok_or(err("original_destination_connection_id absent"))?;
    // RFC 9000 §7.3: "The values provided by a peer for these transport parameters MUST match the values that
    // an endpoint used in the Destination and Source Connection ID fields of Initial packets that it sent".
    if odcid != original_dcid {
        return Err(err("original_destination_connection_id does not match"));
    }
    // RFC 9000 §7.3: "An endpoint MUST treat the following as a connection error of type
    // TRANSPORT_PARAMETER_ERROR or PROTOCOL_VIOLATION: absence of the retry_source_connection_id transport
    // parameter from the server after receiving a Retry packet, presence of the retry_source_connection_id
    // transport parameter when no Retry packet was received, or a mismatch [...]".
    match (server.retry_source_connection_id.as_ref(), retry_scid) {
        (None, None) => Ok(()),
        (None, Some(_)) => Err(err("retry_source_connection_id absent after a Retry")),
        (Some(_), None) => Err(err("retry_source_connection_id present without a Retry")),
        (Some(a), Some(b)) if a != b => Err(err("retry_source_connection_id does not match")),
        (Some(_), Some(_)) => Ok(()),
    }
}

fn check_initial_scid(peer: &TransportParameters, observed: &ConnectionId) -> Result<(), TransportError> {
    let err = TransportError::transport_parameter;
    // RFC 9000 §7.3: "An endpoint MUST treat the absence of the initial_source_connection_id transport parameter
    // from either endpoint [...] as a connection error of type TRANSPORT_PARAMETER_ERROR."
    let scid = peer
        .initial_source_connection_id
        .as_ref()
        .ok_or(err("initial_source_connection_id absent"))?;
    // RFC 9000 §7.3: "Endpoints MUST validate that received transport parameters match received connection ID
    // values."
    if scid != observed {
        return Err(err("initial_source_connection_id does not match"));
    }
    Ok(())
}

/// The multipath connection-ID rule, checked when the peer's parameters arrive in a packet whose connection
/// IDs are `packet_dcid` and `packet_scid`.
pub fn check_multipath_cids(
    peer: &TransportParameters,
    packet_dcid: &ConnectionId,
    packet_scid: &ConnectionId,
) -> Result<(), TransportError> {
    // draft-ietf-quic-multipath-21 §2: "When advertising the initial_max_path_id transport parameter, the
    // endpoint MUST use non-zero-length Source and Destination Connection IDs. If an initial_max_path_id
    // transport parameter value is received and the carrying packet contains a zero-length connection ID, the
    // receiver MUST treat this as a connection error of type PROTOCOL_VIOLATION".
    if peer.initial_max_path_id.is_some() && (packet_dcid.is_empty() || packet_scid.is_empty()) {
        return Err(TransportError::protocol_violation(
            "initial_max_path_id with a zero-length connection ID",
        ));
    }
    Ok(())
}

/// Whether both endpoints enabled multipath (draft-ietf-quic-multipath-21 §2: "If either of the endpoints
/// does not advertise the initial_max_path_id transport parameter, then the endpoints MUST NOT use any frame
/// or mechanism defined in this document.").
pub fn multipath_negotiated(local: &TransportParameters, peer: &TransportParameters) -> bool {
    local.initial_max_path_id.is_some() && peer.initial_max_path_id.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::TransportErrorCode;
    use proptest::prelude::*;

    fn cid(b: &[u8]) -> ConnectionId {
        ConnectionId::new(b).unwrap()
    }

    fn param(buf: &mut Vec<u8>, id: u64, value: &[u8]) {
        VarInt::from_u64(id).unwrap().encode(buf);
        VarInt::try_from(value.len()).unwrap().encode(buf);
        buf.extend_from_slice(value);
    }

    fn int_param(buf: &mut Vec<u8>, id: u64, v: u64) {
        let mut value = Vec::new();
        VarInt::from_u64(v).unwrap().encode(&mut value);
        param(buf, id, &value);
    }

    fn reason(r: Result<TransportParameters, TransportError>) -> &'static str {
        let e = r.unwrap_err();
        assert_eq!(e.code, TransportErrorCode::TRANSPORT_PARAMETER_ERROR, "{e}");
        e.reason
    }

    fn decode_int(id: u64, v: u64) -> Result<TransportParameters, TransportError> {
        let mut buf = Vec::new();
        int_param(&mut buf, id, v);
        TransportParameters::decode(&buf, Side::Server)
    }

    fn server_params() -> TransportParameters {
        TransportParameters {
            original_destination_connection_id: Some(cid(&[1; 8])),
            initial_source_connection_id: Some(cid(&[2; 8])),
            max_idle_timeout: VarInt::from_u32(30_000),
            initial_max_data: VarInt::from_u32(1 << 20),
            initial_max_streams_bidi: VarInt::from_u32(100),
            stateless_reset_token: Some(ResetToken([9; 16])),
            initial_max_path_id: Some(4),
            ..TransportParameters::default()
        }
    }

    #[test]
    fn defaults_are_the_rfc_defaults_and_encode_to_nothing() {
        let p = TransportParameters::default();
        assert_eq!(p.max_udp_payload_size.into_inner(), 65527);
        assert_eq!(p.ack_delay_exponent.into_inner(), 3);
        assert_eq!(p.max_ack_delay.into_inner(), 25);
        assert_eq!(p.active_connection_id_limit.into_inner(), 2);
        assert_eq!(p.max_idle_timeout.into_inner(), 0);
        assert!(!p.datagrams_supported());
        let mut buf = Vec::new();
        p.encode(&mut buf, None);
        assert!(buf.is_empty());
        assert_eq!(TransportParameters::decode(&[], Side::Client).unwrap(), p);
    }

    #[test]
    fn encodes_known_bytes() {
        let p = TransportParameters {
            max_idle_timeout: VarInt::from_u32(30_000),
            initial_source_connection_id: Some(cid(&[0xab, 0xcd])),
            disable_active_migration: true,
            initial_max_path_id: Some(3),
            ..TransportParameters::default()
        };
        let mut buf = Vec::new();
        p.encode(&mut buf, None);
        // max_idle_timeout 30000 (4-byte varint), disable_active_migration, initial_source_connection_id,
        // initial_max_path_id 3.
        assert_eq!(
            buf,
            [
                0x01, 0x04, 0x80, 0x00, 0x75, 0x30, 0x0c, 0x00, 0x0f, 0x02, 0xab, 0xcd, 0x3e, 0x01, 0x03
            ]
        );
        assert_eq!(TransportParameters::decode(&buf, Side::Client).unwrap(), p);
    }

    #[test]
    fn grease_parameter_is_reserved_and_ignored() {
        let p = server_params();
        for seed in [0, 1, 0xdead_beef_cafe, u64::MAX] {
            let g = Grease { seed };
            assert!(is_grease_id(g.id()));
            let mut buf = Vec::new();
            p.encode(&mut buf, Some(g));
            assert_eq!(buf.len(), p.encoded_len(Some(g)));
            assert_eq!(TransportParameters::decode(&buf, Side::Server).unwrap(), p);
        }
        assert!(is_grease_id(27) && is_grease_id(58) && !is_grease_id(28) && !is_grease_id(0));
    }

    #[test]
    fn unknown_parameters_are_ignored() {
        let mut buf = Vec::new();
        param(&mut buf, 0x1234, b"whatever");
        param(&mut buf, 0x1234, b"twice is fine for unknown ones");
        int_param(&mut buf, id::INITIAL_MAX_DATA, 77);
        let p = TransportParameters::decode(&buf, Side::Client).unwrap();
        assert_eq!(p.initial_max_data.into_inner(), 77);
    }

    // ---- structure ----

    #[test]
    fn duplicate_parameter_is_an_error() {
        let mut buf = Vec::new();
        int_param(&mut buf, id::INITIAL_MAX_DATA, 1);
        int_param(&mut buf, id::INITIAL_MAX_DATA, 1);
        assert_eq!(
            reason(TransportParameters::decode(&buf, Side::Client)),
            "duplicate transport parameter"
        );
        let mut buf = Vec::new();
        param(&mut buf, id::DISABLE_ACTIVE_MIGRATION, &[]);
        param(&mut buf, id::DISABLE_ACTIVE_MIGRATION, &[]);
        assert_eq!(
            reason(TransportParameters::decode(&buf, Side::Client)),
            "duplicate transport parameter"
        );
    }

    #[test]
    fn length_past_the_end_is_malformed() {
        let buf = [id::INITIAL_MAX_DATA as u8, 4, 0x80, 0];
        assert_eq!(
            reason(TransportParameters::decode(&buf, Side::Client)),
            "transport parameter length exceeds the extension"
        );
        assert_eq!(
            reason(TransportParameters::decode(&[0x40], Side::Client)),
            "transport parameters truncated"
        );
        assert_eq!(
            reason(TransportParameters::decode(&[0x04], Side::Client)),
            "transport parameter length exceeds the extension"
        );
    }

    #[test]
    fn integer_value_not_filling_its_length_is_malformed() {
        let mut buf = Vec::new();
        param(&mut buf, id::INITIAL_MAX_DATA, &[0x01, 0x00]);
        assert_eq!(
            reason(TransportParameters::decode(&buf, Side::Client)),
            "integer parameter length does not match its value"
        );
        let mut buf = Vec::new();
        param(&mut buf, id::INITIAL_MAX_DATA, &[0x80, 0x00]);
        assert_eq!(
            reason(TransportParameters::decode(&buf, Side::Client)),
            "integer parameter truncated"
        );
        let mut buf = Vec::new();
        param(&mut buf, id::INITIAL_MAX_DATA, &[]);
        assert_eq!(
            reason(TransportParameters::decode(&buf, Side::Client)),
            "integer parameter truncated"
        );
    }

    #[test]
    fn disable_active_migration_with_a_value_is_malformed() {
        let mut buf = Vec::new();
        param(&mut buf, id::DISABLE_ACTIVE_MIGRATION, &[0]);
        assert_eq!(
            reason(TransportParameters::decode(&buf, Side::Client)),
            "disable_active_migration has a value"
        );
    }

    // ---- value ranges ----

    #[test]
    fn max_udp_payload_size_below_1200_is_invalid() {
        assert_eq!(
            reason(decode_int(id::MAX_UDP_PAYLOAD_SIZE, 1199)),
            "max_udp_payload_size below 1200"
        );
        assert!(decode_int(id::MAX_UDP_PAYLOAD_SIZE, 1200).is_ok());
    }

    #[test]
    fn ack_delay_exponent_above_20_is_invalid() {
        assert_eq!(
            reason(decode_int(id::ACK_DELAY_EXPONENT, 21)),
            "ack_delay_exponent above 20"
        );
        assert!(decode_int(id::ACK_DELAY_EXPONENT, 20).is_ok());
    }

    #[test]
    fn max_ack_delay_of_2_pow_14_is_invalid() {
        assert_eq!(
            reason(decode_int(id::MAX_ACK_DELAY, 1 << 14)),
            "max_ack_delay of 2^14 or more"
        );
        assert!(decode_int(id::MAX_ACK_DELAY, (1 << 14) - 1).is_ok());
    }

    #[test]
    fn active_connection_id_limit_below_2_is_invalid() {
        assert_eq!(
            reason(decode_int(id::ACTIVE_CONNECTION_ID_LIMIT, 1)),
            "active_connection_id_limit below 2"
        );
        assert_eq!(
            reason(decode_int(id::ACTIVE_CONNECTION_ID_LIMIT, 0)),
            "active_connection_id_limit below 2"
        );
        assert!(decode_int(id::ACTIVE_CONNECTION_ID_LIMIT, 2).is_ok());
    }

    #[test]
    fn initial_max_streams_above_2_pow_60_is_invalid() {
        assert_eq!(
            reason(decode_int(id::INITIAL_MAX_STREAMS_BIDI, (1 << 60) + 1)),
            "initial_max_streams_bidi above 2^60"
        );
        assert_eq!(
            reason(decode_int(id::INITIAL_MAX_STREAMS_UNI, (1 << 60) + 1)),
            "initial_max_streams_uni above 2^60"
        );
        assert!(decode_int(id::INITIAL_MAX_STREAMS_BIDI, 1 << 60).is_ok());
        assert!(decode_int(id::INITIAL_MAX_STREAMS_UNI, 1 << 60).is_ok());
    }

    #[test]
    fn initial_max_path_id_above_2_pow_32_minus_1_is_invalid() {
        assert_eq!(
            reason(decode_int(id::INITIAL_MAX_PATH_ID, 1 << 32)),
            "initial_max_path_id above 2^32-1"
        );
        assert_eq!(
            decode_int(id::INITIAL_MAX_PATH_ID, u32::MAX.into())
                .unwrap()
                .initial_max_path_id,
            Some(u32::MAX)
        );
    }

    #[test]
    fn connection_id_longer_than_20_is_invalid() {
        for pid in [
            id::ORIGINAL_DESTINATION_CONNECTION_ID,
            id::INITIAL_SOURCE_CONNECTION_ID,
            id::RETRY_SOURCE_CONNECTION_ID,
        ] {
            let mut buf = Vec::new();
            param(&mut buf, pid, &[7; 21]);
            assert_eq!(
                reason(TransportParameters::decode(&buf, Side::Server)),
                "connection ID longer than 20 bytes"
            );
            let mut buf = Vec::new();
            param(&mut buf, pid, &[7; 20]);
            assert!(TransportParameters::decode(&buf, Side::Server).is_ok());
        }
    }

    #[test]
    fn stateless_reset_token_not_16_bytes_is_invalid() {
        for len in [0, 15, 17] {
            let mut buf = Vec::new();
            param(&mut buf, id::STATELESS_RESET_TOKEN, &vec![1; len]);
            assert_eq!(
                reason(TransportParameters::decode(&buf, Side::Server)),
                "stateless_reset_token is not 16 bytes"
            );
        }
    }

    fn preferred_address_value(cid_len: u8, extra: usize) -> Vec<u8> {
        let mut v = vec![192, 0, 2, 1, 0x01, 0xbb];
        v.extend([0u8; 18]); // [::]:0
        v.push(cid_len);
        v.extend(vec![5; cid_len as usize]);
        v.extend([6; 16]);
        v.extend(vec![0; extra]);
        v
    }

    #[test]
    fn preferred_address_decodes_and_maps_all_zero_to_none() {
        let mut buf = Vec::new();
        param(&mut buf, id::PREFERRED_ADDRESS, &preferred_address_value(4, 0));
        let p = TransportParameters::decode(&buf, Side::Server)
            .unwrap()
            .preferred_address
            .unwrap();
        assert_eq!(p.ipv4, Some(SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 1), 443)));
        assert_eq!(p.ipv6, None);
        assert_eq!(p.connection_id, cid(&[5; 4]));
        assert_eq!(p.stateless_reset_token, ResetToken([6; 16]));
    }

    #[test]
    fn preferred_address_with_zero_length_cid_is_invalid() {
        let mut buf = Vec::new();
        param(&mut buf, id::PREFERRED_ADDRESS, &preferred_address_value(0, 0));
        assert_eq!(
            reason(TransportParameters::decode(&buf, Side::Server)),
            "preferred_address with a zero-length connection ID"
        );
    }

    #[test]
    fn preferred_address_from_server_with_zero_length_cid_is_invalid() {
        let mut buf = Vec::new();
        param(&mut buf, id::PREFERRED_ADDRESS, &preferred_address_value(4, 0));
        param(&mut buf, id::INITIAL_SOURCE_CONNECTION_ID, &[]);
        assert_eq!(
            reason(TransportParameters::decode(&buf, Side::Server)),
            "preferred_address from a server using a zero-length connection ID"
        );
    }

    #[test]
    fn preferred_address_with_wrong_length_is_malformed() {
        for (cid_len, extra) in [(21, 0), (4, 1)] {
            let mut buf = Vec::new();
            param(
                &mut buf,
                id::PREFERRED_ADDRESS,
                &preferred_address_value(cid_len, extra),
            );
            assert!(TransportParameters::decode(&buf, Side::Server).is_err());
        }
        let mut v = preferred_address_value(4, 0);
        v.pop();
        let mut buf = Vec::new();
        param(&mut buf, id::PREFERRED_ADDRESS, &v);
        assert_eq!(
            reason(TransportParameters::decode(&buf, Side::Server)),
            "preferred_address malformed"
        );
    }

    // ---- server-only parameters ----

    #[test]
    fn client_must_not_send_server_only_parameters() {
        let cases: [(u64, Vec<u8>, &str); 4] = [
            (
                id::ORIGINAL_DESTINATION_CONNECTION_ID,
                vec![1; 8],
                "client sent original_destination_connection_id",
            ),
            (
                id::PREFERRED_ADDRESS,
                preferred_address_value(4, 0),
                "client sent preferred_address",
            ),
            (
                id::RETRY_SOURCE_CONNECTION_ID,
                vec![1; 8],
                "client sent retry_source_connection_id",
            ),
            (
                id::STATELESS_RESET_TOKEN,
                vec![1; 16],
                "client sent stateless_reset_token",
            ),
        ];
        for (pid, value, why) in cases {
            let mut buf = Vec::new();
            param(&mut buf, pid, &value);
            assert_eq!(reason(TransportParameters::decode(&buf, Side::Client)), why);
            assert!(
                TransportParameters::decode(&buf, Side::Server).is_ok(),
                "{why}: fine from a server"
            );
        }
    }

    // ---- cross-checks (RFC 9000 §7.3, multipath) ----

    #[test]
    fn client_initial_source_connection_id_must_match_and_be_present() {
        let c1 = cid(&[0xc1; 8]);
        let mut p = TransportParameters {
            initial_source_connection_id: Some(c1),
            ..Default::default()
        };
        assert!(check_client_cids(&p, &c1).is_ok());
        assert_eq!(
            check_client_cids(&p, &cid(&[0xc2; 8])).unwrap_err().reason,
            "initial_source_connection_id does not match"
        );
        p.initial_source_connection_id = None;
        assert_eq!(
            check_client_cids(&p, &c1).unwrap_err().reason,
            "initial_source_connection_id absent"
        );
        // A zero-length CID is carried as a zero-length value (RFC 9000 §7.3) and matches.
        p.initial_source_connection_id = Some(ConnectionId::EMPTY);
        assert!(check_client_cids(&p, &ConnectionId::EMPTY).is_ok());
    }

    #[test]
    fn server_connection_ids_without_retry() {
        // RFC 9000 §7.3 Figure 7: Initial DCID=S1 SCID=C1 / Initial DCID=C1 SCID=S3.
        let (s1, s3) = (cid(b"S1S1S1S1"), cid(b"S3"));
        let p = TransportParameters {
            original_destination_connection_id: Some(s1),
            initial_source_connection_id: Some(s3),
            ..Default::default()
        };
        assert!(check_server_cids(&p, &s3, &s1, None).is_ok());
        let e = check_server_cids(&p, &s3, &cid(b"XXXXXXXX"), None).unwrap_err();
        assert_eq!(e.reason, "original_destination_connection_id does not match");
        let e = check_server_cids(&p, &cid(b"S4"), &s1, None).unwrap_err();
        assert_eq!(e.reason, "initial_source_connection_id does not match");
        let e = check_server_cids(&p, &s3, &s1, Some(&cid(b"S2"))).unwrap_err();
        assert_eq!(e.reason, "retry_source_connection_id absent after a Retry");
        let no_odcid = TransportParameters {
            original_destination_connection_id: None,
            ..p
        };
        let e = check_server_cids(&no_odcid, &s3, &s1, None).unwrap_err();
        assert_eq!(e.reason, "original_destination_connection_id absent");
        assert_eq!(e.code, TransportErrorCode::TRANSPORT_PARAMETER_ERROR);
    }

    #[test]
    fn server_connection_ids_with_retry() {
        // RFC 9000 §7.3 Figure 8: the server sets original_destination_connection_id to S1,
        // retry_source_connection_id to S2 and initial_source_connection_id to S3.
        let (s1, s2, s3) = (cid(b"S1S1S1S1"), cid(b"S2"), cid(b"S3"));
        let p = TransportParameters {
            original_destination_connection_id: Some(s1),
            retry_source_connection_id: Some(s2),
            initial_source_connection_id: Some(s3),
            ..Default::default()
        };
        assert!(check_server_cids(&p, &s3, &s1, Some(&s2)).is_ok());
        let e = check_server_cids(&p, &s3, &s1, Some(&cid(b"S9"))).unwrap_err();
        assert_eq!(e.reason, "retry_source_connection_id does not match");
        let e = check_server_cids(&p, &s3, &s1, None).unwrap_err();
        assert_eq!(e.reason, "retry_source_connection_id present without a Retry");
    }

    #[test]
    fn initial_max_path_id_with_zero_length_cid_is_protocol_violation() {
        let p = TransportParameters {
            initial_max_path_id: Some(0),
            ..Default::default()
        };
        let (a, b) = (cid(&[1; 8]), cid(&[2; 8]));
        assert!(check_multipath_cids(&p, &a, &b).is_ok());
        let e = check_multipath_cids(&p, &ConnectionId::EMPTY, &b).unwrap_err();
        assert_eq!(e.code, TransportErrorCode::PROTOCOL_VIOLATION);
        assert!(check_multipath_cids(&p, &a, &ConnectionId::EMPTY).is_err());
        let no_mp = TransportParameters::default();
        assert!(check_multipath_cids(&no_mp, &ConnectionId::EMPTY, &ConnectionId::EMPTY).is_ok());
        assert!(multipath_negotiated(&p, &p));
        assert!(!multipath_negotiated(&p, &no_mp));
    }

    // ---- proptests ----

    fn arb_cid() -> impl Strategy<Value = ConnectionId> {
        proptest::collection::vec(any::<u8>(), 0..=20).prop_map(|v| ConnectionId::new(&v).unwrap())
    }

    fn arb_varint(max: u64) -> impl Strategy<Value = VarInt> {
        prop_oneof![0..=max.min(63), 0..=max].prop_map(|v| VarInt::from_u64(v).unwrap())
    }

    fn arb_preferred() -> impl Strategy<Value = PreferredAddress> {
        (
            proptest::option::of((any::<[u8; 4]>(), 1u16..)),
            proptest::option::of((any::<[u8; 16]>(), 1u16..)),
            proptest::collection::vec(any::<u8>(), 1..=20),
            any::<[u8; 16]>(),
        )
            .prop_map(|(v4, v6, c, t)| PreferredAddress {
                ipv4: v4.map(|(ip, port)| SocketAddrV4::new(ip.into(), port)),
                ipv6: v6.map(|(ip, port)| SocketAddrV6::new(ip.into(), port, 0, 0)),
                connection_id: ConnectionId::new(&c).unwrap(),
                stateless_reset_token: ResetToken(t),
            })
    }

    prop_compose! {
        fn arb_params()(
            odcid in proptest::option::of(arb_cid()),
            idle in arb_varint(VarInt::MAX.into_inner()),
            token in proptest::option::of(any::<[u8; 16]>()),
            udp in (1200u64..=65527).prop_map(|v| VarInt::from_u64(v).unwrap()),
            data in proptest::array::uniform4(arb_varint(VarInt::MAX.into_inner())),
            streams in proptest::array::uniform2(arb_varint(1 << 60)),
            ade in arb_varint(20),
            mad in arb_varint((1 << 14) - 1),
            dam in any::<bool>(),
            pref in proptest::option::of(arb_preferred()),
            acl in (2u64..1000).prop_map(|v| VarInt::from_u64(v).unwrap()),
            iscid in proptest::option::of(arb_cid()),
            rscid in proptest::option::of(arb_cid()),
            dgram in proptest::option::of(arb_varint(VarInt::MAX.into_inner())),
            path in proptest::option::of(any::<u32>()),
        ) -> TransportParameters {
            let mut p = TransportParameters {
                original_destination_connection_id: odcid,
                max_idle_timeout: idle,
                stateless_reset_token: token.map(ResetToken),
                max_udp_payload_size: udp,
                initial_max_data: data[0],
                initial_max_stream_data_bidi_local: data[1],
                initial_max_stream_data_bidi_remote: data[2],
                initial_max_stream_data_uni: data[3],
                initial_max_streams_bidi: streams[0],
                initial_max_streams_uni: streams[1],
                ack_delay_exponent: ade,
                max_ack_delay: mad,
                disable_active_migration: dam,
                preferred_address: pref,
                active_connection_id_limit: acl,
                initial_source_connection_id: iscid,
                retry_source_connection_id: rscid,
                max_datagram_frame_size: dgram,
                initial_max_path_id: path,
            };
            if p.preferred_address.is_some() && p.initial_source_connection_id.is_some_and(|c| c.is_empty()) {
                p.initial_source_connection_id = Some(ConnectionId::new(&[1]).unwrap());
            }
            p
        }
    }

    proptest! {
        #[test]
        fn round_trip(server in any::<bool>(), seed in proptest::option::of(any::<u64>()), p in arb_params()) {
            let mut p = p;
            let side = if server { Side::Server } else { Side::Client };
            if !server {
                p.original_destination_connection_id = None;
                p.stateless_reset_token = None;
                p.preferred_address = None;
                p.retry_source_connection_id = None;
            }
            prop_assert!(p.validate(side).is_ok());
            let grease = seed.map(|seed| Grease { seed });
            let mut buf = Vec::new();
            p.encode(&mut buf, grease);
            prop_assert_eq!(buf.len(), p.encoded_len(grease));
            prop_assert_eq!(TransportParameters::decode(&buf, side).unwrap(), p);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256), server in any::<bool>()) {
            let side = if server { Side::Server } else { Side::Client };
            if let Err(e) = TransportParameters::decode(&bytes, side) {
                prop_assert_eq!(e.code, TransportErrorCode::TRANSPORT_PARAMETER_ERROR);
            }
        }

        #[test]
        fn arbitrary_known_parameters_never_panic(
            params in proptest::collection::vec((0u64..0x12, proptest::collection::vec(any::<u8>(), 0..60)), 0..8),
        ) {
            let mut buf = Vec::new();
            for (pid, value) in &params {
                param(&mut buf, *pid, value);
            }
            let _ = TransportParameters::decode(&buf, Side::Server);
            let _ = TransportParameters::decode(&buf, Side::Client);
        }
    }
}
