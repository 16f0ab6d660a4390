//! The views of rounds and games that HTTP answers and WebSocket snapshots share, typed: the
//! one place their shape is written.
//!
//! A view is built from the store ([`game_view`], [`round_view`]) and, for a round followed
//! live, kept up to date in memory by applying each message its feed passes on
//! ([`RoundView::apply`]): the feed's snapshot comes from that, not from the store, so a crowd
//! joining costs the store nothing.

use super::live::ClockView;
use super::wire::{MoveView, ServerMessage};
use relay_store::{Player, RoundInfo, StoredGame, StoredMove};
use schemars::JsonSchema;
use serde::Serialize;

pub const STANDARD_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A game as pages, platforms and the console see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GameView {
    pub id: i64,
    pub round_id: i64,
    pub board_no: u32,
    #[schemars(with = "serde_json::Value")]
    pub white: Player,
    #[schemars(with = "serde_json::Value")]
    pub black: Player,
    /// pending, live, finished, confirmed
    pub status: String,
    pub result: String,
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
}

/// A round with its games.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RoundView {
    pub id: i64,
    pub tournament_id: i64,
    pub tournament: String,
    pub number: String,
    /// The round's change number this view stands at.
    pub seq: i64,
    pub delay_secs: i64,
    #[serde(rename = "final")]
    pub is_final: bool,
    pub auto: bool,
    pub games: Vec<GameView>,
}

fn color_of_ply(start_fen: &str, ply: u32) -> &'static str {
    let black_first = start_fen.split_whitespace().nth(1) == Some("b");
    if (ply % 2 == 1) != black_first {
        "white"
    } else {
        "black"
    }
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
        (g.result.clone(), g.termination.clone(), g.status.clone())
    } else if moves.is_empty() {
        ("*".into(), None, "pending".into())
    } else {
        ("*".into(), None, "live".into())
    };
    let clock = match cutoff_ms {
        // A game with a result has no running clock: the board's clock goes on (reset for the
        // next game, or the loser's still running), but the game's clocks are those of its
        // last moves.
        None => live_clock.filter(|_| result == "*"),
        Some(c) => delayed_clock(&start_fen, &moves, result == "*", c),
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
    let last_clk = |color: &str| {
        moves
            .iter()
            .rev()
            .find(|m| color_of_ply(start_fen, m.ply) == color)
            .and_then(|m| m.clk_ms)
    };
    let (w, b) = (last_clk("white")?, last_clk("black")?);
    let last = moves.last()?;
    let to_move = if color_of_ply(start_fen, last.ply) == "white" {
        "black"
    } else {
        "white"
    };
    let spent = u64::try_from(cutoff - last.accepted_at_ms).unwrap_or(0);
    let (mut white_ms, mut black_ms) = (w, b);
    if running {
        if to_move == "white" {
            white_ms = w.saturating_sub(spent);
        } else {
            black_ms = b.saturating_sub(spent);
        }
    }
    Some(ClockView {
        white_ms,
        black_ms,
        running: running.then_some(to_move),
        at_ms: super::live::now_ms(),
    })
}

/// A round with all its games. `clock_of` and `eboard_of` give a game's running clock and
/// e-board (live state the store does not hold).
pub fn round_view(
    r: &RoundInfo,
    tournament: &str,
    games: &[StoredGame],
    cutoff_ms: Option<i64>,
    delay_ms: i64,
    clock_of: impl Fn(i64) -> Option<ClockView>,
    eboard_of: impl Fn(i64) -> Option<String>,
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
    }
}

impl GameView {
    /// A pending game with nothing in it, for tests.
    #[cfg(test)]
    pub fn empty(id: i64, board_no: u32) -> GameView {
        GameView {
            id,
            round_id: 1,
            board_no,
            white: Player::default(),
            black: Player::default(),
            status: "pending".into(),
            result: "*".into(),
            termination: None,
            start_fen: STANDARD_FEN.into(),
            fen: STANDARD_FEN.into(),
            moves: vec![],
            clock: None,
            eboard: None,
        }
    }

    /// The game with its last move only.
    fn with_last_move(&self) -> GameView {
        GameView {
            id: self.id,
            round_id: self.round_id,
            board_no: self.board_no,
            white: self.white.clone(),
            black: self.black.clone(),
            status: self.status.clone(),
            result: self.result.clone(),
            termination: self.termination.clone(),
            start_fen: self.start_fen.clone(),
            fen: self.fen.clone(),
            moves: self.moves.last().cloned().into_iter().collect(),
            clock: self.clock,
            eboard: self.eboard.clone(),
        }
    }

    fn settle_fen(&mut self) {
        self.fen = self
            .moves
            .last()
            .map_or_else(|| self.start_fen.clone(), |m| m.fen.clone());
    }

    fn set_clock(&mut self, clock: ClockView) {
        // A finished game's clocks are those of its last moves.
        if self.result == "*" {
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
        }
    }

    pub fn game(&self, id: i64) -> Option<&GameView> {
        self.games.iter().find(|g| g.id == id)
    }

    fn game_mut(&mut self, id: i64) -> Option<&mut GameView> {
        self.games.iter_mut().find(|g| g.id == id)
    }

    /// A game set up, paired or replaced as a whole: in board order, or out of this round
    /// when it moved to another.
    fn upsert(&mut self, mut game: GameView) {
        if game.round_id != self.id {
            self.games.retain(|g| g.id != game.id);
            return;
        }
        match self.game_mut(game.id) {
            Some(g) => {
                // A game re-read from the store has no running clock of its own.
                if game.clock.is_none() && game.result == "*" {
                    game.clock = g.clock;
                }
                *g = game;
            }
            None => self.games.push(game),
        }
        self.games.sort_by_key(|g| (g.board_no, g.id));
    }

    /// Brings the view up to date with a message its feed passes on: the same message every
    /// client gets, so the view and the clients cannot disagree. `change`: the message
    /// announces a stored change (one this view already has, by its number, is skipped).
    pub fn apply(&mut self, m: &ServerMessage, change: bool) {
        if change {
            let Some(seq) = m.seq() else { return };
            if seq <= self.seq {
                return;
            }
            self.seq = seq;
        }
        match m {
            ServerMessage::Move {
                game_id, mv, clock, ..
            } => {
                if let Some(g) = self.game_mut(*game_id) {
                    g.moves.retain(|x| x.ply < mv.ply);
                    g.moves.push(mv.clone());
                    g.settle_fen();
                    if g.status == "pending" {
                        g.status = "live".into();
                    }
                    if let Some(c) = clock {
                        g.set_clock(*c);
                    }
                }
            }
            ServerMessage::MoveClock {
                game_id,
                ply,
                clk_ms,
                emt_ms,
                clock,
                ..
            } => {
                if let Some(g) = self.game_mut(*game_id) {
                    if let Some(x) = g.moves.iter_mut().find(|x| x.ply == *ply) {
                        x.clk_ms = *clk_ms;
                        x.emt_ms = *emt_ms;
                    }
                    if let Some(c) = clock {
                        g.set_clock(*c);
                    }
                }
            }
            ServerMessage::Truncate {
                game_id, from_ply, ..
            } => {
                if let Some(g) = self.game_mut(*game_id) {
                    g.moves.retain(|x| x.ply < *from_ply);
                    g.settle_fen();
                }
            }
            ServerMessage::Result {
                game_id,
                result,
                termination,
                status,
                ..
            } => {
                if let Some(g) = self.game_mut(*game_id) {
                    g.result = result.clone();
                    g.termination = termination.clone();
                    g.status = status.clone();
                    if g.result != "*" {
                        g.clock = None;
                    }
                }
            }
            ServerMessage::Game { game, .. } => self.upsert(GameView::clone(game)),
            ServerMessage::Games { games, .. } => {
                for g in games {
                    self.upsert(g.clone());
                }
            }
            ServerMessage::Moves { game_id, moves, .. } => {
                if let (Some(g), Some(first)) = (self.game_mut(*game_id), moves.first()) {
                    g.moves.retain(|x| x.ply < first.ply);
                    g.moves.extend(moves.iter().cloned());
                    g.settle_fen();
                }
            }
            ServerMessage::Clock { game_id, clock, .. } => {
                if let Some(g) = self.game_mut(*game_id) {
                    g.set_clock(*clock);
                }
            }
            ServerMessage::Clocks { clocks, .. } => {
                for c in clocks {
                    if let Some(g) = self.game_mut(c.game_id) {
                        g.set_clock(c.clock);
                    }
                }
            }
            ServerMessage::Eboard { eboard, .. } => {
                for g in &mut self.games {
                    if Some(g.id) == eboard.game_id {
                        g.eboard = Some(eboard.serial.clone());
                    } else if g.eboard.as_deref() == Some(eboard.serial.as_str()) {
                        g.eboard = None;
                    }
                }
            }
            ServerMessage::Snapshot { .. }
            | ServerMessage::Heartbeat { .. }
            | ServerMessage::Error { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::wire::GameClock;

    fn game(id: i64, board_no: u32) -> GameView {
        GameView::empty(id, board_no)
    }

    fn round() -> RoundView {
        RoundView {
            id: 1,
            tournament_id: 1,
            tournament: "T".into(),
            number: "1".into(),
            seq: 10,
            delay_secs: 0,
            is_final: false,
            auto: false,
            games: vec![game(5, 1), game(6, 2)],
        }
    }

    fn mv(ply: u32, san: &str, fen: &str) -> MoveView {
        MoveView {
            ply,
            san: san.into(),
            uci: String::new(),
            fen: fen.into(),
            clk_ms: None,
            emt_ms: None,
            clk_unseen: false,
        }
    }

    fn clock(white_ms: u64) -> ClockView {
        ClockView {
            white_ms,
            black_ms: 1000,
            running: Some("black"),
            at_ms: 7,
        }
    }

    #[test]
    fn a_view_follows_moves_clocks_takebacks_and_results_and_skips_what_it_has() {
        let mut r = round();
        let e4 = ServerMessage::Move {
            seq: 11,
            game_id: 5,
            mv: mv(1, "e4", "after e4"),
            read_at_ms: None,
            clock: Some(clock(900)),
        };
        r.apply(&e4, true);
        let g = r.game(5).expect("game 5");
        assert_eq!(
            (g.status.as_str(), g.fen.as_str(), g.moves.len()),
            ("live", "after e4", 1)
        );
        assert_eq!(g.clock, Some(clock(900)));
        assert_eq!(r.seq, 11);
        // The same change again (a client's ring and the store overlapping) changes nothing.
        let before = r.clone();
        r.apply(&e4, true);
        assert_eq!(r, before);
        r.apply(
            &ServerMessage::Move {
                seq: 12,
                game_id: 5,
                mv: mv(2, "e5", "after e5"),
                read_at_ms: None,
                clock: None,
            },
            true,
        );
        r.apply(
            &ServerMessage::MoveClock {
                seq: 13,
                game_id: 5,
                ply: 2,
                clk_ms: Some(55),
                emt_ms: Some(3),
                clock: None,
            },
            true,
        );
        assert_eq!(r.game(5).map(|g| g.moves[1].clk_ms), Some(Some(55)));
        // A running-clock bundle repeats the seq: applied, the number stays.
        r.apply(
            &ServerMessage::Clocks {
                seq: 13,
                clocks: vec![GameClock {
                    game_id: 5,
                    clock: clock(800),
                }],
            },
            false,
        );
        assert_eq!(r.game(5).and_then(|g| g.clock), Some(clock(800)));
        assert_eq!(r.seq, 13);
        r.apply(
            &ServerMessage::Truncate {
                seq: 14,
                game_id: 5,
                from_ply: 2,
            },
            true,
        );
        let g = r.game(5).expect("game 5");
        assert_eq!((g.moves.len(), g.fen.as_str()), (1, "after e4"));
        r.apply(
            &ServerMessage::Result {
                seq: 15,
                game_id: 5,
                result: "1-0".into(),
                termination: Some("resignation".into()),
                status: "finished".into(),
            },
            true,
        );
        let g = r.game(5).expect("game 5");
        assert_eq!(
            (g.result.as_str(), g.status.as_str(), g.clock),
            ("1-0", "finished", None)
        );
        // A finished game's clock does not run again.
        r.apply(
            &ServerMessage::Clock {
                seq: 15,
                game_id: 5,
                clock: clock(1),
            },
            false,
        );
        assert_eq!(r.game(5).and_then(|g| g.clock), None);
        // A game set up anew replaces the old one, in board order; the summary keeps the last
        // move of each game only.
        let mut board3 = game(7, 3);
        board3.moves = vec![mv(1, "d4", "a"), mv(2, "d5", "b")];
        r.apply(
            &ServerMessage::Game {
                seq: 16,
                game: Box::new(board3),
            },
            true,
        );
        assert_eq!(
            r.games.iter().map(|g| g.id).collect::<Vec<_>>(),
            vec![5, 6, 7]
        );
        let s = r.summary();
        assert_eq!(s.game(7).map(|g| g.moves.len()), Some(1));
        assert_eq!(r.game(7).map(|g| g.moves.len()), Some(2));
    }

    #[test]
    fn a_missing_clock_is_called_unseen_once_the_player_has_a_later_one() {
        let with = |ply: u32, clk: Option<u64>| MoveView {
            clk_ms: clk,
            ..mv(ply, "a3", "")
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

    #[test]
    fn an_eboard_is_on_one_game_at_a_time() {
        let mut r = round();
        let on = |game: Option<i64>| ServerMessage::Eboard {
            seq: 10,
            eboard: crate::serve::live::EboardView {
                serial: "01025".into(),
                port: "/dev/x".into(),
                connected: true,
                lost_since_ms: None,
                last_seen_ms: 0,
                battery: None,
                clock: None,
                clock_battery_low: false,
                in_sync: true,
                board_fen: String::new(),
                game_id: game,
                board_no: None,
                round_id: Some(1),
                proposal: None,
                warning: None,
                read_by: String::new(),
            },
        };
        r.apply(&on(Some(5)), false);
        assert_eq!(
            r.game(5).and_then(|g| g.eboard.clone()).as_deref(),
            Some("01025")
        );
        r.apply(&on(Some(6)), false);
        assert_eq!(r.game(5).and_then(|g| g.eboard.clone()), None);
        assert_eq!(
            r.game(6).and_then(|g| g.eboard.clone()).as_deref(),
            Some("01025")
        );
    }
}
