//! Tie-break codes as TRF-2026 record 202 writes them: a base (`BH`, `SB`, `EDE`…), for a team
//! event perhaps the team score it is taken over (`BH:MP`, `BH:GP`), then modifiers, each after
//! a `/`, in this order when written back:
//!
//! - `/Cn`: cut the n least significant values (`BH/C1`, `ARO/C2`, `PS/C1`);
//! - `/Mn`: median, cut the n least and the n most significant values (`BH/M1`);
//! - `/L±n`: Koya's limit moved by n half points (`KS/L-1`);
//! - `/Kn`: SSSC's normaliser given (`SSSC/K3`; C.07 13.4);
//! - `/P`: forfeits counted as played games;
//! - `/F`: taken "fore", as if every game of the last round were a draw (`BH/F` is `FB`);
//! - `/R`: reversed order (`TPN/R`, `RTNG/R`).
//!
//! Reading takes any letter case and blanks around; [`fmt::Display`] writes the canonical form.
//! Which modifier a base takes follows C.07's table of codes: a cut or a median only where the
//! regulation names one, `/P` only where forfeits can change the value.

use std::fmt;

/// What a code counts, before modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Base {
    // Individual (C.07 Articles 6–10).
    /// Direct encounter (an order among the tied, no number).
    De,
    /// Rounds won, with or without playing.
    Win,
    /// Games won over the board.
    Won,
    /// Games played with black.
    Bpg,
    /// Games won with black.
    Bwg,
    /// Rounds played or elected to play.
    Rep,
    /// Standard points (rounds scoring more than the opponent, or than a draw).
    Std,
    /// Progressive score.
    Ps,
    /// Tournament pairing number (an order, no number).
    Tpn,
    /// Buchholz.
    Bh,
    /// Average of the opponents' Buchholz.
    Aob,
    /// Fore Buchholz.
    Fb,
    /// Sonneborn-Berger.
    Sb,
    /// Koya.
    Ks,
    /// Average rating of the opponents.
    Aro,
    /// Tournament performance rating.
    Tpr,
    /// Perfect tournament performance.
    Ptp,
    /// Average of the opponents' performance ratings.
    Apro,
    /// Average of the opponents' perfect performances.
    Appo,
    /// The player's own rating.
    Rtng,
    // Team (C.07 Articles 11–13).
    /// Match points.
    Mp,
    /// Game points.
    Gp,
    /// Extended direct encounter.
    Ede,
    Edet,
    Edeb,
    Edebt,
    Edebb,
    /// Extended Sonneborn-Berger (and its match/game point forms).
    Esb,
    Emmsb,
    Emgsb,
    Egmsb,
    Eggsb,
    /// Board count.
    Bc,
    /// Top board result.
    Tbr,
    /// Bottom board elimination.
    Bbe,
    /// Match points versus game points.
    MPvGP,
    /// Sum of the best scores of the team's players.
    Sssc,
}

use Base::*;

/// Every base with its canonical spelling.
const BASES: &[(Base, &str)] = &[
    (De, "DE"),
    (Win, "WIN"),
    (Won, "WON"),
    (Bpg, "BPG"),
    (Bwg, "BWG"),
    (Rep, "REP"),
    (Std, "STD"),
    (Ps, "PS"),
    (Tpn, "TPN"),
    (Bh, "BH"),
    (Aob, "AOB"),
    (Fb, "FB"),
    (Sb, "SB"),
    (Ks, "KS"),
    (Aro, "ARO"),
    (Tpr, "TPR"),
    (Ptp, "PTP"),
    (Apro, "APRO"),
    (Appo, "APPO"),
    (Rtng, "RTNG"),
    (Mp, "MP"),
    (Gp, "GP"),
    (Ede, "EDE"),
    (Edet, "EDET"),
    (Edeb, "EDEB"),
    (Edebt, "EDEBT"),
    (Edebb, "EDEBB"),
    (Esb, "ESB"),
    (Emmsb, "EMMSB"),
    (Emgsb, "EMGSB"),
    (Egmsb, "EGMSB"),
    (Eggsb, "EGGSB"),
    (Bc, "BC"),
    (Tbr, "TBR"),
    (Bbe, "BBE"),
    (MPvGP, "MPvGP"),
    (Sssc, "SSSC"),
];

impl Base {
    /// As 202 writes it (`BH`, `MPvGP`).
    pub fn as_str(self) -> &'static str {
        BASES
            .iter()
            .find(|(b, _)| *b == self)
            .map_or("?", |(_, s)| s)
    }

    /// From any letter case.
    pub fn from_name(s: &str) -> Option<Base> {
        BASES
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(s))
            .map(|(b, _)| *b)
    }

    /// A base that ranks teams only.
    pub fn is_team_only(self) -> bool {
        matches!(
            self,
            Mp | Gp
                | Ede
                | Edet
                | Edeb
                | Edebt
                | Edebb
                | Esb
                | Emmsb
                | Emgsb
                | Egmsb
                | Eggsb
                | Bc
                | Tbr
                | Bbe
                | MPvGP
                | Sssc
        )
    }

    /// An order among players rather than a number of their own (DE, TPN).
    pub fn is_order_only(self) -> bool {
        matches!(self, De | Tpn)
    }

    /// An individual base a team event may take over match or game points (`BH:MP`).
    fn takes_team_score(self) -> bool {
        matches!(self, Win | Won | Ps | Bh | Aob | Fb | Sb | Ks)
    }
}

/// The team score a team code is taken over: `:MP` or `:GP`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TeamScore {
    Match,
    Game,
}

impl TeamScore {
    pub fn as_str(self) -> &'static str {
        match self {
            TeamScore::Match => "MP",
            TeamScore::Game => "GP",
        }
    }
}

/// One tie-break with its modifiers, e.g. `BH/C1`, `SB`, `BH:MP/C1/P`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Code {
    base: Base,
    team_score: Option<TeamScore>,
    cut: Option<u32>,
    median: Option<u32>,
    limit: i32,
    best: Option<u32>,
    forfeits_played: bool,
    fore: bool,
    reverse: bool,
}

/// A code that does not read, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CodeError(pub String);

fn fail<T>(code: &str, why: impl fmt::Display) -> Result<T, CodeError> {
    Err(CodeError(format!("tie-break {code:?}: {why}")))
}

/// The largest n a cut, median or team count may have.
const MAX_N: u32 = 64;

fn number(code: &str, m: &str, digits: &str) -> Result<u32, CodeError> {
    match digits.parse::<u32>() {
        Ok(n) if (1..=MAX_N).contains(&n) => Ok(n),
        _ => fail(
            code,
            format_args!("/{m} needs a number from 1 to {MAX_N} (as in /{m}1)"),
        ),
    }
}

impl Code {
    /// One code as 202 has it (any letter case).
    pub fn parse(s: &str) -> Result<Code, CodeError> {
        let text = s.trim();
        if text.is_empty() {
            return fail(text, "empty");
        }
        let mut parts = text.split('/');
        let head = parts.next().unwrap_or_default();
        let (name, team_score) = match head.split_once(':') {
            Some((name, q)) => {
                let q = match q.to_ascii_uppercase().as_str() {
                    "MP" => TeamScore::Match,
                    "GP" => TeamScore::Game,
                    _ => return fail(text, format_args!("\":{q}\" is not :MP or :GP")),
                };
                (name, Some(q))
            }
            None => (head, None),
        };
        let Some(base) = Base::from_name(name.trim()) else {
            return fail(
                text,
                format_args!("{:?} is not a FIDE tie-break code", name.trim()),
            );
        };
        if team_score.is_some() && !base.takes_team_score() {
            return fail(
                text,
                format_args!("{} is not taken over :MP or :GP", base.as_str()),
            );
        }
        let mut code = Code {
            base,
            team_score,
            cut: None,
            median: None,
            limit: 0,
            best: None,
            forfeits_played: false,
            fore: false,
            reverse: false,
        };
        for m in parts {
            let m = m.trim().to_ascii_uppercase();
            let twice = || fail(text, format_args!("/{} twice", &m[..1.min(m.len())]));
            match m.as_bytes().first() {
                None => return fail(text, "an empty modifier (a '/' with nothing after it)"),
                Some(b'C') => {
                    if code.cut.is_some() {
                        return twice();
                    }
                    code.cut = Some(number(text, "C", &m[1..])?);
                }
                Some(b'M') => {
                    if code.median.is_some() {
                        return twice();
                    }
                    code.median = Some(number(text, "M", &m[1..])?);
                }
                Some(b'K') => {
                    if code.best.is_some() {
                        return twice();
                    }
                    code.best = Some(number(text, "K", &m[1..])?);
                }
                Some(b'L') => {
                    if code.limit != 0 {
                        return twice();
                    }
                    let n: i32 = m[1..].trim_start_matches('+').parse().unwrap_or(0);
                    if n == 0 || n.unsigned_abs() > MAX_N {
                        return fail(text, "/L needs a number of half points, as in /L-1 or /L+2");
                    }
                    code.limit = n;
                }
                Some(_) if m == "P" || m == "F" || m == "R" => {
                    let flag = match m.as_str() {
                        "P" => &mut code.forfeits_played,
                        "F" => &mut code.fore,
                        _ => &mut code.reverse,
                    };
                    if *flag {
                        return twice();
                    }
                    *flag = true;
                }
                Some(_) => return fail(text, format_args!("\"/{m}\" is not a modifier")),
            }
        }
        code.check(text)?;
        Ok(code)
    }

    /// Which modifiers the base takes (C.07's code table).
    fn check(&self, text: &str) -> Result<(), CodeError> {
        let b = self.base;
        let name = b.as_str();
        if self.cut.is_some() && self.median.is_some() {
            return fail(text, "a cut (/C) and a median (/M) together");
        }
        let team = b.is_team_only();
        let cut_ok = if team {
            matches!(b, Esb | Emmsb | Emgsb | Egmsb | Eggsb | Sssc)
                && self.cut.is_none_or(|n| n <= 2)
        } else {
            matches!(b, Bh | Sb | Ps | Aro | Fb)
        };
        if self.cut.is_some() && !cut_ok {
            return fail(text, format_args!("{name} takes no cut"));
        }
        if self.median.is_some() && !matches!(b, Bh | Aro | Fb) {
            return fail(text, format_args!("{name} takes no median"));
        }
        if self.limit != 0 && b != Ks {
            return fail(text, "only KS takes a limit (/L)");
        }
        if self.best.is_some() && b != Sssc {
            return fail(text, "only SSSC takes /K");
        }
        let p_ok = if team {
            !matches!(b, Bc | Tbr | Bbe | MPvGP | Mp | Gp)
        } else {
            matches!(b, De | Bh | Sb | Fb)
        };
        if self.forfeits_played && !p_ok {
            return fail(text, format_args!("{name} takes no /P"));
        }
        if self.fore && !matches!(b, Bh | Aob | Sssc) {
            return fail(text, format_args!("{name} takes no /F"));
        }
        if self.reverse && !matches!(b, Tpn | Rtng) {
            return fail(text, format_args!("{name} takes no /R"));
        }
        Ok(())
    }

    /// A team tie-break (ranks teams, not players): a team base, or an individual one taken
    /// over match or game points.
    pub fn is_team(&self) -> bool {
        self.base.is_team_only() || self.team_score.is_some()
    }

    pub fn base(&self) -> Base {
        self.base
    }

    /// The base's name as 202 writes it (`BH`, `MPvGP`).
    pub fn name(&self) -> &'static str {
        self.base.as_str()
    }

    /// `:MP` or `:GP`.
    pub fn team_score(&self) -> Option<TeamScore> {
        self.team_score
    }

    /// `/Cn`.
    pub fn cut(&self) -> Option<u32> {
        self.cut
    }

    /// `/Mn`.
    pub fn median(&self) -> Option<u32> {
        self.median
    }

    /// `/L±n`: Koya's limit moved by this many half points (0 without).
    pub fn limit_halves(&self) -> i32 {
        self.limit
    }

    /// `/Kn`.
    pub fn best(&self) -> Option<u32> {
        self.best
    }

    /// `/P`: forfeits count as played games.
    pub fn forfeits_played(&self) -> bool {
        self.forfeits_played
    }

    /// `/F`: fore (the last round's games as draws).
    pub fn fore(&self) -> bool {
        self.fore
    }

    /// `/R`: reversed order.
    pub fn reverse(&self) -> bool {
        self.reverse
    }

    /// An order among players and no number of its own (DE, TPN).
    pub fn is_order_only(&self) -> bool {
        self.base.is_order_only()
    }
}

impl std::str::FromStr for Code {
    type Err = CodeError;
    fn from_str(s: &str) -> Result<Code, CodeError> {
        Code::parse(s)
    }
}

/// A comma-separated list as record 202 has it.
pub fn parse_list(s: &str) -> Result<Vec<Code>, CodeError> {
    s.split(',')
        .filter(|c| !c.trim().is_empty())
        .map(Code::parse)
        .collect()
}

/// The list written back as 202 has it.
pub fn write_list(codes: &[Code]) -> String {
    codes
        .iter()
        .map(Code::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Every base code relay knows, with what it is, for a chooser (individual codes first, then
/// the team codes). Modifiers are in [`known_modifiers`].
pub fn known() -> &'static [(&'static str, &'static str)] {
    &[
        ("BH", "Buchholz: the sum of the opponents' scores"),
        (
            "SB",
            "Sonneborn-Berger: the opponents' scores, each times the points scored against them",
        ),
        (
            "DE",
            "Direct encounter: the games among the players still equal",
        ),
        (
            "WIN",
            "Rounds won, over the board or not (byes and forfeits that score a win)",
        ),
        ("WON", "Games won over the board"),
        ("BPG", "Games played with black"),
        ("BWG", "Games won with black"),
        (
            "REP",
            "Rounds played or elected to play (requested byes and forfeit losses not)",
        ),
        (
            "STD",
            "Standard points: a point for each round scoring more than the opponent, a half for equal",
        ),
        (
            "PS",
            "Progressive score: the sum of the running score after each round",
        ),
        (
            "KS",
            "Koya: points against the opponents with at least half the possible score",
        ),
        ("AOB", "Average of the opponents' Buchholz"),
        (
            "FB",
            "Fore Buchholz: Buchholz as if every game of the last round were a draw",
        ),
        (
            "ARO",
            "Average rating of the opponents played over the board",
        ),
        ("TPR", "Tournament performance rating"),
        (
            "PTP",
            "Perfect tournament performance: the lowest rating expected to score as much",
        ),
        ("APRO", "Average of the opponents' performance ratings"),
        ("APPO", "Average of the opponents' perfect performances"),
        ("RTNG", "The player's own rating"),
        ("TPN", "Tournament pairing number: the lower first"),
        ("MP", "Team: match points"),
        ("GP", "Team: game points"),
        ("EDE", "Team: extended direct encounter"),
        (
            "EDET",
            "Team: extended direct encounter, then the team tie-breaks",
        ),
        ("ESB", "Team: extended Sonneborn-Berger"),
        (
            "EMMSB",
            "Team: extended Sonneborn-Berger, match points times opponents' match points",
        ),
        (
            "EMGSB",
            "Team: extended Sonneborn-Berger, match points times opponents' game points",
        ),
        (
            "EGMSB",
            "Team: extended Sonneborn-Berger, game points times opponents' match points",
        ),
        (
            "EGGSB",
            "Team: extended Sonneborn-Berger, game points times opponents' game points",
        ),
        ("BC", "Team: board count"),
        ("TBR", "Team: top board result"),
        ("BBE", "Team: bottom board elimination"),
        ("MPvGP", "Team: match points against game points"),
        (
            "SSSC",
            "Team: strength of schedule (the secondary score plus the Buchholz of the primary over a normaliser)",
        ),
    ]
}

/// The modifiers, as a chooser offers them.
pub fn known_modifiers() -> &'static [(&'static str, &'static str)] {
    &[
        (
            "/C1",
            "Cut 1: without the least significant value (/C2: the two least)",
        ),
        (
            "/M1",
            "Median 1: without the least and the most significant value (/M2: two each)",
        ),
        (
            "/L-1",
            "Koya's limit lowered by half a point (/L+1: raised)",
        ),
        ("/P", "Forfeits counted as played games"),
        ("/F", "Fore: as if every game of the last round were a draw"),
        ("/R", "Reversed order"),
        (":MP", "Team: over match points"),
        (":GP", "Team: over game points"),
    ]
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.base.as_str())?;
        if let Some(q) = self.team_score {
            write!(f, ":{}", q.as_str())?;
        }
        if let Some(n) = self.cut {
            write!(f, "/C{n}")?;
        }
        if let Some(n) = self.median {
            write!(f, "/M{n}")?;
        }
        if self.limit != 0 {
            write!(f, "/L{:+}", self.limit)?;
        }
        if let Some(n) = self.best {
            write!(f, "/K{n}")?;
        }
        for (on, m) in [
            (self.forfeits_played, "/P"),
            (self.fore, "/F"),
            (self.reverse, "/R"),
        ] {
            if on {
                f.write_str(m)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, canonical: &str) {
        let c = Code::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(c.to_string(), canonical, "{input}");
        assert_eq!(
            Code::parse(canonical).ok(),
            Some(c),
            "{canonical} round trip"
        );
    }

    fn refused(input: &str, says: &str) {
        let e = Code::parse(input).expect_err(input);
        assert!(e.0.contains(says), "{input}: {e}");
    }

    #[test]
    fn codes_read_and_write_as_202_has_them() {
        for c in [
            "BH",
            "BH/C1",
            "BH/C2",
            "BH/M1",
            "BH/M2",
            "SB",
            "SB/C1",
            "SB/C2",
            "PS",
            "PS/C1",
            "DE",
            "DE/P",
            "WIN",
            "WON",
            "BWG",
            "BPG",
            "REP",
            "STD",
            "ARO",
            "ARO/C1",
            "ARO/M1",
            "TPR",
            "PTP",
            "APRO",
            "APPO",
            "KS",
            "KS/L-1",
            "KS/L+2",
            "AOB",
            "AOB/F",
            "FB",
            "FB/C1",
            "BH/F",
            "TPN",
            "TPN/R",
            "RTNG",
            "RTNG/R",
            "BH/C1/P",
            "SB/P",
            // Team codes, for the team standings.
            "MP",
            "GP",
            "EDE",
            "EDET",
            "EDET/P",
            "ESB",
            "EMGSB",
            "EMGSB/C1/P",
            "BH:MP",
            "BH:GP",
            "BH:MP/C1/P",
            "MPvGP",
            "SB:MP",
            "BC",
            "TBR",
            "BBE",
            "SSSC",
            "SSSC/K3",
            "SSSC/C1",
            "WIN:MP",
        ] {
            check(c, c);
        }
        check(" bh/c1 ", "BH/C1");
        check("mpvgp", "MPvGP");
        check("BH/P/C1", "BH/C1/P");
        check("ks/l1", "KS/L+1");
    }

    #[test]
    fn accessors_say_what_team_standings_need() {
        let c = Code::parse("BH:MP/C1/P").expect("reads");
        assert_eq!(c.base(), Base::Bh);
        assert_eq!(c.name(), "BH");
        assert_eq!(c.team_score(), Some(TeamScore::Match));
        assert_eq!(c.cut(), Some(1));
        assert!(c.forfeits_played() && c.is_team() && !c.fore());
        let e = Code::parse("EMGSB/C1/P").expect("reads");
        assert!(e.is_team() && e.base() == Base::Emgsb && e.cut() == Some(1));
        assert!(!Code::parse("BH/C1").expect("reads").is_team());
        assert_eq!(Code::parse("KS/L-1").expect("reads").limit_halves(), -1);
        assert!(Code::parse("DE").expect("reads").is_order_only());
    }

    #[test]
    fn what_does_not_read_is_named() {
        refused("XYZ", "not a FIDE tie-break code");
        refused("", "empty");
        refused("BH/X", "not a modifier");
        refused("BH/C", "a number");
        refused("BH/C1/C2", "twice");
        refused("SB/M1", "no median");
        refused("WIN/C1", "no cut");
        refused("ARO/P", "no /P");
        refused("BH/C1/M1", "together");
        refused("SB/L1", "only KS");
        refused("BH:XP", ":MP or :GP");
        refused("TPR:MP", "not taken over");
        refused("BH/", "empty modifier");
        refused("BC/C1", "no cut");
        assert_eq!(
            parse_list("BH/C1, BH,SB")
                .map(|v| write_list(&v))
                .ok()
                .as_deref(),
            Some("BH/C1,BH,SB")
        );
        assert!(parse_list("BH,NOPE").is_err());
    }

    #[test]
    fn every_known_code_reads() {
        for (c, _) in known() {
            assert!(Code::parse(c).is_ok(), "{c}");
        }
    }
}
