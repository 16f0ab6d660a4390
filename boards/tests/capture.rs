//! The real capture `johan.inbytes` (a DGT board with a clock, one game with a Fischer clock
//! starting at 5:05 a side; one base64-encoded board → host message per line) run through our decoder and compared, line by line, with
//! `johan.json`, the output of an independent decoder for the same bytes.
//!
//! Every one of the 956 lines must decode to exactly one message, with no garbage, and every
//! decoded message must say what the other decoder says. The two decoders name things
//! differently; the comparison translates our values into their vocabulary and nothing else.
//! These are the deliberate differences, all of them naming or representation only:
//!
//! * Clock sides: their `right_clock` is our `ClockReading::right` (bytes p0..p2) and their
//!   `left_clock` is our `ClockReading::left` (p3..p5). Same assignment, different words
//!   (dgt-protocol.md §7.2: p0..p2 is the right display).
//! * Clock times: they give `hours`, `minutes`, `seconds` per side; we keep one total in
//!   `SideTime::seconds`. The test splits our total into h/m/s.
//! * Side flags: their `final_flag` (bit 4) is our `flag_fallen`, their `flag` (bit 6) our
//!   `flag_shown`; `time_per_move` (bit 5) has the same name in both.
//! * Status byte: `clock_running` = `running` (bit 0), `right_high` = `lever_right_high`
//!   (bit 1), `battery_indicator` = `battery_low` (bit 2), `left_turn` = `turn_left` (bit 3),
//!   `right_turn` = `turn_right` (bit 4), `no_clock` = `no_clock` (bit 5).
//! * Field updates: their `field` is the square's name in the board's normal orientation, which
//!   is our `DgtSquare`'s `Display`; their `piece` is `.` for empty, otherwise the FEN letter,
//!   which is our `PieceCode::to_char`.
//! * Board dump: their `board` lists the 64 squares in the board's index order (a8 first), one
//!   character each as for `piece`; we hold a `Placement` in the same order.
//!
//! No difference in meaning was found: all 956 messages agree, including the one reading with
//! a fallen flag (p0 = 0x30) and all four status bytes that occur (0x08, 0x09, 0x12, 0x13).
//! What the capture cannot check, because it never occurs
//! in it: hours above 0, the bit-6 "flag shown", the no-clock bit, battery low, clock acks,
//! magic pieces, and message ids other than 0x86 (dump), 0x8D (clock) and 0x8E (field update).
//!
//! The whole capture is also fed as one stream — at once, byte by byte and in random chunk
//! sizes — and must give the same items each time; and the board it describes must pass through
//! every position of the game in `johan.pgn`.
//!
//! Shared data: the capture lives outside the repository (`../shared/data`). When it is missing
//! the tests print a notice and pass, unless `RELAY_REQUIRE_SHARED_DATA=1` is set, in which case
//! they fail.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use boards::protocol::{
    ClockMessage, ClockReading, Decoded, Decoder, LineMode, Message, Orientation, PieceCode,
    Placement, SideTime, Step,
};
use boards::rng::SplitMix64;
use serde_json::{Value, json};
use shakmaty::san::San;
use shakmaty::{Chess, Position, Square};
use std::path::PathBuf;

const CAPTURE: &str = "dgt-captures/johan.inbytes";
const REFERENCE: &str = "dgt-captures/johan.json";
const PGN: &str = "dgt-captures/johan.pgn";
const EXPECTED_MESSAGES: usize = 956;

/// The path of a file under the shared data directory, or `None` (after a notice) when the
/// directory is not there. With `RELAY_REQUIRE_SHARED_DATA=1` a missing file is a failure.
fn shared_data(relative: &str) -> Option<PathBuf> {
    boards::testdata::shared_data(relative)
}

fn read_lines(path: &PathBuf) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect()
}

/// The capture as one frame per line.
fn capture_frames() -> Option<Vec<Vec<u8>>> {
    let path = shared_data(CAPTURE)?;
    Some(
        read_lines(&path)
            .iter()
            .enumerate()
            .map(|(n, l)| {
                STANDARD
                    .decode(l)
                    .unwrap_or_else(|e| panic!("line {}: bad base64: {e}", n + 1))
            })
            .collect(),
    )
}

/// Everything a decoder produces for `bytes` fed at once.
fn decode_all(bytes: &[u8]) -> (Vec<(Decoded, Vec<u8>)>, usize) {
    let mut decoder = Decoder::new(LineMode::Single);
    let out = decoder.feed(bytes);
    (out, decoder.pending())
}

/// Our side time in their shape.
fn side_json(t: &SideTime) -> Value {
    json!({
        "hours": t.seconds / 3600,
        "minutes": t.seconds / 60 % 60,
        "seconds": t.seconds % 60,
        "final_flag": t.flag_fallen,
        "flag": t.flag_shown,
        "time_per_move": t.time_per_move,
    })
}

fn reading_json(r: &ClockReading) -> Value {
    json!({
        "left_clock": side_json(&r.left),
        "right_clock": side_json(&r.right),
        "clock_running": r.status.running,
        "right_high": r.status.lever_right_high,
        "battery_indicator": r.status.battery_low,
        "left_turn": r.status.turn_left,
        "right_turn": r.status.turn_right,
        "no_clock": r.status.no_clock,
    })
}

fn piece_json(p: PieceCode) -> Value {
    Value::String(p.to_char().to_string())
}

fn board_json(p: &Placement) -> Value {
    Value::Array(p.0.iter().map(|c| piece_json(*c)).collect())
}

/// Our message in the reference decoder's vocabulary (see the module comment), or `None` for a
/// message it has no counterpart for.
fn to_reference(message: &Message) -> Option<Value> {
    match message {
        Message::BoardDump { placement } => Some(json!({ "board": board_json(placement) })),
        Message::FieldUpdate { square, piece } => Some(json!({
            "field": square.to_string(),
            "piece": piece_json(*piece),
        })),
        Message::Clock {
            clock: ClockMessage::Time(reading),
        } => Some(reading_json(reading)),
        _ => None,
    }
}

/// Their line, with `board` brought to one form (they may write it as a list of one-character
/// strings or as a single 64-character string).
fn normalise_reference(mut v: Value) -> Value {
    if let Some(Value::String(s)) = v.get("board") {
        let squares: Vec<Value> = s.chars().map(|c| Value::String(c.to_string())).collect();
        v["board"] = Value::Array(squares);
    }
    v
}

#[test]
fn every_captured_message_matches_the_reference_decoder() {
    let Some(frames) = capture_frames() else {
        return;
    };
    let Some(reference_path) = shared_data(REFERENCE) else {
        return;
    };
    let reference = read_lines(&reference_path);
    assert_eq!(frames.len(), EXPECTED_MESSAGES, "lines in the capture");
    assert_eq!(
        reference.len(),
        frames.len(),
        "reference and capture differ in line count"
    );

    let mut mismatches = Vec::new();
    let mut kinds = [0usize; 3]; // dumps, field updates, clock times
    for (n, (frame, line)) in frames.iter().zip(&reference).enumerate() {
        let line_no = n + 1;
        let (items, pending) = decode_all(frame);
        assert_eq!(pending, 0, "line {line_no}: bytes left over: {frame:02X?}");
        let [(Decoded::Message { message }, raw)] = items.as_slice() else {
            panic!("line {line_no}: expected exactly one message, got {items:?}");
        };
        assert_eq!(raw, frame, "line {line_no}: raw bytes");
        match message {
            Message::BoardDump { .. } => kinds[0] += 1,
            Message::FieldUpdate { .. } => kinds[1] += 1,
            Message::Clock {
                clock: ClockMessage::Time(_),
            } => kinds[2] += 1,
            _ => {}
        }
        let theirs: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("line {line_no}: reference is not JSON: {e}"));
        let theirs = normalise_reference(theirs);
        let ours = to_reference(message);
        if ours.as_ref() != Some(&theirs) {
            mismatches.push(format!(
                "line {line_no}: bytes {frame:02X?}\n  ours:   {}\n  theirs: {theirs}",
                ours.map_or_else(|| format!("{message:?}"), |v| v.to_string())
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} messages differ:\n{}",
        mismatches.len(),
        frames.len(),
        mismatches.join("\n")
    );
    // The capture holds one dump, 101 field updates and 854 clock readings.
    assert_eq!(kinds, [1, 101, 854], "dumps, field updates, clock times");
}

/// Replays the capture's board: the dump is the normal start position, and as the field updates
/// are applied, the board passes through the position after every move of `johan.pgn`, in order.
/// After the last move the players removed a pawn and put the kings on d5 and e4: the "kings on
/// the light centre squares = 1-0" gesture (dgt-protocol.md §12.3), which is the game's result.
#[test]
fn capture_replays_the_recorded_game() {
    let Some(frames) = capture_frames() else {
        return;
    };
    let Some(pgn_path) = shared_data(PGN) else {
        return;
    };

    // The board after every half-move of the game, as FEN placements.
    let pgn = std::fs::read_to_string(&pgn_path).expect("reading the PGN");
    assert!(pgn.contains("1-0"), "the recorded result is 1-0");
    let mut pos = Chess::default();
    let mut wanted = vec![pos.board().board_fen().to_string()];
    for token in pgn.split_whitespace() {
        if token.ends_with('.') || ["1-0", "0-1", "1/2-1/2", "*"].contains(&token) {
            continue;
        }
        let san: San = token
            .parse()
            .unwrap_or_else(|e| panic!("bad SAN {token}: {e}"));
        let m = san
            .to_move(&pos)
            .unwrap_or_else(|e| panic!("illegal {token}: {e}"));
        pos = pos.play(m).expect("legal move");
        wanted.push(pos.board().board_fen().to_string());
    }
    assert_eq!(wanted.len(), 44, "start + 43 half-moves");

    let (items, _) = decode_all(&frames.concat());
    let mut placement: Option<Placement> = None;
    let mut next = 0; // index into `wanted` of the next position to see
    for (item, _) in &items {
        match item {
            Decoded::Message {
                message: Message::BoardDump { placement: p },
            } => {
                assert!(placement.is_none(), "more than one dump");
                placement = Some(*p);
            }
            Decoded::Message {
                message: Message::FieldUpdate { square, piece },
            } => placement
                .as_mut()
                .expect("a field update before the dump")
                .set(*square, *piece),
            _ => continue,
        }
        let fen = placement
            .as_ref()
            .map(|p| p.board_fen(Orientation::Normal))
            .unwrap_or_default();
        if next < wanted.len() && fen == wanted[next] {
            next += 1;
        }
    }
    assert_eq!(
        next,
        wanted.len(),
        "the board never showed the position after half-move {next}: {}",
        wanted.get(next).map_or("", String::as_str)
    );

    let board = placement
        .expect("no dump in the capture")
        .to_board(Orientation::Normal);
    let mut kings: Vec<Square> = board.kings().into_iter().collect();
    kings.sort();
    let mut gesture = vec![Square::D5, Square::E4];
    gesture.sort();
    assert_eq!(kings, gesture, "kings after the game (1-0 gesture)");
}

/// Feeds `bytes` in pieces of the given sizes (cycled), stepping with `next_step`.
fn decode_in_chunks(bytes: &[u8], mut size: impl FnMut() -> usize) -> Vec<(Decoded, Vec<u8>)> {
    let mut decoder = Decoder::new(LineMode::Single);
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = size().clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        decoder.push(chunk);
        while let Step::Ready { item, raw } = decoder.next_step() {
            out.push((item, raw));
        }
    }
    assert_eq!(decoder.pending(), 0, "bytes left over at the end");
    out
}

#[test]
fn capture_as_one_stream_in_any_chunking() {
    let Some(frames) = capture_frames() else {
        return;
    };
    let stream: Vec<u8> = frames.concat();
    let (whole, pending) = decode_all(&stream);
    assert_eq!(pending, 0);
    assert_eq!(whole.len(), EXPECTED_MESSAGES);
    for (n, ((item, raw), frame)) in whole.iter().zip(&frames).enumerate() {
        assert!(
            matches!(item, Decoded::Message { .. }),
            "item {} is not a message: {item:?}",
            n + 1
        );
        assert_eq!(raw, frame, "item {}: raw bytes", n + 1);
    }

    let byte_by_byte = decode_in_chunks(&stream, || 1);
    assert_eq!(byte_by_byte, whole, "byte by byte");

    for seed in 1..=20u64 {
        let mut rng = SplitMix64(seed);
        let max = [2, 7, 16, 64, 300, 4096][seed as usize % 6];
        let chunked = decode_in_chunks(&stream, || 1 + rng.below(max as u64) as usize);
        assert_eq!(
            chunked, whole,
            "random chunks up to {max} bytes (seed {seed})"
        );
    }
}
