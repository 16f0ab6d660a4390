//! Every refusal the HTTP interface gives, and the one place each gets its status: an answer
//! is the status and `{"error": "..."}` with a message naming the problem. Store faults are
//! logged here and answered without their detail.

use crate::serve::feeds::SnapshotError;
use crate::serve::id::{BadBoardNo, BadId};
use crate::serve::jobs::Refusal;
use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use relay_store::StoreError;
use schemars::JsonSchema;
use serde::Serialize;

/// Why a request was not done. The variants with a message say what was wrong with this
/// request; the others are refusals worded the same wherever they are given.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request is malformed or asks for something impossible.
    #[error("{0}")]
    Bad(String),
    /// 404: what the request names is not there.
    #[error("{0}")]
    NotFound(String),
    /// 409: the request clashes with the state it would change.
    #[error("{0}")]
    Conflict(String),
    /// 413: more than is taken in one request.
    #[error("{0}")]
    TooLarge(String),
    /// 422: understood, but what was asked for cannot be written that way.
    #[error("{0}")]
    Unprocessable(String),
    /// 500: a fault of the relay's own.
    #[error("{0}")]
    Internal(String),
    /// 503: a part the request needs is not answering.
    #[error("{0}")]
    Unavailable(String),
    /// 401: an arbiter's action without the admin token.
    #[error("this action needs the admin token (Authorization: Bearer TOKEN)")]
    NeedsAdmin,
    /// 403: a Bearer token that is not the admin token.
    #[error("wrong admin token")]
    WrongAdminToken,
    /// 503: an arbiter's action on a relay started without an admin token.
    #[error(
        "arbiter actions are switched off: no admin token is configured (start relay serve with --admin-token or RELAY_ADMIN_TOKEN)"
    )]
    AdminOff,
    /// 401: a push without a token.
    #[error("a push needs the push token (Authorization: Bearer TOKEN)")]
    NeedsPushToken,
    /// 403: a push with a token that is not the push token.
    #[error("wrong push token")]
    WrongPushToken,
    /// 403: a push to a relay that takes none.
    #[error("this relay takes no pushes (start it with --accept-push-token)")]
    PushesOff,
    /// 401: an evaluation worker without a token.
    #[error("an evaluation worker needs the evaluation token (Authorization: Bearer TOKEN)")]
    NeedsEvalToken,
    /// 403: a worker's token that is not the evaluation token.
    #[error("wrong evaluation token")]
    WrongEvalToken,
    /// 403: a worker asking a relay that takes none.
    #[error("this relay takes no evaluation workers (start it with --eval-token)")]
    EvalOff,
    /// 401: a move typed without a token.
    #[error(
        "entering moves needs an operator token or the admin token (Authorization: Bearer TOKEN)"
    )]
    NeedsOperator,
    /// 403: an operator token the admin token did not sign (or no longer signs).
    #[error("wrong operator token: it is not one this relay's arbiters handed out")]
    WrongOperatorToken,
    /// 403: an operator's token for other boards than the game's.
    #[error("{0}")]
    NotYourBoard(String),
    /// 503: the database did not answer (the detail is in the log).
    #[error("the database is not available; try again")]
    StoreDown,
    /// 503: the service is stopping and takes no more work.
    #[error("shutting down")]
    ShuttingDown,
}

impl ApiError {
    pub fn bad(msg: impl Into<String>) -> ApiError {
        ApiError::Bad(msg.into())
    }

    /// The status each refusal is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Bad(_) => StatusCode::BAD_REQUEST,
            ApiError::NeedsAdmin
            | ApiError::NeedsPushToken
            | ApiError::NeedsEvalToken
            | ApiError::NeedsOperator => StatusCode::UNAUTHORIZED,
            ApiError::WrongOperatorToken | ApiError::NotYourBoard(_) => StatusCode::FORBIDDEN,
            ApiError::WrongAdminToken
            | ApiError::WrongPushToken
            | ApiError::PushesOff
            | ApiError::WrongEvalToken
            | ApiError::EvalOff => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Unavailable(_)
            | ApiError::AdminOff
            | ApiError::StoreDown
            | ApiError::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

/// The body of every refusal.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorBody {
    /// What was wrong, in words.
    pub error: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = ErrorBody {
            error: self.to_string(),
        };
        let mut r = (status, Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

impl From<Refusal> for ApiError {
    fn from(e: Refusal) -> ApiError {
        match e {
            Refusal::NotFound(m) => ApiError::NotFound(m),
            Refusal::Conflict(m) => ApiError::Conflict(m),
            Refusal::Store(m) => {
                tracing::warn!(error = %m, "store error answering an arbiter's action");
                ApiError::StoreDown
            }
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::NotFound { .. } => ApiError::NotFound(e.to_string()),
            StoreError::Conflict(m) => ApiError::Conflict(m),
            other => {
                tracing::warn!(error = %other, "store error answering a request");
                ApiError::StoreDown
            }
        }
    }
}

impl From<SnapshotError> for ApiError {
    fn from(e: SnapshotError) -> ApiError {
        match e {
            SnapshotError::Store(e) => e.into(),
            SnapshotError::NotInRound { .. } => ApiError::NotFound(e.to_string()),
            SnapshotError::NotReady => ApiError::Bad(e.to_string()),
        }
    }
}

/// An id in a URL that names nothing is an unknown id, as one the store does not have.
impl From<BadId> for ApiError {
    fn from(e: BadId) -> ApiError {
        ApiError::NotFound(format!("{} {:?} not found", e.what, e.given))
    }
}

impl From<BadBoardNo> for ApiError {
    fn from(e: BadBoardNo) -> ApiError {
        ApiError::Bad(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn check(e: ApiError, status: u16, error: &str) {
        let r = e.into_response();
        assert_eq!(r.status().as_u16(), status, "{error}");
        let www = r.headers().get(header::WWW_AUTHENTICATE);
        assert_eq!(www.is_some(), status == 401, "{error}");
        let body = axum::body::to_bytes(r.into_body(), 1 << 16)
            .await
            .expect("body");
        let v: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(v, serde_json::json!({ "error": error }));
    }

    #[tokio::test]
    async fn the_writers_and_the_halls_refusals_keep_their_kind() {
        let gone = relay_store::StoreError::NotFound {
            what: "game",
            id: "7".into(),
        };
        check(Refusal::from(gone).into(), 404, "game 7 not found").await;
        let clash = relay_store::StoreError::Conflict("edited meanwhile".into());
        check(Refusal::from(clash).into(), 409, "edited meanwhile").await;
        check(
            Refusal::NotFound("e-board 9".into()).into(),
            404,
            "e-board 9",
        )
        .await;
    }

    #[tokio::test]
    async fn each_refusal_has_its_status_and_words() {
        check(ApiError::bad("no"), 400, "no").await;
        check(
            ApiError::NeedsAdmin,
            401,
            "this action needs the admin token (Authorization: Bearer TOKEN)",
        )
        .await;
        check(ApiError::WrongAdminToken, 403, "wrong admin token").await;
        check(
            ApiError::PushesOff,
            403,
            "this relay takes no pushes (start it with --accept-push-token)",
        )
        .await;
        check(
            ApiError::NeedsPushToken,
            401,
            "a push needs the push token (Authorization: Bearer TOKEN)",
        )
        .await;
        check(
            ApiError::StoreDown,
            503,
            "the database is not available; try again",
        )
        .await;
        check(ApiError::ShuttingDown, 503, "shutting down").await;
        let id = "x".parse::<crate::serve::id::GameId>().expect_err("no id");
        check(id.into(), 404, "game \"x\" not found").await;
        check(BadBoardNo.into(), 400, "board number must be 1..=10000").await;
        check(ApiError::Unprocessable("no CBF".into()), 422, "no CBF").await;
    }
}
