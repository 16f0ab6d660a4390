//! `relay convert` and ChessBase CBF: the shared PGN files through CBF and back, a Chess960
//! game left out, a file of the first relay still read, and the outside referee (Scidb's
//! readings of the files relay writes, kept in `tests/e2e/data/scidb/`).

use super::convert::{games_in, readable_files, refused_with_offset, relay_convert};
use super::temp_dir;
use relay_core::game::Game;
use relay_core::pgn::read_games;
use std::path::{Path, PathBuf};

#[test]
fn a_chess960_game_is_left_out_of_cbf_named_and_the_rest_written() {
    let Some(f) =
        boards::testdata::shared_data("pgn/tricky/python-chess-cutechess-fischerrandom.pgn")
    else {
        return;
    };
    let dir = temp_dir("convert-960");
    let input = dir.join("mixed.pgn");
    let standard = "[Event \"Club\"]\n[White \"Ann\"]\n[Black \"Bob\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n";
    let chess960 = std::fs::read_to_string(&f).expect("960 file");
    std::fs::write(&input, format!("{standard}{chess960}{standard}")).expect("write");
    let out = dir.join("mixed.cbf");
    let r = relay_convert(&input, &out, "cbf", &[]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(3), "{err}");
    let skips: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("relay: skipped "))
        .collect();
    assert_eq!(skips.len(), 4, "{err}");
    assert!(
        skips[0].contains(&format!("game 2 (from byte {})", standard.len()))
            && skips[0].contains("Maverick")
            && skips[0].contains("Chess960"),
        "{err}"
    );
    let back = dir.join("back.pgn");
    assert!(relay_convert(&out, &back, "pgn", &[]).status.success());
    let games = games_in(&back);
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!(g.tags.get("White"), Some("Ann"));
        assert_eq!(g.moves.len(), 7);
        assert_eq!(g.moves[6].san.to_string(), "Qxf7#");
    }
}

/// A text as CBF keeps it in comments: code page 850, with the bytes ChessBase shows as piece
/// symbols (177..=182) and its markers (0xFE, 0xFF) as `?`.
fn cbf_comment(v: &str) -> String {
    v.chars()
        .map(|c| match cp850(c) {
            Some(177..=182 | 0xfe | 0xff) | None => '?',
            Some(_) => c,
        })
        .collect()
}

/// A character's code page 850 byte, if it has one.
fn cp850(c: char) -> Option<u8> {
    if c.is_ascii() {
        return Some(c as u8);
    }
    CP850_HIGH
        .chars()
        .position(|x| x == c)
        .map(|i| 0x80 + i as u8)
}

/// Code page 850 from 0x80 to 0xFF (as Python's `cp850` codec gives it).
const CP850_HIGH: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜø£Ø×ƒáíóúñÑªº¿®¬½¼¡«»░▒▓│┤ÁÂÀ©╣║╗╝¢¥┐└┴┬├─┼ãÃ╚╔╩╦╠═╬¤ðÐÊËÈıÍÎÏ┘┌█▄¦Ì▀ÓßÔÒõÕµþÞÚÛÙýÝ¯´\u{ad}±‗¾¶§÷¸°¨·¹³²■\u{a0}";

/// A tag's value when it says something ("" for missing, empty or `?`).
fn known(g: &Game, t: &str) -> String {
    g.tags
        .get(t)
        .filter(|v| !v.is_empty() && *v != "?")
        .unwrap_or_default()
        .to_string()
}

/// A game's moves in SAN.
fn sans(g: &Game) -> Vec<String> {
    g.moves.iter().map(|m| m.san.to_string()).collect()
}

/// The games `relay convert` said it skipped (their numbers), from its warnings.
fn skipped_games(stderr: &str, input: &Path) -> Vec<usize> {
    let lead = format!("relay: skipped {}: game ", input.display());
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(&lead))
        .filter_map(|rest| rest.split([' ', ',']).next()?.parse().ok())
        .collect()
}

#[test]
fn shared_pgn_files_go_through_chessbase_cbf_and_back() {
    let files = readable_files();
    if files.is_empty() {
        return;
    }
    let dir = temp_dir("convert-cbf");
    let (mut games, mut skipped, mut cut) = (0, 0, 0);
    for f in &files {
        let packed = dir.join("games.cbf");
        let r = relay_convert(f, &packed, "cbf", &[]);
        let err = String::from_utf8_lossy(&r.stderr);
        let left_out = skipped_games(&err, f);
        // Exit 0 when every game went in, 3 when some were left out, each named.
        let status = if left_out.is_empty() { 0 } else { 3 };
        assert_eq!(r.status.code(), Some(status), "{}: {err}", f.display());
        assert_eq!(
            err.lines()
                .filter(|l| l.starts_with("relay: skipped "))
                .count(),
            left_out.len(),
            "{err}"
        );
        let back = dir.join("back.pgn");
        let r = relay_convert(&packed, &back, "pgn", &[]);
        assert!(
            r.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&r.stderr)
        );
        let kept: Vec<Game> = games_in(f)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !left_out.contains(&(i + 1)))
            .map(|(_, g)| g)
            .collect();
        let b = games_in(&back);
        assert_eq!(kept.len(), b.len(), "{}", f.display());
        for (i, (x, y)) in kept.iter().zip(&b).enumerate() {
            let at = format!("{} game {} of those kept", f.display(), i + 1);
            assert_eq!(sans(x), sans(y), "{at}");
            assert_eq!(x.result, y.result, "{at}");
            assert_eq!(x.start, y.start, "{at}");
            // Comments come back (clocks do not: CBF has none).
            let comments = |g: &Game, map: bool| -> Vec<Option<String>> {
                g.moves
                    .iter()
                    .map(|m| {
                        m.comment
                            .as_deref()
                            .map(|c| if map { cbf_comment(c) } else { c.to_string() })
                            .filter(|c| !c.is_empty())
                    })
                    .collect()
            };
            assert_eq!(comments(x, true), comments(y, false), "{at}");
            // The players exactly: a game whose names CBF cannot hold was left out.
            for t in ["White", "Black"] {
                assert_eq!(known(y, t), known(x, t), "{at} {t}");
            }
            // The event, unless it had to be cut or lacked a character; a numbered round.
            let event = known(x, "Event");
            if event.chars().all(|c| cp850(c).is_some()) && event.len() + 12 <= 63 {
                assert_eq!(known(y, "Event"), event, "{at}");
            } else {
                cut += 1;
            }
            let round = known(x, "Round");
            if round.starts_with(|c: char| c.is_ascii_digit())
                && round.chars().all(|c| c.is_ascii_digit() || c == '.')
            {
                assert_eq!(known(y, "Round"), round, "{at}");
            }
            let year = |g: &Game| g.tags.get("Date").map(|d| d[..4.min(d.len())].to_string());
            let dated = |d: &str| d.len() >= 4 && d[..4].bytes().all(|b| b.is_ascii_digit());
            if x.tags.get("Date").is_some_and(dated) {
                assert_eq!(year(x), year(y), "{at}");
            }
            for t in ["WhiteElo", "BlackElo"] {
                let elo = |g: &Game| g.tags.get(t).and_then(|v| v.parse::<i64>().ok());
                if let Some(e) = elo(x).filter(|e| (1603..=2877).contains(e)) {
                    let got = elo(y).expect("an Elo in range is kept");
                    assert!((got - e).abs() <= 2 && got % 5 == 0, "{at} {t} {e} → {got}");
                }
            }
        }
        games += b.len();
        skipped += left_out.len();
    }
    eprintln!("{games} games through CBF and back, {skipped} left out (named), {cut} events cut");
    assert!(games >= 150, "only {games} games");
    // A damaged file (cut in half, its index kept) is named with the game and byte.
    let good = dir.join("good.cbf");
    assert!(relay_convert(&files[0], &good, "cbf", &[]).status.success());
    let bytes = std::fs::read(&good).expect("cbf");
    std::fs::copy(dir.join("good.cbi"), dir.join("bad.cbi")).expect("index");
    refused_with_offset(&dir, "bad.cbf", &bytes[..bytes.len() / 2], "(from byte ");
}

/// A CBF file relay wrote before it wrote ChessBase's own way (the check byte 0, the old
/// generator, Latin-1, `Event|Site|Round`): the Tata Steel 2017 broadcast, kept in the tests'
/// data as that relay wrote it. It must still read, every game equal to the PGN it came from.
#[test]
fn a_cbf_file_from_the_first_relay_still_reads() {
    let Some(f) =
        boards::testdata::shared_data("pgn/clocks/dgt-livechess-1.4.8-tata-steel-2017.pgn")
    else {
        return;
    };
    let old = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/e2e/data/tata-steel-2017-first-relay.cbf");
    let dir = temp_dir("convert-first-cbf");
    let back = dir.join("back.pgn");
    let r = relay_convert(&old, &back, "pgn", &[]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let a: Vec<Game> = games_in(&f)
        .into_iter()
        .filter(|g| !g.moves.is_empty() || g.tags.get("White").is_some())
        .collect();
    let b = games_in(&back);
    assert_eq!(b.len(), 91);
    let mut matched = 0;
    for y in &b {
        let x = a
            .iter()
            .find(|x| {
                x.tags.get("White") == y.tags.get("White")
                    && x.tags.get("Round") == y.tags.get("Round")
            })
            .expect("the game in the PGN");
        assert_eq!(sans(x), sans(y));
        for t in ["Event", "Site", "Black"] {
            assert_eq!(
                x.tags.get(t).unwrap_or("?"),
                y.tags.get(t).unwrap_or("?"),
                "{t}"
            );
        }
        matched += 1;
    }
    assert_eq!(matched, 91);
}

/// The outside referee for CBF. Scidb's ChessBase-DOS codec (the only program still reading
/// the format) cannot be installed from any registry this project's machines reach, so it ran
/// once, by hand, on the CBF and CBI files relay writes from every shared PGN file; its reading
/// of each, as PGN, is kept in `tests/e2e/data/scidb/` beside the files it read (the folder's
/// README says how it was made). This test checks both halves of that: relay still writes those
/// very bytes (any change to the writer fails here until Scidb has read the new files), and
/// what Scidb read is every game of the source that relay did not leave out, with its moves,
/// start, players, event, year and result.
#[test]
fn scidb_read_every_game_of_the_cbf_files_relay_writes() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/e2e/data/scidb");
    let mut readings: Vec<PathBuf> = std::fs::read_dir(&data)
        .expect("scidb data")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".scidb.pgn"))
        .collect();
    readings.sort();
    assert!(readings.len() >= 20, "{readings:?}");
    // The shared PGN files the readings were made from (absent: skipped with a notice, a
    // failure under RELAY_REQUIRE_SHARED_DATA).
    let mut sources = Vec::new();
    for dir in ["pgn/clocks", "pgn/tricky"] {
        let Some(files) = boards::testdata::shared_files(dir) else {
            return;
        };
        sources.extend(files);
    }
    let dir = temp_dir("convert-scidb");
    let (mut files, mut games, mut conventions) = (0, 0, 0);
    for reading in &readings {
        let name = reading.file_name().expect("name").to_string_lossy();
        let stem = name.trim_end_matches(".scidb.pgn");
        let source = sources
            .iter()
            .find(|p| p.file_stem().is_some_and(|s| s.to_string_lossy() == stem))
            .unwrap_or_else(|| panic!("{stem}: no shared PGN file of that name"))
            .clone();
        // 1. The bytes Scidb read are the bytes relay writes today.
        let out = dir.join(format!("{stem}.cbf"));
        let r = relay_convert(&source, &out, "cbf", &[]);
        let err = String::from_utf8_lossy(&r.stderr);
        for ext in ["cbf", "cbi"] {
            let now = std::fs::read(out.with_extension(ext)).expect("written");
            let read = std::fs::read(data.join(format!("{stem}.{ext}"))).expect("kept");
            assert!(
                now == read,
                "{stem}.{ext}: relay's CBF writer changed since Scidb read its files; have Scidb \
                 read the new files and renew tests/e2e/data/scidb (see its README)"
            );
        }
        // 2. What Scidb read is the source, less the games relay left out (named).
        let left_out = skipped_games(&err, &source);
        // Numbered as relay numbers them: games that do not read count (and are left out).
        let bytes = std::fs::read(&source).expect("source");
        let kept: Vec<Game> = read_games(&relay_core::pgn::decode_pgn_bytes(&bytes))
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !left_out.contains(&(i + 1)))
            .map(|(i, g)| g.unwrap_or_else(|e| panic!("{stem} game {}: {e}", i + 1)))
            .collect();
        let text = std::fs::read_to_string(reading).expect("scidb pgn");
        let pieces: Vec<&str> = text
            .split("\n[Event ")
            .filter(|p| !p.trim().is_empty())
            .collect();
        assert_eq!(
            pieces.len(),
            kept.len(),
            "{stem}: Scidb read a different number of games"
        );
        for (i, (x, piece)) in kept.iter().zip(&pieces).enumerate() {
            let at = format!("{stem}: game {} of those written", i + 1);
            let mut piece = piece.to_string();
            if !piece.starts_with("[Event ") {
                piece = format!("[Event {piece}");
            }
            // Scidb's PGN writer leaves out the FEN of a set-up start: its moves are read from
            // the source's start, which they only fit if Scidb decoded that very position.
            if x.has_custom_start() && !piece.contains("[FEN ") {
                let fen = relay_core::epd::fen(&x.start);
                piece = format!("[SetUp \"1\"]\n[FEN \"{fen}\"]\n{piece}");
            }
            let y = &relay_core::pgn::read_game(&piece)
                .unwrap_or_else(|e| panic!("{at}: Scidb's reading does not read: {e}"));
            assert_eq!(sans(x), sans(y), "{at}");
            assert_eq!(x.start, y.start, "{at}");
            assert_eq!(x.result, y.result, "{at}");
            // Scidb reads names and events as ChessBase users wrote them: a bracketed
            // "(Computer)", title or country after a name, and a country code ending the event,
            // are data about the name, not part of it. Anything else must be equal.
            for t in ["White", "Black"] {
                let (a, mut b) = (known(x, t), known(y, t));
                // A '-' in White's name is written as the stand-in '─' (where readers would
                // split White from Black at a '-'), and read back as what it is.
                if t == "White" && a.contains('-') {
                    b = b.replace('─', "-");
                }
                if a != b {
                    assert!(
                        a.starts_with(&b) && a[b.len()..].trim().starts_with('('),
                        "{at} {t}: {a:?} read as {b:?}"
                    );
                    conventions += 1;
                }
            }
            let event = known(x, "Event");
            if event.chars().all(|c| cp850(c).is_some()) && event.len() + 12 <= 63 {
                let read = known(y, "Event");
                if read != event {
                    let rest = &event[read.len().min(event.len())..];
                    assert!(
                        event.starts_with(&read)
                            && rest.trim().len() == 3
                            && rest.trim().bytes().all(|b| b.is_ascii_uppercase()),
                        "{at}: event {event:?} read as {read:?}"
                    );
                    conventions += 1;
                }
            }
            let year = |g: &Game| {
                g.tags
                    .get("Date")
                    .filter(|d| d.len() >= 4 && d[..4].bytes().all(|b| b.is_ascii_digit()))
                    .map(|d| d[..4].to_string())
            };
            // CBF's year byte holds 1772..=2026; another year is written as none.
            if year(x).is_some_and(|y| ("1772".."2027").contains(&y.as_str())) {
                assert_eq!(year(x), year(y), "{at}");
            }
            games += 1;
        }
        files += 1;
    }
    eprintln!(
        "Scidb read {games} games of {files} CBF files as relay writes them today: moves, start, \
         players, event, year and result equal ({conventions} names or events read by \
         ChessBase's conventions)"
    );
}
