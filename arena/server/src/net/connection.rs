//! An admitted connection: [`LimitedIo`], closed when silent past the handshake or idle
//! timeout.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};
use tonic::transport::server::{Connected, TcpConnectInfo};
use tracing::debug;

use super::{NetLimits, NetMetrics, Permit};

/// Bytes of the HTTP/2 client preface (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`): a connection
/// that has not sent this many within the handshake timeout is closed.
pub const HTTP2_PREFACE_BYTES: u64 = 24;

/// An admitted TCP connection: counted while open, and closed (its reads fail) when the
/// client has not sent the HTTP/2 preface within the handshake timeout or has sent nothing
/// for the idle timeout.
pub struct LimitedIo {
    stream: TcpStream,
    pub(super) peer: SocketAddr,
    local: Option<SocketAddr>,
    _permit: Permit,
    metrics: NetMetrics,
    accepted: Instant,
    last_read: Instant,
    bytes_read: u64,
    handshake_timeout: Duration,
    idle_timeout: Duration,
    /// Set no later than the deadline; moved on only when it fires (not on every read).
    timer: Pin<Box<Sleep>>,
}

impl LimitedIo {
    /// Admits `stream` from `peer`, counted by `permit`, with the timeouts of `limits`.
    pub(super) fn new(
        stream: TcpStream,
        peer: SocketAddr,
        permit: Permit,
        limits: &NetLimits,
        metrics: &NetMetrics,
    ) -> LimitedIo {
        let now = Instant::now();
        metrics.connections.inc();
        LimitedIo {
            local: stream.local_addr().ok(),
            stream,
            peer,
            _permit: permit,
            metrics: metrics.clone(),
            accepted: now,
            last_read: now,
            bytes_read: 0,
            handshake_timeout: limits.handshake_timeout,
            idle_timeout: limits.idle_timeout,
            timer: Box::pin(tokio::time::sleep_until(now + limits.handshake_timeout)),
        }
    }

    fn in_handshake(&self) -> bool {
        self.bytes_read < HTTP2_PREFACE_BYTES
    }

    fn deadline(&self) -> Instant {
        if self.in_handshake() {
            self.accepted + self.handshake_timeout
        } else {
            self.last_read + self.idle_timeout
        }
    }

    /// Pending until the deadline; then the error that closes the connection.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let deadline = self.deadline();
            if self.timer.deadline() > deadline {
                self.timer.as_mut().reset(deadline);
            }
            if self.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            if Instant::now() < deadline {
                self.timer.as_mut().reset(deadline);
                continue;
            }
            let (phase, message) = if self.in_handshake() {
                (
                    "handshake",
                    format!(
                        "no HTTP/2 preface within {} ms (--handshake-timeout-ms)",
                        self.handshake_timeout.as_millis()
                    ),
                )
            } else {
                (
                    "idle",
                    format!(
                        "nothing received for {} ms (--idle-timeout-ms)",
                        self.idle_timeout.as_millis()
                    ),
                )
            };
            self.metrics.timed_out.with_label_values(&[phase]).inc();
            debug!(peer = %self.peer, "connection closed: {message}");
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, message)));
        }
    }
}

impl Drop for LimitedIo {
    fn drop(&mut self) {
        self.metrics.connections.dec();
    }
}

impl Connected for LimitedIo {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        TcpConnectInfo {
            local_addr: self.local,
            remote_addr: Some(self.peer),
        }
    }
}

impl AsyncRead for LimitedIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let read = (buf.filled().len() - before) as u64;
                if read > 0 {
                    this.bytes_read = this.bytes_read.saturating_add(read);
                    this.last_read = Instant::now();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => this.poll_deadline(cx),
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
        }
    }
}

/// A write that cannot go on (the client does not read) still ends at the deadline: the
/// connection may not be polled for reading meanwhile.
fn or_deadline<T>(
    io: &mut LimitedIo,
    cx: &mut Context<'_>,
    poll: Poll<io::Result<T>>,
) -> Poll<io::Result<T>> {
    match poll {
        Poll::Pending => match io.poll_deadline(cx) {
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            _ => Poll::Pending,
        },
        ready => ready,
    }
}

impl AsyncWrite for LimitedIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write(cx, buf);
        or_deadline(this, cx, poll)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        or_deadline(this, cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
