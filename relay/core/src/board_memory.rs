//! Games read back from a board's own memory (dgt-protocol.md §9.6).
//!
//! Every DGT e-board logs each square's new state and, at each lever press, the halted
//! clock's time, whether or not a computer reads it. This module replays such a log: it
//! keeps the board as the records leave it, starts a game at each start-position marker, and
//! follows the game the way a still board is read live, but with the log's own order in
//! place of time: a board one legal move on from the game is that move, a board that undoes
//! the last move before its press takes it back (a piece slid, a move changed before the
//! press), a board one legal move on from the position before an unpressed move replaces it
//! (rook-first castling, a slide stopped early), and a lever press confirms the last move and
//! gives it its clock. Boards that are none of these (pieces in the hand, a capture half
//! made) change nothing. It never invents: a move comes only from a board the log shows, a
//! clock only from a clock record.
//!
//! [`recover`] finds where a game already recorded ends in the log, by position (the log's
//! game must begin with the recorded moves), and returns the moves after it; [`games`] lists
//! every game the log holds (`relay board-memory`).

use crate::clock_time::ClockTime;
use crate::game::Game;
use crate::recorder::ColorName;
use boards::protocol::{ClockSide, EeRecord, Orientation, Placement};
use shakmaty::uci::UciMove;
use shakmaty::{Board, CastlingMode, Chess, Color, Move, Position};

/// A move the log shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedMove {
    pub mv: Move,
    pub uci: String,
    /// The mover's clock after the move, from the clock record its press wrote; `None` when
    /// the log has no record for it (a very fast move may skip it, a board with no clock).
    pub clk: Option<ClockTime>,
    pub color: ColorName,
}

/// A game the log holds, from a start-position marker.
#[derive(Clone, Debug)]
pub struct LoggedGame {
    pub orientation: Orientation,
    pub start: Chess,
    pub moves: Vec<LoggedMove>,
    /// Some clock record of the game went to a move: a clock was in use, so moves after the
    /// last pressed one were not finished when the log ends (or were the board being reset).
    pub clocked: bool,
    /// Which record the game's marker is.
    pub from_record: usize,
}

impl LoggedGame {
    /// The moves that stand: every move another move was made on, and the last one when its
    /// press is in the log (or no clock was used). A last move without its press was still
    /// being made when the log was read (the live reading takes it from there), or was the
    /// board being cleared after the game.
    pub fn settled_moves(&self) -> &[LoggedMove] {
        match self.moves.last() {
            Some(m) if self.clocked && m.clk.is_none() => &self.moves[..self.moves.len() - 1],
            _ => &self.moves,
        }
    }

    /// As a game (settled moves only, each with its clock where the log has one).
    pub fn to_game(&self) -> Game {
        let mut g = Game {
            start: self.start.clone(),
            ..Game::default()
        };
        for m in self.settled_moves() {
            g.push(m.mv, m.clk, None);
        }
        g
    }
}

/// Follows one game through the log's boards.
struct Follower {
    game: LoggedGame,
    positions: Vec<Chess>,
    /// For each move, whether a lever press (or a later move) confirmed it.
    confirmed: Vec<bool>,
    /// Which colour each clock side (left, right) belongs to, once a press said so.
    side_colour: [Option<Color>; 2],
}

/// How many squares differ between two boards.
fn changed(a: &Board, b: &Board) -> usize {
    (a.occupied() ^ b.occupied()).count()
        + (a.occupied() & b.occupied())
            .into_iter()
            .filter(|&sq| a.piece_at(sq) != b.piece_at(sq))
            .count()
}

fn side_index(side: ClockSide) -> usize {
    usize::from(side == ClockSide::Right)
}

impl Follower {
    fn new(orientation: Orientation, from_record: usize) -> Follower {
        Follower {
            game: LoggedGame {
                orientation,
                start: Chess::default(),
                moves: Vec::new(),
                clocked: false,
                from_record,
            },
            positions: vec![Chess::default()],
            confirmed: Vec::new(),
            side_colour: [None, None],
        }
    }

    fn last(&self) -> &Chess {
        // `positions` always holds the start.
        &self.positions[self.positions.len() - 1]
    }

    /// The legal move from `pos` that leaves `board`.
    fn move_to(pos: &Chess, board: &Board) -> Option<Move> {
        // A move changes two squares (three en passant, four castling) and takes at most one
        // piece: a board in the middle of a move (a piece in the hand) is passed over without
        // trying every move.
        let fewer = pos.board().occupied().count() as i64 - board.occupied().count() as i64;
        if !(2..=4).contains(&changed(pos.board(), board)) || !(0..=1).contains(&fewer) {
            return None;
        }
        pos.legal_moves().into_iter().find(|m| {
            let mut p = pos.clone();
            p.play_unchecked(*m);
            p.board() == board
        })
    }

    fn board(&mut self, placement: &Placement) {
        let board = placement.to_board(self.game.orientation);
        if self.last().board() == &board {
            return;
        }
        let open = self.confirmed.last() == Some(&false);
        let n = self.positions.len();
        if open && self.positions[n - 2].board() == &board {
            // The last move was undone before its press.
            self.positions.pop();
            self.confirmed.pop();
            self.game.moves.pop();
            return;
        }
        if let Some(mv) = Follower::move_to(self.last(), &board) {
            if let Some(c) = self.confirmed.last_mut() {
                *c = true;
            }
            self.push(mv);
        } else if open && let Some(mv) = Follower::move_to(&self.positions[n - 2], &board) {
            self.positions.pop();
            self.confirmed.pop();
            self.game.moves.pop();
            self.push(mv);
        } else if let Some((first, second)) = Follower::bridge(self.last(), &board) {
            // Two moves whose boards the log does not show apart: a piece captured on the
            // square where the last record (overwritten while one square kept changing, its
            // press too fast to log) had it. Only when one pair of moves leads there.
            if let Some(c) = self.confirmed.last_mut() {
                *c = true;
            }
            self.push(first);
            if let Some(c) = self.confirmed.last_mut() {
                *c = true;
            }
            self.push(second);
        }
    }

    /// The one pair of legal moves from `pos` that leaves `board`, if exactly one does.
    fn bridge(pos: &Chess, board: &Board) -> Option<(Move, Move)> {
        // Two moves change three squares at least and leave at most two pieces fewer; a
        // board in the middle of a move (a piece in the hand) is passed over cheaply.
        let fewer = pos.board().occupied().count() as i64 - board.occupied().count() as i64;
        if !(3..=8).contains(&changed(pos.board(), board)) || !(0..=2).contains(&fewer) {
            return None;
        }
        let mut found = None;
        for first in pos.legal_moves() {
            let mut p = pos.clone();
            p.play_unchecked(first);
            if let Some(second) = Follower::move_to(&p, board) {
                if found.is_some() {
                    return None;
                }
                found = Some((first, second));
            }
        }
        found
    }

    fn push(&mut self, mv: Move) {
        let mut pos = self.last().clone();
        let color = ColorName::from(pos.turn());
        let uci = UciMove::from_move(mv, CastlingMode::Standard).to_string();
        pos.play_unchecked(mv);
        self.positions.push(pos);
        self.confirmed.push(false);
        self.game.moves.push(LoggedMove {
            mv,
            uci,
            clk: None,
            color,
        });
    }

    /// A lever press halted `side` at `seconds`: it ends the last move when that move is
    /// still open and the side is its mover's.
    fn press(&mut self, side: ClockSide, seconds: u32) {
        if self.confirmed.last() != Some(&false) {
            return;
        }
        let Some(last) = self.game.moves.last_mut() else {
            return;
        };
        let colour = if last.color == ColorName::White {
            Color::White
        } else {
            Color::Black
        };
        let i = side_index(side);
        if self.side_colour[i].is_some_and(|c| c != colour) {
            // The other player's lever: not the press that ends this move.
            return;
        }
        self.side_colour[i] = Some(colour);
        self.side_colour[1 - i] = Some(!colour);
        last.clk = Some(ClockTime::from_secs(u64::from(seconds)));
        self.game.clocked = true;
        if let Some(c) = self.confirmed.last_mut() {
            *c = true;
        }
    }
}

/// Every game the log holds, oldest first: each from a start-position marker (normal or
/// rotated) to the next one or the end of the log.
///
/// The board as the records leave it is known from the first marker that fixes every
/// square (power-up and start-game tags, which list every piece after them; the
/// start-position and empty-board markers); records before it (the oldest, perhaps cut in
/// two where the cyclic log was overwritten) are passed over.
pub fn games(records: &[EeRecord]) -> Vec<LoggedGame> {
    starts(records)
        .into_iter()
        .map(|(i, o)| follow_game(records, i, o))
        .collect()
}

/// Where the log's games begin: each start-position marker, with the way the board lies.
fn starts(records: &[EeRecord]) -> Vec<(usize, Orientation)> {
    let end = records
        .iter()
        .position(|r| *r == EeRecord::EndOfFile)
        .unwrap_or(records.len());
    records[..end]
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match r {
            EeRecord::BeginPosition => Some((i, Orientation::Normal)),
            EeRecord::BeginPositionRotated => Some((i, Orientation::Rotated)),
            _ => None,
        })
        .collect()
}

/// The game the marker at `from` begins, to the next marker or the end of the log. The
/// marker fixes every square (the start position), so each game is read on its own.
fn follow_game(records: &[EeRecord], from: usize, orientation: Orientation) -> LoggedGame {
    let mut placement = Placement::from_board(&Board::default(), orientation);
    let mut f = Follower::new(orientation, from);
    for r in records.iter().skip(from + 1) {
        match *r {
            EeRecord::PowerUp | EeRecord::StartTag | EeRecord::EmptyBoard => {
                // Every piece present follows (none, for an empty board).
                placement = Placement::default();
            }
            EeRecord::BeginPosition | EeRecord::BeginPositionRotated | EeRecord::EndOfFile => {
                break;
            }
            EeRecord::Field { square, piece, .. } => {
                placement.set(square, piece);
                f.board(&placement);
            }
            EeRecord::Clock { side, seconds } => f.press(side, seconds),
            _ => {}
        }
    }
    f.game
}

/// What the log says about a game already recorded up to some ply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// The log holds the game: its moves after the recorded ones (none when nothing was
    /// missed), up to the last one a lever press confirmed.
    Continues {
        /// The ply of the first move returned (the recorded game's length + 1).
        first_ply: usize,
        moves: Vec<LoggedMove>,
        /// Plies among `moves` whose clock the log did not record.
        without_clock: Vec<usize>,
    },
    /// The log cannot say: why, in words for the arbiter.
    Unknown { why: String },
}

/// Finds the game that starts at `start` with the moves `recorded` (UCI) in the log, and
/// returns what followed them. `orientation`, when known, is how the board lies.
pub fn recover(
    start: &Chess,
    recorded: &[String],
    orientation: Option<Orientation>,
    records: &[EeRecord],
) -> Recovery {
    if *start != Chess::default() {
        return Recovery::Unknown {
            why: "the game began from a set-up position, which the board's memory does not mark"
                .into(),
        };
    }
    let begins = starts(records);
    if begins.is_empty() {
        let wrapped = !records.contains(&EeRecord::PowerUp);
        return Recovery::Unknown {
            why: if wrapped {
                "the board's memory no longer reaches back to the start of this game (its log wrapped)".into()
            } else {
                "the board's memory holds no game from the start position".into()
            },
        };
    }
    let mut longest = 0;
    // The latest game first: it is the one a board in play is playing, and each game is
    // followed only when the later ones did not hold the recorded moves.
    for &(at, o) in begins.iter().rev() {
        if orientation.is_some_and(|want| want != o) {
            continue;
        }
        let g = follow_game(records, at, o);
        let agree = g
            .moves
            .iter()
            .zip(recorded)
            .take_while(|(m, r)| m.uci == **r)
            .count();
        if agree < recorded.len() {
            longest = longest.max(agree);
            continue;
        }
        let settled = g.settled_moves();
        let moves: Vec<LoggedMove> = settled.get(recorded.len()..).unwrap_or_default().to_vec();
        let first_ply = recorded.len() + 1;
        let without_clock = moves
            .iter()
            .enumerate()
            .filter(|(_, m)| m.clk.is_none())
            .map(|(i, _)| first_ply + i)
            .collect();
        return Recovery::Continues {
            first_ply,
            moves,
            without_clock,
        };
    }
    Recovery::Unknown {
        why: format!(
            "the board's memory holds no game that begins with this game's {} plies (the closest agrees on {longest})",
            recorded.len()
        ),
    }
}

/// Follows a game from where its recorded moves leave it through `records` that begin there:
/// a bus board's log of what it did while nothing polled it (the first change poll after a
/// restart or a return). It has no marker to fix the board, so the board it starts from is
/// put together by position: a square the records never touch stands as `now` (the board
/// read right after them) shows it, a square they touch as the recorded game leaves it (a
/// change the last relay took from the board but did not store leaves no ghost piece). A
/// board the moves cannot explain changes nothing; two moves whose boards the records do not
/// show apart are bridged when only one pair leads there. The moves after the recorded ones,
/// to the last one that stands.
pub fn continue_from(
    start: &Chess,
    recorded: &[String],
    orientation: Orientation,
    records: &[EeRecord],
    now: Option<&Placement>,
) -> Recovery {
    match follow_from(start, recorded, orientation, records, now) {
        Ok(f) => continued(&f.game, recorded.len()),
        Err(why) => Recovery::Unknown { why },
    }
}

/// The moves of `game` after its first `recorded`, to the last one that stands.
fn continued(game: &LoggedGame, recorded: usize) -> Recovery {
    let first_ply = recorded + 1;
    let moves: Vec<LoggedMove> = game
        .settled_moves()
        .get(recorded..)
        .unwrap_or_default()
        .to_vec();
    let without_clock = moves
        .iter()
        .enumerate()
        .filter(|(_, m)| m.clk.is_none())
        .map(|(i, _)| first_ply + i)
        .collect();
    Recovery::Continues {
        first_ply,
        moves,
        without_clock,
    }
}

/// The follower of [`continue_from`], after the records.
fn follow_from(
    start: &Chess,
    recorded: &[String],
    orientation: Orientation,
    records: &[EeRecord],
    now: Option<&Placement>,
) -> Result<Follower, String> {
    let mut f = Follower::new(orientation, 0);
    f.game.start = start.clone();
    f.positions = vec![start.clone()];
    for u in recorded {
        let last = f.last().clone();
        let Some(mv) = u
            .parse::<UciMove>()
            .ok()
            .and_then(|m| m.to_move(&last).ok())
        else {
            return Err(format!("the recorded move {u} is not legal in the game"));
        };
        f.push(mv);
        if let Some(c) = f.confirmed.last_mut() {
            *c = true;
        }
    }
    let mut placement = Placement::from_board(f.last().board(), orientation);
    if let Some(now) = now {
        let touched: Vec<boards::protocol::DgtSquare> = records
            .iter()
            .filter_map(|r| match r {
                EeRecord::Field { square, .. } => Some(*square),
                _ => None,
            })
            .collect();
        for sq in boards::protocol::DgtSquare::all() {
            if !touched.contains(&sq) {
                placement.set(sq, now.get(sq));
            }
        }
    }
    for r in records {
        match *r {
            EeRecord::Field { square, piece, .. } => {
                placement.set(square, piece);
                f.board(&placement);
            }
            EeRecord::Clock { side, seconds } => f.press(side, seconds),
            EeRecord::PowerUp | EeRecord::StartTag | EeRecord::EmptyBoard => {
                placement = Placement::default();
            }
            // A new game set up: the rest is that game's.
            EeRecord::BeginPosition | EeRecord::BeginPositionRotated => break,
            _ => {}
        }
    }
    Ok(f)
}

/// A game from the start position that `records` (a bus board's backlog with no game known
/// for the board: relay started after the game began) play out to exactly the board `now`
/// read right after them, in either orientation, with at least one move (perhaps not pressed
/// yet: its settled moves may be none); `None` when they do not (the records began in the
/// middle of a game: the game is joined late instead).
pub fn game_from_start(records: &[EeRecord], now: &Placement) -> Option<LoggedGame> {
    for orientation in [Orientation::Normal, Orientation::Rotated] {
        let Ok(f) = follow_from(&Chess::default(), &[], orientation, records, Some(now)) else {
            continue;
        };
        // Where every move the records show leads (a last one not pressed yet included).
        let leads_there = Placement::from_board(f.last().board(), orientation) == *now;
        if leads_there && !f.game.moves.is_empty() {
            return Some(f.game);
        }
    }
    None
}

/// The game the log's last marker began, when it has settled moves: a game played before
/// anything read the board (relay started late, or a game played with no computer).
pub fn latest_game(records: &[EeRecord]) -> Option<LoggedGame> {
    let (at, o) = *starts(records).last()?;
    Some(follow_game(records, at, o)).filter(|g| !g.settled_moves().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use boards::protocol::{DgtSquare, PieceCode};
    use shakmaty::Square;

    /// Records for moves played cleanly from the start (lift, place, press), White's clock
    /// on the left.
    fn log(ucis: &[&str], press: bool) -> Vec<EeRecord> {
        let o = Orientation::Normal;
        let mut out = vec![EeRecord::PowerUp];
        let mut placement = Placement::default();
        let start = Placement::from_board(&Board::default(), o);
        for sq in DgtSquare::all() {
            if start.get(sq) != PieceCode::Empty {
                placement.set(sq, start.get(sq));
                out.push(EeRecord::Field {
                    square: sq,
                    piece: start.get(sq),
                    quick: true,
                });
            }
        }
        out.push(EeRecord::BeginPosition);
        let mut pos = Chess::default();
        for (i, u) in ucis.iter().enumerate() {
            let mv = u
                .parse::<UciMove>()
                .expect("uci")
                .to_move(&pos)
                .expect("legal");
            pos.play_unchecked(mv);
            let after = Placement::from_board(pos.board(), o);
            for sq in DgtSquare::all() {
                if after.get(sq) != placement.get(sq) && after.get(sq) == PieceCode::Empty {
                    out.push(EeRecord::Field {
                        square: sq,
                        piece: PieceCode::Empty,
                        quick: false,
                    });
                }
            }
            for sq in DgtSquare::all() {
                if after.get(sq) != placement.get(sq) && after.get(sq) != PieceCode::Empty {
                    out.push(EeRecord::Field {
                        square: sq,
                        piece: after.get(sq),
                        quick: false,
                    });
                }
            }
            placement = after;
            if press {
                out.push(EeRecord::Clock {
                    side: if i % 2 == 0 {
                        ClockSide::Left
                    } else {
                        ClockSide::Right
                    },
                    seconds: 5_400 - i as u32,
                });
            }
        }
        out
    }

    /// Where the `n`-th clock record (from 0) of `records` stands.
    fn press_at(records: &[EeRecord], n: usize) -> usize {
        records
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r, EeRecord::Clock { .. }))
            .nth(n)
            .map(|(i, _)| i)
            .expect("a press")
    }

    /// The board after `moves` from the start, as a normal board reports it.
    fn board_after(moves: &[&str]) -> Placement {
        let mut pos = Chess::default();
        for u in moves {
            let mv = u
                .parse::<UciMove>()
                .expect("uci")
                .to_move(&pos)
                .expect("legal");
            pos.play_unchecked(mv);
        }
        Placement::from_board(pos.board(), Orientation::Normal)
    }

    fn ucis(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    const GAME: [&str; 8] = [
        "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1", "f6e4",
    ];

    #[test]
    fn the_moves_after_the_recorded_ones_come_back_with_their_clocks() {
        let records = log(&GAME, true);
        let got = recover(
            &Chess::default(),
            &ucis(&GAME[..3]),
            Some(Orientation::Normal),
            &records,
        );
        let Recovery::Continues {
            first_ply,
            moves,
            without_clock,
        } = got
        else {
            panic!("{got:?}")
        };
        assert_eq!(first_ply, 4);
        let got: Vec<&str> = moves.iter().map(|m| m.uci.as_str()).collect();
        assert_eq!(got, &GAME[3..]);
        assert_eq!(moves[0].clk, Some(ClockTime::from_secs(5_400 - 3)));
        assert!(without_clock.is_empty());
    }

    #[test]
    fn a_game_whose_moves_differ_or_a_wrapped_log_is_said_so() {
        let records = log(&GAME, true);
        let other = recover(&Chess::default(), &ucis(&["d2d4"]), None, &records);
        assert!(matches!(other, Recovery::Unknown { .. }), "{other:?}");
        // The oldest records overwritten: no marker left to start from.
        let cut: Vec<EeRecord> = records[40..].to_vec();
        let Recovery::Unknown { why } = recover(&Chess::default(), &[], None, &cut) else {
            panic!()
        };
        assert!(why.contains("wrapped"), "{why}");
    }

    #[test]
    fn an_unpressed_last_move_is_left_to_the_live_reading_and_a_skipped_record_is_named() {
        let mut records = log(&GAME, true);
        // The last press never happened, and the press of ply 5 was skipped.
        records.pop();
        let fifth = press_at(&records, 4);
        records.remove(fifth);
        let got = recover(&Chess::default(), &ucis(&GAME[..2]), None, &records);
        let Recovery::Continues {
            moves,
            without_clock,
            ..
        } = got
        else {
            panic!("{got:?}")
        };
        assert_eq!(moves.len(), 5, "plies 3-7; ply 8 not pressed yet");
        assert_eq!(without_clock, vec![5]);
        // A run of presses too fast to log: the moves stand, each made on the one before.
        let mut records = log(&GAME, true);
        records.retain(|r| !matches!(r, EeRecord::Clock { seconds, .. } if *seconds < 5_398));
        let Recovery::Continues {
            moves,
            without_clock,
            ..
        } = recover(&Chess::default(), &ucis(&GAME[..2]), None, &records)
        else {
            panic!()
        };
        assert_eq!(moves.len(), 5, "plies 4-7 without clocks; ply 8 still open");
        assert_eq!(without_clock, vec![4, 5, 6, 7]);
    }

    #[test]
    fn a_bus_boards_backlog_continues_the_game_from_where_it_stands() {
        let records = log(&GAME, true);
        // What the board logged after ply 3 (its first three moves were polled before).
        let third = press_at(&records, 2);
        let backlog = &records[third + 1..];
        let got = continue_from(
            &Chess::default(),
            &ucis(&GAME[..3]),
            Orientation::Normal,
            backlog,
            None,
        );
        let Recovery::Continues {
            first_ply, moves, ..
        } = got
        else {
            panic!("{got:?}")
        };
        assert_eq!(first_ply, 4);
        let got: Vec<&str> = moves.iter().map(|m| m.uci.as_str()).collect();
        assert_eq!(got, &GAME[3..]);
        // The last relay took ply 4's lift (b8 emptied) from the board and died before
        // storing the move: the board read after the backlog says b8 is empty, so no ghost
        // knight stays there, and plies 4 and 5 are bridged.
        let fourth = press_at(&records, 3);
        let after_lift = &records[third + 2..];
        let now = board_after(&GAME);
        let got = continue_from(
            &Chess::default(),
            &ucis(&GAME[..3]),
            Orientation::Normal,
            after_lift,
            Some(&now),
        );
        let Recovery::Continues { moves, .. } = got else {
            panic!("{got:?}")
        };
        let got: Vec<&str> = moves.iter().map(|m| m.uci.as_str()).collect();
        assert_eq!(got, &GAME[3..], "{fourth}");
        let blind = continue_from(
            &Chess::default(),
            &ucis(&GAME[..3]),
            Orientation::Normal,
            after_lift,
            None,
        );
        assert!(
            matches!(&blind, Recovery::Continues { moves, .. } if moves.is_empty()),
            "{blind:?}"
        );
    }

    #[test]
    fn a_backlog_from_the_start_position_is_a_game_only_when_it_leads_to_the_board_as_read() {
        let records = log(&GAME, true);
        let begin = records
            .iter()
            .position(|r| *r == EeRecord::BeginPosition)
            .expect("marker");
        let now = board_after(&GAME);
        let g = game_from_start(&records[begin + 1..], &now).expect("a game");
        assert_eq!(g.moves.len(), GAME.len());
        // The last move made and not pressed yet: the game is still found, that move left
        // to the live reading.
        let unpressed = &records[begin + 1..records.len() - 1];
        let g = game_from_start(unpressed, &now).expect("a game");
        assert_eq!(g.settled_moves().len(), GAME.len() - 1);
        // The same records with a board that is not where they lead: no game.
        let other = Placement::from_board(&Board::default(), Orientation::Normal);
        assert!(game_from_start(&records[begin + 1..], &other).is_none());
        // Records that begin in the middle of the game: no game from the start.
        let third = press_at(&records, 2);
        assert!(game_from_start(&records[third + 1..], &now).is_none());
    }

    #[test]
    fn a_slide_and_rook_first_castling_are_read_as_the_moves_they_end_in() {
        let mut records = log(&GAME[..6], true);
        let sq = |s: Square| DgtSquare::from_square(s, Orientation::Normal);
        let p = |c: char| PieceCode::Piece(shakmaty::Piece::from_char(c).expect("piece"));
        let field = |s, piece| EeRecord::Field {
            square: sq(s),
            piece,
            quick: false,
        };
        // Rook first: h1 to f1 (itself a legal move), then the king e1 to g1.
        records.extend([
            field(Square::H1, PieceCode::Empty),
            field(Square::F1, p('R')),
            field(Square::E1, PieceCode::Empty),
            field(Square::G1, p('K')),
            EeRecord::Clock {
                side: ClockSide::Left,
                seconds: 5_000,
            },
        ]);
        let g = latest_game(&records).expect("a game");
        let last = g.moves.last().expect("moves");
        assert_eq!(last.uci, "e1g1");
        assert_eq!(last.clk, Some(ClockTime::from_secs(5_000)));
        assert_eq!(g.to_game().moves.len(), 7);
    }
}
