//! Stream handles: [`SendStream`] (tokio [`AsyncWrite`]) and [`RecvStream`] (tokio [`AsyncRead`]).
//!
//! Both lock their connection for each call and register their task's waker when the core says "blocked";
//! the connection's driver wakes it on the matching stream event.
//!
//! A read ([`RecvStream::read`], tokio's `AsyncRead`) fills the caller's buffer with everything that is
//! ready in order, up to the buffer's size, not one received packet's worth: an application that does work
//! per read (a file write, a parse) then does it per buffer. Taking data from the core gives flow-control
//! credit back; when the window's update rule makes it due, the reading task sends it at once (see
//! `ConnShared::credit_released`).

use std::collections::VecDeque;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::proto::coding::VarInt;
use crate::proto::connection::ConnectionError;
use crate::proto::streams::{self, SetWindowError, StreamId, WindowPolicy};

use super::clock;
use super::shared::ConnRef;

/// Bytes copied from the caller's buffer per write call (the core accepts what its send buffer can hold).
const MAX_WRITE_COPY: usize = 64 * 1024;

/// Read-ahead of [`RecvStream`]: when a read finds data, up to this many more chunks and bytes are taken from
/// the core under the same lock, so that a reader does not lock the connection once per received packet.
const READ_AHEAD_CHUNKS: usize = 32;
const READ_AHEAD_BYTES: usize = 64 * 1024;

/// Why a write failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The peer asked us to stop sending (STOP_SENDING) with this code; the stream was reset.
    #[error("stopped by peer with code {0}")]
    Stopped(VarInt),
    /// The connection ended.
    #[error("connection lost: {0:?}")]
    ConnectionLost(ConnectionError),
    /// The stream was already finished or reset.
    #[error("closed stream")]
    ClosedStream,
}

impl From<WriteError> for io::Error {
    fn from(e: WriteError) -> io::Error {
        let kind = match e {
            WriteError::Stopped(_) | WriteError::ConnectionLost(_) => io::ErrorKind::ConnectionReset,
            WriteError::ClosedStream => io::ErrorKind::NotConnected,
        };
        io::Error::new(kind, e)
    }
}

/// Why a read failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The peer reset the stream with this code.
    #[error("reset by peer with code {0}")]
    Reset(VarInt),
    /// The connection ended.
    #[error("connection lost: {0:?}")]
    ConnectionLost(ConnectionError),
    /// The stream was stopped or already read to its end.
    #[error("closed stream")]
    ClosedStream,
    /// [`RecvStream::read_to_end`]: the stream is longer than the limit.
    #[error("stream longer than the limit")]
    TooLong,
}

impl From<ReadError> for io::Error {
    fn from(e: ReadError) -> io::Error {
        let kind = match e {
            ReadError::Reset(_) | ReadError::ConnectionLost(_) => io::ErrorKind::ConnectionReset,
            ReadError::ClosedStream => io::ErrorKind::NotConnected,
            ReadError::TooLong => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, e)
    }
}

/// The sending half of a stream. Dropping it finishes the stream if it was neither finished nor reset.
#[derive(Debug)]
pub struct SendStream {
    conn: ConnRef,
    id: StreamId,
    done: bool,
}

impl SendStream {
    pub(crate) fn new(conn: ConnRef, id: StreamId) -> SendStream {
        SendStream {
            conn,
            id,
            done: false,
        }
    }

    /// The stream ID.
    pub fn id(&self) -> StreamId {
        self.id
    }

    fn poll_write_bytes(&mut self, cx: &mut Context<'_>, data: &[u8]) -> Poll<Result<usize, WriteError>> {
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let chunk = data.get(..data.len().min(MAX_WRITE_COPY)).unwrap_or(data);
        let mut st = self.conn.lock();
        if let Some(e) = &st.error {
            return Poll::Ready(Err(WriteError::ConnectionLost(e.clone())));
        }
        match st.conn.write(self.id, Bytes::copy_from_slice(chunk)) {
            Ok(0) | Err(streams::WriteError::Blocked) => {
                st.writable.insert(self.id, cx.waker().clone());
                Poll::Pending
            }
            Ok(n) => {
                drop(st);
                self.conn.flush();
                Poll::Ready(Ok(n))
            }
            Err(streams::WriteError::Stopped(code)) => Poll::Ready(Err(WriteError::Stopped(code))),
            Err(streams::WriteError::ClosedStream) => Poll::Ready(Err(WriteError::ClosedStream)),
        }
    }

    /// Writes some of `data`; returns how many bytes were accepted.
    pub async fn write(&mut self, data: &[u8]) -> Result<usize, WriteError> {
        poll_fn(|cx| self.poll_write_bytes(cx, data)).await
    }

    /// Writes all of `data`.
    pub async fn write_all(&mut self, mut data: &[u8]) -> Result<(), WriteError> {
        while !data.is_empty() {
            let n = self.write(data).await?;
            data = data.get(n..).unwrap_or_default();
        }
        Ok(())
    }

    /// Writes all of `data` without copying it.
    pub async fn write_chunk(&mut self, mut data: Bytes) -> Result<(), WriteError> {
        while !data.is_empty() {
            let n = poll_fn(|cx| {
                let mut st = self.conn.lock();
                if let Some(e) = &st.error {
                    return Poll::Ready(Err(WriteError::ConnectionLost(e.clone())));
                }
                match st.conn.write(self.id, data.clone()) {
                    Ok(0) | Err(streams::WriteError::Blocked) => {
                        st.writable.insert(self.id, cx.waker().clone());
                        Poll::Pending
                    }
                    Ok(n) => Poll::Ready(Ok(n)),
                    Err(streams::WriteError::Stopped(code)) => Poll::Ready(Err(WriteError::Stopped(code))),
                    Err(streams::WriteError::ClosedStream) => Poll::Ready(Err(WriteError::ClosedStream)),
                }
            })
            .await?;
            self.conn.flush();
            let _ = data.split_to(n.min(data.len()));
        }
        Ok(())
    }

    /// Ends the stream after the data written so far (a FIN).
    pub fn finish(&mut self) -> Result<(), WriteError> {
        let r = self.conn.lock().conn.finish(self.id);
        self.done = true;
        // The FIN leaves from this task, as written data does (no hop through the driver task).
        self.conn.flush();
        match r {
            Ok(()) => Ok(()),
            Err(streams::WriteError::Stopped(code)) => Err(WriteError::Stopped(code)),
            Err(streams::WriteError::Blocked | streams::WriteError::ClosedStream) => {
                Err(WriteError::ClosedStream)
            }
        }
    }

    /// Abandons the stream with RESET_STREAM and an application error code.
    pub fn reset(&mut self, code: VarInt) -> Result<(), WriteError> {
        let r = self.conn.lock().conn.reset(self.id, code);
        self.done = true;
        self.conn.flush();
        r.map_err(|_| WriteError::ClosedStream)
    }
}

impl Drop for SendStream {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.conn.lock().conn.finish(self.id);
            self.conn.wake_driver();
        }
    }
}

impl AsyncWrite for SendStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_bytes(cx, buf).map_err(Into::into)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Finishes the stream.
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(Ok(()));
        }
        Poll::Ready(this.finish().map_err(Into::into))
    }
}

/// The receiving half of a stream. Dropping it before the end asks the peer to stop sending (code 0).
#[derive(Debug)]
pub struct RecvStream {
    conn: ConnRef,
    id: StreamId,
    /// The end of the stream was read, or the stream was stopped.
    done: bool,
    /// Chunks already taken from the core (read-ahead), in order.
    ahead: VecDeque<Bytes>,
    /// How the stream ended, if the read-ahead reached its end (the core has forgotten the stream then).
    ahead_end: Option<Ended>,
}

/// The end of a stream seen by the read-ahead.
#[derive(Debug, Clone, Copy)]
enum Ended {
    Fin,
    Reset(VarInt),
}

impl RecvStream {
    pub(crate) fn new(conn: ConnRef, id: StreamId) -> RecvStream {
        RecvStream {
            conn,
            id,
            done: false,
            ahead: VecDeque::new(),
            ahead_end: None,
        }
    }

    /// The next read-ahead chunk, cut to `max` bytes.
    fn take_ahead(&mut self, max: usize) -> Option<Bytes> {
        let mut b = self.ahead.pop_front()?;
        if b.len() > max {
            let rest = b.split_off(max);
            self.ahead.push_front(rest);
        }
        Some(b)
    }

    /// The stream ID.
    pub fn id(&self) -> StreamId {
        self.id
    }

    /// Takes up to [`READ_AHEAD_CHUNKS`] chunks and [`READ_AHEAD_BYTES`] bytes more from the core into the
    /// read-ahead, noting the stream's end if it reaches it.
    fn read_ahead(
        id: StreamId,
        ahead: &mut VecDeque<Bytes>,
        ahead_end: &mut Option<Ended>,
        st: &mut super::shared::ConnState,
        now: std::time::Instant,
    ) {
        let mut budget = READ_AHEAD_BYTES;
        while ahead.len() < READ_AHEAD_CHUNKS && budget > 0 && ahead_end.is_none() {
            match st.conn.read(id, budget, now) {
                Ok(Some(c)) => {
                    budget = budget.saturating_sub(c.len());
                    ahead.push_back(c);
                }
                Ok(None) => *ahead_end = Some(Ended::Fin),
                Err(streams::ReadError::Reset(code)) => *ahead_end = Some(Ended::Reset(code)),
                Err(_) => break,
            }
        }
    }

    /// After a read returned data: more data that is ready now, without waiting, cut to `max` bytes
    /// (`None` when nothing more is ready, or the stream's end is next).
    fn more_ready(&mut self, max: usize) -> Option<Bytes> {
        if max == 0 {
            return None;
        }
        if let Some(b) = self.take_ahead(max) {
            return Some(b);
        }
        if self.ahead_end.is_some() || self.done {
            return None;
        }
        let due = {
            let mut st = self.conn.lock();
            let now = clock::now();
            Self::read_ahead(self.id, &mut self.ahead, &mut self.ahead_end, &mut st, now);
            st.conn.flow_credit_due()
        };
        self.conn.credit_released(due);
        self.take_ahead(max)
    }

    fn poll_chunk(&mut self, cx: &mut Context<'_>, max: usize) -> Poll<Result<Option<Bytes>, ReadError>> {
        let max = max.max(1);
        if let Some(b) = self.take_ahead(max) {
            return Poll::Ready(Ok(Some(b)));
        }
        match self.ahead_end.take() {
            Some(Ended::Fin) => {
                self.done = true;
                return Poll::Ready(Ok(None));
            }
            Some(Ended::Reset(code)) => {
                self.done = true;
                return Poll::Ready(Err(ReadError::Reset(code)));
            }
            None => {}
        }
        let mut st = self.conn.lock();
        let now = clock::now();
        match st.conn.read(self.id, max, now) {
            Ok(Some(b)) => {
                Self::read_ahead(self.id, &mut self.ahead, &mut self.ahead_end, &mut st, now);
                let due = st.conn.flow_credit_due();
                drop(st);
                // Reading may have made flow-control credit due: see `ConnShared::credit_released`.
                self.conn.credit_released(due);
                Poll::Ready(Ok(Some(b)))
            }
            Ok(None) => {
                self.done = true;
                Poll::Ready(Ok(None))
            }
            Err(streams::ReadError::Blocked) => {
                if let Some(e) = &st.error {
                    return Poll::Ready(Err(ReadError::ConnectionLost(e.clone())));
                }
                st.readable.insert(self.id, cx.waker().clone());
                Poll::Pending
            }
            Err(streams::ReadError::Reset(code)) => {
                self.done = true;
                Poll::Ready(Err(ReadError::Reset(code)))
            }
            Err(streams::ReadError::ClosedStream) => {
                if self.done {
                    return Poll::Ready(Ok(None));
                }
                if let Some(e) = &st.error {
                    return Poll::Ready(Err(ReadError::ConnectionLost(e.clone())));
                }
                Poll::Ready(Err(ReadError::ClosedStream))
            }
        }
    }

    /// Reads the next chunk of at most `max` bytes, without copying; `None` at the end of the stream.
    pub async fn read_chunk(&mut self, max: usize) -> Result<Option<Bytes>, ReadError> {
        poll_fn(|cx| self.poll_chunk(cx, max)).await
    }

    /// Reads into `buf`; `None` at the end of the stream.
    pub async fn read(&mut self, buf: &mut [u8]) -> Result<Option<usize>, ReadError> {
        let Some(chunk) = self.read_chunk(buf.len()).await? else {
            return Ok(None);
        };
        let mut n = chunk.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), chunk.get(..n)) {
            dst.copy_from_slice(src);
        }
        // Fill the rest of `buf` with what is ready now: a reader that does work per read (a file write)
        // then does it per buffer, not per received packet.
        while let Some(more) = self.more_ready(buf.len().saturating_sub(n)) {
            let end = n.saturating_add(more.len()).min(buf.len());
            if let Some(dst) = buf.get_mut(n..end) {
                dst.copy_from_slice(more.get(..end - n).unwrap_or_default());
            }
            n = end;
        }
        Ok(Some(n))
    }

    /// Reads the whole stream, failing with [`ReadError::TooLong`] past `limit` bytes.
    pub async fn read_to_end(&mut self, limit: usize) -> Result<Vec<u8>, ReadError> {
        let mut out = Vec::new();
        while let Some(chunk) = self.read_chunk(usize::MAX).await? {
            if out.len().saturating_add(chunk.len()) > limit {
                return Err(ReadError::TooLong);
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }

    /// Changes how this stream's receive window grows from now on: the [`WindowPolicy`] and the window's
    /// maximum (1 to 2^62 − 1 bytes; [`WindowPolicy::Fixed`] makes the window exactly `max_window`). The
    /// limit already advertised never decreases; a larger window is advertised to the peer at once.
    /// Fails with [`SetWindowError::ClosedStream`] once the stream's end was taken from the connection.
    pub fn set_receive_window(
        &mut self,
        max_window: u64,
        policy: WindowPolicy,
    ) -> Result<(), SetWindowError> {
        let r = self
            .conn
            .lock()
            .conn
            .set_stream_receive_window(self.id, max_window, policy);
        if r.is_ok() {
            self.conn.credit_released(true);
        }
        r
    }

    /// Asks the peer to stop sending (STOP_SENDING) with an application error code.
    pub fn stop(&mut self, code: VarInt) -> Result<(), ReadError> {
        self.ahead.clear();
        if self.ahead_end.take().is_some() {
            // The read-ahead already took the stream's end from the core: nothing is left to stop.
            self.done = true;
            return Ok(());
        }
        let r = self.conn.lock().conn.stop(self.id, code);
        self.done = true;
        self.conn.flush();
        r.map_err(|_| ReadError::ClosedStream)
    }
}

impl Drop for RecvStream {
    fn drop(&mut self) {
        if !self.done && self.ahead_end.is_none() {
            let _ = self.conn.lock().conn.stop(self.id, VarInt::from_u32(0));
            self.conn.wake_driver();
        }
    }
}

impl AsyncRead for RecvStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        let this = self.get_mut();
        match this.poll_chunk(cx, buf.remaining()) {
            Poll::Ready(Ok(Some(b))) => {
                let n = b.len().min(buf.remaining());
                buf.put_slice(b.get(..n).unwrap_or_default());
                // Fill the rest with what is ready now (as [`RecvStream::read`] does).
                while let Some(more) = this.more_ready(buf.remaining()) {
                    let n = more.len().min(buf.remaining());
                    buf.put_slice(more.get(..n).unwrap_or_default());
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Ok(None)) => Poll::Ready(Ok(())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e.into())),
            Poll::Pending => Poll::Pending,
        }
    }
}
