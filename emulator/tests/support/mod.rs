//! Helpers shared by the emulator's integration tests and its recorder benchmark
//! (`benches/recorder.rs` includes this file with `#[path]`).

// Each test binary (and the benchmark) that includes this module uses a different subset of it.
#![allow(dead_code)]

use boards::protocol::Command;
use emulator::board::{BoardIdentity, EmulatedBoard};
use emulator::play::{Table, simulate};
use emulator::player::{GameScore, Script};
use relay_core::game::Game;
use relay_core::replay::Received;
use shakmaty::Position;

/// What a host sends a single board at start-up: reset, serial number and version, changes
/// reported as they happen, the board and the clock now.
pub fn single_startup() -> Vec<u8> {
    [
        Command::Reset,
        Command::ReturnSerialNumber,
        Command::SendVersion,
        Command::SendUpdateNice,
        Command::SendBoard,
        Command::SendClock,
    ]
    .iter()
    .flat_map(Command::encode)
    .collect()
}

/// Plays the script `s` of `game` on a fresh emulated board with serial number `serial`, sans
/// I/O: the host sends `startup` first and lets virtual time pass every `tick_ms`. Returns what
/// the board sent, with virtual receive times.
pub fn play_sans_io(
    game: &GameScore,
    s: &Script,
    table: Table,
    serial: u16,
    startup: &[u8],
    tick_ms: u64,
) -> Vec<Received> {
    let mut board = EmulatedBoard::new(BoardIdentity::from_number(serial), table.clock_for(s));
    simulate(&mut board, startup, game.start.board(), s, table, tick_ms)
        .into_iter()
        .map(|(at_ms, bytes)| Received { at_ms, bytes })
        .collect()
}

/// Checks that the recorder's game `got` has the moves of the played `game`, and the clock of
/// every move whose lever press the hands really made (`honoured`, one per move) to the second
/// (the clock shows whole seconds). Returns (moves, clocks checked).
pub fn assert_same_moves_and_clocks(
    game: &GameScore,
    got: &Game,
    honoured: impl IntoIterator<Item = bool>,
    label: &str,
) -> (usize, usize) {
    let want: Vec<&str> = game.moves.iter().map(|m| m.san.as_str()).collect();
    let have: Vec<String> = got.moves.iter().map(|m| m.san.to_string()).collect();
    assert_eq!(have, want, "{label}: moves");
    let mut clocks = 0;
    for (i, (m, ok)) in game.moves.iter().zip(honoured).enumerate() {
        if let (Some(clk), true) = (m.clk_ms, ok) {
            assert_eq!(
                got.moves[i].clk.map(|c| c.millis()),
                Some(clk / 1000 * 1000),
                "{label}: clock after ply {} ({})",
                i + 1,
                m.san
            );
            clocks += 1;
        }
    }
    (want.len(), clocks)
}
