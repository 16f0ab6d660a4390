//! The HTTP/1.1 connections: accepted here rather than by `axum::serve`, so that each one has
//! bounds a hall's laptop on a public network needs. A client must send a request's head
//! within [`HEADER_TIMEOUT`] (a slow-header client ties up nothing for long), and a connection
//! on which no byte moved either way for [`IDLE_TIMEOUT`] is closed (idle keep-alive
//! connections do not pile up). Pages' WebSockets send a heartbeat every 5 s, so they are
//! never idle that long; a WebSocket client that stops reading is closed by its own sender
//! (see `api::ws`).

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tower::Service;

/// The longest a client may take to send a request's head (from the connection's start, or
/// from the first byte of a later request on the same connection).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection with no byte read or written for this long is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a connection looks at its idle time.
const IDLE_CHECK: Duration = Duration::from_secs(5);
/// At shutdown, how long connections get to finish what they are sending.
const DRAIN: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` until `stop` resolves; then asks every connection to finish
/// its current request and close, and waits for them at most [`DRAIN`].
pub async fn serve(listener: TcpListener, app: Router, stop: impl Future<Output = ()>) {
    // Every connection holds a receiver: when the last one is dropped, all have ended.
    let (closing_tx, closing_rx) = tokio::sync::watch::channel(false);
    tokio::pin!(stop);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of file descriptors, mostly: wait a moment rather than spin.
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let _ = tcp.set_nodelay(true);
        tokio::spawn(connection(tcp, app.clone(), closing_rx.clone()));
    }
    drop(listener);
    drop(closing_rx);
    let _ = closing_tx.send(true);
    let _ = tokio::time::timeout(DRAIN, closing_tx.closed()).await;
}

async fn connection(tcp: TcpStream, app: Router, mut closing: tokio::sync::watch::Receiver<bool>) {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        inner: tcp,
        activity: activity.clone(),
    });
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let mut app = app.clone();
        async move { app.call(req).await }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(io, service)
        .with_upgrades();
    tokio::pin!(conn);
    let mut idle_check = tokio::time::interval(IDLE_CHECK);
    idle_check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            _ = idle_check.tick() => {
                if activity.idle() >= IDLE_TIMEOUT {
                    tracing::debug!("idle connection closed");
                    return; // dropping the connection closes the socket
                }
            }
            changed = closing.changed() => {
                if changed.is_err() || *closing.borrow() {
                    conn.as_mut().graceful_shutdown();
                    // Keep driving it until it finishes what it was sending.
                    let _ = tokio::time::timeout(DRAIN, conn.as_mut()).await;
                    return;
                }
            }
        }
    }
}

/// When bytes last moved on a connection (ms since its start).
struct Activity {
    start: Instant,
    last_ms: AtomicU64,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            start: Instant::now(),
            last_ms: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        let ms = self.start.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    fn idle(&self) -> Duration {
        let now = self.start.elapsed().as_millis() as u64;
        Duration::from_millis(now.saturating_sub(self.last_ms.load(Ordering::Relaxed)))
    }
}

/// A TCP stream that notes when bytes move.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.touch();
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
