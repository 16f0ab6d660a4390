//! The [`Visitor`] pgn-reader drives over the prepared text: it decides the start from the
//! tags, plays each move with shakmaty (SAN recomputed, so check marks and disambiguation are
//! the standard's whatever the file wrote), files comments and clocks under the move they
//! follow, and settles the result from the termination marker and the `Result` tag.

use super::comment::split_comment;
use super::tags::{TagsRead, VariantKind, setup_position, variant_kind};
use crate::game::{Game, GameResult, RecordedMove};
use crate::pgn::error::ImportErrorKind;
use pgn_reader::{KnownOutcome, Outcome, RawComment, RawTag, SanPlus, Visitor};
use shakmaty::san::{San, SanError};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Move, Position, Role, Square};
use std::ops::ControlFlow;

/// A game being built while its movetext is read.
#[derive(Debug)]
pub(super) struct Building {
    game: Game,
    pos: Chess,
    outcome: Option<Outcome>,
    /// A comment longer than the reader's buffer arrives in pieces.
    partial: Vec<u8>,
    /// Tag result, used when the movetext has no termination marker.
    tag_result: Option<GameResult>,
    had_tags: bool,
    had_comment: bool,
}

impl Building {
    fn add_comment(&mut self, raw: &[u8]) {
        let mut bytes = std::mem::take(&mut self.partial);
        bytes.extend_from_slice(raw);
        let parts = split_comment(&String::from_utf8_lossy(&bytes));
        self.had_comment = true;
        // Commands and text refer to the move before them (supplement §4.1); before the first
        // move, the text introduces the game and clocks have no move to belong to.
        let text_slot = match self.game.moves.last_mut() {
            Some(m) => {
                if parts.clk.is_some() {
                    m.clk = parts.clk;
                }
                if parts.emt.is_some() {
                    m.emt = parts.emt;
                }
                &mut m.comment
            }
            None => &mut self.game.intro,
        };
        if !parts.text.is_empty() {
            match text_slot {
                Some(t) => {
                    t.push(' ');
                    t.push_str(&parts.text);
                }
                None => *text_slot = Some(parts.text),
            }
        }
    }
}

/// A game that read.
#[derive(Debug)]
pub(super) struct Imported {
    pub(super) game: Game,
    /// Nothing at all was read: no tag, move, comment or result.
    pub(super) empty: bool,
}

/// A game that did not read, with what the caller needs to name it and find its line.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) white: Option<String>,
    pub(super) black: Option<String>,
    pub(super) kind: ImportErrorKind,
    /// The tag whose line the error should point at, when a tag is to blame.
    pub(super) tag_at_fault: Option<&'static str>,
}

/// Reads one game a call of pgn-reader's `read_game`.
#[derive(Debug)]
pub(super) struct Importer;

/// The legal move a SAN token means. Besides SAN proper: long algebraic without the capture
/// sign (`Be2c4`), and UCI (`g1f3`, which the SAN grammar reads as a pawn move from g1).
fn find_move(pos: &Chess, san: San) -> Result<Move, &'static str> {
    if san == San::Null {
        return Err("null moves are not supported");
    }
    let err = match san.to_move(pos) {
        Ok(m) => return Ok(m),
        Err(e) => e,
    };
    if let San::Normal {
        role,
        file,
        rank,
        capture,
        to,
        promotion,
    } = san
    {
        if !capture {
            let with_x = San::Normal {
                role,
                file,
                rank,
                capture: true,
                to,
                promotion,
            };
            if let Ok(m) = with_x.to_move(pos) {
                return Ok(m);
            }
        }
        if let (Role::Pawn, Some(file), Some(rank)) = (role, file, rank) {
            let uci = UciMove::Normal {
                from: Square::from_coords(file, rank),
                to,
                promotion,
            };
            if let Ok(m) = uci.to_move(pos) {
                return Ok(m);
            }
        }
    }
    Err(match err {
        SanError::IllegalSan => "illegal move",
        SanError::AmbiguousSan => "ambiguous move",
    })
}

impl Visitor for Importer {
    type Tags = TagsRead;
    type Movetext = Building;
    type Output = Result<Imported, Box<Failure>>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(TagsRead::default())
    }

    fn tag(
        &mut self,
        tags: &mut TagsRead,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        // `[Annotator  "x"]` leaves a space on the name.
        let name = String::from_utf8_lossy(name).trim().to_string();
        if !name.is_empty() {
            tags.tags.set(&name, value.decode_utf8_lossy().into_owned());
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, read: TagsRead) -> ControlFlow<Self::Output, Self::Movetext> {
        let fail = |kind, tag| {
            ControlFlow::Break(Err(Box::new(Failure {
                white: read.player("White"),
                black: read.player("Black"),
                kind,
                tag_at_fault: Some(tag),
            })))
        };
        let chess960 = match read.tags.get("Variant").map(variant_kind) {
            Some(VariantKind::Unsupported) => {
                let v = read
                    .tags
                    .get("Variant")
                    .unwrap_or_default()
                    .trim()
                    .to_string();
                return fail(ImportErrorKind::UnsupportedVariant(v), "Variant");
            }
            Some(VariantKind::Chess960) => true,
            _ => false,
        };
        let fen = read
            .tags
            .get("FEN")
            .map(str::trim)
            .filter(|f| !f.is_empty());
        let (start, castling_mode) = match fen {
            Some(fen) => match setup_position(fen, chess960) {
                Ok(found) => found,
                Err(reason) => {
                    return fail(
                        ImportErrorKind::BadFen {
                            fen: fen.to_string(),
                            reason,
                        },
                        "FEN",
                    );
                }
            },
            None if chess960 => (Chess::default(), CastlingMode::Chess960),
            // `[SetUp "1"]` without a FEN: lichess writes it for games from the usual start.
            None => (Chess::default(), CastlingMode::Standard),
        };
        let had_tags = !read.tags.0.is_empty();
        let mut tags = read.tags;
        // The start position lives in `Game::start`; the writer derives these tags from it.
        tags.remove("FEN");
        tags.remove("SetUp");
        let tag_result = tags.get("Result").and_then(|r| r.parse().ok());
        ControlFlow::Continue(Building {
            game: Game {
                tags,
                start: start.clone(),
                castling_mode,
                moves: Vec::new(),
                result: GameResult::Ongoing,
                intro: None,
            },
            pos: start,
            outcome: None,
            partial: Vec::new(),
            tag_result,
            had_tags,
            had_comment: false,
        })
    }

    fn san(&mut self, b: &mut Building, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        match find_move(&b.pos, san_plus.san) {
            Ok(mv) => {
                // SAN is recomputed so that check marks and disambiguation are the standard's
                // whatever the file wrote (`Ng1f3`, a missing `+`).
                let san = SanPlus::from_move_and_play_unchecked(&mut b.pos, mv);
                b.game.moves.push(RecordedMove {
                    mv,
                    san,
                    clk: None,
                    emt: None,
                    comment: None,
                });
                ControlFlow::Continue(())
            }
            Err(reason) => ControlFlow::Break(Err(Box::new(Failure {
                white: b.game.tags.get("White").map(str::to_string),
                black: b.game.tags.get("Black").map(str::to_string),
                kind: ImportErrorKind::IllegalMove {
                    ply: b.game.moves.len() + 1,
                    move_number: b.pos.fullmoves().get(),
                    white: b.pos.turn() == Color::White,
                    san: san_plus.to_string(),
                    reason,
                },
                tag_at_fault: None,
            }))),
        }
    }

    fn partial_comment(
        &mut self,
        b: &mut Building,
        comment: RawComment<'_>,
    ) -> ControlFlow<Self::Output> {
        b.partial.extend_from_slice(comment.as_bytes());
        ControlFlow::Continue(())
    }

    fn comment(&mut self, b: &mut Building, comment: RawComment<'_>) -> ControlFlow<Self::Output> {
        b.add_comment(comment.as_bytes());
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, b: &mut Building, outcome: Outcome) -> ControlFlow<Self::Output> {
        b.outcome = Some(outcome);
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, mut b: Building) -> Self::Output {
        // The termination marker decides; `*` or none defers to a known Result tag (a game
        // that ends "18. Qa8" with [Result "0-1"] was resigned).
        let marker = match b.outcome {
            Some(Outcome::Known(KnownOutcome::Decisive {
                winner: Color::White,
            })) => GameResult::WhiteWins,
            Some(Outcome::Known(KnownOutcome::Decisive {
                winner: Color::Black,
            })) => GameResult::BlackWins,
            Some(Outcome::Known(KnownOutcome::Draw)) => GameResult::Draw,
            Some(Outcome::Unknown) | None => GameResult::Ongoing,
        };
        b.game.result = match marker {
            GameResult::Ongoing => b.tag_result.unwrap_or(GameResult::Ongoing),
            known => known,
        };
        if b.game.tags.get("Result").is_some() {
            b.game.tags.set("Result", b.game.result.to_string());
        }
        let empty = !b.had_tags && !b.had_comment && b.game.moves.is_empty() && b.outcome.is_none();
        Ok(Imported {
            game: b.game,
            empty,
        })
    }
}
