//! The views of rounds, games and e-boards that HTTP answers and WebSocket messages carry,
//! typed: the one place their shape is written. This is the service's ground floor: it
//! imports nothing of the service, and everything above builds on it.
//!
//! A view is built from the store ([`game_view`], [`round_view`]) and, for a round followed
//! live, kept up to date in memory by applying each message its feed passes on
//! (`RoundView::apply`, written with the messages in `wire`): the feed's snapshot comes from
//! that, not from the store, so a crowd joining costs the store nothing.

use relay_core::game::GameResult;
use relay_core::recorder::{ColorName, ProposalReason};
use relay_store::{GameId, RoundId, Seq, TournamentId};
use relay_store::{MoveRecord, Player, RoundBye, RoundInfo, StoredGame, StoredMove};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The running clock of a game: at server time `at_ms`, White had `white_ms` and Black
/// `black_ms`; `running` counts down from then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ClockView {
    pub white_ms: u64,
    pub black_ms: u64,
    pub running: Option<ColorName>,
    pub at_ms: i64,
}

impl ClockView {
    /// The same clock as it should be shown `shift_ms` later (for a delayed view).
    pub fn shifted(self, shift_ms: i64) -> ClockView {
        ClockView {
            at_ms: self.at_ms + shift_ms,
            ..self
        }
    }
}

/// Where a game stands: not begun, being played, ended on the board (a result the board
/// gave, which an arbiter may still change), or confirmed by an arbiter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GameStatus {
    #[default]
    Pending,
    Live,
    Finished,
    Confirmed,
}

impl GameStatus {
    /// As the store and the wire write it.
    pub fn as_str(self) -> &'static str {
        match self {
            GameStatus::Pending => "pending",
            GameStatus::Live => "live",
            GameStatus::Finished => "finished",
            GameStatus::Confirmed => "confirmed",
        }
    }

    /// A status as the store keeps it (text only the relay writes; anything else reads as
    /// pending, so a row edited by hand cannot stop a view from being built).
    pub fn stored(s: &str) -> GameStatus {
        match s {
            "live" => GameStatus::Live,
            "finished" => GameStatus::Finished,
            "confirmed" => GameStatus::Confirmed,
            _ => GameStatus::Pending,
        }
    }
}

impl std::fmt::Display for GameStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A result as the store keeps it (written by the relay; anything else reads as ongoing).
pub fn stored_result(s: &str) -> GameResult {
    s.parse().unwrap_or_default()
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Proposal {
    pub result: GameResult,
    pub reason: ProposalReason,
    /// The game's length (plies) when the board proposed it.
    pub at_ply: u32,
    /// Plies played on the board since (players often go on after a flag fell): they are
    /// recorded, and the console says they came after the proposal.
    pub moves_after: u32,
}

/// One e-board as the operator sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EboardView {
    pub serial: String,
    pub port: String,
    pub connected: bool,
    pub lost_since_ms: Option<i64>,
    pub last_seen_ms: i64,
    /// Percent, for Bluetooth boards that report it.
    pub battery: Option<u8>,
    /// Whether a clock is connected to this board: `None` until the board has sent a
    /// reading, `Some(false)` when the reading says no clock is connected.
    pub clock: Option<bool>,
    /// The clock says its battery is low.
    pub clock_battery_low: bool,
    pub in_sync: bool,
    /// The placement as read (real squares once the orientation is known).
    pub board_fen: String,
    pub game_id: Option<GameId>,
    pub board_no: Option<u32>,
    pub round_id: Option<RoundId>,
    pub proposal: Option<Proposal>,
    /// What the arbiter must know about this board that is not about its game: two boards
    /// reporting the same serial number, naming both ports. (The second one's `serial` is the
    /// reported one with `@` and its port, so both games are recorded apart.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// What the board's own memory gave when the board was last read again after a gap:
    /// moves recovered into its game, or why none could be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// The relay reading the board (`host:pid`): with a standby on the same ports, the
    /// console shows which of them holds each board.
    #[serde(default)]
    pub read_by: String,
}

/// A move as spectators get it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MoveView {
    /// 1 for White's first move.
    pub ply: u32,
    pub san: String,
    pub uci: String,
    /// The position after the move (FEN).
    pub fen: String,
    /// The mover's clock after the move (increment included), when a clock is connected.
    pub clk_ms: Option<u64>,
    /// Time the move took.
    pub emt_ms: Option<u64>,
    /// The lever press that ended this move was not seen (the relay was down, the board was
    /// lost) and nothing read later showed its time: `clk_ms` is left out, not guessed. Set in
    /// game and round JSON once a later move of the same player has its clock.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clk_unseen: bool,
    /// The engine's evaluation of the position after the move, once one is known (the same
    /// for every spectator: each position is evaluated once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval: Option<EvalView>,
}

/// An engine's evaluation of a position, as spectators get it. `cp` (centipawns) or `mate`
/// (moves to mate; negative: Black mates) is from White's point of view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct EvalView {
    pub cp: Option<i32>,
    pub mate: Option<i32>,
    pub depth: u32,
    /// The engine's best line from the position, in SAN.
    pub line: Vec<String>,
    pub engine: String,
}

/// How many moves of an engine's line spectators get.
pub const LINE_PLIES: usize = 10;

impl EvalView {
    /// A stored evaluation of the position `fen` (its line read as SAN from there).
    pub fn of(e: &relay_store::StoredEval, fen: &str) -> EvalView {
        let line: Vec<String> = e.line.iter().take(LINE_PLIES).cloned().collect();
        EvalView {
            cp: e.score.cp(),
            mate: e.score.mate(),
            depth: e.depth,
            line: relay_core::game::line_san(fen, &line),
            engine: e.engine.clone(),
        }
    }
}

impl MoveView {
    /// A move with nothing but its number, SAN and position, for tests.
    #[cfg(test)]
    pub fn bare(ply: u32, san: &str, fen: &str) -> MoveView {
        MoveView {
            ply,
            san: san.into(),
            uci: String::new(),
            fen: fen.into(),
            clk_ms: None,
            emt_ms: None,
            clk_unseen: false,
            eval: None,
        }
    }
}

impl From<&StoredMove> for MoveView {
    fn from(m: &StoredMove) -> MoveView {
        MoveView::from(MoveRecord::from(m))
    }
}

impl From<MoveRecord> for MoveView {
    fn from(m: MoveRecord) -> MoveView {
        MoveView {
            ply: m.ply,
            san: m.san,
            uci: m.uci,
            fen: m.fen,
            clk_ms: m.clk_ms,
            emt_ms: m.emt_ms,
            clk_unseen: false,
            eval: None,
        }
    }
}

/// One game's running clock, in a bundle of readings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GameClock {
    pub game_id: GameId,
    pub clock: ClockView,
}

pub const STANDARD_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A game as pages, platforms and the console see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GameView {
    pub id: GameId,
    pub round_id: RoundId,
    pub board_no: u32,
    #[schemars(with = "serde_json::Value")]
    pub white: Player,
    #[schemars(with = "serde_json::Value")]
    pub black: Player,
    pub status: GameStatus,
    pub result: GameResult,
    pub termination: Option<String>,
    pub start_fen: String,
    /// The position after the last move.
    pub fen: String,
    /// Every move, or in a round's spectator snapshot only the last one.
    pub moves: Vec<MoveView>,
    /// The running clock while the game is on and a clock is connected.
    pub clock: Option<ClockView>,
    /// The serial of the e-board the game is on.
    pub eboard: Option<String>,
    /// The number (0–959) of the Chess960 start position the game began from, if it did.
    pub chess960: Option<u16>,
}

/// A round with its games.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct RoundView {
    pub id: RoundId,
    pub tournament_id: TournamentId,
    pub tournament: String,
    pub number: String,
    /// The round's change number this view stands at.
    pub seq: Seq,
    pub delay_secs: i64,
    #[serde(rename = "final")]
    pub is_final: bool,
    pub auto: bool,
    pub games: Vec<GameView>,
    /// Players who have no game this round (from the pairing program's file).
    #[serde(default)]
    pub byes: Vec<RoundBye>,
    /// A team round's matches, made from its games' teams (empty in individual events).
    #[serde(default)]
    pub matches: Vec<TeamMatchView>,
    /// This relay evaluates the positions with an engine: a position without an evaluation
    /// will get one (a page may show a mate's bar before any evaluation came).
    #[serde(default)]
    pub evaluated: bool,
}

/// Two teams' games in a round, and the match score as the results stand.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct TeamMatchView {
    /// The team with White on the match's first board.
    pub first: String,
    pub second: String,
    /// The match's board numbers, in order.
    pub boards: Vec<u32>,
    pub first_points: f64,
    pub second_points: f64,
    /// Whether every game of the match has a result.
    pub finished: bool,
}

/// The matches of a team round: games between two teams' players, grouped, in board order;
/// a board a team won by forfeit against nobody (`0000 - +`: the other team left it empty)
/// is a point of that team's match, though no game stands for it.
pub fn team_matches(games: &[GameView], byes: &[RoundBye]) -> Vec<TeamMatchView> {
    let mut out: Vec<TeamMatchView> = Vec::new();
    for g in games {
        let (Some(w), Some(b)) = (&g.white.team, &g.black.team) else {
            continue;
        };
        let (wp, bp) = match g.result {
            GameResult::WhiteWins => (1.0, 0.0),
            GameResult::BlackWins => (0.0, 1.0),
            GameResult::Draw => (0.5, 0.5),
            GameResult::Ongoing => (0.0, 0.0),
        };
        let at = out
            .iter()
            .position(|m| (&m.first, &m.second) == (w, b) || (&m.first, &m.second) == (b, w));
        let m = match at {
            Some(i) => &mut out[i],
            None => {
                out.push(TeamMatchView {
                    first: w.clone(),
                    second: b.clone(),
                    boards: vec![],
                    first_points: 0.0,
                    second_points: 0.0,
                    finished: true,
                });
                let last = out.len() - 1;
                &mut out[last]
            }
        };
        m.boards.push(g.board_no);
        m.finished &= g.result != GameResult::Ongoing;
        if &m.first == w {
            m.first_points += wp;
            m.second_points += bp;
        } else {
            m.first_points += bp;
            m.second_points += wp;
        }
    }
    for b in byes.iter().filter(|b| b.code == "+") {
        let Some(team) = &b.team else { continue };
        if let Some(m) = out.iter_mut().find(|m| &m.first == team) {
            m.first_points += b.points;
        } else if let Some(m) = out.iter_mut().find(|m| &m.second == team) {
            m.second_points += b.points;
        }
    }
    out
}

/// The side that made move `ply` (1 for the first move) of a game from `start_fen`.
fn color_of_ply(start_fen: &str, ply: u32) -> ColorName {
    ColorName::after_plies(start_fen, ply.saturating_sub(1))
}

/// Marks the moves whose clock is missing while a later move of the same player has one:
/// that press was not seen, and its time will not turn up (a press belongs to one move).
fn with_unseen_clocks(mut moves: Vec<MoveView>) -> Vec<MoveView> {
    // The clocks seen later, per player (index parity), walking back from the end.
    let mut later = [false, false];
    for (i, m) in moves.iter_mut().enumerate().rev() {
        let side = i % 2;
        if m.clk_ms.is_some() {
            later[side] = true;
        } else if later[side] {
            m.clk_unseen = true;
        }
    }
    moves
}

/// A game as stored. With `cutoff_ms`, only what was known at that time (the delayed view),
/// and the clock derived from the moves of that moment.
pub fn game_view(
    g: &StoredGame,
    live_clock: Option<ClockView>,
    eboard: Option<&str>,
    cutoff_ms: Option<i64>,
) -> GameView {
    let moves: Vec<&StoredMove> = g
        .moves
        .iter()
        .filter(|m| cutoff_ms.is_none_or(|c| m.accepted_at_ms <= c))
        .collect();
    let start_fen = g.start_fen.clone().unwrap_or_else(|| STANDARD_FEN.into());
    let fen = moves
        .last()
        .map_or(start_fen.clone(), |m| m.fen_after.clone());
    let result_known = cutoff_ms.is_none_or(|c| g.result_at_ms.is_none_or(|at| at <= c));
    let (result, termination, status) = if result_known {
        (
            stored_result(&g.result),
            g.termination.clone(),
            GameStatus::stored(&g.status),
        )
    } else if moves.is_empty() {
        (GameResult::Ongoing, None, GameStatus::Pending)
    } else {
        (GameResult::Ongoing, None, GameStatus::Live)
    };
    let clock = match cutoff_ms {
        // A game with a result has no running clock: the board's clock goes on (reset for the
        // next game, or the loser's still running), but the game's clocks are those of its
        // last moves.
        None => live_clock.filter(|_| result == GameResult::Ongoing),
        Some(c) => delayed_clock(&start_fen, &moves, result == GameResult::Ongoing, c),
    };
    GameView {
        id: g.id,
        round_id: g.round_id,
        board_no: g.pairing.board_no,
        white: g.pairing.white.clone(),
        black: g.pairing.black.clone(),
        status,
        result,
        termination,
        fen,
        moves: with_unseen_clocks(moves.iter().map(|m| MoveView::from(*m)).collect()),
        chess960: relay_core::game::chess960_number(&start_fen),
        start_fen,
        clock,
        eboard: eboard.map(str::to_string),
    }
}

/// The clocks as they stood at `cutoff`: each side's time after its last move, the side to
/// move running since the last move was accepted. Stamped `now` so a page counts on from it.
fn delayed_clock(
    start_fen: &str,
    moves: &[&StoredMove],
    running: bool,
    cutoff: i64,
) -> Option<ClockView> {
    let last_clk = |color: ColorName| {
        moves
            .iter()
            .rev()
            .find(|m| color_of_ply(start_fen, m.ply) == color)
            .and_then(|m| m.clk_ms)
    };
    let (w, b) = (last_clk(ColorName::White)?, last_clk(ColorName::Black)?);
    let last = moves.last()?;
    let to_move = color_of_ply(start_fen, last.ply).other();
    let spent = u64::try_from(cutoff - last.accepted_at_ms).unwrap_or(0);
    let (mut white_ms, mut black_ms) = (w, b);
    if running {
        if to_move == ColorName::White {
            white_ms = w.saturating_sub(spent);
        } else {
            black_ms = b.saturating_sub(spent);
        }
    }
    Some(ClockView {
        white_ms,
        black_ms,
        running: running.then_some(to_move),
        at_ms: relay_store::now_ms(),
    })
}

/// A round with all its games. `clock_of` and `eboard_of` give a game's running clock and
/// e-board (live state the store does not hold).
#[allow(clippy::too_many_arguments)]
pub fn round_view(
    r: &RoundInfo,
    tournament: &str,
    games: &[StoredGame],
    byes: Vec<RoundBye>,
    cutoff_ms: Option<i64>,
    delay_ms: i64,
    clock_of: impl Fn(GameId) -> Option<ClockView>,
    eboard_of: impl Fn(GameId) -> Option<String>,
) -> RoundView {
    RoundView {
        id: r.id,
        tournament_id: r.tournament_id,
        tournament: tournament.to_string(),
        number: r.number.clone(),
        seq: r.seq,
        delay_secs: delay_ms / 1000,
        is_final: r.is_final,
        auto: r.auto,
        games: games
            .iter()
            .map(|g| {
                let e = eboard_of(g.id);
                game_view(g, clock_of(g.id), e.as_deref(), cutoff_ms)
            })
            .collect(),
        byes,
        matches: vec![],
        evaluated: false,
    }
    .with_matches()
}

impl GameView {
    /// A pending game with nothing in it, for tests.
    #[cfg(test)]
    pub fn empty(id: GameId, board_no: u32) -> GameView {
        GameView {
            id,
            round_id: relay_store::RoundId::from(1),
            board_no,
            white: Player::default(),
            black: Player::default(),
            status: GameStatus::Pending,
            result: GameResult::Ongoing,
            termination: None,
            start_fen: STANDARD_FEN.into(),
            fen: STANDARD_FEN.into(),
            moves: vec![],
            clock: None,
            eboard: None,
            chess960: None,
        }
    }

    /// The game with its last move only.
    pub fn with_last_move(&self) -> GameView {
        GameView {
            id: self.id,
            round_id: self.round_id,
            board_no: self.board_no,
            white: self.white.clone(),
            black: self.black.clone(),
            status: self.status,
            result: self.result,
            termination: self.termination.clone(),
            start_fen: self.start_fen.clone(),
            fen: self.fen.clone(),
            moves: self.moves.last().cloned().into_iter().collect(),
            clock: self.clock,
            eboard: self.eboard.clone(),
            chess960: self.chess960,
        }
    }

    pub fn settle_fen(&mut self) {
        self.fen = self
            .moves
            .last()
            .map_or_else(|| self.start_fen.clone(), |m| m.fen.clone());
    }

    pub fn set_clock(&mut self, clock: ClockView) {
        // A finished game's clocks are those of its last moves.
        if self.result == GameResult::Ongoing {
            self.clock = Some(clock);
        }
    }
}

impl RoundView {
    /// Each game with its last move only: what a round page shows (the position, the last
    /// move and the clocks); a game page asks for its whole game.
    /// Built field by field: cloning the whole view first would copy every move of every
    /// game only to drop them.
    pub fn summary(&self) -> RoundView {
        RoundView {
            id: self.id,
            tournament_id: self.tournament_id,
            tournament: self.tournament.clone(),
            number: self.number.clone(),
            seq: self.seq,
            delay_secs: self.delay_secs,
            is_final: self.is_final,
            auto: self.auto,
            games: self.games.iter().map(GameView::with_last_move).collect(),
            byes: self.byes.clone(),
            matches: self.matches.clone(),
            evaluated: self.evaluated,
        }
    }

    /// The view with its team matches made again from its games and byes.
    pub fn with_matches(mut self) -> RoundView {
        self.matches = team_matches(&self.games, &self.byes);
        self
    }

    pub fn game(&self, id: GameId) -> Option<&GameView> {
        self.games.iter().find(|g| g.id == id)
    }

    pub fn game_mut(&mut self, id: GameId) -> Option<&mut GameView> {
        self.games.iter_mut().find(|g| g.id == id)
    }

    /// A game set up, paired or replaced as a whole: in board order, or out of this round
    /// when it moved to another.
    pub fn upsert(&mut self, mut game: GameView) {
        if game.round_id != self.id {
            self.games.retain(|g| g.id != game.id);
            return;
        }
        match self.game_mut(game.id) {
            Some(g) => {
                // A game re-read from the store has no running clock of its own.
                if game.clock.is_none() && game.result == GameResult::Ongoing {
                    game.clock = g.clock;
                }
                *g = game;
            }
            None => self.games.push(game),
        }
        self.games.sort_by_key(|g| (g.board_no, g.id));
    }
}

/// Keeps only what was known at `cutoff`.
pub fn cut_game(g: &StoredGame, cutoff: Option<i64>) -> StoredGame {
    let Some(c) = cutoff else {
        return g.clone();
    };
    let mut g = g.clone();
    g.moves.retain(|m| m.accepted_at_ms <= c);
    if g.result_at_ms.is_some_and(|at| at > c) {
        g.result = "*".into();
        g.termination = None;
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_clock_is_called_unseen_once_the_player_has_a_later_one() {
        let with = |ply: u32, clk: Option<u64>| MoveView {
            clk_ms: clk,
            ..MoveView::bare(ply, "a3", "")
        };
        let moves = with_unseen_clocks(vec![
            with(1, Some(1)),
            with(2, None),
            with(3, None),
            with(4, Some(4)),
            with(5, None),
        ]);
        let unseen: Vec<bool> = moves.iter().map(|m| m.clk_unseen).collect();
        // Ply 2: Black's ply 4 has a clock. Ply 3: White's ply 5 has none yet (its press may
        // still come), nor does ply 5.
        assert_eq!(unseen, [false, true, false, false, false]);
    }
}
