//! Reading a TRF's bytes (see the module text of `trf` for what is accepted and refused).

use super::dates;
use super::model::{
    ByeCode, Cell, Colour, HalfPoints, Outcome, Sex, Trf, TrfPlayer, TrfTeam, total,
};

/// A file that could not be read: where, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct TrfError {
    /// From 1; 0 for the file as a whole.
    pub line: usize,
    pub reason: String,
}

fn err(line: usize, reason: impl Into<String>) -> TrfError {
    TrfError {
        line,
        reason: reason.into(),
    }
}

/// The bytes as text: UTF-8 (a BOM dropped) when they are, else Latin-1, byte for character.
pub fn decode(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// Columns `from..=to` (counted from 1) of a line, or less where the line is shorter.
fn cols(line: &[char], from: usize, to: usize) -> String {
    let a = (from - 1).min(line.len());
    let b = to.min(line.len());
    line[a..b].iter().collect()
}

/// From column `from` to the end, leading blanks kept (column `from` is the string's first
/// character), for records whose fields sit at fixed columns; `None` when all blank.
fn cols_raw(line: &[char], from: usize) -> Option<String> {
    let s = cols(line, from, line.len());
    (!s.trim().is_empty()).then_some(s)
}

fn opt(s: String) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

fn number<T: std::str::FromStr>(line: usize, what: &str, s: &str) -> Result<Option<T>, TrfError> {
    let t = s.trim();
    if t.is_empty() {
        return Ok(None);
    }
    t.parse()
        .map(Some)
        .map_err(|_| err(line, format!("{what} {t:?} is not a number")))
}

/// GM, IM… from what files write: the old single letters and lower case included.
fn title(s: &str) -> Option<String> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    let whole = match t.to_ascii_lowercase().as_str() {
        "g" | "gm" => "GM",
        "m" | "im" => "IM",
        "f" | "fm" => "FM",
        "c" | "cm" => "CM",
        "wg" | "wgm" => "WGM",
        "wm" | "wim" => "WIM",
        "wf" | "wfm" => "WFM",
        "wc" | "wcm" => "WCM",
        _ => return Some(t.to_uppercase()),
    };
    Some(whole.to_string())
}

/// Reads a whole file (see the module text for what is accepted).
pub fn read_trf(bytes: &[u8]) -> Result<Trf, TrfError> {
    let text = decode(bytes);
    let mut t = Trf::default();
    let mut round_dates_raw: Option<(usize, Vec<char>)> = None;
    let mut teams_013 = 0u32;
    // TRF-2026 files carry both 013 and 310 lines for the same teams: 310 wins.
    let mut old_teams = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, raw) in text
        .split("\r\n")
        .flat_map(|l| l.split(['\r', '\n']))
        .enumerate()
    {
        let n = i + 1;
        let line: Vec<char> = raw
            .chars()
            .map(|c| if c == '\t' { ' ' } else { c })
            .collect();
        let end = line.iter().rposition(|c| *c != ' ').map_or(0, |p| p + 1);
        let line = &line[..end];
        if line.is_empty() {
            continue;
        }
        let code: String = line.iter().take(3).collect();
        let rest = || opt(cols(line, 5, line.len()));
        match code.as_str() {
            "###" => {}
            "001" => {
                let p = player(n, line)?;
                if !seen.insert(p.start_rank) {
                    return Err(err(n, format!("start rank {} twice", p.start_rank)));
                }
                t.players.push(p);
            }
            "012" => t.tournament.name = rest().unwrap_or_default(),
            "022" => t.tournament.city = rest(),
            "032" => t.tournament.federation = rest(),
            "042" => t.tournament.start_date = rest().map(|d| dates::iso_or_as_written(&d)),
            "052" => t.tournament.end_date = rest().map(|d| dates::iso_or_as_written(&d)),
            "092" => t.tournament.kind = rest(),
            "192" => t.tournament.kind_code = rest(),
            "202" => t.tournament.tiebreaks = rest(),
            "162" => t.tournament.scoring = cols_raw(line, 5),
            "362" => t.tournament.team_scoring = cols_raw(line, 5),
            "XXS" => t.tournament.scoring_xxs.extend(rest()),
            "102" | "112" => t.tournament.arbiters.extend(rest()),
            "122" => t.tournament.time_control = rest(),
            "222" => t.tournament.time_control_code = rest(),
            "132" => round_dates_raw = Some((n, line.to_vec())),
            "142" | "XXR" => {
                t.tournament.rounds_planned =
                    number(n, "the number of rounds", &cols(line, 5, line.len()))?;
            }
            "013" => {
                teams_013 += 1;
                let name = opt(cols(line, 5, 36)).unwrap_or_default();
                old_teams.push(TrfTeam {
                    number: teams_013,
                    name,
                    nickname: None,
                    players: ranks(n, line, 37)?,
                });
            }
            "310" => {
                let number = number(n, "the team number", &cols(line, 5, 7))?
                    .ok_or_else(|| err(n, "a team without a number"))?;
                t.teams.push(TrfTeam {
                    number,
                    name: opt(cols(line, 9, 40)).unwrap_or_default(),
                    nickname: opt(cols(line, 42, 46)),
                    players: ranks(n, line, 74)?,
                });
            }
            "240" | "320" | "330" => {
                if let Some(r) = super::records::read_record(line).map_err(|e| err(n, e))? {
                    t.round_records.push(r);
                }
            }
            c if c.len() == 3 && c.ends_with('2') && c.chars().all(|c| c.is_ascii_digit()) => {}
            c if c.len() == 3 && c.chars().all(|c| c.is_ascii_digit()) => {
                // The other numbered records (team records 300–802, 250, 260, 299): known
                // to the texts, not needed to run the event here.
            }
            c if c.len() == 3 && c.chars().all(|c| c.is_ascii_uppercase()) => {
                // National rating records (a federation's code) and JaVaFo's XX? lines.
            }
            _ => {
                return Err(err(n, format!("not a TRF record: {:?}", cols(line, 1, 20))));
            }
        }
    }
    if t.players.is_empty() {
        return Err(err(0, "no players (001 lines) in the file"));
    }
    if t.tournament.name.is_empty() {
        t.tournament.name = "Tournament".into();
    }
    if t.teams.is_empty() {
        t.teams = old_teams;
    }
    t.players.sort_by_key(|p| p.start_rank);
    if let Some((n, line)) = round_dates_raw {
        t.tournament.round_dates = dates::round_dates(
            &line,
            t.tournament.start_date.as_deref(),
            t.tournament.end_date.as_deref(),
        );
        let _ = n;
    }
    trim_padding(&mut t);
    check_games(&t)?;
    settle_blank_byes(&mut t);
    Ok(t)
}

/// Start ranks from column `from`, every five columns.
fn ranks(n: usize, line: &[char], from: usize) -> Result<Vec<u32>, TrfError> {
    let mut out = Vec::new();
    let mut c = from;
    while c <= line.len() {
        if let Some(r) = number::<u32>(n, "a team member's start rank", &cols(line, c, c + 3))?
            && r > 0
        {
            out.push(r);
        }
        c += 5;
    }
    Ok(out)
}

fn player(n: usize, line: &[char]) -> Result<TrfPlayer, TrfError> {
    let start_rank = number(n, "the start rank", &cols(line, 5, 8))?
        .filter(|&r: &u32| r > 0)
        .ok_or_else(|| err(n, "a player without a start rank"))?;
    let sex = match cols(line, 10, 10).trim() {
        "" => None,
        "m" | "M" => Some(Sex::Male),
        "w" | "W" | "f" | "F" => Some(Sex::Female),
        other => return Err(err(n, format!("sex {other:?} is not m or w"))),
    };
    let rating: Option<u32> = number(n, "the rating", &cols(line, 49, 52))?;
    let fide_id: Option<u64> = number(n, "the FIDE id", &cols(line, 58, 68))?;
    let points = cols(line, 81, 84);
    let points = if points.trim().is_empty() {
        None
    } else {
        Some(
            HalfPoints::parse(&points)
                .ok_or_else(|| err(n, format!("points {:?} do not read", points.trim())))?,
        )
    };
    let mut cells = Vec::new();
    let mut c = 92;
    while c <= line.len() {
        let cell = cols(line, c, c + 7);
        cells.push(read_cell(n, c, &cell)?);
        c += 10;
    }
    Ok(TrfPlayer {
        start_rank,
        sex,
        title: title(&cols(line, 11, 13)),
        name: cols(line, 15, 47).trim().to_string(),
        rating: rating.filter(|&r| r > 0),
        federation: opt(cols(line, 54, 56)),
        fide_id: fide_id.filter(|&i| i > 0),
        birth: opt(cols(line, 70, 79)),
        points,
        rank: number(n, "the rank", &cols(line, 86, 89))?,
        cells,
        line: n,
    })
}

/// One ten-column cell (its first eight columns); `at` is its first column, for messages.
fn read_cell(n: usize, at: usize, cell: &str) -> Result<Cell, TrfError> {
    let c: Vec<char> = cell.chars().chain(std::iter::repeat(' ')).take(8).collect();
    let opponent: String = c[0..4].iter().collect();
    let opponent: u32 = number(n, &format!("the opponent at column {at}"), &opponent)?.unwrap_or(0);
    let result = c[7];
    // Nothing written, or nobody with no result ("0000 -  ", "   -    "): blank, as the
    // text says (a `Z` unless the points say otherwise).
    if c.iter().all(|c| *c == ' ') || (opponent == 0 && result == ' ') {
        return Ok(Cell::Blank);
    }
    if opponent == 0 {
        let code = ByeCode::read(result).ok_or_else(|| {
            err(
                n,
                format!("result {result:?} at column {} is not a bye's", at + 7),
            )
        })?;
        return Ok(Cell::Bye {
            code,
            points: code.points(),
        });
    }
    let colour = match c[5].to_ascii_lowercase() {
        'w' => Colour::White,
        'b' => Colour::Black,
        '-' | ' ' => Colour::Neither,
        other => {
            return Err(err(
                n,
                format!(
                    "colour {other:?} at column {} (opponent {opponent}) is not w, b or -",
                    at + 5
                ),
            ));
        }
    };
    let outcome = Outcome::read(result).ok_or_else(|| {
        err(
            n,
            format!("result {result:?} at column {} is not a TRF result", at + 7),
        )
    })?;
    Ok(Cell::Game {
        opponent,
        colour,
        outcome,
    })
}

/// Blank cells after the last round anybody has a cell in are padding, not rounds.
fn trim_padding(t: &mut Trf) {
    let blank = |c: &Cell| *c == Cell::Blank;
    let rounds = t
        .players
        .iter()
        .map(|p| p.cells.iter().rposition(|c| !blank(c)).map_or(0, |i| i + 1))
        .max()
        .unwrap_or(0);
    for p in &mut t.players {
        p.cells.truncate(rounds);
        while p.cells.len() < rounds {
            p.cells.push(Cell::Blank);
        }
    }
}

/// Both players of every game name each other, on opposite colours, with results that fit.
fn check_games(t: &Trf) -> Result<(), TrfError> {
    for p in &t.players {
        for (r, cell) in p.cells.iter().enumerate() {
            let Cell::Game {
                opponent,
                colour,
                outcome,
            } = *cell
            else {
                continue;
            };
            let o = t.player(opponent).ok_or_else(|| {
                err(
                    p.line,
                    format!(
                        "round {}: opponent {opponent} is not among the players",
                        r + 1
                    ),
                )
            })?;
            if opponent == p.start_rank {
                return Err(err(
                    p.line,
                    format!("round {}: paired against themself", r + 1),
                ));
            }
            let fits = match o.cells.get(r) {
                Some(Cell::Game {
                    opponent: back,
                    colour: c2,
                    outcome: o2,
                }) => {
                    *back == p.start_rank
                        && (*c2 != colour || colour == Colour::Neither)
                        && (*c2 == Colour::Neither) == (colour == Colour::Neither)
                        && match (outcome, *o2) {
                            (None, None) => true,
                            // A double forfeit: both lost.
                            (Some(Outcome::ForfeitLoss), Some(Outcome::ForfeitLoss)) => true,
                            (Some(a), Some(b)) => a.other() == b,
                            _ => false,
                        }
                }
                _ => false,
            };
            if !fits {
                return Err(err(
                    p.line,
                    format!(
                        "round {}: start rank {} and start rank {opponent} (line {}) disagree about their game",
                        r + 1,
                        p.start_rank,
                        o.line
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Blank byes whose points the points column needs (real files score some as half a point)
/// become the byes they scored; the rest stay `Z`. Half points first: the missing points are
/// shared among the blanks as half-point byes as far as they go (two blanks and one point
/// missing are two half-point byes, not a full and a zero), full-point byes only for what
/// half points cannot make up.
fn settle_blank_byes(t: &mut Trf) {
    for p in &mut t.players {
        let Some(column) = p.points else { continue };
        let known = total(&p.cells).0;
        let missing = column.0.saturating_sub(known);
        if missing == 0 {
            continue;
        }
        let blanks: Vec<usize> = p
            .cells
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                matches!(
                    c,
                    Cell::Blank
                        | Cell::Bye {
                            code: ByeCode::Zero,
                            ..
                        }
                )
            })
            .map(|(i, _)| i)
            .collect();
        let n = blanks.len() as u32;
        // Each blank gives one half point; `full` of them give two, as few as will do.
        let full = missing.saturating_sub(n).min(n);
        let half = missing.saturating_sub(2 * full).min(n - full);
        for (k, &i) in blanks.iter().enumerate() {
            let k = k as u32;
            let code = if k < full {
                ByeCode::Full
            } else if k < full + half {
                ByeCode::Half
            } else {
                break;
            };
            p.cells[i] = Cell::Bye {
                code,
                points: code.points(),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trf::order::plan_rounds;

    /// A record with each text put at its column (from 1).
    fn rec(fields: &[(usize, &str)]) -> String {
        let mut line: Vec<char> = Vec::new();
        for (col, text) in fields {
            while line.len() < col - 1 {
                line.push(' ');
            }
            line.truncate(col - 1);
            line.extend(text.chars());
        }
        line.into_iter().collect()
    }

    fn small() -> String {
        [
            "012 Small Open".to_string(),
            "022 Town".into(),
            "042 2024/05/01".into(),
            rec(&[
                (1, "001"),
                (8, "1"),
                (10, "m"),
                (13, "g"),
                (15, "Alpha, Anna"),
                (49, "2500"),
                (54, "GER"),
                (62, "1234567"),
                (70, "1990/01/01"),
                (81, " 1.5"),
                (89, "1"),
                (95, "2 w 1"),
                (105, "3 b ="),
            ]),
            rec(&[
                (1, "001"),
                (8, "2"),
                (10, "w"),
                (15, "Beta, Ben"),
                (49, "2400"),
                (54, "FRA"),
                (81, " 0.5"),
                (89, "2"),
                (95, "1 b 0"),
                (102, "0000 - H"),
            ]),
            rec(&[
                (1, "001"),
                (8, "3"),
                (15, "Gamma, Gil"),
                (49, "0000"),
                (81, " 1.5"),
                (89, "3"),
                (92, "0000 - U"),
                (105, "1 w ="),
            ]),
        ]
        .join("\n")
            + "\n"
    }

    #[test]
    fn reads_players_games_and_byes() {
        let t = read_trf(small().as_bytes()).expect("test data");
        assert_eq!(t.tournament.name, "Small Open");
        assert_eq!(t.tournament.start_date.as_deref(), Some("2024-05-01"));
        assert_eq!(t.players.len(), 3);
        let a = &t.players[0];
        assert_eq!(a.title.as_deref(), Some("GM"));
        assert_eq!(a.sex, Some(Sex::Male));
        assert_eq!(a.fide_id, Some(1234567));
        assert_eq!(a.points, Some(HalfPoints(3)));
        assert_eq!(
            a.cells,
            vec![
                Cell::Game {
                    opponent: 2,
                    colour: Colour::White,
                    outcome: Some(Outcome::Win)
                },
                Cell::Game {
                    opponent: 3,
                    colour: Colour::Black,
                    outcome: Some(Outcome::Draw)
                }
            ]
        );
        assert_eq!(t.players[1].sex, Some(Sex::Female));
        assert_eq!(t.players[2].rating, None);
        assert_eq!(
            t.players[1].cells[1],
            Cell::Bye {
                code: ByeCode::Half,
                points: HalfPoints::HALF
            }
        );
        let plans = plan_rounds(&t);
        assert_eq!(plans[0].boards.len(), 1);
        assert_eq!(plans[0].byes, vec![(3, ByeCode::Pairing, HalfPoints::ONE)]);
        // Round 2: 1 (1 point) against 3 (1 point) on board 1; 2 has a half-point bye.
        assert_eq!((plans[1].boards[0].white, plans[1].boards[0].black), (3, 1));
    }

    #[test]
    fn line_ends_and_latin1_are_taken() {
        let small = small();
        let crlf = small.replace('\n', "\r\n");
        let cr = small.replace('\n', "\r");
        let plain = read_trf(small.as_bytes()).expect("test data");
        assert_eq!(read_trf(crlf.as_bytes()).expect("test data"), plain);
        assert_eq!(read_trf(cr.as_bytes()).expect("test data"), plain);
        // As Latin-1, é is one byte (the name stays in its columns).
        let mut latin = small.replace("Beta, Ben", "B\u{e9}ta, Ben").into_bytes();
        let at = latin
            .windows(2)
            .position(|w| w == [0xC3, 0xA9])
            .expect("test data");
        latin.splice(at..at + 2, [0xE9]);
        let t = read_trf(&latin).expect("test data");
        assert_eq!(t.players[1].name, "B\u{e9}ta, Ben");
        let mut bom = b"\xEF\xBB\xBF".to_vec();
        bom.extend_from_slice(small.as_bytes());
        assert_eq!(read_trf(&bom).expect("test data"), plain);
    }

    #[test]
    fn a_bad_line_is_named() {
        let small = small();
        let bad = small.replace("2 w 1", "2 x 1");
        let e = read_trf(bad.as_bytes()).expect_err("refused");
        assert_eq!(e.line, 4, "{e}");
        assert!(e.reason.contains("not w, b or -"), "{e}");
        let garbage = format!("{small}hello world\n");
        assert_eq!(read_trf(garbage.as_bytes()).expect_err("refused").line, 7);
        let disagree = small.replace("1 b 0", "1 b 1");
        let e = read_trf(disagree.as_bytes()).expect_err("refused");
        assert!(e.reason.contains("disagree"), "{e}");
        let unknown = small.replace("3 b =", "9 b =");
        assert!(
            read_trf(unknown.as_bytes())
                .expect_err("refused")
                .reason
                .contains("not among")
        );
        let twice = small.replace("001    2", "001    1");
        assert!(
            read_trf(twice.as_bytes())
                .expect_err("refused")
                .reason
                .contains("twice")
        );
        assert_eq!(read_trf(b"012 Nothing\n").expect_err("refused").line, 0);
    }

    #[test]
    fn a_blank_bye_that_scored_is_what_it_scored() {
        let f = [
            "012 T".to_string(),
            rec(&[
                (1, "001"),
                (8, "1"),
                (15, "A"),
                (81, " 1.5"),
                (95, "2 w 1"),
                (107, "-"),
            ]),
            rec(&[
                (1, "001"),
                (8, "2"),
                (15, "B"),
                (81, " 0.0"),
                (95, "1 b 0"),
                (107, "-"),
            ]),
            rec(&[
                (1, "001"),
                (8, "3"),
                (15, "C"),
                (81, " 1.0"),
                (95, "4 w ="),
                (105, "4 b ="),
            ]),
            rec(&[
                (1, "001"),
                (8, "4"),
                (15, "D"),
                (81, " 1.0"),
                (95, "3 b ="),
                (105, "3 w ="),
            ]),
        ]
        .join("\n");
        let t = read_trf(f.as_bytes()).expect("test data");
        assert_eq!(
            t.players[0].cells[1],
            Cell::Bye {
                code: ByeCode::Half,
                points: HalfPoints::HALF
            }
        );
        assert_eq!(t.players[1].cells[1], Cell::Blank);
        // A blank in a round with games is a zero-point bye of that round.
        let plans = plan_rounds(&t);
        assert_eq!(
            plans[1].byes,
            vec![
                (1, ByeCode::Half, HalfPoints::HALF),
                (2, ByeCode::Zero, HalfPoints::ZERO)
            ]
        );
    }

    #[test]
    fn blank_byes_share_the_missing_points_in_halves() {
        let row = |points: &str, cells: &[(usize, &str)]| {
            let mut f = vec![(1, "001"), (8, "1"), (15, "A"), (81, points)];
            f.extend_from_slice(cells);
            rec(&f)
        };
        let other = rec(&[
            (1, "001"),
            (8, "2"),
            (15, "B"),
            (81, " 0.0"),
            (95, "1 b 0"),
            (122, "0000 - Z"),
        ]);
        let codes = |points: &str| {
            let f = [
                "012 T".to_string(),
                row(points, &[(95, "2 w 1"), (107, "-"), (117, "-"), (127, "-")]),
                other.clone(),
            ]
            .join("\n");
            let t = read_trf(f.as_bytes()).expect("test data");
            t.players[0]
                .cells
                .iter()
                .map(|c| match c {
                    Cell::Bye { code, .. } => code.code(),
                    Cell::Blank => ' ',
                    Cell::Game { .. } => 'g',
                })
                .collect::<String>()
        };
        assert_eq!(codes(" 1.0"), "g   ");
        assert_eq!(codes(" 1.5"), "gH  ");
        assert_eq!(codes(" 2.0"), "gHH ");
        assert_eq!(codes(" 2.5"), "gHHH");
        assert_eq!(codes(" 3.0"), "gFHH");
        assert_eq!(codes(" 4.0"), "gFFF");
    }

    #[test]
    fn points_read_and_print() {
        assert_eq!(HalfPoints::parse("11.5"), Some(HalfPoints(23)));
        assert_eq!(HalfPoints::parse(" 4"), Some(HalfPoints(8)));
        assert_eq!(HalfPoints::parse(".5"), Some(HalfPoints(1)));
        assert_eq!(HalfPoints::parse("1.25"), None);
        assert_eq!(HalfPoints(23).to_string(), "11.5");
        assert_eq!(HalfPoints(8).to_string(), "4.0");
    }
}
