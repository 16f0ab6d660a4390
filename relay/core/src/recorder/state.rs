//! The recorder itself: its state, what comes in (messages with their receive times, time
//! passing, the end of a replay) and the clock corrections held back until it is known whose
//! game they belong to. What a still board or a clock reading means is worked out in the
//! files beside this one, each adding the methods of its concern.

use super::clocks::Clocks;
use super::outcome::{DrawCondition, Outcome, ProposalReason, RecorderConfig};
use super::phase::{BoardRead, LateBoard, Phase};
use crate::clock_time::ClockTime;
use crate::game::{Game, GameResult};
use boards::protocol::{ClockMessage, ClockSide, Message, Orientation, Placement};
use shakmaty::{Board, Chess, Color, Position};

/// Boards remembered while the game waits for the board to make sense.
const MAX_SEEN: usize = 4096;

/// A running clock is reported at least every second; a silence this long means lost readings.
const READING_GAP_MS: u64 = 2_500;

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
    pub(super) cfg: RecorderConfig,
    pub(super) board: Placement,
    /// Whether the board has been read whole, and whether its last change has been judged.
    pub(super) read: BoardRead,
    pub(super) orientation: Option<Orientation>,
    pub(super) game: Option<Game>,
    pub(super) positions: Vec<Chess>,
    /// The game's phase: going on, out of sync, ended on the board or finished.
    pub(super) phase: Phase,
    /// The result the board proposes. Not a phase: play may go on after it (a flag fell and
    /// nobody claimed it yet), whether the board agrees with the game or not.
    pub(super) proposal: Option<(GameResult, ProposalReason)>,
    pub(super) clocks: Clocks,
    pub(super) flagged: Vec<DrawCondition>,
    /// The game a new one replaced, until the caller takes it.
    pub(super) replaced: Option<Game>,
    /// The result the board proposed for that game, if any.
    pub(super) replaced_proposal: Option<(GameResult, ProposalReason)>,
    /// Boards read since the game's position was last confirmed, transient ones included
    /// (kept as read; turned into real squares only when a still board needs them).
    pub(super) seen: Vec<Placement>,
    /// When the last message arrived.
    pub(super) last_message_ms: Option<u64>,
    /// Messages stopped for longer than a running clock allows: moves may have been missed.
    /// Not a phase: readings can stop in any of them, and it is cleared only once a still
    /// board is explained.
    pub(super) readings_missed: bool,
    /// With no game yet: the last still board that is a position of a game under way, and
    /// which clock side ran while it stood (see [`Recorder::join_late`]).
    pub(super) late: Option<LateBoard>,
    /// Clock corrections seen and not yet known to belong to this game, and the running clock
    /// since them: a clock set for the next game while the last one's board still stands is
    /// not a correction of the last one. They stand once play goes on from the game's
    /// position (a move, or the clock running with the board showing the game) and are
    /// dropped when the board begins a new game (whose clock it is).
    pub(super) held: Vec<Outcome>,
    pub(super) held_clock: Option<Outcome>,
}

impl Recorder {
    pub fn new(cfg: RecorderConfig) -> Recorder {
        Recorder {
            cfg,
            board: Placement::default(),
            read: BoardRead::Unread,
            orientation: None,
            game: None,
            positions: Vec::new(),
            phase: Phase::Playing,
            proposal: None,
            clocks: Clocks::default(),
            flagged: Vec::new(),
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

    pub(super) fn set_game(&mut self, game: Game) {
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
        self.phase.is_out_of_sync()
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
            Message::BoardDump { placement }
                if self.read == BoardRead::Unread || *placement != self.board =>
            {
                self.board = *placement;
                // The whole board read (at last, or anew): judged once it is still.
                self.read = BoardRead::Settling { since_ms: now_ms };
                self.changed(now_ms);
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

    pub(super) fn release_held(&mut self) -> Vec<Outcome> {
        let mut out = std::mem::take(&mut self.held);
        out.extend(self.held_clock.take());
        out
    }

    /// The board stands still on the game's position.
    pub(super) fn shows_game(&self) -> bool {
        match (self.orientation, self.positions.last()) {
            (Some(o), Some(pos)) => {
                !self.phase.is_out_of_sync()
                    && !self.awaiting_judgement()
                    && self.board.to_board(o) == *pos.board()
            }
            _ => false,
        }
    }

    fn changed(&mut self, now_ms: u64) {
        // Before the first dump, field updates only keep the board as read up to date:
        // there is no whole board to judge yet.
        if self.read != BoardRead::Unread {
            self.read = BoardRead::Settling { since_ms: now_ms };
        }
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
        matches!(self.read, BoardRead::Settling { .. })
    }

    /// When the board change waiting to be judged will have been still for the settle time
    /// (ms, the clock of the messages' times); `None` when nothing waits.
    pub fn judge_at(&self) -> Option<u64> {
        match self.read {
            BoardRead::Settling { since_ms } => Some(since_ms.saturating_add(self.cfg.settle_ms)),
            BoardRead::Unread | BoardRead::Judged => None,
        }
    }

    /// Time passes: a board that has been still for the settle time is evaluated.
    pub fn tick(&mut self, now_ms: u64) -> Vec<Outcome> {
        let mut out = Vec::new();
        if let BoardRead::Settling { since_ms } = self.read
            && now_ms.saturating_sub(since_ms) >= self.cfg.settle_ms
        {
            self.read = BoardRead::Judged;
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
        if self.awaiting_judgement() {
            self.read = BoardRead::Judged;
            out = self.evaluate();
        }
        out.extend(self.confirm_presses(Some(u64::MAX)));
        self.settle_held(out)
    }
}
