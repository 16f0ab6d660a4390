//! Round PGN polling, as a broadcast platform does it: requests per second over keep-alive
//! connections, with the body and with `If-None-Match`.

use anyhow::Result;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// Requests per second of `GET /api/rounds/1/pgn` over keep-alive connections; also returns
/// the last ETag seen.
pub async fn pgn_rate(
    addr: std::net::SocketAddr,
    connections: usize,
    seconds: u64,
    if_none_match: Option<String>,
) -> Result<(f64, Option<String>)> {
    let count = Arc::new(AtomicU64::new(0));
    let etag: Arc<parking_lot::Mutex<Option<String>>> = Arc::default();
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (count, etag, inm) = (count.clone(), etag.clone(), if_none_match.clone());
        tasks.push(tokio::spawn(async move {
            let Ok(stream) = tokio::net::TcpStream::connect(addr).await else {
                return;
            };
            let mut stream = BufReader::new(stream);
            let request = match &inm {
                Some(t) => format!(
                    "GET /api/rounds/1/pgn HTTP/1.1\r\nHost: bench\r\nIf-None-Match: {t}\r\n\r\n"
                ),
                None => "GET /api/rounds/1/pgn HTTP/1.1\r\nHost: bench\r\n\r\n".to_string(),
            };
            while Instant::now() < end {
                if stream
                    .get_mut()
                    .write_all(request.as_bytes())
                    .await
                    .is_err()
                {
                    return;
                }
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    match stream.read_line(&mut line).await {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                    let l = line.trim_end();
                    if l.is_empty() {
                        break;
                    }
                    if let Some((name, value)) = l.split_once(':') {
                        if name.eq_ignore_ascii_case("content-length") {
                            length = value.trim().parse().unwrap_or(0);
                        } else if name.eq_ignore_ascii_case("etag") {
                            *etag.lock() = Some(value.trim().to_string());
                        }
                    }
                }
                let mut body = vec![0u8; length];
                if stream.read_exact(&mut body).await.is_err() {
                    return;
                }
                count.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let tag = etag.lock().clone();
    Ok((count.load(Ordering::Relaxed) as f64 / seconds as f64, tag))
}
