//! The arbiter's record of a game as the API shows it: the illegal moves and clock
//! corrections its board showed, and what the FIDE Laws of Chess prescribe for each illegal
//! move in the event's time control (the routes that read it and rule on it are in
//! `incidents.rs`; the game JSON reads it too).

use super::error::ApiError;
use relay_core::game::GameResult;
use relay_core::incident::IllegalKind;
use relay_core::time_control::TimeControl;
use relay_store::GameId;
use relay_store::{IncidentKind, Reads, Ruling, Side, StoredGame};
use schemars::JsonSchema;
use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color, Position};

/// An illegal move on a game's record, as the game JSON and the console show it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct IllegalMoveView {
    pub id: i64,
    pub game_id: GameId,
    /// The move it was made in place of (1 = White's first).
    pub ply: u32,
    /// Who made it.
    pub color: Side,
    /// The squares as seen (`g1g4`); none for a press without a move.
    pub uci: Option<String>,
    pub kind: IllegalKind,
    /// The piece moved and the one on its target square (a capture), as FEN letters.
    pub piece: Option<String>,
    pub captured: Option<String>,
    pub at_ms: i64,
    pub clock_pressed: bool,
    /// None while open.
    pub ruling: Option<Ruling>,
    /// Which of this player's illegal moves in the game it is (dismissed ones not counted).
    pub count: u32,
    /// What the Laws prescribe for it in the event's time control.
    pub prescribed: String,
    /// The result the Laws prescribe, when it is one (a second illegal move).
    pub result: Option<GameResult>,
}

/// A clock correction on a game's record.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ClockAdjustmentView {
    pub id: i64,
    /// The move it came before.
    pub ply: u32,
    /// Whose clock.
    pub color: Side,
    /// By how much it changed (positive: time given).
    pub delta_ms: i64,
    pub at_ms: i64,
}

/// Moves read back from the board's own memory, made while nothing read the board.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RecoveredView {
    /// The first and last ply of the stretch (1 = White's first move).
    pub from_ply: u32,
    pub to_ply: u32,
    /// Plies of the stretch whose clock the board's memory did not hold (a press too fast for
    /// the board to log): they have no `[%clk]`.
    pub without_clock: Vec<u32>,
    pub at_ms: i64,
}

/// A game's record.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct Record {
    pub illegal_moves: Vec<IllegalMoveView>,
    pub clock_adjustments: Vec<ClockAdjustmentView>,
    /// The game was joined in its middle: recorded from the position on the board (its
    /// start FEN), the moves before it not seen.
    pub joined_late: bool,
    /// Stretches of moves recovered from the board's memory, in the order they were read.
    pub recovered: Vec<RecoveredView>,
}

impl RecoveredView {
    /// How the arbiter's PGN and the console say it.
    pub fn note(&self) -> String {
        let n = self.to_ply - self.from_ply + 1;
        let mut note = format!(
            "{n} {} recovered from the board's memory, plies {}–{} (played while relay was not reading the board; clocks as the board logged them at each press).",
            if n == 1 { "move" } else { "moves" },
            self.from_ply,
            self.to_ply
        );
        if !self.without_clock.is_empty() {
            let plies: Vec<String> = self.without_clock.iter().map(u32::to_string).collect();
            note.push_str(&format!(
                " The board logged no clock for ply {}.",
                plies.join(", ")
            ));
        }
        note
    }
}

/// How the FIDE Laws (2023) time the game: standard play, or rapid/blitz (Appendices A, B),
/// from the time a player has for 60 moves.
fn rapid_or_blitz(time_control: Option<&str>) -> bool {
    let Some(tc) = time_control.and_then(|t| t.trim().parse::<TimeControl>().ok()) else {
        return false;
    };
    let mut total = 0u64;
    let mut moves = 0u32;
    for p in tc.periods() {
        total +=
            p.base_ms() + p.increment_ms() * u64::from(p.moves().unwrap_or(60).min(60 - moves));
        moves += p.moves().unwrap_or(60);
        if moves >= 60 {
            break;
        }
    }
    total > 0 && total < 60 * 60_000
}

/// The result that loses the game for `offender` under art. 7.5.5, or a draw when the
/// opponent cannot checkmate by any series of legal moves (insufficient material).
fn losing_result(position: &Chess, offender: Color) -> GameResult {
    if position.has_insufficient_material(!offender) {
        GameResult::Draw
    } else if offender == Color::White {
        GameResult::BlackWins
    } else {
        GameResult::WhiteWins
    }
}

/// The position the game stands in (its last stored move's, or its start).
fn position_of(g: &StoredGame) -> Chess {
    let fen = g
        .moves
        .last()
        .map(|m| m.fen_after.as_str())
        .or(g.start_fen.as_deref());
    let mode = if g.chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    fen.and_then(|f| f.parse::<Fen>().ok())
        .and_then(|f| f.into_position(mode).ok())
        .unwrap_or_default()
}

/// What the Laws prescribe for the `count`-th completed illegal move of a player.
fn prescribed(count: u32, rapid: bool, result: GameResult) -> String {
    let extra = if rapid { "one minute" } else { "two minutes" };
    let rule = if rapid {
        "FIDE Laws A.4.2 (rapid; B.3 blitz)"
    } else {
        "FIDE Laws 7.5.5"
    };
    let stands = if rapid {
        " (rapid and blitz: only if the arbiter saw it or the opponent claimed before making a move; otherwise the move stands)"
    } else {
        ""
    };
    if count <= 1 {
        format!(
            "{rule}: put back the position before the illegal move; the opponent gets {extra} extra time; the player must make a legal move with the piece touched where possible{stands}. A second completed illegal move by this player loses the game."
        )
    } else {
        let outcome = if result == GameResult::Draw {
            "a draw (the opponent cannot checkmate)".to_string()
        } else {
            format!("lost for this player ({result})")
        };
        format!(
            "{rule}: a second completed illegal move by the same player: the game is {outcome}{stands}."
        )
    }
}

/// A game's record as the console shows it: each illegal move with its count, what the Laws
/// prescribe for the tournament's `time_control` and the result they give; with `cut` (a
/// delayed view), only what was seen by then.
pub async fn record_of(
    store: &Reads,
    g: &StoredGame,
    time_control: Option<&str>,
    cut: Option<i64>,
) -> Result<Record, ApiError> {
    let mut incidents = store.game_incidents(g.id).await?;
    if let Some(cut) = cut {
        incidents.retain(|i| i.at_ms <= cut);
    }
    let rapid = rapid_or_blitz(time_control);
    let pos = position_of(g);
    let mut counts = [0u32; 2];
    let mut record = Record::default();
    for i in incidents {
        match i.kind {
            IncidentKind::IllegalMove => {}
            IncidentKind::JoinedLate => {
                record.joined_late = true;
                continue;
            }
            IncidentKind::Recovered => {
                // One incident a move; a stretch is the moves read back in one reading.
                let stretch = record
                    .recovered
                    .last_mut()
                    .filter(|r| r.at_ms == i.at_ms && r.to_ply + 1 == i.ply);
                let stretch = match stretch {
                    Some(r) => {
                        r.to_ply = i.ply;
                        r
                    }
                    None => {
                        record.recovered.push(RecoveredView {
                            from_ply: i.ply,
                            to_ply: i.ply,
                            without_clock: Vec::new(),
                            at_ms: i.at_ms,
                        });
                        // Just pushed.
                        #[allow(clippy::unwrap_used)]
                        record.recovered.last_mut().unwrap()
                    }
                };
                if !i.clock_pressed {
                    stretch.without_clock.push(i.ply);
                }
                continue;
            }
            IncidentKind::ClockAdjustment => {
                record.clock_adjustments.push(ClockAdjustmentView {
                    id: i.id,
                    ply: i.ply,
                    color: i.color,
                    delta_ms: i.delta_ms.unwrap_or(0),
                    at_ms: i.at_ms,
                });
                continue;
            }
        }
        let Some(kind) = i.illegal else {
            // An illegal move is stored with its kind; a row without one is not shown.
            continue;
        };
        let offender = if i.color.is_white() {
            Color::White
        } else {
            Color::Black
        };
        let slot = &mut counts[usize::from(offender == Color::Black)];
        if i.ruling != Some(Ruling::Dismissed) {
            *slot += 1;
        }
        let count = (*slot).max(1);
        let result = losing_result(&pos, offender);
        record.illegal_moves.push(IllegalMoveView {
            id: i.id,
            game_id: i.game_id,
            ply: i.ply,
            color: i.color,
            uci: i.uci,
            kind,
            piece: i.piece,
            captured: i.captured,
            at_ms: i.at_ms,
            clock_pressed: i.clock_pressed,
            ruling: i.ruling,
            count,
            prescribed: prescribed(count, rapid, result),
            result: (count >= 2).then_some(result),
        });
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_play_is_sixty_minutes_for_sixty_moves_or_more() {
        assert!(!rapid_or_blitz(Some("5400+30")));
        assert!(!rapid_or_blitz(Some("40/5400+30:1800+30")));
        assert!(
            !rapid_or_blitz(Some("3000+10")),
            "50 min + 60 × 10 s = 60 min"
        );
        assert!(rapid_or_blitz(Some("900+10")));
        assert!(rapid_or_blitz(Some("180+2")));
        assert!(!rapid_or_blitz(None), "unknown: the standard rule");
    }

    #[test]
    fn a_second_illegal_move_loses_unless_the_opponent_cannot_mate() {
        let pos: Chess = "8/8/8/4k3/8/8/3BK3/7r b - - 0 1"
            .parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("legal");
        // White has king and bishop and cannot mate: Black's offence is a draw. Black's
        // rook can: White's offence loses.
        assert_eq!(losing_result(&pos, Color::Black), GameResult::Draw);
        assert_eq!(losing_result(&pos, Color::White), GameResult::BlackWins);
        assert!(prescribed(1, false, GameResult::Draw).contains("two minutes"));
        assert!(prescribed(1, true, GameResult::Draw).contains("one minute"));
        assert!(prescribed(2, false, GameResult::WhiteWins).contains("lost"));
    }
}
