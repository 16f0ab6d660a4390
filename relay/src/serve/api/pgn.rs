//! Games as files: PGN of a tournament, a round or a game (with an ETag, and the round's live
//! text built at most once a second for the platforms polling it), and the export formats.
//! The public gets them as of the broadcast delay.

use super::error::ApiError;
use super::extract::{Path, Reader};
use crate::serve::id::{GameId, RoundId, TournamentId};
use crate::serve::lookup::{Cached, Lookup};
use crate::serve::views::cut_game;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use relay_core::pgn::{WriteOptions, write_games};
use relay_core::recorder::ColorName;
use relay_store::{RoundInfo, StoredGame, now_ms};
use schemars::JsonSchema;
use serde::Deserialize;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// PGN of games of one round, with the running `[Clock]` tag on live games.
fn round_pgn_games(
    lookup: &Lookup,
    event: &str,
    site: Option<&str>,
    time_control: Option<&str>,
    r: &RoundInfo,
    games: &[StoredGame],
    cut: Option<i64>,
) -> Vec<relay_core::game::Game> {
    let clocks = lookup.boards().all_clocks();
    games
        .iter()
        .map(|g| {
            let g = cut_game(g, cut);
            let mut game = relay_store::round_game(&g, event, site, time_control, r);
            if cut.is_none()
                && g.result == "*"
                && let Some(c) = clocks.get(&g.id)
                && let Some(running) = c.running
            {
                let ms = if running == ColorName::White {
                    c.white_ms
                } else {
                    c.black_ms
                };
                let t = relay_core::clock_time::ClockTime(ms);
                let side = if running == ColorName::White {
                    "W"
                } else {
                    "B"
                };
                game.tags.set("Clock", format!("{side}/{t}"));
            }
            game
        })
        .collect()
}

fn etag_of(text: &str) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    format!("\"{:016x}-{:x}\"", hasher.finish(), text.len())
}

/// A PGN answer with an ETag; `If-None-Match` with the same tag gets 304.
fn pgn_response(text: String, h: &HeaderMap, filename: &str) -> Response {
    let etag = etag_of(&text);
    pgn_answer(&text, etag, h, filename)
}

fn pgn_answer(text: &str, etag: String, h: &HeaderMap, filename: &str) -> Response {
    let matches = h
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, v);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if matches {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-chess-pgn; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("inline; filename=\"{filename}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    (StatusCode::OK, headers, text.to_string()).into_response()
}

pub async fn round_pgn(
    State(lookup): State<Lookup>,
    Path(id): Path<RoundId>,
    reader: Reader,
    h: HeaderMap,
) -> Result<Response, ApiError> {
    let store = &lookup.store;
    let r = store.round(id).await?;
    let (cut, _) = lookup.cutoff(&r, reader.arbiter).await?;
    let filename = format!("round-{}.pgn", r.number);
    // Platforms poll this URL every few seconds: the live text is built at most once a
    // second while nothing changes, and an unchanged one costs one small query.
    if cut.is_none()
        && let Some(c) = lookup.cached_pgn(id)
        && c.fresh(r.seq)
    {
        return Ok(pgn_answer(&c.text, c.etag, &h, &filename));
    }
    let t = store.tournament(r.tournament_id).await?;
    let games = store.round_games(id).await?;
    let pgn = round_pgn_games(
        &lookup,
        &t.name,
        t.site.as_deref(),
        t.time_control.as_deref(),
        &r,
        &games,
        cut,
    );
    let text = Arc::new(write_games(&pgn, &WriteOptions::default()));
    let etag = etag_of(&text);
    if cut.is_none() {
        lookup.cache_pgn(
            id,
            Cached {
                seq: r.seq,
                built_ms: now_ms(),
                text: text.clone(),
                etag: etag.clone(),
            },
        );
    }
    Ok(pgn_answer(&text, etag, &h, &filename))
}

pub async fn tournament_pgn(
    State(lookup): State<Lookup>,
    Path(id): Path<TournamentId>,
    reader: Reader,
    h: HeaderMap,
) -> Result<Response, ApiError> {
    pgn_of(&lookup, Exported::Tournament(id), reader, &h).await
}

/// A player's games of a tournament (`/api/tournaments/{id}/players/{start_rank}/pgn`).
pub async fn player_pgn(
    State(lookup): State<Lookup>,
    Path((id, sr)): Path<(TournamentId, super::player::StartRank)>,
    reader: Reader,
    h: HeaderMap,
) -> Result<Response, ApiError> {
    pgn_of(&lookup, Exported::Player(id, sr.0), reader, &h).await
}

pub async fn game_pgn(
    State(lookup): State<Lookup>,
    Path(id): Path<GameId>,
    reader: Reader,
    h: HeaderMap,
) -> Result<Response, ApiError> {
    pgn_of(&lookup, Exported::Game(id), reader, &h).await
}

/// A tournament's or a game's PGN with its ETag (a round's is [`round_pgn`], cached).
async fn pgn_of(
    lookup: &Lookup,
    what: Exported,
    reader: Reader,
    h: &HeaderMap,
) -> Result<Response, ApiError> {
    let (games, name) = games_of(lookup, what, reader).await?;
    let text = write_games(&games, &WriteOptions::default());
    Ok(pgn_response(text, h, &format!("{name}.pgn")))
}

/// `?format=pgn|archive|epd|onebyte|pgc|cbf|cbi` (default pgn) and `final=1` (EPD: final
/// positions only).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExportQuery {
    format: Option<String>,
    #[serde(rename = "final")]
    final_only: Option<String>,
    /// `strict=1`: a game the format cannot hold fails the request (422) instead of being
    /// left out.
    strict: Option<String>,
}

/// What an export writes: a tournament's games, a round's, or one game.
#[derive(Clone, Copy, Debug)]
enum Exported {
    Tournament(TournamentId),
    /// One player's games of a tournament, by start rank.
    Player(TournamentId, u32),
    Round(RoundId),
    Game(GameId),
}

/// The games of a tournament, a round or a game as PGN games (the delay applied for the
/// public), with the file's name.
async fn games_of(
    lookup: &Lookup,
    what: Exported,
    reader: Reader,
) -> Result<(Vec<relay_core::game::Game>, String), ApiError> {
    let store = &lookup.store;
    let mut out = Vec::new();
    let mut player = None;
    let (t, rounds, name, only) = match what {
        Exported::Tournament(id) => {
            let t = store.tournament(id).await?;
            let rounds = t.rounds.clone();
            (t, rounds, format!("tournament-{id}"), None)
        }
        Exported::Player(id, start_rank) => {
            let t = store.tournament(id).await?;
            let rounds = t.rounds.clone();
            player = Some(start_rank);
            (
                t,
                rounds,
                format!("tournament-{id}-player-{start_rank}"),
                None,
            )
        }
        Exported::Round(id) => {
            let r = store.round(id).await?;
            let t = store.tournament(r.tournament_id).await?;
            let name = format!("round-{}", r.number);
            (t, vec![r], name, None)
        }
        Exported::Game(id) => {
            let g = store.game(id).await?;
            let r = store.round(g.round_id).await?;
            let t = store.tournament(r.tournament_id).await?;
            (t, vec![r], format!("game-{id}"), Some(g))
        }
    };
    for r in &rounds {
        let (cut, _) = lookup.cutoff(r, reader.arbiter).await?;
        let games = match &only {
            Some(g) => vec![g.clone()],
            None => store.round_games(r.id).await?,
        };
        let games: Vec<StoredGame> = match player {
            Some(sr) => games
                .into_iter()
                .filter(|g| {
                    g.pairing.white.start_rank == Some(sr) || g.pairing.black.start_rank == Some(sr)
                })
                .collect(),
            None => games,
        };
        let mut pgn = round_pgn_games(
            lookup,
            &t.name,
            t.site.as_deref(),
            t.time_control.as_deref(),
            r,
            &games,
            cut,
        );
        // The arbiter's PGN has the record at its point of the game; the spectators' only
        // when the tournament says so, as of the delay.
        if reader.arbiter || t.public_incidents {
            for (stored, game) in games.iter().zip(pgn.iter_mut()) {
                annotate_record(store, stored, game, t.time_control.as_deref(), cut).await?;
            }
        }
        out.extend(pgn);
    }
    Ok((out, name))
}

async fn export(
    lookup: &Lookup,
    what: Exported,
    reader: Reader,
    q: ExportQuery,
) -> Result<Response, ApiError> {
    let fmt = q.format.as_deref().unwrap_or("pgn");
    let Some(format) = relay_core::convert::Format::parse(fmt) else {
        return Err(ApiError::bad(format!(
            "format {fmt:?} is not one of pgn, archive, epd, onebyte, pgc, cbf, cbi"
        )));
    };
    let final_only = matches!(q.final_only.as_deref(), Some("1" | "true"));
    let strict = matches!(q.strict.as_deref(), Some("1" | "true"));
    let (games, name) = games_of(lookup, what, reader).await?;
    let mut w = relay_core::convert::GameWriter::new(Vec::new(), format, final_only);
    let mut skipped = Vec::new();
    for g in &games {
        // A game the format cannot hold (Chess960 in CBF, say) is left out and named in the
        // answer's headers; with `strict`, it is the request's problem.
        match w.add(g) {
            Ok(()) => {}
            Err(relay_core::convert::AddError::CannotHold(why)) if !strict => {
                skipped.push(format!("{}: {why}", g.label()));
            }
            Err(relay_core::convert::AddError::CannotHold(why)) => {
                return Err(ApiError::Unprocessable(format!(
                    "game {} cannot be written as {fmt}: {why}",
                    g.label()
                )));
            }
            Err(relay_core::convert::AddError::Io(e)) => {
                return Err(ApiError::Internal(e.to_string()));
            }
        }
    }
    let written = w.games();
    let body = w.finish().map_err(|e| ApiError::Internal(e.to_string()))?;
    let mut headers = HeaderMap::new();
    headers.insert("x-relay-games-written", HeaderValue::from(written));
    headers.insert("x-relay-games-skipped", HeaderValue::from(skipped.len()));
    for why in &skipped {
        // Header values are visible ASCII: anything else in a name becomes '?'.
        let ascii: String = why
            .chars()
            .map(|c| {
                if c == ' ' || c.is_ascii_graphic() {
                    c
                } else {
                    '?'
                }
            })
            .collect();
        if let Ok(v) = HeaderValue::from_str(&ascii) {
            headers.append("x-relay-game-skipped", v);
        }
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    if let Ok(v) = HeaderValue::from_str(&format!(
        "attachment; filename=\"{name}.{}\"",
        format.extension()
    )) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok((StatusCode::OK, headers, body).into_response())
}

// The export routes read their query first, with axum's own `Query`, whose refusal (a
// plain-text 400) they have always given before anything else.

pub async fn export_tournament(
    State(lookup): State<Lookup>,
    Query(q): Query<ExportQuery>,
    Path(id): Path<TournamentId>,
    reader: Reader,
) -> Result<Response, ApiError> {
    export(&lookup, Exported::Tournament(id), reader, q).await
}

pub async fn export_round(
    State(lookup): State<Lookup>,
    Query(q): Query<ExportQuery>,
    Path(id): Path<RoundId>,
    reader: Reader,
) -> Result<Response, ApiError> {
    export(&lookup, Exported::Round(id), reader, q).await
}

pub async fn export_game(
    State(lookup): State<Lookup>,
    Query(q): Query<ExportQuery>,
    Path(id): Path<GameId>,
    reader: Reader,
) -> Result<Response, ApiError> {
    export(&lookup, Exported::Game(id), reader, q).await
}

/// Comments for the game's illegal moves and clock corrections, each where it happened.
async fn annotate_record(
    store: &relay_store::Reads,
    stored: &StoredGame,
    game: &mut relay_core::game::Game,
    time_control: Option<&str>,
    cut: Option<i64>,
) -> Result<(), ApiError> {
    use relay_core::incident::{adjustment_note, annotate, illegal_note};
    use shakmaty::Position;
    // The record as the JSON gives it (the counts are worked out there, once), its notes in
    // the order they happened.
    let record = super::record::record_of(store, stored, time_control, cut).await?;
    if record.joined_late {
        let who = if game.start.turn().is_white() {
            "White"
        } else {
            "Black"
        };
        let note = format!(
            "Joined late: recording began in the middle of the game, from this position with {who} to move; the moves before it were not seen."
        );
        annotate(game, 1, &note);
    }
    let mut notes: Vec<(i64, u32, String)> = record
        .clock_adjustments
        .iter()
        .map(|a| (a.id, a.ply, adjustment_note(a.color.is_white(), a.delta_ms)))
        .collect();
    // Before the first recovered move (ids order notes; a stretch's come in one reading).
    for r in &record.recovered {
        annotate(game, r.from_ply, &r.note());
    }
    for m in &record.illegal_moves {
        let note = illegal_note(
            m.color.is_white(),
            m.count,
            m.kind,
            m.uci.as_deref(),
            m.ruling,
        );
        notes.push((m.id, m.ply, note));
    }
    notes.sort_by_key(|(id, _, _)| *id);
    for (_, ply, note) in notes {
        annotate(game, ply, &note);
    }
    Ok(())
}
