//! The sans-IO protocol core: no sockets, no clocks, no threads. Time and randomness are inputs.
//!
//! Every decoder here reads untrusted bytes: it never panics and reports a typed error instead.

pub mod ack_tracker;
pub mod cid;
pub mod coding;
pub mod connection;
pub mod crypto;
pub mod endpoint;
pub mod error;
pub mod frame;
pub mod host;
pub mod packet;
pub mod packet_number;
pub mod qlog;
pub mod range_set;
pub mod recovery;
pub mod stateless;
pub mod streams;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod token;
pub mod transport_params;

pub use coding::{Decoder, UnexpectedEnd, VarInt, VarIntBoundsExceeded};
pub use error::{TransportError, TransportErrorCode};
