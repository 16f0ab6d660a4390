//! From a stable board reading to what happened in the game: a pure function of the game's
//! moves and the board as read, returning an [`Inference`] — never an error, because a board is
//! mid-move, mis-set or knocked over far more often than it is wrong.

use shakmaty::{Board, Chess, Color, Move, Position, Square};

/// What a stable board says about the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inference {
    /// The board shows the game's position.
    Unchanged,
    /// One legal move from the game's position.
    Move(Move),
    /// The last move was not what it seemed: this move, from the position before it, replaces
    /// it (a rook placed before the king in castling, a slid piece that stopped early).
    Correction(Move),
    /// The board shows the position after `ply` moves: the later moves were taken back.
    Takeback { ply: usize },
    /// Several moves happened while the board could not be read; this is the only sequence of
    /// legal moves (up to the bridging limit) that leads to the board.
    Bridge(Vec<Move>),
    /// What the board went through since the game's position was last confirmed explains the
    /// still board: keep the first `keep` moves of the game and play `moves` after them (the
    /// last move corrected, then more moves, all seen on the board even if it never stood
    /// still in between).
    Rewrite { keep: usize, moves: Vec<Move> },
    /// Both kings stand on the centre squares: the players' way of stating a result.
    KingsInCentre(crate::game::GameResult),
    /// Nothing explains the board (`candidates` = 0) or more than one sequence of moves does.
    OutOfSync { candidates: usize },
}

/// The game as the inference needs it: the positions after 0..=n moves and the moves.
#[derive(Debug)]
pub struct History<'a> {
    pub positions: &'a [Chess],
    pub moves: &'a [Move],
    /// Moves the clock says were made since the last recorded one (lever presses not yet
    /// matched to a move); 0 when unknown. A board equal to an earlier position is then read as
    /// moves played forward (a piece going back and forth), not as a takeback.
    pub presses_ahead: usize,
    /// The longest run of moves the evidence allows to fill in: with a running clock that was
    /// read all along, one more than the presses ahead (the last mover may not have pressed
    /// yet); after missed readings or without a clock, the configured limit. This keeps a
    /// piece held in the hand (the board one piece short) from being read as a capture
    /// sequence.
    pub bridge_limit: usize,
    /// Every board the readings showed since the game's position was last confirmed, in order
    /// (transient ones included).
    pub seen: &'a [Board],
}

/// Follows the boards seen, from the position before the last move: each board that a legal
/// move explains is taken as that move; one that another move from the position before
/// explains replaces the last move; one equal to a position of the walk goes back to it;
/// anything else is a hand in the way. The walk counts only if it ends on `target`.
fn walk(history: &History<'_>, target: &Board) -> Option<(usize, Vec<Move>)> {
    let n = history.positions.len().checked_sub(1)?;
    let keep = n.saturating_sub(1);
    let mut positions: Vec<Chess> = history.positions[keep..].to_vec();
    let mut moves: Vec<Move> = history.moves[keep..].to_vec();
    for b in history.seen {
        let Some(cur) = positions.last() else { break };
        if cur.board() == b {
            continue;
        }
        if let Some(m) = cur
            .legal_moves()
            .into_iter()
            .find(|m| after(cur, *m).board() == b)
        {
            positions.push(after(cur, m));
            moves.push(m);
            continue;
        }
        if positions.len() >= 2 {
            let prev = &positions[positions.len() - 2];
            if let Some(m) = prev
                .legal_moves()
                .into_iter()
                .find(|m| after(prev, *m).board() == b)
            {
                let next = after(prev, m);
                if let (Some(p), Some(last)) = (positions.last_mut(), moves.last_mut()) {
                    *p = next;
                    *last = m;
                }
                continue;
            }
        }
        if let Some(k) = positions.iter().position(|p| p.board() == b) {
            positions.truncate(k + 1);
            moves.truncate(k);
        }
    }
    let end = positions.last()?;
    (end.board() == target && moves.as_slice() != &history.moves[keep..]).then_some((keep, moves))
}

const CENTRE: [Square; 4] = [Square::D4, Square::E4, Square::D5, Square::E5];

/// The result the kings gesture states, if both kings stand in the centre (dgt-protocol.md
/// §12.3): both on the light squares d5/e4 = 1-0, both on the dark e5/d4 = 0-1, one on each =
/// draw. Any two centre squares touch, so kings there can never be a legal position: the
/// gesture cannot be mistaken for a move.
pub fn kings_gesture(board: &Board) -> Option<crate::game::GameResult> {
    use crate::game::GameResult;
    let wk = board.king_of(Color::White)?;
    let bk = board.king_of(Color::Black)?;
    if !CENTRE.contains(&wk) || !CENTRE.contains(&bk) {
        return None;
    }
    let light = |s: Square| s == Square::D5 || s == Square::E4;
    Some(match (light(wk), light(bk)) {
        (true, true) => GameResult::WhiteWins,
        (false, false) => GameResult::BlackWins,
        _ => GameResult::Draw,
    })
}

fn after(pos: &Chess, m: Move) -> Chess {
    let mut p = pos.clone();
    p.play_unchecked(m);
    p
}

/// Counts pieces per colour: a move removes at most one piece, so it bounds the search.
fn material(board: &Board) -> (u32, u32) {
    (board.white().count() as u32, board.black().count() as u32)
}

/// Sequences of exactly `depth` legal moves from `pos` that end on `target`, stopping after
/// `limit` are found.
fn sequences(
    pos: &Chess,
    target: &Board,
    depth: usize,
    limit: usize,
    out: &mut Vec<Vec<Move>>,
    path: &mut Vec<Move>,
) {
    if out.len() >= limit {
        return;
    }
    if depth == 0 {
        if pos.board() == target {
            out.push(path.clone());
        }
        return;
    }
    // Pieces never come back: a side with fewer pieces than the target cannot reach it.
    let (w, b) = material(pos.board());
    let (tw, tb) = material(target);
    if w < tw || b < tb || (w - tw) + (b - tb) > depth as u32 {
        return;
    }
    for m in pos.legal_moves() {
        path.push(m);
        sequences(&after(pos, m), target, depth - 1, limit, out, path);
        path.pop();
        if out.len() >= limit {
            return;
        }
    }
}

/// What `board` (real squares) means for the game in `history`. `max_bridge` is the longest
/// run of missed moves to look for.
pub fn infer(history: &History<'_>, board: &Board, max_bridge: usize) -> Inference {
    let Some(pos) = history.positions.last() else {
        return Inference::OutOfSync { candidates: 0 };
    };
    if pos.board() == board {
        // Back where it was, but maybe by way of moves: a repetition (Qd4 Qd6 Qe4+ Qe6 Qd4)
        // played so fast the board never stood still on the way.
        if let Some((keep, moves)) = walk(history, board) {
            return Inference::Rewrite { keep, moves };
        }
        return Inference::Unchanged;
    }
    if let Some(result) = kings_gesture(board) {
        return Inference::KingsInCentre(result);
    }
    // Several lever presses since the last move, and the boards seen on the way walk that
    // many moves: believe the walk before a single move that explains the end board alone (a
    // repetition played within one bus poll, Ke2 Qc2+ Kf3 Qc3+ Ke2, ends one move from its
    // start).
    if history.presses_ahead >= 2
        && let Some((keep, moves)) = walk(history, board)
        && moves.len() >= (history.positions.len() - 1 - keep) + 2
    {
        return Inference::Rewrite { keep, moves };
    }
    // One move: distinct moves give distinct boards (promotions differ by the piece placed).
    if let Some(m) = pos
        .legal_moves()
        .into_iter()
        .find(|m| after(pos, *m).board() == board)
    {
        return Inference::Move(m);
    }
    if (2..=max_bridge).contains(&history.presses_ahead) {
        let mut found = Vec::new();
        sequences(
            pos,
            board,
            history.presses_ahead,
            2,
            &mut found,
            &mut Vec::new(),
        );
        if found.len() == 1 {
            return Inference::Bridge(found.remove(0));
        }
    }
    let n = history.positions.len() - 1;
    // The boards seen on the way: fast play where no board stood still between moves.
    if let Some((keep, moves)) = walk(history, board) {
        return Inference::Rewrite { keep, moves };
    }
    // Another move instead of the last one. Checked before takebacks: when a piece that just
    // moved lands on a square that recreates an earlier position (a rook going back where it
    // stood two moves ago), the player finished their move; they did not take two back.
    if n >= 1 {
        let prev = &history.positions[n - 1];
        let last = history.moves[n - 1];
        if let Some(m) = prev
            .legal_moves()
            .into_iter()
            .find(|m| *m != last && after(prev, *m).board() == board)
        {
            return Inference::Correction(m);
        }
    }
    // An earlier position: moves taken back (latest match first, so a repetition goes back
    // as little as possible).
    if let Some(ply) = (0..n)
        .rev()
        .find(|&k| history.positions[k].board() == board)
    {
        return Inference::Takeback { ply };
    }
    // Missed readings: the unique sequence of 2..=max_bridge moves.
    for depth in 2..=max_bridge.min(history.bridge_limit) {
        let mut found = Vec::new();
        sequences(pos, board, depth, 2, &mut found, &mut Vec::new());
        match found.len() {
            0 => continue,
            1 => return Inference::Bridge(found.remove(0)),
            n => return Inference::OutOfSync { candidates: n },
        }
    }
    Inference::OutOfSync { candidates: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::san::San;

    /// Plays SAN moves from the start, returning positions and moves.
    fn game(sans: &str) -> (Vec<Chess>, Vec<Move>) {
        let mut positions = vec![Chess::default()];
        let mut moves = Vec::new();
        for s in sans.split_whitespace() {
            let pos = positions.last().cloned().unwrap_or_default();
            let m = s.parse::<San>().expect("san").to_move(&pos).expect("legal");
            positions.push(after(&pos, m));
            moves.push(m);
        }
        (positions, moves)
    }

    fn board_after(sans: &str) -> Board {
        game(sans)
            .0
            .last()
            .map(|p| p.board().clone())
            .unwrap_or_default()
    }

    fn check(played: &str, board_shows: &str, expected: &str) {
        let (positions, moves) = game(played);
        let got = infer(
            &History {
                positions: &positions,
                moves: &moves,
                presses_ahead: 0,
                bridge_limit: 3,
                seen: &[],
            },
            &board_after(board_shows),
            3,
        );
        let pos = positions.last().cloned().unwrap_or_default();
        let shown = match &got {
            Inference::Move(m) => format!("move {}", San::from_move(&pos, *m)),
            Inference::Correction(m) => {
                format!(
                    "correction {}",
                    San::from_move(&positions[positions.len() - 2], *m)
                )
            }
            Inference::Bridge(ms) => {
                let mut p = pos.clone();
                let s: Vec<String> = ms
                    .iter()
                    .map(|m| {
                        let san = San::from_move(&p, *m).to_string();
                        p.play_unchecked(*m);
                        san
                    })
                    .collect();
                format!("bridge {}", s.join(" "))
            }
            other => format!("{other:?}"),
        };
        assert_eq!(
            shown, expected,
            "played {played:?}, board shows {board_shows:?}"
        );
    }

    #[test]
    fn moves_takebacks_corrections_bridges() {
        check("e4 e5", "e4 e5", "Unchanged");
        check("e4 e5", "e4 e5 Nf3", "move Nf3");
        check("e4 e5 Nf3 Nc6", "e4 e5", "Takeback { ply: 2 }");
        check("e4 e5 Nf3 Nc6", "", "Takeback { ply: 0 }");
        // e3 seen first (a slid pawn that had not arrived yet), then e4.
        check("e3", "e4", "correction e4");
        // Rook-first castling: Rf1 is a legal move of its own, then the king arrives.
        check(
            "e4 e5 Nf3 Nc6 Bc4 Bc5 Rf1",
            "e4 e5 Nf3 Nc6 Bc4 Bc5 O-O",
            "correction O-O",
        );
        check("e4", "e4 e5 Nf3", "bridge e5 Nf3");
        // Black's two moves depend on each other, so only one order exists.
        check("e4", "e4 e5 Nf3 Qe7", "bridge e5 Nf3 Qe7");
        check("e4", "e4 e5 Nf3 Nc6", "OutOfSync { candidates: 2 }");
        // Transposition: two orders reach the board, so nobody can say which was played.
        check("", "Nf3 Nf6 Nc3", "OutOfSync { candidates: 2 }");
        check("", "e4 e5 Nf3 Nc6 Bb5", "OutOfSync { candidates: 0 }");
        // Promotions, including under-promotion, are told apart by the piece placed.
        let pre = "e4 d5 exd5 c6 dxc6 Qb6 cxb7 Qc6";
        check(pre, &format!("{pre} bxa8=N"), "move bxa8=N");
        check(pre, &format!("{pre} bxa8=Q"), "move bxa8=Q");
        // En passant.
        check("e4 a6 e5 d5", "e4 a6 e5 d5 exd6", "move exd6");
    }

    #[test]
    fn clock_presses_tell_a_repetition_from_a_takeback() {
        let (positions, moves) = game("e4 e5 Nf3 Nf6 Ng1");
        let board = board_after("e4 e5 Nf3 Nf6 Ng1 Ng8");
        let history = |presses_ahead| History {
            positions: &positions,
            moves: &moves,
            presses_ahead,
            bridge_limit: 3,
            seen: &[],
        };
        // Black's knight went back: one move, whatever the clock says.
        assert!(matches!(infer(&history(0), &board, 3), Inference::Move(_)));
        let (positions, moves) = game("e4 e5 Nf3 Nf6");
        let history = |presses_ahead| History {
            positions: &positions,
            moves: &moves,
            presses_ahead,
            bridge_limit: 3,
            seen: &[],
        };
        // Both knights went back: without clock evidence a takeback, with two presses two moves.
        assert_eq!(
            infer(&history(0), &board, 3),
            Inference::Takeback { ply: 2 }
        );
        assert!(matches!(infer(&history(2), &board, 3), Inference::Bridge(ms) if ms.len() == 2));
    }

    #[test]
    fn boards_seen_on_the_way_resolve_what_still_boards_cannot() {
        let (positions, moves) = game("e4 e5");
        // Nf3 Nc6 Bb5 and Nc6 Nf3 Bb5 reach the same board; the readings saw the first order.
        let seen: Vec<Board> = ["e4 e5 Nf3", "e4 e5 Nf3 Nc6", "e4 e5 Nf3 Nc6 Bb5"]
            .iter()
            .map(|s| board_after(s))
            .collect();
        let h = History {
            positions: &positions,
            moves: &moves,
            presses_ahead: 0,
            bridge_limit: 3,
            seen: &seen,
        };
        let Inference::Rewrite { keep, moves: got } =
            infer(&h, &board_after("e4 e5 Nf3 Nc6 Bb5"), 3)
        else {
            panic!("expected a rewrite")
        };
        assert_eq!(
            (keep, got.len()),
            (1, 4),
            "keeps e4, replays e5 Nf3 Nc6 Bb5"
        );
        // A rook slid past its square and the next move came before the board stood still.
        let (positions, moves) = game("e4 e5 Nf3 Nc6 Bc4 Bc5 Rf1");
        let seen: Vec<Board> = ["e4 e5 Nf3 Nc6 Bc4 Bc5 O-O", "e4 e5 Nf3 Nc6 Bc4 Bc5 O-O Nf6"]
            .iter()
            .map(|s| board_after(s))
            .collect();
        let h = History {
            positions: &positions,
            moves: &moves,
            presses_ahead: 0,
            bridge_limit: 3,
            seen: &seen,
        };
        let Inference::Rewrite { keep, moves: got } =
            infer(&h, &board_after("e4 e5 Nf3 Nc6 Bc4 Bc5 O-O Nf6"), 3)
        else {
            panic!("expected a rewrite")
        };
        assert_eq!((keep, got.len()), (6, 2), "O-O replaces Rf1, then Nf6");
    }

    #[test]
    fn a_fast_repetition_is_moves_and_a_fidget_is_nothing() {
        let (positions, moves) = game("e4 e5 Nf3 Nf6");
        let target = board_after("e4 e5 Nf3 Nf6");
        let seen: Vec<Board> = [
            "e4 e5 Nf3 Nf6 Ng1",
            "e4 e5 Nf3 Nf6 Ng1 Ng8",
            "e4 e5 Nf3 Nf6 Ng1 Ng8 Nf3",
            "e4 e5 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6",
        ]
        .iter()
        .map(|s| board_after(s))
        .collect();
        let h = History {
            positions: &positions,
            moves: &moves,
            presses_ahead: 0,
            bridge_limit: 3,
            seen: &seen,
        };
        assert!(
            matches!(infer(&h, &target, 3), Inference::Rewrite { keep: 3, moves } if moves.len() == 5)
        );
        // A knight put on a square and straight back: not a move.
        let seen: Vec<Board> = ["e4 e5 Nf3 Nf6 Ng5", "e4 e5 Nf3 Nf6"]
            .iter()
            .map(|s| board_after(s))
            .collect();
        let h = History {
            positions: &positions,
            moves: &moves,
            presses_ahead: 0,
            bridge_limit: 3,
            seen: &seen,
        };
        assert_eq!(infer(&h, &target, 3), Inference::Unchanged);
    }

    #[test]
    fn presses_for_several_moves_prefer_the_walk_to_one_move() {
        // Nf6 Ng1 Ng8 Nf3 Nf6 within one bus poll ends one move (Nf6) from the game.
        let (positions, moves) = game("e4 e5 Nf3");
        let target = board_after("e4 e5 Nf3 Nf6");
        let seen: Vec<Board> = [
            "e4 e5 Nf3 Nf6",
            "e4 e5 Nf3 Nf6 Ng1",
            "e4 e5 Nf3 Nf6 Ng1 Ng8",
            "e4 e5 Nf3 Nf6 Ng1 Ng8 Nf3",
            "e4 e5 Nf3 Nf6 Ng1 Ng8 Nf3 Nf6",
        ]
        .iter()
        .map(|s| board_after(s))
        .collect();
        let mut h = History {
            positions: &positions,
            moves: &moves,
            presses_ahead: 5,
            bridge_limit: 3,
            seen: &seen,
        };
        assert!(
            matches!(infer(&h, &target, 3), Inference::Rewrite { keep: 2, moves } if moves.len() == 6)
        );
        // Without the presses, the board alone is one move.
        h.presses_ahead = 1;
        assert!(matches!(infer(&h, &target, 3), Inference::Move(_)));
    }

    #[test]
    fn kings_in_the_centre() {
        use crate::game::GameResult;
        let fen = |f: &str| {
            f.parse::<shakmaty::fen::Fen>()
                .expect("fen")
                .as_setup()
                .board
                .clone()
        };
        assert_eq!(
            kings_gesture(&fen("8/8/8/3K4/4k3/8/8/8 w - - 0 1")),
            Some(GameResult::WhiteWins)
        );
        assert_eq!(
            kings_gesture(&fen("8/8/8/4k3/3K4/8/8/8 w - - 0 1")),
            Some(GameResult::BlackWins)
        );
        assert_eq!(
            kings_gesture(&fen("8/8/8/3Kk3/8/8/8/8 w - - 0 1")),
            Some(GameResult::Draw)
        );
        assert_eq!(kings_gesture(&fen("8/8/8/3K4/8/4k3/8/8 w - - 0 1")), None);
    }
}
