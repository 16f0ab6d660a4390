//! A round's pairings, loaded by an arbiter as JSON or as PGN whose tags name the players.

use super::check::check_text;
use super::error::ApiError;
use super::extract::{Admin, Path, json_of};
use crate::serve::id::{BoardNo, GameId, RoundId};
use crate::serve::publish::Publisher;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use relay_store::{Pairing, Player, Seq, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A player as an arbiter names them.
#[derive(Debug, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlayerBody {
    /// At most 200 characters.
    name: Option<String>,
    /// At most 10 characters ("GM").
    title: Option<String>,
    /// At most 4000.
    rating: Option<u32>,
    fide_id: Option<u64>,
    /// At most 10 characters ("GER").
    federation: Option<String>,
    /// The player's team in a team event; at most 200 characters.
    team: Option<String>,
}

/// One board of a round's pairings.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairingBody {
    /// 1 to 10000, once per round.
    board_no: u32,
    #[serde(default)]
    white: PlayerBody,
    #[serde(default)]
    black: PlayerBody,
}

/// The pairings stored.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PairingsSet {
    round_id: RoundId,
    /// The games, by board.
    games: Vec<GameId>,
}

fn player(p: PlayerBody, at: &str) -> Result<Player, ApiError> {
    check_text(&format!("{at} name"), p.name.as_deref(), 200)?;
    check_text(&format!("{at} title"), p.title.as_deref(), 10)?;
    check_text(&format!("{at} federation"), p.federation.as_deref(), 10)?;
    check_text(&format!("{at} team"), p.team.as_deref(), 200)?;
    if p.rating.is_some_and(|r| r > 4000) {
        return Err(ApiError::bad(format!("{at} rating must be at most 4000")));
    }
    Ok(Player {
        name: p.name,
        title: p.title,
        rating: p.rating,
        fide_id: p.fide_id,
        federation: p.federation,
        start_rank: None,
        team: p.team,
    })
}

/// Pairings from PGN tags: board from `[Board]`, else the part after the dot of `[Round]`,
/// else the game's place in the file.
fn pairings_from_pgn(text: &str) -> Result<Vec<Pairing>, ApiError> {
    let mut out = Vec::new();
    for (i, g) in relay_core::pgn::read_games(text).into_iter().enumerate() {
        let g = g.map_err(|e| ApiError::bad(format!("PGN not understood: {e}")))?;
        let t = &g.tags;
        let board_no = t
            .get("Board")
            .and_then(|b| b.trim().parse().ok())
            .or_else(|| {
                t.get("Round")
                    .and_then(|r| r.rsplit_once('.'))
                    .and_then(|(_, b)| b.parse().ok())
            })
            .unwrap_or(i as u32 + 1);
        let p = |side: &str| PlayerBody {
            name: t.get(side).filter(|v| *v != "?").map(str::to_string),
            title: t.get(&format!("{side}Title")).map(str::to_string),
            rating: t.get(&format!("{side}Elo")).and_then(|v| v.parse().ok()),
            fide_id: t.get(&format!("{side}FideId")).and_then(|v| v.parse().ok()),
            federation: t
                .get(&format!("{side}Fed"))
                .or_else(|| t.get(&format!("{side}Team")))
                .map(str::to_string),
            team: t.get(&format!("{side}Team")).map(str::to_string),
        };
        out.push(Pairing {
            board_no,
            white: player(p("White"), &format!("board {board_no} White"))?,
            black: player(p("Black"), &format!("board {board_no} Black"))?,
        });
    }
    if out.is_empty() {
        return Err(ApiError::bad("no games in the PGN"));
    }
    Ok(out)
}

/// The body is PGN when it says so (or is plain text), else a JSON list of [`PairingBody`];
/// read here rather than by an extractor, since the round is looked up first.
pub async fn put_pairings(
    _: Admin,
    State(store): State<Store>,
    State(publisher): State<Publisher>,
    Path(id): Path<RoundId>,
    h: HeaderMap,
    body: Bytes,
) -> Result<Json<PairingsSet>, ApiError> {
    store.round(id).await?;
    let is_pgn = h
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("pgn") || v.starts_with("text/plain"));
    let pairings = if is_pgn {
        let text =
            std::str::from_utf8(&body).map_err(|_| ApiError::bad("the PGN is not UTF-8 text"))?;
        pairings_from_pgn(text)?
    } else {
        let list: PairingsBody = json_of(&body)?;
        let mut out = Vec::new();
        for p in list {
            let at = format!("board {}", p.board_no);
            out.push(Pairing {
                board_no: p.board_no,
                white: player(p.white, &format!("{at} White"))?,
                black: player(p.black, &format!("{at} Black"))?,
            });
        }
        out
    };
    let mut seen = std::collections::HashSet::new();
    for p in &pairings {
        if BoardNo::try_from(p.board_no).is_err() {
            return Err(ApiError::bad(format!(
                "board number {} is out of range (1..={})",
                p.board_no,
                BoardNo::MAX
            )));
        }
        if !seen.insert(p.board_no) {
            return Err(ApiError::bad(format!(
                "board {} is paired twice",
                p.board_no
            )));
        }
    }
    let done = store.set_pairings(id, &pairings).await?;
    let games = done.iter().map(|(g, _)| *g).collect();
    // Committed: spectators get the new names.
    let changed: Vec<(RoundId, GameId, Seq)> = done.iter().map(|&(g, seq)| (id, g, seq)).collect();
    publisher.games_changed(&changed).await;
    store
        .audit(
            "arbiter",
            "pairings",
            None,
            &json!({"round": id.get(), "boards": pairings.len()}).to_string(),
        )
        .await?;
    Ok(Json(PairingsSet {
        round_id: id,
        games,
    }))
}

/// The JSON form of the body, as the route table's document describes it.
pub type PairingsBody = Vec<PairingBody>;
