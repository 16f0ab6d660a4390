//! PGC, the binary companion of PGN (PGN standard §20): a file is a run of records, each a
//! marker byte and its items; little-endian integers, Latin-1 strings with a length header, and
//! moves as *ordinals*: a move's index among the legal moves of its position once their SAN
//! strings are sorted in ascending (byte) order.
//!
//! What the relay writes: a game that has only the Seven Tag Roster (and the standard start)
//! is one "reduced export format single game" record (0x01); any other game is a general game
//! (0x05 … 0x06) holding a tag pair record (0x02) for every tag the PGN writer would write
//! (so `SetUp`/`FEN`/`Variant` carry a set-up or Chess960 start) and one move sequence
//! (0x03 up to 255 moves, 0x04 beyond). §20 has no record for comments, so comments and
//! clocks (`[%clk]`, `[%emt]`) are lost; tag values are Latin-1, so a character above U+00FF
//! becomes `?`; a tag name or value longer than 255 bytes (string-1) is refused.
//!
//! What the relay reads: all of §20: noop (0x00), both game forms, several move sequences in
//! one game (played one after another), NAGs (0x07, dropped), variations (0x08 … 0x09, nested,
//! skipped: the relay keeps the main line, as its PGN reader does) and escape strings (0x0a,
//! dropped). The input is read a record at a time from any reader, so a file of any size
//! reads in the memory of one game.
//!
//! Sorting SAN strings: the check and mate suffixes (`+`, `#`) never change the order (no
//! move's SAN without suffix is a prefix of another's, except `O-O` of `O-O-O`, and `+`/`#`
//! sort before `-`), so the key is the SAN without suffix, built from the legal move list
//! itself rather than by playing every move (a unit test checks it against shakmaty's SAN).
//!
//! A game with clocks through PGC and back: the tags, moves and result return, the clocks
//! do not.
//!
//! ```
//! use relay_core::{pgc, pgn};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let text = r#"[Event "Rapid"]
//! [Site "Hall"]
//! [Date "2026.11.27"]
//! [Round "1"]
//! [White "White"]
//! [Black "Black"]
//! [Result "0-1"]
//! [TimeControl "600+5"]
//!
//! 1. f3 {[%clk 0:10:03]} e5 {[%clk 0:10:04]} 2. g4 {[%clk 0:10:06]} Qh4# {[%clk 0:10:08]} 0-1
//! "#;
//! let game = pgn::read_game(text)?;
//! assert_eq!(game.moves[0].clk.map(|c| c.to_string()), Some("0:10:03".to_string()));
//!
//! let bytes = pgc::encode_game(&game)?;
//! // A tag beyond the Seven Tag Roster: a general game (0x05 … 0x06), every tag a tag pair
//! // record (0x02), then one move sequence (0x03) of four ordinals. 1. f3 is 14: the 20
//! // legal moves sorted by SAN are Na3 Nc3 Nf3 Nh3 a3 a4 b3 b4 c3 c4 d3 d4 e3 e4 f3 …
//! assert_eq!(bytes[0], 0x05);
//! assert_eq!(bytes[bytes.len() - 7..], [0x03, 4, 14, 12, 16, 14, 0x06]);
//!
//! let back = pgc::games(&bytes[..]).collect::<Result<Vec<_>, _>>()?;
//! assert_eq!(back.len(), 1);
//! let game_back = &back[0];
//! let sans: Vec<String> = game_back.moves.iter().map(|m| m.san.to_string()).collect();
//! assert_eq!(sans, ["f3", "e5", "g4", "Qh4#"]);
//! assert_eq!(game_back.result, game.result);
//! assert_eq!(game_back.tags.get("TimeControl"), Some("600+5"));
//! assert!(game_back.moves.iter().all(|m| m.clk.is_none()));
//! // Without clocks, the PGN written from each is the same.
//! let opts = pgn::WriteOptions { clocks: false, ..pgn::WriteOptions::default() };
//! assert_eq!(pgn::write_game(game_back, &opts), pgn::write_game(&game, &opts));
//! # Ok(())
//! # }
//! ```

use crate::game::{Game, GameResult, RecordedMove};
use shakmaty::san::SanPlus;
use shakmaty::{CastlingSide, Chess, Move, Position, Role};
use std::io::BufRead;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PgcError(pub String);

/// A move's SAN without check suffix, packed big-endian into a u64 (at most 6 bytes, zero
/// padded, so comparing the numbers compares the strings).
fn san_key(m: &Move, legal: &[Move]) -> u64 {
    let mut bytes = [0u8; 8];
    let mut n = 0;
    let mut push = |b: u8| {
        if n < 8 {
            bytes[n] = b;
            n += 1;
        }
    };
    let square = |push: &mut dyn FnMut(u8), sq: shakmaty::Square| {
        push(sq.file().char() as u8);
        push(sq.rank().char() as u8);
    };
    match *m {
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_queen_side(rook < king);
            for &b in match side {
                CastlingSide::KingSide => b"O-O".as_slice(),
                CastlingSide::QueenSide => b"O-O-O".as_slice(),
            } {
                push(b);
            }
        }
        Move::Put { .. } => {}
        _ => {
            let (role, from, to) = (m.role(), m.from(), m.to());
            let Some(from) = from else {
                return 0;
            };
            if role == Role::Pawn {
                if from.file() != to.file() {
                    push(from.file().char() as u8);
                    push(b'x');
                }
                square(&mut push, to);
                if let Some(p) = m.promotion() {
                    push(b'=');
                    push(p.upper_char() as u8);
                }
            } else {
                push(role.upper_char() as u8);
                let rivals = legal.iter().filter(|o| {
                    o.role() == role && o.to() == to && o.from() != Some(from) && !o.is_castle()
                });
                let (mut any, mut same_file, mut same_rank) = (false, false, false);
                for o in rivals {
                    any = true;
                    if let Some(f) = o.from() {
                        same_file |= f.file() == from.file();
                        same_rank |= f.rank() == from.rank();
                    }
                }
                if any {
                    if !same_file {
                        push(from.file().char() as u8);
                    } else if !same_rank {
                        push(from.rank().char() as u8);
                    } else {
                        push(from.file().char() as u8);
                        push(from.rank().char() as u8);
                    }
                }
                if m.is_capture() {
                    push(b'x');
                }
                square(&mut push, to);
            }
        }
    }
    u64::from_be_bytes(bytes)
}

/// The legal moves of `pos` in ordinal order (§20.2).
pub fn ordinal_moves(pos: &Chess) -> Vec<Move> {
    let legal = pos.legal_moves();
    let mut keyed: Vec<(u64, Move)> = legal.iter().map(|m| (san_key(m, &legal), *m)).collect();
    keyed.sort_unstable_by_key(|(k, _)| *k);
    keyed.into_iter().map(|(_, m)| m).collect()
}

/// Latin-1 bytes of a string: a character above U+00FF becomes `?`.
fn latin1(s: &str) -> Vec<u8> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

fn string1(out: &mut Vec<u8>, s: &str, what: &str) -> Result<(), PgcError> {
    let bytes = latin1(s);
    let len = u8::try_from(bytes.len())
        .map_err(|_| PgcError(format!("{what} is {} bytes; PGC holds 255", bytes.len())))?;
    out.push(len);
    out.extend_from_slice(&bytes);
    Ok(())
}

/// A game's PGC records.
pub fn encode_game(game: &Game) -> Result<Vec<u8>, PgcError> {
    let tags = crate::pgn::export_tags(game, false);
    let mut ordinals = Vec::with_capacity(game.moves.len());
    let mut pos = game.start.clone();
    for (i, m) in game.moves.iter().enumerate() {
        let list = ordinal_moves(&pos);
        let n = list
            .iter()
            .position(|o| *o == m.mv)
            .ok_or_else(|| PgcError(format!("ply {}: {} is not legal here", i + 1, m.san)))?;
        // At most 218 legal moves exist in any position, so the index fits a byte.
        ordinals.push(u8::try_from(n).map_err(|_| PgcError("more than 256 moves".into()))?);
        pos.play_unchecked(m.mv);
    }
    let mut out = Vec::with_capacity(ordinals.len() + 64);
    let moves_len = u16::try_from(ordinals.len())
        .map_err(|_| PgcError(format!("{} moves; PGC holds 65,535", ordinals.len())))?;
    if tags.len() == 7 {
        out.push(0x01);
        for (name, value) in &tags {
            string1(&mut out, value, &format!("the {name} tag"))?;
        }
        out.extend_from_slice(&moves_len.to_le_bytes());
        out.extend_from_slice(&ordinals);
        return Ok(out);
    }
    out.push(0x05);
    for (name, value) in &tags {
        out.push(0x02);
        string1(&mut out, name, "a tag name")?;
        string1(&mut out, value, &format!("the {name} tag"))?;
    }
    if ordinals.len() <= 255 {
        out.push(0x03);
        out.push(ordinals.len() as u8); // checked just above: at most 255
    } else {
        out.push(0x04);
        out.extend_from_slice(&moves_len.to_le_bytes());
    }
    out.extend_from_slice(&ordinals);
    out.push(0x06);
    Ok(out)
}

/// Reads the games of a PGC stream one at a time; an error names the game and the byte
/// offset of its first record, and ends the reading.
pub fn games<R: BufRead>(input: R) -> PgcGames<R> {
    PgcGames {
        input,
        at: 0,
        n: 0,
        failed: false,
    }
}

/// The games of a PGC stream (see [`games`]).
#[derive(Debug)]
pub struct PgcGames<R> {
    input: R,
    /// Bytes read so far.
    at: u64,
    n: usize,
    failed: bool,
}

/// One game's records, gathered before its moves can be played (a tag pair may follow them).
#[derive(Default)]
struct Gathered {
    tags: Vec<(String, String)>,
    /// Main-line move sequences, in order.
    moves: Vec<u8>,
}

impl<R: BufRead> PgcGames<R> {
    fn byte(&mut self) -> Result<Option<u8>, String> {
        let buf = self.input.fill_buf().map_err(|e| e.to_string())?;
        let Some(&b) = buf.first() else {
            return Ok(None);
        };
        self.input.consume(1);
        self.at += 1;
        Ok(Some(b))
    }

    fn need(&mut self) -> Result<u8, String> {
        self.byte()?
            .ok_or_else(|| format!("the file ends inside a record at byte {}", self.at))
    }

    fn bytes(&mut self, n: usize) -> Result<Vec<u8>, String> {
        let mut out = vec![0; n];
        self.input
            .read_exact(&mut out)
            .map_err(|_| format!("the file ends inside a record at byte {}", self.at))?;
        self.at += n as u64;
        Ok(out)
    }

    fn word(&mut self) -> Result<usize, String> {
        let b = self.bytes(2)?;
        Ok(usize::from(u16::from_le_bytes([b[0], b[1]])))
    }

    fn string1(&mut self) -> Result<String, String> {
        let len = usize::from(self.need()?);
        // Latin-1: every byte is the character of the same number.
        Ok(self.bytes(len)?.into_iter().map(char::from).collect())
    }

    fn skip_string2(&mut self) -> Result<(), String> {
        let len = self.word()?;
        self.bytes(len).map(|_| ())
    }

    /// Reads up to the end of the next game; `None` at the end of the file.
    fn gather(&mut self) -> Result<Option<Gathered>, String> {
        loop {
            let Some(marker) = self.byte()? else {
                return Ok(None);
            };
            let at = self.at - 1;
            match marker {
                0x00 => {}
                0x0a => self.skip_string2()?,
                0x01 => {
                    let mut g = Gathered::default();
                    for name in ["Event", "Site", "Date", "Round", "White", "Black", "Result"] {
                        g.tags.push((name.to_string(), self.string1()?));
                    }
                    let len = self.word()?;
                    g.moves = self.bytes(len)?;
                    return Ok(Some(g));
                }
                0x05 => return self.general().map(Some),
                other => {
                    return Err(format!(
                        "byte {at}: record 0x{other:02x} outside a game (a game begins with 0x01 or 0x05)"
                    ));
                }
            }
        }
    }

    /// The records of a general game, after its 0x05, up to its 0x06.
    fn general(&mut self) -> Result<Gathered, String> {
        let mut g = Gathered::default();
        let mut depth = 0usize;
        loop {
            let marker = self.need()?;
            let at = self.at - 1;
            match marker {
                0x00 => {}
                0x02 => {
                    let name = self.string1()?;
                    let value = self.string1()?;
                    g.tags.push((name, value));
                }
                0x03 | 0x04 => {
                    let len = if marker == 0x03 {
                        usize::from(self.need()?)
                    } else {
                        self.word()?
                    };
                    let seq = self.bytes(len)?;
                    if depth == 0 {
                        g.moves.extend_from_slice(&seq);
                    }
                }
                0x07 => {
                    self.need()?;
                }
                0x08 => depth += 1,
                0x09 => {
                    depth = depth
                        .checked_sub(1)
                        .ok_or_else(|| format!("byte {at}: a variation ends that never began"))?;
                }
                0x0a => self.skip_string2()?,
                0x06 if depth == 0 => return Ok(g),
                0x06 => return Err(format!("byte {at}: the game ends inside a variation")),
                other => {
                    return Err(format!(
                        "byte {at}: record 0x{other:02x} is not allowed inside a game"
                    ));
                }
            }
        }
    }

    fn read_one(&mut self) -> Option<Result<Game, PgcError>> {
        let start = self.at;
        let n = self.n + 1;
        let fail = |what: String| PgcError(format!("game {n} (from byte {start}): {what}"));
        let gathered = match self.gather() {
            Ok(Some(g)) => g,
            Ok(None) => return None,
            Err(e) => return Some(Err(fail(e))),
        };
        self.n = n;
        Some(build(gathered).map_err(fail))
    }
}

/// A game from its tags and main-line ordinals.
fn build(g: Gathered) -> Result<Game, String> {
    let mut text = String::new();
    for (name, value) in &g.tags {
        // What a PGN tag name can be as the PGN reader takes it (real files use `?` and `-`).
        if name.is_empty()
            || name
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '[' | ']'))
        {
            return Err(format!("{name:?} is not a tag name"));
        }
        crate::pgn::tag_line(&mut text, name, value);
    }
    text.push_str("\n*\n");
    let mut game = crate::pgn::read_game(&text).map_err(|e| e.to_string())?;
    let result = g
        .tags
        .iter()
        .find(|(name, _)| name == "Result")
        .and_then(|(_, v)| v.parse::<GameResult>().ok())
        .unwrap_or(GameResult::Ongoing);
    let mut pos = game.start.clone();
    for (i, &ordinal) in g.moves.iter().enumerate() {
        let list = ordinal_moves(&pos);
        let mv = *list.get(usize::from(ordinal)).ok_or_else(|| {
            format!(
                "ply {}: move ordinal {ordinal}, but the position has {} moves",
                i + 1,
                list.len()
            )
        })?;
        game.moves.push(RecordedMove {
            mv,
            san: SanPlus::from_move_and_play_unchecked(&mut pos, mv),
            clk: None,
            emt: None,
            comment: None,
        });
    }
    game.result = result;
    Ok(game)
}

impl<R: BufRead> Iterator for PgcGames<R> {
    type Item = Result<Game, PgcError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let r = self.read_one()?;
        self.failed = r.is_err();
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::san::San;

    fn game(pgn: &str) -> Game {
        crate::pgn::read_game(pgn).expect("pgn")
    }

    #[test]
    fn the_standards_ordinal_examples() {
        // §20.2: from the initial position ordinal 0 is Na3, 1 Nc3, 4 a3, 19 h4.
        let list = ordinal_moves(&Chess::default());
        let san = |i: usize| San::from_move(&Chess::default(), list[i]).to_string();
        assert_eq!(list.len(), 20);
        assert_eq!(
            [san(0), san(1), san(4), san(19)],
            ["Na3", "Nc3", "a3", "h4"]
        );
    }

    #[test]
    fn the_key_sorts_as_shakmatys_san_with_suffix() {
        let mut rng = boards::rng::SplitMix64(7);
        for _ in 0..60 {
            let mut pos = Chess::default();
            for _ in 0..150 {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let mut by_san: Vec<(String, Move)> = legal
                    .iter()
                    .map(|m| (SanPlus::from_move(pos.clone(), *m).to_string(), *m))
                    .collect();
                by_san.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                let ours = ordinal_moves(&pos);
                assert_eq!(
                    ours,
                    by_san.iter().map(|(_, m)| *m).collect::<Vec<_>>(),
                    "{}",
                    shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal)
                );
                pos.play_unchecked(legal[rng.below(legal.len() as u64) as usize]);
            }
        }
    }

    #[test]
    fn a_seven_tag_game_is_one_reduced_record_built_by_hand() {
        let g = game(
            "[Event \"E\"]\n[Site \"S\"]\n[Date \"2024.01.02\"]\n[Round \"1\"]\n[White \"W\"]\n\
             [Black \"B\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n",
        );
        let bytes = encode_game(&g).expect("encode");
        let mut want = vec![0x01];
        for v in ["E", "S", "2024.01.02", "1", "W", "B", "1-0"] {
            want.push(v.len() as u8);
            want.extend_from_slice(v.as_bytes());
        }
        // mvseq-2: 7 moves, then the ordinals. From the start the sorted SAN list is Na3 Nc3
        // Nf3 Nh3 a3 a4 b3 b4 c3 c4 d3 d4 e3 e4 …: e4 is 13. Black answers from the same
        // shape but its double steps sort first (a5 a6 …): e5 is 12. The rest as python-chess
        // numbers them (sorting its own SAN): Qh5 14, Nc6 7, Bc4 2, Nf6 11, Qxf7# 28.
        want.extend_from_slice(&[7, 0, 13, 12, 14, 7, 2, 11, 28]);
        assert_eq!(bytes, want);
        let back: Vec<Game> = games(bytes.as_slice())
            .collect::<Result<_, _>>()
            .expect("read back");
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].moves.len(), 7);
        assert_eq!(back[0].moves[6].san.to_string(), "Qxf7#");
        assert_eq!(back[0].result, GameResult::WhiteWins);
        assert_eq!(back[0].tags.get("Date"), Some("2024.01.02"));
    }

    #[test]
    fn general_games_keep_every_tag_and_skip_variations_and_nags() {
        // Written by hand: 0x05, a tag pair, a variation holding a move sequence, a NAG, a
        // noop, an escape string, the main line in two sequences, 0x06.
        let mut bytes = vec![0x05, 0x02, 5];
        bytes.extend_from_slice(b"White");
        bytes.push(3);
        bytes.extend_from_slice(b"Tal");
        bytes.extend_from_slice(&[0x08, 0x03, 1, 0, 0x08, 0x09, 0x09, 0x07, 1, 0x00]);
        bytes.extend_from_slice(&[0x0a, 2, 0, b'h', b'i']);
        bytes.extend_from_slice(&[0x03, 1, 13, 0x04, 1, 0, 12, 0x06]);
        let back: Vec<Game> = games(bytes.as_slice())
            .collect::<Result<_, _>>()
            .expect("read");
        let sans: Vec<String> = back[0].moves.iter().map(|m| m.san.to_string()).collect();
        assert_eq!(sans, ["e4", "e5"]);
        assert_eq!(back[0].tags.get("White"), Some("Tal"));
    }

    #[test]
    fn set_up_and_chess960_starts_round_trip() {
        let g = game(
            "[Variant \"Chess960\"]\n[FEN \"bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1\"]\n\
             [SetUp \"1\"]\n\n1. O-O O-O 2. e4 *\n",
        );
        let bytes = encode_game(&g).expect("encode");
        assert_eq!(bytes[0], 0x05);
        let back = games(bytes.as_slice()).next().expect("one").expect("read");
        assert_eq!(back.start, g.start);
        assert_eq!(back.castling_mode, g.castling_mode);
        assert_eq!(
            back.moves.iter().map(|m| m.mv).collect::<Vec<_>>(),
            g.moves.iter().map(|m| m.mv).collect::<Vec<_>>()
        );
    }

    #[test]
    fn bad_files_name_the_game_and_byte() {
        let good = encode_game(&game("[White \"A\"]\n\n1. e4 *\n")).expect("encode");
        let mut two = good.clone();
        two.extend_from_slice(&good[..good.len() - 3]);
        let out: Vec<_> = games(two.as_slice()).collect();
        assert!(out[0].is_ok());
        let e = out[1].as_ref().expect_err("cut short");
        assert!(
            e.0.starts_with(&format!("game 2 (from byte {})", good.len())),
            "{e}"
        );
        let e = games([0x02u8, 0].as_slice())
            .next()
            .expect("one")
            .expect_err("outside");
        assert!(e.0.contains("outside a game"), "{e}");
        let e = games([0x05u8, 0x03, 1, 200, 0x06].as_slice())
            .next()
            .expect("one")
            .expect_err("ordinal");
        assert!(e.0.contains("ordinal 200"), "{e}");
        // Random bytes never panic.
        let mut rng = boards::rng::SplitMix64(99);
        for _ in 0..2000 {
            let mut junk = Vec::new();
            for _ in 0..rng.below(64) {
                junk.push(rng.below(12) as u8);
            }
            for r in games(junk.as_slice()) {
                let _ = r;
            }
        }
    }
}
