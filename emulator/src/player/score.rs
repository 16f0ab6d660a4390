//! A game as the emulator plays it: read from PGN by the core's one reader, kept with what
//! the player needs of it (the start, the main line's moves with their recorded clocks, the
//! time control), and the best guess at a time control when the file gives none that the
//! clock can run, since broadcast PGN often has only the recorded clocks to go on.

use super::model::{ClocksAtStart, color_index};
use crate::clock::{Period, TimeControl};
use shakmaty::{Chess, Move, Position};

/// One game read from PGN by the core's reader (`relay_core::pgn`, the project's one PGN
/// reader), with what the emulator plays from it.
#[derive(Clone, Debug)]
pub struct GameScore {
    /// Tag pairs in file order.
    pub headers: Vec<(String, String)>,
    /// From `[FEN]` (with `[Variant "Chess960"]` or X-FEN/Shredder castling rights read in
    /// Chess960 mode), else the standard start.
    pub start: Chess,
    /// The main line; variations are skipped.
    pub moves: Vec<ScoredMove>,
    /// From `[TimeControl]` when it is in the standard form with a clock to run (not `?` or
    /// `-`), else `None` (see [`GameScore::guess_time_control`] for a best effort).
    pub time_control: Option<TimeControl>,
    /// The game's result as PGN writes it.
    pub result: String,
    /// For a game taken up in the middle ([`GameScore::taken_up_after`]), the clocks as they
    /// stood at the cut; `None`: the clock starts at the time control's start.
    pub clocks_at_start: Option<ClocksAtStart>,
}

/// One main-line move with the clock recorded after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoredMove {
    pub mv: Move,
    /// Normalised SAN with check/mate suffix, as shakmaty writes it.
    pub san: String,
    /// The mover's remaining time after the move, from `[%clk …]` in the comments that follow
    /// it (read by the core's one clock parser).
    pub clk_ms: Option<u64>,
}

/// A game that could not be read: the core reader's error (game number, players, line).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct PgnError(#[from] pub relay_core::pgn::PgnImportError);

/// A time control with a clock to run: `?` and `-` have none.
fn runnable(tc: TimeControl) -> Option<TimeControl> {
    tc.initial_ms().filter(|&ms| ms > 0).map(|_| tc)
}

impl GameScore {
    /// What the emulator needs of a game the core read.
    pub fn from_game(g: relay_core::game::Game) -> GameScore {
        let time_control = g
            .tags
            .get("TimeControl")
            .and_then(|v| v.trim().parse::<TimeControl>().ok())
            .and_then(runnable);
        GameScore {
            moves: g
                .moves
                .iter()
                .map(|m| ScoredMove {
                    mv: m.mv,
                    san: m.san.to_string(),
                    clk_ms: m.clk.map(|c| c.0),
                })
                .collect(),
            result: g.result.to_string(),
            start: g.start,
            headers: g.tags.0,
            time_control,
            clocks_at_start: None,
        }
    }

    /// The same game with the colours swapped and the board turned top to bottom (White's
    /// pieces where Black's stood, as Black's): every position is new, every move and clock
    /// the same, each made by the other colour. For a hall larger than the file of real
    /// games, whose boards should not all play positions another board plays. `None` when the
    /// mirrored start is not a legal position (it always is for a legal one).
    pub fn mirrored(&self) -> Option<GameScore> {
        use shakmaty::{EnPassantMode, Square};
        let mode = self.start.castles().mode();
        let mut setup = self.start.to_setup(EnPassantMode::Always);
        setup.mirror();
        let start: Chess = setup.position(mode).ok()?;
        let flip = Square::flip_vertical;
        let mut pos = start.clone();
        let mut moves = Vec::with_capacity(self.moves.len());
        for m in &self.moves {
            let mv = match m.mv {
                Move::Normal {
                    role,
                    from,
                    capture,
                    to,
                    promotion,
                } => Move::Normal {
                    role,
                    from: flip(from),
                    capture,
                    to: flip(to),
                    promotion,
                },
                Move::EnPassant { from, to } => Move::EnPassant {
                    from: flip(from),
                    to: flip(to),
                },
                Move::Castle { king, rook } => Move::Castle {
                    king: flip(king),
                    rook: flip(rook),
                },
                Move::Put { role, to } => Move::Put { role, to: flip(to) },
            };
            if !pos.is_legal(mv) {
                return None;
            }
            let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, mv);
            moves.push(ScoredMove {
                mv,
                san: san.to_string(),
                clk_ms: m.clk_ms,
            });
        }
        let swap = |name: &str| match name {
            "White" => "Black".to_string(),
            "Black" => "White".to_string(),
            "WhiteElo" => "BlackElo".to_string(),
            "BlackElo" => "WhiteElo".to_string(),
            other => other.to_string(),
        };
        let mut headers: Vec<(String, String)> = self
            .headers
            .iter()
            .filter(|(n, _)| !n.eq_ignore_ascii_case("FEN") && !n.eq_ignore_ascii_case("SetUp"))
            .map(|(n, v)| (swap(n), v.clone()))
            .collect();
        headers.push(("SetUp".into(), "1".into()));
        let fen = shakmaty::fen::Fen::from_position(&start, EnPassantMode::Legal);
        headers.push(("FEN".into(), fen.to_string()));
        let result = match self.result.as_str() {
            "1-0" => "0-1",
            "0-1" => "1-0",
            other => other,
        };
        Some(GameScore {
            headers,
            start,
            moves,
            time_control: self.time_control.clone(),
            result: result.to_string(),
            clocks_at_start: self.clocks_at_start.map(|c| ClocksAtStart {
                ms: [c.ms[1], c.ms[0]],
                moves_done: [c.moves_done[1], c.moves_done[0]],
            }),
        })
    }

    /// The game taken up after its first `plies` moves, as a board set up in that position
    /// with the clock set to the times recorded at that point: for measuring what happens deep
    /// in real games without playing their openings first. The start becomes that position
    /// (`[SetUp]`/`[FEN]` say so), the moves are the rest, and the clocks are each side's last
    /// recorded time before the cut, with the moves each has made (for the time control's
    /// periods); without a recorded time for both sides the clock starts at the time
    /// control's start. `None` when the game does not go on past the cut.
    pub fn taken_up_after(&self, plies: usize) -> Option<GameScore> {
        if self.moves.len() <= plies {
            return None;
        }
        let mut pos = self.start.clone();
        let (mut last, mut done) = ([None, None], [0u32; 2]);
        for m in &self.moves[..plies] {
            let i = color_index(pos.turn());
            last[i] = m.clk_ms.or(last[i]);
            done[i] += 1;
            pos.play_unchecked(m.mv);
        }
        let fen = shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal);
        let mut headers: Vec<(String, String)> = self
            .headers
            .iter()
            .filter(|(n, _)| !n.eq_ignore_ascii_case("FEN") && !n.eq_ignore_ascii_case("SetUp"))
            .cloned()
            .collect();
        headers.push(("SetUp".into(), "1".into()));
        headers.push(("FEN".into(), fen.to_string()));
        Some(GameScore {
            headers,
            start: pos,
            moves: self.moves[plies..].to_vec(),
            time_control: self.time_control.clone(),
            result: self.result.clone(),
            clocks_at_start: match last {
                [Some(w), Some(b)] => Some(ClocksAtStart {
                    ms: [w, b],
                    moves_done: done,
                }),
                _ => None,
            },
        })
    }

    /// The value of the first tag called `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The position after the last main-line move.
    pub fn final_position(&self) -> Chess {
        let mut pos = self.start.clone();
        for m in &self.moves {
            pos.play_unchecked(m.mv);
        }
        pos
    }

    /// A best-effort time control: the parsed tag; else a free-text tag such as `15 min/game +
    /// 10 sec/move` or `90 min/40 moves + 30 min/game + 30 sec/move` (the core's
    /// [`TimeControl::from_free_text`]); else one inferred from the recorded clocks (see
    /// [`guess_time_control_from_clocks`]). `None` when the game has neither.
    pub fn guess_time_control(&self) -> Option<TimeControl> {
        self.time_control
            .clone()
            .or_else(|| {
                self.header("TimeControl")
                    .and_then(TimeControl::from_free_text)
                    .and_then(runnable)
            })
            .or_else(|| guess_time_control_from_clocks(self))
    }
}

/// Reads every game; the first unreadable game makes the whole text an error.
pub fn read_games(pgn: &str) -> Result<Vec<GameScore>, PgnError> {
    read_games_each(pgn).into_iter().collect()
}

/// Reads every game, one result per game, so that one bad game does not hide the others.
pub fn read_games_each(pgn: &str) -> Vec<Result<GameScore, PgnError>> {
    relay_core::pgn::read_games(pgn)
        .into_iter()
        .map(|g| g.map(GameScore::from_game).map_err(PgnError))
        .collect()
}

/// Infers a time control from the recorded clocks alone (broadcast PGN often has no
/// `[TimeControl]`): the increment is the largest per-move gain up to a minute (larger gains are
/// period bonuses or clock corrections) raised to a usual value; the base is the first clocks
/// plus thinking, rounded to 5 minutes (minutes below 10 minutes); a bonus of ten minutes or
/// more seen around move 40 (and then 60) makes periods `40/…:20/…:…`. DGT clocks in Fischer
/// mode add the increment before the first move too; when the first clocks show that, the
/// increment is folded into the first period's base. A heuristic: honoured clock times do not
/// depend on it, only the absolute readings at period changes do.
pub fn guess_time_control_from_clocks(game: &GameScore) -> Option<TimeControl> {
    // Per side: (the side's move number from 1, clock after it).
    let mut clocks: [Vec<(u32, u64)>; 2] = [Vec::new(), Vec::new()];
    let mut counts = [0u32; 2];
    let mut turn = game.start.turn();
    for m in &game.moves {
        let i = color_index(turn);
        counts[i] += 1;
        if let Some(c) = m.clk_ms {
            clocks[i].push((counts[i], c));
        }
        turn = turn.other();
    }
    if clocks.iter().all(Vec::is_empty) {
        return None;
    }
    const MAX_INCREMENT_MS: i64 = 60_000;
    let gains = |side: &Vec<(u32, u64)>| -> Vec<(u32, u32, i64)> {
        side.windows(2)
            .map(|w| (w[0].0, w[1].0, w[1].1 as i64 - w[0].1 as i64))
            .collect()
    };
    // The largest gain of at most a minute (more is a period bonus or a clock correction).
    // An increment guessed too high costs nothing when honouring recorded times; one guessed
    // too low makes the fastest moves unreproducible.
    let max_gain = clocks
        .iter()
        .flat_map(&gains)
        .filter(|&(a, b, g)| b == a + 1 && g > 0 && g <= MAX_INCREMENT_MS)
        .map(|(_, _, g)| g as u64)
        .max();
    let increment_ms = match max_gain {
        None => 0,
        Some(gain) => [1u64, 2, 3, 5, 10, 15, 20, 30, 45, 60]
            .iter()
            .map(|s| s * 1_000)
            .find(|&inc| inc >= gain)
            .unwrap_or(MAX_INCREMENT_MS as u64),
    };
    let first = clocks
        .iter()
        .filter_map(|s| s.first())
        .map(|&(_, c)| c)
        .max()?;
    let raw = first.saturating_sub(increment_ms);
    let unit = if raw >= 600_000 { 300_000 } else { 60_000 };
    let mut base_ms = ((raw + unit / 2) / unit * unit).max(unit);
    if first > base_ms + increment_ms {
        base_ms += increment_ms;
    }
    // A bonus of at least ten minutes on the side's move n0..=n0+3 (broadcast clocks lag).
    let bonus_at = |n0: u32| -> Option<u64> {
        clocks
            .iter()
            .flat_map(&gains)
            .filter(|&(_, b, g)| (n0..=n0 + 3).contains(&b) && g >= 600_000)
            .map(|(_, _, g)| g as u64)
            .max()
            .map(|g| (g.saturating_sub(increment_ms) + 150_000) / 300_000 * 300_000)
    };
    let period = |moves: Option<u32>, base_ms| match moves {
        Some(moves) => Period::Moves {
            moves,
            base_ms,
            increment_ms: Some(increment_ms),
        },
        None => Period::SuddenDeath {
            base_ms,
            increment_ms: Some(increment_ms),
        },
    };
    let periods = match bonus_at(40) {
        None => vec![period(None, base_ms)],
        Some(b1) => match bonus_at(60) {
            None => vec![period(Some(40), base_ms), period(None, b1)],
            Some(b2) => vec![
                period(Some(40), base_ms),
                period(Some(20), b1),
                period(None, b2),
            ],
        },
    };
    Some(TimeControl::Periods(periods))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::player::testing::one_game;

    #[test]
    fn reads_headers_clocks_and_skips_variations() {
        let game = one_game(
            "[Event \"T\"]\n[Result \"1-0\"]\n[TimeControl \"180+2\"]\n\n\
             1. e4 {[%clk 0:03:01]} {[%emt 0:00:01]} 1... e5 {[%eval 0.2] [%clk\n0:03:00]} \
             (1... c5 {[%clk 0:00:01]} 2. Nf3) 2. Nf3 $1 {no clock} 1-0\n",
        );
        assert_eq!(game.headers[0], ("Event".into(), "T".into()));
        assert_eq!(game.result, "1-0");
        assert_eq!(game.time_control, Some("180+2".parse().expect("tc")));
        let sans: Vec<&str> = game.moves.iter().map(|m| m.san.as_str()).collect();
        assert_eq!(sans, ["e4", "e5", "Nf3"]);
        let clks: Vec<Option<u64>> = game.moves.iter().map(|m| m.clk_ms).collect();
        assert_eq!(clks, [Some(181_000), Some(180_000), None]);
    }

    #[test]
    fn illegal_moves_are_reported_with_game_and_san() {
        let results =
            read_games_each("[Event \"a\"]\n\n1. e4 e5 2. Ke3 *\n\n[Event \"b\"]\n\n1. d4 d5 *\n");
        assert_eq!(results.len(), 2);
        let err = results[0].as_ref().expect_err("illegal");
        let msg = err.to_string();
        assert!(msg.contains("game 1") && msg.contains("2. Ke3"), "{msg}");
        // The same reader as every other caller: the core's.
        assert!(results[1].is_ok());
        assert!(read_games("[Event \"a\"]\n\n1. e5 *\n").is_err());
    }

    #[test]
    fn time_control_from_clocks() {
        // 3+2 blitz: first clocks 3:01 and 3:00.
        let game = one_game(
            "[Event \"x\"]\n\n1. e4 {[%clk 0:03:01]} e5 {[%clk 0:03:00]} 2. Nf3 {[%clk 0:03:02.5]} \
             Nc6 {[%clk 0:02:55]} *",
        );
        assert_eq!(game.time_control, None);
        assert_eq!(
            game.guess_time_control().map(|t| t.to_string()).as_deref(),
            Some("180+2")
        );
    }
}
