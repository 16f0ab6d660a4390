//! Random legal games round-trip through every archive format of the core.
//!
//! Each format keeps a different part of a game (PGN all of it; PGC tags, start and moves; the
//! one-byte container the same; CBF standard-start games with their comments but only the
//! roster tags it has room for; EPD one line per position), and each has its own way of
//! numbering moves. Hand-written examples cover the usual cases; these properties throw games
//! from the standard start and from all 960 Chess960 starts at them, with Latin-1 names,
//! clocks and comments, so that a move numbered wrongly, a tag mangled or a castling move lost
//! shows up as a difference between the game written and the game read back.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use relay_core::cbf;
use relay_core::clock_time::ClockTime;
use relay_core::convert::{Format, GameWriter};
use relay_core::epd::game_epds;
use relay_core::game::{Game, GameResult, RecordedMove, Tags};
use relay_core::onebyte;
use relay_core::pgc;
use relay_core::pgn::{WriteOptions, export_tags, read_game, read_games, write_game};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{
    CastlingMode, CastlingSide, Chess, Color, EnPassantMode, Move, Position, Rank, Role, Square,
};

// ---------------------------------------------------------------------------------------------
// Chess960 start positions
// ---------------------------------------------------------------------------------------------

/// White's back rank of Chess960 start position `index` (0..=959) in Scharnagl's numbering:
/// the light-squared bishop from `index mod 4` (files b, d, f, h), the dark-squared one from
/// the next quotient mod 4 (a, c, e, g), the queen on the free square numbered by the next
/// quotient mod 6, the knights from the remaining 0..=9 by the table below, then rook, king
/// and rook on the three squares left.
fn chess960_back_rank(index: u16) -> [Role; 8] {
    assert!(index < 960, "Chess960 start {index} does not exist");
    let mut rank: [Option<Role>; 8] = [None; 8];
    let mut n = usize::from(index);
    rank[(n % 4) * 2 + 1] = Some(Role::Bishop);
    n /= 4;
    rank[(n % 4) * 2] = Some(Role::Bishop);
    n /= 4;
    let free = |rank: &[Option<Role>; 8]| -> Vec<usize> {
        (0..8).filter(|&f| rank[f].is_none()).collect()
    };
    rank[free(&rank)[n % 6]] = Some(Role::Queen);
    n /= 6;
    // The two knights among the five free squares, for n = 0..=9.
    const KNIGHTS: [(usize, usize); 10] = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
        (3, 4),
    ];
    let (a, b) = KNIGHTS[n];
    let five = free(&rank);
    rank[five[a]] = Some(Role::Knight);
    rank[five[b]] = Some(Role::Knight);
    for (square, role) in free(&rank)
        .into_iter()
        .zip([Role::Rook, Role::King, Role::Rook])
    {
        rank[square] = Some(role);
    }
    rank.map(|r| r.expect("every square of the back rank is filled"))
}

/// The back rank as FEN letters of White ("RNBQKBNR").
fn back_rank_letters(rank: &[Role; 8]) -> String {
    rank.iter().map(|r| r.upper_char()).collect()
}

/// The FEN of Chess960 start `index`, castling rights as Shredder-FEN (the rooks' files).
fn chess960_fen(index: u16) -> String {
    let rank = chess960_back_rank(index);
    let white = back_rank_letters(&rank);
    let rook_files: Vec<char> = (0..8u8)
        .filter(|&f| rank[usize::from(f)] == Role::Rook)
        .map(|f| char::from(b'a' + f))
        .collect();
    // King's side rook first, as Shredder-FEN writes them.
    let castling: String = rook_files
        .iter()
        .rev()
        .map(|c| c.to_ascii_uppercase())
        .chain(rook_files.iter().rev().copied())
        .collect();
    format!(
        "{}/pppppppp/8/8/8/8/PPPPPPPP/{white} w {castling} - 0 1",
        white.to_ascii_lowercase()
    )
}

/// Chess960 start position `index`.
fn chess960_start(index: u16) -> Chess {
    let fen = chess960_fen(index);
    Fen::from_ascii(fen.as_bytes())
        .expect("the FEN of a start position parses")
        .into_position(CastlingMode::Chess960)
        .unwrap_or_else(|e| panic!("Chess960 start {index} ({fen}) is not legal: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Random games
// ---------------------------------------------------------------------------------------------

/// What a move of a random game carries besides the move, which is `choice` modulo the number
/// of legal moves (so shrinking towards 0 plays the first legal move).
#[derive(Clone, Debug)]
struct PlySpec {
    choice: u32,
    /// Tenths of a second: the PGN clock commands keep tenths.
    clk: Option<u64>,
    emt: Option<u64>,
    comment: Option<String>,
}

/// Plain ASCII words, so that every format that keeps comments keeps them as they are.
fn comment() -> impl Strategy<Value = String> {
    const WORDS: [&str; 12] = [
        "good", "bad", "only", "move", "time", "trouble", "novelty", "with", "idea", "draw",
        "offered", "blunder",
    ];
    vec(proptest::sample::select(&WORDS[..]), 1..6).prop_map(|w| w.join(" "))
}

fn ply() -> impl Strategy<Value = PlySpec> {
    (
        any::<u32>(),
        option::weighted(0.5, 0u64..72_000),
        option::weighted(0.2, 0u64..6_000),
        option::weighted(0.15, comment()),
    )
        .prop_map(|(choice, clk, emt, comment)| PlySpec {
            choice,
            clk,
            emt,
            comment,
        })
}

/// A player's name in ASCII and Latin-1 letters ("Ölund-Jean, Émile"), at most 28 characters
/// so that CBF's 63-byte player text holds both names.
fn player() -> impl Strategy<Value = String> {
    "[A-ZÉÖÅ][a-zéèüöäçñåø]{1,8}(-[A-Z][a-zé]{1,6})?(, [A-ZÉ][a-zéüö]{1,8})?"
}

/// Random tags as a relay would have them; each tag may be missing.
fn tags() -> impl Strategy<Value = Tags> {
    (
        option::weighted(0.8, "[A-Z][a-zéü]{2,8}( [A-Z][a-zé]{2,8}){0,2}"),
        option::weighted(0.8, "[A-ZÜ][a-zéü]{2,10}"),
        option::weighted(0.8, (1990u32..2026, 1u32..13, 1u32..29)),
        option::weighted(0.8, "[1-9][0-9]?(\\.[1-9][0-9]?)?"),
        option::weighted(0.9, player()),
        option::weighted(0.9, player()),
        option::weighted(0.6, 1600u32..2800),
        option::weighted(0.6, 1600u32..2800),
    )
        .prop_map(
            |(event, site, date, round, white, black, white_elo, black_elo)| {
                let mut tags = Tags::default();
                let date = date.map(|(y, m, d)| format!("{y:04}.{m:02}.{d:02}"));
                for (name, value) in [
                    ("Event", event),
                    ("Site", site),
                    ("Date", date),
                    ("Round", round),
                    ("White", white),
                    ("Black", black),
                    ("WhiteElo", white_elo.map(|e| e.to_string())),
                    ("BlackElo", black_elo.map(|e| e.to_string())),
                ] {
                    if let Some(value) = value {
                        tags.set(name, value);
                    }
                }
                tags
            },
        )
}

fn result() -> impl Strategy<Value = GameResult> {
    prop_oneof![
        Just(GameResult::WhiteWins),
        Just(GameResult::BlackWins),
        Just(GameResult::Draw),
        Just(GameResult::Ongoing),
    ]
}

/// The game the specs describe: legal moves from the start (`None` the standard one, else a
/// Chess960 start by its number) until the plies run out or the game is over.
fn build_game(
    start: Option<u16>,
    plies: &[PlySpec],
    tags: Tags,
    result: GameResult,
    intro: Option<String>,
) -> Game {
    let (start, castling_mode) = match start {
        None => (Chess::default(), CastlingMode::Standard),
        Some(index) => (chess960_start(index), CastlingMode::Chess960),
    };
    let mut pos = start.clone();
    let mut moves = Vec::with_capacity(plies.len());
    for p in plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let mv = legal[p.choice as usize % legal.len()];
        moves.push(RecordedMove {
            mv,
            san: SanPlus::from_move_and_play_unchecked(&mut pos, mv),
            clk: p.clk.map(|t| ClockTime(t * 100)),
            emt: p.emt.map(|t| ClockTime(t * 100)),
            comment: p.comment.clone(),
        });
    }
    Game {
        tags,
        start,
        castling_mode,
        moves,
        result,
        intro,
    }
}

/// A random game from a start `start` picks.
fn game_from(start: impl Strategy<Value = Option<u16>>) -> impl Strategy<Value = Game> {
    (
        start,
        vec(ply(), 0..=150),
        tags(),
        result(),
        option::weighted(0.2, comment()),
    )
        .prop_map(|(start, plies, tags, result, intro)| {
            build_game(start, &plies, tags, result, intro)
        })
}

/// A random game from the standard start, a Chess960 start, or the standard array played as
/// Chess960 (Chess960 start 518).
fn any_game() -> impl Strategy<Value = Game> {
    game_from(prop_oneof![
        2 => Just(None),
        1 => Just(Some(518)),
        3 => (0u16..960).prop_map(Some),
    ])
}

fn standard_game() -> impl Strategy<Value = Game> {
    game_from(Just(None))
}

// ---------------------------------------------------------------------------------------------
// Comparing games
// ---------------------------------------------------------------------------------------------

/// The game as PGN, to show a failing case compactly.
fn pgn(game: &Game) -> String {
    write_game(game, &WriteOptions::default())
}

/// The tags a reader gives back for a game written with [`export_tags`]: all of them but
/// `SetUp` and `FEN`, which become the start position.
fn expected_tags(game: &Game) -> Vec<(String, String)> {
    export_tags(game, false)
        .into_iter()
        .filter(|(name, _)| name != "SetUp" && name != "FEN")
        .collect()
}

fn mvs(game: &Game) -> Vec<Move> {
    game.moves.iter().map(|m| m.mv).collect()
}

fn sans(game: &Game) -> Vec<String> {
    game.moves.iter().map(|m| m.san.to_string()).collect()
}

/// What every format keeps: the tags the PGN writer exports, the start, the castling mode,
/// the moves and the result.
fn assert_same_game(back: &Game, game: &Game, format: &str) {
    let shown = pgn(game);
    assert_eq!(
        back.tags.0,
        expected_tags(game),
        "{format}: tags differ for\n{shown}"
    );
    for (name, value) in &game.tags.0 {
        assert_eq!(
            back.tags.get(name),
            Some(value.as_str()),
            "{format}: tag {name} for\n{shown}"
        );
    }
    assert!(
        back.start == game.start,
        "{format}: start differs for\n{shown}"
    );
    assert_eq!(
        back.castling_mode, game.castling_mode,
        "{format}: castling mode for\n{shown}"
    );
    assert_eq!(mvs(back), mvs(game), "{format}: moves differ for\n{shown}");
    assert_eq!(sans(back), sans(game), "{format}: SAN differs for\n{shown}");
    assert_eq!(back.result, game.result, "{format}: result for\n{shown}");
}

fn pgn_round_trip(game: &Game) {
    let text = pgn(game);
    let back = read_game(&text).unwrap_or_else(|e| panic!("PGN does not read back: {e}\n{text}"));
    assert_same_game(&back, game, "PGN");
    for (i, (b, g)) in back.moves.iter().zip(&game.moves).enumerate() {
        assert_eq!(
            (b.clk, b.emt, &b.comment),
            (g.clk, g.emt, &g.comment),
            "PGN: clocks or comment of ply {} differ in\n{text}",
            i + 1
        );
    }
    assert_eq!(back.intro, game.intro, "PGN: intro differs in\n{text}");
}

fn pgc_round_trip(game: &Game) {
    let bytes = pgc::encode_game(game)
        .unwrap_or_else(|e| panic!("PGC refuses the game: {e}\n{}", pgn(game)));
    let back: Vec<Game> = pgc::games(bytes.as_slice())
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("PGC does not read back: {e}\n{}", pgn(game)));
    assert_eq!(back.len(), 1, "PGC: one game in, one out");
    assert_same_game(&back[0], game, "PGC");
}

/// One-byte container round trip; `Err` with the encoder's reason when it refuses the game.
fn onebyte_round_trip(game: &Game) -> Result<(), String> {
    let record = match onebyte::container_game(game) {
        Ok(record) => record,
        Err(e) => return Err(e.to_string()),
    };
    let file = [onebyte::MAGIC, record.as_slice()].concat();
    let back: Vec<Game> = onebyte::container_games(&file)
        .expect("the file starts with the magic line")
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("one-byte does not read back: {e}\n{}", pgn(game)));
    assert_eq!(back.len(), 1, "one-byte: one game in, one out");
    assert_same_game(&back[0], game, "one-byte");
    Ok(())
}

/// Why the one-byte encoder may refuse a game of these strategies: two promoted pieces from
/// one file (the format cannot name them apart). Every start has one queen and pairs of the
/// other pieces, so the set-up refusals never apply.
fn onebyte_refusal_is_explained(reason: &str) -> bool {
    reason.contains("cannot be told apart")
}

/// Why CBF may refuse a game from the standard start: a move numbered above 127 by its
/// generator (several queens), or a commented move numbered exactly 127.
fn cbf_refusal_is_explained(reason: &str) -> bool {
    // Too far down ChessBase's list, or a name CBF cannot hold exactly: a '-' in White's
    // name, a character ChessBase shows as a piece or code page 850 lacks, too long.
    [
        "127",
        "holds a '-'",
        "as a chess piece",
        "code page (850) lacks",
        "over CBF's 63",
    ]
    .iter()
    .any(|why| reason.contains(why))
}

/// What CBF gives back for an Elo tag: rounded to 5 and kept within 1605..=2875.
fn cbf_elo(value: Option<&str>) -> Option<String> {
    let elo: u32 = value?.parse().ok()?;
    let rounded = (elo + 2) / 5 * 5;
    (1605..=2875)
        .contains(&rounded)
        .then(|| rounded.to_string())
}

/// A CBF record of a standard-start game read back: moves, result, the roster texts, the
/// year, Elo and comments. `Err` with the reason when the encoder refuses the game.
fn cbf_round_trip(game: &Game) -> Result<(), String> {
    let record = cbf::encode_game(game).map_err(|e| e.to_string())?;
    let end = u32::try_from(record.len()).expect("a record is small");
    let cbi = cbf::index(&[0], end);
    let back: Vec<Game> = cbf::games(&record, Some(&cbi))
        .expect("the index is well formed")
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("CBF does not read back: {e}\n{}", pgn(game)));
    assert_eq!(back.len(), 1, "CBF: one game in, one out");
    let back = &back[0];
    let shown = pgn(game);
    assert!(back.start == game.start, "CBF: start differs for\n{shown}");
    assert_eq!(mvs(back), mvs(game), "CBF: moves differ for\n{shown}");
    assert_eq!(sans(back), sans(game), "CBF: SAN differs for\n{shown}");
    assert_eq!(back.result, game.result, "CBF: result for\n{shown}");
    // The event and a numbered round (as these are) come back; CBF has no site.
    for name in ["Event", "Round", "White", "Black"] {
        assert_eq!(
            back.tags.get(name),
            Some(game.tags.get(name).unwrap_or("?")),
            "CBF: tag {name} for\n{shown}"
        );
    }
    assert_eq!(
        back.tags.get("Site"),
        Some("?"),
        "CBF: no site for\n{shown}"
    );
    let year = game
        .tags
        .get("Date")
        .and_then(|d| d.split_once('.'))
        .map_or("????.??.??".to_string(), |(year, _)| {
            format!("{year}.??.??")
        });
    assert_eq!(
        back.tags.get("Date"),
        Some(year.as_str()),
        "CBF: Date for\n{shown}"
    );
    for name in ["WhiteElo", "BlackElo"] {
        assert_eq!(
            back.tags.get(name).map(str::to_string),
            cbf_elo(game.tags.get(name)),
            "CBF: {name} for\n{shown}"
        );
    }
    let comments =
        |g: &Game| -> Vec<Option<String>> { g.moves.iter().map(|m| m.comment.clone()).collect() };
    assert_eq!(comments(back), comments(game), "CBF: comments for\n{shown}");
    Ok(())
}

/// The square a pawn's double step passes over, the en passant square EPD writes after it.
fn passed_square(m: Move) -> Option<Square> {
    match m {
        Move::Normal {
            role: Role::Pawn,
            from,
            to,
            ..
        } if from.rank().distance(to.rank()) == 2 => {
            let between = (u32::from(from.rank()) + u32::from(to.rank())) / 2;
            Some(Square::from_coords(from.file(), Rank::new(between)))
        }
        _ => None,
    }
}

/// The EPD lines of a game: one per position, each with the position's fields, counters, id
/// and the move played from it.
fn check_epds(game: &Game) {
    let lines = game_epds(game, "t", false);
    let shown = pgn(game);
    assert_eq!(
        lines.len(),
        game.moves.len() + 1,
        "EPD: one line per position for\n{shown}"
    );
    let mut pos = game.start.clone();
    for (i, line) in lines.iter().enumerate() {
        let fen = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
        let fen_fields: Vec<&str> = fen.split(' ').collect();
        let fields: Vec<&str> = line.split_whitespace().take(4).collect();
        assert_eq!(fields.len(), 4, "EPD line {i}: {line}");
        assert_eq!(
            fields[..3],
            fen_fields[..3],
            "EPD line {i}: position differs: {line} vs {fen}"
        );
        // EPD writes the en passant square after any double step (§4.4), FEN only when a
        // capture there is legal.
        let double_step = i
            .checked_sub(1)
            .and_then(|k| passed_square(game.moves[k].mv));
        let want_ep = double_step.map_or("-".to_string(), |sq| sq.to_string());
        assert_eq!(fields[3], want_ep, "EPD line {i}: en passant in {line}");
        if fen_fields[3] != "-" {
            assert_eq!(fields[3], fen_fields[3], "EPD line {i}: {line} vs {fen}");
        }

        // The operations after the fields, `opcode operands;` each.
        let head_len: usize = fields.iter().map(|f| f.len() + 1).sum();
        let ops: Vec<&str> = line[head_len.min(line.len())..]
            .split(';')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .collect();
        let op = |code: &str| -> Option<&str> {
            ops.iter()
                .find_map(|o| o.strip_prefix(code).and_then(|r| r.strip_prefix(' ')))
        };
        let hmvc = pos.halfmoves().to_string();
        let fmvn = pos.fullmoves().to_string();
        let id = format!("\"t ply {i}\"");
        assert_eq!(op("hmvc"), Some(hmvc.as_str()), "EPD line {i}: {line}");
        assert_eq!(op("fmvn"), Some(fmvn.as_str()), "EPD line {i}: {line}");
        assert_eq!(op("id"), Some(id.as_str()), "EPD line {i}: {line}");
        match game.moves.get(i) {
            Some(m) => {
                let sm = op("sm").unwrap_or_else(|| panic!("EPD line {i} has no sm: {line}"));
                assert_eq!(sm, m.san.to_string(), "EPD line {i}: {line}");
                let named = sm
                    .parse::<SanPlus>()
                    .expect("sm is SAN")
                    .san
                    .to_move(&pos)
                    .expect("sm is legal in its position");
                assert_eq!(named, m.mv, "EPD line {i}: sm names another move: {line}");
                pos.play_unchecked(m.mv);
            }
            None => assert_eq!(op("sm"), None, "EPD: the last position has no move: {line}"),
        }
    }
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn pgn_round_trips(game in any_game()) {
        pgn_round_trip(&game);
    }

    #[test]
    fn pgc_round_trips(game in any_game()) {
        pgc_round_trip(&game);
    }

    #[test]
    fn onebyte_round_trips_or_says_why_not(game in any_game()) {
        if let Err(reason) = onebyte_round_trip(&game) {
            prop_assert!(onebyte_refusal_is_explained(&reason), "one-byte refuses with {reason:?}:\n{}", pgn(&game));
        }
    }

    #[test]
    fn cbf_round_trips_standard_games_and_refuses_chess960(game in any_game()) {
        match game.castling_mode {
            CastlingMode::Standard => {
                if let Err(reason) = cbf_round_trip(&game) {
                    prop_assert!(cbf_refusal_is_explained(&reason), "CBF refuses with {reason:?}:\n{}", pgn(&game));
                }
            }
            CastlingMode::Chess960 => {
                let e = cbf::encode_game(&game).expect_err("CBF cannot hold Chess960");
                prop_assert!(matches!(e, cbf::CbfError::Chess960), "CBF refuses Chess960 with {e}");
            }
        }
    }

    #[test]
    fn epd_has_a_line_per_position(game in any_game()) {
        check_epds(&game);
    }
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn game_writer_keeps_count_and_order(games in vec(any_game(), 1..5), cbf_games in vec(standard_game(), 1..5)) {
        // PGC: every game is accepted.
        let mut w = GameWriter::new(Vec::new(), Format::Pgc, false);
        for g in &games {
            w.add(g).unwrap_or_else(|e| panic!("PGC refuses: {e}\n{}", pgn(g)));
        }
        prop_assert_eq!(w.games(), games.len());
        let bytes = w.finish().expect("writing to memory");
        let back: Vec<Game> = pgc::games(bytes.as_slice()).collect::<Result<_, _>>().expect("PGC reads back");
        prop_assert_eq!(back.len(), games.len());
        for (b, g) in back.iter().zip(&games) {
            assert_same_game(b, g, "PGC file");
        }

        // PGN: the games one after another, as read_games finds them.
        let mut w = GameWriter::new(Vec::new(), Format::Pgn, false);
        for g in &games {
            w.add(g).expect("PGN takes every game");
        }
        let bytes = w.finish().expect("writing to memory");
        let text = String::from_utf8(bytes).expect("PGN is written as UTF-8");
        let back: Vec<Game> = read_games(&text).into_iter().collect::<Result<_, _>>().expect("PGN reads back");
        prop_assert_eq!(back.len(), games.len());
        for (b, g) in back.iter().zip(&games) {
            assert_same_game(b, g, "PGN file");
        }

        // One-byte: the magic line once, then the games the encoder accepts, in order.
        let mut w = GameWriter::new(Vec::new(), Format::OneByte, false);
        let mut kept = Vec::new();
        for g in &games {
            match w.add(g) {
                Ok(()) => kept.push(g),
                Err(e) => prop_assert!(onebyte_refusal_is_explained(&e.to_string()), "one-byte refuses with {e}"),
            }
        }
        let bytes = w.finish().expect("writing to memory");
        let back: Vec<Game> = onebyte::container_games(&bytes)
            .expect("the file starts with the magic line")
            .collect::<Result<_, _>>()
            .expect("one-byte reads back");
        prop_assert_eq!(back.len(), kept.len());
        for (b, g) in back.iter().zip(&kept) {
            assert_same_game(b, g, "one-byte file");
        }

        // CBF with its index: a game the encoder refuses is left out, the others keep order.
        let mut w = GameWriter::new(Vec::new(), Format::Cbf, false);
        let mut kept = Vec::new();
        for g in &cbf_games {
            match w.add(g) {
                Ok(()) => kept.push(g),
                Err(e) => prop_assert!(cbf_refusal_is_explained(&e.to_string()), "CBF refuses with {e}"),
            }
        }
        let index = w.cbf_index().expect("a small file");
        let bytes = w.finish().expect("writing to memory");
        let back: Vec<Game> = cbf::games(&bytes, Some(&index))
            .expect("the index is well formed")
            .collect::<Result<_, _>>()
            .expect("CBF reads back");
        prop_assert_eq!(back.len(), kept.len());
        for (b, g) in back.iter().zip(&kept) {
            prop_assert_eq!(mvs(b), mvs(g));
            prop_assert_eq!(b.tags.get("White"), Some(g.tags.get("White").unwrap_or("?")));
            prop_assert_eq!(b.result, g.result);
        }
        // Without the index, record after record, the same games.
        let sequential = cbf::games(&bytes, None).expect("no index to check").count();
        prop_assert_eq!(sequential, kept.len());
    }
}

// ---------------------------------------------------------------------------------------------
// Fixed cases
// ---------------------------------------------------------------------------------------------

#[test]
fn scharnagl_numbering() {
    let rank = |i| back_rank_letters(&chess960_back_rank(i));
    assert_eq!(rank(518), "RNBQKBNR");
    assert_eq!(rank(0), "BBQNNRKR");
    assert_eq!(rank(959), "RKRNNQBB");
    assert_eq!(chess960_start(518).board(), Chess::default().board());
    let mut seen = std::collections::HashSet::new();
    for i in 0..960 {
        let r = chess960_back_rank(i);
        let files = |role: Role| -> Vec<usize> { (0..8).filter(|&f| r[f] == role).collect() };
        let (bishops, rooks, king) = (files(Role::Bishop), files(Role::Rook), files(Role::King));
        assert_eq!(bishops.len(), 2, "{i}");
        assert_ne!(bishops[0] % 2, bishops[1] % 2, "{i}: bishops on one colour");
        assert!(
            rooks[0] < king[0] && king[0] < rooks[1],
            "{i}: king not between the rooks"
        );
        assert!(seen.insert(r), "{i}: a start twice");
        // Legal, with all four castling rights.
        let pos = chess960_start(i);
        for color in Color::ALL {
            for side in [CastlingSide::KingSide, CastlingSide::QueenSide] {
                assert!(pos.castles().has(color, side), "{i}: {color:?} {side:?}");
            }
        }
    }
}

/// The seeded searches below draw from the project's one small generator.
fn below(rng: &mut boards::rng::SplitMix64, n: usize) -> usize {
    rng.below(n as u64) as usize
}

fn castling_side(m: &Move) -> Option<CastlingSide> {
    match *m {
        Move::Castle { king, rook } => Some(CastlingSide::from_queen_side(rook < king)),
        _ => None,
    }
}

/// A Chess960 game from `index` in which White castles on `sides.0` and Black on `sides.1`,
/// found by random play that leaves king and rooks alone and castles as soon as it may;
/// `None` when this seed's game lost the right first.
fn castling_game(index: u16, sides: (CastlingSide, CastlingSide), seed: u64) -> Option<Game> {
    let start = chess960_start(index);
    let mut pos = start.clone();
    let mut rng = boards::rng::SplitMix64(seed);
    let mut moves = Vec::new();
    let mut castled = [false, false];
    while moves.len() < 80 {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let side = usize::from(pos.turn().is_black());
        let wanted = if side == 0 { sides.0 } else { sides.1 };
        let mv = if castled[side] {
            legal[below(&mut rng, legal.len())]
        } else if let Some(c) = legal.iter().find(|m| castling_side(m) == Some(wanted)) {
            castled[side] = true;
            *c
        } else {
            let quiet: Vec<&Move> = legal
                .iter()
                .filter(|m| !matches!(m.role(), Role::King | Role::Rook))
                .collect();
            if quiet.is_empty() {
                return None;
            }
            *quiet[below(&mut rng, quiet.len())]
        };
        moves.push(RecordedMove {
            mv,
            san: SanPlus::from_move_and_play_unchecked(&mut pos, mv),
            clk: Some(ClockTime(5_400_000 - 1_000 * moves.len() as u64)),
            emt: None,
            comment: mv.is_castle().then(|| "castles".to_string()),
        });
        if castled == [true, true] && moves.len() % 2 == 0 {
            break;
        }
    }
    if castled != [true, true] {
        return None;
    }
    let mut tags = Tags::default();
    tags.set("Event", format!("Chess960 {index}"));
    tags.set("White", "Müller, Jörg");
    tags.set("Black", "Ångström, Émile");
    Some(Game {
        tags,
        start,
        castling_mode: CastlingMode::Chess960,
        moves,
        result: GameResult::Draw,
        intro: None,
    })
}

/// Chess960 castling on both sides by both colours, through PGN, PGC and the one-byte
/// container: random games alone castle too rarely to rely on them for it.
#[test]
fn chess960_castling_round_trips() {
    let (k, q) = (CastlingSide::KingSide, CastlingSide::QueenSide);
    let mut found = Vec::new();
    for sides in [(k, q), (q, k), (k, k), (q, q)] {
        let game = (0u64..2_000)
            .find_map(|seed| castling_game((seed * 389 % 960) as u16, sides, seed))
            .unwrap_or_else(|| panic!("no seed castles {sides:?}"));
        found.push(game);
    }
    // Starts where castling hardly moves the pieces: the king already on g1 (castling short
    // moves only the rook), and the king on b1 with its rook on a1 (long castling swaps them).
    for (index, king_file, sides) in [(0u16, 6, (k, k)), (959, 1, (q, q))] {
        assert_eq!(chess960_back_rank(index)[king_file], Role::King);
        let game = (0u64..2_000)
            .find_map(|seed| castling_game(index, sides, seed))
            .unwrap_or_else(|| panic!("no seed castles {sides:?} from {index}"));
        found.push(game);
    }
    for game in &found {
        let castles: Vec<String> = game
            .moves
            .iter()
            .filter(|m| m.mv.is_castle())
            .map(|m| m.san.to_string())
            .collect();
        assert_eq!(castles.len(), 2, "{}", pgn(game));
        assert!(
            castles.iter().all(|s| s.starts_with("O-O")),
            "castling written {castles:?}"
        );
        pgn_round_trip(game);
        pgc_round_trip(game);
        if let Err(reason) = onebyte_round_trip(game) {
            panic!(
                "one-byte refuses a game without promotions: {reason}\n{}",
                pgn(game)
            );
        }
        check_epds(game);
        let e = cbf::encode_game(game).expect_err("CBF cannot hold Chess960");
        assert!(matches!(e, cbf::CbfError::Chess960), "{e}");
    }
}

/// The one-byte encoder refuses only games with two promoted pieces of one side from one file,
/// which random play makes rarely.
#[test]
fn onebyte_refusals_are_rare() {
    let mut runner = TestRunner::deterministic();
    let strategy = any_game();
    let total = 200;
    let mut refused = Vec::new();
    for _ in 0..total {
        let game = strategy
            .new_tree(&mut runner)
            .expect("the strategy always makes a game")
            .current();
        if let Err(reason) = onebyte_round_trip(&game) {
            assert!(
                onebyte_refusal_is_explained(&reason),
                "{reason}\n{}",
                pgn(&game)
            );
            refused.push(reason);
        }
    }
    assert!(
        refused.len() * 10 <= total,
        "{} of {total} refused: {refused:?}",
        refused.len()
    );
}
