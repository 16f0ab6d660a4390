//! The module's round trips and the files it must read: games written and read back, records
//! built or damaged by hand. The helpers that build games and files are shared with the
//! generator's tests in `movegen.rs`.

use super::layout::{
    COMMENT_START, COMMENTED, check_bytes, code_moves, code_text, decode_header, encode_header,
};
use super::text::COMMENT_NEWLINE;
use super::*;
use crate::game::{Game, GameResult, RecordedMove, Tags};
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanPlus};
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

pub(super) fn position(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .expect("fen")
        .into_position(CastlingMode::Standard)
        .expect("position")
}

pub(super) fn game_of(
    start: Chess,
    sans: &[&str],
    tags: &[(&str, &str)],
    result: GameResult,
) -> Game {
    let mut pos = start.clone();
    let moves = sans
        .iter()
        .map(|s| {
            let mv = s.parse::<San>().expect("san").to_move(&pos).expect("legal");
            RecordedMove {
                mv,
                san: SanPlus::from_move_and_play_unchecked(&mut pos, mv),
                clk: None,
                emt: None,
                comment: None,
            }
        })
        .collect();
    Game {
        tags: Tags(
            tags.iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        ),
        start,
        moves,
        result,
        ..Game::default()
    }
}

/// The CBF file and CBI index of some games.
fn file_of(games: &[Game]) -> (Vec<u8>, Vec<u8>) {
    let mut cbf = Vec::new();
    let mut offsets = Vec::new();
    for g in games {
        offsets.push(cbf.len() as u32);
        cbf.extend(encode_game(g).expect("encode"));
    }
    let cbi = index(&offsets, cbf.len() as u32);
    (cbf, cbi)
}

pub(super) fn read_all(cbf: &[u8], cbi: Option<&[u8]>) -> Vec<Game> {
    games(cbf, cbi)
        .expect("index")
        .collect::<Result<Vec<_>, _>>()
        .expect("read")
}

/// The project's one small generator, with the two draws these tests make.
pub(super) struct Rng(boards::rng::SplitMix64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(boards::rng::SplitMix64(seed))
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
}

#[test]
fn a_record_built_by_hand() {
    // 1. e4 e5 2. Nf3, Kasparov,G against Karpov,A, Moscow 1985, 1-0.
    //
    // The generator numbers, from §2.4's order (squares a1..a8, b1..b8, …):
    // 1. e4 from the initial position: Ra1 has none (b1 and a2 are White's); Pa2: a4 (1),
    //    a3 (2); Nb1: its jumps in order (−2,±1) and (+2,−1) leave the board, (+2,+1) is
    //    d2 (own pawn), (−1,−2) leaves, (−1,+2) a3 (3), (+1,−2) leaves, (+1,+2) c3 (4);
    //    Pb2: b4 (5), b3 (6); Bc1 is shut in; Pc2: c4 (7), c3 (8); Qd1 shut in; Pd2: d4
    //    (9), d3 (10); Ke1 shut in, no castling (squares between taken); Pe2: e4 (11).
    // 1... e5: Black's pieces, again a-file first, rank 1 up: Pa7: a5 (1), a6 (2); Ra8
    //    none; Pb7: b5 (3), b6 (4); Nb8: (−2,±1) leave, (+2,−1) d7 own, (+2,+1) leaves,
    //    (−1,−2) a6 (5), (−1,+2) leaves, (+1,−2) c6 (6); Pc7: c5 (7), c6 (8); Bc8 shut
    //    in; Pd7: d5 (9), d6 (10); Qd8 shut in; Pe7: e5 (11).
    // 2. Nf3: Ra1 none; Pa2 2 moves (1, 2); Nb1 2 (3, 4); Pb2 2 (5, 6); Bc1 none; Pc2 2
    //    (7, 8); Qd1: bishop runs left-down and right-down leave the board, right-up goes
    //    e2, f3, g4, h5 (9..12), left-up meets c2; the rook runs meet c1, the edge, e1,
    //    d2; Pd2 2 (13, 14); Ke1: the steps in order reach only e2 (15), no castling;
    //    Pe4 (after e1, e2, e3): blocked by e5, nothing to take, no e.p.; Bf1: left-down
    //    and right-down leave, right-up meets g2, left-up e2, d3, c4, b5, a6 (16..20);
    //    Pf2 2 (21, 22); Ng1: (−2,−1) leaves, (−2,+1) e2 (23), (+2,±1) leave, (−1,−2)
    //    leaves, (−1,+2) f3 (24).
    let moves_plain: [u8; 3] = [11, 11, 24];

    // Header, plain (§2.1):
    let header_plain: [u8; 14] = [
        85, // 0: GY, 1985 − 1900
        2,  // 1: result 1-0
        0,  // 2: mlen high byte
        4,  // 3: mlen low byte: three moves + 1
        19, // 4: plen, "Kasparov,G-Karpov,A" (no ECO bits)
        6,  // 5: slen, "Moscow"
        0,  // 6: clen high byte
        0,  // 7: clen low byte: no comments
        0,  // 8: White's Elo: none
        0,  // 9: Black's Elo: none
        0,  // 10: flags1: usual start, no ECO
        0,  // 11: flags2: no ECO2
        2,  // 12: two full moves
        79, // 13: check byte, 85·0x25 + 6 + 0 = 3151 ≡ 79 (mod 256)
    ];
    // Coding: byte 11 first gets 14 + 19 + 6 = 39, then byte 13 down to 0 the keys 101,
    // 101·3 = 303 ≡ 47, 141, 423 ≡ 167, 501 ≡ 245, 735 ≡ 223, 669 ≡ 157, 471 ≡ 215,
    // 645 ≡ 133, 399 ≡ 143, 429 ≡ 173, 519 ≡ 7, 21, 63 (mod 256).
    let header_keys: [u8; 14] = [
        63, 21, 7, 173, 143, 133, 215, 157, 223, 245, 167, 141, 47, 101,
    ];
    let mut header = header_plain;
    header[11] ^= 39;
    for (b, k) in header.iter_mut().zip(header_keys) {
        *b ^= k;
    }

    // Texts (§2.3): 25 bytes, the key 3·25 = 75 on the last, then times 3 (mod 256)
    // towards the first.
    let text_plain = b"Kasparov,G-Karpov,AMoscow";
    let text_keys: [u8; 25] = [
        235, 249, 83, 113, 123, 41, 99, 33, 11, 89, 115, 209, 155, 137, 131, 129, 43, 185, 147, 49,
        187, 233, 163, 225, 75,
    ];
    let text: Vec<u8> = text_plain
        .iter()
        .zip(text_keys)
        .map(|(b, k)| b ^ k)
        .collect();

    // Moves (§2.4): s = mlen = 4; byte 2 gets 49·4 = 196, byte 1 gets 196·7 = 1372 ≡
    // 92, byte 0 stays.
    let moves = [moves_plain[0], moves_plain[1] ^ 92, moves_plain[2] ^ 196];

    let expected: Vec<u8> = [&header[..], &text, &moves].concat();
    assert_eq!(expected.len(), 42);

    let game = game_of(
        Chess::default(),
        &["e4", "e5", "Nf3"],
        &[
            ("Event", "Moscow"),
            ("Site", "?"),
            ("Date", "1985.??.??"),
            ("Round", "?"),
            ("White", "Kasparov,G"),
            ("Black", "Karpov,A"),
            ("Result", "1-0"),
        ],
        GameResult::WhiteWins,
    );
    assert_eq!(encode_game(&game).expect("encode"), expected);

    let read = read_all(&expected, None);
    assert_eq!(read.len(), 1);
    let g = &read[0];
    assert_eq!(g.tags, game.tags);
    assert_eq!(g.result, GameResult::WhiteWins);
    assert_eq!(
        g.moves.iter().map(|m| m.mv).collect::<Vec<_>>(),
        game.moves.iter().map(|m| m.mv).collect::<Vec<_>>()
    );
    assert_eq!(g.moves[2].san.to_string(), "Nf3");
    let cbi = index(&[0], 42);
    assert_eq!(read_all(&expected, Some(&cbi)).len(), 1);
}

#[test]
fn random_games_round_trip() {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut games_in = Vec::new();
    let mut refused = 0;
    for n in 0..200 {
        let mut pos = Chess::default();
        let mut moves = Vec::new();
        for ply in 0..rng.below(201) {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let mv = legal[rng.below(legal.len())];
            let comment = match rng.below(8) {
                0 => Some(format!("note {ply}\nsecond line")),
                1 => Some(format!("ply {ply}")),
                _ => None,
            };
            moves.push(RecordedMove {
                mv,
                san: SanPlus::from_move_and_play_unchecked(&mut pos, mv),
                clk: None,
                emt: None,
                comment,
            });
        }
        let year = 1772 + (n * 37) % 255;
        let result = [
            GameResult::WhiteWins,
            GameResult::BlackWins,
            GameResult::Draw,
            GameResult::Ongoing,
        ][rng.below(4)];
        let black = if n % 3 == 0 {
            format!("Smith-Jones {n}")
        } else {
            format!("Black {n}")
        };
        let game = Game {
            tags: Tags(vec![
                ("Event".into(), format!("Event {n}")),
                ("Date".into(), format!("{year}.05.01")),
                ("White".into(), format!("White,{n}")),
                ("Black".into(), black),
                ("WhiteElo".into(), "2712".into()),
                ("Result".into(), result.to_string()),
            ]),
            moves,
            result,
            ..Game::default()
        };
        match encode_game(&game) {
            Ok(_) => games_in.push(game),
            // Many promoted queens can give more than 127 moves.
            Err(e) => {
                assert!(e.to_string().contains("127"), "{e}");
                refused += 1;
            }
        }
    }
    assert!(refused < 10, "{refused} refused");
    let (cbf, cbi) = file_of(&games_in);
    for cbi in [Some(cbi.as_slice()), None] {
        let read = read_all(&cbf, cbi);
        assert_eq!(read.len(), games_in.len());
        for (a, b) in games_in.iter().zip(&read) {
            assert_eq!(a.result, b.result);
            // Elo to the nearest multiple of 5.
            assert_eq!(b.tags.get("WhiteElo"), Some("2710"));
            for name in ["White", "Black", "Event", "Result"] {
                assert_eq!(a.tags.get(name), b.tags.get(name), "{name}");
            }
            let year = &a.tags.get("Date").expect("date")[..4];
            assert_eq!(b.tags.get("Date"), Some(format!("{year}.??.??").as_str()));
            assert_eq!(b.tags.get("Site"), Some("?"));
            assert_eq!(a.moves.len(), b.moves.len());
            for (x, y) in a.moves.iter().zip(&b.moves) {
                assert_eq!((x.mv, &x.san, &x.comment), (y.mv, &y.san, &y.comment));
            }
        }
    }
}

#[test]
fn set_up_starts_round_trip() {
    // White to move with an e.p. square no pawn can use; Black may still castle short,
    // White long; then Black to move from move 40.
    for fen in [
        "r3k2r/ppp2ppp/2n2n2/2qpp3/4P3/2N2N2/PPPPQPPP/R3K2R w Qk d6 0 12",
        "4k2r/8/8/8/4Pp2/8/8/R3K3 b Qk e3 0 40",
    ] {
        let start = position(fen);
        let mut pos = start.clone();
        let mut sans = Vec::new();
        let mut rng = Rng::new(3);
        for _ in 0..12 {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let mv = legal[rng.below(legal.len())];
            sans.push(San::from_move(&pos, mv).to_string());
            pos.play_unchecked(mv);
        }
        let sans: Vec<&str> = sans.iter().map(String::as_str).collect();
        let mut game = game_of(start.clone(), &sans, &[("ECO", "B90")], GameResult::Draw);
        game.moves[0].comment = Some("from here".into());
        let (cbf, cbi) = file_of(std::slice::from_ref(&game));
        let read = read_all(&cbf, Some(&cbi));
        let g = &read[0];
        assert_eq!(g.start, start, "{fen}");
        assert_eq!(
            g.start.ep_square(EnPassantMode::Always),
            start.ep_square(EnPassantMode::Always)
        );
        assert_eq!(g.start.fullmoves(), start.fullmoves());
        assert_eq!(g.moves.len(), game.moves.len());
        for (x, y) in game.moves.iter().zip(&g.moves) {
            assert_eq!((x.mv, &x.comment), (y.mv, &y.comment));
        }
        // No ECO with a set-up start (its bits hold the set-up flags).
        assert_eq!(g.tags.get("ECO"), None);
    }
}

#[test]
fn eco_elo_and_texts() {
    let game = game_of(
        Chess::default(),
        &["d4"],
        &[
            ("Event", "Ch URS"),
            ("Site", "Moscow"),
            ("Round", "3.1"),
            ("White", "Müller"),
            ("Black", "Smith-Jones"),
            ("ECO", "E99"),
            ("WhiteElo", "2878"),
            ("BlackElo", "1603"),
        ],
        GameResult::Ongoing,
    );
    let cbf = encode_game(&game).expect("encode");
    // The texts as ChessBase has them: code page 850 (ü is 0x81), "Event (Round)".
    let h = decode_header(cbf[..14].try_into().expect("14"));
    let mut text = cbf[14..14 + usize::from(h[4] & 63) + usize::from(h[5] & 63)].to_vec();
    code_text(&mut text);
    assert_eq!(text, b"M\x81ller-Smith-JonesCh URS (3.1)");
    assert!(check_bytes(&h).contains(&h[13]));
    let g = &read_all(&cbf, None)[0];
    assert_eq!(g.tags.get("ECO"), Some("E99"));
    assert_eq!(g.tags.get("WhiteElo"), None);
    assert_eq!(g.tags.get("BlackElo"), Some("1605"));
    assert_eq!(g.tags.get("Event"), Some("Ch URS"));
    assert_eq!(g.tags.get("Site"), Some("?"));
    assert_eq!(g.tags.get("Round"), Some("3.1"));
    assert_eq!(g.tags.get("White"), Some("Müller"));
    assert_eq!(g.tags.get("Black"), Some("Smith-Jones"));
    assert_eq!(g.tags.get("Date"), Some("????.??.??"));
    assert_eq!(g.tags.get("Result"), Some("*"));
    assert_eq!(g.result, GameResult::Ongoing);
    // A round that is no number is left out.
    let mut other = game.clone();
    other.tags.set("Round", "Final");
    let g = &read_all(&encode_game(&other).expect("encode"), None)[0];
    assert_eq!(
        (g.tags.get("Event"), g.tags.get("Round")),
        (Some("Ch URS"), Some("?"))
    );
}

#[test]
fn what_the_texts_cannot_hold_is_refused_with_the_reason() {
    for (name, value, says) in [
        ("Black", "Иванов", "code page (850) lacks"),
        ("White", "Núñez", "as a chess piece"),
        ("Black", &"y".repeat(62), "over CBF's 63"),
    ] {
        let mut game = game_of(
            Chess::default(),
            &["e4"],
            &[("White", "A"), ("Black", "B")],
            GameResult::Draw,
        );
        game.tags.set(name, value);
        let e = encode_game(&game).expect_err(value);
        assert!(e.to_string().contains(says), "{value}: {e}");
    }
    // 1. e4 with `tags`, written and read back.
    let back = |tags: &[(&str, &str)]| {
        let game = game_of(Chess::default(), &["e4"], tags, GameResult::Draw);
        read_all(&encode_game(&game).expect("encode"), None).remove(0)
    };
    // An event too long is cut, the round kept; one the code page lacks is written '?'.
    let long = format!("{} – Köln", "x".repeat(70));
    let g = back(&[("Event", &long), ("Round", "12.3")]);
    assert_eq!(g.tags.get("Event"), Some("x".repeat(56).as_str()));
    assert_eq!(g.tags.get("Round"), Some("12.3"));
    let g = back(&[("Event", "Turnier – Köln")]);
    assert_eq!(g.tags.get("Event"), Some("Turnier ? Köln"));
    // A year CBF cannot hold is left out, the game written.
    let g = back(&[("Date", "2027.01.20")]);
    assert_eq!(g.tags.get("Date"), Some("????.??.??"));
}

#[test]
fn a_hyphen_in_whites_name_is_written_so_that_readers_split_right() {
    let game = game_of(
        Chess::default(),
        &["e4"],
        &[
            ("White", "Vachier-Lagrave, Maxime"),
            ("Black", "Ter-Saakian, A."),
        ],
        GameResult::Draw,
    );
    let cbf = encode_game(&game).expect("written, not refused");
    let h = decode_header(cbf[..14].try_into().expect("14"));
    let mut text = cbf[14..14 + usize::from(h[4] & 63) + usize::from(h[5] & 63)].to_vec();
    code_text(&mut text);
    // The first '-' is the one between the players: White's stands in as 0xC4.
    assert_eq!(text, b"Vachier\xc4Lagrave, Maxime-Ter-Saakian, A.");
    let g = &read_all(&cbf, None)[0];
    assert_eq!(g.tags.get("White"), Some("Vachier-Lagrave, Maxime"));
    assert_eq!(g.tags.get("Black"), Some("Ter-Saakian, A."));
    let notes = crate::cbf::write_notes(&game);
    assert!(notes.len() == 1 && notes[0].contains("(0xC4)"), "{notes:?}");
    assert!(
        crate::cbf::write_notes(&game_of(
            Chess::default(),
            &[],
            &[("Black", "A-B")],
            GameResult::Draw
        ))
        .is_empty()
    );
}

#[test]
fn comments_as_chessbase_writes_them() {
    let game = game_of(Chess::default(), &["e4", "e5"], &[], GameResult::Ongoing);
    let mut cbf = encode_game(&game).expect("encode");
    // Mark both moves commented by hand: plain move bytes 11 (byte 0, not coded) and 11
    // (byte 1, coded with 49·3 = 147).
    assert_eq!(cbf[14], 11);
    assert_eq!(cbf[15], 11 ^ 147);
    cbf[14] = 11 | COMMENTED;
    cbf[15] = (11 | COMMENTED) ^ 147;
    // Two comments: a move evaluation, NULL and text with piece symbols; the four zero
    // bytes, a line break and a pawn symbol.
    let area = [
        &[COMMENT_START, 1, 0][..],
        b"Best ",
        &[179],
        b"f3",
        &[COMMENT_START, 0, 0, 0, 0, b'a', COMMENT_NEWLINE, 182],
        b"e5",
    ]
    .concat();
    let mut h = decode_header(cbf[..14].try_into().expect("14"));
    h[6..8].copy_from_slice(&(area.len() as u16).to_be_bytes());
    cbf[..14].copy_from_slice(&encode_header(h));
    cbf.extend(area);
    let g = &read_all(&cbf, None)[0];
    assert_eq!(g.moves[0].comment.as_deref(), Some("Best Nf3"));
    assert_eq!(g.moves[1].comment.as_deref(), Some("a\ne5"));
}

#[test]
fn variations_are_skipped() {
    let game = game_of(
        Chess::default(),
        &["e4", "e5", "Nf3"],
        &[],
        GameResult::Ongoing,
    );
    // Plain moves 11, [a variation (c5), commented, holding another (with d5)], 11, 24.
    let plain: Vec<u8> = vec![
        11,
        0xff,
        7 | COMMENTED,
        0xff,
        9,
        0x80,
        0x80,
        11 | COMMENTED,
        24,
    ];
    let comments = [
        &[COMMENT_START, 0, 0, 0, 0][..],
        b"the Sicilian",
        &[COMMENT_START, 0, 0, 0, 0],
        b"open",
    ]
    .concat();
    let mut moves = plain.clone();
    code_moves(&mut moves);
    let cbf = encode_game(&game).expect("encode");
    let mut h = decode_header(cbf[..14].try_into().expect("14"));
    h[2..4].copy_from_slice(&(plain.len() as u16 + 1).to_be_bytes());
    h[6..8].copy_from_slice(&(comments.len() as u16).to_be_bytes());
    let text_end = 14 + usize::from(h[4] & 63) + usize::from(h[5] & 63);
    let record = [&encode_header(h)[..], &cbf[14..text_end], &moves, &comments].concat();
    let g = &read_all(&record, None)[0];
    assert_eq!(g.moves.len(), 3);
    assert_eq!(g.moves[1].san.to_string(), "e5");
    assert_eq!(g.moves[0].comment, None);
    assert_eq!(g.moves[1].comment.as_deref(), Some("open"));

    // An end with no start, and a start with no end.
    for bad in [vec![11, 0x80, 11], vec![11, 0xff, 7]] {
        let mut moves = bad.clone();
        code_moves(&mut moves);
        let mut h = decode_header(cbf[..14].try_into().expect("14"));
        h[2..4].copy_from_slice(&(bad.len() as u16 + 1).to_be_bytes());
        let record = [&encode_header(h)[..], &cbf[14..text_end], &moves].concat();
        let e = games(&record, None)
            .expect("no index")
            .next()
            .expect("an item")
            .expect_err("unbalanced");
        assert!(
            e.to_string()
                .starts_with("game 1 (from byte 0): unbalanced"),
            "{e}"
        );
    }
}

#[test]
fn chess960_is_refused() {
    let game = Game {
        castling_mode: CastlingMode::Chess960,
        ..Game::default()
    };
    let e = encode_game(&game).expect_err("960");
    assert!(e.to_string().contains("Chess960"), "{e}");
}

#[test]
fn moves_beyond_127_are_refused() {
    // The position with 218 legal moves for White.
    let start = position("R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1");
    let list: Vec<Move> = generator_moves(&start, Rules::ChessBase, EpMemory::default())
        .into_iter()
        .flatten()
        .collect();
    assert!(list.len() >= 218);
    let late = *list
        .iter()
        .rev()
        .find(|m| start.is_legal(**m))
        .expect("a legal move");
    let mut game = Game {
        start: start.clone(),
        ..Game::default()
    };
    game.push(late, None, None);
    let e = encode_game(&game).expect_err("too far down the list");
    assert!(e.to_string().starts_with("ply 1 "), "{e}");

    // Number 127 is fine without a comment, refused with one (it would be 0xFF).
    let m127 = list[126];
    assert!(start.is_legal(m127));
    let mut game = Game {
        start,
        ..Game::default()
    };
    game.push(m127, None, None);
    let cbf = encode_game(&game).expect("127 fits");
    assert_eq!(read_all(&cbf, None)[0].moves[0].mv, m127);
    game.moves[0].comment = Some("!".into());
    let e = encode_game(&game).expect_err("0xFF");
    assert!(e.to_string().contains("0xFF"), "{e}");
}

#[test]
fn deleted_games_are_skipped_and_errors_name_the_game() {
    let a = game_of(
        Chess::default(),
        &["e4"],
        &[("White", "A")],
        GameResult::Draw,
    );
    let b = game_of(
        Chess::default(),
        &["d4"],
        &[("White", "B")],
        GameResult::Draw,
    );
    let (mut cbf, cbi) = file_of(&[a.clone(), b.clone(), a]);
    let first = encode_game(&game_of(
        Chess::default(),
        &["e4"],
        &[("White", "A")],
        GameResult::Draw,
    ))
    .expect("encode")
    .len();
    // Delete game 1.
    let mut h = decode_header(cbf[..14].try_into().expect("14"));
    h[10] |= 0x80;
    cbf[..14].copy_from_slice(&encode_header(h));
    for cbi in [Some(cbi.as_slice()), None] {
        let read = read_all(&cbf, cbi);
        let whites: Vec<_> = read.iter().map(|g| g.tags.get("White")).collect();
        assert_eq!(whites, [Some("B"), Some("A")]);
    }
    // Game 2's only move byte (not coded) to a number beyond the list.
    cbf[first + 14 + usize::from(h[4] & 63) + usize::from(h[5] & 63)] = 100;
    // It is named, and game 3 still comes after it, with the index or without.
    for cbi in [Some(cbi.as_slice()), None] {
        let items: Vec<_> = games(&cbf, cbi).expect("index").collect();
        assert_eq!(items.len(), 2, "steps over the game that does not read");
        let e = items[0].as_ref().expect_err("bad move");
        assert!(
            e.to_string().starts_with(&format!(
                "game 2 (from byte {first}): move byte 0 (ply 1): move number 100"
            )),
            "{e}"
        );
        let g = items[1].as_ref().expect("game 3");
        assert_eq!(g.tags.get("White"), Some("A"));
    }
    // An index pointing past the file.
    let cbi = index(&[0, 10_000], cbf.len() as u32);
    let items: Vec<_> = games(&cbf, Some(&cbi)).expect("index").collect();
    let e = items[0].as_ref().expect_err("beyond");
    assert!(
        e.to_string()
            .starts_with("game 2 (from byte 10000): the offset is beyond"),
        "{e}"
    );
    assert!(games(&cbf, Some(&[0u8, 0, 0, 9][..])).is_err());
    assert!(games(&cbf, Some(&[0u8, 0][..])).is_err());
    assert!(games(&cbf, Some(&[0u8, 0, 0, 0][..])).is_err());
}

#[test]
fn garbled_files_give_errors_not_panics() {
    let mut rng = Rng::new(12345);
    let mut gs = Vec::new();
    for i in 0..6 {
        let start = if i == 5 {
            position("r3k2r/ppp2ppp/2n2n2/2qpp3/4P3/2N2N2/PPPPQPPP/R3K2R w Qk d6 0 12")
        } else {
            Chess::default()
        };
        let mut pos = start.clone();
        let mut game = Game {
            start,
            tags: Tags(vec![
                ("White".into(), "W x".into()),
                ("Black".into(), "B-x".into()),
            ]),
            ..Game::default()
        };
        for _ in 0..40 {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let mv = legal[rng.below(legal.len())];
            pos.play_unchecked(mv);
            game.push(mv, None, None);
            if rng.below(4) == 0
                && let Some(m) = game.moves.last_mut()
            {
                m.comment = Some("c".into());
            }
        }
        gs.push(game);
    }
    let (cbf, cbi) = file_of(&gs);
    let drain = |cbf: &[u8], cbi: Option<&[u8]>| {
        if let Ok(it) = games(cbf, cbi) {
            for item in it {
                if let Err(e) = item {
                    assert!(e.to_string().starts_with("game "), "{e}");
                }
            }
        }
    };
    for _ in 0..1500 {
        let mut f = cbf.clone();
        let mut x = cbi.clone();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(f.len());
            f[i] = rng.next() as u8;
        }
        if rng.below(4) == 0 {
            let i = rng.below(x.len());
            x[i] = rng.next() as u8;
        }
        if rng.below(3) == 0 {
            f.truncate(rng.below(f.len() + 1));
        }
        drain(&f, Some(&x));
        drain(&f, None);
    }
    for _ in 0..300 {
        let len = rng.below(400);
        let junk: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let junk_index: Vec<u8> = (0..rng.below(24)).map(|_| rng.next() as u8).collect();
        drain(&junk, None);
        drain(&junk, Some(&junk_index));
    }
}
