//! The team tie-break codes as record 202 writes them, read for the team computations:
//! `BASE[:MP|:GP][/Cn][/Mn][/Kn][/L±n][/P][/F]`, case as it comes.

/// Which of a team's two scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Score {
    /// Match points.
    Mp,
    /// Game points.
    Gp,
}

impl Score {
    pub fn other(self) -> Score {
        match self {
            Score::Mp => Score::Gp,
            Score::Gp => Score::Mp,
        }
    }
}

/// What a team code computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    /// `MP`, `GP`: a score itself.
    Total(Score),
    /// `MPvGP`: the score that is not the primary one (C.07 13.1).
    Secondary,
    /// `EMMSB`, `EMGSB`, `EGMSB`, `EGGSB` (C.07 13.2), `SB:MP` (= EMMSB), `SB:GP` (= EGGSB)
    /// and the 2024 edition's `ESB`: per opponent, the opponent's `.0` score times the `.1`
    /// score made against it.
    Esb(Score, Score),
    /// `EDE` and its chains `EDET`, `EDEB`, `EDEBT`, `EDEBB` (C.07 13.3): the tied teams'
    /// matches among themselves, then for two teams still equal the board codes named.
    Ede(&'static [Board]),
    /// `BC`, `TBR`, `BBE` (C.07 12).
    Board(Board),
    /// `SSSC` (C.07 13.4): the secondary score plus the primary Buchholz over a normaliser.
    Sssc,
    /// `BH:MP`, `BH:GP`: the opponents' scores.
    Buchholz(Score),
    /// `FB:MP`, `FB:GP`: Buchholz with the last round's matches counted as drawn.
    ForeBuchholz(Score),
    /// `AOB:MP`, `AOB:GP`: the opponents' own Buchholz, averaged.
    AverageBuchholz(Score),
    /// `WIN:MP`, `WIN:GP`: matches with the whole of that score, played or not.
    Wins(Score),
    /// `WON:MP`, `WON:GP`: the same, matches played only.
    Won(Score),
    /// `PS:MP`, `PS:GP`: the score after each round, summed.
    Progressive(Score),
    /// `KS:MP`, `KS:GP`: the score made against opponents with half the most one could
    /// score or more.
    Koya(Score),
}

/// A board code of C.07 Article 12.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Board {
    /// Board count: board number times the game points on it, summed; lower is better.
    Count,
    /// Top board result: the first board's points, then the next board's.
    Top,
    /// Bottom board elimination: all boards but the last, then all but the last two.
    Bottom,
}

/// A team code with its modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TeamCode {
    pub base: Base,
    /// `/Cn`: the `n` least contributions left out.
    pub cut: u32,
    /// `/Mn`: the `n` least and `n` greatest left out.
    pub median: u32,
    /// `/Kn`: SSSC's normaliser given.
    pub k: Option<u32>,
    /// `/L±n`: Koya's limit moved by `n` half points.
    pub limit_halves: i32,
    /// `/P`: a forfeited match counts as played.
    pub forfeits_played: bool,
    /// `/F`: a fore variant (the last round's matches as draws).
    pub fore: bool,
}

const EDE: &[Board] = &[];
const EDET: &[Board] = &[Board::Top];
const EDEB: &[Board] = &[Board::Bottom];
const EDEBT: &[Board] = &[Board::Count, Board::Top];
const EDEBB: &[Board] = &[Board::Count, Board::Bottom];

/// The team code `text` is, with `primary` the event's primary score; `None` for an
/// individual code or one that does not read.
pub(crate) fn parse(text: &str, primary: Score) -> Option<TeamCode> {
    let text = text.trim().to_ascii_uppercase();
    let mut parts = text.split('/');
    let head = parts.next()?;
    let (base, reference) = match head.split_once(':') {
        Some((b, "MP")) => (b, Some(Score::Mp)),
        Some((b, "GP")) => (b, Some(Score::Gp)),
        Some(_) => return None,
        None => (head, None),
    };
    use Score::{Gp, Mp};
    let base = match (base, reference) {
        ("MP", None) => Base::Total(Mp),
        ("GP", None) => Base::Total(Gp),
        ("MPVGP", None) => Base::Secondary,
        ("EMMSB", None) | ("SB", Some(Mp)) => Base::Esb(Mp, Mp),
        ("EMGSB", None) => Base::Esb(Mp, Gp),
        ("EGMSB", None) => Base::Esb(Gp, Mp),
        ("EGGSB", None) | ("SB", Some(Gp)) => Base::Esb(Gp, Gp),
        // The 2024 edition's single ESB: the opponent's primary score times the secondary
        // score made against it.
        ("ESB", None) => Base::Esb(primary, primary.other()),
        ("EDE", None) => Base::Ede(EDE),
        ("EDET", None) => Base::Ede(EDET),
        ("EDEB", None) => Base::Ede(EDEB),
        ("EDEBT", None) => Base::Ede(EDEBT),
        ("EDEBB", None) => Base::Ede(EDEBB),
        ("BC", None) => Base::Board(Board::Count),
        ("TBR", None) => Base::Board(Board::Top),
        ("BBE", None) => Base::Board(Board::Bottom),
        ("SSSC", None) => Base::Sssc,
        ("BH", Some(s)) => Base::Buchholz(s),
        ("FB", Some(s)) => Base::ForeBuchholz(s),
        ("AOB", Some(s)) => Base::AverageBuchholz(s),
        ("WIN", Some(s)) => Base::Wins(s),
        ("WON", Some(s)) => Base::Won(s),
        ("PS", Some(s)) => Base::Progressive(s),
        ("KS", Some(s)) => Base::Koya(s),
        _ => return None,
    };
    let mut code = TeamCode {
        base,
        cut: 0,
        median: 0,
        k: None,
        limit_halves: 0,
        forfeits_played: false,
        fore: false,
    };
    for m in parts {
        let (tag, n) = m.split_at(m.chars().next().map_or(0, char::len_utf8));
        match (tag, n) {
            ("C", n) => code.cut = n.parse().ok()?,
            ("M", n) => code.median = n.parse().ok()?,
            ("K", n) => code.k = Some(n.parse().ok().filter(|k| *k > 0)?),
            ("L", n) => code.limit_halves = n.trim_start_matches('+').parse().ok()?,
            ("P", "") => code.forfeits_played = true,
            ("F", "") => code.fore = true,
            _ => return None,
        }
    }
    Some(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected: Option<(Base, u32, bool)>) {
        let got = parse(text, Score::Mp).map(|c| (c.base, c.cut, c.forfeits_played));
        assert_eq!(got, expected, "{text}");
    }

    #[test]
    fn codes_read() {
        check("EDET/P", Some((Base::Ede(EDET), 0, true)));
        check(
            "EMGSB/C1/P",
            Some((Base::Esb(Score::Mp, Score::Gp), 1, true)),
        );
        check("BH:MP/C1/P", Some((Base::Buchholz(Score::Mp), 1, true)));
        check("MPvGP", Some((Base::Secondary, 0, false)));
        check("sb:gp", Some((Base::Esb(Score::Gp, Score::Gp), 0, false)));
        check("ESB", Some((Base::Esb(Score::Mp, Score::Gp), 0, false)));
        check("BH/C1", None);
        check("BH:XP", None);
        check("SB", None);
        check("BC/Q", None);
    }
}
