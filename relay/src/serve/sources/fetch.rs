//! One conditional GET of a source's PGN, off the async threads: `If-None-Match` and
//! `If-Modified-Since` from the last answer, so an unchanged file costs the source a 304.

use std::time::Duration;

/// The longest a poll may take, connection and body together.
const TIMEOUT: Duration = Duration::from_secs(20);
/// The largest PGN taken from a source (a round of 500 long games is far below it).
const MOST_BYTES: u64 = 32 * 1024 * 1024;

/// What the last full answer said of its version.
#[derive(Clone, Debug, Default)]
pub struct Validators {
    etag: Option<String>,
    last_modified: Option<String>,
}

#[derive(Debug)]
pub enum Fetched {
    /// 304: nothing new.
    Unchanged,
    /// The PGN, and what to ask with next time.
    Body {
        text: String,
        validators: Validators,
    },
}

/// GETs `url`; an error in words (no answer, a status other than 200 and 304, a body that is
/// not text).
pub fn fetch(url: &str, since: &Validators) -> Result<Fetched, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into();
    let mut req = agent.get(url).header(
        "User-Agent",
        &format!("relay/{} (DGT live relay)", env!("CARGO_PKG_VERSION")),
    );
    if let Some(tag) = &since.etag {
        req = req.header("If-None-Match", tag);
    }
    if let Some(at) = &since.last_modified {
        req = req.header("If-Modified-Since", at);
    }
    let mut resp = req.call().map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    if status == 304 {
        return Ok(Fetched::Unchanged);
    }
    if status != 200 {
        return Err(format!("answered {status}"));
    }
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let validators = Validators {
        etag: header("etag"),
        last_modified: header("last-modified"),
    };
    let bytes = resp
        .body_mut()
        .with_config()
        .limit(MOST_BYTES)
        .read_to_vec()
        .map_err(|e| format!("the body could not be read: {e}"))?;
    // Files are UTF-8 or, from older programs, Latin-1 (the core's one guess).
    let text = relay_core::pgn::decode_pgn_bytes(&bytes).into_owned();
    Ok(Fetched::Body { text, validators })
}
