//! `relay bench`: the live service measured end to end on this machine. N emulated boards on
//! pseudo-terminals play through the real serial path into `relay serve` (in this process,
//! SQLite in a temporary directory); M WebSocket clients follow the round. It prints the time
//! from the board message that completed a move to the move's frame at each client, then the
//! round PGN requests per second with and without `If-None-Match`.
//!
//! The delay from the board includes the settle time (a board must be still for `settle_ms`
//! before it is read as a position), printed separately. Clients and server share the
//! machine's cores, so the figures are a floor for a server with its own machine.

use super::emulate::{HallArgs, start_hall};
use crate::serve::{self, Settings};
use anyhow::{Context, Result};
use boards::protocol::LineMode;
use clap::Args;
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Emulated boards.
    #[arg(long, default_value_t = 50)]
    boards: usize,
    /// WebSocket clients following the round.
    #[arg(long, default_value_t = 500)]
    clients: usize,
    /// Seconds of play measured.
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// How much faster than real time the games run.
    #[arg(long, default_value_t = 10.0)]
    speed: f64,
    /// Chance per move of each kind of human noise (slides, lifted pieces, takebacks).
    #[arg(long, default_value_t = 0.15)]
    noise: f64,
    /// Seconds each PGN polling measurement runs.
    #[arg(long, default_value_t = 5)]
    pgn_seconds: u64,
    /// Concurrent connections polling the round PGN.
    #[arg(long, default_value_t = 16)]
    pgn_connections: usize,
}

const MAX_MS: usize = 60_000;

/// Latencies in 1 ms buckets.
struct Histogram(Vec<AtomicU64>);

impl Histogram {
    fn new() -> Histogram {
        Histogram((0..=MAX_MS).map(|_| AtomicU64::new(0)).collect())
    }

    fn add(&self, ms: i64) {
        let i = usize::try_from(ms.max(0)).unwrap_or(0).min(MAX_MS);
        self.0[i].fetch_add(1, Ordering::Relaxed);
    }

    fn count(&self) -> u64 {
        self.0.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    fn quantile(&self, q: f64) -> usize {
        let n = self.count();
        let want = ((n as f64) * q).ceil() as u64;
        let mut seen = 0;
        for (i, c) in self.0.iter().enumerate() {
            seen += c.load(Ordering::Relaxed);
            if seen >= want.max(1) {
                return i;
            }
        }
        MAX_MS
    }

    fn max(&self) -> usize {
        self.0
            .iter()
            .rposition(|c| c.load(Ordering::Relaxed) > 0)
            .unwrap_or(0)
    }
}

fn epoch_ms() -> i64 {
    relay_store::now_ms()
}

pub fn run(args: BenchArgs) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("relay-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let stop = Arc::new(AtomicBool::new(false));
    // Boards stand set up while the clients connect, then play.
    let connect_secs = 5 + (args.clients as u64 / 100);
    let hall_args = HallArgs {
        boards: args.boards,
        bus: false,
        pgn: None,
        speed: args.speed,
        time_control: "5400+30".into(),
        noise: args.noise,
        seed: 1,
        hold_secs: ((connect_secs + 3) as f64 * args.speed).ceil() as u64,
        link_dir: None,
    };
    let hall = start_hall(&hall_args, stop.clone())?;
    let settings = Settings {
        ports: hall
            .lines
            .iter()
            .map(|l| l.path().display().to_string())
            .collect(),
        mode: LineMode::Single,
        db: format!("sqlite://{}/bench.db", dir.display()),
        listen: "127.0.0.1:0".parse()?,
        admin_token: None,
        delay: None,
        settle_ms: 300,
        web_dir: None,
    };
    let settle_ms = settings.settle_ms;
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let server_stop = stop.clone();
    let server = std::thread::spawn(move || {
        serve::run(settings, server_stop, move |a| {
            let _ = addr_tx.send(a);
        })
    });
    let addr = addr_rx
        .recv_timeout(Duration::from_secs(30))
        .context("the service did not start")?;
    println!(
        "bench: {} boards at {}x speed, {} WebSocket clients, service on {addr}",
        args.boards, args.speed, args.clients
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = rt.block_on(measure(&args, addr, settle_ms, connect_secs));
    stop.store(true, Ordering::Relaxed);
    let _ = server.join();
    hall.stop();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

async fn measure(
    args: &BenchArgs,
    addr: std::net::SocketAddr,
    settle_ms: u64,
    connect_secs: u64,
) -> Result<()> {
    let hist = Arc::new(Histogram::new());
    let frames = Arc::new(AtomicU64::new(0));
    let snapshots = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let kinds: Arc<std::sync::Mutex<std::collections::BTreeMap<String, u64>>> = Arc::default();
    let url = format!("ws://{addr}/api/rounds/1/ws");
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..args.clients {
        let kinds = kinds.clone();
        let (url, hist, frames, snapshots, done) = (
            url.clone(),
            hist.clone(),
            frames.clone(),
            snapshots.clone(),
            done.clone(),
        );
        tasks.push(tokio::spawn(async move {
            // A small read buffer, as the server has: tungstenite zeroes the whole buffer
            // before each read, which at the 128 KiB default costs the clients more than
            // the server's work being measured.
            let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
                .read_buffer_size(16 * 1024);
            let Ok((mut ws, _)) =
                tokio_tungstenite::connect_async_with_config(&url, Some(config), false).await
            else {
                return false;
            };
            let mut mine: std::collections::BTreeMap<String, u64> = Default::default();
            while !done.load(Ordering::Relaxed) {
                let next = tokio::time::timeout(Duration::from_millis(500), ws.next()).await;
                let Ok(Some(Ok(msg))) = next else {
                    if matches!(next, Ok(None) | Ok(Some(Err(_)))) {
                        return true;
                    }
                    continue;
                };
                let now = epoch_ms();
                let tokio_tungstenite::tungstenite::Message::Text(t) = msg else {
                    continue;
                };
                frames.fetch_add(1, Ordering::Relaxed);
                if let Some(rest) = t.strip_prefix("{\"type\":\"")
                    && let Some(end) = rest.find('"')
                {
                    match mine.get_mut(&rest[..end]) {
                        Some(n) => *n += 1,
                        None => {
                            mine.insert(rest[..end].to_string(), 1);
                        }
                    }
                }
                // Only moves are timed; other messages are counted and skipped unparsed.
                if t.starts_with("{\"type\":\"move\"") {
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(t.as_str())
                        && let Some(read) = v["read_at_ms"].as_i64()
                    {
                        hist.add(now - read);
                    }
                } else if t.starts_with("{\"type\":\"snapshot\"") {
                    snapshots.fetch_add(1, Ordering::Relaxed);
                }
            }
            let _ = ws.close(None).await;
            let mut k = kinds.lock().unwrap_or_else(|e| e.into_inner());
            for (kind, n) in mine {
                *k.entry(kind).or_insert(0) += n;
            }
            true
        }));
        if tasks.len() % 200 == 0 {
            tokio::task::yield_now().await;
        }
    }
    // Wait for the connections (the boards are still set up, not playing).
    while snapshots.load(Ordering::Relaxed) < args.clients as u64
        && started.elapsed() < Duration::from_secs(connect_secs + 20)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "  {} of {} clients connected in {:.1} s",
        snapshots.load(Ordering::Relaxed),
        args.clients,
        started.elapsed().as_secs_f64()
    );
    let t0 = Instant::now();
    tokio::time::sleep(
        Duration::from_secs(connect_secs + 3 + args.seconds).saturating_sub(started.elapsed()),
    )
    .await;
    done.store(true, Ordering::Relaxed);
    let mut ok = 0;
    for t in tasks {
        if t.await.unwrap_or(false) {
            ok += 1;
        }
    }
    let n = hist.count();
    println!(
        "  board → WebSocket frame, {n} move frames over {:.0} s ({} frames in all, {ok} clients to the end, {} snapshots incl. the first):",
        t0.elapsed().as_secs_f64(),
        frames.load(Ordering::Relaxed),
        snapshots.load(Ordering::Relaxed)
    );
    println!(
        "    frames by type: {:?}",
        kinds.lock().unwrap_or_else(|e| e.into_inner())
    );
    if n > 0 {
        let (p50, p99, max) = (hist.quantile(0.5), hist.quantile(0.99), hist.max());
        println!("    p50 {p50} ms   p99 {p99} ms   max {max} ms");
        let beyond = |v: usize| v.saturating_sub(settle_ms as usize);
        println!(
            "    beyond the {settle_ms} ms settle time: p50 {} ms   p99 {} ms   max {} ms",
            beyond(p50),
            beyond(p99),
            beyond(max)
        );
    }
    // Round PGN polling, as a broadcast platform does.
    let (plain, etag) = pgn_rate(addr, args.pgn_connections, args.pgn_seconds, None).await?;
    println!(
        "  round PGN: {plain:.0} requests/s with the body ({} connections)",
        args.pgn_connections
    );
    if let Some(tag) = etag {
        let (cached, _) = pgn_rate(addr, args.pgn_connections, args.pgn_seconds, Some(tag)).await?;
        println!("  round PGN: {cached:.0} requests/s with If-None-Match (304 while unchanged)");
    }
    Ok(())
}

/// Requests per second of `GET /api/rounds/1/pgn` over keep-alive connections; also returns
/// the last ETag seen.
async fn pgn_rate(
    addr: std::net::SocketAddr,
    connections: usize,
    seconds: u64,
    if_none_match: Option<String>,
) -> Result<(f64, Option<String>)> {
    let count = Arc::new(AtomicU64::new(0));
    let etag: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
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
                            *etag.lock().unwrap_or_else(|e| e.into_inner()) =
                                Some(value.trim().to_string());
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
    let tag = etag.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok((count.load(Ordering::Relaxed) as f64 / seconds as f64, tag))
}
