//! Arbiter actions on tournaments, rounds, pairings and e-boards.

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TournamentBody {
    name: Option<String>,
    site: Option<Option<String>>,
    start_date: Option<Option<String>>,
    end_date: Option<Option<String>>,
    time_control: Option<Option<String>>,
    delay_secs: Option<u32>,
}

/// A date as PGN writes it ("2026.11.23", with "??" for what is unknown) or as ISO 8601
/// ("2026-11-23"); stored in the ISO form.
pub(super) fn check_date(
    what: &str,
    d: Option<Option<String>>,
) -> Result<Option<Option<String>>, ApiError> {
    let Some(Some(d)) = d else { return Ok(d) };
    let iso = d.trim().replace('.', "-");
    let parts: Vec<&str> = iso.split('-').collect();
    let field = |p: &str, len: usize, max: u32| {
        p.len() == len
            && (p.chars().all(|c| c == '?')
                || p.parse::<u32>().is_ok_and(|v| (1..=max).contains(&v)))
    };
    if parts.len() == 3
        && field(parts[0], 4, 9999)
        && field(parts[1], 2, 12)
        && field(parts[2], 2, 31)
    {
        Ok(Some(Some(iso)))
    } else {
        Err(ApiError::bad(format!(
            "{what} {d:?} is not a date (YYYY-MM-DD or YYYY.MM.DD, ?? for unknown parts)"
        )))
    }
}

pub(super) fn check_delay(d: Option<u32>) -> Result<(), ApiError> {
    match d {
        Some(d) if d > 3600 => Err(ApiError::bad("delay_secs must be between 0 and 3600")),
        _ => Ok(()),
    }
}

pub(super) fn check_text(what: &str, v: Option<&str>, max: usize) -> Result<(), ApiError> {
    match v {
        Some(t) if t.chars().count() > max => Err(ApiError::bad(format!(
            "{what} is longer than {max} characters"
        ))),
        Some(t) if t.chars().any(|c| c.is_control()) => {
            Err(ApiError::bad(format!("{what} contains control characters")))
        }
        _ => Ok(()),
    }
}

pub(super) fn check_time_control(tc: Option<&str>) -> Result<(), ApiError> {
    if let Some(tc) = tc
        && tc.parse::<relay_core::time_control::TimeControl>().is_err()
    {
        return Err(ApiError::bad(format!(
            "time_control {tc:?} is not a PGN TimeControl (e.g. \"5400+30\" or \"40/5400+30:1800+30\")"
        )));
    }
    Ok(())
}

pub(super) async fn create_tournament(
    State(s): State<AppState>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let b: TournamentBody = body_json(&body)?;
    let name = b
        .name
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| ApiError::bad("name is required"))?;
    check_text("name", Some(&name), 200)?;
    check_delay(b.delay_secs)?;
    let tc = b.time_control.flatten();
    check_time_control(tc.as_deref())?;
    let start_date = check_date("start_date", b.start_date)?.flatten();
    let end_date = check_date("end_date", b.end_date)?.flatten();
    let id = s
        .store
        .create_tournament(&NewTournament {
            name,
            site: b.site.flatten(),
            start_date,
            end_date,
            time_control: tc,
            delay_secs: b.delay_secs.unwrap_or(0),
        })
        .await?;
    s.store
        .audit(
            "arbiter",
            "create_tournament",
            None,
            &json!({"id": id}).to_string(),
        )
        .await?;
    Ok((StatusCode::CREATED, axum::Json(json!({"id": id}))).into_response())
}

pub(super) async fn edit_tournament(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "tournament")?;
    let b: TournamentBody = body_json(&body)?;
    check_text("name", b.name.as_deref(), 200)?;
    check_delay(b.delay_secs)?;
    if let Some(tc) = &b.time_control {
        check_time_control(tc.as_deref())?;
    }
    let patch = TournamentPatch {
        name: b.name,
        site: b.site,
        start_date: check_date("start_date", b.start_date)?,
        end_date: check_date("end_date", b.end_date)?,
        time_control: b.time_control,
        delay_secs: b.delay_secs,
    };
    s.store.update_tournament(id, &patch).await?;
    let t = s.store.tournament(id).await?;
    // Rounds without a delay of their own take the tournament's.
    s.publisher.round_edited(t.rounds.iter().map(|r| {
        let secs = r.delay_secs.unwrap_or(t.delay_secs);
        (r.id, i64::from(secs) * 1000)
    }));
    s.store
        .audit(
            "arbiter",
            "edit_tournament",
            None,
            &String::from_utf8_lossy(&body),
        )
        .await?;
    json_ok(serde_json::to_value(t).unwrap_or(Value::Null))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RoundBody {
    number: Option<String>,
    date: Option<Option<String>>,
    delay_secs: Option<Option<u32>>,
    #[serde(rename = "final")]
    is_final: Option<bool>,
}

pub(super) async fn create_round(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "tournament")?;
    let b: RoundBody = body_json(&body)?;
    let number = b
        .number
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| ApiError::bad("number is required"))?;
    check_text("number", Some(&number), 20)?;
    check_delay(b.delay_secs.flatten())?;
    let date = check_date("date", b.date)?.flatten();
    let r = s.store.create_round(id, &number, date.as_deref()).await?;
    if b.delay_secs.is_some() || b.is_final.is_some() {
        let patch = RoundPatch {
            delay_secs: b.delay_secs,
            is_final: b.is_final,
            ..Default::default()
        };
        s.store.update_round(r, &patch).await?;
    }
    s.store
        .audit(
            "arbiter",
            "create_round",
            None,
            &json!({"round": r, "tournament": id, "change": String::from_utf8_lossy(&body)})
                .to_string(),
        )
        .await?;
    Ok((StatusCode::CREATED, axum::Json(json!({"id": r}))).into_response())
}

pub(super) async fn edit_round(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "round")?;
    let b: RoundBody = body_json(&body)?;
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
    let r = s.store.update_round(id, &patch).await?;
    s.publisher
        .round_edited([(r.id, s.lookup.delay_ms(&r).await?)]);
    s.store
        .audit(
            "arbiter",
            "edit_round",
            None,
            &json!({"round": id, "change": String::from_utf8_lossy(&body)}).to_string(),
        )
        .await?;
    json_ok(serde_json::to_value(r).unwrap_or(Value::Null))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct PlayerBody {
    name: Option<String>,
    title: Option<String>,
    rating: Option<u32>,
    fide_id: Option<u64>,
    federation: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PairingBody {
    board_no: u32,
    #[serde(default)]
    white: PlayerBody,
    #[serde(default)]
    black: PlayerBody,
}

pub(super) fn player(p: PlayerBody, at: &str) -> Result<Player, ApiError> {
    check_text(&format!("{at} name"), p.name.as_deref(), 200)?;
    check_text(&format!("{at} title"), p.title.as_deref(), 10)?;
    check_text(&format!("{at} federation"), p.federation.as_deref(), 10)?;
    if p.rating.is_some_and(|r| r > 4000) {
        return Err(ApiError::bad(format!("{at} rating must be at most 4000")));
    }
    Ok(Player {
        name: p.name,
        title: p.title,
        rating: p.rating,
        fide_id: p.fide_id,
        federation: p.federation,
    })
}

/// Pairings from PGN tags: board from `[Board]`, else the part after the dot of `[Round]`,
/// else the game's place in the file.
pub(super) fn pairings_from_pgn(text: &str) -> Result<Vec<Pairing>, ApiError> {
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
            federation: t.get(&format!("{side}Team")).map(str::to_string),
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

pub(super) async fn put_pairings(
    State(s): State<AppState>,
    Path(id): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "round")?;
    s.store.round(id).await?;
    let is_pgn = h
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("pgn") || v.starts_with("text/plain"));
    let pairings = if is_pgn {
        let text =
            std::str::from_utf8(&body).map_err(|_| ApiError::bad("the PGN is not UTF-8 text"))?;
        pairings_from_pgn(text)?
    } else {
        let list: Vec<PairingBody> = body_json(&body)?;
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
        if p.board_no == 0 || p.board_no > 10_000 {
            return Err(ApiError::bad(format!(
                "board number {} is out of range (1..=10000)",
                p.board_no
            )));
        }
        if !seen.insert(p.board_no) {
            return Err(ApiError::bad(format!(
                "board {} is paired twice",
                p.board_no
            )));
        }
    }
    let done = s.store.set_pairings(id, &pairings).await?;
    let ids: Vec<i64> = done.iter().map(|(g, _)| *g).collect();
    // Committed: spectators get the new names.
    for (game, seq) in &done {
        if let Ok(v) = s.lookup.game_view_at(*game, None).await {
            s.publisher.publish(Event::new(
                id,
                Some(*game),
                *seq,
                &ServerMessage::Game {
                    seq: *seq,
                    game: Box::new(v),
                },
            ));
        }
    }
    s.store
        .audit(
            "arbiter",
            "pairings",
            None,
            &json!({"round": id, "boards": pairings.len()}).to_string(),
        )
        .await?;
    json_ok(json!({"round_id": id, "games": ids}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AssignBody {
    serial: String,
}

pub(super) async fn assign_eboard(
    State(s): State<AppState>,
    Path((id, board_no)): Path<(String, String)>,
    h: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_admin(&s, &h)?;
    let id = parse_id(&id, "round")?;
    let board_no: u32 = board_no
        .parse()
        .ok()
        .filter(|b| (1..=10_000).contains(b))
        .ok_or_else(|| ApiError::bad("board number must be 1..=10000"))?;
    let b: AssignBody = body_json(&body)?;
    if b.serial.is_empty()
        || b.serial.len() > 32
        || !b.serial.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(ApiError::bad("serial must be 1 to 32 letters or digits"));
    }
    s.store.round(id).await?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    if !s.writer.send(Job::Assign {
        round_id: id,
        board_no,
        serial: b.serial.clone(),
        reply: tx,
    }) {
        return Err(ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting down".into(),
        ));
    }
    let game = wait_reply(rx).await?;
    json_ok(json!({"round_id": id, "board_no": board_no, "serial": b.serial, "game_id": game}))
}

pub(super) async fn wait_reply(
    rx: tokio::sync::oneshot::Receiver<Result<i64, String>>,
) -> Result<i64, ApiError> {
    match tokio::time::timeout(Duration::from_secs(15), rx).await {
        Ok(Ok(Ok(v))) => Ok(v),
        Ok(Ok(Err(e))) => Err(ApiError(StatusCode::CONFLICT, e)),
        Ok(Err(_)) => Err(ApiError(StatusCode::SERVICE_UNAVAILABLE, "shutting down".into())),
        Err(_) => Err(ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "the database is not answering; the change is queued and will be stored when it is back".into(),
        )),
    }
}
