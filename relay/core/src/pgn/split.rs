//! Cutting a PGN stream into games without reading it whole, so a file of any size is
//! converted one game at a time (in memory: one game and one line).
//!
//! A game ends where the next one's tags begin: a line starting with `[` after the current
//! game has had movetext, outside a `{…}` comment (which may span lines and hold `[`). A
//! `;` comment runs to the end of its line; a line starting with `%` is an escape line.
//! Each piece is then read by [`super::read_games`], which knows the rest of the grammar.

use crate::pgn::charset::decode_pgn_bytes;
use std::io::BufRead;

/// One game's text and where it starts in the stream (bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub offset: u64,
    pub text: String,
}

/// The games of a PGN stream, in order (see the module's documentation).
#[derive(Debug)]
pub struct GamePieces<R> {
    input: R,
    /// Bytes read so far.
    at: u64,
    current: String,
    current_at: u64,
    in_comment: bool,
    has_moves: bool,
    done: bool,
}

impl<R: BufRead> GamePieces<R> {
    pub fn new(input: R) -> GamePieces<R> {
        GamePieces {
            input,
            at: 0,
            current: String::new(),
            current_at: 0,
            in_comment: false,
            has_moves: false,
            done: false,
        }
    }

    /// Follows comments through `line` and notes whether it holds movetext.
    fn scan(&mut self, line: &str) {
        if !self.in_comment && line.starts_with('%') {
            return;
        }
        let mut rest = line;
        if !self.in_comment
            && let Some(tag) = line.trim_start().strip_prefix('[')
        {
            // A tag line; what follows its `]` (moves on the same line) is movetext.
            rest = tag.find(']').map_or("", |i| &tag[i + 1..]);
        }
        for c in rest.chars() {
            if self.in_comment {
                if c == '}' {
                    self.in_comment = false;
                }
                continue;
            }
            match c {
                '{' => self.in_comment = true,
                ';' => break,
                c if c.is_whitespace() => {}
                _ => self.has_moves = true,
            }
        }
    }
}

impl<R: BufRead> Iterator for GamePieces<R> {
    type Item = std::io::Result<Piece>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut raw = Vec::new();
        loop {
            raw.clear();
            let n = match self.input.read_until(b'\n', &mut raw) {
                Ok(n) => n,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            if n == 0 {
                self.done = true;
                let text = std::mem::take(&mut self.current);
                return (!text.trim().is_empty()).then_some(Ok(Piece {
                    offset: self.current_at,
                    text,
                }));
            }
            let line_at = self.at;
            self.at += n as u64;
            let mut line = decode_pgn_bytes(&raw).into_owned();
            if line.starts_with('\u{feff}') {
                // A byte order mark before the first tag (of this file, or of one of the
                // files joined into this one).
                line.remove(0);
            }
            let starts_game =
                !self.in_comment && self.has_moves && line.trim_start().starts_with('[');
            let mut out = None;
            if starts_game {
                let text = std::mem::take(&mut self.current);
                out = Some(Piece {
                    offset: self.current_at,
                    text,
                });
                self.has_moves = false;
            }
            if self.current.is_empty() {
                self.current_at = line_at;
            }
            self.scan(&line);
            self.current.push_str(&line);
            if let Some(p) = out {
                return Some(Ok(p));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<(u64, String)> {
        GamePieces::new(text.as_bytes())
            .map(|p| p.expect("read"))
            .map(|p| (p.offset, p.text))
            .collect()
    }

    #[test]
    fn games_are_cut_where_the_next_tags_begin() {
        let text = "[Event \"A\"]\n\n1. e4 e5 *\n\n[Event \"B\"]\n[White \"x\"]\n\n1. d4 { a comment\n[with a bracket] over lines } d5 ; [not a tag\n[Round \"still B? no: new game\"]\n1. c4 *\n";
        let p = pieces(text);
        assert_eq!(p.len(), 3, "{p:?}");
        assert_eq!(p[0].0, 0);
        assert!(p[0].1.ends_with("1. e4 e5 *\n\n"));
        assert_eq!(p[1].0, text.find("[Event \"B\"]").expect("B") as u64);
        assert!(p[1].1.contains("[with a bracket]"));
        assert!(p[2].1.starts_with("[Round"));
        let joined: String = p.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(joined, text, "nothing is lost or repeated");
    }

    #[test]
    fn tags_and_moves_on_one_line_and_games_without_moves() {
        let p = pieces("[Event \"A\"] 1. e4 *\n[Event \"B\"]\n[Event \"C\"]\n\n*\n");
        // B has no movetext: its tags run on into C's (the reader sees what it makes of it).
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].1.starts_with("[Event \"A\"] 1. e4"));
    }
}
