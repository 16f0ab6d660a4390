//! The archival order of PGN files (PGN standard §12): games sorted by Date, Event, Site,
//! Round, White, Black, Result and finally the movetext itself.

use crate::game::Game;
use std::cmp::Ordering;

/// Where a game goes in an archive (the movetext is compared separately: see [`compare`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ArchiveKey {
    /// Year, month, day; a `?` digit counts as 0.
    pub date: (u32, u32, u32),
    pub event: String,
    pub site: String,
    /// `?` before `-` before any number; a number by its integer value.
    pub round: (u8, u64),
    pub white: String,
    pub black: String,
    pub result: String,
}

fn date_key(d: &str) -> (u32, u32, u32) {
    let mut parts = d.split('.').map(|p| {
        p.chars()
            .map(|c| c.to_digit(10).unwrap_or(0))
            .fold(0u32, |n, d| n.saturating_mul(10).saturating_add(d))
    });
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

fn round_key(r: &str) -> (u8, u64) {
    let r = r.trim();
    if r.is_empty() || r == "?" {
        return (0, 0);
    }
    if r == "-" {
        return (1, 0);
    }
    // "The integer used to denote the playing round": the leading digits ("3.1" is round 3).
    let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
    (2, digits.parse().unwrap_or(0))
}

/// The key of a game with the tags it has (the Seven Tag Roster's defaults where missing).
pub fn archive_key(g: &Game) -> ArchiveKey {
    let tag = |name: &str, default: &str| g.tags.get(name).unwrap_or(default).to_string();
    ArchiveKey {
        date: date_key(&tag("Date", "????.??.??")),
        event: tag("Event", "?"),
        site: tag("Site", "?"),
        round: round_key(&tag("Round", "?")),
        white: tag("White", "?"),
        black: tag("Black", "?"),
        result: g.result.to_string(),
    }
}

/// The movetext of a game as written (everything after the tag section).
pub fn movetext(written: &str) -> &str {
    written.split_once("\n\n").map_or(written, |(_, m)| m)
}

/// §12's order of two written games with their keys: the keys, then the movetext in ASCII
/// order (spaces and newlines included).
pub fn compare(a: (&ArchiveKey, &str), b: (&ArchiveKey, &str)) -> Ordering {
    a.0.cmp(b.0)
        .then_with(|| movetext(a.1).as_bytes().cmp(movetext(b.1).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_with_unknown_digits_and_rounds_order_as_section_12_says() {
        assert!(date_key("1992.??.??") < date_key("1992.01.01"));
        assert!(date_key("????.??.??") < date_key("0001.01.01"));
        assert_eq!(date_key("2017.01.14"), (2017, 1, 14));
        let mut rounds = vec!["10", "-", "2", "?", "3.1"];
        rounds.sort_by_key(|r| round_key(r));
        assert_eq!(rounds, ["?", "-", "2", "3.1", "10"]);
    }
}
