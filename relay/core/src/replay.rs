//! Replaying a recorded byte stream through the decoder and the recorder: exactly the code the
//! live service runs, with the receive times taken from the log (or a fixed interval).

use crate::game::{Game, GameResult};
use crate::recorder::{Outcome, Recorder, RecorderConfig, apply_proposal};
use boards::protocol::{Decoded, Decoder, LineMode};

/// One chunk of received bytes and when it arrived (ms on any monotonic scale).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    pub at_ms: u64,
    pub bytes: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_raw_log() {
        assert_eq!(
            base64_line("jgAFNAA="),
            Some(vec![0x8E, 0x00, 0x05, 0x34, 0x00])
        );
        assert_eq!(base64_line("not base64!"), None);
        let chunks = vec![Received {
            at_ms: 1200,
            bytes: vec![0x8E, 0x00, 0x05, 0x34, 0x00],
        }];
        let text = format_raw_log(&chunks);
        assert_eq!(text, "1200 8e 00 05 34 00\n");
        assert_eq!(parse_raw_log(&text), Ok(chunks));
        assert!(matches!(
            parse_raw_log("12x 8e"),
            Err(LogError::Line { line: 1, .. })
        ));
        assert!(matches!(
            parse_raw_log("12 zz"),
            Err(LogError::Line { line: 1, .. })
        ));
    }
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
        let bad = |reason: &str| LogError::Line {
            line: i + 1,
            reason: reason.to_string(),
        };
        let (t, rest) = line
            .split_once(char::is_whitespace)
            .ok_or_else(|| bad("expected `<ms> <hex bytes>`"))?;
        let at_ms = t
            .parse::<u64>()
            .map_err(|_| bad("time is not a whole number of milliseconds"))?;
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

/// Decodes one line of standard base64 (padding optional); `None` if it is not base64.
pub fn base64_line(line: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let body = line.trim().trim_end_matches('=');
    let vals: Vec<u8> = body.bytes().map(value).collect::<Option<_>>()?;
    if vals.is_empty() || vals.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(vals.len() * 3 / 4);
    for chunk in vals.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, v)| n | u32::from(*v) << (18 - 6 * i));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

/// A capture with one base64-encoded message per line (how open drivers record boards).
pub fn parse_base64_lines(text: &str) -> Option<Vec<Vec<u8>>> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return None;
    }
    lines.into_iter().map(base64_line).collect()
}

/// Spreads bare messages over time at a fixed interval (for captures without receive times).
pub fn at_interval(messages: Vec<Vec<u8>>, interval_ms: u64) -> Vec<Received> {
    messages
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| Received {
            at_ms: i as u64 * interval_ms,
            bytes,
        })
        .collect()
}

/// Runs the chunks through a decoder and a recorder. Returns every game the board played
/// (a new game starts when the start position is set up after a finished one) and all outcomes.
/// Result proposals stay proposals (the game's result is what the board alone decided).
pub fn replay(
    chunks: &[Received],
    mode: LineMode,
    cfg: RecorderConfig,
) -> (Vec<Game>, Vec<Outcome>) {
    replay_with(chunks, mode, cfg, false)
}

/// [`replay`], optionally taking every result proposal as confirmed (there is no arbiter in a
/// replay of a log; the proposal is what the board said). A proposal ends nothing by itself:
/// the moves the board shows after it (play went on after a flag fell) are recorded, and the
/// game's last proposal becomes its result when the next game is set up or the input ends.
pub fn replay_with(
    chunks: &[Received],
    mode: LineMode,
    cfg: RecorderConfig,
    confirm_proposals: bool,
) -> (Vec<Game>, Vec<Outcome>) {
    let mut decoder = Decoder::new(mode);
    let mut recorder = Recorder::new(cfg);
    let mut games = Vec::new();
    let mut outcomes = Vec::new();
    for c in chunks {
        for (item, _) in decoder.feed(&c.bytes) {
            if let Decoded::Message { message } = item {
                let outs = recorder.on_message(&message, c.at_ms);
                if let Some(mut g) = recorder.take_replaced_game() {
                    if let Some((result, reason)) = recorder.take_replaced_proposal()
                        && confirm_proposals
                        && g.result == GameResult::Ongoing
                    {
                        apply_proposal(&mut g, result, reason);
                    }
                    games.push(g);
                }
                outcomes.extend(outs);
            }
        }
    }
    outcomes.extend(recorder.flush());
    if confirm_proposals {
        recorder.confirm_proposal();
    }
    if let Some(g) = recorder.game()
        && !g.moves.is_empty()
    {
        games.push(g.clone());
    }
    (games, outcomes)
}
