//! Real broadcast games played on the emulated board, hands untidy, then read back from the
//! board's own memory (its EEPROM log, as SEND_EE_MOVES returns it) by the core's reader:
//! every move, and every clock the log recorded equal to the clock the press really left;
//! a clock the board skipped (a very fast press) is named, never invented.

mod support;

use boards::protocol::eeprom::parse_records;
use emulator::board::{BoardIdentity, EmulatedBoard};
use emulator::memory::FAST_PRESS_MS;
use emulator::play::{Table, simulate};
use emulator::player::{GameScore, NoiseConfig, Script, ScriptOptions, read_games, script};
use relay_core::board_memory::{Recovery, latest_game, recover};
use shakmaty::Position;

fn games_with_clocks() -> Vec<(String, GameScore)> {
    let Some(files) = boards::testdata::shared_files("pgn/clocks") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        for (i, mut g) in read_games(&text).expect("games").into_iter().enumerate() {
            if g.time_control.is_none() {
                g.time_control = g.guess_time_control();
            }
            out.push((format!("{} game {}", f.display(), i + 1), g));
        }
    }
    out
}

/// Plays `s` on `board` and returns the board's memory as a dump's records.
fn play(board: &mut EmulatedBoard, game: &GameScore, s: &Script, table: Table) -> Vec<u8> {
    simulate(board, &[], game.start.board(), s, table, 500);
    board.memory().dump()
}

/// Plies whose press came too soon after the one before for the board to log its clock.
fn fast_plies(s: &Script) -> Vec<usize> {
    s.moves
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[1].press_ms.saturating_sub(w[0].press_ms) < FAST_PRESS_MS)
        .map(|(i, _)| i + 2)
        .collect()
}

#[test]
fn broadcast_games_come_back_from_the_boards_memory() {
    let (mut games, mut moves, mut clocks, mut skipped) = (0, 0, 0, 0);
    for (label, game) in games_with_clocks() {
        if game.start != shakmaty::Chess::default() {
            continue;
        }
        for seed in [1u64, 2] {
            let options = ScriptOptions::new(NoiseConfig {
                probability: 0.3,
                handling_ms: (250, 700),
            });
            let s = script(&game, seed, &options);
            let table = Table::varied(seed);
            let mut board = EmulatedBoard::new(BoardIdentity::from_number(7), table.clock_for(&s));
            let records = parse_records(&play(&mut board, &game, &s, table));
            let got = latest_game(&records).expect("a game in the memory");
            let label = format!("{label} seed {seed}");
            assert_eq!(got.orientation, table.orientation, "{label}");
            let want: Vec<&str> = game.moves.iter().map(|m| m.san.as_str()).collect();
            let have: Vec<String> = got
                .to_game()
                .moves
                .iter()
                .map(|m| m.san.to_string())
                .collect();
            let fast = fast_plies(&s);
            // A last move whose press the board did not log is left open (the live reading
            // takes it from the board), never guessed.
            let want = if have.len() + 1 == want.len() && fast.contains(&want.len()) {
                &want[..have.len()]
            } else {
                &want[..]
            };
            assert_eq!(have, want, "{label}: moves");
            for (i, (m, t)) in got.moves.iter().zip(&s.moves).enumerate() {
                let ply = i + 1;
                match m.clk {
                    Some(clk) => {
                        assert_eq!(
                            Some(clk.millis()),
                            t.clk_ms.map(|c| c.div_ceil(1000) * 1000),
                            "{label}: clock of ply {ply}"
                        );
                        clocks += 1;
                    }
                    None => {
                        // Only a press the board did not log leaves a move without its clock.
                        assert!(fast.contains(&ply), "{label}: ply {ply} lost its clock");
                        skipped += 1;
                    }
                }
            }
            games += 1;
            moves += want.len();
        }
    }
    println!(
        "{games} games, {moves} moves from the memory; {clocks} clocks equal, {skipped} skipped by fast presses and named"
    );
    if boards::testdata::shared_files("pgn/clocks").is_some() {
        assert!(games > 0 && clocks > 0);
    }
}

#[test]
fn the_moves_missed_after_a_recorded_ply_are_recovered_and_a_wrapped_log_is_said_so() {
    let Some((label, game)) = games_with_clocks()
        .into_iter()
        .find(|(_, g)| g.start == shakmaty::Chess::default() && g.moves.len() > 40)
    else {
        return;
    };
    let s = script(&game, 3, &ScriptOptions::new(NoiseConfig::clean()));
    let table = Table::default();
    let mut board = EmulatedBoard::new(BoardIdentity::from_number(8), table.clock_for(&s));
    let records = parse_records(&play(&mut board, &game, &s, table));
    // What a relay stored before it went down: the first ten plies.
    let stored: Vec<String> = {
        let mut pos = game.start.clone();
        game.moves[..10]
            .iter()
            .map(|m| {
                let mv = m
                    .san
                    .parse::<shakmaty::san::San>()
                    .expect("san")
                    .to_move(&pos)
                    .expect("legal");
                pos.play_unchecked(mv);
                shakmaty::uci::UciMove::from_move(mv, shakmaty::CastlingMode::Standard).to_string()
            })
            .collect()
    };
    let Recovery::Continues {
        first_ply, moves, ..
    } = recover(&game.start, &stored, Some(table.orientation), &records)
    else {
        panic!("{label}: not recovered")
    };
    assert_eq!(first_ply, 11);
    assert_eq!(moves.len(), game.moves.len() - 10, "{label}");
    // The board goes on to play game after game until the memory holds this one no more.
    for k in 0..40u64 {
        let s = script(&game, 10 + k, &ScriptOptions::default());
        simulate(&mut board, &[], game.start.board(), &s, table, 500);
    }
    let records = parse_records(&board.memory().dump());
    assert!(
        !records.contains(&boards::protocol::EeRecord::PowerUp),
        "the log wrapped"
    );
    let t = std::time::Instant::now();
    let again = recover(&game.start, &stored, Some(table.orientation), &records);
    println!(
        "a full memory ({} records) read back in {:?} (the hall's work for one board)",
        records.len(),
        t.elapsed()
    );
    // The latest game is the same game again, so it still continues; a game the board never
    // played is not found.
    assert!(matches!(again, Recovery::Continues { .. }), "{again:?}");
    let other = recover(&game.start, &["a2a3".to_string()], None, &records);
    assert!(matches!(other, Recovery::Unknown { .. }), "{other:?}");
}
