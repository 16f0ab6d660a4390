//! Real broadcast games played on the emulated board with human-like noise come back from the
//! decoder and recorder with the same moves and the same clocks.
//!
//! This runs the board sans-I/O (`emulator::play::simulate`) so every game of the
//! shared broadcast files and several seeds fit in a test run; the pseudo-terminal path is
//! covered by the end-to-end tests with fewer games.

mod support;

use boards::protocol::LineMode;
use emulator::play::Table;
use emulator::player::{GameScore, NoiseConfig, ScriptOptions, read_games, script};
use relay_core::recorder::{Outcome, RecorderConfig};
use relay_core::replay::replay;
use shakmaty::Position;

/// Plays `game` and checks what comes back. Returns (moves, clocks checked).
fn check_game(game: &GameScore, seed: u64, label: &str) -> (usize, usize) {
    check_game_with(game, seed, 0.3, label)
}

fn check_game_with(game: &GameScore, seed: u64, noise: f64, label: &str) -> (usize, usize) {
    let options = ScriptOptions::new(NoiseConfig {
        probability: noise,
        handling_ms: (250, 700),
    });
    let s = script(game, seed, &options);
    let table = Table::varied(seed);
    let chunks = support::play_sans_io(game, &s, table, 7, &support::single_startup(), 200);
    let (games, outcomes) = replay(&chunks, LineMode::Single, RecorderConfig::default());
    assert_eq!(games.len(), 1, "{label}: one game");
    // Noise (pieces touched, slid, taken back before the press) is never an illegal move,
    // and the clock is never corrected in a game played straight.
    let invented: Vec<_> = outcomes
        .iter()
        .filter(|o| {
            matches!(
                o,
                Outcome::IllegalMove { .. } | Outcome::ClockAdjustment { .. }
            )
        })
        .collect();
    assert!(invented.is_empty(), "{label}: {invented:?}");
    let honoured = s.moves.iter().map(|m| m.clock_honoured);
    support::assert_same_moves_and_clocks(game, &games[0], honoured, label)
}

#[test]
fn broadcast_games_come_back_identical() {
    let Some(files) = boards::testdata::shared_files("pgn/clocks") else {
        return;
    };
    let seeds: &[u64] = &[1, 2, 3];
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        let mut games = read_games(&text).expect("games load");
        let (mut moves, mut clocks) = (0, 0);
        for (gi, game) in games.iter_mut().enumerate() {
            if game.time_control.is_none() {
                game.time_control = game.guess_time_control();
            }
            for &seed in seeds {
                let label = format!("{} game {} seed {seed}", f.display(), gi + 1);
                let (m, c) = check_game(game, seed, &label);
                moves += m;
                clocks += c;
            }
        }
        println!(
            "{}: {} games x {} seeds, {moves} moves and {clocks} clocks identical",
            f.display(),
            games.len(),
            seeds.len()
        );
    }
}

/// A random legal game from `seed`: up to `plies` moves, from the standard start or a Chess960
/// start, ending early at mate or stalemate.
fn random_game(seed: u64, plies: usize, chess960: Option<u32>) -> GameScore {
    use shakmaty::san::SanPlus;
    use shakmaty::{CastlingMode, Chess, Setup};
    let mut rng = boards::rng::SplitMix64(seed);
    let (start, mut headers) = match chess960 {
        Some(n) => {
            let mut setup = Setup::default();
            setup.board = shakmaty::Board::chess960(n);
            setup.castling_rights = setup.board.rooks();
            let pos: Chess = setup.position(CastlingMode::Chess960).expect("960 start");
            (pos, vec![("Variant".to_string(), "Chess960".to_string())])
        }
        None => (Chess::default(), Vec::new()),
    };
    headers.push(("TimeControl".to_string(), "300+2".to_string()));
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let m = legal[rng.below(legal.len() as u64) as usize];
        let san = SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string();
        moves.push(emulator::player::ScoredMove {
            mv: m,
            san,
            clk_ms: None,
        });
    }
    GameScore {
        headers,
        start,
        moves,
        time_control: "300+2".parse().ok(),
        result: "*".to_string(),
        clocks_at_start: None,
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, failure_persistence: None, ..Default::default() })]

    /// Random legal games, played with random human noise, on boards turned either way and
    /// clocks standing either way, come back move for move.
    #[test]
    fn random_games_with_noise_come_back_identical(
        seed in proptest::prelude::any::<u64>(),
        plies in 1usize..90,
        noise in 0.0f64..0.6,
        chess960 in proptest::option::weighted(0.25, 0u32..960),
    ) {
        let game = random_game(seed, plies, chess960);
        check_game_with(&game, seed, noise, &format!("random game seed {seed} plies {plies} noise {noise:.2} 960 {chess960:?}"));
    }
}
