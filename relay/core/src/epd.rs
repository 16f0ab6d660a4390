//! FEN and EPD for positions of a live game (EPD standard §4–§6).

use crate::clock_time::ClockTime;
use shakmaty::fen::{Epd, Fen};
use shakmaty::san::SanPlus;
use shakmaty::{Chess, EnPassantMode, Move, Position};
use std::fmt::Write;

/// The FEN of a position. The en passant square is written only when a capture there is legal,
/// as [`crate::game::Game::start_fen`] does, so that equal positions have equal FENs.
pub fn fen(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// The operations [`epd`] can append. Each is written when set, in ASCII order of the opcodes
/// as §5.1 asks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EpdOps {
    /// `cc`: the time each side has *used* so far (White, Black) — §6.6 counts consumption, not
    /// what is left on the clock. Written in the clock format `ddd:hh:mm:ss`, whole seconds.
    pub cc: Option<(ClockTime, ClockTime)>,
    /// `fmvn`: the fullmove number.
    pub fmvn: Option<u32>,
    /// `hmvc`: the halfmove clock (plies since the last capture or pawn move).
    pub hmvc: Option<u32>,
    /// `id`: a label for the position (quotes become `'`).
    pub id: Option<String>,
    /// `ptp`: PGN tag pairs, e.g. Event, White, Black. EPD strings cannot escape a quote, so a
    /// `"` in a value becomes `'`; names that are not EPD identifiers (1–15 letters, digits,
    /// underscores) are left out.
    pub ptp: Vec<(String, String)>,
    /// `sm`: the move played from this position, when known (§6.26: "the most recent played move
    /// in an active game"). Written in SAN; left out if it is not legal here.
    pub sm: Option<Move>,
}

impl EpdOps {
    /// `hmvc` and `fmvn` taken from the position, the counters FEN carries and EPD drops.
    pub fn counters(pos: &Chess) -> EpdOps {
        EpdOps {
            hmvc: Some(pos.halfmoves()),
            fmvn: Some(pos.fullmoves().get()),
            ..EpdOps::default()
        }
    }
}

/// The EPD clock basetype (§5.2.7): `ddd:hh:mm:ss`, days capped at 999.
fn epd_clock(t: ClockTime) -> String {
    let s = t.secs().min(999 * 86_400 + 86_399);
    format!(
        "{:03}:{:02}:{:02}:{:02}",
        s / 86_400,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60
    )
}

fn is_identifier(s: &str) -> bool {
    (1..=15).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// An EPD string operand: no quotes inside, under 256 bytes.
fn epd_string(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let c = match c {
            '"' => '\'',
            c if c.is_control() => ' ',
            c => c,
        };
        if out.len() + c.len_utf8() > 255 {
            break;
        }
        out.push(c);
    }
    out
}

/// The four EPD fields of `pos` followed by the operations in `ops`. The en passant square is
/// written whenever the last move was a double pawn push, as §4.4 says.
pub fn epd(pos: &Chess, ops: &EpdOps) -> String {
    let mut out = Epd::from_position(pos, EnPassantMode::Always).to_string();
    // `write!` to a String cannot fail; the results are ignored for that reason.
    if let Some((white, black)) = ops.cc {
        let _ = write!(out, " cc {} {};", epd_clock(white), epd_clock(black));
    }
    if let Some(n) = ops.fmvn {
        let _ = write!(out, " fmvn {n};");
    }
    if let Some(n) = ops.hmvc {
        let _ = write!(out, " hmvc {n};");
    }
    if let Some(id) = &ops.id {
        let _ = write!(out, " id \"{}\";", epd_string(id));
    }
    let pairs: Vec<String> = ops
        .ptp
        .iter()
        .filter(|(name, _)| is_identifier(name))
        .map(|(name, value)| format!("{name} \"{}\"", epd_string(value)))
        .collect();
    if !pairs.is_empty() {
        let _ = write!(out, " ptp {};", pairs.join(" "));
    }
    if let Some(m) = ops.sm
        && pos.is_legal(m)
    {
        let _ = write!(out, " sm {};", SanPlus::from_move(pos.clone(), m));
    }
    out
}

/// One EPD line for each position of a game, in order: the start and the position after
/// each move (`final_only`: the last only). Each carries `id` (`"{id} ply N"`), `hmvc` and
/// `fmvn`, `sm` (the move played from it) and, where the game has clocks, `cc`: the time each
/// side had used — the sum of its moves' `[%emt]`, or, where a move has none, what its
/// `[%clk]` says was used of the time the game's `[TimeControl]` gave so far. A side whose
/// use is not known (a move with neither) has no `cc` from there on: never a guess.
pub fn game_epds(game: &crate::game::Game, id: &str, final_only: bool) -> Vec<String> {
    let tc = game
        .tags
        .get("TimeControl")
        .and_then(|t| {
            t.parse::<crate::time_control::TimeControl>()
                .ok()
                .or_else(|| crate::time_control::TimeControl::from_free_text(t))
        })
        .filter(|t| t.initial_ms().is_some());
    let clocks = game
        .moves
        .iter()
        .any(|m| m.emt.is_some() || (m.clk.is_some() && tc.is_some()));
    let mut out = Vec::new();
    let mut pos = game.start.clone();
    // Per side (White, Black): time used so far, and moves made.
    let mut used: [Option<u64>; 2] = [Some(0), Some(0)];
    let mut made: [u32; 2] = [0, 0];
    // Time the control had given each side so far (its start, plus what each move added).
    let initial = tc.as_ref().and_then(|t| t.initial_ms()).unwrap_or(0);
    let mut given: [u64; 2] = [initial, initial];
    for i in 0..=game.moves.len() {
        let next = game.moves.get(i);
        if !final_only || next.is_none() {
            let mut ops = EpdOps::counters(&pos);
            ops.id = Some(format!("{id} ply {i}"));
            ops.sm = next.map(|m| m.mv);
            if clocks && let [Some(w), Some(b)] = used {
                ops.cc = Some((ClockTime(w), ClockTime(b)));
            }
            out.push(epd(&pos, &ops));
        }
        let Some(m) = next else { break };
        let side = usize::from(pos.turn().is_black());
        made[side] += 1;
        if let Some(t) = &tc {
            given[side] += t.added_after_move(made[side]).total_ms();
        }
        used[side] = match (used[side], m.emt, m.clk, &tc) {
            (Some(u), Some(e), _, _) => Some(u + e.0),
            (_, None, Some(clk), Some(_)) => Some(given[side].saturating_sub(clk.0)),
            _ => None,
        };
        pos.play_unchecked(m.mv);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::san::San;
    use shakmaty::{Role, Square};

    fn play(sans: &[&str]) -> Chess {
        let mut pos = Chess::default();
        for s in sans {
            let m = s.parse::<San>().expect("san").to_move(&pos).expect("legal");
            pos.play_unchecked(m);
        }
        pos
    }

    fn check(input: (&Chess, &EpdOps), expected: &str) {
        assert_eq!(epd(input.0, input.1), expected);
    }

    #[test]
    fn fen_of_known_positions() {
        assert_eq!(
            fen(&Chess::default()),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
        );
        // No black pawn can take on e3, so FEN leaves the square out; EPD (§4.4) writes it.
        let pos = play(&["e4"]);
        assert_eq!(
            fen(&pos),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        );
        check(
            (&pos, &EpdOps::default()),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3",
        );
    }

    #[test]
    fn epd_with_every_opcode() {
        let pos = play(&["e4", "e5", "Nf3", "Nc6", "Bb5"]);
        let nf6 = "Nf6"
            .parse::<San>()
            .expect("san")
            .to_move(&pos)
            .expect("legal");
        let ops = EpdOps {
            cc: Some((ClockTime(125_900), ClockTime(3_723_000))),
            ptp: vec![
                ("Event".into(), "Tata Steel \"Masters\"".into()),
                ("White".into(), "So, Wesley".into()),
                ("LiveChessVersion".into(), "1.4.8".into()), // 16 characters: not an identifier
            ],
            sm: Some(nf6),
            ..EpdOps::counters(&pos)
        };
        check(
            (&pos, &ops),
            "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - \
             cc 000:00:02:05 000:01:02:03; fmvn 3; hmvc 3; \
             ptp Event \"Tata Steel 'Masters'\" White \"So, Wesley\"; sm Nf6;",
        );
    }

    #[test]
    fn epd_details() {
        // Check mark on the supplied move; an illegal supplied move is left out.
        let pos = play(&["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6"]);
        let mate = "Qxf7"
            .parse::<San>()
            .expect("san")
            .to_move(&pos)
            .expect("legal");
        let ops = EpdOps {
            sm: Some(mate),
            ..EpdOps::default()
        };
        assert!(epd(&pos, &ops).ends_with(" sm Qxf7#;"));
        // Black's pawn move while White is to move.
        let illegal = Move::Normal {
            role: Role::Pawn,
            from: Square::D7,
            capture: None,
            to: Square::D5,
            promotion: None,
        };
        let ops = EpdOps {
            sm: Some(illegal),
            ..EpdOps::default()
        };
        assert!(!epd(&pos, &ops).contains("sm"));

        assert_eq!(epd_clock(ClockTime(0)), "000:00:00:00");
        assert_eq!(epd_clock(ClockTime(90_061_999)), "001:01:01:01");
        assert_eq!(epd_clock(ClockTime(u64::MAX)), "999:23:59:59");
        assert_eq!(epd_string(&"é".repeat(200)).len(), 254);
    }
}
