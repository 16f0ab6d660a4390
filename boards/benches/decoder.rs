//! Throughput of the board → host decoder, with std only (`harness = false`).
//!
//! The input is the real capture `johan.inbytes` from the shared data directory when it is there
//! (a game with board and clock: mostly 10-byte clock messages, some field updates, one dump),
//! otherwise a synthetic stream of the same kind. Each variant decodes its stream over and over
//! for about two seconds (`DECODER_BENCH_SECS` changes that) and prints bytes/s, messages/s and
//! how many times faster that is than the 960 bytes/s a 9600-baud 8N1 line can deliver.
//!
//! `DECODER_BENCH_SYNTHETIC=1` uses the synthetic stream even when the capture is there.
//!
//! Run with `cargo bench -p boards --bench decoder`. Without `--bench` on the command line (as
//! under `cargo test --benches`) every variant runs once, as a smoke test.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use boards::protocol::{
    ClockMessage, ClockReading, ClockStatus, Decoded, Decoder, DgtSquare, LineMode, Message,
    Orientation, PieceCode, Placement, SideTime, Step,
};
use boards::rng::SplitMix64;
use shakmaty::Board;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// 9600 baud, 10 bits per byte on the line (start, 8 data, stop).
const LINE_BYTES_PER_SEC: f64 = 960.0;

/// Bytes handed to the decoder per `push`, like a serial read loop.
const READ_SIZE: usize = 32;

/// The capture as a list of frames, if the shared data is there.
fn capture() -> Option<Vec<Vec<u8>>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/dgt-captures/johan.inbytes");
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| STANDARD.decode(l).ok())
        .collect()
}

/// About a thousand messages of a game: a dump, then a clock reading every second and now and
/// then a move (two field updates), as a board in UPDATE_NICE mode sends them.
fn synthetic() -> Vec<Vec<u8>> {
    let mut rng = SplitMix64(0x5EED_DA7A);
    let mut frames = vec![
        Message::BoardDump {
            placement: Placement::from_board(&Board::default(), Orientation::Normal),
        }
        .encode(),
    ];
    let side = |seconds| SideTime {
        seconds,
        time_per_move: true,
        ..SideTime::default()
    };
    let (mut left, mut right) = (300u32, 300u32);
    let mut left_runs = true;
    for _ in 0..850 {
        if left_runs {
            left = left.saturating_sub(1);
        } else {
            right = right.saturating_sub(1);
        }
        let status = ClockStatus {
            running: true,
            lever_right_high: !left_runs,
            turn_left: left_runs,
            turn_right: !left_runs,
            ..ClockStatus::default()
        };
        frames.push(
            Message::Clock {
                clock: ClockMessage::Time(ClockReading {
                    left: side(left),
                    right: side(right),
                    status,
                }),
            }
            .encode(),
        );
        if rng.below(8) == 0 {
            for piece in [0, 1 + rng.below(12) as u8] {
                let square = DgtSquare::new(rng.below(64) as u8).expect("below 64");
                frames.push(
                    Message::FieldUpdate {
                        square,
                        piece: PieceCode::from_byte(piece),
                    }
                    .encode(),
                );
            }
            left_runs = !left_runs;
        }
    }
    frames
}

/// The frames with random bytes scattered between them, `share` of the result being noise.
fn with_garbage(frames: &[Vec<u8>], share: f64) -> Vec<u8> {
    let clean: usize = frames.iter().map(Vec::len).sum();
    let noise_total = (clean as f64 * share / (1.0 - share)).round() as usize;
    let mut rng = SplitMix64(0x0B5E_55ED);
    let mut gaps = vec![0usize; frames.len()];
    for _ in 0..noise_total {
        gaps[rng.below(frames.len() as u64) as usize] += 1;
    }
    let mut out = Vec::with_capacity(clean + noise_total);
    for (f, gap) in frames.iter().zip(gaps) {
        out.extend((0..gap).map(|_| rng.next_u64() as u8));
        out.extend_from_slice(f);
    }
    out
}

/// Decodes `bytes` once, in reads of `read` bytes; returns (messages, all items).
fn decode_once(bytes: &[u8], read: usize) -> (usize, usize) {
    let mut decoder = Decoder::new(LineMode::Single);
    let (mut messages, mut items) = (0, 0);
    for chunk in bytes.chunks(read) {
        decoder.push(chunk);
        while let Step::Ready { item, raw } = decoder.next_step() {
            items += 1;
            if matches!(item, Decoded::Message { .. }) {
                messages += 1;
            }
            black_box(raw);
        }
    }
    (messages, items)
}

fn run(name: &str, bytes: &[u8], read: usize, budget: Duration) {
    let (per_pass, items_per_pass) = decode_once(bytes, read);
    let started = Instant::now();
    let mut passes = 0u64;
    loop {
        let (m, _) = decode_once(black_box(bytes), read);
        black_box(m);
        passes += 1;
        if started.elapsed() >= budget {
            break;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let bytes_per_sec = (bytes.len() as u64 * passes) as f64 / secs;
    let msgs_per_sec = (per_pass as u64 * passes) as f64 / secs;
    println!(
        "decoder ({name}): {:.1} MB/s, {:.2} M msgs/s = {:.0}x the 960 B/s of a 9600-baud line \
         [{} bytes, {per_pass} messages, {items_per_pass} items per pass; {passes} passes in {secs:.2} s]",
        bytes_per_sec / 1e6,
        msgs_per_sec / 1e6,
        bytes_per_sec / LINE_BYTES_PER_SEC,
        bytes.len(),
    );
}

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let budget = if benching {
        let secs = std::env::var("DECODER_BENCH_SECS")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or(2.0);
        Duration::from_secs_f64(secs)
    } else {
        Duration::ZERO
    };

    let forced = std::env::var("DECODER_BENCH_SYNTHETIC").as_deref() == Ok("1");
    let (source, frames) = match capture().filter(|_| !forced) {
        Some(frames) => ("capture", frames),
        None => {
            println!("decoder: using a synthetic stream (shared capture not found or not wanted)");
            ("synthetic", synthetic())
        }
    };
    let clean = frames.concat();
    let noisy = with_garbage(&frames, 0.10);
    let noise_share = 1.0 - clean.len() as f64 / noisy.len() as f64;
    // Sanity: every frame of the stream decodes, and the noise hides none of them.
    assert_eq!(decode_once(&clean, READ_SIZE), (frames.len(), frames.len()));
    assert!(decode_once(&noisy, READ_SIZE).0 >= frames.len());

    run(
        &format!("{source}, {READ_SIZE}-byte reads"),
        &clean,
        READ_SIZE,
        budget,
    );
    run(&format!("{source}, byte by byte"), &clean, 1, budget);
    run(
        &format!(
            "{source} + {:.0}% garbage, {READ_SIZE}-byte reads",
            noise_share * 100.0
        ),
        &noisy,
        READ_SIZE,
        budget,
    );
}
