//! TRF-2026's records of rounds that the players' cells cannot say: byes given by record
//! (`240`: in a team event to teams, else to players), the teams' pairing-allocated byes
//! (`320`) and forfeited matches (`330`). A team event's standings need them: a team bye is
//! a match the team's players' cells do not hold.
//!
//! Read at fixed columns as the text gives them: `240` has its kind at 5, its round at 7–9
//! and ids at 11–14, 16–19, …; `320` the bye's match points at 5–8, game points at 10–13 and
//! a team per round at 15–17, 19–21, … (`000` none); `330` its kind at 5–6 (`+-` White's team
//! won, `-+` Black's, `--` both lost), its round at 8–10 and the teams at 12–14 and 16–18.

use super::model::{HalfPoints, RoundRecord};

fn cols(line: &[char], from: usize, to: usize) -> String {
    let a = (from - 1).min(line.len());
    let b = to.min(line.len());
    line[a..b].iter().collect::<String>().trim().to_string()
}

fn num(s: &str) -> Option<u32> {
    s.trim().parse().ok()
}

/// One line (tabs already blanks) as a record; `Err` names what does not read; `Ok(None)`
/// for a line of another record.
pub fn read_record(line: &[char]) -> Result<Option<RoundRecord>, String> {
    let code: String = line.iter().take(3).collect();
    Ok(Some(match code.as_str() {
        "240" => {
            let kind = line.get(4).copied().unwrap_or(' ').to_ascii_uppercase();
            if !matches!(kind, 'F' | 'H' | 'Z') {
                return Err(format!("a bye record of kind {kind:?} (F, H or Z)"));
            }
            let round = num(&cols(line, 7, 9)).ok_or("a bye record without its round")?;
            let mut ids = Vec::new();
            let mut at = 11;
            while at <= line.len() {
                let id = cols(line, at, at + 3);
                if !id.is_empty() {
                    ids.push(num(&id).ok_or_else(|| format!("a bye record's id {id:?}"))?);
                }
                at += 5;
            }
            RoundRecord::Bye { kind, round, ids }
        }
        "320" => {
            let points = |from, to| {
                let s = cols(line, from, to);
                HalfPoints::parse(&s).ok_or_else(|| format!("the bye's points {s:?}"))
            };
            let match_points = points(5, 8)?;
            let game_points = points(10, 13)?;
            let mut teams = Vec::new();
            let mut at = 15;
            while at <= line.len() {
                let t = cols(line, at, at + 2);
                teams.push(match num(&t) {
                    Some(0) => None,
                    Some(n) => Some(n),
                    None if t.is_empty() => None,
                    None => return Err(format!("a team number {t:?}")),
                });
                at += 4;
            }
            while teams.last() == Some(&None) {
                teams.pop();
            }
            RoundRecord::PairingByes {
                match_points,
                game_points,
                teams,
            }
        }
        "330" => {
            let white_won = match cols(line, 5, 6).as_str() {
                "+-" => Some(true),
                "-+" => Some(false),
                "--" => None,
                k => return Err(format!("a forfeited match of kind {k:?} (+-, -+ or --)")),
            };
            let n = |from, to, what: &str| {
                num(&cols(line, from, to)).ok_or_else(|| format!("a forfeited match's {what}"))
            };
            RoundRecord::ForfeitedMatch {
                round: n(8, 10, "round")?,
                white: n(12, 14, "white team")?,
                black: n(16, 18, "black team")?,
                white_won,
            }
        }
        _ => return Ok(None),
    }))
}

/// A record as a line of the file (what [`read_record`] reads back).
pub fn write_record(r: &RoundRecord) -> String {
    match r {
        RoundRecord::Bye { kind, round, ids } => {
            let mut s = format!("240 {kind} {round:>3}");
            for id in ids {
                s.push_str(&format!(" {id:>4}"));
            }
            s
        }
        RoundRecord::PairingByes {
            match_points,
            game_points,
            teams,
        } => {
            // (HalfPoints' Display takes no width: padded as text.)
            let mut s = format!(
                "320 {:>4} {:>4}",
                match_points.to_string(),
                game_points.to_string()
            );
            for t in teams {
                s.push_str(&format!(" {:>3}", t.unwrap_or(0)));
            }
            s
        }
        RoundRecord::ForfeitedMatch {
            round,
            white,
            black,
            white_won,
        } => {
            let kind = match white_won {
                Some(true) => "+-",
                Some(false) => "-+",
                None => "--",
            };
            format!("330 {kind} {round:>3} {white:>3} {black:>3}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str) -> RoundRecord {
        let line: Vec<char> = s.chars().collect();
        read_record(&line).expect("reads").expect("a record")
    }

    #[test]
    fn the_team_files_records_read_and_write_back() {
        for line in [
            "240 H   3   26   47",
            "320  1.0  2.0  50  49   0  46",
            "330 +-   4  23  33",
            "330 --   6  24   2",
        ] {
            let r = read(line);
            assert_eq!(read(&write_record(&r)), r, "{line}");
        }
        assert_eq!(
            read("240 H   3   26   47"),
            RoundRecord::Bye {
                kind: 'H',
                round: 3,
                ids: vec![26, 47]
            }
        );
        match read("320  1    2.0          50  49") {
            RoundRecord::PairingByes {
                match_points,
                game_points,
                teams,
            } => {
                assert_eq!((match_points, game_points), (HalfPoints(2), HalfPoints(4)));
                assert_eq!(teams, vec![None, None, Some(50), Some(49)]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_record_that_does_not_read_is_an_error() {
        for bad in [
            "240 Q   3   26",
            "240 H   x   26",
            "330 ++   4  23  33",
            "320  x",
        ] {
            let line: Vec<char> = bad.chars().collect();
            assert!(read_record(&line).is_err(), "{bad}");
        }
    }
}
