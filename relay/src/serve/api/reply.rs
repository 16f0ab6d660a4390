//! Waiting for the answer to an arbiter's action handed to the writer or the hall: they
//! alone change games, and say when it is committed (or why not).

use super::error::ApiError;
use crate::serve::jobs::Refusal;
use std::time::Duration;
use tokio::sync::oneshot;

/// What the writer or the hall answers with, within 15 s: a refusal has its kind's status
/// (see `From<Refusal> for ApiError`), no answer 503 (the change stays queued for the
/// database).
pub async fn wait_reply<T>(rx: oneshot::Receiver<Result<T, Refusal>>) -> Result<T, ApiError> {
    match tokio::time::timeout(Duration::from_secs(15), rx).await {
        Ok(Ok(Ok(v))) => Ok(v),
        Ok(Ok(Err(e))) => Err(e.into()),
        Ok(Err(_)) => Err(ApiError::ShuttingDown),
        Err(_) => Err(ApiError::Unavailable(
            "the database is not answering; the change is queued and will be stored when it is back".into(),
        )),
    }
}
