//! Stored games back to the core's [`Game`], ready for the PGN writer.

use crate::model::{RoundInfo, StoredGame};
use relay_core::clock_time::ClockTime;
use relay_core::game::{Game, GameResult, RecordedMove, Tags};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess};

/// Rebuilds a stored game: replays its moves from the start position (checking each is legal,
/// so a damaged row can never produce an illegal PGN) and fills in the tags. `event`, `site`
/// and `round` come from the tournament and round.
pub fn to_game(g: &StoredGame, event: &str, site: Option<&str>, round: &str) -> Game {
    let mode = if g.chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    let start: Chess = g
        .start_fen
        .as_deref()
        .and_then(|f| f.parse::<Fen>().ok())
        .and_then(|f| f.into_position(mode).ok())
        .unwrap_or_default();
    let mut tags = Tags::default();
    tags.set("Event", event);
    tags.set("Site", site.unwrap_or("?"));
    tags.set("Round", format!("{round}.{}", g.pairing.board_no));
    tags.set(
        "White",
        g.pairing.white.name.clone().unwrap_or_else(|| "?".into()),
    );
    tags.set(
        "Black",
        g.pairing.black.name.clone().unwrap_or_else(|| "?".into()),
    );
    tags.set("Board", g.pairing.board_no.to_string());
    for (side, p) in [("White", &g.pairing.white), ("Black", &g.pairing.black)] {
        if let Some(t) = &p.title {
            tags.set(&format!("{side}Title"), t.clone());
        }
        if let Some(r) = p.rating {
            tags.set(&format!("{side}Elo"), r.to_string());
        }
        if let Some(id) = p.fide_id {
            tags.set(&format!("{side}FideId"), id.to_string());
        }
        if let Some(f) = &p.federation {
            tags.set(&format!("{side}Team"), f.clone());
        }
    }
    if let Some(t) = &g.termination {
        tags.set("Termination", t.clone());
    }
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for m in &g.moves {
        let Some(mv) = m
            .uci
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
        else {
            break;
        };
        let san = SanPlus::from_move_and_play_unchecked(&mut pos, mv);
        moves.push(RecordedMove {
            mv,
            san,
            clk: m.clk_ms.map(ClockTime),
            emt: m.emt_ms.map(ClockTime),
            comment: None,
        });
    }
    Game {
        tags,
        start,
        castling_mode: mode,
        moves,
        result: g.result.parse().unwrap_or(GameResult::Ongoing),
        intro: None,
    }
}

/// A stored game with the tags its tournament and round give it: [`to_game`] and the round's
/// `[Date]` and the tournament's `[TimeControl]`, as every export writes them.
pub fn round_game(
    g: &StoredGame,
    event: &str,
    site: Option<&str>,
    time_control: Option<&str>,
    r: &RoundInfo,
) -> Game {
    let mut game = to_game(g, event, site, &r.number);
    if let Some(d) = &r.date {
        game.tags.set("Date", d.replace('-', "."));
    }
    if let Some(tc) = time_control {
        game.tags.set("TimeControl", tc);
    }
    game
}
