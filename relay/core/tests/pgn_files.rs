//! Every PGN file of the shared test data (real files written by other software) through the
//! reader and the writer.

use relay_core::clock_time::ClockTime;
use relay_core::game::Game;
use relay_core::pgn::{
    ImportErrorKind, PgnImportError, WriteOptions, decode_pgn_bytes, read_games, write_game,
    write_games,
};
use std::path::{Path, PathBuf};

/// Games of `clocks/` that are expected to fail, with the reason. Empty: every game of those
/// files loads.
const KNOWN_BAD_IN_CLOCKS: &[(&str, usize, &str)] = &[];

fn data_dir() -> Option<PathBuf> {
    boards::testdata::shared_data("pgn")
}

fn pgn_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "pgn") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn load(path: &Path) -> (String, Vec<Result<Game, PgnImportError>>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = decode_pgn_bytes(&bytes).into_owned();
    let games = read_games(&text);
    (text, games)
}

/// An error must say which game and line, and the line must exist in the file.
fn assert_well_formed(err: &PgnImportError, text: &str, file: &str) {
    let lines = text.lines().count().max(1);
    assert!(err.game >= 1, "{file}: {err}");
    assert!(
        (1..=lines + 1).contains(&err.line),
        "{file}: line {} of {lines}: {err}",
        err.line
    );
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!("game {}", err.game)),
        "{file}: {shown}"
    );
    assert!(
        shown.contains(&format!("line {}", err.line)),
        "{file}: {shown}"
    );
    if let ImportErrorKind::IllegalMove { san, .. } = &err.kind {
        assert!(shown.contains(san.as_str()), "{file}: {shown}");
    }
}

#[test]
fn every_shared_pgn_file_loads() {
    let Some(dir) = data_dir() else { return };
    let files = pgn_files(&dir);
    assert!(
        files.len() > 10,
        "expected the shared PGN files in {}",
        dir.display()
    );
    for path in files {
        let name = path
            .strip_prefix(&dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        let (text, games) = load(&path);
        let ok = games.iter().filter(|g| g.is_ok()).count();
        let clocks: usize = games
            .iter()
            .flatten()
            .map(|g| g.moves.iter().filter(|m| m.clk.is_some()).count())
            .sum();
        println!(
            "{name}: {} games, {ok} loaded, {} failed, {clocks} clk",
            games.len(),
            games.len() - ok
        );
        for (i, g) in games.iter().enumerate() {
            // A PlyCount tag that disagrees hints at a move read wrongly or dropped.
            if let Ok(g) = g
                && let Some(n) = g.tags.get("PlyCount").and_then(|n| n.parse::<usize>().ok())
                && n != g.moves.len()
            {
                println!(
                    "    game {}: PlyCount {n}, {} moves read",
                    i + 1,
                    g.moves.len()
                );
            }
            if let Err(e) = g {
                println!("    {e}");
                assert_well_formed(e, &text, &name);
                assert_eq!(e.game, i + 1, "{name}: games are numbered in file order");
            }
        }
        if name.starts_with("clocks") {
            assert!(!games.is_empty(), "{name}: no games");
            for (i, g) in games.iter().enumerate() {
                let known = KNOWN_BAD_IN_CLOCKS
                    .iter()
                    .any(|(f, n, _)| name.ends_with(f) && *n == i + 1);
                if let Err(e) = g {
                    assert!(known, "{name}: {e}");
                }
            }
        }
    }
}

fn clocks_of(g: &Game) -> Vec<(Option<ClockTime>, Option<ClockTime>)> {
    g.moves.iter().map(|m| (m.clk, m.emt)).collect()
}

#[test]
fn clock_files_round_trip() {
    let Some(dir) = data_dir() else { return };
    for path in pgn_files(&dir.join("clocks")) {
        let (_, games) = load(&path);
        let games: Vec<Game> = games
            .into_iter()
            .map(|g| g.unwrap_or_else(|e| panic!("{e}")))
            .collect();
        let written = write_games(&games, &WriteOptions::default());
        let again: Vec<Game> = read_games(&written)
            .into_iter()
            .map(|g| g.unwrap_or_else(|e| panic!("{}: rewritten: {e}", path.display())))
            .collect();
        assert_eq!(again.len(), games.len(), "{}", path.display());
        for (a, b) in games.iter().zip(&again) {
            let what = format!("{}: {:?}", path.display(), a.tags.get("White"));
            assert_eq!(
                a.moves.iter().map(|m| m.mv).collect::<Vec<_>>(),
                b.moves.iter().map(|m| m.mv).collect::<Vec<_>>(),
                "{what}"
            );
            assert_eq!(clocks_of(a), clocks_of(b), "{what}");
            assert_eq!(
                a.moves.iter().map(|m| &m.comment).collect::<Vec<_>>(),
                b.moves.iter().map(|m| &m.comment).collect::<Vec<_>>(),
                "{what}"
            );
            assert_eq!(a.result, b.result, "{what}");
            assert_eq!(a.start, b.start, "{what}");
            // Export again: byte for byte the same (§3.2.1).
            assert_eq!(
                write_game(a, &WriteOptions::default()),
                write_game(b, &WriteOptions::default()),
                "{what}"
            );
        }
        for line in written.lines() {
            assert!(
                line.chars().count() < 80 || line.starts_with('['),
                "{}: {line:?}",
                path.display()
            );
        }
    }
}

#[test]
fn tricky_files_round_trip_what_loads() {
    let Some(dir) = data_dir() else { return };
    for path in pgn_files(&dir.join("tricky")) {
        let (_, games) = load(&path);
        for g in games.iter().flatten() {
            let text = write_game(g, &WriteOptions::default());
            let back = read_games(&text);
            assert_eq!(back.len(), 1, "{}: {text}", path.display());
            let back = back
                .into_iter()
                .next()
                .and_then(Result::ok)
                .unwrap_or_else(|| panic!("{}: {text}", path.display()));
            assert_eq!(
                back.moves.iter().map(|m| m.mv).collect::<Vec<_>>(),
                g.moves.iter().map(|m| m.mv).collect::<Vec<_>>()
            );
            assert_eq!(clocks_of(&back), clocks_of(g));
            assert_eq!(back.castling_mode, g.castling_mode, "{}", path.display());
        }
    }
}

/// The export format on real games: the Seven Tag Roster first and in order, lines under 80
/// columns, escaped values, the reduced form.
#[test]
fn writer_checks_on_real_games() {
    let Some(dir) = data_dir() else { return };
    const STR: [&str; 7] = ["Event", "Site", "Date", "Round", "White", "Black", "Result"];
    for path in pgn_files(&dir.join("clocks")) {
        let (_, games) = load(&path);
        for mut game in games.into_iter().flatten() {
            game.tags.set("Annotator", r#"Say "hi" \ bye"#);
            let text = write_game(&game, &WriteOptions::default());
            let lines: Vec<&str> = text.lines().collect();
            for (line, name) in lines.iter().zip(STR) {
                assert!(
                    line.starts_with(&format!("[{name} \"")),
                    "{}: {line}",
                    path.display()
                );
            }
            assert_eq!(lines[6], format!("[Result \"{}\"]", game.result));
            let others: Vec<&str> = lines[7..]
                .iter()
                .take_while(|l| l.starts_with('['))
                .map(|l| &l[1..l.find(' ').unwrap_or(l.len())])
                .collect();
            assert!(
                others.windows(2).all(|w| w[0] < w[1]),
                "ASCII order: {others:?}"
            );
            assert!(
                text.contains(r#"[Annotator "Say \"hi\" \\ bye"]"#),
                "{text}"
            );
            for line in lines.iter().filter(|l| !l.starts_with('[')) {
                assert!(line.chars().count() < 80, "{}: {line:?}", path.display());
            }
            assert!(
                text.ends_with(&format!(" {}\n\n", game.result))
                    || text.ends_with(&format!("\n{}\n\n", game.result))
            );
            let back = read_games(&text)
                .into_iter()
                .next()
                .and_then(Result::ok)
                .expect("reads back");
            assert_eq!(back.tags.get("Annotator"), Some(r#"Say "hi" \ bye"#));

            let reduced = write_game(
                &game,
                &WriteOptions {
                    reduced: true,
                    clocks: true,
                },
            );
            let tag_lines = reduced.lines().take_while(|l| l.starts_with('[')).count();
            assert_eq!(tag_lines, 7, "{reduced}");
            assert!(
                !reduced.contains('{') && !reduced.contains("Annotator"),
                "{reduced}"
            );
            let back = read_games(&reduced)
                .into_iter()
                .next()
                .and_then(Result::ok)
                .expect("reads back");
            assert_eq!(back.moves.len(), game.moves.len());
            assert!(
                back.moves
                    .iter()
                    .all(|m| m.clk.is_none() && m.comment.is_none())
            );
        }
    }
}
