//! The emulated player: turns a game read from PGN into a timed script of the physical things
//! people do at a DGT board — lifting and setting down pieces, pressing the clock lever — with
//! the untidy habits real players have (dgt-protocol.md §12.1).
//!
//! The script is written against virtual time in milliseconds since its start. The position of
//! the game's start is already on the board when the script begins; the arbiter starts the
//! clock at [`CLOCK_START_MS`]; each move is a handful of lifts and placements followed by the
//! mover's lever press. The emulator replays the actions at their times, turning them into
//! field updates and clock messages.
//!
//! Clock times in the PGN (`[%clk 1:23:45]`) are honoured exactly where the arithmetic allows:
//! the press falls at the moment that leaves the mover's clock — increment and period bonus
//! included, computed as [`ChessClock::press`] does — showing the recorded time. Everything is
//! reproducible from a seed with a small self-contained generator.
//!
//! At chosen plies the player can first complete an illegal move or press the clock without
//! one, and an arbiter put it right ([`script_with`], FIDE Laws art. 7.5): the game's moves
//! and its recorded times stay as they are.

use crate::clock::{ChessClock, Period, TimeControl};
pub use crate::illegal::{
    ArbiterConfig, IllegalKind, PlannedIllegal, ScriptedAdjustment, ScriptedIllegal, parse_plan,
};
use crate::illegal::{Displacement, pick_displacement};
use boards::protocol::ClockSide;
use boards::rng::SplitMix64;
use shakmaty::{Board, CastlingSide, Chess, Color, Move, Piece, Position, Role, Square, attacks};

// ---------------------------------------------------------------------------------------------
// Reading PGN
// ---------------------------------------------------------------------------------------------

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
        }
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

// ---------------------------------------------------------------------------------------------
// Scripts
// ---------------------------------------------------------------------------------------------

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
    /// One entry per move of the game.
    pub moves: Vec<MoveTiming>,
    /// The illegal moves played, in order (see [`script_with`]); none unless asked for.
    pub illegal: Vec<ScriptedIllegal>,
    /// Every clock time the arbiter changed after them, in order.
    pub adjustments: Vec<ScriptedAdjustment>,
}

impl Script {
    /// The stopped clock as the arbiter sets it up before [`Action::StartClock`]; White is on
    /// [`clock_side`]`(White)`.
    pub fn new_clock(&self) -> Option<ChessClock> {
        self.clock
            .clone()
            .map(|tc| ChessClock::new(tc, clock_side(self.first_to_move)))
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

fn color_index(color: Color) -> usize {
    match color {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// Think time for a move without a usable recorded clock.
const RANDOM_THINK_MS: (u64, u64) = (1_000, 20_000);

/// Seeds the generator of the illegal moves (from the script's seed), so that the game's own
/// moves are handled as they are without them.
const INCIDENT_SEED: u64 = 0x0111_e6a1;
/// The least thought before an illegal move (or a press without one): nobody errs at the
/// board in the instant the opponent's press leaves them to move.
const INCIDENT_THINK_MS: u64 = 1_000;
/// From an illegal press to the arbiter stopping the clock.
const NOTICED_MS: (u64, u64) = (3_000, 8_000);
/// From the position put back to the clock set and restarted.
const CLOCK_SETTING_MS: (u64, u64) = (2_000, 5_000);
/// Least time on the opponent's clock for an illegal move to be played: it runs until the
/// arbiter stops it, and must not fall meanwhile.
const OPPONENT_LEAST_MS: u64 = NOTICED_MS.1 + 2_000;

/// Writes the script for `game`. Same game, seed and configuration → same script.
pub fn script(game: &GameScore, seed: u64, noise: &NoiseConfig) -> Script {
    script_with(game, seed, noise, &[])
}

/// [`script`] with illegal moves at the plies of `illegal`, put right by an arbiter who gives
/// the opponent two minutes ([`ArbiterConfig::default`]); see [`script_with_arbiter`].
pub fn script_with(
    game: &GameScore,
    seed: u64,
    noise: &NoiseConfig,
    illegal: &[PlannedIllegal],
) -> Script {
    script_with_arbiter(game, seed, noise, illegal, &ArbiterConfig::default())
}

/// [`script`] with illegal moves (FIDE Laws art. 7.5). In place of the move of each planned
/// ply, after part of the think time, the mover displaces one of their pieces illegally as
/// the plan asks (or, when the position has none of that kind, as it allows; see
/// [`ScriptedIllegal::kind`]) or moves nothing, and presses the lever. 3–8 seconds later the
/// arbiter stops the clock, puts the piece back (and the one it took), and sets the clock:
/// the opponent gets `arbiter.extra_ms` more than it shows, the offender gets back what they
/// had before the false press (its increment and any period bonus taken off, its move count
/// too), and the offender's side runs. Then the game's move is played as usual. The game's
/// moves never change, and a recorded `[%clk]` is honoured as without the incident.
///
/// An illegal move needs a clock to press: without one (`Script::clock` is `None`) none is
/// played. None is played either at a ply beyond the game, nor when a clock is too low to
/// hold it (the offender's below twice what the hands need, the opponent's below 10 s);
/// [`Script::illegal`] lists those played.
///
/// Every move is handled as in [`script`] with the same seed (the same noise, the same order
/// of lifts), except that a move whose think leaves no room for both an illegal move and its
/// untidy handling is made plainly. Think times differ where the clocks do: the opponent,
/// given extra time, takes it to reach a recorded time.
pub fn script_with_arbiter(
    game: &GameScore,
    seed: u64,
    noise: &NoiseConfig,
    illegal: &[PlannedIllegal],
    arbiter: &ArbiterConfig,
) -> Script {
    let (plain, straight) = write_script(game, seed, noise, &[], arbiter, None);
    if illegal.is_empty() {
        return plain;
    }
    write_script(game, seed, noise, illegal, arbiter, Some(&straight)).0
}

/// How [`script`] plays each move, for a script with illegal moves to handle each move
/// alike: the generator's state at the move's start and once its think time is chosen (how
/// many draws that takes depends on the clock), and the think time.
struct Straight {
    rng: Vec<u64>,
    plan_rng: Vec<u64>,
    think: Vec<u64>,
}

/// The script, and how each move was played. With `straight`, each move draws what it drew
/// there (the generator reset to the move's state) and keeps the noise that fitted there:
/// whatever an incident changes stays within its move and the opponent's next one.
fn write_script(
    game: &GameScore,
    seed: u64,
    noise: &NoiseConfig,
    illegal: &[PlannedIllegal],
    arbiter: &ArbiterConfig,
    straight: Option<&Straight>,
) -> (Script, Straight) {
    let mut rng = SplitMix64(seed);
    let mut irng = SplitMix64(seed ^ INCIDENT_SEED);
    let mut played = Straight {
        rng: Vec::with_capacity(game.moves.len()),
        plan_rng: Vec::with_capacity(game.moves.len()),
        think: Vec::with_capacity(game.moves.len()),
    };
    let mut played_illegal = Vec::new();
    let mut adjustments = Vec::new();
    let (a, b) = noise.handling_ms;
    let gap_lo = a.min(b).max(1);
    let gap_hi = a.max(b).max(gap_lo);
    let p = if noise.probability.is_finite() {
        noise.probability.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let first_to_move = game.start.turn();
    let time_control = game
        .time_control
        .clone()
        .map(|tc| with_start_increment_if_recorded(tc, game));
    let mut clock = time_control
        .clone()
        .map(|tc| ChessClock::new(tc, clock_side(first_to_move)));
    let mut actions = Vec::new();
    let mut timings = Vec::with_capacity(game.moves.len());
    let mut prev = CLOCK_START_MS;
    if let Some(c) = clock.as_mut() {
        c.start(prev);
        actions.push(TimedAction {
            at_ms: prev,
            action: Action::StartClock,
        });
    }
    let mut moves_done = [0u32; 2];
    let mut pos = game.start.clone();
    for (index, scored) in game.moves.iter().enumerate() {
        if let Some(st) = straight.and_then(|st| st.rng.get(index)) {
            rng = SplitMix64(*st);
        }
        played.rng.push(rng.0);
        let mover = pos.turn();
        let side = clock_side(mover);
        let mut after = pos.clone();
        after.play_unchecked(scored.mv);

        let mut minimal = Vec::new();
        core_actions(&pos, scored.mv, false, &mut |_| 0, &mut minimal);
        // Hands need time: a move takes at least the shortest handling gap per action (and one
        // for the press), however fast the record says it was played. Faster than that no
        // player moves on a real board, and the board could not be read between the moves.
        let needed = (minimal.len() as u64 + 1) * gap_lo.max(1);

        // An illegal move in place of this one, if planned and the clocks can hold it.
        let incident = match (&clock, illegal.iter().find(|p| p.ply == index + 1)) {
            (Some(c), Some(plan)) => {
                let incident = prepare_incident(&mut irng, &pos, plan.kind, gap_lo, gap_hi);
                let own = c.remaining_ms(side, prev);
                let theirs = c.remaining_ms(side.other(), prev);
                (c.flag_fallen(prev).is_none()
                    && own > 2 * (needed + incident.least_ms())
                    && theirs >= OPPONENT_LEAST_MS)
                    .then_some(incident)
            }
            _ => None,
        };
        // How long from the previous press to this one, and the move's physical actions
        // (noise dropped if they do not fit in the think time): with the same draws from
        // `rng` as without an incident, so that the moves around one are handled alike.
        let remaining = clock.as_ref().map(|c| c.remaining_ms(side, prev));
        let n = moves_done[color_index(mover)] + 1;
        let next_clk = game.moves.get(index + 2).and_then(|m| m.clk_ms);
        let (mut think, mut honoured) = match (&clock, remaining) {
            (Some(c), Some(before)) => choose_think(
                &mut rng,
                c.time_control(),
                n,
                before,
                scored.clk_ms,
                next_clk,
                needed,
            ),
            _ => (random_think(&mut rng, None, needed), false),
        };
        played.think.push(think);
        if let Some(st) = straight.and_then(|st| st.plan_rng.get(index)) {
            rng = SplitMix64(*st);
        }
        played.plan_rng.push(rng.0);
        let mut plan = plan_move(&mut rng, &pos, after.board(), scored.mv, p);
        let mut gaps = draw_gaps(&mut rng, plan.len(), gap_lo, gap_hi);
        let replan = match straight.and_then(|st| st.think.get(index)) {
            None => gaps.iter().sum::<u64>() >= think,
            // As without incidents (a think made longer by extra time keeps the noise out,
            // one made shorter spreads the same handling), unless the hands cannot make it.
            Some(&t) => gaps.iter().sum::<u64>() >= t || think < (plan.len() as u64 + 1) * gap_lo,
        };
        if replan {
            plan = plan_move(&mut rng, &pos, after.board(), scored.mv, 0.0);
            if plan.len() as u64 + 1 > think {
                plan = minimal.clone();
            }
            gaps = draw_gaps(&mut rng, plan.len(), gap_lo, gap_hi);
        }

        // An illegal move takes the first part of the think time; the real move's think
        // starts when the arbiter restarts the clock. The offender's clock, set back to what
        // it showed at the false press, has then lost exactly the incident's part, and the
        // press of the real move leaves what it would have left without the incident: a
        // recorded time is honoured all the same.
        let mut start = prev;
        if let (Some(incident), Some(c), Some(before)) = (incident, clock.as_mut(), remaining) {
            let least = incident.least_ms();
            if think <= gaps.iter().sum::<u64>() + least {
                // No room for both the incident and the move's handling: the move is made
                // plainly, after a think long enough for both.
                if think < needed + least {
                    (think, honoured) = choose_think(
                        &mut irng,
                        c.time_control(),
                        n,
                        before,
                        scored.clk_ms,
                        next_clk,
                        needed + least,
                    );
                }
                plan = minimal;
                gaps = draw_gaps(&mut irng, plan.len(), gap_lo, gap_hi);
            }
            let room = think.saturating_sub(gaps.iter().sum::<u64>() + least);
            let at = IncidentAt {
                ply: index + 1,
                mover,
                prev,
                pre: INCIDENT_THINK_MS + irng.range(0, room / 2),
                gap: (gap_lo, gap_hi),
                moves_done,
                extra_ms: arbiter.extra_ms,
            };
            if let Some(done) = play_incident(&mut irng, c, &incident, &at, &mut actions) {
                think -= done.illegal.press_ms - prev;
                start = done.set_ms;
                played_illegal.push(done.illegal);
                adjustments.extend(done.adjustments);
            }
        }
        let press = start + think;

        let k = plan.len() as u64;
        let times: Vec<u64> = if gaps.iter().sum::<u64>() < think {
            // Think first, then handle: the last gap ends at the press.
            let mut t = press;
            let mut v = vec![0; plan.len()];
            for j in (0..plan.len()).rev() {
                t -= gaps[j];
                v[j] = t;
            }
            v
        } else {
            // Too little time for the usual handling: spread evenly (think ≥ k + 1 here).
            (1..=k).map(|j| start + j * think / (k + 1)).collect()
        };
        actions.extend(
            times
                .into_iter()
                .zip(plan)
                .map(|(at_ms, action)| TimedAction { at_ms, action }),
        );

        let mut clk_ms = None;
        if let Some(c) = clock.as_mut() {
            // Fails only after a flag fell (possible only with a random think on an almost
            // empty clock); the script goes on regardless, as players would.
            let _ = c.press(side, press);
            clk_ms = Some(c.remaining_ms(side, press));
            actions.push(TimedAction {
                at_ms: press,
                action: Action::PressLever(mover),
            });
        }
        moves_done[color_index(mover)] += 1;
        timings.push(MoveTiming {
            press_ms: press,
            clock_honoured: honoured,
            clk_ms,
        });
        prev = press;
        pos = after;
    }
    let script = Script {
        actions,
        clock: time_control,
        first_to_move,
        moves: timings,
        illegal: played_illegal,
        adjustments,
    };
    (script, played)
}

/// An illegal move made ready for one ply: what the hands do, and the gaps between.
struct Incident {
    /// The displacement (`None`: the lever pressed with nothing moved).
    seen: Option<Displacement>,
    /// The lifts and placements of the displacement.
    hands: Vec<Action>,
    /// After each of `hands`, the gap to the next action (the last: to the press).
    gaps: Vec<u64>,
}

impl Incident {
    /// The least time from the previous press to the false one (a moment's thought first).
    fn least_ms(&self) -> u64 {
        INCIDENT_THINK_MS + self.gaps.iter().sum::<u64>()
    }
}

/// Picks the displacement for `kind` in `pos` and how the hands make it. A position without
/// any illegal displacement of the mover's (a bare king with nowhere to go wrong) gets a press
/// without a move.
fn prepare_incident(
    rng: &mut SplitMix64,
    pos: &Chess,
    kind: IllegalKind,
    gap_lo: u64,
    gap_hi: u64,
) -> Incident {
    let seen = match kind {
        IllegalKind::PressWithoutMove => None,
        kind => pick_displacement(pos, kind, rng),
    };
    let hands = match seen {
        None => Vec::new(),
        Some(d) if d.captured.is_some() => match rng.below(3) {
            // The own piece set down on the other in one motion.
            0 => vec![Action::Lift(d.from), Action::Place(d.to, d.piece)],
            // The taken piece off first.
            1 => vec![
                Action::Lift(d.to),
                Action::Lift(d.from),
                Action::Place(d.to, d.piece),
            ],
            // The own piece in hand first.
            _ => vec![
                Action::Lift(d.from),
                Action::Lift(d.to),
                Action::Place(d.to, d.piece),
            ],
        },
        Some(d) => vec![Action::Lift(d.from), Action::Place(d.to, d.piece)],
    };
    let gaps = draw_gaps(rng, hands.len(), gap_lo, gap_hi);
    Incident { seen, hands, gaps }
}

/// Where an incident happens in the script.
struct IncidentAt {
    ply: usize,
    mover: Color,
    /// The previous press (or the clock's start): the offender's clock runs from here.
    prev: u64,
    /// From `prev` to the first action of the displacement (to the press, without one).
    pre: u64,
    /// The handling gaps.
    gap: (u64, u64),
    /// The real moves each side has made (White, Black): what the arbiter sets the clock's
    /// move counters to.
    moves_done: [u32; 2],
    extra_ms: u64,
}

/// An incident as played.
struct IncidentDone {
    illegal: ScriptedIllegal,
    adjustments: Vec<ScriptedAdjustment>,
    /// When the arbiter restarted the clock.
    set_ms: u64,
}

/// Plays `incident` into `actions` and onto the script's clock `c`, as the board's clock will
/// see it: displacement, press, clock stopped, position put back, clock set and restarted.
/// `None` (and nothing changed) when the clock does not take the press.
fn play_incident(
    rng: &mut SplitMix64,
    c: &mut ChessClock,
    incident: &Incident,
    at: &IncidentAt,
    actions: &mut Vec<TimedAction>,
) -> Option<IncidentDone> {
    let side = clock_side(at.mover);
    let (lo, hi) = at.gap;
    let mut steps = Vec::new();
    let mut t = at.prev + at.pre;
    for (&action, &gap) in incident.hands.iter().zip(&incident.gaps) {
        steps.push(TimedAction { at_ms: t, action });
        t += gap;
    }
    let press_ms = t;
    // What the offender's clock shows just before the false press: what the arbiter gives back.
    let own_before = c.remaining_ms(side, press_ms);
    if !c.press(side, press_ms) {
        return None;
    }
    steps.push(TimedAction {
        at_ms: press_ms,
        action: Action::PressLever(at.mover),
    });
    let stop_ms = press_ms + rng.range(NOTICED_MS.0, NOTICED_MS.1);
    c.stop(stop_ms);
    steps.push(TimedAction {
        at_ms: stop_ms,
        action: Action::StopClock,
    });
    let mut t = stop_ms;
    if let Some(d) = incident.seen {
        let mut back = vec![Action::Lift(d.to), Action::Place(d.from, d.piece)];
        if let Some(taken) = d.captured {
            back.push(Action::Place(d.to, taken));
        }
        for action in back {
            t += rng.range(lo, hi);
            steps.push(TimedAction { at_ms: t, action });
        }
    }
    let set_ms = t + rng.range(CLOCK_SETTING_MS.0, CLOCK_SETTING_MS.1);
    let own_shown = c.remaining_ms(side, set_ms);
    let theirs_shown = c.remaining_ms(side.other(), set_ms);
    let theirs = theirs_shown.saturating_add(at.extra_ms);
    let (white_ms, black_ms) = match at.mover {
        Color::White => (own_before, theirs),
        Color::Black => (theirs, own_before),
    };
    // The script's clock has White on the left (see `clock_side`).
    c.arbiter_set(white_ms, black_ms, Some(side), at.moves_done, set_ms);
    steps.push(TimedAction {
        at_ms: set_ms,
        action: Action::SetClock {
            white_ms,
            black_ms,
            white_moves: at.moves_done[0],
            black_moves: at.moves_done[1],
            run: Some(at.mover),
        },
    });
    let mut adjustments = Vec::new();
    if at.extra_ms > 0 {
        adjustments.push(ScriptedAdjustment {
            ply: at.ply,
            color: at.mover.other(),
            delta_ms: theirs as i64 - theirs_shown as i64,
            at_ms: set_ms,
        });
    }
    if own_before != own_shown {
        adjustments.push(ScriptedAdjustment {
            ply: at.ply,
            color: at.mover,
            delta_ms: own_before as i64 - own_shown as i64,
            at_ms: set_ms,
        });
    }
    actions.extend(steps);
    let seen = incident.seen;
    Some(IncidentDone {
        illegal: ScriptedIllegal {
            ply: at.ply,
            color: at.mover,
            kind: seen.map_or(IllegalKind::PressWithoutMove, |d| d.kind),
            from: seen.map(|d| d.from),
            to: seen.map(|d| d.to),
            capture: seen.is_some_and(|d| d.captured.is_some()),
            press_ms,
        },
        adjustments,
        set_ms,
    })
}

/// DGT clocks in Fischer mode credit the increment before the first move too (a 90+30 clock
/// starts at 1:30:30). [`ChessClock`] starts at the bare base; when a first move's recorded
/// clock can only be explained by that extra increment, it is folded into the first period's
/// base so that the recorded times can be reproduced.
fn with_start_increment_if_recorded(tc: TimeControl, game: &GameScore) -> TimeControl {
    let gain = tc.added_after_move(1).total_ms();
    let Some(base) = tc.initial_ms() else {
        return tc;
    };
    let explained = |c: u64| c > base + gain && c <= base + 2 * gain;
    if gain == 0
        || !game
            .moves
            .iter()
            .take(2)
            .any(|m| m.clk_ms.is_some_and(explained))
    {
        return tc;
    }
    let mut periods = tc.periods().to_vec();
    match periods.first_mut() {
        Some(Period::Moves { base_ms, .. } | Period::SuddenDeath { base_ms, .. }) => {
            *base_ms += gain;
        }
        _ => return tc,
    }
    TimeControl::Periods(periods)
}

fn random_think(rng: &mut SplitMix64, remaining: Option<u64>, needed: u64) -> u64 {
    let mut t = rng.range(RANDOM_THINK_MS.0, RANDOM_THINK_MS.1);
    if let Some(r) = remaining {
        t = t.min(r / 2);
    }
    t.max(needed)
}

/// The think time of the mover's `n`-th move, who has `before` on the clock when it starts,
/// and whether it reproduces the recorded clock `clk` exactly. `needed` is the least time the
/// hands need (one millisecond per action and one for the press).
///
/// * Exactly when the arithmetic allows: `before − think + increment + bonus = clk`.
/// * A recorded time higher than reachable (the real move took less than the display's second,
///   or the clock was corrected upwards): a quick move, kept within the display's second when
///   possible, so that the clock stays as close to the record as it can.
/// * No usable record (none, or below the increment, like a spurious 0:00:00): a random think,
///   but leaving enough for the side's next recorded time to be reachable.
fn choose_think(
    rng: &mut SplitMix64,
    tc: &TimeControl,
    n: u32,
    before: u64,
    clk: Option<u64>,
    next_clk: Option<u64>,
    needed: u64,
) -> (u64, bool) {
    let gain = |n: u32| i128::from(tc.added_after_move(n).total_ms());
    let before_i = i128::from(before);
    let needed_i = i128::from(needed);
    if let Some(target) = clk
        && i128::from(target) > gain(n)
    {
        // The think time that leaves exactly the recorded time after the press.
        let exact = before_i - (i128::from(target) - gain(n));
        if exact >= needed_i {
            return (exact as u64, true);
        }
        let hi = if exact > -1_000 { 999 + exact } else { 999 };
        let hi = hi.max(needed_i).min(before_i - 1);
        if hi >= needed_i {
            return (rng.range(needed, hi as u64), false);
        }
    }
    let mut think = random_think(rng, Some(before), needed);
    if let Some(next) = next_clk
        && i128::from(next) > gain(n + 1)
    {
        // This think and the next one together, if the next record is to be met exactly.
        let budget = before_i + gain(n) - (i128::from(next) - gain(n + 1));
        if budget >= 2 * needed_i {
            think = think.min((budget / 2) as u64).max(needed);
        }
    }
    (think, false)
}

fn draw_gaps(rng: &mut SplitMix64, n: usize, lo: u64, hi: u64) -> Vec<u64> {
    (0..n).map(|_| rng.range(lo, hi)).collect()
}

/// The physical actions of one move, with noise of each kind at chance `p`.
fn plan_move(rng: &mut SplitMix64, pos: &Chess, after: &Board, mv: Move, p: f64) -> Vec<Action> {
    let mut out = Vec::new();
    let color = pos.turn();
    let board = pos.board();
    let fidget = rng.chance(p);
    let slide = rng.chance(p);
    let retake = rng.chance(p);
    if fidget {
        // Adjust one of one's own pieces first. Not the king: lifting a king and putting it
        // back is the DGT driver's "move now" gesture (dgt-protocol.md §12.3).
        let own: Vec<Square> = (board.by_color(color) & !board.kings())
            .into_iter()
            .collect();
        if !own.is_empty() {
            let sq = own[rng.below(own.len() as u64) as usize];
            if let Some(piece) = board.piece_at(sq) {
                out.push(Action::Lift(sq));
                out.push(Action::Place(sq, piece));
            }
        }
    }
    core_actions(pos, mv, slide, &mut |n| rng.below(n), &mut out);
    if retake {
        // Take the move back (pieces back where they were, captured piece restored), then
        // play it again — before pressing the clock.
        undo_actions(board, after, &mut out);
        core_actions(pos, mv, false, &mut |n| rng.below(n), &mut out);
    }
    out
}

/// Lifts and placements that play `mv`. `pick(n)` chooses one of `n` ways (0 = the shortest).
fn core_actions(
    pos: &Chess,
    mv: Move,
    slide: bool,
    pick: &mut dyn FnMut(u64) -> u64,
    out: &mut Vec<Action>,
) {
    let color = pos.turn();
    match mv {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            let moving = Piece { color, role };
            let landed = Piece {
                color,
                role: promotion.unwrap_or(role),
            };
            let path = if slide && matches!(role, Role::Bishop | Role::Rook | Role::Queen) {
                squares_between(from, to)
            } else {
                Vec::new()
            };
            // A promoting pawn may be set down on the last rank before the new piece.
            let pawn_first = promotion.is_some() && pick(2) == 1;
            let carry = |out: &mut Vec<Action>| {
                out.push(Action::Lift(from));
                for &sq in &path {
                    out.push(Action::Place(sq, moving));
                    out.push(Action::Lift(sq));
                }
            };
            let land = |out: &mut Vec<Action>| {
                if pawn_first {
                    out.push(Action::Place(to, moving));
                    out.push(Action::Lift(to));
                }
                out.push(Action::Place(to, landed));
            };
            if capture.is_some() {
                match pick(4) {
                    // In one motion: the square never reads empty.
                    0 => {
                        carry(out);
                        land(out);
                    }
                    // Captured piece off first.
                    1 => {
                        out.push(Action::Lift(to));
                        carry(out);
                        land(out);
                    }
                    // Own piece in hand first; meanwhile the board shows the captured piece
                    // still on the target.
                    2 => {
                        carry(out);
                        out.push(Action::Lift(to));
                        land(out);
                    }
                    // Set down on the target before the captured piece is pulled away.
                    _ => {
                        carry(out);
                        land(out);
                        out.push(Action::Lift(to));
                        out.push(Action::Place(to, landed));
                    }
                }
            } else {
                carry(out);
                land(out);
            }
        }
        Move::EnPassant { from, to } => {
            let pawn = Piece {
                color,
                role: Role::Pawn,
            };
            let taken = Square::from_coords(to.file(), from.rank());
            let seq = match pick(3) {
                0 => [
                    Action::Lift(taken),
                    Action::Lift(from),
                    Action::Place(to, pawn),
                ],
                1 => [
                    Action::Lift(from),
                    Action::Lift(taken),
                    Action::Place(to, pawn),
                ],
                _ => [
                    Action::Lift(from),
                    Action::Place(to, pawn),
                    Action::Lift(taken),
                ],
            };
            out.extend(seq);
        }
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_king_side(king < rook);
            let k = (
                king,
                side.king_to(color),
                Piece {
                    color,
                    role: Role::King,
                },
            );
            let r = (
                rook,
                side.rook_to(color),
                Piece {
                    color,
                    role: Role::Rook,
                },
            );
            // King first (what real captures show) or rook first (the board passes through
            // the position after a plain rook move).
            let (first, second) = if pick(2) == 0 { (k, r) } else { (r, k) };
            let transfers: Vec<(Square, Square, Piece)> = [first, second]
                .into_iter()
                .filter(|(src, dst, _)| src != dst)
                .collect();
            match transfers.as_slice() {
                [] => {}
                [(src, dst, piece)] => {
                    out.push(Action::Lift(*src));
                    out.push(Action::Place(*dst, *piece));
                }
                [(src1, dst1, p1), (src2, dst2, p2), ..] => {
                    out.push(Action::Lift(*src1));
                    if dst1 == src2 {
                        // Chess960: the first piece's target holds the other one.
                        out.push(Action::Lift(*src2));
                        out.push(Action::Place(*dst1, *p1));
                    } else {
                        out.push(Action::Place(*dst1, *p1));
                        out.push(Action::Lift(*src2));
                    }
                    out.push(Action::Place(*dst2, *p2));
                }
            }
        }
        Move::Put { role, to } => out.push(Action::Place(to, Piece { color, role })),
    }
}

/// From the board after a move back to the board before it: lift what is new, set down what
/// is missing.
fn undo_actions(before: &Board, after: &Board, out: &mut Vec<Action>) {
    for sq in Square::ALL {
        if after.piece_at(sq).is_some() && after.piece_at(sq) != before.piece_at(sq) {
            out.push(Action::Lift(sq));
        }
    }
    for sq in Square::ALL {
        if let Some(piece) = before.piece_at(sq)
            && after.piece_at(sq) != Some(piece)
        {
            out.push(Action::Place(sq, piece));
        }
    }
}

/// The squares strictly between two aligned squares, nearest to `from` first.
fn squares_between(from: Square, to: Square) -> Vec<Square> {
    let mut v: Vec<Square> = attacks::between(from, to).into_iter().collect();
    v.sort_by_key(|sq| sq.distance(from));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Rank;
    use std::path::PathBuf;

    fn data_dir() -> Option<PathBuf> {
        boards::testdata::shared_data("pgn/clocks")
    }

    fn one_game(pgn: &str) -> GameScore {
        let mut games = read_games(pgn).expect("test PGN reads");
        assert_eq!(games.len(), 1);
        games.remove(0)
    }

    type Squares = [Option<Piece>; 64];

    fn squares_of(board: &Board) -> Squares {
        let mut m = [None; 64];
        for sq in Square::ALL {
            m[sq.to_usize()] = board.piece_at(sq);
        }
        m
    }

    fn fen_of(m: &Squares) -> String {
        let mut b = Board::empty();
        for sq in Square::ALL {
            if let Some(p) = m[sq.to_usize()] {
                b.set_piece_at(sq, p);
            }
        }
        b.board_fen().to_string()
    }

    #[derive(Debug, Default)]
    struct Replay {
        honoured: usize,
        with_clk: usize,
        moves: usize,
        /// Not honoured because the recorded clock is below the increment (e.g. 0:00:00).
        below_increment: usize,
        /// … because it is higher than the previous reading plus increment and bonus allow.
        unreachable: usize,
        /// … because it leaves (almost) no time to move the pieces.
        too_fast: usize,
    }

    /// An illegal move between its press and the arbiter's clock setting, as replayed.
    struct OpenIncident {
        /// The offender's clock just before the false press.
        own_before: u64,
        color: Color,
        stopped: bool,
    }

    /// The board just before an illegal press, against the position the offender was to move
    /// in: one of their pieces displaced so that no legal move gives that board (or nothing
    /// moved), both kings still there, as the script says it played it.
    fn check_false_press(before: &Chess, map: &Squares, x: &ScriptedIllegal) {
        let mover = before.turn();
        assert_eq!(x.color, mover, "ply {}: the mover errs", x.ply);
        let was = squares_of(before.board());
        let changed: Vec<Square> = Square::ALL
            .into_iter()
            .filter(|sq| was[sq.to_usize()] != map[sq.to_usize()])
            .collect();
        let (Some(from), Some(to)) = (x.from, x.to) else {
            assert_eq!(x.kind, IllegalKind::PressWithoutMove);
            assert!(
                changed.is_empty(),
                "ply {}: nothing moved: {changed:?}",
                x.ply
            );
            return;
        };
        assert_eq!(
            changed.len(),
            2,
            "ply {}: one displacement: {changed:?}",
            x.ply
        );
        assert!(changed.contains(&from) && changed.contains(&to));
        let piece = was[from.to_usize()].expect("a piece on from");
        assert_eq!(piece.color, mover);
        assert_eq!(map[from.to_usize()], None);
        assert_eq!(map[to.to_usize()], Some(piece));
        let taken = was[to.to_usize()];
        assert_eq!(x.capture, taken.is_some());
        assert!(taken.is_none_or(|t| t.color != mover && t.role != Role::King));
        let mut board = before.board().clone();
        board.discard_piece_at(from);
        board.set_piece_at(to, piece);
        assert!(board.king_of(Color::White).is_some() && board.king_of(Color::Black).is_some());
        let legal = before.legal_moves().into_iter().any(|m| {
            let mut p = before.clone();
            p.play_unchecked(m);
            *p.board() == board
        });
        assert!(!legal, "ply {}: {from}{to} is a legal move", x.ply);
        assert!(piece.role != Role::Pawn || !matches!(to.rank(), Rank::First | Rank::Eighth));
        let own_king_attacked = board
            .king_of(mover)
            .is_some_and(|k| board.attacks_to(k, !mover, board.occupied()).any());
        match x.kind {
            IllegalKind::Move => assert!(!x.capture),
            IllegalKind::Capture => assert!(x.capture),
            IllegalKind::KingInCheck => {
                // By the piece's rules: the same move on the board, legal but for the king.
                let mv = Move::Normal {
                    role: piece.role,
                    from,
                    capture: taken.map(|t| t.role),
                    to,
                    promotion: None,
                };
                assert!(!before.is_legal(mv) && own_king_attacked, "ply {}", x.ply);
            }
            IllegalKind::PressWithoutMove => panic!("ply {}: a press without a move moved", x.ply),
        }
    }

    /// Plays the script on a square→piece map and a clock, checking every promise the script
    /// makes (illegal moves and the arbiter's corrections included); returns the clock
    /// statistics.
    fn replay(game: &GameScore, s: &Script, noise: &NoiseConfig) -> Replay {
        let mut map = squares_of(game.start.board());
        let mut afters = Vec::new();
        let mut befores = Vec::new();
        let mut pos = game.start.clone();
        for m in &game.moves {
            befores.push(pos.clone());
            pos.play_unchecked(m.mv);
            afters.push(squares_of(pos.board()));
        }
        let mut incidents = s.illegal.iter();
        let mut adjustments = s.adjustments.iter();
        let mut open: Option<OpenIncident> = None;
        assert_eq!(s.moves.len(), game.moves.len());
        let mut clock = s.new_clock();
        assert_eq!(clock.is_some(), game.time_control.is_some());
        let hi = noise.handling_ms.0.max(noise.handling_ms.1);
        let mut last_at: Option<u64> = None;
        let mut i = 0; // the move being played
        let mut turn = game.start.turn();
        let mut last_physical: Option<u64> = None;
        let mut moves_done = [0u32; 2];
        let mut stats = Replay {
            moves: game.moves.len(),
            ..Replay::default()
        };
        let finish_move = |i: &mut usize, map: &Squares, turn: &mut Color| {
            assert_eq!(
                fen_of(map),
                fen_of(&afters[*i]),
                "board after move {} ({})",
                *i + 1,
                game.moves[*i].san
            );
            *i += 1;
            *turn = turn.other();
        };
        for ta in &s.actions {
            if let Some(t) = last_at {
                assert!(ta.at_ms > t, "times strictly increase: {ta:?} after {t}");
            }
            last_at = Some(ta.at_ms);
            // Without a clock a move is done at its press time.
            while clock.is_none() && i < s.moves.len() && ta.at_ms > s.moves[i].press_ms {
                finish_move(&mut i, &map, &mut turn);
                last_physical = None;
            }
            match ta.action {
                Action::StartClock => {
                    assert_eq!(ta.at_ms, CLOCK_START_MS);
                    clock.as_mut().expect("clock").start(ta.at_ms);
                }
                Action::Lift(sq) => {
                    assert!(map[sq.to_usize()].is_some(), "lift from empty {sq}");
                    map[sq.to_usize()] = None;
                }
                Action::Place(sq, piece) => map[sq.to_usize()] = Some(piece),
                Action::PressLever(color) if ta.at_ms != s.moves[i].press_ms => {
                    // A press that is not the move's: an illegal move's.
                    assert_eq!(color, turn, "the mover presses");
                    assert!(open.is_none(), "one illegal move at a time");
                    let x = incidents.next().expect("an illegal press is listed");
                    assert_eq!((x.ply, x.press_ms), (i + 1, ta.at_ms));
                    check_false_press(&befores[i], &map, x);
                    if let Some(t) = last_physical {
                        assert!(ta.at_ms - t <= hi, "press within the handling gap");
                    }
                    let c = clock.as_mut().expect("an illegal press needs a clock");
                    let side = clock_side(color);
                    let own_before = c.remaining_ms(side, ta.at_ms);
                    assert!(c.press(side, ta.at_ms), "the false press is taken");
                    open = Some(OpenIncident {
                        own_before,
                        color,
                        stopped: false,
                    });
                }
                Action::PressLever(color) => {
                    assert_eq!(color, turn, "the mover presses");
                    assert!(open.is_none(), "the clock is set before the move");
                    assert_eq!(ta.at_ms, s.moves[i].press_ms);
                    if let Some(t) = last_physical {
                        assert!(ta.at_ms - t <= hi, "press within the handling gap");
                    }
                    let side = clock_side(color);
                    let c = clock.as_mut().expect("clock");
                    let prev_press = if i == 0 {
                        CLOCK_START_MS
                    } else {
                        s.moves[i - 1].press_ms
                    };
                    let before = c.remaining_ms(side, prev_press);
                    let n = moves_done[color_index(color)] + 1;
                    moves_done[color_index(color)] = n;
                    let gain = c.time_control().added_after_move(n).total_ms();
                    assert!(c.press(side, ta.at_ms), "press accepted at move {}", i + 1);
                    let remaining = c.remaining_ms(side, ta.at_ms);
                    assert_eq!(c.moves_done(side), n, "moves counted by the clock");
                    assert_eq!(
                        Some(remaining),
                        s.moves[i].clk_ms,
                        "the script's clock after move {}",
                        i + 1
                    );
                    if let Some(clk) = game.moves[i].clk_ms {
                        stats.with_clk += 1;
                        if s.moves[i].clock_honoured {
                            assert_eq!(remaining, clk, "clock after move {}", i + 1);
                            stats.honoured += 1;
                        } else if clk <= gain {
                            stats.below_increment += 1;
                        } else if clk - gain >= before {
                            stats.unreachable += 1;
                        } else {
                            stats.too_fast += 1;
                        }
                    } else {
                        assert!(!s.moves[i].clock_honoured);
                    }
                    finish_move(&mut i, &map, &mut turn);
                }
                Action::StopClock => {
                    let o = open.as_mut().expect("stopped after an illegal press");
                    assert!(!o.stopped);
                    o.stopped = true;
                    clock.as_mut().expect("clock").stop(ta.at_ms);
                }
                Action::SetClock {
                    white_ms,
                    black_ms,
                    white_moves,
                    black_moves,
                    run,
                } => {
                    let o = open.take().expect("set after an illegal press");
                    assert!(o.stopped, "stopped first");
                    // The position is back as it was before the ply.
                    assert_eq!(
                        fen_of(&map),
                        fen_of(&squares_of(befores[i].board())),
                        "board put back at ply {}",
                        i + 1
                    );
                    assert_eq!(run, Some(o.color), "the offender's clock runs");
                    // The offender's clock shows what it did before the false press, its move
                    // count the moves really made.
                    let own = if o.color == Color::White {
                        white_ms
                    } else {
                        black_ms
                    };
                    assert_eq!(own, o.own_before);
                    assert_eq!([white_moves, black_moves], moves_done);
                    let c = clock.as_mut().expect("clock");
                    // Every change listed (the opponent's first), as set against what was
                    // shown.
                    for color in [o.color.other(), o.color] {
                        let set = color.fold_wb(white_ms, black_ms);
                        let shown = c.remaining_ms(clock_side(color), ta.at_ms);
                        if set != shown {
                            let a = adjustments.next().expect("the change is listed");
                            assert_eq!(
                                (a.ply, a.color, a.delta_ms, a.at_ms),
                                (i + 1, color, set as i64 - shown as i64, ta.at_ms)
                            );
                        }
                    }
                    c.arbiter_set(
                        white_ms,
                        black_ms,
                        run.map(clock_side),
                        [white_moves, black_moves],
                        ta.at_ms,
                    );
                }
            }
            if matches!(ta.action, Action::Lift(_) | Action::Place(..)) {
                if let Some(t) = last_physical {
                    assert!(ta.at_ms - t <= hi, "transient states stay short");
                }
                let prev_press = if i == 0 {
                    CLOCK_START_MS
                } else {
                    s.moves[i - 1].press_ms
                };
                assert!(ta.at_ms > prev_press && ta.at_ms < s.moves[i].press_ms);
                last_physical = Some(ta.at_ms);
            }
            if matches!(
                ta.action,
                Action::PressLever(_) | Action::StopClock | Action::SetClock { .. }
            ) {
                last_physical = None;
            }
        }
        assert!(open.is_none(), "every illegal move put right");
        assert!(
            incidents.next().is_none(),
            "every illegal move listed was played"
        );
        assert!(
            adjustments.next().is_none(),
            "every clock change listed was made"
        );
        while i < s.moves.len() {
            finish_move(&mut i, &map, &mut turn);
        }
        assert_eq!(
            fen_of(&map),
            fen_of(&squares_of(game.final_position().board()))
        );
        if clock.is_none() {
            assert!(
                s.actions
                    .iter()
                    .all(|a| matches!(a.action, Action::Lift(_) | Action::Place(..)))
            );
        }
        stats
    }

    /// Per file: (name, games expected to fail reading, least share of the moves with a clock
    /// that the script must reproduce exactly). No game in these files has an illegal move;
    /// the quirks are in the clocks (PROVENANCE.md), and in one Tata Steel header line without
    /// its `[` (`Event "TSCT2017 masters"]`), which the reader skips: that game is read without
    /// its Event tag. What keeps a recorded time from being reproduced:
    /// * Tata Steel 2017: clock corrections and a game whose clocks froze (round 5.7, 1:41:20
    ///   for 30 moves, then a jump);
    /// * sample invitational 2023: a spurious 0:00:00 and the jump after it;
    /// * lichess study 2025: clock corrections upwards (gains of 3–20 minutes);
    /// * Olympiad 2014: the 30-minute bonus after move 40 appears one to three moves late in
    ///   the record, so the moves in between (recorded without it) cannot all be met, and a
    ///   game whose emulated clock spends the bonus early stays behind the record.
    const FILES: &[(&str, usize, f64)] = &[
        ("dgt-livechess-1.4.8-tata-steel-2017.pgn", 0, 0.99),
        (
            "dgt-livechess-2.2.5-sample-invitational-2023-r1.pgn",
            0,
            0.98,
        ),
        ("lichess-study-bbddnrr-2025-eval-clk.pgn", 0, 0.99),
        ("pgn4web-olympiad-2014-r11.pgn", 0, 0.90),
    ];

    #[test]
    fn real_broadcast_games_play_back_exactly() {
        let Some(dir) = data_dir() else { return };
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("data dir lists")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".pgn"))
            .collect();
        names.sort();
        assert!(!names.is_empty());
        let noise = NoiseConfig {
            probability: 0.3,
            handling_ms: (250, 700),
        };
        for name in names {
            let (_, expected_bad, min_share) = FILES
                .iter()
                .find(|(f, ..)| *f == name)
                .copied()
                .unwrap_or(("", 0, 0.9));
            let bytes = std::fs::read(dir.join(&name)).expect("file reads");
            let text = String::from_utf8_lossy(&bytes);
            let results = read_games_each(&text);
            let mut bad = 0;
            const SEEDS: [u64; 3] = [1, 2, 3];
            let mut totals: Vec<Replay> = SEEDS.iter().map(|_| Replay::default()).collect();
            let mut games = 0;
            let mut guessed = std::collections::BTreeMap::<String, usize>::new();
            for r in results {
                let mut game = match r {
                    Ok(g) => g,
                    Err(e) => {
                        println!("{name}: {e}");
                        bad += 1;
                        continue;
                    }
                };
                games += 1;
                // Broadcast files rarely carry a TimeControl the strict parser takes.
                if game.time_control.is_none() {
                    game.time_control = game.guess_time_control();
                }
                if let Some(tc) = &game.time_control {
                    *guessed.entry(tc.to_string()).or_default() += 1;
                }
                for (seed, total) in SEEDS.iter().zip(totals.iter_mut()) {
                    let s = script(&game, *seed, &noise);
                    let r = replay(&game, &s, &noise);
                    assert_eq!(
                        r.with_clk,
                        r.honoured + r.below_increment + r.unreachable + r.too_fast
                    );
                    total.honoured += r.honoured;
                    total.with_clk += r.with_clk;
                    total.moves += r.moves;
                    total.below_increment += r.below_increment;
                    total.unreachable += r.unreachable;
                    total.too_fast += r.too_fast;
                }
            }
            let honoured: Vec<usize> = totals.iter().map(|t| t.honoured).collect();
            let total = &totals[0];
            println!(
                "{name}: {games} games read, {bad} unreadable, {} moves, {} with clk, {} \
                 honoured with seed 1 ({honoured:?} with seeds {SEEDS:?}); not honoured: {} \
                 below the increment, {} unreachable, {} too fast; time controls {guessed:?}",
                total.moves,
                total.with_clk,
                total.honoured,
                total.below_increment,
                total.unreachable,
                total.too_fast
            );
            assert_eq!(bad, expected_bad, "{name}: unreadable games");
            for t in &totals {
                assert!(
                    t.honoured as f64 >= min_share * t.with_clk as f64,
                    "{name}: only {} of {} clocks honoured",
                    t.honoured,
                    t.with_clk
                );
            }
        }
    }

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

    fn moves_of(s: &Script) -> Vec<Vec<Action>> {
        // The physical actions of each move (split at the press times).
        let mut out = vec![Vec::new(); s.moves.len()];
        for ta in &s.actions {
            if let Some(i) = s.moves.iter().position(|m| ta.at_ms <= m.press_ms)
                && matches!(ta.action, Action::Lift(_) | Action::Place(..))
            {
                out[i].push(ta.action);
            }
        }
        out
    }

    const ITALIAN: &str = "[Event \"x\"]\n[TimeControl \"300+3\"]\n\n\
        1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O Nf6 5. d3 O-O *";

    #[test]
    fn castling_rook_first_happens_and_passes_a_legal_rook_move() {
        let game = one_game(ITALIAN);
        let before = {
            let mut p = game.start.clone();
            for m in &game.moves[..6] {
                p.play_unchecked(m.mv);
            }
            p
        };
        let (mut rook_first, mut king_first) = (0, 0);
        for seed in 0..40 {
            let s = script(&game, seed, &NoiseConfig::clean());
            replay(&game, &s, &NoiseConfig::clean());
            let castle = &moves_of(&s)[6];
            assert_eq!(castle.len(), 4);
            if castle[0] == Action::Lift(Square::H1) {
                rook_first += 1;
                let rook = Piece {
                    color: Color::White,
                    role: Role::Rook,
                };
                assert_eq!(castle[1], Action::Place(Square::F1, rook));
                // After the rook alone, the board is that of the legal move Rf1.
                let rf1 = Move::Normal {
                    role: Role::Rook,
                    from: Square::H1,
                    capture: None,
                    to: Square::F1,
                    promotion: None,
                };
                assert!(before.is_legal(rf1));
                let mut b = before.board().clone();
                b.discard_piece_at(Square::H1);
                b.set_piece_at(Square::F1, rook);
                let mut p = before.clone();
                p.play_unchecked(rf1);
                assert_eq!(&b, p.board());
            } else {
                assert_eq!(castle[0], Action::Lift(Square::E1));
                king_first += 1;
            }
        }
        assert!(
            rook_first > 0 && king_first > 0,
            "{rook_first} / {king_first}"
        );
    }

    #[test]
    fn en_passant_in_all_orders() {
        let game = one_game("[Event \"x\"]\n\n1. e4 a6 2. e5 d5 3. exd6 *");
        assert!(game.moves[4].mv.is_en_passant());
        let mut orders = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let s = script(&game, seed, &NoiseConfig::clean());
            replay(&game, &s, &NoiseConfig::clean());
            let ep = &moves_of(&s)[4];
            assert_eq!(ep.len(), 3);
            assert!(ep.contains(&Action::Lift(Square::D5)));
            orders.insert(ep.iter().position(|a| *a == Action::Lift(Square::D5)));
        }
        assert_eq!(orders.len(), 3);
    }

    #[test]
    fn under_promotion_places_the_chosen_piece() {
        let game = one_game(
            "[SetUp \"1\"]\n[FEN \"1r5k/P7/8/8/8/8/8/K7 w - - 0 1\"]\n\n1. axb8=N Kg7 2. Nd7 *",
        );
        let knight = Piece {
            color: Color::White,
            role: Role::Knight,
        };
        let pawn = Piece {
            color: Color::White,
            role: Role::Pawn,
        };
        let (mut with_pawn, mut direct) = (0, 0);
        for seed in 0..40 {
            let s = script(&game, seed, &NoiseConfig::clean());
            replay(&game, &s, &NoiseConfig::clean());
            let promo = &moves_of(&s)[0];
            assert_eq!(promo.last(), Some(&Action::Place(Square::B8, knight)));
            assert!(
                !promo
                    .iter()
                    .any(|a| matches!(a, Action::Place(_, p) if p.role == Role::Queen))
            );
            if promo.contains(&Action::Place(Square::B8, pawn)) {
                with_pawn += 1;
            } else {
                direct += 1;
            }
        }
        assert!(with_pawn > 0 && direct > 0);
    }

    #[test]
    fn chess960_castling_onto_the_rook_square() {
        // The king's target square g8 holds the castling rook.
        let game = one_game(
            "[Variant \"fischerandom\"]\n[SetUp \"1\"]\n\
             [FEN \"nbbrknrq/pppppppp/8/8/8/8/PPPPPPPP/NBBRKNRQ w KQkq - 0 1\"]\n\
             [TimeControl \"10+1\"]\n\n\
             1. d4 d5 2. c3 Nb6 3. e4 dxe4 4. Bxe4 g6 5. g4 c6 6. Qf3 Ne6 7. Nb3 Qf6 \
             8. Qxf6 exf6 9. h4 O-O *",
        );
        let noisy = NoiseConfig {
            probability: 0.5,
            ..NoiseConfig::default()
        };
        for seed in 0..20 {
            let s = script(&game, seed, &noisy);
            replay(&game, &s, &noisy);
        }
    }

    #[test]
    fn clocks_are_honoured_and_inconsistent_ones_skipped() {
        let game = one_game(
            "[Event \"x\"]\n[TimeControl \"180+2\"]\n\n\
             1. e4 {[%clk 0:03:01]} e5 {[%clk 0:02:58.5]} 2. Nf3 {[%clk 0:00:00]} \
             Nc6 {[%clk 0:02:50]} 3. Bb5 {[%clk 0:02:40]} a6 {[%clk 0:05:00]} *",
        );
        let s = script(&game, 9, &NoiseConfig::default());
        let r = replay(&game, &s, &NoiseConfig::default());
        let honoured: Vec<bool> = s.moves.iter().map(|m| m.clock_honoured).collect();
        assert_eq!(honoured, [true, true, false, true, true, false]);
        assert_eq!((r.honoured, r.with_clk), (4, 6));
        // The first move: 1 s of thinking after the start.
        assert_eq!(s.moves[0].press_ms, CLOCK_START_MS + 1_000);
    }

    #[test]
    fn increment_credited_at_the_start_is_recognised() {
        // 3+2 on a DGT clock starts at 3:02; after a one-second first move it shows 3:03.
        let game = one_game(
            "[Event \"x\"]\n[TimeControl \"180+2\"]\n\n1. e4 {[%clk 0:03:03]} e5 {[%clk 0:03:02]} *",
        );
        let s = script(&game, 1, &NoiseConfig::default());
        assert_eq!(
            s.clock.as_ref().map(|t| t.to_string()).as_deref(),
            Some("182+2")
        );
        assert!(s.moves.iter().all(|m| m.clock_honoured));
        replay(&game, &s, &NoiseConfig::default());
    }

    #[test]
    fn no_time_control_means_no_clock_actions() {
        let game = one_game(
            "[Event \"x\"]\n\n1. e4 {[%clk 0:03:01]} e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0",
        );
        for seed in 0..10 {
            let s = script(&game, seed, &NoiseConfig::default());
            assert!(s.clock.is_none());
            replay(&game, &s, &NoiseConfig::default());
        }
    }

    #[test]
    fn noise_kinds_appear_and_short_thinks_drop_them() {
        // Bc4 after a minute's thought.
        let game = one_game(
            "[Event \"x\"]\n[TimeControl \"300+3\"]\n\n1. e4 {[%clk 0:05:02]} e5 2. Nf3 \
             {[%clk 0:05:04]} Nc6 3. Bc4 {[%clk 0:04:07]} *",
        );
        let noisy = NoiseConfig {
            probability: 1.0,
            ..NoiseConfig::default()
        };
        let s = script(&game, 5, &noisy);
        assert!(s.moves[4].clock_honoured);
        replay(&game, &s, &noisy);
        let bc4 = &moves_of(&s)[4];
        // Fidget (2) + slide f1-e2-d3-c4 (1 + 2×2 + 1) + take back (2) + replay (2).
        assert_eq!(bc4.len(), 2 + 6 + 2 + 2, "{bc4:?}");
        // A one-second blitz move has no room for that much handling (and a hand needs at
        // least the shortest gap per action, so a record faster than that is not honoured).
        let blitz = one_game(
            "[Event \"x\"]\n[TimeControl \"180+0\"]\n\n1. e4 {[%clk 0:02:59]} e5 {[%clk 0:02:59]} *",
        );
        let s = script(&blitz, 5, &noisy);
        replay(&blitz, &s, &noisy);
        assert!(s.moves.iter().all(|m| m.clock_honoured));
        assert_eq!(moves_of(&s)[0].len(), 2);
    }

    #[test]
    fn same_seed_same_script() {
        let game = one_game(ITALIAN);
        let noise = NoiseConfig {
            probability: 0.3,
            ..NoiseConfig::default()
        };
        let a = script(&game, 77, &noise);
        let b = script(&game, 77, &noise);
        assert_eq!(a.actions, b.actions);
        assert_eq!(a.moves, b.moves);
        let c = script(&game, 78, &noise);
        assert_ne!(a.actions, c.actions);
    }

    // -----------------------------------------------------------------------------------------
    // Illegal moves
    // -----------------------------------------------------------------------------------------

    /// The bundled classics (no clocks recorded), on a 90+30 clock.
    fn classics() -> Vec<GameScore> {
        let mut games =
            read_games(include_str!("../../relay/data/classics.pgn")).expect("classics read");
        for g in &mut games {
            g.time_control = Some("5400+30".parse().expect("tc"));
        }
        games
    }

    fn planned(ply: usize, kind: IllegalKind) -> PlannedIllegal {
        PlannedIllegal { ply, kind }
    }

    /// The position before `ply` (from 1).
    fn before_ply(game: &GameScore, ply: usize) -> Chess {
        let mut p = game.start.clone();
        for m in &game.moves[..ply - 1] {
            p.play_unchecked(m.mv);
        }
        p
    }

    #[test]
    fn illegal_moves_of_every_kind_are_played_and_put_right() {
        use IllegalKind::*;
        let noisy = NoiseConfig {
            probability: 0.3,
            ..NoiseConfig::default()
        };
        let mut played = std::collections::BTreeMap::<IllegalKind, usize>::new();
        for (gi, game) in classics().iter().enumerate() {
            let n = game.moves.len();
            // Each kind, two by the same player (plies of one colour), the first and the last
            // ply, and one beyond the game (ignored).
            let plans = [
                planned(1, KingInCheck),
                planned(3, Move),
                planned(4, Capture),
                planned(7, KingInCheck),
                planned(8, PressWithoutMove),
                planned(n, Capture),
                planned(n + 1, Move),
            ];
            for seed in 0..6 {
                for noise in [NoiseConfig::clean(), noisy] {
                    let s = script_with(game, seed, &noise, &plans);
                    replay(game, &s, &noise);
                    let plies: Vec<usize> = s.illegal.iter().map(|x| x.ply).collect();
                    let mut want: Vec<usize> = plans.iter().map(|p| p.ply).collect();
                    want.retain(|&p| p <= n);
                    want.sort();
                    want.dedup();
                    assert_eq!(plies, want, "game {gi} seed {seed}");
                    for x in &s.illegal {
                        let asked = plans.iter().find(|p| p.ply == x.ply).expect("asked").kind;
                        let offered = crate::illegal::displacements(&before_ply(game, x.ply));
                        // The kind asked for whenever the position has one.
                        if asked == PressWithoutMove || offered.iter().any(|d| d.kind == asked) {
                            assert_eq!(x.kind, asked, "game {gi} ply {}", x.ply);
                        } else {
                            assert_ne!(x.kind, PressWithoutMove);
                        }
                        *played.entry(x.kind).or_default() += 1;
                    }
                }
            }
        }
        assert_eq!(played.len(), 4, "{played:?}");
    }

    #[test]
    fn a_pinned_piece_moved_by_its_rules_leaves_the_king_in_check() {
        // After 1. e4 e5 2. Nf3 Nc6 3. Bb5 d6 4. O-O the knight on c6 is pinned (ply 8).
        let game = one_game(
            "[Event \"x\"]\n[TimeControl \"300+3\"]\n\n\
             1. e4 e5 2. Nf3 Nc6 3. Bb5 d6 4. O-O Bd7 5. d4 a6 *",
        );
        let mut pinned = 0;
        for seed in 0..20 {
            let s = script_with(
                &game,
                seed,
                &NoiseConfig::default(),
                &[planned(8, IllegalKind::KingInCheck)],
            );
            replay(&game, &s, &NoiseConfig::default());
            let x = &s.illegal[0];
            assert_eq!(x.kind, IllegalKind::KingInCheck);
            if x.from == Some(Square::C6) {
                pinned += 1;
            }
        }
        assert!(pinned > 0);
    }

    #[test]
    fn a_kind_the_position_lacks_falls_back_to_another_displacement() {
        // In the start position no piece can leave its king in check.
        let game = one_game("[Event \"x\"]\n[TimeControl \"300+3\"]\n\n1. e4 e5 *");
        let s = script_with(
            &game,
            1,
            &NoiseConfig::clean(),
            &[planned(1, IllegalKind::KingInCheck)],
        );
        replay(&game, &s, &NoiseConfig::clean());
        assert_eq!(s.illegal.len(), 1);
        assert_eq!(s.illegal[0].kind, IllegalKind::Move);
        assert!(s.illegal[0].uci().is_some());
    }

    #[test]
    fn the_arbiter_gives_the_opponent_extra_time_and_takes_the_increment_back() {
        let game = one_game(
            "[Event \"x\"]\n[TimeControl \"300+3\"]\n\n1. e4 {[%clk 0:05:02]} e5 {[%clk 0:05:01]} \
             2. Nf3 {[%clk 0:04:58]} Nc6 {[%clk 0:04:55]} 3. Bb5 {[%clk 0:04:40]} \
             a6 {[%clk 0:04:50]} 4. Ba4 {[%clk 0:04:41]} Nf6 {[%clk 0:04:30]} *",
        );
        for (extra, seed) in [(120_000, 3), (60_000, 4), (0, 5)] {
            let arbiter = ArbiterConfig { extra_ms: extra };
            let plans = [
                planned(3, IllegalKind::Move),
                planned(6, IllegalKind::PressWithoutMove),
            ];
            let s = script_with_arbiter(&game, seed, &NoiseConfig::default(), &plans, &arbiter);
            replay(&game, &s, &NoiseConfig::default());
            assert_eq!(s.illegal.len(), 2);
            let mut want = Vec::new();
            for (ply, offender) in [(3, Color::White), (6, Color::Black)] {
                if extra > 0 {
                    want.push((ply, offender.other(), extra as i64));
                }
                want.push((ply, offender, -3_000));
            }
            let got: Vec<(usize, Color, i64)> = s
                .adjustments
                .iter()
                .map(|a| (a.ply, a.color, a.delta_ms))
                .collect();
            assert_eq!(got, want, "extra {extra}");
            // Every recorded clock, before the incidents and after, is shown as recorded: the
            // opponent spends the extra time, the offender's clock is as if nothing happened.
            // (Without extra time, the seconds the opponent's clock ran until the arbiter
            // stopped it are lost, and their next recorded time may be out of reach.)
            for (i, (m, t)) in game.moves.iter().zip(&s.moves).enumerate() {
                if extra > 0 || !matches!(i + 1, 4 | 7) {
                    assert!(t.clock_honoured, "extra {extra} ply {}", i + 1);
                    assert_eq!(m.clk_ms, t.clk_ms);
                }
            }
            // The clock is stopped 3–8 s after the false press and set after the position
            // is back; the arbiter's set values are what the adjustments say.
            for x in &s.illegal {
                let stop = s
                    .actions
                    .iter()
                    .find(|a| a.at_ms > x.press_ms && a.action == Action::StopClock)
                    .expect("stopped");
                assert!((3_000..=8_000).contains(&(stop.at_ms - x.press_ms)));
            }
        }
    }

    #[test]
    fn a_false_press_on_the_last_move_of_a_period_does_not_earn_its_bonus() {
        // 42 moves of knights going back and forth on a 40/10 min + 5 min, +2 s clock; White's
        // 40th move (ply 79) is first made illegally.
        let mut pgn = String::from("[Event \"x\"]\n[TimeControl \"40/600+2:300+2\"]\n\n");
        for n in 1..=42 {
            let (w, b) = if n % 2 == 1 {
                ("Nf3", "Nf6")
            } else {
                ("Ng1", "Ng8")
            };
            pgn.push_str(&format!("{n}. {w} {b} "));
        }
        pgn.push('*');
        let game = one_game(&pgn);
        let s = script_with(
            &game,
            7,
            &NoiseConfig::default(),
            &[planned(79, IllegalKind::Capture)],
        );
        // The replay checks that the clock counts 40 moves at the real 40th press.
        replay(&game, &s, &NoiseConfig::default());
        assert_eq!(s.illegal.len(), 1);
        let own: Vec<i64> = s
            .adjustments
            .iter()
            .filter(|a| a.color == Color::White)
            .map(|a| a.delta_ms)
            .collect();
        assert_eq!(own, [-(2_000 + 300_000)], "increment and bonus taken back");
        let set = s
            .actions
            .iter()
            .find_map(|a| match a.action {
                Action::SetClock {
                    white_moves,
                    black_moves,
                    ..
                } => Some((white_moves, black_moves)),
                _ => None,
            })
            .expect("set");
        assert_eq!(set, (39, 39));
        // The real 40th move earns the bonus.
        let before_real = s.moves[77].clk_ms.expect("clk");
        assert!(s.moves[78].clk_ms.expect("clk") > before_real + 250_000);
    }

    #[test]
    fn recorded_clocks_stay_honoured_around_illegal_moves() {
        let Some(dir) = data_dir() else { return };
        let text = std::fs::read_to_string(dir.join("dgt-livechess-1.4.8-tata-steel-2017.pgn"))
            .expect("r");
        let noise = NoiseConfig {
            probability: 0.3,
            ..NoiseConfig::default()
        };
        let (mut games, mut incidents) = (0, 0);
        for mut game in read_games(&text).expect("games").into_iter().take(10) {
            if game.time_control.is_none() {
                game.time_control = game.guess_time_control();
            }
            let n = game.moves.len();
            if n < 30 || game.time_control.is_none() {
                continue;
            }
            let plans = [
                planned(n / 3, IllegalKind::Move),
                planned(n / 3 + 2, IllegalKind::Capture),
                planned(2 * n / 3, IllegalKind::PressWithoutMove),
            ];
            for seed in 1..=3 {
                let plain = script(&game, seed, &noise);
                let s = script_with(&game, seed, &noise, &plans);
                // Every clock flagged honoured is shown exactly (checked by the replay).
                replay(&game, &s, &noise);
                let honoured = |s: &Script| s.moves.iter().filter(|m| m.clock_honoured).count();
                // Only the incidents' own moves may lose theirs (a think too short for both).
                assert!(honoured(&s) + s.illegal.len() >= honoured(&plain));
                // The other moves are handled as without incidents.
                let plies: Vec<usize> = s.illegal.iter().map(|x| x.ply).collect();
                for (i, (a, b)) in moves_of(&plain).iter().zip(moves_of_real(&s)).enumerate() {
                    if !plies.contains(&(i + 1)) {
                        assert_eq!(*a, b, "seed {seed} ply {}", i + 1);
                    }
                }
                incidents += s.illegal.len();
            }
            games += 1;
        }
        assert!(
            games > 0 && incidents >= games * 3 * 3 - 3,
            "{games} {incidents}"
        );
    }

    /// The physical actions of each real move (after the arbiter's clock setting, if any).
    fn moves_of_real(s: &Script) -> Vec<Vec<Action>> {
        let mut out = vec![Vec::new(); s.moves.len()];
        let mut i = 0;
        for ta in &s.actions {
            match ta.action {
                Action::SetClock { .. } => out[i].clear(),
                Action::PressLever(_) if ta.at_ms == s.moves[i].press_ms => i += 1,
                Action::PressLever(_) => {}
                Action::Lift(_) | Action::Place(..) => out[i].push(ta.action),
                Action::StartClock | Action::StopClock => {}
            }
        }
        out
    }

    #[test]
    fn without_a_clock_or_within_the_game_only() {
        let no_clock = one_game("[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6 *");
        let plans = [planned(2, IllegalKind::Move)];
        let s = script_with(&no_clock, 3, &NoiseConfig::default(), &plans);
        assert!(s.illegal.is_empty() && s.adjustments.is_empty());
        assert_eq!(
            s.actions,
            script(&no_clock, 3, &NoiseConfig::default()).actions
        );
        let game = one_game(ITALIAN);
        let beyond = [
            planned(11, IllegalKind::Move),
            planned(40, IllegalKind::Move),
        ];
        let s = script_with(&game, 3, &NoiseConfig::default(), &beyond);
        assert!(s.illegal.is_empty());
        assert_eq!(s.actions, script(&game, 3, &NoiseConfig::default()).actions);
    }
}
