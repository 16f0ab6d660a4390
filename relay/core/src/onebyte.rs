//! The one-byte move encoding (`../shared/specs/binary-move-encoding.txt`): most moves in
//! one byte, naming the piece by where it started (the a-pawn, the queen's knight, …) and
//! where it goes by an offset; promotions and moves of promoted pieces in two.
//!
//! The specification's tables are read this way (decisions where they leave room):
//! - A piece is known by where it stood at the start: pawns by their file; knights, bishops
//!   and rooks as the queen's side one (the one on the lower file) and the king's side one.
//!   So a set-up position or Chess960 works as long as each side has at most one queen and
//!   two knights, bishops and rooks that did not come from a promotion.
//! - Pawns: 0 one square forward, 3 two squares, 1 a capture towards the h-file, 2 a capture
//!   towards the a-file, for either colour.
//! - Knights: 0 (+1 file, +2 ranks), 1 (−1, +2), 2 (−2, +1), 3 (−2, −1), 4 (−1, −2),
//!   5 (+1, −2), 6 (+2, −1), 7 (+2, +1), from White's side of the board for both colours.
//! - Bishops: 0–7 the target's rank on the a1–h8 diagonal, 8–15 8 + the target's rank on the
//!   a8–h1 diagonal. Rooks: 0–7 the target's rank on its file, 8–15 8 + the target's file on
//!   its rank. Queens: the bishop's codes, and 16 + the rook's.
//! - King: 0 up-right, 1 up-left, 2 down-left, 3 down-right, 4 up, 5 down, 6 left, 7 right
//!   (White's view); castling 0x98 (king's side) and 0x99 (queen's side), also in Chess960.
//! - Promotion: 0xa0 + the pawn's file, then a byte `0b0001_xxyy`: xx the pawn offset, yy the
//!   piece (0 knight, 1 bishop, 2 rook, 3 queen); bit 4 set so the byte is never 0.
//!   A promoted piece's move: 0xa8 + the file it was promoted on, then `0b001x_xxxx`: its
//!   offset as for its kind (queen codes for a queen). Two promoted pieces of one side from
//!   the same file cannot be told apart: such a game is refused.
//! - The game's end: 0xd0 Black won, 0xd1 draw, 0xd2 White won, 0xd3 unknown; then 0xff.
//!   Comments, NAGs and variations are not written (the relay's games have none of the
//!   latter two; comments and clocks live in the container's PGN part, see `container`).
//!
//! A short game read with the core's PGN reader, its moves encoded and decoded again, then
//! the whole game through the container that `relay convert --to onebyte` writes:
//!
//! ```
//! use relay_core::game::GameResult;
//! use relay_core::{onebyte, pgn};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let text = r#"[Event "Casual game"]
//! [White "White"]
//! [Black "Black"]
//! [Result "1-0"]
//!
//! 1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0
//! "#;
//! let game = pgn::read_game(text)?;
//! let moves: Vec<_> = game.moves.iter().map(|m| m.mv).collect();
//!
//! let bytes = onebyte::encode(&game.start, &moves, game.result)?;
//! // A byte a move: 0x13 is the e-pawn (0x10) two squares forward (3), for either colour;
//! // the game ends with its result (0xd2, White won) and 0xff.
//! assert_eq!(bytes, [0x13, 0x13, 0x4b, 0x25, 0x74, 0x2c, 0x7e, 0xd2, 0xff]);
//! assert_eq!(onebyte::decode(&game.start, &bytes)?, (moves, GameResult::WhiteWins));
//!
//! // The container keeps the tags, the start and the result with the moves.
//! let mut file = onebyte::MAGIC.to_vec();
//! file.extend(onebyte::container_game(&game)?);
//! let back = onebyte::container_games(&file)?.collect::<Result<Vec<_>, _>>()?;
//! let opts = pgn::WriteOptions::default();
//! assert_eq!(back.len(), 1);
//! assert_eq!(pgn::write_game(&back[0], &opts), pgn::write_game(&game, &opts));
//! # Ok(())
//! # }
//! ```

use crate::game::GameResult;
use shakmaty::{Board, Chess, Color, File, Move, Position, Rank, Role, Square};
use std::collections::HashMap;

/// Who a piece is, by where it began.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Id {
    Pawn(u8),
    Knight(bool),
    Bishop(bool),
    Rook(bool),
    Queen,
    King,
    /// Promoted on this file.
    Promoted(u8),
}

/// Why a game cannot be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OneByteError(pub String);

/// Which piece is which, as the moves go.
struct Ids {
    at: HashMap<Square, Id>,
}

impl Ids {
    fn new(board: &Board) -> Result<Ids, OneByteError> {
        let mut at = HashMap::new();
        for color in Color::ALL {
            for role in Role::ALL {
                let mut squares: Vec<Square> = (board.by_role(role) & board.by_color(color))
                    .into_iter()
                    .collect();
                squares.sort_by_key(|s| (s.file(), s.rank()));
                let ids: Vec<Id> = match role {
                    Role::Pawn => {
                        let mut files: Vec<u8> =
                            squares.iter().map(|s| u8::from(s.file())).collect();
                        files.dedup();
                        if files.len() != squares.len() {
                            return Err(OneByteError(format!(
                                "{color:?} has two pawns on one file at the start"
                            )));
                        }
                        files.into_iter().map(Id::Pawn).collect()
                    }
                    Role::Knight => pair(&squares, Id::Knight, "knights", color)?,
                    Role::Bishop => pair(&squares, Id::Bishop, "bishops", color)?,
                    Role::Rook => pair(&squares, Id::Rook, "rooks", color)?,
                    Role::Queen if squares.len() <= 1 => vec![Id::Queen; squares.len()],
                    Role::Queen => {
                        return Err(OneByteError(format!(
                            "{color:?} has more than one queen at the start"
                        )));
                    }
                    Role::King => vec![Id::King; squares.len()],
                };
                for (s, id) in squares.into_iter().zip(ids) {
                    at.insert(s, id);
                }
            }
        }
        Ok(Ids { at })
    }

    /// Moves the identities with a move (already checked legal in `pos`).
    fn play(&mut self, pos: &Chess, m: &Move) -> Result<(), OneByteError> {
        match *m {
            Move::Castle { king, rook } => {
                let side = if rook.file() > king.file() {
                    shakmaty::CastlingSide::KingSide
                } else {
                    shakmaty::CastlingSide::QueenSide
                };
                let color = pos.turn();
                let k = self.at.remove(&king);
                let r = self.at.remove(&rook);
                if let Some(k) = k {
                    self.at.insert(side.king_to(color), k);
                }
                if let Some(r) = r {
                    self.at.insert(side.rook_to(color), r);
                }
            }
            Move::EnPassant { from, to } => {
                let id = self.at.remove(&from);
                let taken = Square::from_coords(to.file(), from.rank());
                self.at.remove(&taken);
                if let Some(id) = id {
                    self.at.insert(to, id);
                }
            }
            Move::Normal {
                from,
                to,
                promotion,
                ..
            } => {
                let id = self.at.remove(&from);
                self.at.remove(&to);
                let id = match promotion {
                    Some(_) => {
                        let file = u8::from(to.file());
                        let color = pos.turn();
                        let clash = self.at.iter().any(|(s, i)| {
                            *i == Id::Promoted(file) && pos.board().color_at(*s) == Some(color)
                        });
                        if clash {
                            return Err(OneByteError(format!(
                                "two promoted pieces of one side from the {} file cannot be told apart",
                                char::from(b'a' + file)
                            )));
                        }
                        Some(Id::Promoted(file))
                    }
                    None => id,
                };
                if let Some(id) = id {
                    self.at.insert(to, id);
                }
            }
            Move::Put { .. } => return Err(OneByteError("drops are not chess".into())),
        }
        Ok(())
    }
}

fn pair(
    squares: &[Square],
    id: fn(bool) -> Id,
    what: &str,
    color: Color,
) -> Result<Vec<Id>, OneByteError> {
    match squares.len() {
        0 => Ok(vec![]),
        // One left: queen's side if it stands on the a–d files.
        1 => Ok(vec![id(u8::from(squares[0].file()) >= 4)]),
        2 => Ok(vec![id(false), id(true)]),
        _ => Err(OneByteError(format!(
            "{color:?} has more than two {what} at the start"
        ))),
    }
}

/// A knight's offsets 0–7 as (files, ranks), from White's side of the board.
const KNIGHT: [(i32, i32); 8] = [
    (1, 2),
    (-1, 2),
    (-2, 1),
    (-2, -1),
    (-1, -2),
    (1, -2),
    (2, -1),
    (2, 1),
];
/// A king's offsets 0–7 as (files, ranks): up-right, up-left, down-left, down-right, up,
/// down, left, right.
const KING: [(i32, i32); 8] = [
    (1, 1),
    (-1, 1),
    (-1, -1),
    (1, -1),
    (0, 1),
    (0, -1),
    (-1, 0),
    (1, 0),
];

fn rank_of(s: Square) -> u8 {
    u8::from(s.rank())
}

fn file_of(s: Square) -> u8 {
    u8::from(s.file())
}

/// The offset code of a move of a piece of `role` from `from` to `to` (a promoted piece
/// moves with its own kind's codes; a queen's are 0–31).
fn offset(role: Role, color: Color, from: Square, to: Square) -> Option<u8> {
    let df = i32::from(file_of(to)) - i32::from(file_of(from));
    let dr = i32::from(rank_of(to)) - i32::from(rank_of(from));
    let diagonal = |df: i32, dr: i32| -> Option<u8> {
        if df == dr {
            Some(rank_of(to))
        } else if df == -dr {
            Some(8 + rank_of(to))
        } else {
            None
        }
    };
    let straight = |df: i32, dr: i32| -> Option<u8> {
        if df == 0 && dr != 0 {
            Some(rank_of(to))
        } else if dr == 0 && df != 0 {
            Some(8 + file_of(to))
        } else {
            None
        }
    };
    match role {
        Role::Pawn => {
            let fwd = if color == Color::White { dr } else { -dr };
            match (df, fwd) {
                (0, 1) => Some(0),
                (1, 1) => Some(1),
                (-1, 1) => Some(2),
                (0, 2) => Some(3),
                _ => None,
            }
        }
        Role::Knight => KNIGHT.iter().position(|d| *d == (df, dr)).map(|i| i as u8),
        Role::Bishop => diagonal(df, dr),
        Role::Rook => straight(df, dr),
        Role::Queen => diagonal(df, dr).or_else(|| straight(df, dr).map(|c| 16 + c)),
        Role::King => KING.iter().position(|d| *d == (df, dr)).map(|i| i as u8),
    }
}

/// The target of an offset code, the inverse of [`offset`].
fn target(role: Role, color: Color, from: Square, code: u8) -> Option<Square> {
    let (f, r) = (i32::from(file_of(from)), i32::from(rank_of(from)));
    let sq = |f: i32, r: i32| -> Option<Square> {
        ((0..8).contains(&f) && (0..8).contains(&r))
            .then(|| Square::from_coords(File::new(f as u32), Rank::new(r as u32)))
    };
    let diagonal = |code: u8| -> Option<Square> {
        let tr = i32::from(code & 7);
        let dr = tr - r;
        if code < 8 {
            sq(f + dr, tr)
        } else {
            sq(f - dr, tr)
        }
    };
    let straight = |code: u8| -> Option<Square> {
        if code < 8 {
            sq(f, i32::from(code))
        } else {
            sq(i32::from(code - 8), r)
        }
    };
    match role {
        Role::Pawn => {
            let dir = if color == Color::White { 1 } else { -1 };
            match code {
                0 => sq(f, r + dir),
                1 => sq(f + 1, r + dir),
                2 => sq(f - 1, r + dir),
                3 => sq(f, r + 2 * dir),
                _ => None,
            }
        }
        Role::Knight => {
            let d = KNIGHT.get(usize::from(code))?;
            sq(f + d.0, r + d.1)
        }
        Role::Bishop if code < 16 => diagonal(code),
        Role::Rook if code < 16 => straight(code),
        Role::Queen if code < 16 => diagonal(code),
        Role::Queen if code < 32 => straight(code - 16),
        Role::King => {
            let d = KING.get(usize::from(code))?;
            sq(f + d.0, r + d.1)
        }
        _ => None,
    }
}

fn base(id: Id) -> Option<u8> {
    Some(match id {
        Id::Pawn(f) => f * 4,
        Id::Knight(k) => 0x20 + 8 * u8::from(k),
        Id::Bishop(k) => 0x30 + 16 * u8::from(k),
        Id::Rook(k) => 0x50 + 16 * u8::from(k),
        Id::Queen => 0x70,
        Id::King => 0x90,
        Id::Promoted(_) => return None,
    })
}

fn result_byte(r: GameResult) -> u8 {
    match r {
        GameResult::BlackWins => 0xd0,
        GameResult::Draw => 0xd1,
        GameResult::WhiteWins => 0xd2,
        _ => 0xd3,
    }
}

/// Encodes the moves of a game from `start` (each legal there), with its result.
pub fn encode(start: &Chess, moves: &[Move], result: GameResult) -> Result<Vec<u8>, OneByteError> {
    let mut ids = Ids::new(start.board())?;
    let mut pos = start.clone();
    let mut out = Vec::with_capacity(moves.len() + 2);
    for (i, m) in moves.iter().enumerate() {
        let ply = i + 1;
        if !pos.is_legal(*m) {
            return Err(OneByteError(format!("move {ply} is not legal")));
        }
        let color = pos.turn();
        match *m {
            Move::Castle { king, rook } => out.push(if rook.file() > king.file() {
                0x98
            } else {
                0x99
            }),
            _ => {
                let (from, to) = (
                    m.from().ok_or_else(|| OneByteError("a drop".into()))?,
                    m.to(),
                );
                let id = *ids
                    .at
                    .get(&from)
                    .ok_or_else(|| OneByteError(format!("move {ply}: a piece nobody knows")))?;
                let code = offset(m.role(), color, from, to)
                    .ok_or_else(|| OneByteError(format!("move {ply}: no offset for it")))?;
                match (id, m.promotion()) {
                    (Id::Pawn(f), Some(p)) => {
                        let piece = match p {
                            Role::Knight => 0,
                            Role::Bishop => 1,
                            Role::Rook => 2,
                            Role::Queen => 3,
                            _ => {
                                return Err(OneByteError(format!(
                                    "move {ply}: promotion to a {p:?}"
                                )));
                            }
                        };
                        out.push(0xa0 + f);
                        out.push(0x10 | (code << 2) | piece);
                    }
                    (Id::Promoted(f), None) => {
                        out.push(0xa8 + f);
                        out.push(0x20 | code);
                    }
                    (id, None) => out.push(
                        base(id).ok_or_else(|| OneByteError(format!("move {ply}: no code")))?
                            + code,
                    ),
                    (_, Some(_)) => {
                        return Err(OneByteError(format!(
                            "move {ply}: a promotion by a piece that is no pawn"
                        )));
                    }
                }
            }
        }
        ids.play(&pos, m)?;
        pos.play_unchecked(*m);
    }
    out.push(result_byte(result));
    out.push(0xff);
    Ok(out)
}

/// Decodes the moves and result of a game from `start`; an error names the byte offset.
pub fn decode(start: &Chess, bytes: &[u8]) -> Result<(Vec<Move>, GameResult), OneByteError> {
    let mut ids = Ids::new(start.board())?;
    let mut pos = start.clone();
    let mut moves = Vec::new();
    let mut i = 0;
    let bad = |at: usize, what: &str| OneByteError(format!("byte {at}: {what}"));
    let mut result = None;
    while i < bytes.len() {
        let b = bytes[i];
        let at = i;
        i += 1;
        let color = pos.turn();
        let find = |ids: &Ids, id: Id| -> Option<Square> {
            ids.at
                .iter()
                .find(|(s, i)| **i == id && pos.board().color_at(**s) == Some(color))
                .map(|(s, _)| *s)
        };
        let mv = match b {
            0x00..=0x9f if !(0x9a..=0x9f).contains(&b) => {
                if b == 0x98 || b == 0x99 {
                    let side = if b == 0x98 {
                        shakmaty::CastlingSide::KingSide
                    } else {
                        shakmaty::CastlingSide::QueenSide
                    };
                    pos.legal_moves().into_iter().find(|m| matches!(m, Move::Castle { king, rook } if (rook.file() > king.file()) == (side == shakmaty::CastlingSide::KingSide)))
                } else {
                    let (id, code) = match b {
                        0x00..=0x1f => (Id::Pawn(b / 4), b % 4),
                        0x20..=0x2f => (Id::Knight(b >= 0x28), b & 7),
                        0x30..=0x4f => (Id::Bishop(b >= 0x40), b & 15),
                        0x50..=0x6f => (Id::Rook(b >= 0x60), b & 15),
                        0x70..=0x8f => (Id::Queen, b - 0x70),
                        _ => (Id::King, b - 0x90),
                    };
                    let from =
                        find(&ids, id).ok_or_else(|| bad(at, "no such piece on the board"))?;
                    let role = pos
                        .board()
                        .role_at(from)
                        .ok_or_else(|| bad(at, "no piece"))?;
                    let to = target(role, color, from, code)
                        .ok_or_else(|| bad(at, "the offset leaves the board"))?;
                    pos.legal_moves().into_iter().find(|m| {
                        m.from() == Some(from)
                            && m.to() == to
                            && m.promotion().is_none()
                            && !m.is_castle()
                    })
                }
            }
            0xa0..=0xa7 => {
                let extra = *bytes
                    .get(i)
                    .ok_or_else(|| bad(at, "the promotion's second byte is missing"))?;
                i += 1;
                let from = find(&ids, Id::Pawn(b - 0xa0)).ok_or_else(|| bad(at, "no such pawn"))?;
                let to = target(Role::Pawn, color, from, (extra >> 2) & 3)
                    .ok_or_else(|| bad(at, "the offset leaves the board"))?;
                let role =
                    [Role::Knight, Role::Bishop, Role::Rook, Role::Queen][usize::from(extra & 3)];
                pos.legal_moves()
                    .into_iter()
                    .find(|m| m.from() == Some(from) && m.to() == to && m.promotion() == Some(role))
            }
            0xa8..=0xaf => {
                let extra = *bytes
                    .get(i)
                    .ok_or_else(|| bad(at, "the second byte is missing"))?;
                i += 1;
                let from = find(&ids, Id::Promoted(b - 0xa8))
                    .ok_or_else(|| bad(at, "no such promoted piece"))?;
                let role = pos
                    .board()
                    .role_at(from)
                    .ok_or_else(|| bad(at, "no piece"))?;
                let to = target(role, color, from, extra & 0x1f)
                    .ok_or_else(|| bad(at, "the offset leaves the board"))?;
                pos.legal_moves()
                    .into_iter()
                    .find(|m| m.from() == Some(from) && m.to() == to)
            }
            0xd0..=0xd3 => {
                result = Some(match b {
                    0xd0 => GameResult::BlackWins,
                    0xd1 => GameResult::Draw,
                    0xd2 => GameResult::WhiteWins,
                    _ => GameResult::Ongoing,
                });
                continue;
            }
            0xff => {
                return Ok((moves, result.unwrap_or(GameResult::Ongoing)));
            }
            _ => {
                return Err(bad(
                    at,
                    &format!("0x{b:02x} is not a move this relay writes"),
                ));
            }
        };
        let m = mv.ok_or_else(|| bad(at, "not a legal move here"))?;
        ids.play(&pos, &m)?;
        pos.play_unchecked(m);
        moves.push(m);
    }
    Err(bad(bytes.len(), "the end (0xff) is missing"))
}

/// The first line of a file of games in the one-byte encoding.
pub const MAGIC: &[u8] = b"RELAY-ONEBYTE 1\n";

/// One game in the container (laid out in `docs/formats.md`): a little-endian `u32` length and
/// the game's PGN tag section (UTF-8, as the PGN writer writes it, so a set-up start has its
/// `[SetUp]`/`[FEN]`/`[Variant]`), then a `u32` length and the encoded moves, result and
/// 0xff. Clocks and comments are not kept.
pub fn container_game(game: &crate::game::Game) -> Result<Vec<u8>, OneByteError> {
    let pgn = crate::pgn::write_game(
        game,
        &crate::pgn::WriteOptions {
            reduced: false,
            clocks: false,
        },
    );
    let tags = pgn.split_once("\n\n").map_or(pgn.as_str(), |(t, _)| t);
    let moves: Vec<Move> = game.moves.iter().map(|m| m.mv).collect();
    let body = encode(&game.start, &moves, game.result)?;
    let mut out = Vec::with_capacity(8 + tags.len() + body.len());
    out.extend_from_slice(&(tags.len() as u32).to_le_bytes());
    out.extend_from_slice(tags.as_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Reads the games of a container back, one at a time (the file's bytes are held, about a
/// byte a move; the games are not); an error names the game and the byte offset in the file.
pub fn container_games(bytes: &[u8]) -> Result<ContainerGames<'_>, OneByteError> {
    let Some(rest) = bytes.strip_prefix(MAGIC) else {
        return Err(OneByteError(
            "not a one-byte file (its first line is not RELAY-ONEBYTE 1)".into(),
        ));
    };
    Ok(ContainerGames {
        bytes,
        rest,
        n: 0,
        failed: false,
    })
}

/// The games of a container, in order (see [`container_games`]).
#[derive(Debug)]
pub struct ContainerGames<'a> {
    bytes: &'a [u8],
    rest: &'a [u8],
    n: usize,
    failed: bool,
}

impl ContainerGames<'_> {
    fn read_one(&mut self) -> Result<crate::game::Game, OneByteError> {
        let at = self.bytes.len() - self.rest.len();
        let n = self.n;
        let bad = |what: &str| OneByteError(format!("game {n} (from byte {at}): {what}"));
        let take = |rest: &mut &[u8]| -> Option<Vec<u8>> {
            let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
            let part = rest.get(4..4 + len)?.to_vec();
            *rest = &rest[4 + len..];
            Some(part)
        };
        let tags = take(&mut self.rest).ok_or_else(|| bad("its tags are cut short"))?;
        let body = take(&mut self.rest).ok_or_else(|| bad("its moves are cut short"))?;
        let text = String::from_utf8(tags).map_err(|_| bad("its tags are not UTF-8"))?;
        let mut game =
            crate::pgn::read_game(&format!("{text}\n\n*\n")).map_err(|e| bad(&e.to_string()))?;
        let (moves, result) = decode(&game.start, &body).map_err(|e| bad(&e.0))?;
        let mut pos = game.start.clone();
        game.moves = moves
            .into_iter()
            .map(|mv| crate::game::RecordedMove {
                mv,
                san: shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, mv),
                clk: None,
                emt: None,
                comment: None,
            })
            .collect();
        game.result = result;
        Ok(game)
    }
}

impl Iterator for ContainerGames<'_> {
    type Item = Result<crate::game::Game, OneByteError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() || self.failed {
            return None;
        }
        self.n += 1;
        let r = self.read_one();
        self.failed = r.is_err();
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::san::San;

    fn moves(start: &Chess, sans: &[&str]) -> Vec<Move> {
        let mut pos = start.clone();
        sans.iter()
            .map(|s| {
                let m = s.parse::<San>().expect("san").to_move(&pos).expect("legal");
                pos.play_unchecked(m);
                m
            })
            .collect()
    }

    #[test]
    fn worked_examples_by_hand_from_the_tables() {
        let start = Chess::default();
        // 1. e4 (e-pawn two forward) e5, 2. Nf3 (king's knight, −1 file +2 ranks) Nc6
        // (queen's knight of Black: b8→c6 is +1 file −2 ranks), 3. Bb5 (king's bishop to
        // rank 5 on the a8–h1 diagonal: 8 + 4), 3...a6 (a-pawn forward), 4. O-O.
        let ms = moves(&start, &["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "O-O"]);
        let bytes = encode(&start, &ms, GameResult::Ongoing).expect("encode");
        assert_eq!(
            bytes,
            [0x13, 0x13, 0x29, 0x25, 0x4c, 0x00, 0x98, 0xd3, 0xff]
        );
        let (back, r) = decode(&start, &bytes).expect("decode");
        assert_eq!((back, r), (ms, GameResult::Ongoing));
    }

    #[test]
    fn promotions_and_promoted_pieces_take_two_bytes() {
        let start: Chess = "8/P6k/8/8/8/8/7K/8 w - - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .expect("fen")
            .into_position(shakmaty::CastlingMode::Standard)
            .expect("position");
        let ms = moves(&start, &["a8=Q", "Kg6", "Qa1"]);
        let bytes = encode(&start, &ms, GameResult::WhiteWins).expect("encode");
        // a-pawn promotion: forward (0) to a queen (3); the promoted a-piece down its file to
        // rank 1: queen straight code 16 + 0.
        assert_eq!(bytes, [0xa0, 0x13, 0x92, 0xa8, 0x30, 0xd2, 0xff]);
        assert_eq!(decode(&start, &bytes).expect("decode").0, ms);
    }

    #[test]
    fn random_games_round_trip() {
        let mut rng = boards::rng::SplitMix64(42);
        let mut refused = 0;
        for _ in 0..300 {
            let start = Chess::default();
            let mut pos = start.clone();
            let mut ms = Vec::new();
            for _ in 0..200 {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let m = legal[rng.below(legal.len() as u64) as usize];
                pos.play_unchecked(m);
                ms.push(m);
            }
            match encode(&start, &ms, GameResult::Draw) {
                Ok(bytes) => {
                    let (back, r) = decode(&start, &bytes).expect("decode what was encoded");
                    assert_eq!(back, ms);
                    assert_eq!(r, GameResult::Draw);
                    assert!(bytes.len() <= ms.len() * 2 + 2);
                }
                // Two promoted pieces from one file: the format cannot tell them apart.
                Err(e) => {
                    assert!(e.0.contains("cannot be told apart"), "{e}");
                    refused += 1;
                }
            }
        }
        assert!(refused < 30, "{refused} of 300 refused");
    }

    #[test]
    fn bad_bytes_are_errors_with_their_offset() {
        let start = Chess::default();
        let e = decode(&start, &[0x13, 0x9c, 0xff]).expect_err("reserved byte");
        assert!(e.0.starts_with("byte 1:"), "{e}");
        let e = decode(&start, &[0x13]).expect_err("no end");
        assert!(e.0.contains("missing"), "{e}");
        // The e-pawn cannot go three forward; a knight's code 0x2a from g1 (−2, +1) is e2,
        // taken by a pawn: not legal.
        assert!(decode(&start, &[0x2a, 0xff]).is_err());
    }
}
