//! qlog output: the connection's events as qlog JSON-SEQ records (draft-ietf-quic-qlog-main-schema, qlog
//! version 0.3, the format quiche and quinn write and qvis opens), without any I/O of its own.
//!
//! Target: qlog 0.3 as quiche's `qlog` crate 0.16 reads it (the test `tests/qlog_compat.rs` reads every record
//! with that crate), and the qvis viewer. The multipath additions (a `path_id` field, the multipath frames,
//! the `multipath:path_updated` and `mpquic:reassembly_updated` events) are extensions with the schemas listed
//! in `docs/qlog.md`.
//!
//! The application (or the runtime) sets [`TransportConfig::qlog`](crate::proto::connection::TransportConfig)
//! to a [`QlogFactory`]: once per connection the factory gets a [`QlogContext`] (side and original
//! destination connection ID) and returns the `Write` to log into, or `None` to skip that connection. The
//! core never opens a file or reads a clock: times are the `now` the connection is given, relative to its
//! first `now`.
//!
//! Each record is `0x1E`, one JSON object, `\n` (RFC 7464). The first is the header (`qlog_version`,
//! `qlog_format`, `trace` with `vantage_point` and `common_fields`), then one record per event:
//! `{"time": <ms>, "name": "<category>:<event>", "data": {...}}`. Writes are buffered; a write error is
//! logged once (tracing) and ends the log: it never affects the connection. The buffer is flushed when the
//! connection closes and when it is dropped.
//!
//! Which events the connection writes, and their fields, is documented in `connection/qlog.rs` and in
//! `docs/proto-connection.md`.

mod frames;
mod json;

use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::time::Instant;

use crate::proto::packet::ConnectionId;
use crate::proto::transport_params::Side;

pub(crate) use frames::write_frames;
pub(crate) use json::Obj;

/// The qlog version written in the header record.
pub const QLOG_VERSION: &str = "0.3";

/// The record separator that starts every JSON-SEQ record (RFC 7464 §2.2).
pub const RECORD_SEPARATOR: u8 = 0x1e;

/// What a [`QlogFactory`] learns about the connection it opens a log for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QlogContext {
    /// Which side the connection is (the trace's vantage point).
    pub side: Side,
    /// The original destination connection ID (the client's first Initial), as lowercase hex: the same on
    /// both sides, so it pairs the client's and the server's logs.
    pub odcid: String,
}

impl QlogContext {
    fn new(side: Side, odcid: &ConnectionId) -> Self {
        let odcid = odcid.iter().map(|b| format!("{b:02x}")).collect();
        QlogContext { side, odcid }
    }

    /// `"client"` or `"server"`.
    pub fn side_name(&self) -> &'static str {
        match self.side {
            Side::Client => "client",
            Side::Server => "server",
        }
    }

    /// The conventional file name of the log: `<odcid>_<side>.sqlog`.
    pub fn file_name(&self) -> String {
        format!("{}_{}.sqlog", self.odcid, self.side_name())
    }
}

/// Where the qlog of each connection goes: called once per connection with its [`QlogContext`]; `None`
/// disables qlog for that connection.
#[derive(Clone)]
#[allow(clippy::type_complexity)]
pub struct QlogFactory(pub Arc<dyn Fn(&QlogContext) -> Option<Box<dyn Write + Send>> + Send + Sync>);

impl QlogFactory {
    /// A factory from a closure.
    pub fn new(f: impl Fn(&QlogContext) -> Option<Box<dyn Write + Send>> + Send + Sync + 'static) -> Self {
        QlogFactory(Arc::new(f))
    }
}

impl std::fmt::Debug for QlogFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QlogFactory(..)")
    }
}

/// One connection's qlog: the buffered writer, the reference time and a scratch buffer for records.
pub(crate) struct QlogStream {
    /// `None` once a write failed.
    out: Option<BufWriter<Box<dyn Write + Send>>>,
    /// The connection's first `now`: event times are relative to it.
    start: Instant,
    /// The latest event time written: times never go backwards.
    latest: Instant,
    /// The record being formatted (kept to reuse its allocation).
    record: String,
}

impl QlogStream {
    /// Asks `factory` for a writer and writes the header record; `None` if the factory declines or the header
    /// cannot be written.
    pub(crate) fn open(
        factory: &QlogFactory,
        side: Side,
        odcid: &ConnectionId,
        now: Instant,
    ) -> Option<Self> {
        let ctx = QlogContext::new(side, odcid);
        let out = (factory.0)(&ctx)?;
        let mut s = QlogStream {
            out: Some(BufWriter::new(out)),
            start: now,
            latest: now,
            record: String::new(),
        };
        let mut record = std::mem::take(&mut s.record);
        json::object(&mut record, |o| {
            o.str("qlog_version", QLOG_VERSION);
            o.str("qlog_format", "JSON-SEQ");
            o.str("title", "mpquic");
            o.str(
                "description",
                "mpquic connection trace (multipath: path_id in every path-level event)",
            );
            o.obj("trace", |o| {
                o.str("title", &format!("{} {}", ctx.side_name(), ctx.odcid));
                o.obj("vantage_point", |o| {
                    o.str("name", "mpquic");
                    o.str("type", ctx.side_name());
                });
                o.obj("common_fields", |o| {
                    o.str("ODCID", &ctx.odcid);
                    o.str("group_id", &ctx.odcid);
                    o.arr("protocol_type", |a| a.str("QUIC"));
                    o.f64("reference_time", 0.0);
                    o.str("time_format", "relative");
                });
            });
        });
        s.write_record(record);
        s.out.is_some().then_some(s)
    }

    /// Whether a write failed (the log is over).
    pub(crate) fn failed(&self) -> bool {
        self.out.is_none()
    }

    /// Writes one event named `name` (`category:event`) at `now`, its `data` object filled by `data`.
    pub(crate) fn event(&mut self, now: Instant, name: &str, data: impl FnOnce(&mut Obj<'_>)) {
        if self.out.is_none() {
            return;
        }
        let now = now.max(self.latest);
        self.latest = now;
        let time = json::millis(now.saturating_duration_since(self.start));
        let mut record = std::mem::take(&mut self.record);
        json::object(&mut record, |o| {
            o.f64("time", time);
            o.str("name", name);
            o.obj("data", data);
        });
        self.write_record(record);
    }

    fn write_record(&mut self, mut record: String) {
        if let Some(out) = self.out.as_mut() {
            let r = out
                .write_all(&[RECORD_SEPARATOR])
                .and_then(|()| out.write_all(record.as_bytes()))
                .and_then(|()| out.write_all(b"\n"));
            if let Err(e) = r {
                self.fail(&e);
            }
        }
        record.clear();
        self.record = record;
    }

    /// Flushes buffered records to the writer.
    pub(crate) fn flush(&mut self) {
        if let Some(Err(e)) = self.out.as_mut().map(|o| o.flush()) {
            self.fail(&e);
        }
    }

    fn fail(&mut self, e: &std::io::Error) {
        tracing::warn!(error = %e, "qlog: write failed, the connection's qlog stops here");
        // The buffered records are dropped without another write attempt.
        if let Some(out) = self.out.take() {
            drop(out.into_parts());
        }
    }
}

impl Drop for QlogStream {
    fn drop(&mut self) {
        self.flush();
    }
}

impl std::fmt::Debug for QlogStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QlogStream")
            .field("failed", &self.failed())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use std::sync::Mutex;

    use super::*;

    /// A writer that fails after `ok` bytes.
    struct Failing {
        ok: usize,
        calls: Arc<Mutex<usize>>,
    }

    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            *self.calls.lock().unwrap() += 1;
            if self.ok == 0 {
                return Err(std::io::Error::other("disk full"));
            }
            let n = buf.len().min(self.ok);
            self.ok -= n;
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failing_writer_ends_the_log_after_one_error() {
        let calls = Arc::new(Mutex::new(0));
        let c = calls.clone();
        let factory = QlogFactory::new(move |_| {
            Some(Box::new(Failing {
                ok: 10,
                calls: c.clone(),
            }) as Box<dyn Write + Send>)
        });
        #[allow(clippy::disallowed_methods)] // a test's arbitrary reference time
        let now = Instant::now();
        let cid = ConnectionId::new(&[1, 2, 3, 4]).unwrap();
        let mut s = QlogStream::open(&factory, Side::Client, &cid, now).unwrap();
        // The header sits in the buffer; the flush fails and the log ends.
        s.flush();
        assert!(s.failed());
        let after = *calls.lock().unwrap();
        for _ in 0..100 {
            s.event(now, "transport:packet_sent", |o| o.u64("x", 1));
        }
        s.flush();
        drop(s);
        assert_eq!(*calls.lock().unwrap(), after, "no write after the failure");
    }

    #[test]
    fn context_names_the_file_by_odcid_and_side() {
        let cid = ConnectionId::new(&[0xab, 0x01]).unwrap();
        let ctx = QlogContext::new(Side::Server, &cid);
        assert_eq!(ctx.file_name(), "ab01_server.sqlog");
    }
}
