//! Mending one movetext token: the ways real files spell moves that pgn-reader would not read
//! or would mis-read (typographic dashes, `0-0`, `e.p.`, `++`, a promotion without `=`, long
//! algebraic with a hyphen), and telling a token meant as a move from words and debris.

use pgn_reader::SanPlus;

/// The typographic dashes word processors put in castling and results (`O‑O`, `1–0`).
const DASHES: [char; 7] = [
    '\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}', '\u{2015}', '\u{2212}',
];

/// `token` with its typographic dashes made `-`.
pub(super) fn undashed(token: &str) -> String {
    token
        .chars()
        .map(|c| if DASHES.contains(&c) { '-' } else { c })
        .collect()
}

pub(super) fn is_result(token: &str) -> bool {
    matches!(token, "1-0" | "0-1" | "1/2-1/2" | "½-½")
}

/// What a movetext token becomes in the prepared text.
pub(super) enum Mended {
    Keep,
    Replace(String),
    /// Looks like a move, reads as none.
    Unreadable,
}

pub(super) fn parses(san: &str) -> bool {
    SanPlus::from_ascii(san.as_bytes()).is_ok()
}

/// Mends the ways real files spell moves that pgn-reader does not read. `next` is the text
/// after the token, for `e.p.` (whose dots end the token).
pub(super) fn mend_token(token: &str, next: &str) -> (Mended, usize) {
    // Typographic dashes in castling and results (`O‑O`, `1–0`).
    let dashed = undashed(token);
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
