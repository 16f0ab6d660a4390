//! PGN out (ETag, gzip) and PGN-derived input (pairings from tags).

use super::*;

/// PGN of games of one round, with the running `[Clock]` tag on live games.
pub(super) fn round_pgn_games(
    s: &Shared,
    event: &str,
    site: Option<&str>,
    time_control: Option<&str>,
    r: &RoundInfo,
    games: &[StoredGame],
    cut: Option<i64>,
) -> Vec<relay_core::game::Game> {
    let clocks = s.boards.all_clocks();
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

pub(super) fn etag_of(text: &str) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    format!("\"{:016x}-{:x}\"", hasher.finish(), text.len())
}

/// A PGN answer with an ETag; `If-None-Match` with the same tag gets 304.
pub(super) fn pgn_response(text: String, h: &HeaderMap, filename: &str) -> Response {
    let etag = etag_of(&text);
    pgn_answer(&text, etag, h, filename)
}

pub(super) fn pgn_answer(text: &str, etag: String, h: &HeaderMap, filename: &str) -> Response {
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

pub(super) async fn round_pgn(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    let id = parse_id(&id, "round")?;
    let a = arbiter(&s, &h)?;
    let r = s.store.round(id).await?;
    let (cut, _) = cutoff(&s, &r, a).await?;
    let filename = format!("round-{}.pgn", r.number);
    // Platforms poll this URL every few seconds: the live text is built at most once a
    // second while nothing changes, and an unchanged one costs one small query.
    if cut.is_none()
        && let Some(c) = s.lookup.cached_pgn(id)
        && c.fresh(r.seq)
    {
        return Ok(pgn_answer(&c.text, c.etag, &h, &filename));
    }
    let t = s.store.tournament(r.tournament_id).await?;
    let games = s.store.round_games(id).await?;
    let pgn = round_pgn_games(
        &s,
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
        s.lookup.cache_pgn(
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

pub(super) async fn tournament_pgn(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    let id = parse_id(&id, "tournament")?;
    let a = arbiter(&s, &h)?;
    let t = s.store.tournament(id).await?;
    let mut all = Vec::new();
    for r in &t.rounds {
        let games = s.store.round_games(r.id).await?;
        let (cut, _) = cutoff(&s, r, a).await?;
        all.extend(round_pgn_games(
            &s,
            &t.name,
            t.site.as_deref(),
            t.time_control.as_deref(),
            r,
            &games,
            cut,
        ));
    }
    let text = write_games(&all, &WriteOptions::default());
    Ok(pgn_response(text, &h, &format!("tournament-{id}.pgn")))
}

pub(super) async fn game_pgn(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
) -> ApiResult {
    let id = parse_id(&id, "game")?;
    let a = arbiter(&s, &h)?;
    let g = s.store.game(id).await?;
    let r = s.store.round(g.round_id).await?;
    let t = s.store.tournament(r.tournament_id).await?;
    let (cut, _) = cutoff(&s, &r, a).await?;
    let pgn = round_pgn_games(
        &s,
        &t.name,
        t.site.as_deref(),
        t.time_control.as_deref(),
        &r,
        std::slice::from_ref(&g),
        cut,
    );
    let text = write_games(&pgn, &WriteOptions::default());
    Ok(pgn_response(text, &h, &format!("game-{id}.pgn")))
}

/// `?format=pgn|archive|epd|onebyte|pgc|cbf|cbi` (default pgn) and `final=1` (EPD: final
/// positions only).
#[derive(Deserialize)]
pub(super) struct ExportQuery {
    format: Option<String>,
    #[serde(rename = "final")]
    final_only: Option<String>,
}

/// The games of a tournament, a round or a game as PGN games (the delay applied for the
/// public), for the export routes.
async fn games_of(
    s: &Shared,
    what: &str,
    id: i64,
    a: bool,
) -> Result<(Vec<relay_core::game::Game>, String), ApiError> {
    let mut out = Vec::new();
    let (rounds, name, only) = match what {
        "tournament" => {
            let t = s.store.tournament(id).await?;
            (t.rounds.clone(), format!("tournament-{id}"), None)
        }
        "round" => {
            let r = s.store.round(id).await?;
            let name = format!("round-{}", r.number);
            (vec![r], name, None)
        }
        _ => {
            let g = s.store.game(id).await?;
            let r = s.store.round(g.round_id).await?;
            (vec![r], format!("game-{id}"), Some(g))
        }
    };
    for r in &rounds {
        let t = s.store.tournament(r.tournament_id).await?;
        let (cut, _) = cutoff(s, r, a).await?;
        let games = match &only {
            Some(g) => vec![g.clone()],
            None => s.store.round_games(r.id).await?,
        };
        out.extend(round_pgn_games(
            s,
            &t.name,
            t.site.as_deref(),
            t.time_control.as_deref(),
            r,
            &games,
            cut,
        ));
    }
    Ok((out, name))
}

async fn export(s: &Shared, what: &str, id: &str, h: &HeaderMap, q: ExportQuery) -> ApiResult {
    let id = parse_id(id, what)?;
    let fmt = q.format.as_deref().unwrap_or("pgn");
    let Some(format) = relay_core::convert::Format::parse(fmt) else {
        return Err(ApiError::bad(format!(
            "format {fmt:?} is not one of pgn, archive, epd, onebyte, pgc, cbf, cbi"
        )));
    };
    let final_only = matches!(q.final_only.as_deref(), Some("1" | "true"));
    let a = arbiter(s, h)?;
    let (games, name) = games_of(s, what, id, a).await?;
    let mut w = relay_core::convert::GameWriter::new(Vec::new(), format, final_only);
    for g in &games {
        // A game the format cannot hold (Chess960 in CBF, say) is the request's problem.
        w.add(g).map_err(|e| {
            ApiError(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("game {} cannot be written as {fmt}: {e}", g.label()),
            )
        })?;
    }
    let body = w
        .finish()
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let mut headers = HeaderMap::new();
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

pub(super) async fn export_tournament(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    axum::extract::Query(q): axum::extract::Query<ExportQuery>,
) -> ApiResult {
    export(&s, "tournament", &id, &h, q).await
}

pub(super) async fn export_round(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    axum::extract::Query(q): axum::extract::Query<ExportQuery>,
) -> ApiResult {
    export(&s, "round", &id, &h, q).await
}

pub(super) async fn export_game(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    axum::extract::Query(q): axum::extract::Query<ExportQuery>,
) -> ApiResult {
    export(&s, "game", &id, &h, q).await
}
