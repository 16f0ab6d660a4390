//! Helpers shared by relay-core's integration tests: the real capture of a game on a DGT board
//! and its replay through the recorder.
//!
//! relay-store's story test compiles this file too (with `#[path]`), so it may use only
//! `boards`, `relay_core` and the standard library, which both crates' tests have.

// Each test binary that includes this module uses a different subset of it.
#![allow(dead_code)]

use boards::protocol::LineMode;
use relay_core::game::Game;
use relay_core::recorder::{Outcome, RecorderConfig};
use relay_core::replay::{at_interval, parse_base64_lines, replay};

/// The capture of a real game, one base64 line per message as the board sent it.
pub const JOHAN_CAPTURE: &str = "dgt-captures/johan.inbytes";

/// The text of the shared data file `relative`, or `None` when the shared data is missing
/// (see `boards::testdata::shared_data`).
pub fn shared_text(relative: &str) -> Option<String> {
    let p = boards::testdata::shared_data(relative)?;
    Some(std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// The messages of the real capture, or `None` when the shared data is missing.
pub fn johan_messages() -> Option<Vec<Vec<u8>>> {
    let text = shared_text(JOHAN_CAPTURE)?;
    Some(parse_base64_lines(&text).expect("the capture is base64 lines"))
}

/// Replays captured messages through a recorder with the default settings.
///
/// The capture has no receive times; the board sends about one message every 100 ms or less
/// while a clock runs, so they are spaced 100 ms apart (the recorder settles after 300 ms).
pub fn replay_messages(messages: Vec<Vec<u8>>) -> (Vec<Game>, Vec<Outcome>) {
    replay(
        &at_interval(messages, 100),
        LineMode::Single,
        RecorderConfig::default(),
    )
}
