//! A move's comment, read: the clock commands of the PGN clock supplement (`[%clk]`,
//! `[%emt]`) in every form seen in real files, taken out of the text, and the rest of the
//! text with its whitespace runs made single spaces. A malformed clock is dropped, never a
//! reason to refuse the game.

use crate::clock_time::ClockTime;

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
pub(super) struct CommentParts {
    pub(super) clk: Option<ClockTime>,
    pub(super) emt: Option<ClockTime>,
    /// Everything else, whitespace runs collapsed to one space.
    pub(super) text: String,
}

pub(super) fn split_comment(raw: &str) -> CommentParts {
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
}
