//! Reading: the games of a CBF file, through its CBI index or record after record. Each
//! record is read by the rules its check byte points to, and by the other rules when it
//! does not read by those (the module notes of [`super`] say why there are two). A record
//! that does not read is named with its number and offset and stepped over when its length
//! is known, so one bad game does not cost the rest of the file.

use super::cbi::Index;
use super::error::CbfError;
use super::layout::{
    COMMENT_START, COMMENTED, HEADER_LEN, POSITION_LEN, VARIANT_END, VARIANT_START, check_bytes,
    code_moves, code_text, decode_header,
};
use super::movegen::{EpMemory, Rules, generator_moves};
use super::position::decode_position;
use super::text::{comment_text, roster};
use crate::game::{Game, GameResult, RecordedMove, Tags};
use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, Position};

/// Reads the games of a CBF file, through its CBI index when given (the spec says games
/// should be reached through it), else one after another from the start (a record's length
/// follows from its header). Deleted games (flags1 bit 7) are skipped. Each item is a game or
/// an error naming the game number and the byte offset; a game that does not read is stepped
/// over, and iteration stops only where the next game cannot be found (a broken header read
/// without an index).
/// Games are numbered from 1 as they stand in the index or file, deleted ones counted.
pub fn games<'a>(
    cbf: &'a [u8],
    cbi: Option<&'a [u8]>,
) -> Result<impl Iterator<Item = Result<Game, CbfError>> + 'a, CbfError> {
    let offsets = match cbi {
        None => Offsets::Sequential { next: 0 },
        Some(cbi) => Offsets::Index(Index::read(cbi)?),
    };
    Ok(Games {
        cbf,
        offsets,
        n: 0,
        done: false,
    })
}

/// Where the next game is.
#[derive(Debug)]
enum Offsets<'a> {
    Index(Index<'a>),
    Sequential { next: usize },
}

/// The games of a CBF file (see [`games`]).
#[derive(Debug)]
struct Games<'a> {
    cbf: &'a [u8],
    offsets: Offsets<'a>,
    /// Games numbered so far (deleted ones too).
    n: usize,
    done: bool,
}

impl Iterator for Games<'_> {
    type Item = Result<Game, CbfError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let n = self.n + 1;
            let at = match &self.offsets {
                Offsets::Index(index) => {
                    if n > index.count() {
                        self.done = true;
                        return None;
                    }
                    match index.offset(n) {
                        Ok(at) => at,
                        Err(e) => {
                            self.done = true;
                            return Some(Err(e));
                        }
                    }
                }
                Offsets::Sequential { next } => {
                    if *next >= self.cbf.len() {
                        self.done = true;
                        return None;
                    }
                    *next
                }
            };
            self.n = n;
            // A record whose length is known is stepped over even when it does not read, so
            // the games after it still come; without its length (a broken header) the file
            // cannot be followed further unless the index says where the next game is.
            let header = record_header(self.cbf, at);
            match &mut self.offsets {
                Offsets::Sequential { next } => match &header {
                    Ok((_, len)) => *next = at + len,
                    Err(_) => self.done = true,
                },
                Offsets::Index(_) => {}
            }
            match header.and_then(|(h, len)| read_record(&self.cbf[at..at + len], &h)) {
                Ok(Some(game)) => return Some(Ok(game)),
                Ok(None) => {}
                Err(e) => {
                    return Some(Err(CbfError::Game {
                        game: n,
                        offset: at,
                        reason: Box::new(e),
                    }));
                }
            }
        }
        None
    }
}

/// The plain header of the record at `at` and the record's length, if the file holds that
/// much.
fn record_header(cbf: &[u8], at: usize) -> Result<([u8; HEADER_LEN], usize), CbfError> {
    if at >= cbf.len() {
        return Err(CbfError::OffsetBeyondFile { file: cbf.len() });
    }
    let coded: [u8; HEADER_LEN] = cbf
        .get(at..at + HEADER_LEN)
        .and_then(|h| h.try_into().ok())
        .ok_or(CbfError::HeaderCut)?;
    let h = decode_header(coded);
    let mlen = usize::from(u16::from_be_bytes([h[2], h[3]]));
    if mlen == 0 {
        return Err(CbfError::ZeroMoveCount);
    }
    let set_up = h[10] & 1 != 0;
    let len = HEADER_LEN
        + usize::from(h[4] & 63)
        + usize::from(h[5] & 63)
        + (mlen - 1)
        + usize::from(u16::from_be_bytes([h[6], h[7]]))
        + if set_up { POSITION_LEN } else { 0 };
    if at + len > cbf.len() {
        return Err(CbfError::RecordBeyondFile {
            len,
            file: cbf.len(),
        });
    }
    Ok((h, len))
}

/// The game of a `record` whose plain header is `h` ([`record_header`] measured the record),
/// unless it is marked deleted.
fn read_record(record: &[u8], h: &[u8; HEADER_LEN]) -> Result<Option<Game>, CbfError> {
    let plen = usize::from(h[4] & 63);
    let slen = usize::from(h[5] & 63);
    let mlen = usize::from(u16::from_be_bytes([h[2], h[3]]));
    let clen = usize::from(u16::from_be_bytes([h[6], h[7]]));
    let set_up = h[10] & 1 != 0;
    if h[10] & 0x80 != 0 {
        return Ok(None);
    }
    let mut rest = &record[HEADER_LEN..];
    // The parts add up to the record's length, so no split is out of bounds.
    let mut take = |n: usize| {
        let (part, tail) = rest.split_at(n);
        rest = tail;
        part
    };
    let mut text = take(plen + slen).to_vec();
    code_text(&mut text);
    let mut moves = take(mlen - 1).to_vec();
    code_moves(&mut moves);
    let comment_area = take(clen);
    let start = if set_up {
        decode_position(take(POSITION_LEN), h[10], h[11])?
    } else {
        Chess::default()
    };
    let (player, source) = text.split_at(plen);
    // The rules byte 13 points to first; the other if the record does not read by them.
    let first = if check_bytes(h).contains(&h[13]) {
        Rules::ChessBase
    } else {
        Rules::RelayFirst
    };
    let other = match first {
        Rules::ChessBase => Rules::RelayFirst,
        Rules::RelayFirst => Rules::ChessBase,
    };
    let game = decode_game(
        first,
        h,
        player,
        source,
        &moves,
        comment_area,
        start.clone(),
    )
    .or_else(|e| {
        decode_game(other, h, player, source, &moves, comment_area, start).map_err(|_| e)
    })?;
    Ok(Some(game))
}

/// A text for a tag: empty reads as "?".
fn or_unknown(s: &str) -> String {
    let s = s.trim();
    if s.is_empty() { "?".into() } else { s.into() }
}

/// The game of a record's uncoded parts, read by `rules`.
fn decode_game(
    rules: Rules,
    h: &[u8; HEADER_LEN],
    player: &[u8],
    source: &[u8],
    moves: &[u8],
    comment_area: &[u8],
    start: Chess,
) -> Result<Game, CbfError> {
    let result = match h[1] & 3 {
        0 => GameResult::BlackWins,
        1 => GameResult::Draw,
        2 => GameResult::WhiteWins,
        _ => GameResult::Ongoing,
    };
    let tags = decode_tags(rules, h, player, source, result);
    let (mut recorded, commented) = decode_moves(rules, moves, &start)?;
    // Before the first 0xFF there is nothing (§2.5: the first comment begins with one).
    for (target, piece) in commented
        .into_iter()
        .zip(comment_area.split(|b| *b == COMMENT_START).skip(1))
    {
        let text = comment_text(rules, piece);
        if let Some(m) = target.and_then(|ply| recorded.get_mut(ply))
            && !text.is_empty()
        {
            m.comment = Some(text);
        }
    }

    Ok(Game {
        tags,
        start,
        castling_mode: CastlingMode::Standard,
        moves: recorded,
        result,
        intro: None,
    })
}

/// The tags a record gives: the seven of the roster (from the texts and the header's year and
/// result), the Elo and, for a game from the usual start, the ECO code.
fn decode_tags(
    rules: Rules,
    h: &[u8; HEADER_LEN],
    player: &[u8],
    source: &[u8],
    result: GameResult,
) -> Tags {
    let [white, black, event, site, round] = roster(rules, player, source);
    let date = match h[0] as i8 {
        127 => "????.??.??".to_string(),
        gy => format!("{:04}.??.??", 1900 + i32::from(gy)),
    };

    let mut tags = Tags::default();
    tags.set("Event", or_unknown(&event));
    tags.set("Site", or_unknown(&site));
    tags.set("Date", date);
    tags.set("Round", or_unknown(&round));
    tags.set("White", or_unknown(&white));
    tags.set("Black", or_unknown(&black));
    tags.set("Result", result.to_string());
    for (name, k) in [("WhiteElo", h[8]), ("BlackElo", h[9])] {
        if k > 0 {
            tags.set(name, (1600 + 5 * u32::from(k)).to_string());
        }
    }
    if h[10] & 1 == 0 {
        let eco = u16::from((h[10] >> 1) & 31)
            | (u16::from(h[4] >> 6) << 5)
            | (u16::from(h[5] >> 6) << 7);
        if (1..=500).contains(&eco) {
            let letter = char::from(b'A' + ((eco - 1) / 100) as u8);
            tags.set("ECO", format!("{letter}{:02}", (eco - 1) % 100));
        }
    }
    tags
}

/// The main line's moves of the plain move bytes, and for the k-th commented move of the
/// whole list the index of its move in the main line (None for one inside a variation, whose
/// comment is skipped).
fn decode_moves(
    rules: Rules,
    moves: &[u8],
    start: &Chess,
) -> Result<(Vec<RecordedMove>, Vec<Option<usize>>), CbfError> {
    let mut pos = start.clone();
    let mut ep = EpMemory::default();
    let mut recorded = Vec::new();
    let mut commented: Vec<Option<usize>> = Vec::new();
    let mut depth = 0usize;
    for (at, &b) in moves.iter().enumerate() {
        match b {
            VARIANT_START => depth += 1,
            VARIANT_END => {
                depth = depth
                    .checked_sub(1)
                    .ok_or(CbfError::VariationNotBegun { at })?;
            }
            _ if depth > 0 => {
                if b & COMMENTED != 0 {
                    commented.push(None);
                }
            }
            _ => {
                let ply = recorded.len() + 1;
                let number = usize::from(b & !COMMENTED);
                let list = generator_moves(&pos, rules, ep);
                let slot = number
                    .checked_sub(1)
                    .and_then(|i| list.get(i))
                    .copied()
                    .ok_or(CbfError::NumberNotListed {
                        at,
                        ply,
                        number,
                        listed: list.len(),
                    })?;
                let mv = slot.ok_or(CbfError::NumberForNoMove { at, ply, number })?;
                if !pos.is_legal(mv) {
                    return Err(CbfError::NumberNotLegal {
                        at,
                        ply,
                        number,
                        uci: mv.to_uci(CastlingMode::Standard),
                    });
                }
                if b & COMMENTED != 0 {
                    commented.push(Some(recorded.len()));
                }
                ep = ep.after(mv);
                recorded.push(RecordedMove {
                    mv,
                    san: SanPlus::from_move_and_play_unchecked(&mut pos, mv),
                    clk: None,
                    emt: None,
                    comment: None,
                });
            }
        }
    }
    if depth > 0 {
        return Err(CbfError::VariationNotEnded { open: depth });
    }
    Ok((recorded, commented))
}
