//! Tournaments: the list and one with its rounds (public), made and edited by arbiters.

use super::check::{check_date, check_delay, check_text, check_time_control};
use super::error::ApiError;
use super::extract::{Admin, JsonBody, Path};
use crate::serve::id::TournamentId;
use crate::serve::publish::Publisher;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use relay_store::{NewTournament, RankingTerms, Store, TournamentInfo, TournamentPatch};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A tournament as an arbiter makes or edits it: every field may be left out of an edit, and
/// `null` clears one that may be empty.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TournamentBody {
    /// Required to make one; at most 200 characters.
    name: Option<String>,
    #[serde(default, deserialize_with = "super::check::nullable")]
    site: Option<Option<String>>,
    /// YYYY-MM-DD or YYYY.MM.DD, `??` for unknown parts.
    #[serde(default, deserialize_with = "super::check::nullable")]
    start_date: Option<Option<String>>,
    #[serde(default, deserialize_with = "super::check::nullable")]
    end_date: Option<Option<String>>,
    /// As PGN's TimeControl tag: "5400+30", "40/5400+30:1800+30".
    #[serde(default, deserialize_with = "super::check::nullable")]
    time_control: Option<Option<String>>,
    /// The broadcast delay for the public, 0 to 3600 s.
    delay_secs: Option<u32>,
    /// Whether spectators' game JSON and game PGN show the arbiter's record (illegal moves,
    /// clock corrections), as of the delay; off unless set.
    public_incidents: Option<bool>,
    /// The origins (`https://club.example`, `http://localhost:8000`) whose pages may show the
    /// tournament's embedded boards (`/embed/game.html`, `/embed/round.html`) in a frame; at
    /// most 20. `[]` allows only this relay's own pages.
    embed_origins: Option<Vec<String>>,
    /// The event's name across relays (letters, digits, `-`, `_`, `.`; at most 64): venue
    /// relays pushing tournaments with the same key to one cloud relay fill one tournament
    /// there. `null` takes it away; unique on this relay.
    #[serde(default, deserialize_with = "super::check::nullable")]
    event_key: Option<Option<String>>,
    /// The standings' tie-break codes in order, as TRF-2026 record 202 writes them
    /// (`["BH/C1", "BH", "SB"]`; `GET /api/tiebreaks` lists them); `[]` is relay's default for
    /// the kind of event.
    tiebreaks: Option<Vec<String>>,
    /// FIDE's tie-break rules: `"2026"` (in force since 1 March 2026) or `"2024"`.
    #[serde(default, deserialize_with = "super::check::nullable")]
    edition: Option<Option<String>>,
    /// Points per kind of result; `null`: FIDE's 1/½/0. Give what differs (`{"win": 3,
    /// "draw": 1}`): as TRF-2026's 162 reads, a forfeit win and a full-point or
    /// pairing-allocated bye count as a win, a half-point bye as a draw, a forfeit loss and a
    /// zero-point bye as `absent` (0), unless given.
    #[serde(default, deserialize_with = "super::check::nullable")]
    scoring: Option<Option<ScoringBody>>,
    /// Match points of a team event (win, draw, loss); `null`: 2/1/0.
    #[serde(default, deserialize_with = "super::check::nullable")]
    team_scoring: Option<Option<relay_core::standings::TeamScoring>>,
    /// A round robin (else a Swiss); `null`: by the pairing program's file.
    #[serde(default, deserialize_with = "super::check::nullable")]
    round_robin: Option<Option<bool>>,
    /// Players' photos: an address with `{fide_id}` in it (`https://…/{fide_id}.jpg`, or
    /// `/photos/{fide_id}.jpg` for the folder relay serves with `--photos-dir`); `null`: none.
    #[serde(default, deserialize_with = "super::check::nullable")]
    photos: Option<Option<String>>,
    /// The credit line under the photos.
    #[serde(default, deserialize_with = "super::check::nullable")]
    photo_credit: Option<Option<String>>,
    /// Pages open with results and evaluations hidden until the spectator asks.
    spoiler_free: Option<bool>,
}

/// A tournament's scoring as an arbiter gives it: what is left out follows from the rest.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScoringBody {
    /// A game won over the board (1).
    win: Option<f64>,
    /// A draw (½).
    draw: Option<f64>,
    /// A game lost over the board (0).
    loss: Option<f64>,
    /// A zero-point bye, an absence (0); a forfeit loss unless given.
    absent: Option<f64>,
    /// A game won by forfeit (as a win).
    forfeit_win: Option<f64>,
    /// A game lost by forfeit (as `absent`).
    forfeit_loss: Option<f64>,
    /// A full-point bye (as a win).
    full_bye: Option<f64>,
    /// A half-point bye (as a draw).
    half_bye: Option<f64>,
    /// The pairing-allocated bye (as a full-point bye).
    pairing_bye: Option<f64>,
}

impl ScoringBody {
    fn scoring(&self) -> relay_core::standings::Scoring {
        let d = relay_core::standings::Scoring::default();
        let win = self.win.unwrap_or(d.win);
        let draw = self.draw.unwrap_or(d.draw);
        let absent = self.absent.unwrap_or(d.zero_bye);
        let full = self.full_bye.unwrap_or(win);
        relay_core::standings::Scoring {
            win,
            draw,
            loss: self.loss.unwrap_or(d.loss),
            forfeit_win: self.forfeit_win.unwrap_or(win),
            forfeit_loss: self.forfeit_loss.unwrap_or(absent),
            full_bye: full,
            half_bye: self.half_bye.unwrap_or(draw),
            zero_bye: absent,
            pairing_bye: self.pairing_bye.unwrap_or(full),
            ..d
        }
    }
}

impl TournamentBody {
    /// Whether the body changes how the tournament is ranked.
    fn ranks(&self) -> bool {
        self.tiebreaks.is_some()
            || self.edition.is_some()
            || self.scoring.is_some()
            || self.team_scoring.is_some()
            || self.round_robin.is_some()
            || self.photos.is_some()
            || self.photo_credit.is_some()
            || self.spoiler_free.is_some()
    }

    /// `terms` with this body's changes, checked (a 400 naming what is wrong).
    fn ranking(&self, mut terms: RankingTerms) -> Result<RankingTerms, ApiError> {
        if let Some(t) = &self.tiebreaks {
            if t.len() > 20 {
                return Err(ApiError::bad("tiebreaks: at most 20 codes"));
            }
            terms.tiebreaks = t.iter().map(|c| c.trim().to_string()).collect();
        }
        if let Some(e) = &self.edition {
            terms.edition = e.clone();
        }
        if let Some(s) = &self.scoring {
            terms.scoring = s.as_ref().map(ScoringBody::scoring);
        }
        if let Some(s) = &self.team_scoring {
            terms.team_scoring = s.clone();
        }
        if let Some(r) = self.round_robin {
            terms.round_robin = r;
        }
        if let Some(p) = &self.photos {
            check_text("photos", p.as_deref(), 500)?;
            terms.photos = p.clone();
        }
        if let Some(p) = &self.photo_credit {
            check_text("photo_credit", p.as_deref(), 200)?;
            terms.photo_credit = p.clone();
        }
        if let Some(s) = self.spoiler_free {
            terms.spoiler_free = s;
        }
        terms.check().map_err(ApiError::bad)?;
        Ok(terms)
    }
}

/// What was made.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Created {
    pub id: i64,
}

pub async fn list_tournaments(
    State(store): State<Store>,
) -> Result<Json<Vec<TournamentInfo>>, ApiError> {
    Ok(Json(store.tournaments().await?))
}

pub async fn get_tournament(
    State(store): State<Store>,
    Path(id): Path<TournamentId>,
) -> Result<Json<TournamentInfo>, ApiError> {
    Ok(Json(store.tournament(id).await?))
}

pub async fn create_tournament(
    _: Admin,
    State(store): State<Store>,
    JsonBody(b, _): JsonBody<TournamentBody>,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    let name = b
        .name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| ApiError::bad("name is required"))?;
    check_text("name", Some(&name), 200)?;
    check_delay(b.delay_secs)?;
    // Checked before anything is made: a bad tie-break code makes nothing.
    let ranking = if b.ranks() {
        Some(b.ranking(RankingTerms::default())?)
    } else {
        None
    };
    let tc = b.time_control.flatten();
    check_time_control(tc.as_deref())?;
    let start_date = check_date("start_date", b.start_date)?.flatten();
    let end_date = check_date("end_date", b.end_date)?.flatten();
    let event_key = check_event_key(b.event_key)?.flatten();
    let id = store
        .create_tournament(&NewTournament {
            name,
            site: b.site.flatten(),
            start_date,
            end_date,
            time_control: tc,
            delay_secs: b.delay_secs.unwrap_or(0),
            event_key,
        })
        .await?;
    if let Some(r) = &ranking {
        store.set_ranking_terms(id, r).await?;
    }
    store
        .audit(
            "arbiter",
            "create_tournament",
            None,
            &json!({"id": id}).to_string(),
        )
        .await?;
    Ok((StatusCode::CREATED, Json(Created { id: id.get() })))
}

/// Origins as a `frame-ancestors` list may hold them: `http` or `https`, a host (whose first
/// label may be `*`) and a port, nothing else (no path, no space or `;` that would end the
/// directive and start another).
fn check_origins(origins: Option<Vec<String>>) -> Result<Option<Vec<String>>, ApiError> {
    let Some(origins) = origins else {
        return Ok(None);
    };
    if origins.len() > 20 {
        return Err(ApiError::bad("embed_origins: at most 20 origins"));
    }
    for o in &origins {
        let rest = o
            .strip_prefix("https://")
            .or_else(|| o.strip_prefix("http://"));
        let ok = rest.is_some_and(|r| {
            let (host, port) = r.split_once(':').unwrap_or((r, "1"));
            let host = host.strip_prefix("*.").unwrap_or(host);
            !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
                && !port.is_empty()
                && port.len() <= 5
                && port.chars().all(|c| c.is_ascii_digit())
        });
        if !ok {
            return Err(ApiError::bad(format!(
                "embed_origins: {o:?} is not an origin (scheme://host[:port], e.g. https://club.example)"
            )));
        }
    }
    Ok(Some(origins))
}

/// An event key as given: checked, and blank taken as none.
fn check_event_key(key: Option<Option<String>>) -> Result<Option<Option<String>>, ApiError> {
    match key {
        Some(Some(k)) if k.trim().is_empty() => Ok(Some(None)),
        Some(Some(k)) => {
            let k = k.trim().to_string();
            relay_store::check_event_key(&k)
                .map_err(|e| ApiError::bad(format!("event_key: {e}")))?;
            Ok(Some(Some(k)))
        }
        other => Ok(other),
    }
}

pub async fn edit_tournament(
    _: Admin,
    State(store): State<Store>,
    State(standings): State<std::sync::Arc<super::standings::StandingsCache>>,
    State(publisher): State<Publisher>,
    Path(id): Path<TournamentId>,
    JsonBody(b, raw): JsonBody<TournamentBody>,
) -> Result<Json<TournamentInfo>, ApiError> {
    check_text("name", b.name.as_deref(), 200)?;
    check_delay(b.delay_secs)?;
    if let Some(tc) = &b.time_control {
        check_time_control(tc.as_deref())?;
    }
    let ranking = if b.ranks() {
        Some(b.ranking(store.ranking_terms(id).await?)?)
    } else {
        None
    };
    let patch = TournamentPatch {
        name: b.name,
        site: b.site,
        start_date: check_date("start_date", b.start_date)?,
        end_date: check_date("end_date", b.end_date)?,
        time_control: b.time_control,
        delay_secs: b.delay_secs,
        public_incidents: b.public_incidents,
        embed_origins: check_origins(b.embed_origins)?,
        event_key: check_event_key(b.event_key)?,
    };
    store.update_tournament(id, &patch).await?;
    if let Some(r) = &ranking {
        store.set_ranking_terms(id, r).await?;
    }
    // A delay or a ranking changed: the standings are computed again at the next request.
    standings.forget(id);
    let t = store.tournament(id).await?;
    // Rounds without a delay of their own take the tournament's.
    publisher.round_edited(t.rounds.iter().map(|r| {
        let secs = r.delay_secs.unwrap_or(t.delay_secs);
        (r.id, i64::from(secs) * 1000)
    }));
    store
        .audit(
            "arbiter",
            "edit_tournament",
            None,
            &String::from_utf8_lossy(&raw),
        )
        .await?;
    Ok(Json(t))
}
