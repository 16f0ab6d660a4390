//! An illegal move in the script and the arbiter putting it right (FIDE Laws art. 7.5): what
//! the offender's hands do and when, the false press, the clock stopped a few seconds later,
//! the position put back, the clock set (extra time for the opponent, the false press's
//! increment, bonus and move taken back off the offender) and restarted. Which displacements
//! a position offers is [`crate::illegal`]'s; this module times them against the script's
//! clock, so that the board's clock and the script's stay in step.

use super::hands::draw_gaps;
use super::model::{Action, TimedAction, clock_side};
use crate::clock::ChessClock;
use crate::illegal::{
    Displacement, IllegalKind, ScriptedAdjustment, ScriptedIllegal, pick_displacement,
};
use boards::rng::SplitMix64;
use shakmaty::{Chess, Color};

/// Seeds the generator of the illegal moves (from the script's seed), so that the game's own
/// moves are handled as they are without them.
pub(super) const INCIDENT_SEED: u64 = 0x0111_e6a1;
/// The least thought before an illegal move (or a press without one): nobody errs at the
/// board in the instant the opponent's press leaves them to move.
pub(super) const INCIDENT_THINK_MS: u64 = 1_000;
/// From an illegal press to the arbiter stopping the clock.
const NOTICED_MS: (u64, u64) = (3_000, 8_000);
/// From the position put back to the clock set and restarted.
const CLOCK_SETTING_MS: (u64, u64) = (2_000, 5_000);
/// Least time on the opponent's clock for an illegal move to be played: it runs until the
/// arbiter stops it, and must not fall meanwhile.
pub(super) const OPPONENT_LEAST_MS: u64 = NOTICED_MS.1 + 2_000;

/// An illegal move made ready for one ply: what the hands do, and the gaps between.
pub(super) struct Incident {
    /// The displacement (`None`: the lever pressed with nothing moved).
    seen: Option<Displacement>,
    /// The lifts and placements of the displacement.
    hands: Vec<Action>,
    /// After each of `hands`, the gap to the next action (the last: to the press).
    gaps: Vec<u64>,
}

impl Incident {
    /// The least time from the previous press to the false one (a moment's thought first).
    pub(super) fn least_ms(&self) -> u64 {
        INCIDENT_THINK_MS + self.gaps.iter().sum::<u64>()
    }
}

/// Picks the displacement for `kind` in `pos` and how the hands make it. A position without
/// any illegal displacement of the mover's (a bare king with nowhere to go wrong) gets a press
/// without a move.
pub(super) fn prepare_incident(
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
pub(super) struct IncidentAt {
    /// The ply (from 1) whose move the illegal one stands in for.
    pub(super) ply: usize,
    /// Who errs: the side to move at that ply.
    pub(super) mover: Color,
    /// The previous press (or the clock's start): the offender's clock runs from here.
    pub(super) prev: u64,
    /// From `prev` to the first action of the displacement (to the press, without one).
    pub(super) pre: u64,
    /// The handling gaps.
    pub(super) gap: (u64, u64),
    /// The real moves each side has made (White, Black): what the arbiter sets the clock's
    /// move counters to.
    pub(super) moves_done: [u32; 2],
    /// What the arbiter adds to the opponent's clock.
    pub(super) extra_ms: u64,
}

/// An incident as played.
pub(super) struct IncidentDone {
    /// The illegal move, as the script lists it.
    pub(super) illegal: ScriptedIllegal,
    /// The clock times the arbiter changed.
    pub(super) adjustments: Vec<ScriptedAdjustment>,
    /// When the arbiter restarted the clock.
    pub(super) set_ms: u64,
}

/// Plays `incident` into `actions` and onto the script's clock `c`, as the board's clock will
/// see it: displacement, press, clock stopped, position put back, clock set and restarted.
/// `None` (and nothing changed) when the clock does not take the press.
pub(super) fn play_incident(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::illegal::ArbiterConfig;
    use crate::player::model::{NoiseConfig, Script, ScriptOptions};
    use crate::player::score::read_games;
    use crate::player::testing::{
        ITALIAN, before_ply, classics, data_dir, moves_of, moves_of_real, one_game, planned, replay,
    };
    use crate::player::write::script;
    use shakmaty::Square;

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
                    let s = script(game, seed, &ScriptOptions::new(noise).with_illegal(&plans));
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
            let s = script(
                &game,
                seed,
                &ScriptOptions::default().with_illegal(&[planned(8, IllegalKind::KingInCheck)]),
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
        let s = script(
            &game,
            1,
            &ScriptOptions::new(NoiseConfig::clean())
                .with_illegal(&[planned(1, IllegalKind::KingInCheck)]),
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
            let s = script(
                &game,
                seed,
                &ScriptOptions::default()
                    .with_illegal(&plans)
                    .with_arbiter(arbiter),
            );
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
        let s = script(
            &game,
            7,
            &ScriptOptions::default().with_illegal(&[planned(79, IllegalKind::Capture)]),
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
                let plain = script(&game, seed, &ScriptOptions::new(noise));
                let s = script(&game, seed, &ScriptOptions::new(noise).with_illegal(&plans));
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

    #[test]
    fn without_a_clock_or_within_the_game_only() {
        let no_clock = one_game("[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6 *");
        let plans = [planned(2, IllegalKind::Move)];
        let s = script(&no_clock, 3, &ScriptOptions::default().with_illegal(&plans));
        assert!(s.illegal.is_empty() && s.adjustments.is_empty());
        assert_eq!(
            s.actions,
            script(&no_clock, 3, &ScriptOptions::default()).actions
        );
        let game = one_game(ITALIAN);
        let beyond = [
            planned(11, IllegalKind::Move),
            planned(40, IllegalKind::Move),
        ];
        let s = script(&game, 3, &ScriptOptions::default().with_illegal(&beyond));
        assert!(s.illegal.is_empty());
        assert_eq!(
            s.actions,
            script(&game, 3, &ScriptOptions::default()).actions
        );
    }
}
