//! One e-board's desk: its recorder, what was sent of its game, and its view as the operator
//! sees it; every e-board's desk ([`Desks`]) and which desk a serial on a port is
//! ([`IdMap`]); and the recorder's game as the writer should store it ([`snapshot`]).

use crate::serve::jobs::{Snapshot, orientation_name};
use crate::serve::views::{ClockView, EboardView};
use relay_core::game::{Game, GameResult};
use relay_core::recorder::{Recorder, RecorderConfig};
use relay_store::{StoredMove, now_ms};
use shakmaty::fen::Fen;
use shakmaty::{EnPassantMode, Position};
use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

/// One e-board and its recorder.
pub(super) struct Desk {
    pub(super) recorder: Recorder,
    pub(super) port: String,
    /// Counts the games the recorder started; the writer puts a new one in a new game.
    pub(super) game_no: u64,
    /// The moves as last sent to the writer (SAN, UCI, FEN, clocks, when accepted).
    pub(super) sent: Vec<StoredMove>,
    pub(super) sent_result: GameResult,
    pub(super) view: EboardView,
    /// The view as last announced, to announce only changes.
    pub(super) announced: Option<EboardView>,
    /// When the last board (not clock) message arrived.
    pub(super) board_read_ms: i64,
    /// Since when the recorder has found the board out of sync (a piece held in the hand
    /// looks the same for a moment; only a lasting one is reported).
    pub(super) out_since: Option<i64>,
    /// A clock reading held while a board change waits to be judged (at most the settle
    /// time): the lever press usually ends the move being judged, and then rides on its
    /// message (one frame per move, not two).
    pub(super) press: Option<ClockView>,
    /// Illegal moves and clock corrections seen and not yet sent to be stored.
    pub(super) incidents: Vec<relay_store::Incident>,
}

/// Every e-board's desk, by e-board id. Reached only through these methods.
#[derive(Default)]
pub(super) struct Desks(HashMap<String, Desk>);

impl Desks {
    pub(super) fn get(&self, id: &str) -> Option<&Desk> {
        self.0.get(id)
    }

    pub(super) fn get_mut(&mut self, id: &str) -> Option<&mut Desk> {
        self.0.get_mut(id)
    }

    pub(super) fn contains(&self, id: &str) -> bool {
        self.0.contains_key(id)
    }

    /// The desk of `id`, made by `make` when there is none.
    pub(super) fn open(&mut self, id: &str, make: impl FnOnce() -> Desk) -> &mut Desk {
        self.0.entry(id.to_string()).or_insert_with(make)
    }

    /// Every e-board id with a desk.
    pub(super) fn ids(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }

    /// The ids of the desks read on `port`.
    pub(super) fn on_port(&self, port: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(_, d)| d.port == port)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Closes the desks read on `port`.
    pub(super) fn close_port(&mut self, port: &str) {
        self.0.retain(|_, d| d.port != port);
    }
}

/// Which desk (e-board id) a serial number reported on a port belongs to, by port then
/// serial: the serial itself, or `serial@port` when another connected board already reports
/// it. (Looked up for every message, so without building a key.)
#[derive(Debug, Default)]
pub(super) struct IdMap(HashMap<String, HashMap<String, String>>);

impl IdMap {
    pub(super) fn get(&self, port: &str, serial: &str) -> Option<&String> {
        self.0.get(port).and_then(|m| m.get(serial))
    }

    pub(super) fn set(&mut self, port: &str, serial: &str, id: &str) {
        self.0
            .entry(port.to_string())
            .or_default()
            .insert(serial.to_string(), id.to_string());
    }

    /// Forgets the ids of `port` (another relay may have read it since).
    pub(super) fn forget_port(&mut self, port: &str) {
        self.0.remove(port);
    }
}

/// How many plies the recorder's game has.
pub(super) fn plies(r: &Recorder) -> u32 {
    r.game().map_or(0, |g| g.moves.len() as u32)
}

pub(super) fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Desk {
    /// The recorder carries on from `moves` (and `result`, else the game's own), as the
    /// store has them now: what was sent to be stored is those moves.
    pub(super) fn carry_on_from(
        &mut self,
        cfg: RecorderConfig,
        moves: &[StoredMove],
        result: Option<GameResult>,
    ) {
        let Some(game) = self.recorder.game().cloned() else {
            return;
        };
        let orientation = self.recorder.orientation().unwrap_or_default();
        let mut g = rebuild(&game, moves).unwrap_or(game);
        if let Some(r) = result {
            g.result = r;
        }
        self.recorder = Recorder::resume(cfg, g, orientation);
        self.sent = moves.to_vec();
        self.sent_result = self
            .recorder
            .game()
            .map_or(GameResult::Ongoing, |g| g.result);
    }
}

/// The recorder's game with its moves replaced by `moves` (checked legal one by one).
fn rebuild(game: &Game, moves: &[StoredMove]) -> Option<Game> {
    let mut g = game.clone();
    g.moves.clear();
    let (played, damaged) =
        relay_core::game::play_uci(&g.start, moves.iter().map(|m| m.uci.as_str()));
    if damaged.is_some() {
        return None;
    }
    for (mv, m) in played.into_iter().zip(moves) {
        g.push(
            mv,
            m.clk_ms.map(relay_core::clock_time::ClockTime),
            m.emt_ms.map(relay_core::clock_time::ClockTime),
        );
    }
    Some(g)
}

/// The recorder's game as the writer should store it, reusing what was already sent.
pub(super) fn snapshot(serial: &str, d: &mut Desk) -> Option<Snapshot> {
    let game = d.recorder.game()?;
    let mode = game.castling_mode;
    // The first move that differs from what was sent (or lost its clock).
    let same = game
        .moves
        .iter()
        .zip(&d.sent)
        .take_while(|(m, s)| m.uci(mode).to_string() == s.uci)
        .count();
    d.sent.truncate(same);
    let mut pos = game.position_at(same);
    let now = now_ms();
    for (i, m) in game.moves.iter().enumerate().skip(same) {
        pos.play_unchecked(m.mv);
        d.sent.push(StoredMove {
            ply: (i + 1) as u32,
            san: m.san.to_string(),
            uci: m.uci(mode).to_string(),
            clk_ms: m.clk.map(|c| c.millis()),
            emt_ms: m.emt.map(|c| c.millis()),
            accepted_at_ms: now,
            fen_after: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
        });
    }
    for (m, s) in game.moves.iter().zip(d.sent.iter_mut()) {
        s.clk_ms = m.clk.map(|c| c.millis());
        s.emt_ms = m.emt.map(|c| c.millis());
    }
    d.sent_result = game.result;
    let start_fen = game
        .has_custom_start()
        .then(|| game.start_fen().to_string());
    Some(Snapshot {
        serial: serial.to_string(),
        port: d.port.clone(),
        game_no: d.game_no,
        start_fen,
        chess960: mode == shakmaty::CastlingMode::Chess960,
        orientation: d.recorder.orientation().map(orientation_name),
        moves: d.sent.clone(),
        result: d.sent_result,
        termination: None,
        read_at_ms: d.board_read_ms,
        judged_at_ms: now,
        press: d.press.take(),
        incidents: std::mem::take(&mut d.incidents),
    })
}
