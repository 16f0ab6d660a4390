//! PGN import, lenient as the standard's import format asks (§3.1): what real broadcast and
//! database software writes should load, and what cannot load should say where it failed.
//!
//! Reading is in two steps. A light pass over the text ([`prepare`]) mends what real files get
//! wrong in ways pgn-reader would silently mis-read (a promotion without `=`, `e.p.` glued to a
//! move, a blank line in the middle of the moves, a game's tags on the line of the previous
//! result) and marks tokens that look like moves but are none. pgn-reader then reads the mended
//! text and a [`Visitor`] plays the moves with shakmaty.
//!
//! The files, in the order of the work: `prepare.rs` (the pass, and `mend.rs` for one token),
//! `visitor.rs` (the moves played), `tags.rs` (what the tags decide: variant and start),
//! `comment.rs` (clock commands and the text of a comment). The errors are `pgn/error.rs`.
//!
//! [`Visitor`]: pgn_reader::Visitor
//! [`parse_clock`]: comment::parse_clock

use crate::game::Game;
use crate::pgn::error::{ImportErrorKind, PgnImportError};
use pgn_reader::Reader;
use prepare::prepare;
use std::io::{Cursor, Seek};
use visitor::Importer;

mod comment;
mod mend;
mod prepare;
mod tags;
mod visitor;

/// Reads every game of a PGN text. Each game either loads or fails on its own; a failure does
/// not stop the games after it.
///
/// Accepted besides the export format: a UTF-8 BOM, `%` escape lines and `;` comments, NAGs and
/// `!?` suffixes (dropped), variations (skipped; the main line is kept), `0-0` castling and
/// castling with typographic dashes, `½-½`, `[SetUp "1"]` without a FEN (the standard start),
/// Chess960 from `[Variant]` or from X-FEN/Shredder-FEN castling rights, games without tags or
/// moves, tags and moves on one line, promotions without `=`, `e.p.`, long algebraic and UCI
/// moves (`Ng1f3`, `e2-e4`, `g1f3`), blank lines inside the moves of an unfinished game. Clock
/// commands in comments (`[%clk]`, `[%emt]`) become [`RecordedMove::clk`]/[`RecordedMove::emt`]
/// in every form seen in real files (see [`parse_clock`]); a malformed one is dropped without
/// failing the game. The rest of the comments of a move, other commands like `[%eval]`
/// included, become its `comment` with whitespace runs made single spaces.
pub fn read_games(text: &str) -> Vec<Result<Game, PgnImportError>> {
    let prepared = prepare(text);
    let bytes = prepared.text.as_bytes();
    // The comment buffer is made large so that a comment reaches the visitor in one piece in
    // practice; `partial_comment` still stitches longer ones together.
    let mut reader = Reader::build(Cursor::new(bytes))
        .set_supported_tag_line_length(1 << 12)
        .set_supported_comment_length(1 << 15)
        .finish();
    let mut games = Vec::new();
    let mut game_no = 0;
    let mut last_start = None;
    loop {
        let start = match reader.has_more() {
            Ok(true) => offset(&mut reader),
            Ok(false) => break,
            Err(e) => {
                // Skipping the rest of a failed game ran into broken text; nothing more to read.
                let line = prepared.line_at(offset(&mut reader));
                games.push(Err(syntax_error(game_no.max(1), line, &e)));
                break;
            }
        };
        if last_start == Some(start) {
            break; // no progress: never loop on text the reader cannot get past
        }
        last_start = Some(start);
        let outcome = reader.read_game(&mut Importer);
        let end = offset(&mut reader);
        match outcome {
            Ok(None) => break,
            Ok(Some(Ok(imported))) => {
                if imported.empty {
                    continue; // stray text such as a `[/pgn]` wrapper line: not a game
                }
                game_no += 1;
                games.push(Ok(imported.game));
            }
            Ok(Some(Err(failure))) => {
                game_no += 1;
                let mut kind = failure.kind;
                // A token `prepare` replaced by `--` ends exactly where the reader stopped.
                if let (ImportErrorKind::IllegalMove { san, reason, .. }, Some(original)) =
                    (&mut kind, prepared.unreadable.get(&end))
                {
                    *san = original.clone();
                    *reason = "not a move";
                }
                let line = match failure.tag_at_fault {
                    Some(tag) => prepared.find_tag_line(start, end, tag),
                    None => prepared.line_at(end),
                };
                games.push(Err(PgnImportError {
                    game: game_no,
                    white: failure.white,
                    black: failure.black,
                    line,
                    kind,
                }));
            }
            Err(e) => {
                game_no += 1;
                games.push(Err(syntax_error(game_no, prepared.line_at(end), &e)));
            }
        }
    }
    games
}

/// The first game of a PGN text.
pub fn read_game(text: &str) -> Result<Game, PgnImportError> {
    read_games(text)
        .into_iter()
        .next()
        .unwrap_or(Err(PgnImportError {
            game: 1,
            white: None,
            black: None,
            line: 1,
            kind: ImportErrorKind::NoGame,
        }))
}

fn offset(reader: &mut Reader<Cursor<&[u8]>>) -> usize {
    // Seeking within an in-memory cursor cannot fail; 0 only makes a line number less precise.
    reader.stream_position().map(|p| p as usize).unwrap_or(0)
}

fn syntax_error(game: usize, line: usize, e: &std::io::Error) -> PgnImportError {
    PgnImportError {
        game,
        white: None,
        black: None,
        line,
        kind: ImportErrorKind::Syntax(e.to_string()),
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock_time::ClockTime;
    use crate::game::GameResult;
    use shakmaty::CastlingMode;

    fn game(text: &str) -> Game {
        read_game(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn sans(g: &Game) -> String {
        g.moves
            .iter()
            .map(|m| m.san.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn reads_what_software_writes() {
        let g = game(
            "\u{feff}[White \"A\"]\n%escape\n[Black \"B\"] 1. e4 ; rest\n e5 $1 2. Nf3!? (2. f4 (2. d4)) Nc6 ½-½",
        );
        assert_eq!(sans(&g), "e4 e5 Nf3 Nc6");
        assert_eq!(g.result, GameResult::Draw);
        assert_eq!(g.tags.get("Black"), Some("B"));

        let g = game("1. e4 e5 2. Nf3 Nf6 3. Bc4 Bc5 4. 0-0 0-0 *");
        assert_eq!(sans(&g), "e4 e5 Nf3 Nf6 Bc4 Bc5 O-O O-O");

        let g = game("[SetUp \"1\"]\n\n1. d4 *");
        assert!(!g.has_custom_start());
        assert!(g.tags.get("SetUp").is_none());

        let g = game(
            "[Variant \"Chess960\"]\n[FEN \"rbnnqkbr/pppppppp/8/8/8/8/PPPPPPPP/RBNNQKBR w HAha - 0 1\"]\n\n1. d4 d5 2. f3 f6 3. Nd3 c6 4. e4 dxe4 5. fxe4 e5 6. dxe5 Bxe5 7. Bc5+ Bd6 8. Bxd6+ Nxd6 9. e5 fxe5 10. O-O+ *",
        );
        assert_eq!(g.castling_mode, CastlingMode::Chess960);
        assert_eq!(
            g.moves.last().map(|m| m.san.to_string()).as_deref(),
            Some("O-O+")
        );

        // Shredder-FEN castling without a Variant tag still means Chess960.
        let g =
            game("[FEN \"rbnnqkbr/pppppppp/8/8/8/8/PPPPPPPP/RBNNQKBR w HAha - 0 1\"]\n\n1. d4 *");
        assert_eq!(g.castling_mode, CastlingMode::Chess960);

        let g = game("[Result \"0-1\"]\n\n1. f3 e5 2. g4");
        assert_eq!(
            g.result,
            GameResult::BlackWins,
            "a resignation only in the tag"
        );

        let g = game(
            "{intro} 1. e4 {[%clk 00:15:19]} {[%emt 00:00:02]} e5 {[%clk\n00:15:18]} {[%emt 0:00:09.5]} {good} *",
        );
        assert_eq!(g.intro.as_deref(), Some("intro"));
        let m = &g.moves[1];
        assert_eq!(
            (m.clk, m.emt, m.comment.as_deref()),
            (
                Some(ClockTime(918_000)),
                Some(ClockTime(9_500)),
                Some("good")
            )
        );
        assert_eq!(g.moves[0].emt, Some(ClockTime(2_000)));
    }

    #[test]
    fn crlf_and_latin1() {
        let text = "[White \"A\"]\r\n\r\n1. e4 {[%clk\r\n1:59:56]} e5\r\n\r\n2. Nf3 *\r\n\r\n[White \"B\"]\r\n\r\n1. d4 *\r\n";
        let games: Vec<Game> = read_games(text)
            .into_iter()
            .map(|g| g.expect("loads"))
            .collect();
        assert_eq!(games.len(), 2);
        assert_eq!(sans(&games[0]), "e4 e5 Nf3");
        assert_eq!(games[0].moves[0].clk, Some(ClockTime(7_196_000)));
        let latin1 = b"[White \"M\xfcller\"]\n\n1. e4 *";
        let g = game(&crate::pgn::decode_pgn_bytes(latin1));
        assert_eq!(g.tags.get("White"), Some("M\u{fc}ller"));
    }

    #[test]
    fn several_games_and_empty_ones() {
        let text = "[Event \"a\"]\n\n*\n\n[Event \"b\"]\n\n1. e4 *\n\n[pgn] 1. d4 *\n[/pgn]\n";
        let games: Vec<Game> = read_games(text)
            .into_iter()
            .map(|g| g.expect("loads"))
            .collect();
        assert_eq!(games.len(), 3);
        assert!(games[0].moves.is_empty());
        assert_eq!(sans(&games[2]), "d4");
        assert!(read_games("").is_empty());
        assert_eq!(
            read_game("  \n").map(|_| ()).map_err(|e| e.kind),
            Err(ImportErrorKind::NoGame)
        );
    }

    #[test]
    fn errors_name_game_players_move_and_line() {
        let text = "[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 *\n\n[White \"So, Wesley\"]\n[Black \"Carlsen, Magnus\"]\n\n1. e4 e5 2. Nf3\nNc6 3. Bb5 Ke6 4. O-O *\n\n1. d4 *\n";
        let games = read_games(text);
        assert_eq!(games.len(), 3);
        assert!(
            games[0].is_ok() && games[2].is_ok(),
            "a bad game does not stop the others"
        );
        let err = games[1].as_ref().expect_err("illegal move");
        assert_eq!(err.game, 2);
        assert_eq!(err.line, 10);
        assert!(
            matches!(&err.kind, ImportErrorKind::IllegalMove { ply: 6, san, .. } if san == "Ke6")
        );
        let shown = err.to_string();
        assert!(
            shown.starts_with("game 2 (So, Wesley - Carlsen, Magnus), line 10: 3... Ke6: "),
            "{shown}"
        );

        let err = read_game("\n[Event \"x\"]\n[FEN \"8/8/8 w - - 0 1\"]\n\n1. e4 *")
            .expect_err("bad fen");
        assert_eq!((err.game, err.line), (1, 3));
        assert!(matches!(err.kind, ImportErrorKind::BadFen { .. }), "{err}");

        let err = read_game("[Variant \"Antichess\"] 1.e3 e6 2.b4 Bxb4 *").expect_err("variant");
        assert!(err.to_string().contains("Antichess"), "{err}");

        let err = read_game("1. e4 -- 2. d4 *").expect_err("null move");
        assert!(err.to_string().contains("null move"), "{err}");

        let err = read_game("[White \"x\"]\n\n1. e4 { never closed").expect_err("syntax");
        assert!(matches!(err.kind, ImportErrorKind::Syntax(_)), "{err}");
    }
}
