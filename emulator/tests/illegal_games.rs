//! Real broadcast games played with illegal moves at chosen plies (a piece moved as it cannot
//! move, a capture, the own king left in check, a press without a move, a second one by the
//! same player), the arbiter putting the position back and giving time, come back from the
//! decoder and recorder with every move and clock exact, every illegal move on the record
//! with its ply, side and squares, every clock correction with its side and amount — and
//! nothing invented in the same games played without them.

mod support;

use boards::protocol::LineMode;
use emulator::play::Table;
use emulator::player::{
    Action, GameScore, IllegalKind, NoiseConfig, PlannedIllegal, Script, ScriptOptions, read_games,
    script,
};
use relay_core::recorder::{ColorName, Outcome, RecorderConfig};
use relay_core::replay::replay;

fn color_name(c: shakmaty::Color) -> ColorName {
    c.into()
}

/// The kind the recorder names for the kind the script played.
fn recorded_kind(k: IllegalKind) -> &'static str {
    match k {
        IllegalKind::Move | IllegalKind::Capture => "move_not_allowed",
        IllegalKind::KingInCheck => "king_in_check",
        IllegalKind::PressWithoutMove => "press_without_move",
    }
}

/// Plays `game` by the script `s` and checks the record. Returns (illegal moves,
/// corrections, the moves taken back or corrected on the way).
fn check(game: &GameScore, s: &Script, seed: u64, label: &str) -> (usize, usize, Vec<Outcome>) {
    let table = Table::varied(seed);
    let chunks = support::play_sans_io(game, s, table, 7, &support::single_startup(), 200);
    let (games, outcomes) = replay(&chunks, LineMode::Single, RecorderConfig::default());
    assert_eq!(games.len(), 1, "{label}: one game");
    // Moves taken back or corrected on the way (castling rook first, a slid piece): the
    // same as in the game played straight, none more (a board half put back is never read
    // as moves).
    let undone: Vec<Outcome> = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Takeback { .. } | Outcome::Correction { .. }))
        .cloned()
        .collect();
    // Every move, and every clock as the emulated clock showed it after the press.
    let want: Vec<&str> = game.moves.iter().map(|m| m.san.as_str()).collect();
    let have: Vec<String> = games[0].moves.iter().map(|m| m.san.to_string()).collect();
    assert_eq!(have, want, "{label}: moves");
    for (i, (m, t)) in games[0].moves.iter().zip(&s.moves).enumerate() {
        assert_eq!(
            m.clk.map(|c| c.millis()),
            t.clk_ms.map(|c| c.div_ceil(1000) * 1000),
            "{label}: clock after ply {}",
            i + 1
        );
    }
    let illegal: Vec<(usize, ColorName, String, Option<String>)> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::IllegalMove {
                ply,
                color,
                kind,
                uci,
                ..
            } => Some((*ply, *color, kind.name().to_string(), uci.clone())),
            _ => None,
        })
        .collect();
    let expected: Vec<(usize, ColorName, String, Option<String>)> = s
        .illegal
        .iter()
        .map(|i| {
            (
                i.ply,
                color_name(i.color),
                recorded_kind(i.kind).to_string(),
                i.uci(),
            )
        })
        .collect();
    assert_eq!(illegal, expected, "{label}: illegal moves");
    let mut adjustments: Vec<(usize, ColorName, i64)> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::ClockAdjustment {
                ply,
                color,
                delta_ms,
            } => Some((*ply, *color, *delta_ms)),
            _ => None,
        })
        .collect();
    let mut expected: Vec<(usize, ColorName, i64)> = s
        .adjustments
        .iter()
        .filter(|a| a.delta_ms.abs() >= 2_000)
        .map(|a| (a.ply, color_name(a.color), a.delta_ms / 1000 * 1000))
        .collect();
    adjustments.sort_by_key(|a| (a.0, a.1 == ColorName::Black));
    expected.sort_by_key(|a| (a.0, a.1 == ColorName::Black));
    assert_eq!(adjustments, expected, "{label}: clock corrections");
    (illegal.len(), adjustments.len(), undone)
}

/// The lifts and placements of the game's move `ply` (after the arbiter's clock setting when
/// an illegal move came first).
fn handling(s: &Script, ply: usize) -> Vec<Action> {
    let from = s
        .actions
        .iter()
        .filter(|a| a.at_ms < s.moves[ply - 1].press_ms)
        .filter(|a| {
            matches!(a.action, Action::PressLever(_) | Action::SetClock { .. })
                || a.action == Action::StartClock
        })
        .map(|a| a.at_ms)
        .max()
        .unwrap_or(0);
    s.actions
        .iter()
        .filter(|a| a.at_ms > from && a.at_ms < s.moves[ply - 1].press_ms)
        .map(|a| a.action)
        .collect()
}

/// The plan for a game of `plies`: White's illegal move, Black's capture, a king left in
/// check, then a press without a move by the player of the third (their second offence).
fn plan(plies: usize) -> Vec<PlannedIllegal> {
    let at = |f: f64| ((plies as f64 * f) as usize).max(1);
    let third = at(0.6) | 1; // odd: White's
    vec![
        PlannedIllegal {
            ply: at(0.2) | 1,
            kind: IllegalKind::Move,
        },
        PlannedIllegal {
            ply: (at(0.4) | 1) + 1,
            kind: IllegalKind::Capture,
        },
        PlannedIllegal {
            ply: third,
            kind: IllegalKind::KingInCheck,
        },
        PlannedIllegal {
            ply: third + 4,
            kind: IllegalKind::PressWithoutMove,
        },
    ]
}

#[test]
fn broadcast_games_with_illegal_moves_are_recorded_exactly() {
    let Some(files) = boards::testdata::shared_files("pgn/clocks") else {
        return;
    };
    let (mut games_played, mut illegal, mut corrections) = (0, 0, 0);
    let mut kinds = std::collections::BTreeMap::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        for (gi, mut game) in read_games(&text)
            .expect("games")
            .into_iter()
            .enumerate()
            .take(12)
        {
            if game.time_control.is_none() {
                game.time_control = game.guess_time_control();
            }
            if game.moves.len() < 20
                || game.time_control.is_none()
                || !game.start.eq(&shakmaty::Chess::default())
            {
                continue;
            }
            for (seed, noise) in [(1u64, 0.0), (2, 0.3)] {
                let label = format!("{} game {} seed {seed}", f.display(), gi + 1);
                let plain_options = ScriptOptions::new(NoiseConfig {
                    probability: noise,
                    handling_ms: (250, 700),
                });
                let plans = plan(game.moves.len());
                let with = script(&game, seed, &plain_options.clone().with_illegal(&plans));
                let (i, c, mut undone) = check(&game, &with, seed, &label);
                illegal += i;
                corrections += c;
                games_played += 1;
                // The same game without them: nothing invented.
                let plain = script(&game, seed, &plain_options);
                let (i, c, mut straight) = check(&game, &plain, seed, &format!("{label} (clean)"));
                assert_eq!((i, c), (0, 0));
                // A move whose think had no room for both the illegal move and its untidy
                // handling is made plainly: what that handling showed is not expected then.
                let plainly: Vec<usize> = with
                    .illegal
                    .iter()
                    .map(|x| x.ply)
                    .filter(|&k| handling(&with, k) != handling(&plain, k))
                    .collect();
                let of_plainly = |o: &Outcome| match o {
                    Outcome::Takeback { ply } => plainly.contains(&(ply + 1)),
                    Outcome::Correction { ply, .. } => plainly.contains(ply),
                    _ => false,
                };
                undone.retain(|o| !of_plainly(o));
                straight.retain(|o| !of_plainly(o));
                assert_eq!(undone, straight, "{label}: moves read on the way");
                let clean = ScriptOptions::new(NoiseConfig::clean()).with_illegal(&plans);
                let s = script(&game, seed, &clean);
                for x in &s.illegal {
                    *kinds.entry(x.kind.name()).or_insert(0) += 1;
                }
            }
        }
    }
    println!(
        "{games_played} games played with illegal moves: {illegal} illegal moves and {corrections} clock corrections recorded exactly ({kinds:?}), none in the same games played straight"
    );
    if games_played > 0 {
        for k in ["move", "capture", "king_in_check", "press_without_move"] {
            assert!(
                kinds.get(k).is_some_and(|n| *n > 0),
                "no {k} played: {kinds:?}"
            );
        }
    }
}
