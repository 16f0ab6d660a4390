//! Faults from outside that the service must take without harm (issue 14's fault runs kept as
//! tests): random and mutated bytes on a board's port. The kill loop with clock checks is in
//! `serve_boards`, slow and never-reading clients and the route fuzz in `serve_api`.

use super::service::{Relay, get, get_json, wait_until};
use super::temp_dir;
use boards::protocol::{DgtSquare, Orientation, PieceCode};
use emulator::board::{BoardIdentity, EmulatedBoard};
use emulator::line::{Line, VirtualClock};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Peak resident memory of a process, KiB (Linux).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A board's port carries megabytes of random bytes and of mutated DGT frames for 10 s: the
/// service stays up and answers, its memory stays bounded, the board stays known, and a move
/// made after the noise is recorded.
#[test]
fn garbage_on_a_port_harms_nothing() {
    let dir = temp_dir("serve-garbage");
    let link = dir.join("dgt-noisy");
    let line = Arc::new(
        Line::open(
            vec![EmulatedBoard::new(BoardIdentity::from_number(4242), None)],
            VirtualClock::new(1.0),
            Some(&link),
        )
        .expect("pty"),
    );
    let start = Instant::now();
    let db = format!("sqlite://{}/relay.db", dir.display());
    let port = link.display().to_string();
    let r = Relay::serve(&dir, &["--db", &db, "--port", &port, "--settle-ms", "100"]);
    wait_until(20, "the board to be known", || {
        get_json(&r.url("/api/eboards"))
            .as_array()
            .and_then(|b| b.first().cloned())
            .filter(|e| e["serial"] == "04242" && e["game_id"].is_i64())
    });
    // Noise: random bytes, and real frames with bytes flipped, as a bad cable makes them.
    let stop = Arc::new(AtomicBool::new(false));
    let noise = {
        let (line, stop) = (line.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            let mut next = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            let mut sent = 0usize;
            let frame = boards::protocol::Message::FieldUpdate {
                square: DgtSquare::new(12).expect("square"),
                piece: PieceCode::Empty,
            }
            .encode();
            while !stop.load(Ordering::Relaxed) {
                let mut chunk: Vec<u8> = (0..4096).map(|_| next() as u8).collect();
                for _ in 0..64 {
                    let mut f = frame.clone();
                    let i = (next() as usize) % f.len();
                    f[i] ^= 1 << (next() % 8);
                    chunk.extend_from_slice(&f);
                }
                sent += chunk.len();
                line.inject(&chunk);
                std::thread::sleep(Duration::from_millis(5));
            }
            sent
        })
    };
    let mut slowest = Duration::ZERO;
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        let t = Instant::now();
        assert_eq!(get(&r.url("/health")).status, 200, "{}", r.log_text());
        slowest = slowest.max(t.elapsed());
        std::thread::sleep(Duration::from_millis(200));
    }
    stop.store(true, Ordering::Relaxed);
    let sent = noise.join().expect("noise");
    let peak = peak_rss_kib(r.child.id()).unwrap_or(0);
    // The noise may have read as anything, moves included (an out-of-sync board): put the
    // start position back, then make a move.
    std::thread::sleep(Duration::from_secs(2));
    let t = line.clock().now_ms();
    line.act(0, |b| {
        (
            (),
            b.set_position(&shakmaty::Board::default(), Orientation::Normal, t),
        )
    });
    std::thread::sleep(Duration::from_secs(2));
    let t = line.clock().now_ms();
    line.act(0, |b| {
        let mut out = b.set_square(
            DgtSquare::from_square(shakmaty::Square::E2, Orientation::Normal),
            PieceCode::Empty,
            t,
        );
        out.extend(b.set_square(
            DgtSquare::from_square(shakmaty::Square::E4, Orientation::Normal),
            PieceCode::Piece(shakmaty::Piece {
                color: shakmaty::Color::White,
                role: shakmaty::Role::Pawn,
            }),
            t + 50,
        ));
        ((), out)
    });
    let last = wait_until(20, "e4 to be recorded after the noise", || {
        let e = get_json(&r.url("/api/eboards"))
            .as_array()
            .and_then(|b| b.first().cloned())?;
        let g = get_json(&r.url(&format!("/api/games/{}", e["game_id"].as_i64()?)));
        let last = g["moves"].as_array()?.last()?.clone();
        (last["uci"] == "e2e4").then_some(last)
    });
    let metrics = get(&r.url("/metrics")).text();
    let garbage = metrics
        .lines()
        .find_map(|l| l.strip_prefix("relay_board_garbage_total "))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    eprintln!(
        "garbage on a port: {:.1} MB in 10 s, {garbage} runs skipped, slowest /health {} ms, \
         peak RSS {} MiB, then {} recorded ({:.0} s in all)",
        sent as f64 / 1e6,
        slowest.as_millis(),
        peak / 1024,
        last["san"],
        start.elapsed().as_secs_f64()
    );
    assert!(
        garbage > 100,
        "the noise was not seen as garbage: {garbage}"
    );
    assert!(peak < 256 * 1024, "peak RSS {} MiB\n{metrics}", peak / 1024);
    assert!(slowest < Duration::from_secs(1), "/health took {slowest:?}");
}
