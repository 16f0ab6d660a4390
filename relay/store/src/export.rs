//! Stored games back to the core's [`Game`], ready for the PGN writer, and a game's moves the
//! other way, as the store keeps them.

use crate::model::{RoundInfo, StoredGame, StoredMove};
use relay_core::clock_time::ClockTime;
use relay_core::game::{Game, GameResult, RecordedMove, Tags};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{Chess, EnPassantMode, Position};

/// A game's moves as the store keeps them (SAN, UCI, clocks, the position after), each
/// accepted at `at_ms`.
pub fn stored_moves(g: &Game, at_ms: i64) -> Vec<StoredMove> {
    let mut pos = g.start.clone();
    g.moves
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let uci = m.uci(g.castling_mode).to_string();
            pos.play_unchecked(m.mv);
            StoredMove {
                ply: i as u32 + 1,
                san: m.san.to_string(),
                uci,
                clk_ms: m.clk.map(|c| c.millis()),
                emt_ms: m.emt.map(|c| c.millis()),
                accepted_at_ms: at_ms,
                fen_after: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
            }
        })
        .collect()
}

/// Rebuilds a stored game: replays its moves from the start position (checking each is legal,
/// so a damaged row can never produce an illegal PGN) and fills in the tags. `event`, `site`
/// and `round` come from the tournament and round.
pub fn to_game(g: &StoredGame, event: &str, site: Option<&str>, round: &str) -> Game {
    let mode = g.castling_mode();
    let start: Chess = g.start_position().unwrap_or_default();
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
        // A team event's team; elsewhere the federation, as relay wrote it before teams.
        if let Some(f) = p.team.as_ref().or(p.federation.as_ref()) {
            tags.set(&format!("{side}Team"), f.clone());
        }
    }
    if let Some(t) = &g.termination {
        tags.set("Termination", t.clone());
    }
    // Moves as far as they are legal from the start: a damaged row never makes an illegal PGN.
    let (played, _) = relay_core::game::play_uci(&start, g.moves.iter().map(|m| m.uci.as_str()));
    let mut pos = start.clone();
    let moves = played
        .into_iter()
        .zip(&g.moves)
        .map(|(mv, m)| RecordedMove {
            mv,
            san: SanPlus::from_move_and_play_unchecked(&mut pos, mv),
            clk: m.clk_ms.map(ClockTime),
            emt: m.emt_ms.map(ClockTime),
            comment: None,
        })
        .collect();
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
