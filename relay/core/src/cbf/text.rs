//! The record's texts, both ways: the player and source texts (§2.3) and the comments (§2.5),
//! in ChessBase's code page 850 with the bytes ChessBase shows as chess pieces, and in the
//! Latin-1 and `Event|Site|Round` of relay's first writer for reading its files. What a name
//! cannot hold exactly is refused; an event or comment is written as near as the code page
//! allows.

use super::error::CbfError;
use super::layout::MAX_TEXT;
use super::movegen::Rules;
use crate::game::Game;

/// In a comment: a line break.
pub(super) const COMMENT_NEWLINE: u8 = 0xfe;
/// ChessBase's piece symbols in comments, king to pawn, and what they read as.
const PIECE_SYMBOLS: [(u8, &str); 6] = [
    (177, "K"),
    (178, "Q"),
    (179, "N"),
    (180, "B"),
    (181, "R"),
    (182, ""),
];

/// A tag's value for writing: missing or "?" is empty.
pub(super) fn tag<'g>(game: &'g Game, name: &str) -> &'g str {
    match game.tags.get(name).map(str::trim) {
        None | Some("?") => "",
        Some(v) => v,
    }
}

/// Code page 850, bytes 0x80..=0xFF (below them it is ASCII).
const CP850: [char; 128] = [
    'Ç', 'ü', 'é', 'â', 'ä', 'à', 'å', 'ç', 'ê', 'ë', 'è', 'ï', 'î', 'ì', 'Ä', 'Å', //
    'É', 'æ', 'Æ', 'ô', 'ö', 'ò', 'û', 'ù', 'ÿ', 'Ö', 'Ü', 'ø', '£', 'Ø', '×', 'ƒ', //
    'á', 'í', 'ó', 'ú', 'ñ', 'Ñ', 'ª', 'º', '¿', '®', '¬', '½', '¼', '¡', '«', '»', //
    '░', '▒', '▓', '│', '┤', 'Á', 'Â', 'À', '©', '╣', '║', '╗', '╝', '¢', '¥', '┐', //
    '└', '┴', '┬', '├', '─', '┼', 'ã', 'Ã', '╚', '╔', '╩', '╦', '╠', '═', '╬', '¤', //
    'ð', 'Ð', 'Ê', 'Ë', 'È', 'ı', 'Í', 'Î', 'Ï', '┘', '┌', '█', '▄', '¦', 'Ì', '▀', //
    'Ó', 'ß', 'Ô', 'Ò', 'õ', 'Õ', 'µ', 'þ', 'Þ', 'Ú', 'Û', 'Ù', 'ý', 'Ý', '¯', '´', //
    '\u{ad}', '±', '‗', '¾', '¶', '§', '÷', '¸', '°', '¨', '·', '¹', '³', '²', '■', '\u{a0}',
];

/// In names, the codes ChessBase shows as the pieces K, Q, N, B, R, P (code page 850's
/// "óúñÑªº"), and what they read as.
const NAME_PIECES: [(u8, char); 6] = [
    (0xa2, 'K'),
    (0xa3, 'Q'),
    (0xa4, 'N'),
    (0xa5, 'B'),
    (0xa6, 'R'),
    (0xa7, 'P'),
];

/// A character's code page 850 byte, if it has one.
fn cp850_byte(c: char) -> Option<u8> {
    if c.is_ascii() {
        return Some(c as u8);
    }
    // At most 127, so the sum is at most 255.
    CP850.iter().position(|x| *x == c).map(|i| 0x80 + i as u8)
}

fn cp850_char(b: u8) -> char {
    if b < 0x80 {
        char::from(b)
    } else {
        CP850[usize::from(b - 0x80)]
    }
}

/// A name in code page 850, exactly, or why it cannot be (`what` names it in the refusal).
fn roster_bytes(what: &'static str, text: &str) -> Result<Vec<u8>, CbfError> {
    text.chars()
        .map(|c| match cp850_byte(c) {
            Some(b) if NAME_PIECES.iter().any(|(p, _)| *p == b) => Err(CbfError::PieceInName {
                what,
                text: text.to_string(),
                c,
            }),
            Some(b) => Ok(b),
            None => Err(CbfError::NotInCodePage {
                what,
                text: text.to_string(),
                c,
            }),
        })
        .collect()
}

/// A text and its name, refused when over the 63 bytes its size field holds.
fn fits(what: &'static str, bytes: Vec<u8>) -> Result<Vec<u8>, CbfError> {
    if bytes.len() > MAX_TEXT {
        Err(CbfError::TextTooLong {
            what,
            len: bytes.len(),
        })
    } else {
        Ok(bytes)
    }
}

/// What stands for a '-' in White's name: readers split the player text at its first '-', so
/// "Vachier-Lagrave, Maxime" would make White "Vachier" and Black the rest. Code page 850's
/// horizontal line '─' (0xC4, U+2500; the same byte in code page 437) is drawn as a dash by
/// ChessBase for DOS and read as one by Scidb, and no reader splits at it; relay reads it back
/// as '-'. (The soft hyphen, 0xF0 in code page 850, was tried first: Scidb reads that byte as
/// code page 437's '≡'.)
pub(super) const WHITE_HYPHEN: char = '\u{2500}';

/// Why a game is written other than it reads (for the writer's warning), if it is.
pub fn write_notes(game: &Game) -> Vec<String> {
    let white = tag(game, "White");
    if white.contains('-') {
        vec![format!(
            "White's name {white:?} holds a '-', where CBF readers split White from Black: \
             written with code page 850's horizontal line '─' (0xC4) in its place, which \
             relay reads back as '-' and other readers show as a dash"
        )]
    } else {
        Vec::new()
    }
}

/// "White-Black", as ChessBase joins them; readers split at the first '-' (a '-' in White's
/// name is written as [`WHITE_HYPHEN`]).
pub(super) fn player_text(game: &Game) -> Result<Vec<u8>, CbfError> {
    let (white, black) = (tag(game, "White"), tag(game, "Black"));
    if white.is_empty() && black.is_empty() {
        return Ok(Vec::new());
    }
    let white = white.replace('-', &WHITE_HYPHEN.to_string());
    let mut bytes = roster_bytes("White's name", &white)?;
    bytes.push(b'-');
    bytes.extend(roster_bytes("Black's name", black)?);
    fits("player", bytes)
}

/// A round ChessBase's readers take out of the source text's brackets: digits, '.' and '/'.
fn is_round(round: &str) -> bool {
    round.starts_with(|c: char| c.is_ascii_digit())
        && round
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '/')
}

/// "Event (Round)", the round only when it is a number such as "3" or "1.4". The event is
/// the least of what a game is: a character the code page lacks is written '?', and an event
/// too long for the field is cut (the round kept).
pub(super) fn source_text(game: &Game) -> Vec<u8> {
    let round = tag(game, "Round");
    let suffix = if is_round(round) && round.len() + 2 <= MAX_TEXT {
        format!("({round})")
    } else {
        String::new()
    };
    let mut bytes: Vec<u8> = tag(game, "Event")
        .chars()
        .map(|c| cp850_byte(c).unwrap_or(b'?'))
        .collect();
    if !suffix.is_empty() {
        bytes.truncate(MAX_TEXT - suffix.len() - 1);
        let cut = bytes.trim_ascii_end().len();
        bytes.truncate(cut);
        if !bytes.is_empty() {
            bytes.push(b' ');
        }
        bytes.extend(suffix.bytes());
    }
    bytes.truncate(MAX_TEXT);
    bytes
}

/// A comment's text as the comment area holds it (without the 0xFF and evaluations).
pub(super) fn comment_bytes(text: &str) -> Vec<u8> {
    text.chars()
        .filter(|c| *c != '\r')
        .map(|c| match (c, cp850_byte(c)) {
            ('\n', _) => COMMENT_NEWLINE,
            (_, Some(b)) if b < COMMENT_NEWLINE && !PIECE_SYMBOLS.iter().any(|(s, _)| *s == b) => b,
            _ => b'?',
        })
        .collect()
}

fn latin1_text(bytes: &[u8]) -> String {
    bytes.iter().map(|b| char::from(*b)).collect()
}

/// The players, event, site and round a record's texts give, by `rules`.
pub(super) fn roster(rules: Rules, player: &[u8], source: &[u8]) -> [String; 5] {
    match rules {
        Rules::RelayFirst => {
            let player = latin1_text(player);
            let (white, black) = match player.split_once(" - ") {
                Some(pair) => pair,
                None => player.split_once('-').unwrap_or((player.as_str(), "")),
            };
            let source = latin1_text(source);
            let mut parts = source.splitn(3, '|');
            let (event, site, round) = (parts.next(), parts.next(), parts.next());
            [
                white.into(),
                black.into(),
                event.unwrap_or("").into(),
                site.unwrap_or("").into(),
                round.unwrap_or("").into(),
            ]
        }
        Rules::ChessBase => {
            let name = |bytes: &[u8]| -> String {
                bytes
                    .iter()
                    .map(|b| match NAME_PIECES.iter().find(|(p, _)| p == b) {
                        Some((_, piece)) => *piece,
                        None => cp850_char(*b),
                    })
                    .collect()
            };
            let (white, black) = match player.iter().position(|b| *b == b'-') {
                Some(i) => (name(&player[..i]), name(&player[i + 1..])),
                None => (name(player), String::new()),
            };
            let white = white.replace(WHITE_HYPHEN, "-");
            let source: String = source.iter().map(|b| cp850_char(*b)).collect();
            let source = source.trim();
            let (event, round) = match source
                .strip_suffix(')')
                .and_then(|s| s.rsplit_once('('))
                .filter(|(_, r)| is_round(r.trim()))
            {
                Some((event, round)) => (event.trim_end(), round.trim()),
                None => (source, ""),
            };
            [white, black, event.into(), String::new(), round.into()]
        }
    }
}

/// A comment's text from its piece of the comment area (after its 0xFF).
pub(super) fn comment_text(rules: Rules, piece: &[u8]) -> String {
    let body = match piece {
        [a, b, c, 0, rest @ ..] if [a, b, c].iter().all(|x| **x < 0x20) => rest,
        _ => {
            let skip = piece.iter().take_while(|b| **b < 0x20).count();
            &piece[skip..]
        }
    };
    let mut text = String::with_capacity(body.len());
    for &b in body {
        if b == COMMENT_NEWLINE {
            text.push('\n');
        } else if let Some((_, s)) = PIECE_SYMBOLS.iter().find(|(sym, _)| *sym == b) {
            text.push_str(s);
        } else if rules == Rules::ChessBase {
            text.push(cp850_char(b));
        } else {
            text.push(char::from(b));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_text_is_code_page_850_with_chessbase_specials() {
        // '\r' dropped, '\n' as 0xFE; '▒' (177, ChessBase's king), '■' (0xFE), the no-break
        // space (0xFF) and '€' (not in the code page) as '?'; 'é' kept as 0x82.
        assert_eq!(
            comment_bytes("a▒b\r\n■\u{a0}€é"),
            [b'a', b'?', b'b', 0xFE, b'?', b'?', b'?', 0x82]
        );
        assert_eq!(
            comment_text(Rules::ChessBase, &[0, 0, 0, 0, b'a', b'?', 0xFE, 0x82]),
            "a?\né"
        );
        // Relay's first files are Latin-1.
        assert_eq!(comment_text(Rules::RelayFirst, &[0, 0, 0, 0, 0xE9]), "é");
        // No evaluations at all, or only leading control bytes.
        assert_eq!(comment_text(Rules::ChessBase, b"plain"), "plain");
        assert_eq!(comment_text(Rules::ChessBase, &[0x12, b'x']), "x");
        assert_eq!(comment_text(Rules::ChessBase, &[]), "");
    }
}
