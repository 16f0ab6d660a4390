//! `relay convert` on the shared real PGN files: to PGN and back with every tag, move, clock,
//! comment and result equal; to the archival order; to EPD with the positions python-chess
//! finds; a bad file named by game and byte offset, with nothing left behind.

use super::temp_dir;
use relay_core::game::Game;
use relay_core::pgn::read_games;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn relay_convert(input: &Path, output: &Path, to: &str, extra: &[&str]) -> Output {
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
fn readable_files() -> Vec<PathBuf> {
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

fn games_in(p: &Path) -> Vec<Game> {
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
            _ => (k.clone(), v.clone()),
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
fn a_bad_game_is_named_with_its_byte_offset_and_nothing_is_left_behind() {
    let dir = temp_dir("convert-bad");
    let input = dir.join("bad.pgn");
    let good = "[Event \"A\"]\n[Result \"*\"]\n\n1. e4 e5 *\n\n";
    std::fs::write(
        &input,
        format!("{good}[Event \"B\"]\n[Result \"*\"]\n\n1. e4 e5 2. Ke3 *\n"),
    )
    .expect("write");
    let out = dir.join("out.pgn");
    let r = relay_convert(&input, &out, "pgn", &[]);
    assert!(!r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("game 2") && err.contains(&format!("byte {}", good.len())),
        "{err}"
    );
    assert!(!out.exists(), "a half-written file was left");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
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
    let files = readable_files();
    if files.is_empty() {
        return;
    }
    let dir = temp_dir("convert-onebyte");
    let (mut games, mut refused, mut pgn_bytes, mut one_bytes) = (0, 0, 0, 0);
    for f in &files {
        let packed = dir.join("games.1b");
        let r = relay_convert(f, &packed, "onebyte", &[]);
        if !r.status.success() {
            // A game the format cannot hold (two promoted pieces from one file, two queens
            // at a set-up start): said, and nothing written.
            let err = String::from_utf8_lossy(&r.stderr);
            assert!(
                err.contains("game ") && !packed.exists(),
                "{}: {err}",
                f.display()
            );
            refused += 1;
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
            assert_eq!(
                moves_and_tags(x),
                moves_and_tags(y),
                "{} game {}",
                f.display(),
                i + 1
            );
        }
        games += a.len();
        pgn_bytes += std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        one_bytes += std::fs::metadata(&packed).map(|m| m.len()).unwrap_or(0);
    }
    eprintln!(
        "{games} games through the one-byte encoding and back ({refused} files refused); {pgn_bytes} bytes of PGN became {one_bytes}"
    );
    assert!(games >= 20, "only {games} games");
    // A damaged file is refused with the game and byte, nothing written.
    let bad = dir.join("bad.1b");
    let mut bytes = b"RELAY-ONEBYTE 1\n".to_vec();
    bytes.extend_from_slice(&3u32.to_le_bytes());
    bytes.extend_from_slice(b"[x]");
    bytes.extend_from_slice(&2u32.to_le_bytes());
    bytes.extend_from_slice(&[0x13, 0x9c]);
    std::fs::write(&bad, &bytes).expect("write");
    let out = dir.join("never.pgn");
    let r = relay_convert(&bad, &out, "pgn", &[]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        !r.status.success() && err.contains("game 1 (from byte 16)"),
        "{err}"
    );
    assert!(!out.exists());
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
