//! The move generator the whole core stands on counts the same leaf nodes as the published perft
//! suites: the widely copied `perftsuite.epd` and python-chess's tricky positions (X-FEN
//! Chess960 castling, impossible checker alignments, en passant pins, impossible castling rights).
//!
//! Only counts up to [`MAX_NODES`] are checked, so the test stays quick in a debug build; the
//! rest are counted as skipped and reported.

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, PositionError, PositionErrorKinds, perft};
use std::path::PathBuf;

/// The largest expected count that is checked.
const MAX_NODES: u64 = 200_000;

/// The perft folder of the shared test data, or `None` (with a notice) when it is absent.
fn perft_dir() -> Option<PathBuf> {
    boards::testdata::shared_data("perft")
}

/// One position of a suite with its expected counts.
#[derive(Debug)]
struct Case {
    /// Where it comes from, for messages.
    label: String,
    fen: String,
    chess960: bool,
    /// (depth, expected leaf count).
    counts: Vec<(u32, u64)>,
}

/// Chess960 castling shows in the castling field as file letters (Shredder-FEN `HAha`, or
/// X-FEN's `KQkq` with rooks off the corners, which the python-chess file marks by id).
fn looks_chess960(label: &str, fen: &str) -> bool {
    let castling = fen.split_whitespace().nth(2).unwrap_or("-");
    let lower = label.to_ascii_lowercase();
    castling
        .chars()
        .any(|c| !matches!(c, 'K' | 'Q' | 'k' | 'q' | '-'))
        || lower.contains("960")
        || lower.contains("xfen")
}

/// `FEN ;D1 n ;D2 n ...`, one position a line.
fn read_epd_suite(text: &str, file: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split(';');
        let fen = parts.next().unwrap_or("").trim().to_string();
        let label = format!("{file}:{}", i + 1);
        let counts = parts
            .map(|p| {
                let p = p.trim();
                let (d, n) = p
                    .strip_prefix('D')
                    .and_then(|r| r.split_once(char::is_whitespace))
                    .unwrap_or_else(|| panic!("{label}: bad depth entry {p:?}"));
                let depth = d
                    .parse()
                    .unwrap_or_else(|_| panic!("{label}: bad depth {d:?}"));
                let nodes = n
                    .trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("{label}: bad count {n:?}"));
                (depth, nodes)
            })
            .collect();
        let chess960 = looks_chess960(&label, &fen);
        cases.push(Case {
            label,
            fen,
            chess960,
            counts,
        });
    }
    cases
}

/// python-chess's format: `id <name>`, `epd <epd>`, then `perft <depth> <count>` lines.
fn read_perft_blocks(text: &str, file: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let value = value.trim();
        let at = || format!("{file}:{}", i + 1);
        match key {
            "id" => cases.push(Case {
                label: format!("{file} {value}"),
                fen: String::new(),
                chess960: false,
                counts: Vec::new(),
            }),
            "epd" => {
                let case = cases
                    .last_mut()
                    .unwrap_or_else(|| panic!("{}: epd before id", at()));
                case.fen = value.to_string();
                case.chess960 = looks_chess960(&case.label, value);
            }
            "perft" => {
                let case = cases
                    .last_mut()
                    .unwrap_or_else(|| panic!("{}: perft before id", at()));
                let (d, n) = value
                    .split_once(char::is_whitespace)
                    .unwrap_or_else(|| panic!("{}: bad perft line", at()));
                let depth = d
                    .parse()
                    .unwrap_or_else(|_| panic!("{}: bad depth {d:?}", at()));
                let nodes = n
                    .trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("{}: bad count {n:?}", at()));
                case.counts.push((depth, nodes));
            }
            other => panic!("{}: unknown key {other:?}", at()),
        }
    }
    cases
}

/// The position of a case, and whether it is read in Chess960 mode.
///
/// Castling rights that only Chess960 can have (a king or rook off its standard square, as in
/// python-chess's `asymmetrical-and-king-on-h`, whose counts include a queen-side castling of a
/// king on h8) are read in Chess960 mode, as python-chess wrote the counts. The suites also
/// hold positions a strict reader refuses (checks no legal game reaches); those are accepted,
/// as python-chess accepts them, and the test says so.
fn position(case: &Case) -> (Chess, bool) {
    let fen: Fen = case
        .fen
        .parse()
        .unwrap_or_else(|e| panic!("{}: bad FEN {:?}: {e}", case.label, case.fen));
    let mut chess960 = case.chess960;
    let mode = if chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    let mut result = fen.clone().into_position::<Chess>(mode);
    if let Err(e) = &result
        && !chess960
        && e.kinds()
            .contains(PositionErrorKinds::INVALID_CASTLING_RIGHTS)
    {
        let as960 = fen.into_position::<Chess>(CastlingMode::Chess960);
        if as960.as_ref().err().is_none_or(|e| {
            !e.kinds()
                .contains(PositionErrorKinds::INVALID_CASTLING_RIGHTS)
        }) {
            println!(
                "note: {}: castling rights only valid in Chess960; read as Chess960",
                case.label
            );
            chess960 = true;
            result = as960;
        }
    }
    let pos = match result {
        Ok(pos) => pos,
        Err(e) => {
            let why = e.to_string();
            let pos = e
                .ignore_too_much_material()
                .or_else(PositionError::ignore_impossible_check)
                .unwrap_or_else(|e| panic!("{}: position refused: {e}", case.label));
            println!("note: {}: accepted despite: {why}", case.label);
            pos
        }
    };
    (pos, chess960)
}

/// Runs every count up to [`MAX_NODES`]; returns (checked, skipped).
fn run(cases: &[Case]) -> (usize, usize, usize) {
    let (mut checked, mut skipped, mut chess960) = (0, 0, 0);
    let mut failures = Vec::new();
    for case in cases {
        assert!(!case.fen.is_empty(), "{}: no position", case.label);
        assert!(!case.counts.is_empty(), "{}: no counts", case.label);
        let (pos, is960) = position(case);
        chess960 += usize::from(is960);
        for &(depth, want) in &case.counts {
            if want > MAX_NODES {
                skipped += 1;
                continue;
            }
            let got = perft(&pos, depth);
            checked += 1;
            if got != want {
                failures.push(format!(
                    "{} ({}{}) depth {depth}: {got} nodes, expected {want}",
                    case.label,
                    case.fen,
                    if is960 { ", Chess960" } else { "" }
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "perft mismatches:\n{}",
        failures.join("\n")
    );
    (checked, skipped, chess960)
}

#[test]
fn perftsuite_epd() {
    let Some(dir) = perft_dir() else { return };
    let text =
        std::fs::read_to_string(dir.join("perftsuite.epd")).expect("perftsuite.epd readable");
    let cases = read_epd_suite(&text, "perftsuite.epd");
    assert!(cases.len() >= 100, "only {} positions read", cases.len());
    let (checked, skipped, chess960) = run(&cases);
    println!(
        "perftsuite.epd: {} positions ({chess960} Chess960), {checked} counts checked, {skipped} skipped (over {MAX_NODES} nodes)",
        cases.len()
    );
}

#[test]
fn python_chess_tricky() {
    let Some(dir) = perft_dir() else { return };
    let text = std::fs::read_to_string(dir.join("python-chess-tricky.perft"))
        .expect("python-chess-tricky.perft readable");
    let cases = read_perft_blocks(&text, "python-chess-tricky.perft");
    assert!(cases.len() >= 10, "only {} positions read", cases.len());
    assert!(
        cases.iter().any(|c| c.chess960),
        "the X-FEN cases must be read as Chess960"
    );
    let (checked, skipped, chess960) = run(&cases);
    println!(
        "python-chess-tricky.perft: {} positions ({chess960} Chess960), {checked} counts checked, {skipped} skipped (over {MAX_NODES} nodes)",
        cases.len()
    );
}
