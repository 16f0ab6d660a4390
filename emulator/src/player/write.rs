//! Writing the script: the game's moves one after another, each a think time
//! ([`super::timing`]) and the hands' actions ([`super::hands`]) ending in the mover's press,
//! on a clock that runs as the board's will; and illegal moves ([`super::incident`]) in place
//! of planned moves, written so that every other move is handled as it would be without them.

use super::hands::{core_actions, draw_gaps, plan_move};
use super::incident::{
    INCIDENT_SEED, INCIDENT_THINK_MS, IncidentAt, OPPONENT_LEAST_MS, play_incident,
    prepare_incident,
};
use super::model::{
    Action, CLOCK_START_MS, MoveTiming, NoiseConfig, Script, ScriptOptions, TimedAction,
    clock_side, color_index,
};
use super::score::GameScore;
use super::timing::{choose_think, random_think, with_start_increment_if_recorded};
use crate::clock::ChessClock;
use crate::illegal::{ArbiterConfig, PlannedIllegal};
use boards::rng::SplitMix64;
use shakmaty::{Color, Position};

/// Writes the script for `game`: its moves as people make them at the board, handled as
/// `options.noise` says, with the illegal moves `options.illegal` plans. Same game, seed and
/// options → same script.
///
/// An illegal move (FIDE Laws art. 7.5) takes the place of its ply's move: after part of the
/// think time, the mover displaces one of their pieces illegally as the plan asks (or, when
/// the position has none of that kind, as it allows; see [`ScriptedIllegal::kind`]) or moves
/// nothing, and presses the lever. 3–8 seconds later the arbiter stops the clock, puts the
/// piece back (and the one it took), and sets the clock: the opponent gets
/// `options.arbiter.extra_ms` more than it shows, the offender gets back what they had before
/// the false press (its increment and any period bonus taken off, its move count too), and
/// the offender's side runs. Then the game's move is played as usual. The game's moves never
/// change, and a recorded `[%clk]` is honoured as without the incident.
///
/// An illegal move needs a clock to press: without one (`Script::clock` is `None`) none is
/// played. None is played either at a ply beyond the game, nor when a clock is too low to
/// hold it (the offender's below twice what the hands need, the opponent's below 10 s);
/// [`Script::illegal`] lists those played.
///
/// Every move is handled as without illegal moves with the same seed (the same noise, the
/// same order of lifts), except that a move whose think leaves no room for both an illegal
/// move and its untidy handling is made plainly. Think times differ where the clocks do: the
/// opponent, given extra time, takes it to reach a recorded time.
///
/// [`ScriptedIllegal::kind`]: crate::illegal::ScriptedIllegal::kind
pub fn script(game: &GameScore, seed: u64, options: &ScriptOptions) -> Script {
    let ScriptOptions {
        noise,
        illegal,
        arbiter,
    } = options;
    let (plain, straight) = write_script(game, seed, noise, &[], arbiter, None);
    if illegal.is_empty() {
        return plain;
    }
    write_script(game, seed, noise, illegal, arbiter, Some(&straight)).0
}

/// How a script without illegal moves plays each move, for one with them to handle each move
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
    let mut clock = time_control.clone().map(|tc| {
        let mut c = ChessClock::new(tc, clock_side(first_to_move));
        if let Some(at) = game.clocks_at_start {
            at.set(&mut c, clock_side(Color::White));
        }
        c
    });
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
    let mut moves_done = game.clocks_at_start.map_or([0u32; 2], |c| c.moves_done);
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
        clocks_at_start: game.clocks_at_start,
        moves: timings,
        illegal: played_illegal,
        adjustments,
    };
    (script, played)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::player::testing::{ITALIAN, one_game};

    #[test]
    fn same_seed_same_script() {
        let game = one_game(ITALIAN);
        let noise = NoiseConfig {
            probability: 0.3,
            ..NoiseConfig::default()
        };
        let a = script(&game, 77, &ScriptOptions::new(noise));
        let b = script(&game, 77, &ScriptOptions::new(noise));
        assert_eq!(a.actions, b.actions);
        assert_eq!(a.moves, b.moves);
        let c = script(&game, 78, &ScriptOptions::new(noise));
        assert_ne!(a.actions, c.actions);
    }
}
