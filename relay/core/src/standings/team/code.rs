//! The team tie-break codes (read by [`codes`](crate::standings::codes)) as the team
//! computations take them.

use crate::standings::codes::{self, Code, TeamScore};

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
    /// `/Kn`: SSSC's normaliser given (C.07 13.4's "or by a different value").
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

/// What a tie-break code computes for a team, with `primary` the event's primary score;
/// `None` for an individual code.
pub(crate) fn team_code(code: &Code, primary: Score) -> Option<TeamCode> {
    use Score::{Gp, Mp};
    use codes::Base as B;
    let reference = code.team_score().map(|s| match s {
        TeamScore::Match => Mp,
        TeamScore::Game => Gp,
    });
    let base = match (code.base(), reference) {
        (B::Mp, _) => Base::Total(Mp),
        (B::Gp, _) => Base::Total(Gp),
        (B::MPvGP, _) => Base::Secondary,
        (B::Emmsb, _) => Base::Esb(Mp, Mp),
        (B::Emgsb, _) => Base::Esb(Mp, Gp),
        (B::Egmsb, _) => Base::Esb(Gp, Mp),
        (B::Eggsb, _) => Base::Esb(Gp, Gp),
        // Sonneborn-Berger over a team score: that score on both sides.
        (B::Sb, Some(s)) => Base::Esb(s, s),
        // The 2024 edition's single ESB: the opponent's primary score times the secondary
        // score made against it.
        (B::Esb, _) => Base::Esb(primary, primary.other()),
        (B::Ede, _) => Base::Ede(EDE),
        (B::Edet, _) => Base::Ede(EDET),
        (B::Edeb, _) => Base::Ede(EDEB),
        (B::Edebt, _) => Base::Ede(EDEBT),
        (B::Edebb, _) => Base::Ede(EDEBB),
        (B::Bc, _) => Base::Board(Board::Count),
        (B::Tbr, _) => Base::Board(Board::Top),
        (B::Bbe, _) => Base::Board(Board::Bottom),
        (B::Sssc, _) => Base::Sssc,
        (B::Bh, Some(s)) => Base::Buchholz(s),
        (B::Fb, Some(s)) => Base::ForeBuchholz(s),
        (B::Aob, Some(s)) => Base::AverageBuchholz(s),
        (B::Win, Some(s)) => Base::Wins(s),
        (B::Won, Some(s)) => Base::Won(s),
        (B::Ps, Some(s)) => Base::Progressive(s),
        (B::Ks, Some(s)) => Base::Koya(s),
        _ => return None,
    };
    Some(TeamCode {
        base,
        cut: code.cut().unwrap_or(0),
        median: code.median().unwrap_or(0),
        k: code.best(),
        limit_halves: code.limit_halves(),
        forfeits_played: code.forfeits_played(),
        fore: code.fore(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected: Option<(Base, u32, bool)>) {
        let code = Code::parse(text).expect("a code");
        let got = team_code(&code, Score::Mp).map(|c| (c.base, c.cut, c.forfeits_played));
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
        check("SB", None);
    }
}
