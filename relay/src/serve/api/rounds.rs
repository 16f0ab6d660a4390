//! Rounds: a round with its games as of the broadcast delay (live for arbiters), its changes
//! after a change number, and arbiters making and editing rounds.

use super::check::{check_date, check_delay, check_text};
use super::error::ApiError;
use super::extract::{Admin, JsonBody, Path, Query, Reader};
use super::tournaments::Created;
use crate::serve::id::{GameId, RoundId, Seq, TournamentId};
use crate::serve::lookup::Lookup;
use crate::serve::publish::Publisher;
use crate::serve::views::RoundView;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use relay_store::{RoundInfo, RoundPatch, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Most changes one `/changes` answer carries.
const MAX_CHANGES: u32 = 1000;

/// A round's view: games as of the delay (live for arbiters).
pub async fn round_json(
    lookup: &Lookup,
    id: RoundId,
    arbiter: bool,
) -> Result<RoundView, ApiError> {
    let r = lookup.store.round(id).await?;
    let (cut, delay) = lookup.cutoff(&r, arbiter).await?;
    Ok(lookup.round_view_of(r, cut, delay).await?)
}

pub async fn get_round(
    State(lookup): State<Lookup>,
    Path(id): Path<RoundId>,
    reader: Reader,
) -> Result<Json<RoundView>, ApiError> {
    Ok(Json(round_json(&lookup, id, reader.arbiter).await?))
}

/// A round as an arbiter makes or edits it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundBody {
    /// The round's name in PGN's Round tag ("1", "2.1"); required to make one, at most 20
    /// characters.
    number: Option<String>,
    /// YYYY-MM-DD or YYYY.MM.DD.
    #[serde(default, deserialize_with = "super::check::nullable")]
    date: Option<Option<String>>,
    /// The round's own broadcast delay, 0 to 3600 s; `null`: the tournament's.
    #[serde(default, deserialize_with = "super::check::nullable")]
    delay_secs: Option<Option<u32>>,
    /// Whether the round is over.
    #[serde(rename = "final")]
    is_final: Option<bool>,
}

pub async fn create_round(
    _: Admin,
    State(store): State<Store>,
    Path(id): Path<TournamentId>,
    JsonBody(b, raw): JsonBody<RoundBody>,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    let number = b
        .number
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| ApiError::bad("number is required"))?;
    check_text("number", Some(&number), 20)?;
    check_delay(b.delay_secs.flatten())?;
    let date = check_date("date", b.date)?.flatten();
    let r = store.create_round(id, &number, date.as_deref()).await?;
    if b.delay_secs.is_some() || b.is_final.is_some() {
        let patch = RoundPatch {
            delay_secs: b.delay_secs,
            is_final: b.is_final,
            ..Default::default()
        };
        store.update_round(r, &patch).await?;
    }
    store
        .audit(
            "arbiter",
            "create_round",
            None,
            &json!({"round": r, "tournament": id, "change": String::from_utf8_lossy(&raw)})
                .to_string(),
        )
        .await?;
    Ok((StatusCode::CREATED, Json(Created { id: r.get() })))
}

pub async fn edit_round(
    _: Admin,
    State(store): State<Store>,
    State(lookup): State<Lookup>,
    State(publisher): State<Publisher>,
    Path(id): Path<RoundId>,
    JsonBody(b, raw): JsonBody<RoundBody>,
) -> Result<Json<RoundInfo>, ApiError> {
    if let Some(n) = &b.number {
        if n.trim().is_empty() {
            return Err(ApiError::bad("number must not be empty"));
        }
        check_text("number", Some(n), 20)?;
    }
    check_delay(b.delay_secs.flatten())?;
    let patch = RoundPatch {
        number: b.number,
        date: check_date("date", b.date)?,
        delay_secs: b.delay_secs,
        is_final: b.is_final,
    };
    let r = store.update_round(id, &patch).await?;
    publisher.round_edited([(r.id, lookup.delay_ms(&r).await?)]);
    store
        .audit(
            "arbiter",
            "edit_round",
            None,
            &json!({"round": id, "change": String::from_utf8_lossy(&raw)}).to_string(),
        )
        .await?;
    Ok(Json(r))
}

/// `?since=N`: the changes after change number N (all of them without it).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Since {
    since: Option<Seq>,
}

/// One change of a round, as the change log has it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ChangeOut {
    seq: Seq,
    game_id: Option<GameId>,
    /// What changed: `move`, `result`, `truncate`, `game`, …
    kind: String,
    at_ms: i64,
    /// The change itself, as the WebSocket message of its kind carries it.
    data: Value,
}

/// A round's changes after a change number.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Changes {
    round_id: RoundId,
    changes: Vec<ChangeOut>,
    /// More changes follow: ask again with the last `seq` for the rest.
    more: bool,
}

pub async fn round_changes(
    State(lookup): State<Lookup>,
    Path(id): Path<RoundId>,
    Query(q): Query<Since>,
    reader: Reader,
) -> Result<Json<Changes>, ApiError> {
    let r = lookup.store.round(id).await?;
    let (cut, _) = lookup.cutoff(&r, reader.arbiter).await?;
    let since = q.since.unwrap_or_default();
    let found = lookup
        .store
        .changes_since(id, since, MAX_CHANGES + 1)
        .await?;
    let more = found.len() > MAX_CHANGES as usize;
    let changes = found
        .into_iter()
        .take(MAX_CHANGES as usize)
        .filter(|c| cut.is_none_or(|t| c.at_ms <= t))
        .map(|c| ChangeOut {
            seq: c.seq,
            game_id: c.game_id,
            kind: c.kind,
            at_ms: c.at_ms,
            data: serde_json::from_str::<Value>(&c.payload).unwrap_or(Value::Null),
        })
        .collect();
    Ok(Json(Changes {
        round_id: id,
        changes,
        more,
    }))
}
