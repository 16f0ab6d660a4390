//! How a game begins: the start position (standard or Chess960) set up, a board first read in
//! the middle of a game (joined late, the running clock saying whose turn it is), a stored game
//! carried on after a restart, and an arbiter continuing from the position on the board.

use super::clocks::{Clocks, START_VOTE};
use super::outcome::{Outcome, RecorderConfig};
use super::phase::{BoardRead, LateBoard, Phase};
use super::state::Recorder;
use crate::game::{Game, GameResult};
use boards::protocol::{Orientation, Placement};
use shakmaty::fen::Fen;
use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, Position, Setup, Square,
};

/// The most plies taken back to the start position as a false start; the start position
/// after a longer game is the next game.
const MAX_FALSE_START: usize = 2;

/// The Chess960 start position `board` is, if it is one.
fn chess960_start(board: &Board) -> Option<Chess> {
    let back_white = Bitboard::from_rank(shakmaty::Rank::First);
    let pawns_ok = board.pawns()
        == (Bitboard::from_rank(shakmaty::Rank::Second)
            | Bitboard::from_rank(shakmaty::Rank::Seventh));
    if !pawns_ok || board.occupied().count() != 32 || (board.white() & back_white).count() != 8 {
        return None;
    }
    let n = (0..960).find(|&n| Board::chess960(n) == *board)?;
    let board = Board::chess960(n);
    let setup = Setup {
        castling_rights: board.rooks(),
        board,
        ..Setup::default()
    };
    setup.position::<Chess>(CastlingMode::Chess960).ok()
}

/// The board as read, in real squares, when it can be a game under way: both kings, no pawn
/// on a first or last rank, at most 16 pieces a side. A board can lie either way round: the
/// way whose White pawns stand lower (White plays up the board) is taken.
fn mid_game_board(placement: &Placement) -> Option<(Orientation, Board)> {
    let fits = |b: &Board| {
        b.king_of(Color::White).is_some()
            && b.king_of(Color::Black).is_some()
            && b.kings().count() == 2
            && (b.pawns()
                & (Bitboard::from_rank(shakmaty::Rank::First)
                    | Bitboard::from_rank(shakmaty::Rank::Eighth)))
            .is_empty()
            && b.white().count() <= 16
            && b.black().count() <= 16
    };
    // How far up the board White's pawns stand, less Black's: lower is White playing up.
    let lean = |b: &Board| {
        let rank_sum = |bb: Bitboard| {
            bb.into_iter()
                .map(|s| i32::from(s.rank() as u8))
                .sum::<i32>()
        };
        let w = b.pawns() & b.white();
        let k = b.pawns() & b.black();
        let (nw, nb) = (w.count() as i32, k.count() as i32);
        if nw == 0 || nb == 0 {
            return 0;
        }
        rank_sum(w) * nb - rank_sum(k) * nw
    };
    let normal = placement.to_board(Orientation::Normal);
    let rotated = placement.to_board(Orientation::Rotated);
    match (fits(&normal), fits(&rotated)) {
        (true, true) if lean(&rotated) < lean(&normal) => Some((Orientation::Rotated, rotated)),
        (true, _) => Some((Orientation::Normal, normal)),
        (false, true) => Some((Orientation::Rotated, rotated)),
        (false, false) => None,
    }
}

/// The position of `board` with `turn` to move, castling allowed where king and rook stand
/// on their squares, when it is a legal one.
fn position_with_turn(board: &Board, turn: Color) -> Option<Chess> {
    let mut rights = Bitboard::EMPTY;
    for color in [Color::White, Color::Black] {
        let back = color.fold_wb(shakmaty::Rank::First, shakmaty::Rank::Eighth);
        let e = Square::from_coords(shakmaty::File::E, back);
        if board.piece_at(e) == Some(color.king()) {
            for f in [shakmaty::File::A, shakmaty::File::H] {
                let sq = Square::from_coords(f, back);
                if board.piece_at(sq) == Some(color.rook()) {
                    rights |= Bitboard::from(sq);
                }
            }
        }
    }
    let setup = Setup {
        board: board.clone(),
        turn,
        castling_rights: rights,
        ..Setup::default()
    };
    setup.position::<Chess>(CastlingMode::Standard).ok()
}

/// Whether `target` is the board after at most `plies` legal moves from `pos`.
fn reaches(pos: &Chess, target: &Board, plies: usize) -> bool {
    if pos.board() == target {
        return true;
    }
    plies > 0
        && pos.legal_moves().into_iter().any(|m| {
            let mut next = pos.clone();
            next.play_unchecked(m);
            reaches(&next, target, plies - 1)
        })
}

impl Recorder {
    /// Carries on with a stored game (after a restart), the board lying in `orientation`.
    pub fn resume(cfg: RecorderConfig, game: Game, orientation: Orientation) -> Recorder {
        let mut r = Recorder::new(cfg);
        if game.result != GameResult::Ongoing {
            r.phase = Phase::Finished { out_of_sync: false };
        }
        r.set_game(game);
        r.orientation = Some(orientation);
        // Whatever happened on the board while nobody recorded it is unknown: moves made
        // meanwhile may be filled in as after any gap in the readings, and the lever presses
        // made meanwhile were not seen.
        r.readings_missed = true;
        r.clocks.begin_gap();
        r.clocks.joined_late = r.game.as_ref().is_some_and(|g| !g.moves.is_empty());
        r
    }

    /// The start position (standard or Chess960) on the board, when it begins a new game:
    /// with its orientation and whether it is Chess960.
    pub(super) fn new_game_on_board(&self) -> Option<(Orientation, Chess, bool)> {
        // A new game: the start position set up with no game yet, after a finished one, after
        // one whose result the board proposed, or after one of more than two plies (players
        // who resign set the pieces up again; taking back a whole game is not done, and
        // reading it so would wipe the game: it keeps its moves for the arbiter's result).
        // Only a false start of a ply or two goes back to the start as a takeback.
        // (A start position the game's own moves lead to, knights going back home, is moves.)
        let ended = self.game.is_none() || self.phase.is_over() || self.proposal.is_some();
        let long_game = self
            .game
            .as_ref()
            .is_some_and(|g| g.moves.len() > MAX_FALSE_START);
        if (ended || long_game)
            && let Some((orientation, start, chess960)) = self.start_position()
            && (ended
                || !self
                    .positions
                    .last()
                    .is_some_and(|p| reaches(p, start.board(), 2)))
        {
            return Some((orientation, start, chess960));
        }
        None
    }

    /// A new game from `start`, the board lying in `orientation`; the game it replaces is
    /// kept for the caller (with the result the board proposed for it).
    pub(super) fn begin_game(
        &mut self,
        orientation: Orientation,
        start: Chess,
        chess960: bool,
    ) -> Outcome {
        let fen = Fen::from_position(&start, EnPassantMode::Legal).to_string();
        let game = Game {
            start,
            castling_mode: if chess960 {
                CastlingMode::Chess960
            } else {
                CastlingMode::Standard
            },
            ..Game::default()
        };
        self.orientation = Some(orientation);
        self.replaced = self.game.take().filter(|g| !g.moves.is_empty());
        self.replaced_proposal = self.proposal.filter(|_| self.replaced.is_some());
        self.set_game(game);
        self.phase = Phase::Playing;
        self.proposal = None;
        self.flagged.clear();
        // A new game keeps the last reading and whose turn began when (the clock may
        // already run), and forgets everything tied to the old game's moves.
        self.clocks = Clocks {
            last: self.clocks.last,
            turn_start: self.clocks.turn_start,
            start_reading: self.clocks.last,
            ..Clocks::default()
        };
        self.seen.clear();
        Outcome::NewGame {
            orientation,
            chess960,
            fen,
        }
    }

    fn start_position(&self) -> Option<(Orientation, Chess, bool)> {
        for o in [Orientation::Normal, Orientation::Rotated] {
            let b = self.board.to_board(o);
            if b == Board::default() {
                return Some((o, Chess::default(), false));
            }
            if let Some(pos) = chess960_start(&b) {
                return Some((o, pos, true));
            }
        }
        None
    }

    /// No game yet and a board that is no start position: a game under way when recording
    /// began (the relay started late, a board swapped in). The clock says whose turn it is:
    /// the side running while that board stood is the player to move, and the first move
    /// seen from it says that player's colour. The game is recorded from that board (a
    /// `SetUp`/`FEN` game, marked in its opening comment as joined late) with that move.
    /// Without a running clock nothing is guessed: an arbiter says whose turn it is, as for
    /// any board ([`Recorder::continue_from_board`]).
    pub(super) fn join_late(&mut self) -> Vec<Outcome> {
        let running = self.clocks.last.and_then(|r| r.running_side());
        let Some((orientation, board)) = mid_game_board(&self.board) else {
            return Vec::new();
        };
        let joined = self.late.as_ref().and_then(|late| {
            let side = late.running.filter(|_| running.is_some())?;
            [Color::White, Color::Black].into_iter().find_map(|turn| {
                let pos = position_with_turn(&late.board, turn)?;
                let m = pos.legal_moves().into_iter().find(|m| {
                    let mut p = pos.clone();
                    p.play_unchecked(*m);
                    *p.board() == board
                })?;
                Some((late.orientation, pos, m, side))
            })
        });
        let Some((orientation, start, m, side)) = joined else {
            self.late = Some(LateBoard {
                board,
                orientation,
                running,
            });
            return Vec::new();
        };
        self.late = None;
        let turn = start.turn();
        let fen = Fen::from_position(&start, EnPassantMode::Legal).to_string();
        let who = if turn == Color::White {
            "White"
        } else {
            "Black"
        };
        let game = Game {
            start: start.clone(),
            intro: Some(format!(
                "Joined late: recording began in the middle of the game, from this position with {who} to move (the running clock's side); the moves before it were not seen."
            )),
            ..Game::default()
        };
        self.orientation = Some(orientation);
        self.set_game(game);
        self.phase = Phase::Playing;
        self.clocks = Clocks {
            last: self.clocks.last,
            last_at_ms: self.clocks.last_at_ms,
            turn_start: self.clocks.turn_start,
            joined_late: true,
            ..Clocks::default()
        };
        // The side that ran is the mover's.
        self.clocks.vote(side, turn == Color::White, START_VOTE);
        self.seen.clear();
        let mut out = vec![
            Outcome::NewGame {
                orientation,
                chess960: false,
                fen,
            },
            Outcome::JoinedLate { color: turn.into() },
        ];
        out.extend(self.play(m));
        out
    }

    /// Arbiter: the game goes on from the position on the board, `turn` to move. The moves so
    /// far are kept in a comment and the game restarts from that position with its FEN.
    /// With no game yet (the relay started in the middle of one), a game starts from the
    /// position on the board.
    pub fn continue_from_board(&mut self, turn: Color) -> Result<Vec<Outcome>, String> {
        if self.read == BoardRead::Unread {
            return Err("the board has not been read yet".into());
        }
        let board = self.board_as_read();
        let game = self.game.get_or_insert_with(Game::default);
        let old = game.position();
        let setup = Setup {
            board,
            turn,
            castling_rights: Bitboard::EMPTY,
            fullmoves: old.fullmoves(),
            ..Setup::default()
        };
        let pos: Chess = setup
            .position(CastlingMode::Standard)
            .map_err(|e| format!("the board is not a legal position: {e}"))?;
        let fen = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
        let earlier: Vec<String> = game.moves.iter().map(|m| m.san.to_string()).collect();
        let note = format!(
            "Arbiter: the game continued from the position on the board ({fen}) after {} moves: {}",
            earlier.len(),
            earlier.join(" ")
        );
        game.intro = Some(match game.intro.take() {
            Some(i) => format!("{i} {note}"),
            None => note,
        });
        game.start = pos;
        game.castling_mode = CastlingMode::Standard;
        game.moves.clear();
        let g = game.clone();
        self.set_game(g);
        self.phase = self.phase.in_sync();
        self.clocks.pending.clear();
        Ok(vec![
            Outcome::InSync,
            Outcome::NewGame {
                orientation: self.orientation.unwrap_or_default(),
                chess960: false,
                fen,
            },
        ])
    }
}
