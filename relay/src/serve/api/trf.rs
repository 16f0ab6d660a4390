//! Tournaments run from a pairing program's file (FIDE's TRF): made or updated from one by an
//! arbiter, written back with relay's results for the pairing program, and the players listed;
//! and a board renumbered by the arbiter (the file's order is FIDE's, the hall's may differ).

use super::error::ApiError;
use super::extract::{Admin, Path, Reader};
use crate::serve::id::TournamentId;
use crate::serve::id::{BoardNo, GameId};
use crate::serve::lookup::Lookup;
use crate::serve::publish::Publisher;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use relay_core::trf::{read_trf, write_trf};
use relay_store::{RoundId, Seq, Store, TournamentPlayer, TournamentTeam, TrfImported};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Reads the body as a TRF (a clear 400 naming the line when it does not read) and imports it.
async fn import(
    store: &Store,
    publisher: &Publisher,
    into: Option<TournamentId>,
    body: &[u8],
) -> Result<TrfImported, ApiError> {
    if body.is_empty() {
        return Err(ApiError::bad("the body is empty: send the TRF file"));
    }
    let trf = read_trf(body).map_err(|e| ApiError::bad(format!("the TRF does not read: {e}")))?;
    let done = store
        .import_trf(&trf, body, into, "arbiter", "uploaded")
        .await?;
    // Committed: the rounds' followers get the new pairings and results.
    publisher.games_changed(&done.changed).await;
    // The rounds' byes are in no message: the feeds read their views again.
    publisher.rounds_edited_elsewhere().await;
    Ok(done)
}

/// A tournament made from a TRF.
pub async fn create_from_trf(
    _: Admin,
    State(store): State<Store>,
    State(publisher): State<Publisher>,
    body: Bytes,
) -> Result<(StatusCode, Json<TrfImported>), ApiError> {
    let done = import(&store, &publisher, None, &body).await?;
    Ok((StatusCode::CREATED, Json(done)))
}

/// A tournament updated from its pairing program's newer file.
pub async fn put_trf(
    _: Admin,
    State(store): State<Store>,
    State(publisher): State<Publisher>,
    Path(id): Path<TournamentId>,
    body: Bytes,
) -> Result<Json<TrfImported>, ApiError> {
    store.tournament(id).await?;
    Ok(Json(import(&store, &publisher, Some(id), &body).await?))
}

/// The tournament as TRF16 with every result relay has, for the pairing program, ranked as
/// the standings rank it (`Store::trf_ranked`).
pub async fn get_trf(
    _: Admin,
    State(store): State<Store>,
    Path(id): Path<TournamentId>,
) -> Result<Response, ApiError> {
    let trf = store.trf_ranked(id).await?;
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"tournament.trf\""),
    );
    Ok((StatusCode::OK, headers, write_trf(&trf)).into_response())
}

/// The players with their points; the public's count a result only once the round's delay
/// has passed since it was set, as its moves are shown.
pub async fn list_players(
    State(lookup): State<Lookup>,
    Path(id): Path<TournamentId>,
    reader: Reader,
) -> Result<Json<Vec<TournamentPlayer>>, ApiError> {
    let t = lookup.store.tournament(id).await?;
    let mut cutoffs = HashMap::new();
    for r in &t.rounds {
        if let (Some(c), _) = lookup.cutoff(r, reader.arbiter).await? {
            cutoffs.insert(r.id, c);
        }
    }
    match lookup.store.tournament_players(id, &cutoffs).await {
        // A tournament not run from a file has no players of its own.
        Err(relay_store::StoreError::Conflict(_)) => Ok(Json(vec![])),
        r => Ok(Json(r?)),
    }
}

pub async fn list_teams(
    State(store): State<Store>,
    Path(id): Path<TournamentId>,
) -> Result<Json<Vec<TournamentTeam>>, ApiError> {
    store.tournament(id).await?;
    Ok(Json(store.tournament_teams(id).await?))
}

/// A game's new board number.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoardBody {
    /// 1 to 10000; a game already there takes this game's number.
    board_no: u32,
}

/// The games whose board numbers changed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Renumbered {
    games: Vec<GameId>,
}

pub async fn renumber(
    _: Admin,
    State(store): State<Store>,
    State(publisher): State<Publisher>,
    Path(id): Path<GameId>,
    super::extract::JsonBody(b, _): super::extract::JsonBody<BoardBody>,
) -> Result<Json<Renumbered>, ApiError> {
    let board = BoardNo::try_from(b.board_no)?;
    let round = store.game(id).await?.round_id;
    let done = store.renumber_board(id, board.get(), "arbiter").await?;
    let changed: Vec<(RoundId, GameId, Seq)> =
        done.iter().map(|&(g, seq)| (round, g, seq)).collect();
    publisher.games_changed(&changed).await;
    Ok(Json(Renumbered {
        games: done.iter().map(|(g, _)| *g).collect(),
    }))
}
