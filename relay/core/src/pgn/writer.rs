//! PGN export format (PGN standard §8): what the relay publishes.

use crate::game::Game;
use shakmaty::{CastlingMode, Color, Position};

/// How to write a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Reduced export format (§3.2.4): the Seven Tag Roster only, no comments, clocks or
    /// variations. A game not starting from the usual position still gets `SetUp`/`FEN` (and
    /// `Variant` for Chess960): without them its moves could not be read back.
    pub reduced: bool,
    /// Write `[%clk]`/`[%emt]` commands after the moves that have them.
    pub clocks: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            reduced: false,
            clocks: true,
        }
    }
}

/// The Seven Tag Roster in its export order (§8.1.1), with the value written when a tag is
/// missing (Result is always the game's result).
const STR: [(&str, &str); 7] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
    ("Result", "*"),
];

/// Export lines hold fewer than 80 characters (§8.2.1).
const MAX_LINE: usize = 79;

/// A tag value as a PGN string token: backslash and quote escaped (§7); tabs and newlines, which
/// a string may not hold, become spaces.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A tag name as the export format allows it: a symbol of letters, digits and `_` (§7, §8.1.1;
/// real files carry names like `GreatestGameEverPlayed?`, which other readers refuse): any
/// other character becomes `_`.
fn symbol(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub(crate) fn tag_line(out: &mut String, name: &str, value: &str) {
    out.push('[');
    out.push_str(name);
    out.push_str(" \"");
    out.push_str(&escape(value));
    out.push_str("\"]\n");
}

/// The tags a game is written with, in export order: the STR first in its order, then the
/// other tags in ASCII order of their names (§8.1.1), `SetUp`/`FEN`/`Variant` among them when
/// the start position needs them. Every writer of tags (PGN, PGC) takes them from here.
pub fn export_tags(game: &Game, reduced: bool) -> Vec<(String, String)> {
    let mut tags: Vec<(String, String)> = STR
        .iter()
        .map(|&(name, missing)| {
            let value = match name {
                "Result" => game.result.to_string(),
                _ => game
                    .tags
                    .get(name)
                    .filter(|v| !v.is_empty())
                    .unwrap_or(missing)
                    .to_string(),
            };
            (name.to_string(), value)
        })
        .collect();
    let chess960 = game.castling_mode == CastlingMode::Chess960;
    let mut others: Vec<(String, String)> = Vec::new();
    if game.has_custom_start() {
        others.push(("SetUp".into(), "1".into()));
        others.push(("FEN".into(), game.start_fen().to_string()));
    }
    if chess960 {
        others.push(("Variant".into(), "Chess960".into()));
    }
    if !reduced {
        for (name, value) in &game.tags.0 {
            let derived =
                matches!(name.as_str(), "SetUp" | "FEN") || (chess960 && name == "Variant");
            if !derived && !STR.iter().any(|(s, _)| s == name) {
                others.push((symbol(name), value.clone()));
            }
        }
    }
    others.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    tags.extend(others);
    tags
}

fn write_tags(out: &mut String, game: &Game, reduced: bool) {
    for (name, value) in export_tags(game, reduced) {
        tag_line(out, &name, &value);
    }
}

/// Lays out movetext on lines under 80 characters, one space between pieces. A piece never
/// splits (a move with its number, a word of a comment), so lines break between moves and at
/// the spaces of comments. A single piece longer than a line (a long URL) gets a line of its own.
struct Lines {
    out: String,
    line_len: usize,
}

impl Lines {
    fn push(&mut self, piece: &str) {
        // Characters, not bytes, are what an editor shows; a name in Cyrillic is not wider.
        let width = piece.chars().count();
        if self.line_len > 0 && self.line_len + 1 + width > MAX_LINE {
            self.out.push('\n');
            self.line_len = 0;
        }
        if self.line_len > 0 {
            self.out.push(' ');
            self.line_len += 1;
        }
        self.out.push_str(piece);
        self.line_len += width;
    }

    /// A brace comment, broken at its spaces when the line is full.
    fn push_comment(&mut self, words: &[String]) {
        let n = words.len();
        for (i, w) in words.iter().enumerate() {
            let mut piece = String::new();
            if i == 0 {
                piece.push('{');
            }
            piece.push_str(w);
            if i + 1 == n {
                piece.push('}');
            }
            self.push(&piece);
        }
    }
}

/// The words of a comment: a `}` would end it early, so it is dropped (PGN has no escape for
/// it); whitespace runs collapse.
fn comment_words(parts: &[String]) -> Vec<String> {
    parts
        .iter()
        .flat_map(|p| p.split_whitespace())
        .map(|w| w.replace('}', ""))
        .filter(|w| !w.is_empty())
        .collect()
}

/// A game in PGN export format, ending with an empty line.
pub fn write_game(game: &Game, opts: &WriteOptions) -> String {
    let mut out = String::new();
    write_tags(&mut out, game, opts.reduced);
    out.push('\n');

    let mut lines = Lines {
        out: String::new(),
        line_len: 0,
    };
    let comments = !opts.reduced;
    if comments && let Some(intro) = &game.intro {
        let words = comment_words(std::slice::from_ref(intro));
        if !words.is_empty() {
            lines.push_comment(&words);
        }
    }
    let mut pos = game.start.clone();
    // A black move gets its number when it opens the movetext or follows commentary (§8.2.2.2).
    let mut black_needs_number = true;
    for m in &game.moves {
        let n = pos.fullmoves();
        let number = match pos.turn() {
            Color::White => Some(format!("{n}.")),
            Color::Black if black_needs_number => Some(format!("{n}...")),
            Color::Black => None,
        };
        let san = m.san.to_string();
        match number {
            // A move number and its move stay on one line.
            Some(number) => lines.push(&format!("{number} {san}")),
            None => lines.push(&san),
        }
        let mut parts = Vec::new();
        if comments && opts.clocks {
            if let Some(clk) = m.clk {
                parts.push(format!("[%clk {clk}]"));
            }
            if let Some(emt) = m.emt {
                parts.push(format!("[%emt {emt}]"));
            }
        }
        if comments && let Some(text) = &m.comment {
            parts.push(text.clone());
        }
        let words = comment_words(&parts);
        black_needs_number = !words.is_empty();
        if !words.is_empty() {
            lines.push_comment(&words);
        }
        pos.play_unchecked(m.mv);
    }
    lines.push(&game.result.to_string());
    out.push_str(&lines.out);
    out.push_str("\n\n");
    out
}

/// Several games, one empty line between them.
pub fn write_games<'a>(games: impl IntoIterator<Item = &'a Game>, opts: &WriteOptions) -> String {
    games.into_iter().map(|g| write_game(g, opts)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock_time::ClockTime;
    use crate::game::GameResult;
    use crate::pgn::read_game;
    use shakmaty::san::San;
    use shakmaty::{Chess, fen::Fen};

    fn game_of(sans: &str) -> Game {
        let mut g = Game::default();
        for s in sans.split_whitespace() {
            let m = s
                .parse::<San>()
                .expect("san")
                .to_move(&g.position())
                .expect("legal");
            g.push(m, None, None);
        }
        g
    }

    fn check(input: (&Game, WriteOptions), expected: &str) {
        assert_eq!(write_game(input.0, &input.1), expected);
    }

    const EMPTY_STR: &str = "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n[White \"?\"]\n[Black \"?\"]\n[Result \"*\"]\n\n";

    #[test]
    fn empty_game() {
        check(
            (&Game::default(), WriteOptions::default()),
            &format!("{EMPTY_STR}*\n\n"),
        );
    }

    #[test]
    fn tags_in_order_and_escaped() {
        let mut g = game_of("e4");
        g.result = GameResult::WhiteWins;
        g.tags.set("WhiteElo", "2800");
        g.tags.set("Black", "O\"Neil \\ Jr");
        g.tags.set("TimeControl", "40/5400+30:1800+30");
        g.tags.set("Event", "Tata Steel");
        g.tags.set("Result", "*"); // stale: the game's result wins
        g.tags.set("Clock", "B/0:45:56");
        g.tags.set("BlackClock", "1:30:30");
        g.tags.set("WhiteClock", "1:30:30");
        check(
            (&g, WriteOptions::default()),
            "[Event \"Tata Steel\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n[White \"?\"]\n\
             [Black \"O\\\"Neil \\\\ Jr\"]\n[Result \"1-0\"]\n[BlackClock \"1:30:30\"]\n[Clock \"B/0:45:56\"]\n\
             [TimeControl \"40/5400+30:1800+30\"]\n[WhiteClock \"1:30:30\"]\n[WhiteElo \"2800\"]\n\n1. e4 1-0\n\n",
        );
        let back = read_game(&write_game(&g, &WriteOptions::default())).expect("reads back");
        assert_eq!(back.tags.get("Black"), Some("O\"Neil \\ Jr"));
    }

    #[test]
    fn clocks_comments_and_black_move_numbers() {
        let mut g = game_of("e4 e5 Nf3 Nc6");
        g.moves[0].clk = Some(ClockTime::from_secs(7196));
        g.moves[0].emt = Some(ClockTime::from_secs(12));
        g.moves[1].clk = Some(ClockTime(9_500));
        g.moves[2].comment = Some("a } brace".into());
        g.intro = Some("intro".into());
        check(
            (&g, WriteOptions::default()),
            &format!(
                "{EMPTY_STR}{{intro}} 1. e4 {{[%clk 1:59:56] [%emt 0:00:12]}} 1... e5 {{[%clk 0:00:09.5]}} 2. Nf3\n{{a brace}} 2... Nc6 *\n\n"
            ),
        );
        check(
            (
                &g,
                WriteOptions {
                    reduced: false,
                    clocks: false,
                },
            ),
            &format!("{EMPTY_STR}{{intro}} 1. e4 e5 2. Nf3 {{a brace}} 2... Nc6 *\n\n"),
        );
    }

    #[test]
    fn reduced_export() {
        let mut g = game_of("d4 d5");
        g.tags.set("ECO", "D00");
        g.tags.set("White", "A");
        g.moves[0].clk = Some(ClockTime::from_secs(60));
        g.moves[0].comment = Some("note".into());
        g.intro = Some("intro".into());
        let text = write_game(
            &g,
            &WriteOptions {
                reduced: true,
                clocks: true,
            },
        );
        assert_eq!(
            text,
            EMPTY_STR.replace("[White \"?\"]", "[White \"A\"]") + "1. d4 d5 *\n\n"
        );
    }

    #[test]
    fn custom_start_and_chess960() {
        let fen = "r1bqk1nr/pppp1ppp/2n5/4p3/1bB1P3/2P2N2/P2P1PPP/RNBQK2R b KQkq - 0 1";
        let start: Chess = fen
            .parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("legal");
        let mut g = Game {
            start,
            ..Game::default()
        };
        let m = "Ba5"
            .parse::<San>()
            .expect("san")
            .to_move(&g.position())
            .expect("legal");
        g.push(m, None, None);
        let m = "O-O"
            .parse::<San>()
            .expect("san")
            .to_move(&g.position())
            .expect("legal");
        g.push(m, None, None);
        let text = write_game(&g, &WriteOptions::default());
        assert!(
            text.contains(&format!(
                "[Result \"*\"]\n[FEN \"{fen}\"]\n[SetUp \"1\"]\n\n1... Ba5 2. O-O *\n"
            )),
            "{text}"
        );
        let reduced = write_game(
            &g,
            &WriteOptions {
                reduced: true,
                clocks: false,
            },
        );
        assert!(reduced.contains("[SetUp \"1\"]"), "{reduced}");

        let fen960 = "rbnnqkbr/pppppppp/8/8/8/8/PPPPPPPP/RBNNQKBR w HAha - 0 1";
        let start: Chess = fen960
            .parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Chess960)
            .expect("legal");
        let mut g = Game {
            start,
            castling_mode: CastlingMode::Chess960,
            ..Game::default()
        };
        g.tags.set("Variant", "fischerandom");
        let text = write_game(&g, &WriteOptions::default());
        assert!(
            text.contains("[SetUp \"1\"]\n[Variant \"Chess960\"]\n"),
            "{text}"
        );
        assert!(!text.contains("fischerandom"));
        let back = read_game(&text).expect("reads back");
        assert_eq!(back.castling_mode, CastlingMode::Chess960);
        assert_eq!(back.start, g.start);
    }

    #[test]
    fn lines_stay_under_80_columns() {
        let mut g = game_of(
            "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Nb8 d4 Nbd7 c4 c6 cxb5 axb5 Nc3 Bb7 Bg5 b4 Nb1 h6 Bh4 c5 dxe5 Nxe4 Bxe7 Qxe7 exd6 Qf6",
        );
        for (i, m) in g.moves.iter_mut().enumerate() {
            m.clk = Some(ClockTime::from_secs(7200 - 13 * i as u64));
            m.emt = Some(ClockTime::from_secs(13));
            if i % 7 == 3 {
                m.comment = Some("a rather long comment that certainly needs to be wrapped over more than one line of text".into());
            }
        }
        let text = write_game(&g, &WriteOptions::default());
        for line in text.lines() {
            assert!(line.chars().count() < 80, "{line:?}");
            assert!(!line.starts_with(' ') && !line.ends_with(' '), "{line:?}");
        }
        let back = read_game(&text).expect("reads back");
        assert_eq!(back.moves, g.moves);
    }
}
