//! `relay convert` on the shared real PGN files: to PGN and back with every tag, move, clock,
//! comment and result equal; to the archival order; to EPD with the positions python-chess
//! finds; a bad file named by game and byte offset, with nothing left behind.

use super::temp_dir;
use relay_core::game::Game;
use relay_core::pgn::read_games;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(super) fn relay_convert(input: &Path, output: &Path, to: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_relay"))
        .arg("convert")
        .arg(input)
        .arg(output)
        .args(["--to", to])
        .args(extra)
        .output()
        .expect("run relay convert")
}

/// The shared PGN files every game of which reads.
pub(super) fn readable_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["pgn/clocks", "pgn/tricky"] {
        let Some(d) = boards::testdata::shared_data(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(&d)
            .expect("shared data")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "pgn"))
            .collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).expect("read");
            let text = relay_core::pgn::decode_pgn_bytes(&bytes);
            let games = read_games(&text);
            if !games.is_empty() && games.iter().all(Result::is_ok) {
                out.push(f);
            }
        }
    }
    out
}

pub(super) fn games_in(p: &Path) -> Vec<Game> {
    let bytes = std::fs::read(p).expect("read");
    read_games(&relay_core::pgn::decode_pgn_bytes(&bytes))
        .into_iter()
        .map(|g| g.expect("reads"))
        .collect()
}

/// What a game is, as PGN can hold it: tags, moves with clocks and comments, result.
fn essence(g: &Game) -> String {
    let moves: Vec<String> = g
        .moves
        .iter()
        .map(|m| format!("{} {:?} {:?} {:?}", m.san, m.clk, m.emt, m.comment))
        .collect();
    // The export format writes the tags after the Seven Tag Roster in ASCII order (§8.1.1):
    // the same tags, maybe in another order.
    // A Seven Tag Roster tag the file left out is written with its "unknown" value.
    let unknown = ["", "?", "????.??.??", "*"];
    // A Chess960 game's variant is written with its standard name, "Chess960".
    let chess960 = |v: &str| {
        [
            "fischerandom",
            "fischerrandom",
            "chess960",
            "chess 960",
            "960",
        ]
        .contains(&v.to_ascii_lowercase().as_str())
    };
    let mut tags: Vec<_> = g
        .tags
        .0
        .iter()
        .filter(|(_, v)| !unknown.contains(&v.as_str()))
        .map(|(k, v)| match k.as_str() {
            "Variant" if chess960(v) => (k.clone(), "Chess960".to_string()),
            // A tag name is written as a PGN symbol: letters, digits and `_` (§7).
            _ => (
                k.replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_"),
                v.clone(),
            ),
        })
        .collect();
    tags.sort();
    format!(
        "{:?}\n{}\n{:?}\n{}\n{:?}",
        tags,
        g.start_fen(),
        g.intro,
        moves.join("\n"),
        g.result
    )
}

#[test]
fn shared_pgn_files_convert_to_pgn_and_back_unchanged() {
    let files = readable_files();
    if files.is_empty() {
        return;
    }
    let dir = temp_dir("convert-pgn");
    let mut games = 0;
    for f in &files {
        let out = dir.join("out.pgn");
        let r = relay_convert(f, &out, "pgn", &[]);
        assert!(
            r.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&r.stderr)
        );
        let (a, b) = (games_in(f), games_in(&out));
        assert_eq!(a.len(), b.len(), "{}", f.display());
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(essence(x), essence(y), "{} game {}", f.display(), i + 1);
        }
        games += a.len();
    }
    eprintln!(
        "{} files, {games} games through PGN and back unchanged",
        files.len()
    );
    assert!(games >= 20, "only {games} games");
}

#[test]
fn the_archival_order_sorts_by_the_seven_tags_then_the_movetext() {
    let files = readable_files();
    if files.is_empty() {
        return;
    }
    let dir = temp_dir("convert-archive");
    // All the readable files as one input.
    let all = dir.join("all.pgn");
    let mut text = String::new();
    for f in &files {
        let bytes = std::fs::read(f).expect("read");
        text.push_str(&relay_core::pgn::decode_pgn_bytes(&bytes));
        text.push_str("\n\n");
    }
    std::fs::write(&all, &text).expect("write");
    let out = dir.join("archive.pgn");
    let r = relay_convert(&all, &out, "archive", &[]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // (The games of each file as read on its own: read whole, the joined text could run
    // the end of one file into the next.)
    let a: Vec<Game> = files.iter().flat_map(|f| games_in(f)).collect();
    let b = games_in(&out);
    assert_eq!(a.len(), b.len());
    let keys: Vec<_> = b
        .iter()
        .map(relay_core::pgn::archive::archive_key)
        .collect();
    for w in keys.windows(2) {
        assert!(w[0] <= w[1], "out of order: {:?} before {:?}", w[0], w[1]);
    }
    // The same games, only reordered.
    let mut x: Vec<String> = a.iter().map(essence).collect();
    let mut y: Vec<String> = b.iter().map(essence).collect();
    x.sort();
    y.sort();
    assert_eq!(x, y);
}

const PYTHON_EPD: &str = r#"
import sys, json, io, re
import chess, chess.pgn
pgn = open(sys.argv[1], encoding="utf-8", errors="replace")
mine = open(sys.argv[2]).read().splitlines()
want = []
while True:
    g = chess.pgn.read_game(pgn)
    if g is None:
        break
    b = g.board()
    want.append(" ".join(b.epd().split(" ")[:3]))
    for m in g.mainline_moves():
        b.push(m)
        want.append(" ".join(b.epd().split(" ")[:3]))
bad = 0
for line in mine:
    # python-chess reads an operand as one number: cc's two clock values are left out.
    line = re.sub(r" cc [0-9:]+ [0-9:]+;", "", line)
    board, ops = chess.Board.from_epd(line)
    if "sm" in ops and ops["sm"] not in board.legal_moves:
        bad += 1
got = [" ".join(l.split(" ")[:3]) for l in mine]
assert len(mine) == len(got)
print(json.dumps({"want": len(want), "got": len(got), "same": want == got, "bad_sm": bad,
                  "first_diff": next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), None)}))
"#;

#[test]
fn epd_lines_are_the_positions_python_chess_finds() {
    let Some(f) = boards::testdata::shared_data(
        "pgn/clocks/dgt-livechess-2.2.5-sample-invitational-2023-r1.pgn",
    ) else {
        return;
    };
    let dir = temp_dir("convert-epd");
    let out = dir.join("all.epd");
    let r = relay_convert(&f, &out, "epd", &[]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = std::fs::read_to_string(&out).expect("epd");
    let games = games_in(&f);
    let plies: usize = games.iter().map(|g| g.moves.len() + 1).sum();
    assert_eq!(text.lines().count(), plies, "one line per position");
    let first = text.lines().next().expect("a line");
    for op in ["hmvc 0;", "fmvn 1;", "id \"game 1 ply 0\";", "sm "] {
        assert!(first.contains(op), "{op} missing: {first}");
    }
    assert!(text.contains(" cc 000:"), "the clocked games carry cc");
    let fin = dir.join("final.epd");
    let r = relay_convert(&f, &fin, "epd", &["--final"]);
    assert!(r.status.success());
    assert_eq!(
        std::fs::read_to_string(&fin).expect("epd").lines().count(),
        games.len()
    );

    let py = Command::new("python3")
        .args(["-c", "import chess"])
        .output();
    if !py.is_ok_and(|o| o.status.success()) {
        if std::env::var("RELAY_REQUIRE_ALL").as_deref() == Ok("1") {
            panic!("python3 with the chess package is required (RELAY_REQUIRE_ALL=1)");
        }
        eprintln!("python-chess not found: the EPD check against it is skipped");
        return;
    }
    let o = Command::new("python3")
        .args(["-c", PYTHON_EPD])
        .arg(&f)
        .arg(&out)
        .output()
        .expect("python3");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    eprintln!("python-chess on our EPD: {v}");
    assert_eq!(v["same"], true, "{v}");
    assert_eq!(v["bad_sm"], 0, "{v}");
}

#[test]
fn a_bad_game_is_skipped_and_named_with_its_byte_offset_in_every_format() {
    let dir = temp_dir("convert-bad");
    let input = dir.join("bad.pgn");
    // Game 2 holds an illegal move as the source recorded it; games 1 and 3 are fine.
    let good = "[Event \"A\"]\n[Result \"*\"]\n\n1. e4 e5 *\n\n";
    let bad = "[Event \"B\"]\n[Result \"*\"]\n\n1. e4 e5 2. Ke3 *\n\n";
    std::fs::write(
        &input,
        format!("{good}{bad}[Event \"C\"]\n[Result \"*\"]\n\n1. d4 *\n"),
    )
    .expect("write");
    for (to, ext) in [
        ("pgn", "pgn"),
        ("archive", "pgn"),
        ("epd", "epd"),
        ("onebyte", "1b"),
        ("pgc", "pgc"),
        ("cbf", "cbf"),
    ] {
        let out = dir.join(format!("out-{to}.{ext}"));
        let r = relay_convert(&input, &out, to, &[]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(3), "{to}: {err}");
        assert!(
            err.contains(&format!("game 2 (from byte {}) does not read", good.len()))
                && err.contains("Ke3")
                && err.contains("2 games written")
                && err.contains("1 skipped"),
            "{to}: {err}"
        );
        if to == "epd" {
            // Two lines for game 1 (start, after e4 … after e5: three), one more for game 3.
            let text = std::fs::read_to_string(&out).expect("epd");
            assert_eq!(text.lines().count(), 3 + 2, "{text}");
            continue;
        }
        let back = dir.join(format!("back-{to}.pgn"));
        let r = relay_convert(&out, &back, "pgn", &[]);
        assert!(
            r.status.success(),
            "{to}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let events: Vec<String> = games_in(&back)
            .iter()
            .map(|g| g.tags.get("Event").unwrap_or("").to_string())
            .collect();
        assert_eq!(events, ["A", "C"], "{to}");
    }
    // --strict: all or nothing, as before.
    let out = dir.join("strict.pgn");
    let r = relay_convert(&input, &out, "pgn", &["--strict"]);
    assert!(!r.status.success());
    assert_ne!(r.status.code(), Some(3));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("game 2") && err.contains(&format!("byte {}", good.len())),
        "{err}"
    );
    assert!(!out.exists(), "a half-written file was left");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with('.') || n.starts_with("strict"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Sizes and counts of every readable shared file sent through a format and back.
#[derive(Debug, Default)]
struct Trip {
    games: usize,
    /// Files the format refused (a game it cannot hold), said with the game and nothing left.
    refused: usize,
    pgn_bytes: u64,
    packed_bytes: u64,
}

/// Sends every readable shared file through `relay convert --to format --strict` (to `name`)
/// and back to PGN, and calls `same(where, original, back)` for each game. A file the format
/// refuses must say which game and leave no output (also no `.cbi` beside it).
fn through_and_back(
    format: &str,
    name: &str,
    dir: &Path,
    mut same: impl FnMut(&str, &Game, &Game),
) -> Trip {
    let mut trip = Trip::default();
    for f in &readable_files() {
        let packed = dir.join(name);
        let index = packed.with_extension("cbi");
        let _ = std::fs::remove_file(&packed);
        let _ = std::fs::remove_file(&index);
        let r = relay_convert(f, &packed, format, &["--strict"]);
        if !r.status.success() {
            let err = String::from_utf8_lossy(&r.stderr);
            assert!(
                err.contains("game ") && !packed.exists() && !index.exists(),
                "{}: {err}",
                f.display()
            );
            trip.refused += 1;
            continue;
        }
        let back = dir.join("back.pgn");
        let r = relay_convert(&packed, &back, "pgn", &[]);
        assert!(
            r.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&r.stderr)
        );
        let (a, b) = (games_in(f), games_in(&back));
        assert_eq!(a.len(), b.len(), "{}", f.display());
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            same(&format!("{} game {}", f.display(), i + 1), x, y);
        }
        trip.games += a.len();
        trip.pgn_bytes += std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        trip.packed_bytes += std::fs::metadata(&packed).map(|m| m.len()).unwrap_or(0);
    }
    assert!(trip.games >= 20, "only {} games", trip.games);
    trip
}

/// A damaged file (`bytes`) is refused naming the game and its byte offset, and (`--strict`)
/// no output is left behind.
pub(super) fn refused_with_offset(dir: &Path, name: &str, bytes: &[u8], what: &str) {
    let bad = dir.join(name);
    std::fs::write(&bad, bytes).expect("write");
    let out = dir.join("never.pgn");
    let r = relay_convert(&bad, &out, "pgn", &["--strict"]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains(what), "{err}");
    assert!(!out.exists());
    // Without --strict the damage is named the same way, and the exit status says so.
    let r = relay_convert(&bad, &out, "pgn", &[]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success() && err.contains(what), "{err}");
}

/// A game as the one-byte container keeps it: tags, start, moves and result (no clocks or
/// comments).
fn moves_and_tags(g: &Game) -> String {
    let mut e = g.clone();
    for m in &mut e.moves {
        m.clk = None;
        m.emt = None;
        m.comment = None;
    }
    e.intro = None;
    essence(&e)
}

#[test]
fn shared_pgn_files_go_through_the_one_byte_encoding_and_back() {
    if readable_files().is_empty() {
        return;
    }
    let dir = temp_dir("convert-onebyte");
    // A game the format cannot hold (two promoted pieces from one file, two queens at a
    // set-up start) refuses its file; the rest come back with their tags, moves and result.
    let trip = through_and_back("onebyte", "games.1b", &dir, |at, x, y| {
        assert_eq!(moves_and_tags(x), moves_and_tags(y), "{at}");
    });
    eprintln!(
        "{} games through the one-byte encoding and back ({} files refused); {} bytes of PGN became {}",
        trip.games, trip.refused, trip.pgn_bytes, trip.packed_bytes
    );
    let mut bytes = b"RELAY-ONEBYTE 1\n".to_vec();
    bytes.extend_from_slice(&3u32.to_le_bytes());
    bytes.extend_from_slice(b"[x]");
    bytes.extend_from_slice(&2u32.to_le_bytes());
    bytes.extend_from_slice(&[0x13, 0x9c]);
    refused_with_offset(&dir, "bad.1b", &bytes, "game 1 (from byte 16)");
}

#[test]
fn relay_export_writes_a_round_from_the_store_in_each_format() {
    let dir = temp_dir("export-store");
    let db = format!("sqlite://{}", dir.join("relay.db").display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (round, sans) = rt.block_on(async {
        let store = relay_store::Store::open(&db).await.expect("store");
        let t = store
            .create_tournament(&relay_store::NewTournament {
                name: "Export Open".into(),
                time_control: Some("5400+30".into()),
                ..Default::default()
            })
            .await
            .expect("tournament");
        let r = store
            .create_round(t, "2", Some("2026-11-25"))
            .await
            .expect("round");
        let ids = store
            .set_pairings(
                r,
                &[relay_store::Pairing {
                    board_no: 1,
                    ..Default::default()
                }],
            )
            .await
            .expect("pairings");
        let mut pos = shakmaty::Chess::default();
        let sans = ["d4", "Nf6", "c4", "e6", "Nc3", "Bb4"];
        for (i, s) in sans.iter().enumerate() {
            let m = s
                .parse::<shakmaty::san::San>()
                .expect("san")
                .to_move(&pos)
                .expect("legal");
            shakmaty::Position::play_unchecked(&mut pos, m);
            store
                .record_move(
                    ids[0].0,
                    &relay_store::StoredMove {
                        ply: i as u32 + 1,
                        san: s.to_string(),
                        uci: m.to_uci(shakmaty::CastlingMode::Standard).to_string(),
                        clk_ms: Some(5_400_000 - i as u64 * 1000),
                        emt_ms: Some(1000),
                        accepted_at_ms: 0,
                        fen_after: relay_core::epd::fen(&pos),
                    },
                )
                .await
                .expect("move");
        }
        (r, sans)
    });
    let export = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(["export", "--db", &db])
            .args(args)
            .output()
            .expect("relay export")
    };
    let r = round.to_string();
    let pgn = dir.join("round.pgn");
    let o = export(&["--round", &r, "--to", "pgn", pgn.to_str().expect("path")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let g = games_in(&pgn);
    assert_eq!(g.len(), 1);
    let got: Vec<String> = g[0].moves.iter().map(|m| m.san.to_string()).collect();
    assert_eq!(got, sans);
    assert_eq!(g[0].tags.get("Round"), Some("2.1"));
    assert_eq!(g[0].tags.get("Date"), Some("2026.11.25"));
    assert_eq!(g[0].tags.get("TimeControl"), Some("5400+30"));
    assert!(g[0].moves.iter().all(|m| m.clk.is_some()));
    let epd = dir.join("round.epd");
    let o = export(&["--round", &r, "--to", "epd", epd.to_str().expect("path")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&epd).expect("epd");
    assert_eq!(text.lines().count(), sans.len() + 1);
    assert!(text.contains("cc 000:00:00:03 000:00:00:03"), "{text}");
    let none = dir.join("none.pgn");
    let o = export(&[
        "--tournament",
        "999",
        "--to",
        "pgn",
        none.to_str().expect("path"),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("999"));
    assert!(!none.exists());
}

/// A tag value as PGC and CBF keep it: Latin-1, a character above U+00FF as `?`.
fn latin1(v: &str) -> String {
    v.chars()
        .map(|c| if u32::from(c) > 0xff { '?' } else { c })
        .collect()
}

/// Tags, moves and result as a Latin-1 format keeps them (no clocks, no comments).
fn latin1_moves_and_tags(g: &Game) -> String {
    let mut e = g.clone();
    for (_, v) in &mut e.tags.0 {
        *v = latin1(v);
    }
    moves_and_tags(&e)
}

#[test]
fn shared_pgn_files_go_through_pgc_and_back() {
    let files = readable_files();
    if files.is_empty() {
        return;
    }
    let dir = temp_dir("convert-pgc");
    let trip = through_and_back("pgc", "games.pgc", &dir, |at, x, y| {
        assert_eq!(latin1_moves_and_tags(x), moves_and_tags(y), "{at}");
    });
    assert_eq!(trip.refused, 0, "PGC holds every game");
    eprintln!(
        "{} games through PGC and back; {} bytes of PGN became {}",
        trip.games, trip.pgn_bytes, trip.packed_bytes
    );
    // A file cut inside a game: named with the game and byte, nothing written.
    let one = dir.join("one.pgc");
    assert!(relay_convert(&files[0], &one, "pgc", &[]).status.success());
    let bytes = std::fs::read(&one).expect("pgc");
    let cut = &bytes[..bytes.len().min(4000) - 1];
    refused_with_offset(&dir, "bad.pgc", cut, "(from byte ");
}

/// pgn-extract, from Debian's package (installed in /usr/games).
fn pgn_extract() -> Option<PathBuf> {
    for p in ["/usr/games/pgn-extract", "/usr/bin/pgn-extract"] {
        if Path::new(p).exists() {
            return Some(PathBuf::from(p));
        }
    }
    if std::env::var("RELAY_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("pgn-extract is required (RELAY_REQUIRE_ALL=1): apt-get install pgn-extract");
    }
    eprintln!("pgn-extract not found: the check against it is skipped");
    None
}

/// The games of pgn-extract's output, each as (tags text, the rest).
fn pgn_extract_games(text: &str) -> Vec<String> {
    let mut games: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with("[Event ") {
            games.push(String::new());
        }
        if let Some(g) = games.last_mut()
            && !line.starts_with('[')
        {
            g.push_str(line);
            g.push(' ');
        }
    }
    games
}

#[test]
fn pgn_extract_reads_our_pgn_and_epd_with_the_same_moves_and_positions() {
    let files = readable_files();
    if files.is_empty() {
        return;
    }
    let Some(tool) = pgn_extract() else {
        return;
    };
    let dir = temp_dir("convert-pgn-extract");
    let (mut games, mut positions, mut skipped) = (0, 0, 0);
    for f in &files {
        let ours = dir.join("ours.pgn");
        assert!(relay_convert(f, &ours, "pgn", &[]).status.success());
        let written = games_in(&ours);
        // pgn-extract does not play Chess960 castling; those games are checked elsewhere.
        if written
            .iter()
            .any(|g| g.castling_mode == shakmaty::CastlingMode::Chess960)
        {
            skipped += written.len();
            continue;
        }
        let o = Command::new(&tool)
            .args(["-s", "-Wuci", "-C", "-N", "-V", "--noresults"])
            .arg(&ours)
            .output()
            .expect("pgn-extract");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let theirs = pgn_extract_games(&String::from_utf8_lossy(&o.stdout));
        assert_eq!(theirs.len(), written.len(), "{}", f.display());
        for (i, (g, t)) in written.iter().zip(&theirs).enumerate() {
            let ucis: Vec<String> = g
                .moves
                .iter()
                .map(|m| m.uci(g.castling_mode).to_string())
                .collect();
            // pgn-extract writes a promotion piece in upper case (e7e8Q).
            let t = t.to_ascii_lowercase();
            // A game without moves still gets its result from it, --noresults or not.
            let got: Vec<&str> = t
                .split_whitespace()
                .filter(|w| !["*", "1-0", "0-1", "1/2-1/2"].contains(w))
                .collect();
            assert_eq!(got, ucis, "{} game {}", f.display(), i + 1);
        }
        // Their EPD of every position against ours: placement, side to move, castling.
        let epd = dir.join("ours.epd");
        assert!(relay_convert(f, &epd, "epd", &[]).status.success());
        let o = Command::new(&tool)
            .args(["-s", "-Wepd"])
            .arg(&ours)
            .output()
            .expect("pgn-extract");
        let fields =
            |l: &str| -> Vec<String> { l.split(' ').take(3).map(str::to_string).collect() };
        let theirs: Vec<Vec<String>> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(fields)
            .collect();
        let ours: Vec<Vec<String>> = std::fs::read_to_string(&epd)
            .expect("epd")
            .lines()
            .map(fields)
            .collect();
        assert_eq!(theirs, ours, "{}", f.display());
        games += written.len();
        positions += ours.len();
    }
    eprintln!(
        "pgn-extract read {games} games with our moves and {positions} positions as ours ({skipped} Chess960 games skipped: pgn-extract does not play Chess960 castling)"
    );
    assert!(games >= 20, "only {games} games");
}

#[test]
fn relay_import_puts_a_round_in_the_store_and_export_gives_it_back() {
    let Some(f) = boards::testdata::shared_data(
        "pgn/clocks/dgt-livechess-2.2.5-sample-invitational-2023-r1.pgn",
    ) else {
        return;
    };
    let dir = temp_dir("import");
    let db = format!("sqlite://{}", dir.join("relay.db").display());
    let relay = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(args)
            .output()
            .expect("relay")
    };
    // A bad file first: refused with game and byte, and the store stays empty.
    let bad = dir.join("bad.pgn");
    std::fs::write(
        &bad,
        "[White \"A\"]\n\n1. e4 e5 *\n\n[White \"B\"]\n\n1. e4 e5 2. Ke3 *\n",
    )
    .expect("write");
    let o = relay(&[
        "import",
        "--db",
        &db,
        "--strict",
        bad.to_str().expect("path"),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("game 2") && err.contains("nothing was imported"),
        "{err}"
    );
    // Without --strict, game 1 goes in (a store of its own), game 2 is named, status 3.
    let lenient = format!("sqlite://{}", dir.join("lenient.db").display());
    let o = relay(&["import", "--db", &lenient, bad.to_str().expect("path")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("game 2 (from byte ") && err.contains("does not read"),
        "{err}"
    );
    // Every tournament of a store, as `relay export` writes it.
    let exported = |db: &str, tournament: u32| -> Vec<Game> {
        let out = dir.join(format!("exported-{tournament}.pgn"));
        let o = relay(&[
            "export",
            "--db",
            db,
            "--tournament",
            &tournament.to_string(),
            "--to",
            "pgn",
            out.to_str().expect("path"),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        games_in(&out)
    };
    // The real round as PGN: players, ratings, moves with their clocks, results.
    let o = relay(&["import", "--db", &db, f.to_str().expect("path")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (games_in(&f), exported(&db, 1));
    assert_eq!(a.len(), b.len());
    let moves = |g: &Game, clocks: bool| -> Vec<String> {
        g.moves
            .iter()
            .map(|m| match clocks {
                true => format!("{} {:?} {:?}", m.san, m.clk, m.emt),
                false => m.san.to_string(),
            })
            .collect()
    };
    for (x, y) in a.iter().zip(&b) {
        for tag in ["Event", "Round", "White", "Black", "WhiteElo", "BlackElo"] {
            assert_eq!(x.tags.get(tag), y.tags.get(tag), "{tag}");
        }
        assert_eq!(x.result, y.result);
        assert_eq!(moves(x, true), moves(y, true));
    }
    // The same round from a PGC and from a CBF file, each into a store of its own: the moves,
    // results and players come back (clocks do not travel in those formats).
    for to in ["pgc", "cbf"] {
        let packed = dir.join(format!("round.{to}"));
        assert!(relay_convert(&f, &packed, to, &[]).status.success());
        let db = format!("sqlite://{}", dir.join(format!("{to}.db")).display());
        let o = relay(&["import", "--db", &db, packed.to_str().expect("path")]);
        assert!(
            o.status.success(),
            "{to}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let b = exported(&db, 1);
        assert_eq!(a.len(), b.len(), "{to}");
        for (x, y) in a.iter().zip(&b) {
            for tag in ["Round", "White", "Black"] {
                assert_eq!(x.tags.get(tag), y.tags.get(tag), "{to} {tag}");
            }
            assert_eq!(x.result, y.result, "{to}");
            assert_eq!(moves(x, false), moves(y, false), "{to}");
        }
    }
    // A pairing list: games without moves become the boards of a new round.
    let pairings = dir.join("pairings.pgn");
    std::fs::write(
        &pairings,
        "[Event \"Club Open\"]\n[Round \"4.1\"]\n[White \"Ann\"]\n[Black \"Bob\"]\n[WhiteElo \"1800\"]\n\n*\n\n\
         [Event \"Club Open\"]\n[Round \"4.2\"]\n[White \"Cid\"]\n[Black \"Dee\"]\n\n*\n",
    )
    .expect("write");
    let o = relay(&["import", "--db", &db, pairings.to_str().expect("path")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let club = exported(&db, 2);
    let names: Vec<(Option<&str>, Option<&str>, Option<&str>)> = club
        .iter()
        .map(|g| {
            (
                g.tags.get("Round"),
                g.tags.get("White"),
                g.tags.get("Black"),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            (Some("4.1"), Some("Ann"), Some("Bob")),
            (Some("4.2"), Some("Cid"), Some("Dee"))
        ]
    );
    assert_eq!(club[0].tags.get("WhiteElo"), Some("1800"));
    assert!(club.iter().all(|g| g.moves.is_empty()));
}
