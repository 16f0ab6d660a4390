//! Writing: a [`Game`] as one CBF record. The moves are numbered by ChessBase's generator and
//! each commented move gets its comment in the area after them; the header carries the sizes,
//! year, result, Elo and either the ECO code or the set-up flags. What a record cannot hold
//! exactly is refused with a [`CbfError`] naming it, so that a converter can leave the game
//! out and say why.

use super::error::CbfError;
use super::layout::{
    COMMENT_START, COMMENTED, HEADER_LEN, POSITION_LEN, VARIANT_START, check_bytes, code_moves,
    code_text, encode_header,
};
use super::movegen::{EpMemory, Rules, generator_moves, number_of};
use super::position::{encode_position, set_up_flags};
use super::text::{comment_bytes, player_text, source_text, tag};
use crate::game::{Game, GameResult};
use shakmaty::{CastlingMode, Color, Position};

/// One game as a CBF record (header, player text, source text, moves, comments, optional
/// start position).
pub fn encode_game(game: &Game) -> Result<Vec<u8>, CbfError> {
    if game.castling_mode == CastlingMode::Chess960 {
        return Err(CbfError::Chess960);
    }
    let player = player_text(game)?;
    let source = source_text(game);
    let (mut moves, comments) = move_bytes(game)?;
    let mut h = header(game, &player, &source, &moves, &comments)?;
    let position = if game.has_custom_start() {
        (h[10], h[11]) = set_up_flags(&game.start);
        Some(encode_position(&game.start)?)
    } else {
        let eco = eco1(game);
        // ECO1 bits 0..4 in flags1 bits 1..5, bits 5/6 and 7/8 in the text sizes' top bits.
        h[10] = ((eco & 31) as u8) << 1;
        h[4] |= (((eco >> 5) & 3) as u8) << 6;
        h[5] |= (((eco >> 7) & 3) as u8) << 6;
        None
    };
    h[13] = check_bytes(&h)[0];

    let mut text = [player, source].concat();
    code_text(&mut text);
    code_moves(&mut moves);

    let mut out =
        Vec::with_capacity(HEADER_LEN + text.len() + moves.len() + comments.len() + POSITION_LEN);
    out.extend_from_slice(&encode_header(h));
    out.extend_from_slice(&text);
    out.extend_from_slice(&moves);
    out.extend_from_slice(&comments);
    if let Some(p) = position {
        out.extend_from_slice(&p);
    }
    Ok(out)
}

/// The plain move bytes (each its generator number, with the comment bit) and the comment
/// area, empty when no move has a comment.
fn move_bytes(game: &Game) -> Result<(Vec<u8>, Vec<u8>), CbfError> {
    let mut pos = game.start.clone();
    let mut ep = EpMemory::default();
    let mut moves = Vec::with_capacity(game.moves.len());
    // The area starts with one 0xFF; each comment ends with one.
    let mut comments = vec![COMMENT_START];
    for (i, m) in game.moves.iter().enumerate() {
        let (ply, san) = (i + 1, m.san);
        if !pos.is_legal(m.mv) {
            return Err(CbfError::IllegalMove { ply, san });
        }
        let number = number_of(&generator_moves(&pos, Rules::ChessBase, ep), m.mv)
            .ok_or(CbfError::NotGenerated { ply, san })?;
        let mut byte = u8::try_from(number)
            .ok()
            .filter(|n| *n <= 127)
            .ok_or(CbfError::NumberTooHigh { ply, san, number })?;
        if let Some(text) = m.comment.as_deref().filter(|t| !t.is_empty()) {
            byte |= COMMENTED;
            if byte == VARIANT_START {
                return Err(CbfError::CommentedMove127 { ply, san });
            }
            comments.extend_from_slice(&[0, 0, 0, 0]);
            comments.extend(comment_bytes(text));
            comments.push(COMMENT_START);
        }
        moves.push(byte);
        ep = ep.after(m.mv);
        pos.play_unchecked(m.mv);
    }
    if comments.len() == 1 {
        comments.clear();
    }
    Ok((moves, comments))
}

/// The plain header but for the ECO or set-up flags (bytes 10 and 11, and the top bits of
/// 4 and 5) and the check byte 13, which depend on the rest.
fn header(
    game: &Game,
    player: &[u8],
    source: &[u8],
    moves: &[u8],
    comments: &[u8],
) -> Result<[u8; HEADER_LEN], CbfError> {
    let mlen = u16::try_from(moves.len() + 1)
        .map_err(|_| CbfError::TooManyPlies { plies: moves.len() })?;
    let clen = u16::try_from(comments.len()).map_err(|_| CbfError::CommentsTooLong {
        len: comments.len(),
    })?;
    let full = full_moves(game.start.turn(), game.moves.len());
    let full = u8::try_from(full).map_err(|_| CbfError::TooManyFullMoves { full })?;

    // Both at most 63 bytes (`player_text` refuses more, `source_text` cuts), so they fit the
    // six bits.
    let (plen, slen) = (player.len() as u8, source.len() as u8);

    let mut h = [0u8; HEADER_LEN];
    h[0] = year_byte(game);
    h[1] = result_byte(game.result);
    h[2..4].copy_from_slice(&mlen.to_be_bytes());
    h[4] = plen;
    h[5] = slen;
    h[6..8].copy_from_slice(&clen.to_be_bytes());
    h[8] = elo_byte(game, "WhiteElo");
    h[9] = elo_byte(game, "BlackElo");
    h[12] = full;
    Ok(h)
}

fn year_byte(game: &Game) -> u8 {
    let date = tag(game, "Date");
    let year = date
        .get(..4)
        .filter(|y| y.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|y| y.parse::<i32>().ok());
    match year {
        // 1772..=2026 is −128..=126 as GY (127 means none); the cast keeps the two's
        // complement bits of the signed byte.
        Some(y) if (1772..=2026).contains(&y) => (y - 1900) as i8 as u8,
        _ => 127,
    }
}

fn elo_byte(game: &Game, name: &str) -> u8 {
    let Ok(elo) = tag(game, name).parse::<u32>() else {
        return 0;
    };
    let rounded = elo.saturating_add(2) / 5 * 5;
    if (1605..=2875).contains(&rounded) {
        // At most (2875 − 1600) / 5 = 255.
        ((rounded - 1600) / 5) as u8
    } else {
        0
    }
}

/// ECO1 of an `ECO` tag such as "B90": letter × 100 + number + 1 (§2.2); 0 when none.
fn eco1(game: &Game) -> u16 {
    let eco = tag(game, "ECO").as_bytes();
    match eco {
        [l @ b'A'..=b'E', d1 @ b'0'..=b'9', d2 @ b'0'..=b'9', ..] => {
            u16::from(l - b'A') * 100 + u16::from(d1 - b'0') * 10 + u16::from(d2 - b'0') + 1
        }
        _ => 0,
    }
}

fn result_byte(r: GameResult) -> u8 {
    match r {
        GameResult::BlackWins => 0,
        GameResult::Draw => 1,
        GameResult::WhiteWins => 2,
        GameResult::Ongoing => 3,
    }
}

/// The number of full moves a game of `plies` from a position with `turn` to move spans.
fn full_moves(turn: Color, plies: usize) -> usize {
    match (plies, turn) {
        (0, _) => 0,
        (n, Color::White) => n.div_ceil(2),
        (n, Color::Black) => n / 2 + 1,
    }
}
