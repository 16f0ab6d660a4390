//! The recorder's rules, one situation at a time: game end, draws, result gestures, the
//! arbiter's actions, new games, and boards without a clock.

use boards::protocol::{
    ClockMessage, ClockSide, DgtSquare, MagicPiece, Message, Orientation, PieceCode, Placement,
};
use boards::testdata::{clock_reading, play_san};
use relay_core::game::GameResult;
use relay_core::incident::IllegalKind;
use relay_core::recorder::{
    ColorName, DrawCondition, GameEnd, Outcome, ProposalReason, Recorder, RecorderConfig,
};
use shakmaty::{Board, Chess, Color, Position};

/// Drives a recorder like hands on a board: every changed square reported, then a pause.
struct Table {
    rec: Recorder,
    pos: Chess,
    t: u64,
    outcomes: Vec<Outcome>,
}

impl Table {
    fn new() -> Table {
        let mut rec = Recorder::new(RecorderConfig::default());
        let placement = Placement::from_board(&Board::default(), Orientation::Normal);
        let mut outcomes = rec.on_message(&Message::BoardDump { placement }, 0);
        outcomes.extend(rec.tick(1_000));
        Table {
            rec,
            pos: Chess::default(),
            t: 1_000,
            outcomes,
        }
    }

    fn set(&mut self, board: &Board) {
        let now = Placement::from_board(board, Orientation::Normal);
        for sq in DgtSquare::all() {
            let real = sq.to_square(Orientation::Normal);
            let want = now.get(sq);
            let have = self
                .rec
                .board_as_read()
                .piece_at(real)
                .map_or(PieceCode::Empty, PieceCode::Piece);
            if want != have && !matches!(want, PieceCode::Magic(_)) {
                self.t += 50;
                let out = self.rec.on_message(
                    &Message::FieldUpdate {
                        square: sq,
                        piece: want,
                    },
                    self.t,
                );
                self.outcomes.extend(out);
            }
        }
        self.settle();
    }

    fn settle(&mut self) {
        self.t += 1_000;
        let out = self.rec.tick(self.t);
        self.outcomes.extend(out);
    }

    /// Plays `san` in the table's own position only (what the hands will show).
    fn advance(&mut self, san: &str) {
        play_san(&mut self.pos, san);
    }

    fn play(&mut self, sans: &str) {
        for s in sans.split_whitespace() {
            self.advance(s);
            let b = self.pos.board().clone();
            self.set(&b);
        }
    }

    fn put(&mut self, square: shakmaty::Square, piece: PieceCode) {
        self.t += 50;
        let out = self.rec.on_message(
            &Message::FieldUpdate {
                square: DgtSquare::from_square(square, Orientation::Normal),
                piece,
            },
            self.t,
        );
        self.outcomes.extend(out);
        self.settle();
    }

    fn clock(
        &mut self,
        left: u32,
        right: u32,
        running: Option<ClockSide>,
        flag: Option<ClockSide>,
    ) {
        let r = clock_reading(left, right, running, flag);
        self.t += 100;
        let out = self.rec.on_message(
            &Message::Clock {
                clock: ClockMessage::Time(r),
            },
            self.t,
        );
        self.outcomes.extend(out);
    }

    /// Each move's clock (ms), as recorded.
    fn clocks(&self) -> Vec<Option<u64>> {
        self.rec
            .game()
            .map(|g| g.moves.iter().map(|m| m.clk.map(|c| c.millis())).collect())
            .unwrap_or_default()
    }

    fn sans(&self) -> Vec<String> {
        self.rec
            .game()
            .map(|g| g.moves.iter().map(|m| m.san.to_string()).collect())
            .unwrap_or_default()
    }
}

#[test]
fn checkmate_ends_the_game_and_a_new_start_begins_another() {
    let mut t = Table::new();
    t.play("f3 e5 g4 Qh4#");
    assert!(t.outcomes.contains(&Outcome::GameOver {
        result: GameResult::BlackWins,
        end: GameEnd::Checkmate
    }));
    assert_eq!(t.rec.game().map(|g| g.result), Some(GameResult::BlackWins));
    // Pieces put back to the start: a new game.
    t.pos = Chess::default();
    t.set(&Board::default());
    assert!(
        t.outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::NewGame { .. }))
            .count()
            == 2
    );
    t.play("d4");
    assert_eq!(t.sans(), vec!["d4"]);
}

#[test]
fn after_a_mate_a_board_far_back_is_not_a_takeback_of_the_game() {
    let mut t = Table::new();
    t.play("e4 e5 Bc4 Nc6 Qh5 Nf6 Qxf7#");
    assert_eq!(t.rec.game().map(|g| g.result), Some(GameResult::WhiteWins));
    // The next game set up so fast that the start position was never still, and its first
    // move already made: the board equals the mated game after 1.e4.
    let mut next = Chess::default();
    play_san(&mut next, "e4");
    t.set(&next.board().clone());
    assert_eq!(t.rec.game().map(|g| g.result), Some(GameResult::WhiteWins));
    assert_eq!(t.sans().len(), 7, "the mated game was cut: {:?}", t.sans());
    // Taking back the mating move itself still reopens the game.
    let mut t = Table::new();
    t.play("e4 e5 Bc4 Nc6 Qh5 Nf6 Qxf7#");
    let mut before = Chess::default();
    for m in ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6"] {
        play_san(&mut before, m);
    }
    t.set(&before.board().clone());
    assert_eq!(t.rec.game().map(|g| g.result), Some(GameResult::Ongoing));
    assert_eq!(t.sans().len(), 6);
}

#[test]
fn repetition_and_draw_conditions_are_flagged() {
    let mut t = Table::new();
    t.play("Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1 Ng8");
    assert!(t.outcomes.contains(&Outcome::Draw {
        condition: DrawCondition::ThreefoldRepetition
    }));
    assert_eq!(t.sans().len(), 8, "repetitions are moves, not takebacks");
}

#[test]
fn kings_in_the_centre_propose_a_result_and_never_a_move() {
    let mut t = Table::new();
    t.play("e4 e5 Nf3 Nc6");
    let mut b = t.pos.board().clone();
    b.discard_piece_at(shakmaty::Square::E1);
    b.discard_piece_at(shakmaty::Square::E8);
    b.discard_piece_at(shakmaty::Square::E4);
    b.set_piece_at(
        shakmaty::Square::D5,
        shakmaty::Piece {
            color: Color::White,
            role: shakmaty::Role::King,
        },
    );
    b.set_piece_at(
        shakmaty::Square::E4,
        shakmaty::Piece {
            color: Color::Black,
            role: shakmaty::Role::King,
        },
    );
    t.set(&b);
    assert!(t.outcomes.contains(&Outcome::ResultProposed {
        result: GameResult::WhiteWins,
        reason: ProposalReason::KingsInCentre
    }));
    assert_eq!(t.sans().len(), 4);
    assert_eq!(
        t.rec.game().map(|g| g.result),
        Some(GameResult::Ongoing),
        "a proposal until an arbiter confirms"
    );
    assert_eq!(t.rec.confirm_proposal(), Some(GameResult::WhiteWins));
}

#[test]
fn a_magic_piece_proposes_its_result() {
    let mut t = Table::new();
    t.play("e4 e5");
    t.put(shakmaty::Square::D4, PieceCode::Magic(MagicPiece::Draw));
    assert!(t.outcomes.contains(&Outcome::ResultProposed {
        result: GameResult::Draw,
        reason: ProposalReason::MagicPiece
    }));
}

/// 1. e4 with the clock running, then Black's flag falls: the proposal it makes is checked.
fn black_flag_falls_after_e4() -> Table {
    let mut t = Table::new();
    // White's clock is the left one: it was started for White at the start.
    t.clock(300, 300, None, None);
    t.clock(300, 300, Some(ClockSide::Left), None);
    t.play("e4");
    t.clock(302, 300, Some(ClockSide::Right), None);
    t.clock(302, 0, None, Some(ClockSide::Right));
    assert!(t.outcomes.contains(&Outcome::ResultProposed {
        result: GameResult::WhiteWins,
        reason: ProposalReason::TimeForfeit
    }));
    t
}

#[test]
fn a_fallen_flag_proposes_a_time_forfeit() {
    let mut t = black_flag_falls_after_e4();
    t.rec.confirm_proposal();
    let game = t.rec.game().expect("game");
    assert_eq!(game.tags.get("Termination"), Some("time forfeit"));
    assert_eq!(game.moves[0].clk.map(|c| c.secs()), Some(302));
    assert_eq!(game.tags.get("WhiteClock"), Some("0:05:00"));
}

#[test]
fn without_a_clock_moves_have_no_clock_comments() {
    let mut t = Table::new();
    t.play("e4 e5 Nf3");
    let game = t.rec.game().expect("game");
    assert!(
        game.moves
            .iter()
            .all(|m| m.clk.is_none() && m.emt.is_none())
    );
}

#[test]
fn an_illegal_move_waits_and_the_arbiter_decides() {
    let mut t = Table::new();
    t.play("e4 e5");
    // A knight jumps where no knight can go.
    let mut b = t.pos.board().clone();
    let knight = b.remove_piece_at(shakmaty::Square::G1).expect("knight");
    b.set_piece_at(shakmaty::Square::G4, knight);
    t.set(&b);
    assert!(
        t.outcomes
            .iter()
            .any(|o| matches!(o, Outcome::OutOfSync { candidates: 0, .. }))
    );
    assert!(t.rec.is_out_of_sync());
    assert_eq!(t.sans(), vec!["e4", "e5"], "no move invented");
    // Option 1: the pieces go back; the game carries on.
    assert_eq!(
        t.rec.position_to_restore().as_deref(),
        Some("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR")
    );
    let back = t.pos.board().clone();
    t.set(&back);
    assert!(!t.rec.is_out_of_sync());
    t.play("Nf3");
    assert_eq!(t.sans(), vec!["e4", "e5", "Nf3"]);
    // Option 2: the game continues from the board as it stands.
    let mut b = t.pos.board().clone();
    let knight = b.remove_piece_at(shakmaty::Square::F3).expect("knight");
    b.set_piece_at(shakmaty::Square::H4, knight);
    b.discard_piece_at(shakmaty::Square::A7);
    t.set(&b);
    assert!(t.rec.is_out_of_sync());
    t.rec
        .continue_from_board(Color::Black)
        .expect("legal position");
    let game = t.rec.game().expect("game");
    assert!(game.moves.is_empty());
    assert!(
        game.intro
            .as_deref()
            .is_some_and(|i| i.contains("e4 e5 Nf3")),
        "earlier moves kept in a comment"
    );
    assert_eq!(game.start.turn(), Color::Black);
}

#[test]
fn play_goes_on_after_a_flag_fell_until_the_result_is_confirmed() {
    // Nobody claims the flag and the players go on.
    let mut t = black_flag_falls_after_e4();
    t.play("e5 Nf3");
    assert_eq!(
        t.sans(),
        vec!["e4", "e5", "Nf3"],
        "every move the board shows"
    );
    assert_eq!(t.rec.game().map(|g| g.result), Some(GameResult::Ongoing));
    // Once an arbiter confirms, the game is over: what follows is not recorded.
    assert_eq!(t.rec.confirm_proposal(), Some(GameResult::WhiteWins));
    t.play("Nc6");
    assert_eq!(t.sans().len(), 3);
}

#[test]
fn the_start_position_after_a_proposed_result_is_the_next_game() {
    let mut t = Table::new();
    t.play("e4 e5 Nf3 Nc6 Bb5");
    t.put(shakmaty::Square::D4, PieceCode::Magic(MagicPiece::Draw));
    t.put(shakmaty::Square::D4, PieceCode::Empty);
    assert_eq!(t.rec.proposal().map(|p| p.0), Some(GameResult::Draw));
    t.set(&shakmaty::Board::default());
    assert!(
        t.outcomes
            .iter()
            .any(|o| matches!(o, Outcome::NewGame { .. })),
        "a new game, not a takeback of the whole game"
    );
    let old = t.rec.take_replaced_game().expect("the game played");
    assert_eq!(old.moves.len(), 5);
    assert_eq!(
        t.rec.take_replaced_proposal().map(|p| p.0),
        Some(GameResult::Draw)
    );
}

/// A bus poll returns several moves and lever presses at once, each press's clock record right
/// after the squares of its move. Every move gets its own press's time; a record that never
/// arrived costs its own move's clock only (left out, not borrowed from the next press).
#[test]
fn bus_clock_records_belong_to_the_move_they_follow_and_a_lost_one_costs_only_its_move() {
    let mut t = Table::new();
    t.clock(5400, 5400, None, None);
    t.clock(5400, 5400, Some(ClockSide::Left), None);
    let record = |t: &mut Table, side: ClockSide, seconds: u32| {
        t.t += 10;
        let out = t
            .rec
            .on_message(&Message::ClockRecord { side, seconds }, t.t);
        t.outcomes.extend(out);
    };
    // One poll's worth: five moves, five presses, the third press's record lost.
    let presses = [
        ("e4", Some((ClockSide::Left, 5410))),
        ("e5", Some((ClockSide::Right, 5405))),
        ("Nf3", None),
        ("Nc6", Some((ClockSide::Right, 5399))),
        ("Bb5", Some((ClockSide::Left, 5430))),
    ];
    for (san, press) in presses {
        t.advance(san);
        let now = Placement::from_board(t.pos.board(), Orientation::Normal);
        for sq in DgtSquare::all() {
            if t.rec
                .board_as_read()
                .piece_at(sq.to_square(Orientation::Normal))
                != now.get(sq).piece()
            {
                t.t += 5;
                let out = t.rec.on_message(
                    &Message::FieldUpdate {
                        square: sq,
                        piece: now.get(sq),
                    },
                    t.t,
                );
                t.outcomes.extend(out);
            }
        }
        if let Some((side, seconds)) = press {
            record(&mut t, side, seconds);
        }
    }
    // The poll's clock reading: Black to move, Black's time as its last press left it.
    t.clock(5430, 5399, Some(ClockSide::Right), None);
    t.settle();
    assert_eq!(t.sans(), ["e4", "e5", "Nf3", "Nc6", "Bb5"]);
    assert_eq!(
        t.clocks(),
        [
            Some(5_410_000),
            Some(5_405_000),
            None,
            Some(5_399_000),
            Some(5_430_000)
        ]
    );
    // The readings after the records are not taken for presses of their own: the next
    // move's press is the next record, and it lands on that move.
    t.play("a6");
    record(&mut t, ClockSide::Right, 5390);
    t.clock(5430, 5390, Some(ClockSide::Left), None);
    t.settle();
    let last = t
        .rec
        .game()
        .and_then(|g| g.moves.last())
        .and_then(|m| m.clk);
    assert_eq!(last.map(|c| c.millis()), Some(5_390_000));
}

/// After a restart the presses made while the relay was down were not seen. The move made
/// meanwhile gets its time from the first reading (the halted side still shows it); the
/// presses seen after it go to the moves after it, never to the one before.
#[test]
fn after_a_restart_a_move_made_meanwhile_gets_the_halted_clock_and_no_later_press() {
    use relay_core::clock_time::ClockTime;
    use relay_core::game::Game;
    let mut pos = Chess::default();
    let mut game = Game::default();
    for (san, clk) in [("e4", 5410), ("e5", 5405)] {
        let m = play_san(&mut pos, san);
        game.push(m, Some(ClockTime::from_secs(clk)), None);
    }
    let mut t = Table {
        rec: Recorder::resume(RecorderConfig::default(), game, Orientation::Normal),
        pos,
        t: 100_000,
        outcomes: Vec::new(),
    };
    // While nobody watched, White played Nf3 and pressed (Left, White's side, halted at
    // 1:30:20); Black thinks. The board is read again from a dump.
    t.advance("Nf3");
    let placement = Placement::from_board(t.pos.board(), Orientation::Normal);
    let out = t.rec.on_message(&Message::BoardDump { placement }, t.t);
    t.outcomes.extend(out);
    for k in 0..8 {
        t.clock(5420, 5400 - k, Some(ClockSide::Right), None);
        t.t += 900;
    }
    // Black answers and presses; White thinks, then plays on and presses.
    t.play("Nc6");
    t.clock(5420, 5390, Some(ClockSide::Left), None);
    t.clock(5419, 5390, Some(ClockSide::Left), None);
    t.play("Bb5");
    t.clock(5425, 5390, Some(ClockSide::Right), None);
    t.clock(5425, 5389, Some(ClockSide::Right), None);
    assert_eq!(t.sans(), ["e4", "e5", "Nf3", "Nc6", "Bb5"]);
    assert_eq!(
        t.clocks(),
        [
            Some(5_410_000),
            Some(5_405_000),
            Some(5_420_000),
            Some(5_390_000),
            Some(5_425_000)
        ]
    );
}

/// Players resign (nothing on the board says so) and set the pieces up again: the game keeps
/// its moves and the start position is the next game. Only a false start of a ply or two is
/// taken back to the start.
#[test]
fn the_start_position_after_a_game_without_result_is_the_next_game_not_a_wipe() {
    let mut t = Table::new();
    t.play("e4 e5 Nf3 Nc6 Bb5 a6");
    t.set(&shakmaty::Board::default());
    assert!(
        t.outcomes
            .iter()
            .any(|o| matches!(o, Outcome::NewGame { .. })),
        "a new game, not a takeback of the whole game"
    );
    assert!(
        !t.outcomes
            .iter()
            .any(|o| matches!(o, Outcome::Takeback { .. })),
        "the game was taken back"
    );
    let old = t.rec.take_replaced_game().expect("the game played");
    assert_eq!(old.moves.len(), 6);
    assert!(t.sans().is_empty());

    // A false start: one move, back to the start, is a takeback.
    let mut t = Table::new();
    t.play("d4");
    t.set(&shakmaty::Board::default());
    assert!(
        t.outcomes
            .iter()
            .any(|o| matches!(o, Outcome::Takeback { ply: 0 })),
        "{:?}",
        t.outcomes
    );
    assert!(t.rec.take_replaced_game().is_none());
}

/// The illegal moves and clock corrections the recorder put on the record.
fn incidents(t: &Table) -> Vec<&Outcome> {
    t.outcomes
        .iter()
        .filter(|o| {
            matches!(
                o,
                Outcome::IllegalMove { .. } | Outcome::ClockAdjustment { .. }
            )
        })
        .collect()
}

/// 1. e4 e5 with White's clock on the left, White to move with 5:01 against 5:02.
fn after_e4_e5() -> Table {
    let mut t = Table::new();
    t.clock(300, 300, None, None);
    t.clock(300, 300, Some(ClockSide::Left), None);
    t.play("e4");
    t.clock(302, 300, Some(ClockSide::Right), None);
    t.play("e5");
    t.clock(302, 302, Some(ClockSide::Left), None);
    t
}

/// The board with the piece on `from` set down on `to`.
fn displaced(pos: &Chess, from: shakmaty::Square, to: shakmaty::Square) -> Board {
    let mut b = pos.board().clone();
    let piece = b.remove_piece_at(from).expect("a piece");
    b.set_piece_at(to, piece);
    b
}

/// The arbiter stops the clock, puts the position back, gives the opponent (on `side`) two
/// minutes and starts the offender's clock (`run`) again.
fn arbiter_restores(t: &mut Table, left: u32, right: u32, gift: ClockSide, run: ClockSide) {
    t.settle();
    t.settle();
    t.clock(left, right, None, None);
    let back = t.pos.board().clone();
    t.set(&back);
    let (l, r) = if gift == ClockSide::Left {
        (left + 120, right)
    } else {
        (left, right + 120)
    };
    t.clock(l, r, None, None);
    t.clock(l, r, Some(run), None);
}

#[test]
fn a_completed_illegal_move_is_recorded_and_the_game_goes_on_untouched() {
    let mut t = after_e4_e5();
    // The knight jumps to g4 and White presses the clock.
    let b = displaced(&t.pos, shakmaty::Square::G1, shakmaty::Square::G4);
    t.set(&b);
    assert!(t.rec.is_out_of_sync());
    t.clock(301, 302, Some(ClockSide::Right), None);
    arbiter_restores(&mut t, 301, 300, ClockSide::Right, ClockSide::Left);
    assert!(!t.rec.is_out_of_sync());
    t.play("Nf3");
    t.clock(299, 420, Some(ClockSide::Right), None);
    assert_eq!(
        incidents(&t),
        vec![
            &Outcome::IllegalMove {
                ply: 3,
                color: ColorName::White,
                kind: IllegalKind::MoveNotAllowed,
                uci: Some("g1g4".into()),
                piece: Some('N'),
                captured: None,
                clock_pressed: true,
            },
            &Outcome::ClockAdjustment {
                ply: 3,
                color: ColorName::Black,
                delta_ms: 120_000,
            }
        ]
    );
    assert_eq!(t.sans(), vec!["e4", "e5", "Nf3"]);
    // The press that completed the illegal move ends no move: Nf3's is the later one.
    assert_eq!(t.clocks()[2], Some(299_000));
}

#[test]
fn a_press_without_a_move_and_a_second_illegal_move_by_black_a_capture_in_check() {
    let mut t = after_e4_e5();
    t.play("Nf3");
    t.clock(300, 302, Some(ClockSide::Right), None);
    // Black presses without moving.
    t.clock(300, 301, Some(ClockSide::Left), None);
    arbiter_restores(&mut t, 298, 301, ClockSide::Left, ClockSide::Right);
    t.play("Nc6");
    t.clock(418, 300, Some(ClockSide::Left), None);
    t.play("Bb5");
    t.clock(417, 300, Some(ClockSide::Right), None);
    t.play("d6");
    t.clock(417, 299, Some(ClockSide::Left), None);
    t.play("d4");
    t.clock(416, 299, Some(ClockSide::Right), None);
    // Black's pinned knight takes on d4 (own king left in check) and Black presses.
    let b = displaced(&t.pos, shakmaty::Square::C6, shakmaty::Square::D4);
    t.set(&b);
    t.clock(416, 298, Some(ClockSide::Left), None);
    arbiter_restores(&mut t, 414, 298, ClockSide::Left, ClockSide::Right);
    t.play("Bd7");
    t.clock(534, 297, Some(ClockSide::Left), None);
    type Seen = (usize, ColorName, IllegalKind, Option<String>, Option<char>);
    let illegal: Vec<Seen> = t
        .outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::IllegalMove {
                ply,
                color,
                kind,
                uci,
                captured,
                ..
            } => Some((*ply, *color, *kind, uci.clone(), *captured)),
            _ => None,
        })
        .collect();
    assert_eq!(
        illegal,
        vec![
            (
                4,
                ColorName::Black,
                IllegalKind::PressWithoutMove,
                None,
                None
            ),
            (
                8,
                ColorName::Black,
                IllegalKind::KingInCheck,
                Some("c6d4".into()),
                Some('P')
            ),
        ]
    );
    assert_eq!(
        t.sans(),
        vec!["e4", "e5", "Nf3", "Nc6", "Bb5", "d6", "d4", "Bd7"]
    );
    assert_eq!(
        t.clocks(),
        [302, 302, 300, 300, 417, 299, 416, 297]
            .map(|s| Some(s * 1000))
            .to_vec()
    );
}

#[test]
fn a_board_knocked_about_and_put_right_is_not_an_illegal_move() {
    let mut t = after_e4_e5();
    // A sleeve knocks two of White's pieces about and they stay there a while; they are put
    // back before anyone presses.
    let b = displaced(&t.pos, shakmaty::Square::F1, shakmaty::Square::B5);
    let b = {
        let mut b = b;
        let q = b.remove_piece_at(shakmaty::Square::D1).expect("queen");
        b.set_piece_at(shakmaty::Square::D3, q);
        b
    };
    t.set(&b);
    t.settle();
    t.settle();
    let back = t.pos.board().clone();
    t.set(&back);
    // A touched piece put back, then the real move and its press.
    t.put(shakmaty::Square::A2, PieceCode::Empty);
    t.put(shakmaty::Square::A2, PieceCode::Piece(Color::White.pawn()));
    t.play("Nf3");
    t.clock(300, 302, Some(ClockSide::Right), None);
    t.settle();
    t.settle();
    assert_eq!(incidents(&t), Vec::<&Outcome>::new());
    assert_eq!(t.clocks()[2], Some(300_000));
}

#[test]
fn a_board_first_read_mid_game_is_recorded_from_there_once_the_clock_says_whose_turn_it_is() {
    // The relay starts after 1. e4 e5 2. Nf3 with Black's clock (the right one) running.
    let mut pos = Chess::default();
    for san in ["e4", "e5", "Nf3"] {
        play_san(&mut pos, san);
    }
    let mut rec = Recorder::new(RecorderConfig::default());
    let mut outcomes = Vec::new();
    let reading = |left, right, running| Message::Clock {
        clock: ClockMessage::Time(clock_reading(left, right, running, None)),
    };
    outcomes.extend(rec.on_message(&reading(5_390, 5_380, Some(ClockSide::Right)), 0));
    let placement = Placement::from_board(pos.board(), Orientation::Normal);
    outcomes.extend(rec.on_message(&Message::BoardDump { placement }, 100));
    outcomes.extend(rec.tick(1_000));
    assert!(rec.game().is_none(), "nothing is guessed before a move");
    // Black plays Nc6 and presses.
    play_san(&mut pos, "Nc6");
    let mut t = 2_000;
    for (sq, piece) in [
        (shakmaty::Square::B8, PieceCode::Empty),
        (
            shakmaty::Square::C6,
            PieceCode::Piece(Color::Black.knight()),
        ),
    ] {
        t += 100;
        let square = DgtSquare::from_square(sq, Orientation::Normal);
        outcomes.extend(rec.on_message(&Message::FieldUpdate { square, piece }, t));
    }
    outcomes.extend(rec.tick(t + 400));
    outcomes.extend(rec.on_message(&reading(5_390, 5_375, Some(ClockSide::Left)), t + 600));
    let game = rec.game().expect("a game joined late");
    assert_eq!(
        game.start_fen().to_string(),
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 0 1"
    );
    assert!(
        game.intro
            .as_deref()
            .is_some_and(|i| i.contains("Joined late"))
    );
    assert_eq!(
        game.moves
            .iter()
            .map(|m| m.san.to_string())
            .collect::<Vec<_>>(),
        ["Nc6"]
    );
    assert_eq!(game.moves[0].clk.map(|c| c.secs()), Some(5_375));
    assert!(
        outcomes
            .iter()
            .any(|o| matches!(o, Outcome::NewGame { .. }))
    );
    assert!(outcomes.contains(&Outcome::JoinedLate {
        color: ColorName::Black
    }));

    // Without a running clock the board waits for the arbiter, as before.
    let mut rec = Recorder::new(RecorderConfig::default());
    rec.on_message(&reading(5_390, 5_380, None), 0);
    let placement = Placement::from_board(pos.board(), Orientation::Normal);
    rec.on_message(&Message::BoardDump { placement }, 100);
    rec.tick(1_000);
    play_san(&mut pos, "Bb5");
    let placement = Placement::from_board(pos.board(), Orientation::Normal);
    rec.on_message(&Message::BoardDump { placement }, 2_000);
    rec.tick(3_000);
    assert!(rec.game().is_none());
}

#[test]
fn a_press_without_a_move_right_after_the_opponents_press_is_still_seen() {
    let mut t = after_e4_e5();
    t.play("Nf3");
    t.clock(300, 302, Some(ClockSide::Right), None);
    // Black plays Nc6 and presses; White presses at once, before the board has settled.
    play_san(&mut t.pos, "Nc6");
    let b = t.pos.board().clone();
    let placement = Placement::from_board(&b, Orientation::Normal);
    t.t += 50;
    let out = t.rec.on_message(&Message::BoardDump { placement }, t.t);
    t.outcomes.extend(out);
    t.clock(300, 301, Some(ClockSide::Left), None);
    t.clock(299, 301, Some(ClockSide::Right), None);
    t.settle();
    t.settle();
    let illegal: Vec<&Outcome> = incidents(&t)
        .into_iter()
        .filter(|o| matches!(o, Outcome::IllegalMove { .. }))
        .collect();
    assert_eq!(
        illegal,
        vec![&Outcome::IllegalMove {
            ply: 5,
            color: ColorName::White,
            kind: IllegalKind::PressWithoutMove,
            uci: None,
            piece: None,
            captured: None,
            clock_pressed: true,
        }]
    );
    assert_eq!(t.sans(), vec!["e4", "e5", "Nf3", "Nc6"]);
    assert_eq!(t.clocks()[3], Some(301_000), "Nc6 keeps its own press");
}

/// The clock set for the next game while the last one's board still stands is not a
/// correction of the last game: the new game's setup takes it, the old game keeps its clocks.
/// A correction during the game (the clock running again on the game's position) still is.
#[test]
fn a_clock_set_for_the_next_game_is_no_correction_of_the_last() {
    let mut t = after_e4_e5();
    t.play("Nf3 Nc6");
    t.clock(301, 301, Some(ClockSide::Left), None);
    t.settle();
    // The game is over; the arbiter sets the clock for the next one (stopped), then the
    // pieces go back to the start.
    t.clock(5_400, 5_400, None, None);
    t.clock(5_400, 5_400, None, None);
    let start = Board::default();
    t.set(&start);
    t.settle();
    t.settle();
    let corrections: Vec<&Outcome> = t
        .outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::ClockAdjustment { .. }))
        .collect();
    assert!(corrections.is_empty(), "{corrections:?}");
    let new_game = t
        .outcomes
        .iter()
        .position(|o| matches!(o, Outcome::NewGame { .. }))
        .expect("a new game");
    // The clock shown after the new game began is the new game's; none before it shows it.
    let shows_new =
        |o: &Outcome| matches!(o, Outcome::Clock { white, .. } if white.millis() == 5_400_000);
    assert!(t.outcomes[..new_game].iter().all(|o| !shows_new(o)));
    assert!(
        t.outcomes[new_game..].iter().any(shows_new),
        "{:?}",
        &t.outcomes[new_game..]
    );

    // A correction in a game that goes on is recorded.
    let mut t = after_e4_e5();
    t.clock(302, 302, None, None);
    t.clock(302, 422, None, None);
    t.clock(302, 422, Some(ClockSide::Left), None);
    assert!(
        t.outcomes.iter().any(|o| matches!(
            o,
            Outcome::ClockAdjustment {
                delta_ms: 120_000,
                color: ColorName::Black,
                ..
            }
        )),
        "{:?}",
        t.outcomes
    );
}
