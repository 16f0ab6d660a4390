//! Who is asking: the admin token, checked in constant time.

use super::*;

/// The request's Bearer token, if it has one.
pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Whether the request carries the admin token. A wrong token is an error, not "public".
pub fn arbiter(shared: &Shared, headers: &HeaderMap) -> Result<bool, ApiError> {
    // Only a Bearer token counts: other schemes (a proxy's Basic auth) are public readers.
    let Some(given) = bearer(headers) else {
        return Ok(false);
    };
    let Some(expected) = shared.admin_token() else {
        return Err(no_token());
    };
    if bool::from(given.as_bytes().ct_eq(expected.as_bytes())) {
        Ok(true)
    } else {
        Err(ApiError(StatusCode::FORBIDDEN, "wrong admin token".into()))
    }
}

pub(super) fn no_token() -> ApiError {
    ApiError(
        StatusCode::SERVICE_UNAVAILABLE,
        "arbiter actions are switched off: no admin token is configured (start relay serve with --admin-token or RELAY_ADMIN_TOKEN)".into(),
    )
}

pub(super) fn require_admin(shared: &Shared, headers: &HeaderMap) -> Result<(), ApiError> {
    if shared.admin_token().is_none() {
        return Err(no_token());
    }
    if arbiter(shared, headers)? {
        Ok(())
    } else {
        Err(ApiError(
            StatusCode::UNAUTHORIZED,
            "this action needs the admin token (Authorization: Bearer TOKEN)".into(),
        ))
    }
}

/// The time public views of a round are cut at, or `None` for live data.
/// A failed delay lookup is an error, never live data.
pub async fn cutoff(
    shared: &Shared,
    round: &RoundInfo,
    arbiter: bool,
) -> Result<(Option<i64>, i64), ApiError> {
    let delay = shared.lookup.delay_ms(round).await?;
    Ok(if arbiter || delay == 0 {
        (None, delay)
    } else {
        (Some(now_ms() - delay), delay)
    })
}

pub fn parse_id(s: &str, what: &str) -> Result<i64, ApiError> {
    s.parse::<i64>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("{what} {s:?} not found")))
}

pub(super) fn body_json<T: for<'de> Deserialize<'de>>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::bad(format!("malformed JSON: {e}")))
}

pub(super) fn json_ok(v: Value) -> ApiResult {
    Ok(axum::Json(v).into_response())
}
