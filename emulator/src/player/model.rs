//! What a script is made of, below everything that writes or reads one: the things people do
//! at the board ([`Action`]) at their virtual times, how untidy the hands are
//! ([`NoiseConfig`]), what a caller may ask of a script ([`ScriptOptions`]), and what the
//! finished [`Script`] says about each move, with the clock's sides as the player sees them.

use crate::clock::{ChessClock, TimeControl};
use crate::illegal::{ArbiterConfig, PlannedIllegal, ScriptedAdjustment, ScriptedIllegal};
use boards::protocol::ClockSide;
use shakmaty::{Color, Piece, Square};

/// What a person at the board does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The arbiter starts the clock (the first mover's side runs).
    StartClock,
    /// A piece leaves a (real, White-at-bottom) square.
    Lift(Square),
    /// A piece is set down. On an occupied square this means the sensor went from the old piece
    /// straight to the new one without reading the square empty (a capture done in one motion).
    Place(Square, Piece),
    /// The player of this colour presses their lever.
    PressLever(Color),
    /// The arbiter stops the clock (start/stop button).
    StopClock,
    /// The arbiter sets the clock after an illegal move: both times, the moves each side's
    /// clock has counted (the false press counted one too many, and a period's bonus must
    /// still come after the right move), and the side to run (`None`: left stopped).
    SetClock {
        white_ms: u64,
        black_ms: u64,
        white_moves: u32,
        black_moves: u32,
        run: Option<Color>,
    },
}

/// An action at a virtual time (ms since the script's start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedAction {
    pub at_ms: u64,
    pub action: Action,
}

/// How untidy the player is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseConfig {
    /// Chance per move of each kind of noise (slide, fidget, take-back-and-replay); 0 = clean.
    pub probability: f64,
    /// Min/max time between consecutive physical actions of one move (and from the last of them
    /// to the lever press).
    pub handling_ms: (u64, u64),
}

impl NoiseConfig {
    /// No noise, the usual handling speed.
    pub fn clean() -> NoiseConfig {
        NoiseConfig {
            probability: 0.0,
            ..NoiseConfig::default()
        }
    }
}

impl Default for NoiseConfig {
    fn default() -> NoiseConfig {
        NoiseConfig {
            probability: 0.15,
            handling_ms: (250, 700),
        }
    }
}

/// What a script is asked to hold besides the game: how untidy the hands are, and the illegal
/// moves to play with how the arbiter puts them right. The default is the usual untidy
/// player ([`NoiseConfig::default`]), no illegal move, and an arbiter who gives the opponent
/// two minutes ([`ArbiterConfig::default`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScriptOptions {
    /// How untidy the players are.
    pub noise: NoiseConfig,
    /// Illegal moves to play in place of the game's moves at these plies (FIDE Laws art. 7.5;
    /// see [`script`](crate::player::script) for when one cannot be).
    pub illegal: Vec<PlannedIllegal>,
    /// How the arbiter puts each illegal move right.
    pub arbiter: ArbiterConfig,
}

impl ScriptOptions {
    /// The game's moves only, handled with `noise`.
    pub fn new(noise: NoiseConfig) -> ScriptOptions {
        ScriptOptions {
            noise,
            ..ScriptOptions::default()
        }
    }

    /// Also the illegal moves `plans` asks for.
    pub fn with_illegal(mut self, plans: &[PlannedIllegal]) -> ScriptOptions {
        self.illegal = plans.to_vec();
        self
    }

    /// Illegal moves put right by `arbiter`.
    pub fn with_arbiter(mut self, arbiter: ArbiterConfig) -> ScriptOptions {
        self.arbiter = arbiter;
        self
    }
}

/// When one move was completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveTiming {
    /// The lever press (without a clock: the moment the move counts as done; the next move's
    /// actions come later).
    pub press_ms: u64,
    /// The move's `[%clk]` was reproduced exactly by this press.
    pub clock_honoured: bool,
    /// What the mover's clock shows right after this press (increment included): the truth a
    /// recorded `[%clk]` is checked against. `None` without a clock.
    pub clk_ms: Option<u64>,
}

/// A game as a timed list of actions.
#[derive(Clone, Debug)]
pub struct Script {
    /// Ordered by time; times strictly increase.
    pub actions: Vec<TimedAction>,
    /// The clock to set up before the script starts (None: no clock actions in the script):
    /// the game's time control, its first base raised by one increment when the recorded
    /// clocks show that the real clock credited it before the first move (as DGT clocks do).
    pub clock: Option<TimeControl>,
    /// The side to move in the start position (its lever is up when the clock starts).
    pub first_to_move: Color,
    /// The times the clock is set to before it starts, for a game taken up in the middle
    /// (see [`GameScore::clocks_at_start`](super::GameScore::clocks_at_start)); `None`: the
    /// time control's start.
    pub clocks_at_start: Option<ClocksAtStart>,
    /// One entry per move of the game.
    pub moves: Vec<MoveTiming>,
    /// The illegal moves played, in order (see [`ScriptOptions::illegal`]); none unless asked
    /// for.
    pub illegal: Vec<ScriptedIllegal>,
    /// Every clock time the arbiter changed after them, in order.
    pub adjustments: Vec<ScriptedAdjustment>,
}

impl Script {
    /// The stopped clock as the arbiter sets it up before [`Action::StartClock`]; White is on
    /// [`clock_side`]`(White)`.
    pub fn new_clock(&self) -> Option<ChessClock> {
        self.clock_with_white_on(clock_side(Color::White))
    }

    /// The stopped clock as the arbiter sets it up before [`Action::StartClock`], with White's
    /// time on `white`: the time control, the first mover's lever up, and the times (and the
    /// moves each side has made) of a game taken up in the middle.
    pub fn clock_with_white_on(&self, white: ClockSide) -> Option<ChessClock> {
        let side = |c: Color| {
            if c == Color::White {
                white
            } else {
                white.other()
            }
        };
        let mut clock = ChessClock::new(self.clock.clone()?, side(self.first_to_move));
        if let Some(at) = self.clocks_at_start {
            at.set(&mut clock, white);
        }
        Some(clock)
    }
}

/// The clocks of a game taken up after some of its moves: each side's time and how many
/// moves it has made (White first), as the clock stood after the last move before the cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClocksAtStart {
    pub ms: [u64; 2],
    pub moves_done: [u32; 2],
}

impl ClocksAtStart {
    /// Sets the stopped `clock` to these times, White's on `white`.
    pub fn set(&self, clock: &mut ChessClock, white: ClockSide) {
        let (l, r) = if white == ClockSide::Left {
            (0, 1)
        } else {
            (1, 0)
        };
        clock.arbiter_set(
            self.ms[l],
            self.ms[r],
            None,
            [self.moves_done[l], self.moves_done[r]],
            0,
        );
    }
}

/// When the arbiter starts the clock (and after which the first move's actions come).
pub const CLOCK_START_MS: u64 = 1_000;

/// The clock side of each colour: White on the left, throughout.
pub fn clock_side(color: Color) -> ClockSide {
    match color {
        Color::White => ClockSide::Left,
        Color::Black => ClockSide::Right,
    }
}

/// The index of a colour's entry in per-side arrays: White first.
pub(super) fn color_index(color: Color) -> usize {
    match color {
        Color::White => 0,
        Color::Black => 1,
    }
}
