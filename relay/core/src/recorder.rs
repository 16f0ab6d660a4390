//! The recorder: one board's readings in, the true game out.
//!
//! It keeps the board as read (from dumps and field updates), waits until the board has been
//! still for the settle time, then asks [`infer`](crate::infer) what the still board means and
//! applies it to the game. Clock readings are tracked alongside: which clock side is White,
//! every lever press, and from those the `clk` and `emt` of each move. Time always comes in as
//! an argument (milliseconds on any monotonic scale: receive times, or an emulator's virtual
//! time), so the same code runs live, in replays and in tests.

use crate::clock_time::ClockTime;
use crate::game::{Game, GameResult};
use crate::incident::{IllegalKind, judge_press};
use crate::infer::{History, Inference, infer};
use boards::protocol::{
    ClockMessage, ClockReading, ClockSide, MagicPiece, Message, Orientation, Placement,
};
use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, Move, Position, Setup, Square,
};

/// Settings of a recorder.
#[derive(Clone, Debug)]
pub struct RecorderConfig {
    /// How long the board must be still before it is read as a position. USB boards scan in
    /// about 250 ms; Bluetooth boards take twice as long.
    pub settle_ms: u64,
    /// The longest run of moves missed while a board was offline that is filled in.
    pub max_bridge: usize,
}

impl Default for RecorderConfig {
    fn default() -> Self {
        RecorderConfig {
            settle_ms: 300,
            max_bridge: 3,
        }
    }
}

/// Why a result is proposed (an arbiter confirms it; it is never a move).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalReason {
    KingsInCentre,
    MagicPiece,
    TimeForfeit,
}

/// Why the game ended by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GameEnd {
    Checkmate,
    Stalemate,
}

/// A drawing condition the rules recognise; flagged for the arbiter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DrawCondition {
    InsufficientMaterial,
    ThreefoldRepetition,
    FivefoldRepetition,
    FiftyMoves,
    SeventyFiveMoves,
}

/// What one input changed. A board is mid-move most of the time, so most inputs yield nothing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// A game started from the position on the board.
    NewGame {
        orientation: Orientation,
        chess960: bool,
        fen: String,
    },
    /// A move was played (`ply` counts from 1).
    Move {
        ply: usize,
        san: String,
        uci: String,
    },
    /// The move at `ply` was replaced by another.
    Correction {
        ply: usize,
        san: String,
        replaced: String,
    },
    /// Moves after `ply` were taken back.
    Takeback { ply: usize },
    /// The board shows a position the game cannot explain; the game waits.
    OutOfSync {
        board_fen: String,
        game_fen: String,
        candidates: usize,
    },
    /// The board agrees with the game again.
    InSync,
    /// The clock time after the move at `ply` is known.
    MoveClock {
        ply: usize,
        clk: ClockTime,
        emt: Option<ClockTime>,
    },
    /// The running clock: both times and who is running.
    Clock {
        white: ClockTime,
        black: ClockTime,
        running: Option<ColorName>,
    },
    /// A result the board suggests; an arbiter confirms.
    ResultProposed {
        result: GameResult,
        reason: ProposalReason,
    },
    /// The rules ended the game.
    GameOver { result: GameResult, end: GameEnd },
    /// A drawing condition now holds.
    Draw { condition: DrawCondition },
    /// A player completed an illegal move (or pressed the clock without a move) in place of
    /// the move at `ply`: the board at the press showed `uci` (from and to squares as seen,
    /// `None` for a press without a move). The game's moves are untouched; the game waits
    /// for the position to be restored, as for any board it cannot explain.
    IllegalMove {
        ply: usize,
        color: ColorName,
        kind: IllegalKind,
        uci: Option<String>,
        /// The piece moved and the one it landed on, as FEN letters.
        piece: Option<char>,
        captured: Option<char>,
        clock_pressed: bool,
    },
    /// The game just begun was joined in its middle (see [`Recorder::join_late`]): `color`
    /// was to move in its start position, as the running clock said.
    JoinedLate { color: ColorName },
    /// A clock time changed by more than the clock itself explains (time given by an
    /// arbiter, a clock set right), before the move at `ply`.
    ClockAdjustment {
        ply: usize,
        color: ColorName,
        delta_ms: i64,
    },
}

/// A colour as the JSON and the PGN Clock tag name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColorName {
    White,
    Black,
}

impl ColorName {
    /// The other side.
    pub fn other(self) -> ColorName {
        match self {
            ColorName::White => ColorName::Black,
            ColorName::Black => ColorName::White,
        }
    }

    /// The side to move after `ply` plies from a position with `start_fen` (a FEN whose second
    /// field says who moves first; anything else: White).
    pub fn after_plies(start_fen: &str, plies: u32) -> ColorName {
        let first = if start_fen.split_whitespace().nth(1) == Some("b") {
            ColorName::Black
        } else {
            ColorName::White
        };
        if plies.is_multiple_of(2) {
            first
        } else {
            first.other()
        }
    }
}

impl From<Color> for ColorName {
    fn from(c: Color) -> Self {
        if c == Color::White {
            ColorName::White
        } else {
            ColorName::Black
        }
    }
}

/// A lever press seen in the clock readings.
#[derive(Clone, Copy, Debug)]
struct Press {
    side: ClockSide,
    /// The side's time right after the press (increment included).
    after_ms: u64,
    /// The side's time in the last reading while it ran (unknown when other presses came
    /// between that reading and this press).
    before_ms: Option<u64>,
    /// The side's time when its turn began.
    turn_start_ms: Option<u64>,
    used: bool,
    /// The board as read at the press, when the press came from a bus board's change log
    /// (which places it exactly after the squares of its move); `None` for a press seen in
    /// two clock readings, which says only that it happened between them.
    board: Option<Placement>,
}

/// Clock bookkeeping.
#[derive(Clone, Debug, Default)]
struct Clocks {
    last: Option<ClockReading>,
    /// Readings voting for "the running side is White" per side: [left, right].
    white_votes: [u32; 2],
    black_votes: [u32; 2],
    turn_start: [Option<u64>; 2],
    /// Every press of the game, in order.
    presses: Vec<Press>,
    /// For each move (index = ply - 1), the press that ended it.
    assigned: Vec<Option<usize>>,
    /// Moves still waiting for their press: ply (1-based) and mover.
    pending: Vec<(usize, Color)>,
    /// The clock as it stood when the game began (for the start-time tags).
    start_reading: Option<ClockReading>,
    /// `last` was read after every press seen so far (no clock record came since).
    last_is_fresh: bool,
    /// The readings stopped for a while (a restart, a board lost): presses made meanwhile
    /// were not seen. Until it is settled no press goes to a move.
    gap: Option<Gap>,
    /// Presses before this index were made before the last gap and go to no move after it.
    press_floor: usize,
    /// The game was taken up in its middle (a restart): the clock's start is not known.
    joined_late: bool,
    /// When `last` was received.
    last_at_ms: Option<u64>,
    /// Presses by the side to move whose meaning is not known yet: the move they end, or
    /// an illegal move, or nothing at all (see [`Recorder::confirm_presses`]).
    checks: Vec<PressCheck>,
}

/// A lever press by the side to move, waiting to be told apart from the press that ends a
/// move.
#[derive(Clone, Copy, Debug)]
struct PressCheck {
    /// Its index in `presses`.
    press: usize,
    at_ms: u64,
    /// The board as read when the press was seen (a press from a bus board's log carries
    /// its own, exact one).
    board: Placement,
    /// The move it would be in place of, and the presser.
    ply: usize,
    color: Color,
}

/// A stretch without readings, as far as it is known.
#[derive(Clone, Copy, Debug, Default)]
struct Gap {
    /// The first reading after it: the halted side shows its last press's time, the running
    /// side is the one whose turn it is.
    first: Option<ClockReading>,
    /// How many presses were known then.
    floor: usize,
}

fn side_index(s: ClockSide) -> usize {
    if s == ClockSide::Left { 0 } else { 1 }
}

impl Clocks {
    fn white_side(&self) -> Option<ClockSide> {
        // Left is White when readings say so more often than they say Right is.
        self.white_side_by(1)
    }

    /// Which clock side is White, once the evidence for it leads by `margin` votes.
    fn white_side_by(&self, margin: u32) -> Option<ClockSide> {
        let left = self.white_votes[0] + self.black_votes[1];
        let right = self.white_votes[1] + self.black_votes[0];
        if left >= right + margin {
            Some(ClockSide::Left)
        } else if right >= left + margin {
            Some(ClockSide::Right)
        } else {
            None
        }
    }

    /// Evidence that the player on `side` has White (`white`) or Black, worth `weight` votes.
    fn vote(&mut self, side: ClockSide, white: bool, weight: u32) {
        let i = side_index(side);
        if white {
            self.white_votes[i] += weight;
        } else {
            self.black_votes[i] += weight;
        }
    }

    /// Lever presses after the last one matched to a move, less the moves still waiting for
    /// theirs: how many moves the clock says were made that the game does not have yet.
    fn presses_ahead(&self) -> usize {
        let last = self.assigned.iter().rev().find_map(|a| *a);
        let newer = self
            .presses
            .iter()
            .enumerate()
            .filter(|(i, p)| !p.used && last.is_none_or(|l| *i > l))
            .count();
        newer.saturating_sub(self.pending.len())
    }

    /// Which clock side is White, once the evidence is more than a few readings (a single
    /// reading taken while a move is made but not yet pressed points the wrong way).
    fn white_side_sure(&self) -> Option<ClockSide> {
        self.white_side_by(5)
    }

    /// Readings stop being continuous: nothing read before tells how the clock went on.
    fn begin_gap(&mut self) {
        self.gap = Some(Gap::default());
        self.last = None;
        self.last_at_ms = None;
        self.checks.clear();
        self.turn_start = [None, None];
    }

    fn side_of(&self, c: Color) -> Option<ClockSide> {
        self.white_side()
            .map(|w| if c == Color::White { w } else { w.other() })
    }
}

/// A board's recorder: its messages, each with the time it was received, go in; what they
/// mean for the game comes out as [`Outcome`]s.
///
/// A board shows the start position, then the pawn leaves e2 and arrives on e4. The move is
/// read only once the board has been still for the settle time (300 ms by default): a hand
/// may still be moving.
///
/// ```
/// use boards::protocol::{DgtSquare, Message, Orientation, PieceCode, Placement};
/// use relay_core::recorder::{Outcome, Recorder, RecorderConfig};
/// use shakmaty::{Board, Color, Square};
///
/// let mut recorder = Recorder::new(RecorderConfig::default());
/// let square = |sq: Square| DgtSquare::from_square(sq, Orientation::Normal);
///
/// // At 0 ms the board sends a dump of the start position; still by 300 ms, it is a new game.
/// let start = Placement::from_board(&Board::default(), Orientation::Normal);
/// assert!(recorder.on_message(&Message::BoardDump { placement: start }, 0).is_empty());
/// assert!(matches!(recorder.tick(300)[..], [Outcome::NewGame { chess960: false, .. }]));
///
/// // The pawn is lifted at 1000 ms and put down at 1250 ms.
/// let lifted = Message::FieldUpdate { square: square(Square::E2), piece: PieceCode::Empty };
/// assert!(recorder.on_message(&lifted, 1_000).is_empty());
/// let pawn = PieceCode::Piece(Color::White.pawn());
/// let put = Message::FieldUpdate { square: square(Square::E4), piece: pawn };
/// assert!(recorder.on_message(&put, 1_250).is_empty());
///
/// // Time is an argument: nothing happens until the board has been still for 300 ms.
/// assert_eq!(recorder.judge_at(), Some(1_550));
/// assert!(recorder.tick(1_549).is_empty());
/// assert_eq!(
///     recorder.tick(1_550),
///     vec![Outcome::Move { ply: 1, san: "e4".to_string(), uci: "e2e4".to_string() }]
/// );
/// let game = recorder.game().expect("the start position began a game");
/// assert_eq!(game.moves.len(), 1);
/// assert_eq!(recorder.judge_at(), None);
/// ```
#[derive(Clone, Debug)]
pub struct Recorder {
    cfg: RecorderConfig,
    board: Placement,
    have_board: bool,
    last_change_ms: u64,
    /// The current still board was already evaluated.
    evaluated: bool,
    orientation: Option<Orientation>,
    game: Option<Game>,
    positions: Vec<Chess>,
    finished: bool,
    out_of_sync: bool,
    proposal: Option<(GameResult, ProposalReason)>,
    clocks: Clocks,
    flagged: Vec<DrawCondition>,
    /// The game ended by mate or stalemate on the board (not by a result given).
    ended_on_board: bool,
    /// The game a new one replaced, until the caller takes it.
    replaced: Option<Game>,
    /// The result the board proposed for that game, if any.
    replaced_proposal: Option<(GameResult, ProposalReason)>,
    /// Boards read since the game's position was last confirmed, transient ones included
    /// (kept as read; turned into real squares only when a still board needs them).
    seen: Vec<Placement>,
    /// When the last message arrived.
    last_message_ms: Option<u64>,
    /// Messages stopped for longer than a running clock allows: moves may have been missed.
    readings_missed: bool,
    /// With no game yet: the last still board that is a position of a game under way, and
    /// which clock side ran while it stood (see [`Recorder::join_late`]).
    late: Option<LateBoard>,
    /// Clock corrections seen and not yet known to belong to this game, and the running clock
    /// since them: a clock set for the next game while the last one's board still stands is
    /// not a correction of the last one. They stand once play goes on from the game's
    /// position (a move, or the clock running with the board showing the game) and are
    /// dropped when the board begins a new game (whose clock it is).
    held: Vec<Outcome>,
    held_clock: Option<Outcome>,
}

/// A board first read in the middle of a game.
#[derive(Clone, Debug)]
struct LateBoard {
    board: Board,
    orientation: Orientation,
    running: Option<ClockSide>,
}

/// Weight of the start-of-game evidence for which clock side is White, against one vote per
/// steady reading.
const START_VOTE: u32 = 1_000;

/// The most plies taken back to the start position as a false start; the start position
/// after a longer game is the next game.
const MAX_FALSE_START: usize = 2;

/// Boards remembered while the game waits for the board to make sense.
const MAX_SEEN: usize = 4096;

/// A running clock is reported at least every second; a silence this long means lost readings.
const READING_GAP_MS: u64 = 2_500;

/// How long after a press by the side to move (and the board still) the press is judged: a
/// move made with it has been read by then, a single board's field updates coming before
/// the clock reading that shows the press, a bus board's log together with it.
const PRESS_JUDGED_AFTER_MS: u64 = 1_500;

/// The least clock change that a reading-to-reading comparison reports as a correction: the
/// clock shows whole seconds, so a second either way is rounding.
const ADJUSTMENT_MIN_MS: i64 = 2_000;

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

impl Recorder {
    pub fn new(cfg: RecorderConfig) -> Recorder {
        Recorder {
            cfg,
            board: Placement::default(),
            have_board: false,
            last_change_ms: 0,
            evaluated: true,
            orientation: None,
            game: None,
            positions: Vec::new(),
            finished: false,
            out_of_sync: false,
            proposal: None,
            clocks: Clocks::default(),
            flagged: Vec::new(),
            ended_on_board: false,
            replaced: None,
            replaced_proposal: None,
            seen: Vec::new(),
            last_message_ms: None,
            readings_missed: false,
            late: None,
            held: Vec::new(),
            held_clock: None,
        }
    }

    /// Carries on with a stored game (after a restart), the board lying in `orientation`.
    pub fn resume(cfg: RecorderConfig, game: Game, orientation: Orientation) -> Recorder {
        let mut r = Recorder::new(cfg);
        r.finished = game.result != GameResult::Ongoing;
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

    fn set_game(&mut self, game: Game) {
        self.positions = (0..=game.moves.len())
            .map(|k| game.position_at(k))
            .collect();
        self.game = Some(game);
    }

    pub fn game(&self) -> Option<&Game> {
        self.game.as_ref()
    }

    /// The game (with moves) that the last new game replaced, if nobody took it yet.
    pub fn take_replaced_game(&mut self) -> Option<Game> {
        self.replaced.take()
    }

    /// The result the board proposed for the game the last new game replaced.
    pub fn take_replaced_proposal(&mut self) -> Option<(GameResult, ProposalReason)> {
        self.replaced_proposal.take()
    }

    pub fn orientation(&self) -> Option<Orientation> {
        self.orientation
    }

    pub fn is_out_of_sync(&self) -> bool {
        self.out_of_sync
    }

    /// The board as read, in real squares (or as the board numbers them if the orientation is
    /// not known yet).
    pub fn board_as_read(&self) -> Board {
        self.board.to_board(self.orientation.unwrap_or_default())
    }

    pub fn proposal(&self) -> Option<(GameResult, ProposalReason)> {
        self.proposal
    }

    /// Which clock side is White, once the readings tell.
    pub fn white_clock_side(&self) -> Option<ClockSide> {
        self.clocks.white_side()
    }

    /// The last clock reading as White/Black times and the running colour.
    pub fn running_clock(&self) -> Option<(ClockTime, ClockTime, Option<Color>)> {
        let r = self.clocks.last?;
        let w = self.clocks.white_side()?;
        let white = ClockTime::from_secs(u64::from(r.side(w).seconds));
        let black = ClockTime::from_secs(u64::from(r.side(w.other()).seconds));
        let running = r
            .running_side()
            .map(|s| if s == w { Color::White } else { Color::Black });
        Some((white, black, running))
    }

    /// Feeds one message received at `now_ms`.
    pub fn on_message(&mut self, message: &Message, now_ms: u64) -> Vec<Outcome> {
        // Silence longer than a running clock allows: readings (and presses) were missed. The
        // reading that ends it must not be compared with the one before it.
        let clock_ran = self.clocks.last.is_some_and(|r| r.running_side().is_some());
        if clock_ran
            && self
                .last_message_ms
                .is_some_and(|t| now_ms.saturating_sub(t) > READING_GAP_MS)
        {
            self.readings_missed = true;
            self.clocks.begin_gap();
        }
        self.last_message_ms = Some(now_ms);
        // A clock reading is taken in before a waiting board is judged: a lever press in it
        // is evidence for what the board shows.
        let mut out = match message {
            Message::Clock {
                clock: ClockMessage::Time(r),
            } => self.on_clock(r, now_ms),
            Message::ClockRecord { side, seconds } => self.on_clock_record(*side, *seconds, now_ms),
            _ => Vec::new(),
        };
        out.extend(self.tick(now_ms));
        match message {
            Message::BoardDump { placement } => {
                if !self.have_board || *placement != self.board {
                    self.board = *placement;
                    self.changed(now_ms);
                }
                self.have_board = true;
            }
            Message::FieldUpdate { square, piece } if self.board.get(*square) != *piece => {
                self.board.set(*square, *piece);
                self.changed(now_ms);
            }
            _ => {}
        }
        self.settle_held(out)
    }

    /// Held clock corrections and the clock after them (see `held`), given what `out` says
    /// of the game: placed before the first move made (the game went on: they stand), or
    /// dropped at a new game (the clock was set for it; its reading comes after the new game).
    fn settle_held(&mut self, mut out: Vec<Outcome>) -> Vec<Outcome> {
        if self.held.is_empty() && self.held_clock.is_none() {
            return out;
        }
        if let Some(i) = out
            .iter()
            .position(|o| matches!(o, Outcome::NewGame { .. }))
        {
            self.held.clear();
            if let Some(c) = self.held_clock.take() {
                out.insert(i + 1, c);
            }
        } else if let Some(i) = out.iter().position(|o| {
            matches!(
                o,
                Outcome::Move { .. } | Outcome::Correction { .. } | Outcome::Takeback { .. }
            )
        }) {
            let held = self.release_held();
            out.splice(i..i, held);
        }
        out
    }

    fn release_held(&mut self) -> Vec<Outcome> {
        let mut out = std::mem::take(&mut self.held);
        out.extend(self.held_clock.take());
        out
    }

    /// The board stands still on the game's position.
    fn shows_game(&self) -> bool {
        match (self.orientation, self.positions.last()) {
            (Some(o), Some(pos)) => {
                !self.out_of_sync
                    && !self.awaiting_judgement()
                    && self.board.to_board(o) == *pos.board()
            }
            _ => false,
        }
    }

    fn changed(&mut self, now_ms: u64) {
        self.last_change_ms = now_ms;
        self.evaluated = false;
        if self.orientation.is_some() && self.game.is_some() {
            // Bounded: a board left in disorder for hours must not grow without end.
            if self.seen.len() >= MAX_SEEN {
                self.seen.drain(..MAX_SEEN / 2);
            }
            self.seen.push(self.board);
        }
    }

    /// Whether a board change is waiting to be judged (it has not been still for the settle
    /// time yet): a move may be about to come out of it.
    pub fn awaiting_judgement(&self) -> bool {
        self.have_board && !self.evaluated
    }

    /// When the board change waiting to be judged will have been still for the settle time
    /// (ms, the clock of the messages' times); `None` when nothing waits.
    pub fn judge_at(&self) -> Option<u64> {
        self.awaiting_judgement()
            .then(|| self.last_change_ms.saturating_add(self.cfg.settle_ms))
    }

    /// Time passes: a board that has been still for the settle time is evaluated.
    pub fn tick(&mut self, now_ms: u64) -> Vec<Outcome> {
        let mut out = Vec::new();
        if !self.evaluated
            && self.have_board
            && now_ms.saturating_sub(self.last_change_ms) >= self.cfg.settle_ms
        {
            self.evaluated = true;
            out = self.evaluate();
        }
        if !self.clocks.checks.is_empty() {
            out.extend(self.confirm_presses(Some(now_ms)));
        }
        self.settle_held(out)
    }

    /// Evaluates the current board now, without waiting (end of a replay).
    pub fn flush(&mut self) -> Vec<Outcome> {
        let mut out = Vec::new();
        if !self.evaluated && self.have_board {
            self.evaluated = true;
            out = self.evaluate();
        }
        out.extend(self.confirm_presses(Some(u64::MAX)));
        self.settle_held(out)
    }

    /// A lever press was just added as `presses[index]`: when it is the side to move's, it
    /// ends the move being made — or, if no move comes of it, it completed an illegal move
    /// or was a press without a move. Which one is known only once the board has been read
    /// and judged, so it waits (see [`Recorder::confirm_presses`]).
    fn note_press(&mut self, index: usize, now_ms: u64) {
        let Some(p) = self.clocks.presses.get(index) else {
            return;
        };
        let ok = !self.finished
            && self.clocks.gap.is_none()
            && !self.readings_missed
            && self.orientation.is_some();
        let (Some(white), Some(pos)) = (self.clocks.white_side_sure(), self.positions.last())
        else {
            return;
        };
        let color = if p.side == white {
            Color::White
        } else {
            Color::Black
        };
        if !ok || self.positions.len() < 2 {
            return;
        }
        // The presser is to move; or the opponent's move is on the board but not judged yet
        // (a press within the settle time after the opponent's): then the presser is to move
        // after it, and the check waits for that move.
        let ply = if color == pos.turn() {
            self.positions.len()
        } else if self.awaiting_judgement() {
            self.positions.len() + 1
        } else {
            return;
        };
        self.clocks.checks.push(PressCheck {
            press: index,
            at_ms: now_ms,
            board: p.board.unwrap_or(self.board),
            ply,
            color,
        });
    }

    /// Judges the presses waiting in `checks` whose time has come — the board read and
    /// still, a while after the press (`now_ms`; `None`: only those below) — or whose move has
    /// been made meanwhile (the game has a move at the check's ply: a fast player's next move
    /// must not take the press of their illegal one). The board at the press, against the
    /// position the presser was to move in, says what the press was: a legal move (or
    /// anything one displacement does not explain) makes it an ordinary press, left for the
    /// move it ends; one displacement that is not a legal move, or no move at all, is an
    /// illegal move on the record, and its press ends no move.
    fn confirm_presses(&mut self, now_ms: Option<u64>) -> Vec<Outcome> {
        let mut out = Vec::new();
        let settled = !self.awaiting_judgement() || now_ms == Some(u64::MAX);
        let checks = std::mem::take(&mut self.clocks.checks);
        let orientation = self.orientation.unwrap_or_default();
        for c in checks {
            let made = self.positions.len() > c.ply;
            let due = settled
                && now_ms.is_some_and(|now| now >= c.at_ms.saturating_add(PRESS_JUDGED_AFTER_MS));
            if !made && !due {
                self.clocks.checks.push(c);
                continue;
            }
            let Some(press) = self.clocks.presses.get(c.press) else {
                continue;
            };
            // A move took the press, or the game went back before it (a takeback, a new
            // game), or it ended.
            if press.used || self.positions.len() < c.ply || (self.finished && !made) {
                continue;
            }
            let Some(pos) = self
                .positions
                .get(c.ply - 1)
                .filter(|p| p.turn() == c.color)
            else {
                continue;
            };
            let at_press = press.board.unwrap_or(c.board).to_board(orientation);
            let Some((kind, seen)) = judge_press(pos, &at_press) else {
                continue;
            };
            // A press without a move must still be one now that the board has settled (when
            // no move came since): a board read late (the press seen before the squares of
            // its move) would show the old position at the press.
            if kind == IllegalKind::PressWithoutMove
                && !made
                && self.board_as_read() != *pos.board()
            {
                continue;
            }
            if let Some(p) = self.clocks.presses.get_mut(c.press) {
                p.used = true;
            }
            out.push(Outcome::IllegalMove {
                ply: c.ply,
                color: c.color.into(),
                kind,
                uci: seen.map(|d| d.uci()),
                piece: seen.map(|d| d.piece.char()),
                captured: seen.and_then(|d| d.captured.map(|p| p.char())),
                clock_pressed: true,
            });
        }
        out
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

    fn evaluate(&mut self) -> Vec<Outcome> {
        let mut out = Vec::new();
        // A new game: the start position set up with no game yet, after a finished one, after
        // one whose result the board proposed, or after one of more than two plies (players
        // who resign set the pieces up again; taking back a whole game is not done, and
        // reading it so would wipe the game: it keeps its moves for the arbiter's result).
        // Only a false start of a ply or two goes back to the start as a takeback.
        // (A start position the game's own moves lead to, knights going back home, is moves.)
        let ended = self.game.is_none() || self.finished || self.proposal.is_some();
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
            self.finished = false;
            self.ended_on_board = false;
            self.out_of_sync = false;
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
            out.push(Outcome::NewGame {
                orientation,
                chess960,
                fen,
            });
            return out;
        }
        if self.game.is_none() {
            return self.join_late();
        }
        let placement_magic = self.board.magic_pieces();
        if let Some((_, magic)) = placement_magic.first() {
            let result = match magic {
                MagicPiece::Draw => GameResult::Draw,
                MagicPiece::WhiteWins => GameResult::WhiteWins,
                MagicPiece::BlackWins => GameResult::BlackWins,
            };
            out.extend(self.propose(result, ProposalReason::MagicPiece));
            return out;
        }
        // After a result (proposed or set), pieces are put away or set up again: nothing to
        // record. After a mate or stalemate on the board, the last move can still turn out to
        // be another one (a queen slid past its square), so corrections and takebacks count.
        if self.finished && !self.ended_on_board {
            return out;
        }
        let board = self.board.to_board(self.orientation.unwrap_or_default());
        let Some(game) = self.game.as_ref() else {
            return out;
        };
        let moves: Vec<Move> = game.moves.iter().map(|m| m.mv).collect();
        let presses_ahead = self.clocks.presses_ahead();
        // A clock stopped in the middle of a game (not by a flag) is an arbiter at the board
        // (an illegal move being put right): nobody plays, and a board half put back must
        // not be read as moves the presses do not account for.
        let stopped_mid_game = self.clocks.last.is_some_and(|r| {
            r.running_side().is_none() && !r.left.flag_fallen && !r.right.flag_fallen
        }) && !self.clocks.presses.is_empty();
        let clock_watched =
            self.clocks.last.is_some_and(|r| r.running_side().is_some()) || stopped_mid_game;
        let clock_watched = clock_watched && !self.readings_missed;
        let bridge_limit = if clock_watched {
            presses_ahead + 1
        } else {
            self.cfg.max_bridge
        };
        let orientation = self.orientation.unwrap_or_default();
        let seen: Vec<Board> = self.seen.iter().map(|p| p.to_board(orientation)).collect();
        let history = History {
            positions: &self.positions,
            moves: &moves,
            presses_ahead,
            bridge_limit,
            seen: &seen,
        };
        let inference = infer(&history, &board, self.cfg.max_bridge);
        if self.ended_on_board {
            // Only the end can be undone: the mating move corrected or taken back (with the
            // move before it at most). A board far back in the game after a mate is the next
            // game being set up, never a takeback of the whole game.
            let n = self.positions.len().saturating_sub(1);
            let near_end = |keep: usize| keep + 2 >= n;
            match inference {
                Inference::Correction(_) => {}
                Inference::Takeback { ply } if near_end(ply) => {}
                Inference::Rewrite { keep, .. } if near_end(keep) => {}
                _ => return out,
            }
            self.finished = false;
            self.ended_on_board = false;
            if let Some(g) = self.game.as_mut() {
                g.result = GameResult::Ongoing;
            }
        }
        if !matches!(inference, Inference::OutOfSync { .. }) {
            self.readings_missed = false;
            // Explained: the way here no longer matters.
            self.seen.clear();
        }
        let was_out = std::mem::replace(&mut self.out_of_sync, false);
        match inference {
            Inference::Unchanged => {}
            Inference::Move(m) => out.extend(self.play(m)),
            Inference::Bridge(ms) => {
                for m in ms {
                    out.extend(self.play(m));
                }
            }
            Inference::Takeback { ply } => out.extend(self.truncate(ply)),
            Inference::Rewrite { keep, moves } => {
                // Moves the rewrite keeps as they were stay untouched (with their clocks).
                let n = self.positions.len() - 1;
                let mut k = keep;
                let mut rest = moves.into_iter().peekable();
                while k < n
                    && rest
                        .peek()
                        .is_some_and(|m| self.game.as_ref().is_some_and(|g| g.moves[k].mv == *m))
                {
                    rest.next();
                    k += 1;
                }
                out.extend(self.truncate(k));
                for m in rest {
                    out.extend(self.play(m));
                }
            }
            Inference::Correction(m) => {
                let ply = self.positions.len() - 1;
                let prev = self.positions[ply - 1].clone();
                let san = SanPlus::from_move(prev.clone(), m);
                let mut after = prev;
                after.play_unchecked(m);
                let mut replaced = String::new();
                if let Some(g) = self.game.as_mut()
                    && let Some(last) = g.moves.last_mut()
                {
                    replaced = last.san.to_string();
                    // The press (if any) belongs to whatever move was finally made.
                    last.mv = m;
                    last.san = san;
                }
                self.positions[ply] = after;
                out.push(Outcome::Correction {
                    ply,
                    san: san.to_string(),
                    replaced,
                });
                out.extend(self.after_move());
            }
            Inference::KingsInCentre(result) => {
                out.extend(self.propose(result, ProposalReason::KingsInCentre))
            }
            Inference::OutOfSync { candidates } => {
                self.out_of_sync = true;
                let game_fen = self
                    .positions
                    .last()
                    .map(|p| p.board().board_fen().to_string())
                    .unwrap_or_default();
                if !was_out {
                    out.push(Outcome::OutOfSync {
                        board_fen: board.board_fen().to_string(),
                        game_fen,
                        candidates,
                    });
                }
                return out;
            }
        }
        if was_out {
            out.insert(0, Outcome::InSync);
        }
        out
    }

    /// No game yet and a board that is no start position: a game under way when recording
    /// began (the relay started late, a board swapped in). The clock says whose turn it is:
    /// the side running while that board stood is the player to move, and the first move
    /// seen from it says that player's colour. The game is recorded from that board (a
    /// `SetUp`/`FEN` game, marked in its opening comment as joined late) with that move.
    /// Without a running clock nothing is guessed: an arbiter says whose turn it is, as for
    /// any board ([`Recorder::continue_from_board`]).
    fn join_late(&mut self) -> Vec<Outcome> {
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
        self.finished = false;
        self.out_of_sync = false;
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

    /// Takes the game back to `ply` moves. The presses of the removed moves are free again:
    /// the moves that replace them were ended by the same presses.
    fn truncate(&mut self, ply: usize) -> Vec<Outcome> {
        let n = self.positions.len() - 1;
        if ply >= n {
            return Vec::new();
        }
        if let Some(g) = self.game.as_mut() {
            g.moves.truncate(ply);
        }
        self.positions.truncate(ply + 1);
        self.clocks.pending.retain(|(p, _)| *p <= ply);
        for i in self.clocks.assigned.iter().skip(ply).flatten() {
            if let Some(p) = self.clocks.presses.get_mut(*i) {
                p.used = false;
            }
        }
        self.clocks.assigned.truncate(ply);
        vec![Outcome::Takeback { ply }]
    }

    fn propose(&mut self, result: GameResult, reason: ProposalReason) -> Vec<Outcome> {
        if self.proposal == Some((result, reason)) {
            return Vec::new();
        }
        // A proposal, not an end: the game on the board may go on (players play on after a
        // flag fell until someone claims it), and every move the board shows is recorded
        // until an arbiter confirms a result or the next game is set up.
        self.proposal = Some((result, reason));
        vec![Outcome::ResultProposed { result, reason }]
    }

    fn play(&mut self, m: Move) -> Vec<Outcome> {
        let Some(pos) = self.positions.last().cloned() else {
            return Vec::new();
        };
        let mover = pos.turn();
        let mode = self
            .game
            .as_ref()
            .map_or(CastlingMode::Standard, |g| g.castling_mode);
        let uci = m.to_uci(mode).to_string();
        let mut after = pos.clone();
        let san = SanPlus::from_move_and_play_unchecked(&mut after, m);
        if let Some(g) = self.game.as_mut() {
            g.push(m, None, None);
        }
        self.positions.push(after);
        let ply = self.positions.len() - 1;
        self.clocks.pending.push((ply, mover));
        let mut out = vec![Outcome::Move {
            ply,
            san: san.to_string(),
            uci,
        }];
        out.extend(self.after_move());
        out.extend(self.assign_clocks());
        out
    }

    /// Game end and drawing conditions after the last move.
    fn after_move(&mut self) -> Vec<Outcome> {
        let mut out = Vec::new();
        let Some(pos) = self.positions.last() else {
            return out;
        };
        if pos.is_checkmate() {
            let result = if pos.turn() == Color::White {
                GameResult::BlackWins
            } else {
                GameResult::WhiteWins
            };
            out.push(Outcome::GameOver {
                result,
                end: GameEnd::Checkmate,
            });
        } else if pos.is_stalemate() {
            out.push(Outcome::GameOver {
                result: GameResult::Draw,
                end: GameEnd::Stalemate,
            });
        }
        if let Some(Outcome::GameOver { result, .. }) = out.first() {
            self.finished = true;
            self.ended_on_board = true;
            if let Some(g) = self.game.as_mut() {
                g.result = *result;
            }
            return out;
        }
        let hash = |p: &Chess| p.zobrist_hash::<Zobrist64>(EnPassantMode::Legal);
        let now = hash(pos);
        let repeats = self.positions.iter().filter(|p| hash(p) == now).count();
        let mut conditions = Vec::new();
        if pos.is_insufficient_material() {
            conditions.push(DrawCondition::InsufficientMaterial);
        }
        if repeats >= 5 {
            conditions.push(DrawCondition::FivefoldRepetition);
        } else if repeats >= 3 {
            conditions.push(DrawCondition::ThreefoldRepetition);
        }
        if pos.halfmoves() >= 150 {
            conditions.push(DrawCondition::SeventyFiveMoves);
        } else if pos.halfmoves() >= 100 {
            conditions.push(DrawCondition::FiftyMoves);
        }
        for c in conditions {
            // Repetitions are flagged each time they occur; the others once.
            let repeatable = matches!(
                c,
                DrawCondition::ThreefoldRepetition | DrawCondition::FivefoldRepetition
            );
            if repeatable || !self.flagged.contains(&c) {
                self.flagged.push(c);
                out.push(Outcome::Draw { condition: c });
            }
        }
        out
    }

    fn on_clock(&mut self, r: &ClockReading, now_ms: u64) -> Vec<Outcome> {
        let mut out = Vec::new();
        if r.status.no_clock {
            return out;
        }
        let prev = self.clocks.last.replace(*r);
        let elapsed = self
            .clocks
            .last_at_ms
            .replace(now_ms)
            .map(|t| now_ms.saturating_sub(t));
        if let (Some(prev), Some(elapsed)) = (prev, elapsed) {
            let adjustments = self.adjustments(&prev, r, elapsed);
            self.held.extend(adjustments);
        }
        self.clocks.last_is_fresh = true;
        if let Some(gap) = self.clocks.gap.as_mut()
            && gap.first.is_none()
        {
            gap.first = Some(*r);
            gap.floor = self.clocks.presses.len();
        }
        if self.clocks.start_reading.is_none() && self.game.is_some() && !self.clocks.joined_late {
            // The first reading of a game, or the one standing when it began.
            self.clocks.start_reading = Some(prev.unwrap_or(*r));
        }
        let running = r.running_side();
        let prev_running = prev.and_then(|p| p.running_side());
        // Votes: while a side runs, it is usually the side to move. Not at the reading that
        // shows a press: the board of the move just made may not have settled yet.
        if let (Some(s), Some(pos)) = (running, self.positions.last())
            && !self.finished
            && running == prev_running
            // Moves on the board not judged yet (a bus poll brings several at once) would make
            // the game's side to move a stale one.
            && !self.awaiting_judgement()
        {
            let white = pos.turn() == Color::White;
            self.clocks.vote(s, white, 1);
        }
        // Strong evidence at the start of a game: the clock is started for the side to move,
        // and the first press of the game is that side's.
        let start_turn = self.positions.first().map(|p| p.turn());
        // (Not after a gap: the first reading then shows whoever's turn it is by now.)
        let at_start = self.positions.len() <= 2
            && self.clocks.presses.is_empty()
            && self.clocks.gap.is_none();
        let white_starts = start_turn == Some(Color::White);
        match (prev_running, running) {
            (None, Some(y)) if at_start => self.clocks.vote(y, white_starts, START_VOTE),
            (Some(x), Some(y)) if x != y && at_start => {
                self.clocks.vote(x, white_starts, START_VOTE)
            }
            _ => {}
        }
        match (prev_running, running) {
            (Some(x), Some(y)) if x != y => {
                let before_ms = prev.map(|p| u64::from(p.side(x).seconds) * 1000);
                self.clocks.presses.push(Press {
                    side: x,
                    after_ms: u64::from(r.side(x).seconds) * 1000,
                    before_ms,
                    turn_start_ms: self.clocks.turn_start[side_index(x)],
                    used: false,
                    board: None,
                });
                self.note_press(self.clocks.presses.len() - 1, now_ms);
                self.clocks.turn_start[side_index(y)] = Some(u64::from(r.side(y).seconds) * 1000);
            }
            // (Not the first reading after a gap: that turn began unseen.)
            (None, Some(y))
                if self.clocks.turn_start[side_index(y)].is_none() && self.clocks.gap.is_none() =>
            {
                self.clocks.turn_start[side_index(y)] = Some(u64::from(r.side(y).seconds) * 1000);
            }
            _ => {}
        }
        // A flag fell: the other side wins, unless it cannot mate (then a draw).
        for side in [ClockSide::Left, ClockSide::Right] {
            if r.side(side).flag_fallen
                && !self.finished
                && let (Some(w), Some(pos)) = (self.clocks.white_side(), self.positions.last())
            {
                let loser = if side == w {
                    Color::White
                } else {
                    Color::Black
                };
                let winner = !loser;
                let result =
                    if pos.board().by_color(winner).count() == 1 || pos_cannot_mate(pos, winner) {
                        GameResult::Draw
                    } else if winner == Color::White {
                        GameResult::WhiteWins
                    } else {
                        GameResult::BlackWins
                    };
                out.extend(self.propose(result, ProposalReason::TimeForfeit));
            }
        }
        out.extend(self.assign_clocks());
        if let Some((white, black, running)) = self.running_clock() {
            self.clock_tags(white, black, running);
            let clock = Outcome::Clock {
                white,
                black,
                running: running.map(ColorName::from),
            };
            if self.held.is_empty() {
                out.push(clock);
            } else {
                self.held_clock = Some(clock);
            }
        }
        // Play goes on from the game's position: the corrections were this game's.
        if !self.held.is_empty() && r.running_side().is_some() && self.shows_game() {
            out.extend(self.release_held());
        }
        out
    }

    /// A clock record from a bus board's log: a lever press halted `side` at `seconds`. It is
    /// the press itself, in its place among the board's changes, so several presses between two
    /// clock polls are each seen; the readings that follow are not taken for another press.
    fn on_clock_record(&mut self, side: ClockSide, seconds: u32, now_ms: u64) -> Vec<Outcome> {
        let after_ms = u64::from(seconds) * 1000;
        let other = side.other();
        // The reading taken just after this press, before its record came (the poll's clock
        // request raced the press): the press is already known, now it gets its board.
        if let Some(p) = self.clocks.presses.last_mut()
            && p.board.is_none()
            && p.side == side
            && p.after_ms.abs_diff(after_ms) <= 1_000
            && self
                .clocks
                .last
                .is_some_and(|r| r.running_side() == Some(other))
        {
            p.board = Some(self.board);
            return self.assign_clocks();
        }
        let last = self.clocks.last;
        let before_ms = last
            .filter(|r| self.clocks.last_is_fresh && r.running_side() == Some(side))
            .map(|r| u64::from(r.side(side).seconds) * 1000);
        self.clocks.presses.push(Press {
            side,
            after_ms,
            before_ms,
            turn_start_ms: self.clocks.turn_start[side_index(side)],
            used: false,
            board: Some(self.board),
        });
        self.note_press(self.clocks.presses.len() - 1, now_ms);
        // The other side's turn starts at the time its own last press left it.
        let other_time = self
            .clocks
            .presses
            .iter()
            .rev()
            .find(|p| p.side == other)
            .map(|p| p.after_ms)
            .or(last.map(|r| u64::from(r.side(other).seconds) * 1000));
        self.clocks.turn_start[side_index(other)] = other_time;
        // The last reading now stands for the clock after this press, so the next reading
        // (which shows the other side running) is not counted as a press again.
        if let Some(r) = self.clocks.last.as_mut()
            && r.running_side().is_some()
        {
            let t = if side == ClockSide::Left {
                &mut r.left
            } else {
                &mut r.right
            };
            t.seconds = seconds;
            r.status.lever_right_high = other == ClockSide::Right;
            r.status.turn_left = other == ClockSide::Left;
            r.status.turn_right = other == ClockSide::Right;
        }
        self.clocks.last_is_fresh = false;
        self.assign_clocks()
    }

    /// Clock corrections between two readings `elapsed` ms apart: a side whose time rose
    /// without its own lever press (the increment and a period's bonus come with the press),
    /// or fell by more than it ran. Only while a game with moves goes on (setting the clocks
    /// before a game is not a correction) and which side is White is known.
    fn adjustments(&mut self, prev: &ClockReading, r: &ClockReading, elapsed: u64) -> Vec<Outcome> {
        let mut out = Vec::new();
        let Some(white) = self.clocks.white_side_sure() else {
            return out;
        };
        if self.finished || self.clocks.gap.is_some() || self.positions.len() < 2 {
            return out;
        }
        let (was, now) = (prev.running_side(), r.running_side());
        let elapsed = i64::try_from(elapsed).unwrap_or(i64::MAX);
        for side in [ClockSide::Left, ClockSide::Right] {
            let pressed = was == Some(side) && now.is_some() && now != Some(side);
            // A flag shown stops the clock: nothing to compare.
            if pressed || r.side(side).flag_fallen || prev.side(side).flag_fallen {
                continue;
            }
            // Running in both readings, it ran all the time between them; started between
            // them, it ran for under a second (a running clock is read every second), which
            // the display's rounding covers: a time set at the start shows as it was set.
            let ran = if was == Some(side) && now == Some(side) {
                elapsed
            } else {
                0
            };
            let change =
                (i64::from(r.side(side).seconds) - i64::from(prev.side(side).seconds)) * 1000;
            let delta = if change > 1_000 {
                change
            } else if change < -(ran + 2_000) {
                change + ran
            } else {
                continue;
            };
            if delta.abs() < ADJUSTMENT_MIN_MS {
                continue;
            }
            // Whole seconds, as the clock shows them.
            let delta = (delta as f64 / 1000.0).round() as i64 * 1000;
            let color = if side == white {
                ColorName::White
            } else {
                ColorName::Black
            };
            out.push(Outcome::ClockAdjustment {
                ply: self.positions.len(),
                color,
                delta_ms: delta,
            });
        }
        out
    }

    /// Keeps the PGN clock tags (PGN clock supplement §5, §6): `[WhiteClock]`/`[BlackClock]`
    /// with the times at the start of play, and `[Clock]` with the running clock while the
    /// game goes on.
    fn clock_tags(&mut self, white: ClockTime, black: ClockTime, running: Option<Color>) {
        let finished = self.finished;
        let start = self.clocks.start_reading;
        let white_side = self.clocks.white_side();
        let to_move = self.positions.last().map_or(Color::White, |p| p.turn());
        let Some(g) = self.game.as_mut() else { return };
        if g.tags.get("WhiteClock").is_none()
            && let (Some(r), Some(w)) = (start, white_side)
        {
            g.tags.set(
                "WhiteClock",
                ClockTime::from_secs(u64::from(r.side(w).seconds)).to_string(),
            );
            g.tags.set(
                "BlackClock",
                ClockTime::from_secs(u64::from(r.side(w.other()).seconds)).to_string(),
            );
        }
        if finished {
            g.tags.remove("Clock");
            return;
        }
        let value = match running {
            Some(Color::White) => format!("W/{white}"),
            Some(Color::Black) => format!("B/{black}"),
            None => format!(
                "N/{}",
                if to_move == Color::White {
                    white
                } else {
                    black
                }
            ),
        };
        g.tags.set("Clock", value);
    }

    /// Gives each move waiting for its clock the press that ended its mover's turn.
    fn assign_clocks(&mut self) -> Vec<Outcome> {
        // A press made in place of a move now made (an illegal move before it) is on the
        // record first, and ends no move.
        let mut out = if self.clocks.checks.is_empty() {
            Vec::new()
        } else {
            self.confirm_presses(None)
        };
        if self.clocks.gap.is_some() {
            match self.settle_gap() {
                Some(o) => out.extend(o),
                None => return out,
            }
        }
        let pending = std::mem::take(&mut self.clocks.pending);
        let mut still = Vec::new();
        for (ply, mover) in pending {
            let side = self.clocks.side_of(mover);
            // The first unused press by the mover's side after the press that ended an
            // earlier move: presses and moves happen in the same order, but a fast player may
            // press before the board settles, and moves bridged after missed readings arrive
            // after several presses.
            let after = self
                .clocks
                .assigned
                .iter()
                .take(ply - 1)
                .rev()
                .find_map(|a| *a);
            // A press from a bus board's log shows the board it was made on: it belongs to
            // the move whose position that is, and to no other. So a press that was never
            // seen costs its own move's clock only, and the next press puts the game back in
            // step.
            let expected = self
                .orientation
                .zip(self.positions.get(ply))
                .map(|(o, pos)| Placement::from_board(pos.board(), o));
            let found = self
                .clocks
                .presses
                .iter()
                .enumerate()
                .find(|(i, p)| {
                    !p.used
                        && *i >= self.clocks.press_floor
                        && after.is_none_or(|a| *i > a)
                        && match side {
                            Some(side) => {
                                p.side == side && p.board.is_none_or(|b| Some(b) == expected)
                            }
                            // Which side is White is not known yet: only a press made on
                            // this very position can say whose it was.
                            None => p.board.is_some() && p.board == expected,
                        }
                })
                .map(|(i, _)| i);
            match found {
                Some(i) => {
                    if side.is_none() {
                        // That press is the strongest evidence there is for the sides.
                        let pressed = self.clocks.presses[i].side;
                        self.clocks.vote(pressed, mover == Color::White, START_VOTE);
                    }
                    let p = &mut self.clocks.presses[i];
                    p.used = true;
                    let clk = ClockTime(p.after_ms);
                    let emt = p
                        .turn_start_ms
                        .zip(p.before_ms)
                        .map(|(s, b)| ClockTime(s.saturating_sub(b)));
                    if self.clocks.assigned.len() < ply {
                        self.clocks.assigned.resize(ply, None);
                    }
                    self.clocks.assigned[ply - 1] = Some(i);
                    if let Some(m) = self.game.as_mut().and_then(|g| g.moves.get_mut(ply - 1)) {
                        m.clk = Some(clk);
                        m.emt = emt;
                    }
                    out.push(Outcome::MoveClock { ply, clk, emt });
                }
                None => still.push((ply, mover)),
            }
        }
        // A move whose mover has pressed again since (a clock two plies later is placed)
        // cannot get a press any more: its clock stays unknown rather than borrowed.
        let newest_ply = self
            .clocks
            .assigned
            .iter()
            .rposition(Option::is_some)
            .map(|i| i + 1);
        still.retain(|&(ply, _)| newest_ply.is_none_or(|q| q < ply + 2));
        self.clocks.pending = still;
        out
    }

    /// After a gap in the readings, works out which moves' presses fell into it, once the
    /// board is in sync and still and which clock side is White is sure. The presses seen
    /// since the first reading after the gap belong, in order, to the moves from the one
    /// whose turn that reading showed running; every earlier move without a clock keeps none
    /// (its press was not seen), except the one just before, whose time the halted side of
    /// that reading still showed. `None`: not yet.
    fn settle_gap(&mut self) -> Option<Vec<Outcome>> {
        let gap = self.clocks.gap?;
        let first = gap.first?;
        if self.readings_missed || self.out_of_sync || self.awaiting_judgement() {
            return None;
        }
        let mut out = Vec::new();
        let white = self.clocks.white_side_sure()?;
        let pos = self.positions.last()?;
        let plies = self.positions.len() - 1;
        let colour = |side: ClockSide| {
            if side == white {
                Color::White
            } else {
                Color::Black
            }
        };
        // The ply whose turn the clock shows running now: the next move when the side to
        // move runs, the last move (made, not yet pressed) when the other side does.
        let now_turn = match self.clocks.last.and_then(|r| r.running_side()) {
            Some(side) if colour(side) != pos.turn() => plies,
            _ => plies + 1,
        };
        let seen = self.clocks.presses.len().saturating_sub(gap.floor);
        let first_turn = now_turn.saturating_sub(seen);
        self.clocks.gap = None;
        self.clocks.press_floor = gap.floor;
        // The move before the turn that was running at the first reading: its mover's clock
        // has stood still since that press.
        if let Some(halted) = first.running_side().map(ClockSide::other)
            && first_turn >= 2
        {
            let ply = first_turn - 1;
            let mover = self.positions.get(ply - 1).map(|p| p.turn());
            let clk = ClockTime(u64::from(first.side(halted).seconds) * 1000);
            if mover == Some(colour(halted))
                && let Some(m) = self.game.as_mut().and_then(|g| g.moves.get_mut(ply - 1))
                && m.clk.is_none()
            {
                m.clk = Some(clk);
                m.emt = None;
                out.push(Outcome::MoveClock {
                    ply,
                    clk,
                    emt: None,
                });
            }
        }
        self.clocks.pending.retain(|&(ply, _)| ply >= first_turn);
        Some(out)
    }

    /// Arbiter: the game goes on from the position on the board, `turn` to move. The moves so
    /// far are kept in a comment and the game restarts from that position with its FEN.
    /// With no game yet (the relay started in the middle of one), a game starts from the
    /// position on the board.
    pub fn continue_from_board(&mut self, turn: Color) -> Result<Vec<Outcome>, String> {
        if !self.have_board {
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
        self.out_of_sync = false;
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

    /// Arbiter: the pieces are being put back to the game's position; returns it (FEN
    /// placement) so the arbiter can set it. The game resumes when the board matches.
    pub fn position_to_restore(&self) -> Option<String> {
        self.positions
            .last()
            .map(|p| p.board().board_fen().to_string())
    }

    /// Arbiter: the proposed result is right. A time forfeit is written with
    /// `[Termination "time forfeit"]` (PGN standard §9.8.1).
    pub fn confirm_proposal(&mut self) -> Option<GameResult> {
        let (result, reason) = self.proposal?;
        if let Some(g) = self.game.as_mut() {
            apply_proposal(g, result, reason);
        }
        self.set_result(result);
        Some(result)
    }

    /// Arbiter: a result is set or confirmed.
    pub fn set_result(&mut self, result: GameResult) {
        if let Some(g) = self.game.as_mut() {
            g.result = result;
        }
        self.finished = result != GameResult::Ongoing;
        self.ended_on_board = false;
        self.proposal = None;
    }
}

/// Gives `game` the result the board proposed, as an arbiter's confirmation would.
pub fn apply_proposal(game: &mut Game, result: GameResult, reason: ProposalReason) {
    if reason == ProposalReason::TimeForfeit {
        game.tags.set("Termination", "time forfeit");
    }
    game.result = result;
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

/// Whether `side` has too little material to ever mate (for a time forfeit, FIDE 6.9).
fn pos_cannot_mate(pos: &Chess, side: Color) -> bool {
    pos.has_insufficient_material(side)
}
