//! The pass over the text before pgn-reader (see the notes of [`super`]): it follows
//! pgn-reader's view of the text (comments, `;` and `%` lines, tag pairs, variations, where a
//! game ends) and mends what real files get wrong in ways pgn-reader would silently mis-read,
//! keeping the original's lines countable so that an error can name its line.

use super::mend::{Mended, is_result, mend_token, parses, undashed};
use std::collections::HashMap;

/// The text handed to pgn-reader, and how to map it back to the original's lines.
#[derive(Debug, Default)]
pub(super) struct Prepared {
    pub(super) text: String,
    /// Offsets (in `text`) of newlines that were not in the original.
    added_newlines: Vec<usize>,
    /// Tokens that look like moves but are none, replaced by `--` (which pgn-reader reports as a
    /// null move), by the offset just after the `--`.
    pub(super) unreadable: HashMap<usize, String>,
}

impl Prepared {
    /// 1-based line in the original text of an offset in the prepared one.
    pub(super) fn line_at(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        let newlines = self.text.as_bytes()[..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        let added = self.added_newlines.iter().filter(|&&a| a < offset).count();
        1 + newlines - added
    }

    /// The line of the tag `[name ...]` between two offsets, or of the end.
    pub(super) fn find_tag_line(&self, start: usize, end: usize, name: &str) -> usize {
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

/// Where the pass is in the current game, as pgn-reader sees it.
#[derive(Debug, Default)]
struct GameState {
    /// How deep in variations.
    depth: usize,
    /// Past the tags: a move, comment, variation or result was seen.
    in_movetext: bool,
    /// A result or `*` ended the main line.
    terminated: bool,
    /// A move was read at the top level.
    moves_seen: bool,
}

/// The pass before pgn-reader (see the module comment). It follows pgn-reader's view of the text:
/// comments, `;` and `%` lines, tag pairs, variations, and games ending at a blank line or at a
/// line starting with `[`. Only spaces and newlines are added and moves rewritten, so lines of
/// the original stay countable.
pub(super) fn prepare(input: &str) -> Prepared {
    let bytes = input.as_bytes();
    let mut p = Prepared {
        text: String::with_capacity(input.len() + 64),
        ..Prepared::default()
    };
    let mut i = 0;
    let mut game = GameState::default();
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
                game.in_movetext = true;
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
                i += 1;
                line_start = newline(&mut p, bytes, i, &mut game);
            }
            b'[' if was_line_start || !game.in_movetext || game.terminated => {
                if game.in_movetext && !was_line_start {
                    // `... a5*[Event "next"]`: the next game's tags on the line of this game's
                    // result. pgn-reader needs them on a line of their own.
                    p.added_newlines.push(p.text.len());
                    p.text.push('\n');
                }
                if game.in_movetext {
                    game = GameState::default();
                }
                let end = tag_end(bytes, i);
                match escape_inner_quotes(&input[i..end]) {
                    Some(mended) => p.text.push_str(&mended),
                    None => copy(&mut p, i, end),
                }
                i = end;
            }
            b'(' => {
                game.depth += 1;
                game.in_movetext = true;
                p.text.push('(');
                i += 1;
            }
            b')' => {
                game.depth = game.depth.saturating_sub(1);
                p.text.push(')');
                i += 1;
            }
            b'*' => {
                game.in_movetext = true;
                game.terminated |= game.depth == 0;
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
            _ => i = push_token(&mut p, input, i, &mut game),
        }
    }
    p
}

/// A newline, the text after it starting at `i`. A blank line ends the game for pgn-reader,
/// unless it falls inside the moves of an unfinished game; then a space keeps it from being
/// blank. Returns whether the next byte starts a line.
fn newline(p: &mut Prepared, bytes: &[u8], i: usize, game: &mut GameState) -> bool {
    p.text.push('\n');
    let blank_follows = bytes[i..].starts_with(b"\n") || bytes[i..].starts_with(b"\r\n");
    if blank_follows {
        if game.in_movetext && !game.terminated && moves_continue(bytes, i, game.moves_seen) {
            // A blank line inside the moves of an unfinished game (Crafty, hand-edited files):
            // a space makes it not blank for pgn-reader.
            p.text.push(' ');
            return false;
        }
        // pgn-reader ends the game here.
        *game = GameState::default();
    }
    true
}

/// The token starting at `i`, mended, into the prepared text; returns where the pass goes on.
/// At the top level a token meant as a move that reads as none becomes `--`, remembered in
/// [`Prepared::unreadable`] so the error names what the file wrote.
fn push_token(p: &mut Prepared, input: &str, i: usize, game: &mut GameState) -> usize {
    let bytes = input.as_bytes();
    let end = (i..bytes.len())
        .find(|&k| is_token_end(bytes[k]) || html_break_len(&bytes[k..]) > 0)
        .unwrap_or(bytes.len());
    let token = &input[i..end];
    game.in_movetext = true;
    let top = game.depth == 0;
    let (mended, extra) = mend_token(token, &input[end..]);
    let is_move = match &mended {
        Mended::Keep => parses(token),
        Mended::Replace(with) => parses(with.trim()),
        Mended::Unreadable => true,
    };
    game.moves_seen |= top && is_move;
    match mended {
        Mended::Keep => p.text.push_str(token),
        Mended::Replace(with) => p.text.push_str(&with),
        Mended::Unreadable if top => {
            p.text.push_str("--");
            p.unreadable.insert(p.text.len(), token.to_string());
        }
        Mended::Unreadable => p.text.push_str(token),
    }
    game.terminated |= top && is_result(&undashed(token));
    end + extra
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
/// A tag pair whose value holds quotes nobody escaped, as DGT LiveChess writes an event's
/// nickname: `[Event "CZECH OPEN 2019 "PARDUBICKY KRAJ OPEN" - G1 -"]`. The value runs to
/// the quote that closes the tag on its line (the last `"` before the closing `]`), as
/// python-chess and pgn-extract read it; pgn-reader would end it at the second quote and
/// take the rest of the line for another game. The tag with those quotes escaped, `None`
/// when there is nothing to mend.
fn escape_inner_quotes(tag: &str) -> Option<String> {
    let open = tag.find('"')?;
    let t = tag.trim_end_matches([' ', '\t', '\r']);
    let before = t.strip_suffix(']')?.trim_end_matches([' ', '\t']);
    let close = before.strip_suffix('"')?.len();
    if close <= open {
        return None;
    }
    let value = &tag[open + 1..close];
    let mut mended = String::with_capacity(tag.len() + 4);
    let (mut escaped, mut changed) = (false, false);
    for c in value.chars() {
        if c == '"' && !escaped {
            mended.push('\\');
            changed = true;
        }
        escaped = c == '\\' && !escaped;
        mended.push(c);
    }
    changed.then(|| format!("{}{mended}{}", &tag[..=open], &tag[close..]))
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
        // Quotes inside a tag's value that nobody escaped, an even or an odd number of them,
        // with tags on the same line or spaces before the `]`; escaped ones stay as they are.
        check(
            "[Event \"OPEN \"PARDUBICE\" - G1 -\"]\n[Round \"1\"]",
            "[Event \"OPEN \\\"PARDUBICE\\\" - G1 -\"]\n[Round \"1\"]",
        );
        check("[White \"A \"B\" ]", "[White \"A \\\"B\" ]");
        check("[A \"x \\\"y\\\"\"]", "[A \"x \\\"y\\\"\"]");
        check("[A \"x\"] [B \"y\"]", "[A \"x\"] [B \"y\"]");
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
}
