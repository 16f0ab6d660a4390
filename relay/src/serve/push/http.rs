//! The one HTTP call a pusher makes: a POST with a Bearer token. ureq blocks, so the call runs
//! on tokio's blocking threads; a pusher sends one request at a time, so that costs one such
//! thread per target at most.

use std::time::Duration;

/// How long a request may take.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// An answer's body is read up to this many bytes (a cloud's or Lichess's answer is small).
const ANSWER_LIMIT: u64 = 4 << 20;

/// A request to a push target.
#[derive(Clone, Debug)]
pub struct Post {
    pub url: String,
    /// Sent as `Authorization: Bearer`; never logged.
    pub token: String,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

/// What a push target answered: its status and body.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub text: String,
}

impl Reply {
    /// The `error` of a JSON error answer, else the body as it came.
    pub fn error(self) -> String {
        serde_json::from_str::<serde_json::Value>(&self.text)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or(self.text)
    }
}

/// Why a request got no answer at all (the address, the network, TLS, the time running out),
/// in words for the console; an answer of any status is a [`Reply`], not this.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unanswered(pub String);

/// Sends `post` and waits for the answer, off the async threads. Every status is an answer;
/// only a failed exchange is an error (why, in words).
pub async fn send(post: Post) -> Result<Reply, Unanswered> {
    tokio::task::spawn_blocking(move || blocking(&post))
        .await
        .unwrap_or_else(|e| Err(Unanswered(e.to_string())))
}

fn blocking(post: &Post) -> Result<Reply, Unanswered> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into();
    let mut resp = agent
        .post(&post.url)
        .header("Authorization", &format!("Bearer {}", post.token))
        .header("Content-Type", post.content_type)
        .header(
            "User-Agent",
            &format!("relay/{} (DGT live relay)", env!("CARGO_PKG_VERSION")),
        )
        .send(&post.body[..])
        .map_err(|e| Unanswered(e.to_string()))?;
    let status = resp.status().as_u16();
    let text = resp
        .body_mut()
        .with_config()
        .limit(ANSWER_LIMIT)
        .read_to_string()
        .unwrap_or_default();
    Ok(Reply { status, text })
}
