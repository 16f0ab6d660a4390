//! What a TRF says, as plain values: the tournament, its players with a cell per round, and
//! its teams. Read by `read`, ordered into boards by `order`, written by `write`.

use std::collections::BTreeMap;
use std::fmt;

/// Points in halves, so sums are exact (a 3-1-0 system is not read: see the module text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HalfPoints(pub u32);

impl HalfPoints {
    pub const ZERO: HalfPoints = HalfPoints(0);
    pub const HALF: HalfPoints = HalfPoints(1);
    pub const ONE: HalfPoints = HalfPoints(2);

    /// "4.0", "11.5", "4", ".5"; `None` for anything else.
    pub fn parse(s: &str) -> Option<HalfPoints> {
        let s = s.trim();
        let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
        let whole: u32 = if whole.is_empty() {
            0
        } else {
            whole.parse().ok()?
        };
        let half = match frac.trim_end_matches('0') {
            "" => 0,
            "5" => 1,
            _ => return None,
        };
        Some(HalfPoints(whole * 2 + half))
    }

    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / 2.0
    }
}

impl fmt::Display for HalfPoints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.0 / 2, if self.0 % 2 == 1 { 5 } else { 0 })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Colour {
    White,
    Black,
    /// `-` beside an opponent: a forfeit for which no colours were drawn.
    Neither,
}

/// What a game of the file came to, as one player's cell says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Win,
    Draw,
    Loss,
    /// `+`: won by forfeit.
    ForfeitWin,
    /// `-`: lost by forfeit.
    ForfeitLoss,
    /// `W`/`D`/`L`: a game of less than one move (not rated).
    ShortWin,
    ShortDraw,
    ShortLoss,
}

impl Outcome {
    pub(super) fn read(c: char) -> Option<Option<Outcome>> {
        Some(Some(match c.to_ascii_uppercase() {
            '1' => Outcome::Win,
            '=' => Outcome::Draw,
            '0' => Outcome::Loss,
            '+' => Outcome::ForfeitWin,
            '-' => Outcome::ForfeitLoss,
            'W' => Outcome::ShortWin,
            'D' => Outcome::ShortDraw,
            'L' => Outcome::ShortLoss,
            ' ' => return Some(None),
            _ => return None,
        }))
    }

    pub fn code(self) -> char {
        match self {
            Outcome::Win => '1',
            Outcome::Draw => '=',
            Outcome::Loss => '0',
            Outcome::ForfeitWin => '+',
            Outcome::ForfeitLoss => '-',
            Outcome::ShortWin => 'W',
            Outcome::ShortDraw => 'D',
            Outcome::ShortLoss => 'L',
        }
    }

    pub fn points(self) -> HalfPoints {
        match self {
            Outcome::Win | Outcome::ForfeitWin | Outcome::ShortWin => HalfPoints::ONE,
            Outcome::Draw | Outcome::ShortDraw => HalfPoints::HALF,
            Outcome::Loss | Outcome::ForfeitLoss | Outcome::ShortLoss => HalfPoints::ZERO,
        }
    }

    /// The other player's side of the same game.
    pub fn other(self) -> Outcome {
        match self {
            Outcome::Win => Outcome::Loss,
            Outcome::Loss => Outcome::Win,
            Outcome::Draw => Outcome::Draw,
            Outcome::ForfeitWin => Outcome::ForfeitLoss,
            Outcome::ForfeitLoss => Outcome::ForfeitWin,
            Outcome::ShortWin => Outcome::ShortLoss,
            Outcome::ShortLoss => Outcome::ShortWin,
            Outcome::ShortDraw => Outcome::ShortDraw,
        }
    }
}

/// A round a player did not play against anyone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByeCode {
    /// `H`: half-point bye.
    Half,
    /// `F`: full-point bye.
    Full,
    /// `U`: the pairing-allocated bye.
    Pairing,
    /// `Z` (or blank): absent, no points.
    Zero,
    /// `+` against nobody: a forfeit win without an opponent in the file.
    ForfeitWin,
    /// `-` against nobody: not paired, no points.
    ForfeitLoss,
}

impl ByeCode {
    pub(super) fn read(c: char) -> Option<ByeCode> {
        Some(match c.to_ascii_uppercase() {
            'H' => ByeCode::Half,
            'F' => ByeCode::Full,
            'U' => ByeCode::Pairing,
            'Z' | ' ' => ByeCode::Zero,
            '+' => ByeCode::ForfeitWin,
            '-' => ByeCode::ForfeitLoss,
            _ => return None,
        })
    }

    pub fn code(self) -> char {
        match self {
            ByeCode::Half => 'H',
            ByeCode::Full => 'F',
            ByeCode::Pairing => 'U',
            ByeCode::Zero => 'Z',
            ByeCode::ForfeitWin => '+',
            ByeCode::ForfeitLoss => '-',
        }
    }

    /// From the letter relay stores and the API shows.
    pub fn from_code(c: &str) -> Option<ByeCode> {
        let mut it = c.chars();
        let first = it.next()?;
        if it.next().is_some() || first == ' ' {
            return None;
        }
        ByeCode::read(first)
    }

    /// Points with the standard scoring (FIDE's defaults; TRF-2026 162 and XXS are not read).
    pub fn points(self) -> HalfPoints {
        match self {
            ByeCode::Full | ByeCode::Pairing | ByeCode::ForfeitWin => HalfPoints::ONE,
            ByeCode::Half => HalfPoints::HALF,
            ByeCode::Zero | ByeCode::ForfeitLoss => HalfPoints::ZERO,
        }
    }
}

/// One player's cell for one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    Game {
        opponent: u32,
        colour: Colour,
        /// `None`: paired, not played yet.
        outcome: Option<Outcome>,
    },
    Bye {
        code: ByeCode,
        /// What the bye scored (a blank bye may have scored by the points column).
        points: HalfPoints,
    },
    /// Nothing written: a `Z` bye in a round that has games; in a round being paired (no
    /// games yet), a player who is there and waits for a pairing, as JaVaFo reads it.
    Blank,
}

impl Cell {
    /// What the cell scored, by the standard scoring (nothing for a game not played yet).
    pub fn points(&self) -> HalfPoints {
        match self {
            Cell::Game {
                outcome: Some(o), ..
            } => o.points(),
            Cell::Game { .. } | Cell::Blank => HalfPoints::ZERO,
            Cell::Bye { points, .. } => *points,
        }
    }
}

/// What a row of cells scored.
pub fn total(cells: &[Cell]) -> HalfPoints {
    HalfPoints(cells.iter().map(|c| c.points().0).sum())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sex {
    Male,
    Female,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrfPlayer {
    pub start_rank: u32,
    pub sex: Option<Sex>,
    /// GM, IM, WGM, FM, WIM, CM, WFM, WCM (old letters made whole), else as written.
    pub title: Option<String>,
    pub name: String,
    pub rating: Option<u32>,
    pub federation: Option<String>,
    pub fide_id: Option<u64>,
    /// As written (`1987/07/05`, `1978`, `01.01.1987`).
    pub birth: Option<String>,
    pub points: Option<HalfPoints>,
    pub rank: Option<u32>,
    /// One per round of the file, from round 1.
    pub cells: Vec<Cell>,
    /// The line it was read from (for messages).
    pub line: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrfTeam {
    /// The team pairing number (`310`), or the place of its `013` line from 1.
    pub number: u32,
    pub name: String,
    pub nickname: Option<String>,
    /// Start ranks in board order.
    pub players: Vec<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrfTournament {
    pub name: String,
    pub city: Option<String>,
    pub federation: Option<String>,
    /// ISO (YYYY-MM-DD) when the file's form reads, else as written.
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    /// 102, then every 112.
    pub arbiters: Vec<String>,
    /// 122 as written.
    pub time_control: Option<String>,
    /// 222 (TRF-2026's encoded time control), which is PGN's form.
    pub time_control_code: Option<String>,
    /// 142 or XXR.
    pub rounds_planned: Option<u32>,
    /// 132, ISO, per round from 1 (`None` where blank or unreadable).
    pub round_dates: Vec<Option<String>>,
    /// 092 as written.
    pub kind: Option<String>,
    /// 192 (TRF-2026's encoded type, e.g. `FIDE_TEAM_BAKU`) as written.
    pub kind_code: Option<String>,
    /// 202: the tie-break codes in order, as written (`BH/C1,BH,SB`).
    pub tiebreaks: Option<String>,
    /// 162 (individual scoring) from column 5, blanks kept so column 6 is its second
    /// character; the standings module reads it.
    pub scoring: Option<String>,
    /// TRF(x) `XXS` lines as written from column 5, in file order.
    pub scoring_xxs: Vec<String>,
    /// 362 (team match points) from column 5, blanks kept as for 162.
    pub team_scoring: Option<String>,
}

/// A record of rounds the players' cells cannot say (TRF-2026 `240`, `320`, `330`; read
/// and written by `records`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoundRecord {
    /// `240`: a full-point (`F`), half-point (`H`) or zero-point (`Z`) bye of `round` for
    /// each id.
    Bye {
        kind: char,
        round: u32,
        ids: Vec<u32>,
    },
    /// `320`: the pairing-allocated bye's points and the team given it in each round from 1
    /// (`None`: nobody).
    PairingByes {
        match_points: HalfPoints,
        game_points: HalfPoints,
        teams: Vec<Option<u32>>,
    },
    /// `330`: a match forfeited; `winner` by colour (`Some(true)`: White's team), `None` for
    /// a double forfeit.
    ForfeitedMatch {
        round: u32,
        white: u32,
        black: u32,
        white_won: Option<bool>,
    },
}

/// A whole file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trf {
    pub tournament: TrfTournament,
    /// By start rank.
    pub players: Vec<TrfPlayer>,
    pub teams: Vec<TrfTeam>,
    /// Byes by record, the teams' pairing-allocated byes and forfeited matches (`240`,
    /// `320`, `330`), in file order.
    pub round_records: Vec<RoundRecord>,
}

impl Trf {
    /// The number of rounds the file has cells for.
    pub fn rounds(&self) -> usize {
        self.players
            .iter()
            .map(|p| p.cells.len())
            .max()
            .unwrap_or(0)
    }

    pub fn player(&self, start_rank: u32) -> Option<&TrfPlayer> {
        self.players
            .binary_search_by_key(&start_rank, |p| p.start_rank)
            .ok()
            .map(|i| &self.players[i])
    }

    /// The team of each player that is in one.
    pub fn team_of(&self) -> BTreeMap<u32, &TrfTeam> {
        let mut m = BTreeMap::new();
        for t in &self.teams {
            for p in &t.players {
                m.entry(*p).or_insert(t);
            }
        }
        m
    }
}

/// Score of every player before each round (index 0: before round 1), by the standard
/// scoring; a bye counts what it scored.
pub fn scores_before(t: &Trf) -> BTreeMap<u32, Vec<HalfPoints>> {
    t.players
        .iter()
        .map(|p| {
            let mut s = 0;
            let mut v = vec![HalfPoints(0)];
            for c in &p.cells {
                s += c.points().0;
                v.push(HalfPoints(s));
            }
            (p.start_rank, v)
        })
        .collect()
}
