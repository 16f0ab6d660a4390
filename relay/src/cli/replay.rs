//! `relay replay FILE`: a recorded byte stream from one board, turned into PGN through exactly
//! the decoder and recorder the live service uses.
//!
//! Accepted input, told apart by content:
//! - the relay's raw log: lines `<ms> <hex bytes…>` (receive time in milliseconds);
//! - a capture with one base64-encoded message per line (as open drivers record them);
//! - raw bytes as they came off the port.
//!
//! The last two carry no times: messages are spaced `--interval-ms` apart.
//!
//! Or, with `--db URL --serial S`, the black box of a running or past service: every message
//! that e-board sent, with its receive time, as `relay serve` stored it.

use anyhow::{Context, Result, bail};
use boards::protocol::{Decoded, Decoder, LineMode};
use clap::Args;
use relay_core::pgn::{WriteOptions, write_games};
use relay_core::recorder::{Outcome, RecorderConfig};
use relay_core::replay::{Received, at_interval, parse_base64_lines, parse_raw_log, replay_with};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The recording (raw log, base64 lines, or raw bytes).
    #[arg(required_unless_present = "db")]
    file: Option<PathBuf>,
    /// Read the raw board log stored by `relay serve` in this database instead of a file.
    #[arg(long, requires = "serial", conflicts_with = "file")]
    db: Option<String>,
    /// With --db: the e-board whose messages to replay.
    #[arg(long)]
    serial: Option<String>,
    /// For recordings without times: milliseconds between two messages.
    #[arg(long, default_value_t = 200)]
    interval_ms: u64,
    /// How long the board must be still before it is read (ms).
    #[arg(long, default_value_t = 300)]
    settle_ms: u64,
    /// The recording is of a bus line (bus replies with checksums).
    #[arg(long)]
    bus: bool,
    /// Keep result proposals (kings in the centre, magic pieces, a fallen flag) as proposals
    /// instead of writing them as the result.
    #[arg(long)]
    no_confirm: bool,
    /// Also print what the recorder concluded at each step, as JSON lines on stderr.
    #[arg(long)]
    outcomes: bool,
    /// Reduced export format: the Seven Tag Roster and the moves only.
    #[arg(long)]
    reduced: bool,
}

/// Reads a recording in any of the accepted forms.
pub fn load(bytes: &[u8], interval_ms: u64, mode: LineMode) -> Result<Vec<Received>> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .collect();
        let looks_like_log = lines.first().is_some_and(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|t| t.bytes().all(|b| b.is_ascii_digit()))
                && l.split_whitespace().count() > 1
        });
        if looks_like_log {
            return Ok(parse_raw_log(text)?);
        }
        if let Some(messages) = parse_base64_lines(text) {
            return Ok(at_interval(messages, interval_ms));
        }
    }
    // Raw bytes: cut into messages with the decoder itself, so each gets its own time.
    let mut decoder = Decoder::new(mode);
    let frames: Vec<Vec<u8>> = decoder
        .feed(bytes)
        .into_iter()
        .filter(|(d, _)| !matches!(d, Decoded::Garbage { .. }))
        .map(|(_, raw)| raw)
        .collect();
    if frames.is_empty() {
        bail!("no DGT board messages found in the recording");
    }
    Ok(at_interval(frames, interval_ms))
}

/// Every stored message of one e-board, in receive order.
fn from_store(url: &str, serial: &str) -> Result<Vec<Received>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let store = relay_store::Store::open(url)
            .await
            .with_context(|| format!("database {url}"))?;
        let entries = store.raw_log_of(serial).await?;
        if entries.is_empty() {
            bail!("the database has no messages from e-board {serial}");
        }
        Ok(entries
            .into_iter()
            .map(|e| Received {
                at_ms: u64::try_from(e.received_at_ms).unwrap_or(0),
                bytes: e.bytes,
            })
            .collect())
    })
}

pub fn run(args: ReplayArgs) -> Result<()> {
    let mode = if args.bus {
        LineMode::Bus
    } else {
        LineMode::Single
    };
    let chunks = match (&args.db, &args.serial, &args.file) {
        (Some(url), Some(serial), _) => from_store(url, serial)?,
        (_, _, Some(file)) => {
            let bytes =
                std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
            load(&bytes, args.interval_ms, mode)?
        }
        _ => bail!("give a FILE, or --db URL with --serial S"),
    };
    let cfg = RecorderConfig {
        settle_ms: args.settle_ms,
        ..RecorderConfig::default()
    };
    let (games, outcomes) = replay_with(&chunks, mode, cfg, !args.no_confirm);
    if args.outcomes {
        for o in outcomes
            .iter()
            .filter(|o| !matches!(o, Outcome::Clock { .. }))
        {
            eprintln!("{}", serde_json::to_string(o)?);
        }
    }
    if games.is_empty() {
        bail!("the recording holds no game (no start position followed by a move)");
    }
    let opts = WriteOptions {
        reduced: args.reduced,
        ..WriteOptions::default()
    };
    print!("{}", write_games(&games, &opts));
    Ok(())
}
