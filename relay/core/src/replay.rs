//! Replaying a recorded byte stream through the decoder and the recorder: exactly the code the
//! live service runs, with the receive times taken from the log (or a fixed interval).

use crate::game::Game;
use crate::recorder::{Outcome, Recorder, RecorderConfig};
use boards::protocol::{Decoded, Decoder, LineMode};

/// One chunk of received bytes and when it arrived (ms on any monotonic scale).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    pub at_ms: u64,
    pub bytes: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    #[error("line {line}: {reason}")]
    Line { line: usize, reason: String },
}

fn hex_bytes(s: &str) -> Option<Vec<u8>> {
    s.split_whitespace()
        .map(|h| u8::from_str_radix(h, 16).ok())
        .collect()
}

/// Parses the relay's raw log: one line per received chunk, `<ms> <hex bytes…>` (e.g.
/// `1200 8e 00 05 34 00`). Blank lines and `#` comments are skipped.
pub fn parse_raw_log(text: &str) -> Result<Vec<Received>, LogError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |reason: &str| LogError::Line { line: i + 1, reason: reason.to_string() };
        let (t, rest) = line.split_once(char::is_whitespace).ok_or_else(|| bad("expected `<ms> <hex bytes>`"))?;
        let at_ms = t.parse::<u64>().map_err(|_| bad("time is not a whole number of milliseconds"))?;
        let bytes = hex_bytes(rest).ok_or_else(|| bad("bytes must be two-digit hex numbers"))?;
        out.push(Received { at_ms, bytes });
    }
    Ok(out)
}

/// Writes chunks in the raw log format [`parse_raw_log`] reads.
pub fn format_raw_log(chunks: &[Received]) -> String {
    let mut s = String::new();
    for c in chunks {
        s.push_str(&c.at_ms.to_string());
        for b in &c.bytes {
            s.push_str(&format!(" {b:02x}"));
        }
        s.push('\n');
    }
    s
}

/// Spreads bare messages over time at a fixed interval (for captures without receive times).
pub fn at_interval(messages: Vec<Vec<u8>>, interval_ms: u64) -> Vec<Received> {
    messages
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| Received { at_ms: i as u64 * interval_ms, bytes })
        .collect()
}

/// Runs the chunks through a decoder and a recorder. Returns every game the board played
/// (a new game starts when the start position is set up after a finished one) and all outcomes.
pub fn replay(chunks: &[Received], mode: LineMode, cfg: RecorderConfig) -> (Vec<Game>, Vec<Outcome>) {
    let mut decoder = Decoder::new(mode);
    let mut recorder = Recorder::new(cfg);
    let mut games = Vec::new();
    let mut outcomes = Vec::new();
    for c in chunks {
        for (item, _) in decoder.feed(&c.bytes) {
            if let Decoded::Message { message } = item {
                // Keep the game that is about to be replaced by a new one.
                let before = recorder.game().cloned();
                let outs = recorder.on_message(&message, c.at_ms);
                if outs.iter().any(|o| matches!(o, Outcome::NewGame { .. }))
                    && let Some(g) = before
                    && !g.moves.is_empty()
                {
                    games.push(g);
                }
                outcomes.extend(outs);
            }
        }
    }
    outcomes.extend(recorder.flush());
    if let Some(g) = recorder.game()
        && !g.moves.is_empty()
    {
        games.push(g.clone());
    }
    (games, outcomes)
}
