//! A [`Trf`] as TRF16 text, columns as the text lays them out, lines ended CR LF (the text asks
//! for a CR; readers that split on LF take it too). The round dates go on a 132 line, the
//! number of rounds on JaVaFo's `XXR` (what a pairing program needs to pair the next round),
//! teams on `013` lines.

use super::dates;
use super::model::{Cell, Colour, Sex, Trf};
use std::fmt::Write;

fn fit(s: &str, width: usize) -> String {
    let s: String = s.chars().take(width).collect();
    format!("{s:<width$}")
}

/// YYYY/MM/DD from an ISO date; other text as it is.
fn slashed(d: &str) -> String {
    if dates::iso(d).as_deref() == Some(d) {
        d.replace('-', "/")
    } else {
        d.to_string()
    }
}

fn cell(c: &Cell) -> String {
    match c {
        Cell::Game {
            opponent,
            colour,
            outcome,
        } => format!(
            "{opponent:>4} {} {}",
            match colour {
                Colour::White => 'w',
                Colour::Black => 'b',
                Colour::Neither => '-',
            },
            outcome.map_or(' ', |o| o.code())
        ),
        Cell::Bye { code, .. } => format!("0000 - {}", code.code()),
        Cell::Blank => String::new(),
    }
}

/// The whole file.
pub fn write_trf(t: &Trf) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(s.trim_end());
        out.push_str("\r\n");
    };
    let tr = &t.tournament;
    line(format!("012 {}", tr.name));
    for (code, v) in [("022", &tr.city), ("032", &tr.federation)] {
        if let Some(v) = v {
            line(format!("{code} {v}"));
        }
    }
    for (code, v) in [("042", &tr.start_date), ("052", &tr.end_date)] {
        if let Some(v) = v {
            line(format!("{code} {}", slashed(v)));
        }
    }
    line(format!("062 {}", t.players.len()));
    line(format!(
        "072 {}",
        t.players.iter().filter(|p| p.rating.is_some()).count()
    ));
    if !t.teams.is_empty() {
        line(format!("082 {}", t.teams.len()));
    }
    if let Some(k) = &tr.kind {
        line(format!("092 {k}"));
    }
    for (i, a) in tr.arbiters.iter().enumerate() {
        line(format!("{} {a}", if i == 0 { "102" } else { "112" }));
    }
    if let Some(tc) = &tr.time_control {
        line(format!("122 {tc}"));
    }
    // Fixed-column records are written as they were kept (from column 5, blanks and all).
    for (code, v) in [("162", &tr.scoring), ("362", &tr.team_scoring)] {
        if let Some(v) = v {
            line(format!("{code} {v}"));
        }
    }
    if let Some(k) = &tr.kind_code {
        line(format!("192 {k}"));
    }
    if let Some(codes) = &tr.tiebreaks {
        line(format!("202 {codes}"));
    }
    if tr.round_dates.iter().any(Option::is_some) {
        let mut s = format!("{:<91}", "132");
        for d in &tr.round_dates {
            let d = d
                .as_deref()
                .and_then(|d| d.get(2..))
                .map(|d| d.replace('-', "/"))
                .unwrap_or_default();
            let _ = write!(s, "{d:<8}  ");
        }
        line(s);
    }
    if let Some(n) = tr.rounds_planned {
        line(format!("XXR {n}"));
    }
    for p in &t.players {
        let mut s = format!(
            "001 {:>4} {}{:>3} {} {:>4} {:<3} {:>11} {} {:>4} {:>4}",
            p.start_rank,
            match p.sex {
                Some(Sex::Male) => 'm',
                Some(Sex::Female) => 'w',
                None => ' ',
            },
            p.title
                .as_deref()
                .map(|t| fit(t, 3).trim_end().to_string())
                .unwrap_or_default(),
            fit(&p.name, 33),
            p.rating.map(|r| r.to_string()).unwrap_or_default(),
            p.federation
                .as_deref()
                .map(|f| fit(f, 3))
                .unwrap_or_default(),
            p.fide_id.map(|i| i.to_string()).unwrap_or_default(),
            fit(p.birth.as_deref().unwrap_or(""), 10),
            p.points.map(|v| v.to_string()).unwrap_or_default(),
            p.rank.map(|r| r.to_string()).unwrap_or_default(),
        );
        for c in &p.cells {
            let _ = write!(s, "  {:<8}", cell(c));
        }
        line(s);
    }
    for team in &t.teams {
        let mut s = format!("013 {}", fit(&team.name, 32));
        for (i, p) in team.players.iter().enumerate() {
            let _ = write!(s, "{}{p:>4}", if i == 0 { "" } else { " " });
        }
        line(s);
    }
    for r in &t.round_records {
        line(super::records::write_record(r));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::read::read_trf;
    use super::*;

    #[test]
    fn what_is_written_reads_back_the_same() {
        let Some(path) = boards::testdata::shared_data("pairings/javafo_sample2_gros_2010.trf")
        else {
            return;
        };
        let f = std::fs::read(path).expect("test data");
        let t = read_trf(&f).expect("test data");
        let again = read_trf(write_trf(&t).as_bytes()).expect("test data");
        // Lines differ; what they say does not.
        let strip = |mut t: Trf| {
            for p in &mut t.players {
                p.line = 0;
            }
            t
        };
        assert_eq!(strip(again), strip(t));
    }
}
