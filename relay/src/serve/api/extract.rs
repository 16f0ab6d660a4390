//! What a request is made of, read once for every handler: the ids in its path, who is asking
//! (the admin token or the push token, compared in constant time), its JSON body and its
//! query. Each refuses a request the way the interface always has, so handlers start from
//! values that are already right.

use super::error::ApiError;
use super::operator_token::{Grant, is_operator_token, verify};
use crate::serve::id::{BoardNo, GameId, RoundId, Serial, TournamentId};
use crate::serve::service::Tokens;
use axum::body::Bytes;
use axum::extract::{FromRef, FromRequest, FromRequestParts, Request};
use axum::http::{HeaderMap, header, request};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use subtle::ConstantTimeEq;

/// Largest request body (a tournament's PGN fits easily).
pub const MAX_BODY: usize = 8 * 1024 * 1024;

/// A value one segment of a URL's path names.
pub trait Segment: Sized {
    fn from_segment(s: &str) -> Result<Self, ApiError>;
}

/// An id that is no positive number names nothing: 404, as for an id the store lacks.
macro_rules! id_segment {
    ($($t:ty),*) => {$(
        impl Segment for $t {
            fn from_segment(s: &str) -> Result<Self, ApiError> {
                s.parse::<$t>().map_err(ApiError::from)
            }
        }
    )*};
}

id_segment!(TournamentId, RoundId, GameId, BoardNo);

impl Segment for Serial {
    fn from_segment(s: &str) -> Result<Self, ApiError> {
        match s.parse::<Serial>() {
            Ok(serial) => Ok(serial),
            Err(never) => match never {},
        }
    }
}

/// A round's PGN source by its number (`/api/rounds/{id}/sources/{source}`).
#[derive(Clone, Copy, Debug)]
pub struct SourceNo(pub i64);

impl Segment for SourceNo {
    fn from_segment(s: &str) -> Result<Self, ApiError> {
        s.parse::<i64>()
            .ok()
            .filter(|n| *n > 0)
            .map(SourceNo)
            .ok_or_else(|| ApiError::NotFound(format!("no source {s:?}")))
    }
}

/// The values a route's path names, in order: one, or two for a board of a round.
pub trait FromPath: Sized {
    fn from_path(segments: &[String]) -> Result<Self, ApiError>;
}

/// A route's path parameters that are not the ones its handler reads: the route table and the
/// handler disagree, a fault of the relay's.
fn misrouted(segments: &[String]) -> ApiError {
    ApiError::Internal(format!(
        "the route has {} path parameters, not what its handler reads",
        segments.len()
    ))
}

impl<T: Segment> FromPath for T {
    fn from_path(segments: &[String]) -> Result<Self, ApiError> {
        match segments {
            [one] => T::from_segment(one),
            _ => Err(misrouted(segments)),
        }
    }
}

impl<A: Segment, B: Segment> FromPath for (A, B) {
    fn from_path(segments: &[String]) -> Result<Self, ApiError> {
        match segments {
            // In order: an unknown round is 404 before a bad board number is 400.
            [a, b] => Ok((A::from_segment(a)?, B::from_segment(b)?)),
            _ => Err(misrouted(segments)),
        }
    }
}

/// The values in a request's path, as this crate's types (`Path<GameId>`,
/// `Path<(RoundId, BoardNo)>`). A path that does not decode (invalid UTF-8) gets axum's own
/// answer, as it always has.
#[derive(Debug)]
pub struct Path<T>(pub T);

impl<S: Send + Sync, T: FromPath> FromRequestParts<S> for Path<T> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut request::Parts, state: &S) -> Result<Self, Response> {
        let axum::extract::Path(segments) =
            axum::extract::Path::<Vec<String>>::from_request_parts(parts, state)
                .await
                .map_err(IntoResponse::into_response)?;
        T::from_path(&segments)
            .map(Path)
            .map_err(IntoResponse::into_response)
    }
}

/// The request's Bearer token, if it has one. Only a Bearer token counts: other schemes (a
/// proxy's Basic auth) are not meant for the relay.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

fn same(given: &str, expected: &str) -> bool {
    bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
}

/// Who reads: the public (no Bearer token), or an arbiter (the admin token), who sees live
/// data where the public gets the broadcast delay. A wrong token is refused (403), never
/// taken for the public; a token on a relay without an admin token is refused (503).
#[derive(Clone, Copy, Debug)]
pub struct Reader {
    pub arbiter: bool,
}

impl Reader {
    fn of(tokens: &Tokens, headers: &HeaderMap) -> Result<Reader, ApiError> {
        let Some(given) = bearer(headers) else {
            return Ok(Reader { arbiter: false });
        };
        let Some(expected) = tokens.admin() else {
            return Err(ApiError::AdminOff);
        };
        if same(given, expected) {
            Ok(Reader { arbiter: true })
        } else {
            Err(ApiError::WrongAdminToken)
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Reader
where
    Tokens: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut request::Parts, state: &S) -> Result<Self, ApiError> {
        Reader::of(&Tokens::from_ref(state), &parts.headers)
    }
}

/// An arbiter's request: it carries the admin token. Refused with 503 on a relay started
/// without one, 401 without a Bearer token (with `WWW-Authenticate`), 403 with another.
#[derive(Clone, Copy, Debug)]
pub struct Admin;

impl<S: Send + Sync> FromRequestParts<S> for Admin
where
    Tokens: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut request::Parts, state: &S) -> Result<Self, ApiError> {
        match (Tokens::from_ref(state).admin(), bearer(&parts.headers)) {
            (None, _) => Err(ApiError::AdminOff),
            (Some(_), None) => Err(ApiError::NeedsAdmin),
            (Some(expected), Some(given)) if same(given, expected) => Ok(Admin),
            (Some(_), Some(_)) => Err(ApiError::WrongAdminToken),
        }
    }
}

/// Who enters moves for a board without an e-board: an arbiter (the admin token: any board)
/// or an operator (a token an arbiter handed out for some boards of one round). 401 without a
/// token, 403 for one that is neither, 503 on a relay without an admin token (which signs the
/// operators' tokens too).
#[derive(Clone, Debug)]
pub enum Entrant {
    Arbiter,
    Operator(Grant),
}

impl Entrant {
    /// Refuses a game on a board this entrant was not given.
    pub fn may_enter(&self, round: RoundId, board_no: u32) -> Result<(), ApiError> {
        match self {
            Entrant::Arbiter => Ok(()),
            Entrant::Operator(g) if g.round == round && g.boards.contains(&board_no) => Ok(()),
            Entrant::Operator(g) => {
                let boards: Vec<String> = g.boards.iter().map(u32::to_string).collect();
                Err(ApiError::NotYourBoard(format!(
                    "this operator token is for board(s) {} of round {}, not board {board_no} of round {round}",
                    boards.join(", "),
                    g.round
                )))
            }
        }
    }

    /// Who did it, for the log and the audit trail.
    pub fn actor(&self) -> &'static str {
        match self {
            Entrant::Arbiter => "arbiter",
            Entrant::Operator(_) => "operator",
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Entrant
where
    Tokens: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut request::Parts, state: &S) -> Result<Self, ApiError> {
        let tokens = Tokens::from_ref(state);
        let Some(admin) = tokens.admin() else {
            return Err(ApiError::AdminOff);
        };
        let Some(given) = bearer(&parts.headers) else {
            return Err(ApiError::NeedsOperator);
        };
        if same(given, admin) {
            return Ok(Entrant::Arbiter);
        }
        if is_operator_token(given) {
            return verify(admin, given)
                .map(Entrant::Operator)
                .ok_or(ApiError::WrongOperatorToken);
        }
        Err(ApiError::WrongOperatorToken)
    }
}

/// A venue relay's push: it carries this relay's push token (`--accept-push-token`), not the
/// admin token. 401 without a token, 403 for a wrong one and on a relay that takes no
/// pushes.
#[derive(Clone, Copy, Debug)]
pub struct Pusher;

impl<S: Send + Sync> FromRequestParts<S> for Pusher
where
    Tokens: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut request::Parts, state: &S) -> Result<Self, ApiError> {
        let Some(given) = bearer(&parts.headers) else {
            return Err(ApiError::NeedsPushToken);
        };
        match Tokens::from_ref(state).push() {
            None => Err(ApiError::PushesOff),
            Some(expected) if same(given, expected) => Ok(Pusher),
            Some(_) => Err(ApiError::WrongPushToken),
        }
    }
}

/// An evaluation worker's request: it carries this relay's evaluation token (`--eval-token`),
/// never the admin token (a worker may run on a machine the arbiters do not control). 401
/// without a token, 403 for a wrong one and on a relay that takes no workers.
#[derive(Clone, Copy, Debug)]
pub struct EvalWorker;

impl<S: Send + Sync> FromRequestParts<S> for EvalWorker
where
    Tokens: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut request::Parts, state: &S) -> Result<Self, ApiError> {
        let Some(given) = bearer(&parts.headers) else {
            return Err(ApiError::NeedsEvalToken);
        };
        match Tokens::from_ref(state).eval() {
            None => Err(ApiError::EvalOff),
            Some(expected) if same(given, expected) => Ok(EvalWorker),
            Some(_) => Err(ApiError::WrongEvalToken),
        }
    }
}

/// A JSON body read as `T` (400 "malformed JSON: …", naming what did not fit), with the bytes
/// as sent, which the audit trail keeps. A body over [`MAX_BODY`] gets axum's 413, as it
/// always has.
#[derive(Debug)]
pub struct JsonBody<T>(pub T, pub Bytes);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Response> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        match json_of(&bytes) {
            Ok(v) => Ok(JsonBody(v, bytes)),
            Err(e) => Err(e.into_response()),
        }
    }
}

/// `body` read as JSON, for a handler that checks something else first or takes other forms
/// too.
pub fn json_of<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::bad(format!("malformed JSON: {e}")))
}

/// The query string read as `T` (400 "bad query: …").
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut request::Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(q)) => Ok(Query(q)),
            Err(e) => Err(ApiError::bad(format!("bad query: {e}"))),
        }
    }
}
