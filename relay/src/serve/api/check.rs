//! Checks of what requests carry, shared by the handlers: dates, delays, text fields, time
//! controls, and moves played from a stored game's start. Each refusal names the field and
//! what it should be.

use super::error::ApiError;
use relay_store::{StoredGame, StoredMove, now_ms};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, EnPassantMode};

/// The most plies an uploaded game may have. The longest tournament game on record has 538;
/// a bound keeps one upload from costing the store and every spectator megabytes.
pub const MAX_PLIES: usize = 2_000;

/// Reads a field an edit may set, leave, or clear: absent is `None` (left as it is, with
/// `#[serde(default)]`), `null` is `Some(None)` (cleared), a value is `Some(Some(v))`. Plain
/// serde reads `null` as absent, so a documented "`null` clears it" did nothing.
pub fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}

/// A date as PGN writes it ("2026.11.23", with "??" for what is unknown) or as ISO 8601
/// ("2026-11-23"); stored in the ISO form.
pub fn check_date(
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

pub fn check_delay(d: Option<u32>) -> Result<(), ApiError> {
    match d {
        Some(d) if d > 3600 => Err(ApiError::bad("delay_secs must be between 0 and 3600")),
        _ => Ok(()),
    }
}

pub fn check_text(what: &str, v: Option<&str>, max: usize) -> Result<(), ApiError> {
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

pub fn check_time_control(tc: Option<&str>) -> Result<(), ApiError> {
    if let Some(tc) = tc
        && tc.parse::<relay_core::time_control::TimeControl>().is_err()
    {
        return Err(ApiError::bad(format!(
            "time_control {tc:?} is not a PGN TimeControl (e.g. \"5400+30\" or \"40/5400+30:1800+30\")"
        )));
    }
    Ok(())
}

/// Where a stored game starts.
pub fn start_position(g: &StoredGame) -> Result<Chess, ApiError> {
    g.start_position()
        .ok_or_else(|| ApiError::Conflict("the game's start position is damaged".into()))
}

/// `mv` played in `pos`, as the store keeps it; clocks and the time it was accepted come
/// from `from`, the move it stands in for, if any.
pub fn stored_move(
    pos: &mut Chess,
    mv: shakmaty::Move,
    ply: u32,
    mode: CastlingMode,
    from: Option<&StoredMove>,
) -> StoredMove {
    let san = SanPlus::from_move_and_play_unchecked(pos, mv);
    StoredMove {
        ply,
        san: san.to_string(),
        uci: mv.to_uci(mode).to_string(),
        clk_ms: from.and_then(|m| m.clk_ms),
        emt_ms: from.and_then(|m| m.emt_ms),
        accepted_at_ms: from.map_or_else(now_ms, |m| m.accepted_at_ms),
        fen_after: Fen::from_position(pos, EnPassantMode::Legal).to_string(),
    }
}
