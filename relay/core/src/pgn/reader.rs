//! PGN import, lenient as the standard's import format asks (§3.1): what real broadcast and
//! database software writes should load, and what cannot load should say where it failed.
//!
//! Reading is in two steps. A light pass over the text ([`prepare`]) mends what real files get
//! wrong in ways pgn-reader would silently mis-read (a promotion without `=`, `e.p.` glued to a
//! move, a blank line in the middle of the moves, a game's tags on the line of the previous
//! result) and marks tokens that look like moves but are none. pgn-reader then reads the mended
//! text and a [`Visitor`] plays the moves with shakmaty.

use crate::clock_time::ClockTime;
use crate::game::{Game, GameResult, RecordedMove, Tags};
use crate::pgn::error::{ImportErrorKind, PgnImportError};
use pgn_reader::{KnownOutcome, Outcome, RawComment, RawTag, Reader, SanPlus, Visitor};
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanError};
use shakmaty::uci::UciMove;
use shakmaty::{
    CastlingMode, Chess, Color, Move, Position, PositionError, PositionErrorKinds, Role, Square,
};
use std::collections::HashMap;
use std::io::{Cursor, Seek};
use std::ops::ControlFlow;

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

/// The text handed to pgn-reader, and how to map it back to the original's lines.
#[derive(Debug, Default)]
struct Prepared {
    text: String,
    /// Offsets (in `text`) of newlines that were not in the original.
    added_newlines: Vec<usize>,
    /// Tokens that look like moves but are none, replaced by `--` (which pgn-reader reports as a
    /// null move), by the offset just after the `--`.
    unreadable: HashMap<usize, String>,
}

impl Prepared {
    /// 1-based line in the original text of an offset in the prepared one.
    fn line_at(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        let newlines = self.text.as_bytes()[..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        let added = self.added_newlines.iter().filter(|&&a| a < offset).count();
        1 + newlines - added
    }

    /// The line of the tag `[name ...]` between two offsets, or of the end.
    fn find_tag_line(&self, start: usize, end: usize, name: &str) -> usize {
        let bytes = self.text.as_bytes();
        let end = end.min(bytes.len());
        let needle = format!("[{name}");
        bytes[start.min(end)..end]
            .windows(needle.len())
            .position(|w| w == needle.as_bytes())
            .map_or_else(|| self.line_at(end), |i| self.line_at(start + i))
    }
}

/// The characters that end a token for pgn-reader.
fn is_token_end(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t'
            | b'\n'
            | b'\r'
            | b'{'
            | b'}'
            | b'('
            | b')'
            | b'!'
            | b'?'
            | b'$'
            | b';'
            | b'.'
            | b'*'
    )
}

const DASHES: [char; 7] = [
    '\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}', '\u{2015}', '\u{2212}',
];

fn is_result(token: &str) -> bool {
    matches!(token, "1-0" | "0-1" | "1/2-1/2" | "½-½")
}

/// What a movetext token becomes in the prepared text.
enum Mended {
    Keep,
    Replace(String),
    /// Looks like a move, reads as none.
    Unreadable,
}

fn parses(san: &str) -> bool {
    SanPlus::from_ascii(san.as_bytes()).is_ok()
}

/// Mends the ways real files spell moves that pgn-reader does not read. `next` is the text
/// after the token, for `e.p.` (whose dots end the token).
fn mend_token(token: &str, next: &str) -> (Mended, usize) {
    // Typographic dashes in castling and results (`O‑O`, `1–0`).
    let dashed: String = token
        .chars()
        .map(|c| if DASHES.contains(&c) { '-' } else { c })
        .collect();
    let t = dashed.as_str();
    if is_result(t) || t.bytes().all(|b| b.is_ascii_digit()) {
        return (
            if t == token {
                Mended::Keep
            } else {
                Mended::Replace(dashed)
            },
            0,
        );
    }
    let castle = t.replace(['0', 'o'], "O");
    let bare = castle.trim_end_matches(['+', '#']);
    if bare == "O-O" || bare == "O-O-O" {
        return (
            if castle == token {
                Mended::Keep
            } else {
                Mended::Replace(castle)
            },
            0,
        );
    }
    if parses(t) {
        return (
            if t == token {
                Mended::Keep
            } else {
                Mended::Replace(dashed)
            },
            0,
        );
    }
    // `bxa6e.p.`, `exf6ep`, and a lone `e.p.` after the move.
    let ep_dots = if next.starts_with(".p.") {
        3
    } else if next.starts_with(".p") {
        2
    } else {
        0
    };
    if let Some(mv) = t.strip_suffix('e').filter(|_| ep_dots > 0)
        && (mv.is_empty() || parses(mv))
    {
        let blanks = " ".repeat(1 + ep_dots);
        return (Mended::Replace(format!("{mv}{blanks}")), ep_dots);
    }
    if let Some(mv) = t.strip_suffix("ep")
        && (mv.is_empty() || parses(mv))
    {
        return (Mended::Replace(format!("{mv}  ")), 0);
    }
    // `Rh7++`: an old way to mark mate or double check.
    if let Some(mv) = t.strip_suffix("++").filter(|mv| parses(mv)) {
        return (Mended::Replace(format!("{mv}+ ")), 0);
    }
    // A promotion without `=`: `a8Q`, `exd8q+`.
    let body = t.trim_end_matches(['+', '#']);
    let suffix = &t[body.len()..];
    if let Some(piece) = body.chars().last().filter(|c| "QRBNqrbn".contains(*c)) {
        let head = &body[..body.len() - 1];
        let fixed = format!("{head}={}{suffix}", piece.to_ascii_uppercase());
        if head.ends_with(['1', '8']) && parses(&fixed) {
            return (Mended::Replace(fixed), 0);
        }
    }
    // Long algebraic with a hyphen: `e2-e4`, `Ng1-f3`.
    if t.len() >= 5 && t.contains('-') {
        let fixed = t.replacen('-', "", 1);
        if parses(&fixed) {
            return (Mended::Replace(fixed), 0);
        }
    }
    // Something like `Nf9` or `Kxx3`: it was meant as a move. Words and HTML debris are not.
    let san_like = t.len() >= 2
        && t.starts_with(|c: char| {
            matches!(c, 'K' | 'Q' | 'R' | 'B' | 'N' | 'P' | 'O' | 'a'..='h')
        })
        && t.bytes()
            .all(|b| b"KQRBNPabcdefghx=+#-O0123456789".contains(&b))
        && t.bytes().any(|b| b.is_ascii_digit());
    (
        if san_like {
            Mended::Unreadable
        } else {
            Mended::Keep
        },
        0,
    )
}

/// The pass before pgn-reader (see the module comment). It follows pgn-reader's view of the text:
/// comments, `;` and `%` lines, tag pairs, variations, and games ending at a blank line or at a
/// line starting with `[`. Only spaces and newlines are added and moves rewritten, so lines of
/// the original stay countable.
fn prepare(input: &str) -> Prepared {
    let bytes = input.as_bytes();
    let mut p = Prepared {
        text: String::with_capacity(input.len() + 64),
        ..Prepared::default()
    };
    let mut i = 0;
    let mut depth = 0usize;
    let mut in_movetext = false;
    let mut terminated = false;
    // A move was read at the top level of the current game.
    let mut moves_seen = false;
    let mut line_start = true;
    // Copies `input[from..to]` unchanged.
    let copy = |p: &mut Prepared, from: usize, to: usize| p.text.push_str(&input[from..to]);
    while i < bytes.len() {
        if input[i..].starts_with('\u{feff}') {
            // A byte order mark, also at the start of a later game when files were joined: it
            // would hide the `[` of the first tag from pgn-reader.
            i += '\u{feff}'.len_utf8();
            continue;
        }
        let c = bytes[i];
        let was_line_start = line_start;
        line_start = false;
        match c {
            b'{' => {
                let end = memchr_from(bytes, i + 1, b'}').map_or(bytes.len(), |e| e + 1);
                copy(&mut p, i, end);
                in_movetext = true;
                i = end;
            }
            b';' => {
                let end = memchr_from(bytes, i, b'\n').unwrap_or(bytes.len());
                copy(&mut p, i, end);
                i = end;
            }
            b'%' if was_line_start => {
                let end = memchr_from(bytes, i, b'\n').unwrap_or(bytes.len());
                copy(&mut p, i, end);
                i = end;
            }
            b'\n' => {
                p.text.push('\n');
                i += 1;
                line_start = true;
                let blank_follows =
                    bytes[i..].starts_with(b"\n") || bytes[i..].starts_with(b"\r\n");
                if blank_follows {
                    if in_movetext && !terminated && moves_continue(bytes, i, moves_seen) {
                        // A blank line inside the moves of an unfinished game (Crafty, hand-
                        // edited files): a space makes it not blank for pgn-reader.
                        p.text.push(' ');
                        line_start = false;
                    } else {
                        // pgn-reader ends the game here.
                        (in_movetext, terminated, moves_seen, depth) = (false, false, false, 0);
                    }
                }
            }
            b'[' if was_line_start || !in_movetext || terminated => {
                if in_movetext && !was_line_start {
                    // `... a5*[Event "next"]`: the next game's tags on the line of this game's
                    // result. pgn-reader needs them on a line of their own.
                    p.added_newlines.push(p.text.len());
                    p.text.push('\n');
                }
                if in_movetext {
                    (in_movetext, terminated, moves_seen, depth) = (false, false, false, 0);
                }
                let end = tag_end(bytes, i);
                copy(&mut p, i, end);
                i = end;
            }
            b'(' => {
                depth += 1;
                in_movetext = true;
                p.text.push('(');
                i += 1;
            }
            b')' => {
                depth = depth.saturating_sub(1);
                p.text.push(')');
                i += 1;
            }
            b'*' => {
                in_movetext = true;
                terminated |= depth == 0;
                p.text.push('*');
                i += 1;
            }
            c if is_token_end(c) => {
                p.text.push(char::from(c));
                i += 1;
            }
            b'<' if html_break_len(&bytes[i..]) > 0 => {
                // Games pasted from a web page keep their `<br />` line breaks.
                p.added_newlines.push(p.text.len());
                p.text.push('\n');
                line_start = true;
                i += html_break_len(&bytes[i..]);
            }
            _ => {
                let end = (i..bytes.len())
                    .find(|&k| is_token_end(bytes[k]) || html_break_len(&bytes[k..]) > 0)
                    .unwrap_or(bytes.len());
                let token = &input[i..end];
                in_movetext = true;
                let (mended, extra) = mend_token(token, &input[end..]);
                let is_move = match &mended {
                    Mended::Keep => parses(token),
                    Mended::Replace(with) => parses(with.trim()),
                    Mended::Unreadable => true,
                };
                moves_seen |= depth == 0 && is_move;
                match mended {
                    Mended::Keep => p.text.push_str(token),
                    Mended::Replace(with) => p.text.push_str(&with),
                    Mended::Unreadable if depth == 0 => {
                        p.text.push_str("--");
                        p.unreadable.insert(p.text.len(), token.to_string());
                    }
                    Mended::Unreadable => p.text.push_str(token),
                }
                let dashed: String = token
                    .chars()
                    .map(|c| if DASHES.contains(&c) { '-' } else { c })
                    .collect();
                terminated |= depth == 0 && is_result(&dashed);
                i = end + extra;
            }
        }
    }
    p
}

/// Whether the text after a blank line goes on with the moves before it: its next token,
/// past whitespace and `%` lines, is a move number other than 1 (or 1 when only comments came
/// so far, as Crafty writes), or a lone result. Anything else (tags, a new `1.`, a comment)
/// starts a game of its own, as pgn-reader has it.
fn moves_continue(bytes: &[u8], mut i: usize, moves_seen: bool) -> bool {
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let at_line_start = i == 0 || bytes[i - 1] == b'\n';
        if at_line_start && bytes.get(i) == Some(&b'%') {
            i = memchr_from(bytes, i, b'\n').unwrap_or(bytes.len());
            continue;
        }
        break;
    }
    let rest = &bytes[i.min(bytes.len())..];
    let token_len = rest
        .iter()
        .position(|&b| b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    let token = String::from_utf8_lossy(&rest[..token_len]);
    if token == "*" || is_result(&token) {
        return true;
    }
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let number = std::str::from_utf8(&rest[..digits])
        .ok()
        .and_then(|n| n.parse::<u32>().ok());
    number.is_some_and(|n| n > 1 || !moves_seen) && rest.get(digits) == Some(&b'.')
}

/// The length of an HTML line break (`<br>`, `<br/>`, `<br />`) at the start of `bytes`, or 0.
fn html_break_len(bytes: &[u8]) -> usize {
    let Some(rest) = bytes
        .strip_prefix(b"<br")
        .or_else(|| bytes.strip_prefix(b"<BR"))
    else {
        return 0;
    };
    let spaces = rest.iter().take_while(|&&b| b == b' ').count();
    match &rest[spaces..] {
        [b'/', b'>', ..] => 3 + spaces + 2,
        [b'>', ..] => 3 + spaces + 1,
        _ => 0,
    }
}

fn memchr_from(bytes: &[u8], from: usize, needle: u8) -> Option<usize> {
    bytes[from.min(bytes.len())..]
        .iter()
        .position(|&b| b == needle)
        .map(|k| from + k)
}

/// The end of a tag pair starting at `[`: after its `]`, or at the end of the line. A `]` inside
/// the quoted value does not count.
fn tag_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    let mut in_string = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => return i,
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b']' if !in_string => return i + 1,
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// Reads a clock command's value: `h:mm:ss` as the supplement has it, also with more hour digits
/// (`01:59:56`) and a fraction (`0:00:09.5`), and `m:ss`/`mm:ss` without hours as pgn4web
/// writes. Anything else (`1.55:05`, `0:15.16` — minutes and seconds with a dot, where a
/// fraction would be misread) is `None`.
pub(crate) fn parse_clock(value: &str) -> Option<ClockTime> {
    let fields: Vec<&str> = value.split(':').collect();
    let two_digits = |s: &str| s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit());
    let ok = match fields.as_slice() {
        [h, m, s] => {
            let secs = s.split('.').next().unwrap_or(s);
            !h.is_empty() && h.len() <= 3 && two_digits(m) && two_digits(secs)
        }
        [m, s] => !m.is_empty() && m.len() <= 2 && two_digits(s),
        _ => false,
    };
    if ok { value.parse().ok() } else { None }
}

/// A comment split into its clock commands and the rest.
#[derive(Debug, Default, PartialEq, Eq)]
struct CommentParts {
    clk: Option<ClockTime>,
    emt: Option<ClockTime>,
    /// Everything else, whitespace runs collapsed to one space.
    text: String,
}

fn split_comment(raw: &str) -> CommentParts {
    let mut parts = CommentParts::default();
    let mut text = String::new();
    let mut rest = raw;
    while let Some(open) = rest.find("[%") {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else {
            break;
        };
        let body = &rest[open + 2..close];
        let name_len = body
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(body.len());
        let (name, args) = body.split_at(name_len);
        // Commands may be wrapped across lines like any comment text.
        let value: String = args.split_whitespace().collect::<Vec<_>>().join(" ");
        text.push_str(&rest[..open]);
        match name {
            // A malformed clock value is dropped: the game must load, and a wrong clock is worse
            // than none.
            "clk" => parts.clk = parse_clock(&value).or(parts.clk),
            "emt" => parts.emt = parse_clock(&value).or(parts.emt),
            _ => {
                text.push(' ');
                text.push_str(&rest[open..=close]);
                text.push(' ');
            }
        }
        rest = &rest[close + 1..];
    }
    text.push_str(rest);
    parts.text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    parts
}

/// Tags as read, before the movetext decides the start position.
#[derive(Debug, Default)]
struct TagsRead {
    tags: Tags,
}

impl TagsRead {
    fn player(&self, name: &str) -> Option<String> {
        self.tags.get(name).map(str::to_string)
    }
}

/// A game being built while its movetext is read.
#[derive(Debug)]
struct Building {
    game: Game,
    pos: Chess,
    outcome: Option<Outcome>,
    /// A comment longer than the reader's buffer arrives in pieces.
    partial: Vec<u8>,
    /// Tag result, used when the movetext has no termination marker.
    tag_result: Option<GameResult>,
    had_tags: bool,
    had_comment: bool,
}

impl Building {
    fn add_comment(&mut self, raw: &[u8]) {
        let mut bytes = std::mem::take(&mut self.partial);
        bytes.extend_from_slice(raw);
        let parts = split_comment(&String::from_utf8_lossy(&bytes));
        self.had_comment = true;
        // Commands and text refer to the move before them (supplement §4.1); before the first
        // move, the text introduces the game and clocks have no move to belong to.
        let text_slot = match self.game.moves.last_mut() {
            Some(m) => {
                if parts.clk.is_some() {
                    m.clk = parts.clk;
                }
                if parts.emt.is_some() {
                    m.emt = parts.emt;
                }
                &mut m.comment
            }
            None => &mut self.game.intro,
        };
        if !parts.text.is_empty() {
            match text_slot {
                Some(t) => {
                    t.push(' ');
                    t.push_str(&parts.text);
                }
                None => *text_slot = Some(parts.text),
            }
        }
    }
}

#[derive(Debug)]
struct Imported {
    game: Game,
    /// Nothing at all was read: no tag, move, comment or result.
    empty: bool,
}

#[derive(Debug)]
struct Failure {
    white: Option<String>,
    black: Option<String>,
    kind: ImportErrorKind,
    /// The tag whose line the error should point at, when a tag is to blame.
    tag_at_fault: Option<&'static str>,
}

#[derive(Debug)]
struct Importer;

/// How a `Variant` tag value is played.
enum VariantKind {
    Standard,
    Chess960,
    Unsupported,
}

fn variant_kind(value: &str) -> VariantKind {
    let v: String = value
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect();
    if v.contains("960") || v.contains("fischer") || v == "frc" {
        return VariantKind::Chess960;
    }
    // Variants with other rules would be played wrongly as chess. Unknown names ("starwars",
    // "normal", "From Position") are taken as standard chess, as other readers do.
    const OTHER_RULES: [&str; 16] = [
        "antichess",
        "suicide",
        "giveaway",
        "losers",
        "atomic",
        "crazyhouse",
        "bughouse",
        "horde",
        "kingofthehill",
        "koth",
        "racingkings",
        "threecheck",
        "3check",
        "fivecheck",
        "duck",
        "placement",
    ];
    if OTHER_RULES.iter().any(|o| v.contains(o)) {
        VariantKind::Unsupported
    } else {
        VariantKind::Standard
    }
}

/// A position despite castling rights or an en passant square that fit no position.
fn relaxed(e: PositionError<Chess>) -> Result<Chess, String> {
    match e.ignore_invalid_castling_rights() {
        Ok(pos) => Ok(pos),
        Err(e) => e.ignore_invalid_ep_square().map_err(|e| e.to_string()),
    }
}

/// The start position from a FEN tag. Castling rights that only make sense in Chess960 (a
/// Shredder-FEN `HAha`, rooks not in the corners) switch to Chess960; castling rights or an en
/// passant square that fit no position are dropped, as lenient readers do.
fn setup_position(fen: &str, chess960: bool) -> Result<(Chess, CastlingMode), String> {
    let parsed = Fen::from_ascii(fen.as_bytes()).map_err(|e| e.to_string())?;
    if chess960 {
        return parsed
            .into_position(CastlingMode::Chess960)
            .or_else(relaxed)
            .map(|p| (p, CastlingMode::Chess960));
    }
    match parsed
        .clone()
        .into_position::<Chess>(CastlingMode::Standard)
    {
        Ok(p) => Ok((p, CastlingMode::Standard)),
        Err(e)
            if e.kinds()
                .contains(PositionErrorKinds::INVALID_CASTLING_RIGHTS) =>
        {
            match parsed.into_position::<Chess>(CastlingMode::Chess960) {
                Ok(p) => Ok((p, CastlingMode::Chess960)),
                Err(_) => relaxed(e).map(|p| (p, CastlingMode::Standard)),
            }
        }
        Err(e) => relaxed(e).map(|p| (p, CastlingMode::Standard)),
    }
}

/// The legal move a SAN token means. Besides SAN proper: long algebraic without the capture
/// sign (`Be2c4`), and UCI (`g1f3`, which the SAN grammar reads as a pawn move from g1).
fn find_move(pos: &Chess, san: San) -> Result<Move, &'static str> {
    if san == San::Null {
        return Err("null moves are not supported");
    }
    let err = match san.to_move(pos) {
        Ok(m) => return Ok(m),
        Err(e) => e,
    };
    if let San::Normal {
        role,
        file,
        rank,
        capture,
        to,
        promotion,
    } = san
    {
        if !capture {
            let with_x = San::Normal {
                role,
                file,
                rank,
                capture: true,
                to,
                promotion,
            };
            if let Ok(m) = with_x.to_move(pos) {
                return Ok(m);
            }
        }
        if let (Role::Pawn, Some(file), Some(rank)) = (role, file, rank) {
            let uci = UciMove::Normal {
                from: Square::from_coords(file, rank),
                to,
                promotion,
            };
            if let Ok(m) = uci.to_move(pos) {
                return Ok(m);
            }
        }
    }
    Err(match err {
        SanError::IllegalSan => "illegal move",
        SanError::AmbiguousSan => "ambiguous move",
    })
}

impl Visitor for Importer {
    type Tags = TagsRead;
    type Movetext = Building;
    type Output = Result<Imported, Box<Failure>>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(TagsRead::default())
    }

    fn tag(
        &mut self,
        tags: &mut TagsRead,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        // `[Annotator  "x"]` leaves a space on the name.
        let name = String::from_utf8_lossy(name).trim().to_string();
        if !name.is_empty() {
            tags.tags.set(&name, value.decode_utf8_lossy().into_owned());
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, read: TagsRead) -> ControlFlow<Self::Output, Self::Movetext> {
        let fail = |kind, tag| {
            ControlFlow::Break(Err(Box::new(Failure {
                white: read.player("White"),
                black: read.player("Black"),
                kind,
                tag_at_fault: Some(tag),
            })))
        };
        let chess960 = match read.tags.get("Variant").map(variant_kind) {
            Some(VariantKind::Unsupported) => {
                let v = read
                    .tags
                    .get("Variant")
                    .unwrap_or_default()
                    .trim()
                    .to_string();
                return fail(ImportErrorKind::UnsupportedVariant(v), "Variant");
            }
            Some(VariantKind::Chess960) => true,
            _ => false,
        };
        let fen = read
            .tags
            .get("FEN")
            .map(str::trim)
            .filter(|f| !f.is_empty());
        let (start, castling_mode) = match fen {
            Some(fen) => match setup_position(fen, chess960) {
                Ok(found) => found,
                Err(reason) => {
                    return fail(
                        ImportErrorKind::BadFen {
                            fen: fen.to_string(),
                            reason,
                        },
                        "FEN",
                    );
                }
            },
            None if chess960 => (Chess::default(), CastlingMode::Chess960),
            // `[SetUp "1"]` without a FEN: lichess writes it for games from the usual start.
            None => (Chess::default(), CastlingMode::Standard),
        };
        let had_tags = !read.tags.0.is_empty();
        let mut tags = read.tags;
        // The start position lives in `Game::start`; the writer derives these tags from it.
        tags.remove("FEN");
        tags.remove("SetUp");
        let tag_result = tags.get("Result").and_then(|r| r.parse().ok());
        ControlFlow::Continue(Building {
            game: Game {
                tags,
                start: start.clone(),
                castling_mode,
                moves: Vec::new(),
                result: GameResult::Ongoing,
                intro: None,
            },
            pos: start,
            outcome: None,
            partial: Vec::new(),
            tag_result,
            had_tags,
            had_comment: false,
        })
    }

    fn san(&mut self, b: &mut Building, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        match find_move(&b.pos, san_plus.san) {
            Ok(mv) => {
                // SAN is recomputed so that check marks and disambiguation are the standard's
                // whatever the file wrote (`Ng1f3`, a missing `+`).
                let san = SanPlus::from_move_and_play_unchecked(&mut b.pos, mv);
                b.game.moves.push(RecordedMove {
                    mv,
                    san,
                    clk: None,
                    emt: None,
                    comment: None,
                });
                ControlFlow::Continue(())
            }
            Err(reason) => ControlFlow::Break(Err(Box::new(Failure {
                white: b.game.tags.get("White").map(str::to_string),
                black: b.game.tags.get("Black").map(str::to_string),
                kind: ImportErrorKind::IllegalMove {
                    ply: b.game.moves.len() + 1,
                    move_number: b.pos.fullmoves().get(),
                    white: b.pos.turn() == Color::White,
                    san: san_plus.to_string(),
                    reason,
                },
                tag_at_fault: None,
            }))),
        }
    }

    fn partial_comment(
        &mut self,
        b: &mut Building,
        comment: RawComment<'_>,
    ) -> ControlFlow<Self::Output> {
        b.partial.extend_from_slice(comment.as_bytes());
        ControlFlow::Continue(())
    }

    fn comment(&mut self, b: &mut Building, comment: RawComment<'_>) -> ControlFlow<Self::Output> {
        b.add_comment(comment.as_bytes());
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, b: &mut Building, outcome: Outcome) -> ControlFlow<Self::Output> {
        b.outcome = Some(outcome);
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, mut b: Building) -> Self::Output {
        // The termination marker decides; `*` or none defers to a known Result tag (a game
        // that ends "18. Qa8" with [Result "0-1"] was resigned).
        let marker = match b.outcome {
            Some(Outcome::Known(KnownOutcome::Decisive {
                winner: Color::White,
            })) => GameResult::WhiteWins,
            Some(Outcome::Known(KnownOutcome::Decisive {
                winner: Color::Black,
            })) => GameResult::BlackWins,
            Some(Outcome::Known(KnownOutcome::Draw)) => GameResult::Draw,
            Some(Outcome::Unknown) | None => GameResult::Ongoing,
        };
        b.game.result = match marker {
            GameResult::Ongoing => b.tag_result.unwrap_or(GameResult::Ongoing),
            known => known,
        };
        if b.game.tags.get("Result").is_some() {
            b.game.tags.set("Result", b.game.result.to_string());
        }
        let empty = !b.had_tags && !b.had_comment && b.game.moves.is_empty() && b.outcome.is_none();
        Ok(Imported {
            game: b.game,
            empty,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: (Option<&str>, Option<&str>, &str)) {
        let parts = split_comment(input);
        let shown = |t: Option<ClockTime>| t.map(|t| t.to_string());
        assert_eq!(
            (
                shown(parts.clk).as_deref(),
                shown(parts.emt).as_deref(),
                parts.text.as_str()
            ),
            expected,
            "{input:?}"
        );
    }

    #[test]
    fn clock_commands_in_comments() {
        check("[%clk 1:59:56]", (Some("1:59:56"), None, ""));
        check("[%clk 01:59:56]", (Some("1:59:56"), None, ""));
        check("[%clk 0:00:09.5]", (Some("0:00:09.5"), None, ""));
        check(" [%clk\n00:15:27] ", (Some("0:15:27"), None, ""));
        check(
            "[%clk 1:59:56] [%emt 0:00:12]",
            (Some("1:59:56"), Some("0:00:12"), ""),
        );
        check(
            "[%eval 0.17] [%clk 1:30:49]",
            (Some("1:30:49"), None, "[%eval 0.17]"),
        );
        check(
            "[%ts 1754850615931][%clk 01:14:46][%emt 00:15:43][%egt 00:15:43]",
            (
                Some("1:14:46"),
                Some("0:15:43"),
                "[%ts 1754850615931] [%egt 00:15:43]",
            ),
        );
        check(
            "Timman hesitates [%clk 1:59:32] slightly",
            (Some("1:59:32"), None, "Timman hesitates slightly"),
        );
        check("[%clk 59:01]", (Some("0:59:01"), None, ""));
        // Malformed values are dropped, the rest of the comment stays.
        check("[%clk 1.55:05] ok", (None, None, "ok"));
        check("[%clk 0:15.16]", (None, None, ""));
        check("[%clk ]", (None, None, ""));
        check("[%clk 1:61:00]", (None, None, ""));
        check(
            "an [%unclosed command",
            (None, None, "an [%unclosed command"),
        );
        check("  plain\n text ", (None, None, "plain text"));
    }

    #[test]
    fn variants() {
        assert!(matches!(
            variant_kind("Fischerandom"),
            VariantKind::Chess960
        ));
        assert!(matches!(variant_kind("Chess 960"), VariantKind::Chess960));
        assert!(matches!(
            variant_kind(" Standard    "),
            VariantKind::Standard
        ));
        assert!(matches!(variant_kind("starwars"), VariantKind::Standard));
        assert!(matches!(
            variant_kind("Antichess"),
            VariantKind::Unsupported
        ));
        assert!(matches!(
            variant_kind("King of the Hill"),
            VariantKind::Unsupported
        ));
    }

    fn prepared(input: &str) -> String {
        prepare(input).text
    }

    #[test]
    fn prepare_mends_moves_and_keeps_lines() {
        let check =
            |input: &str, expected: &str| assert_eq!(prepared(input), expected, "{input:?}");
        check("8. O‑O Ba6 9. 0–0–0 o-o 1–0", "8. O-O Ba6 9. O-O-O O-O 1-0");
        check(
            "[Site \"a8Q – e.p.\"]\n{a – b}",
            "[Site \"a8Q – e.p.\"]\n{a – b}",
        );
        check("56. a8Q Kxc3 57. exd8q+", "56. a8=Q Kxc3 57. exd8=Q+");
        check(
            "18. bxa6e.p. Nc5 19. bxa6 e.p. 3.exf6ep *",
            "18. bxa6     Nc5 19. bxa6      3.exf6   *",
        );
        check("1. e2-e4 Ng8-f6", "1. e2e4 Ng8f6");
        check("70. Rh7++ 1-0", "70. Rh7+  1-0");
        check(
            "\u{feff}[White \"Nf9\"]\n\u{feff}[Black \"a8Q\"]",
            "[White \"Nf9\"]\n[Black \"a8Q\"]",
        );
        check(
            "[A \"b\"]<br /><br />1. d4 d5<br>2. c4",
            "[A \"b\"]\n\n1. d4 d5\n2. c4",
        );
        check(
            "1. e4 Nf9 (1... Nf9) 2. Resigns",
            "1. e4 -- (1... Nf9) 2. Resigns",
        );
        // A blank line inside unfinished moves is kept from ending the game; after a result
        // or before tags it ends the game as usual.
        check(
            "1. e4 e5\n\n% note\n2. d4 *\n\n[A \"b\"]",
            "1. e4 e5\n \n% note\n2. d4 *\n\n[A \"b\"]",
        );
        check("1. e4 e5\n\n1. d4 *", "1. e4 e5\n\n1. d4 *");
        check(
            "{intro}\n\n1. e4 e5\n\n  1-0",
            "{intro}\n \n1. e4 e5\n \n  1-0",
        );
        check("1. e4\n\n[A \"b\"]", "1. e4\n\n[A \"b\"]");
        check("a5*[Event \"x\"]h4", "a5*\n[Event \"x\"]h4");
        let p = prepare("a5*[Event \"x\"]h4 Nf9");
        assert_eq!(
            p.line_at(p.text.len()),
            1,
            "an added newline does not count"
        );
        assert_eq!(
            p.unreadable.get(&p.text.len()).map(String::as_str),
            Some("Nf9")
        );
    }

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
