//! Dates as real TRF files write them, to ISO: `2024/12/01`, `24/09/2010`, `28. 07. 2005`,
//! `25.02.2011`, `May 29, 2020`; and the 132 line's two-digit-year round dates, which the
//! text gives as YY/MM/DD and some files write as YY.DD.MM.

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

fn valid(y: u32, m: u32, d: u32) -> Option<String> {
    ((1..=12).contains(&m) && (1..=31).contains(&d) && (1000..=9999).contains(&y))
        .then(|| format!("{y:04}-{m:02}-{d:02}"))
}

/// An ISO date from the forms files use; `None` when it does not read.
pub fn iso(s: &str) -> Option<String> {
    let s = s.trim();
    let words: Vec<&str> = s
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words.len() != 3 {
        return None;
    }
    // "May 29, 2020"
    if let Some(m) = MONTHS
        .iter()
        .position(|m| words[0].to_ascii_lowercase().starts_with(m))
    {
        return valid(words[2].parse().ok()?, m as u32 + 1, words[1].parse().ok()?);
    }
    let n: Vec<u32> = words
        .iter()
        .map(|w| w.parse().ok())
        .collect::<Option<_>>()?;
    if words[0].len() == 4 {
        valid(n[0], n[1], n[2])
    } else if words[2].len() == 4 {
        // Day first, as in Europe; month first only when the day cannot be a month.
        valid(n[2], n[1], n[0]).or_else(|| valid(n[2], n[0], n[1]))
    } else {
        None
    }
}

/// [`iso`], or the text as written when it does not read.
pub fn iso_or_as_written(s: &str) -> String {
    iso(s).unwrap_or_else(|| s.trim().to_string())
}

/// The 132 line's round dates (columns 92–99 for round 1, every ten columns). A date that
/// reads both as YY/MM/DD and YY/DD/MM is taken the way that falls between the tournament's
/// start and end (when they are known), else as the text says.
pub fn round_dates(line: &[char], start: Option<&str>, end: Option<&str>) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let mut c = 91;
    while c < line.len() {
        let cell: String = line[c..(c + 8).min(line.len())].iter().collect();
        out.push(round_date(&cell, start, end));
        c += 10;
    }
    while out.last() == Some(&None) {
        out.pop();
    }
    out
}

fn round_date(cell: &str, start: Option<&str>, end: Option<&str>) -> Option<String> {
    let n: Vec<u32> = cell
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().ok())
        .collect::<Option<_>>()?;
    if n.len() != 3 {
        return iso(cell);
    }
    let year = if n[0] < 100 { 2000 + n[0] } else { n[0] };
    let as_text = valid(year, n[1], n[2]);
    let swapped = valid(year, n[2], n[1]);
    let within =
        |d: &String| start.is_none_or(|s| d.as_str() >= s) && end.is_none_or(|e| d.as_str() <= e);
    match (as_text, swapped) {
        (Some(a), Some(b)) if !within(&a) && within(&b) => Some(b),
        (Some(a), _) => Some(a),
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_of_real_files() {
        assert_eq!(iso("2024/12/01").as_deref(), Some("2024-12-01"));
        assert_eq!(iso("24/09/2010").as_deref(), Some("2010-09-24"));
        assert_eq!(iso("28. 07. 2005").as_deref(), Some("2005-07-28"));
        assert_eq!(iso("25.02.2011").as_deref(), Some("2011-02-25"));
        assert_eq!(iso("May 29, 2020").as_deref(), Some("2020-05-29"));
        assert_eq!(iso("soon"), None);
        assert_eq!(iso_or_as_written(" soon "), "soon");
    }

    #[test]
    fn round_dates_either_way_round() {
        let mut line = vec![' '; 91];
        line.extend("24/12/01  24/12/02".chars());
        assert_eq!(
            round_dates(&line, None, None),
            vec![Some("2024-12-01".into()), Some("2024-12-02".into())]
        );
        let mut line = vec![' '; 91];
        line.extend("11.25.02  11.03.02".chars());
        let d = round_dates(&line, Some("2011-02-25"), Some("2011-02-27"));
        assert_eq!(d[0].as_deref(), Some("2011-02-25"));
        // 11.03.02 reads as 2 March (as written) and as 3 February: neither inside, so as written.
        assert_eq!(d[1].as_deref(), Some("2011-03-02"));
    }
}
