//! The boards organisers show on their own sites (`/embed/game.html?id=G`,
//! `/embed/round.html?id=R`): the page files as any other, with a `Content-Security-Policy`
//! whose `frame-ancestors` names the origins the game's tournament lists (`embed_origins`),
//! so a browser shows them in frames of those sites (and this relay's own pages) only. What
//! they show is what every spectator sees: the public routes, with the delay.

use crate::serve::pages;
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::Response;
use relay_store::Store;
use std::path::PathBuf;

/// Which embed page.
#[derive(Clone, Copy, Debug)]
pub enum Embed {
    Game,
    Round,
}

/// The origins that may frame the embed page asked for, by the `id` in its query; none when
/// there is no such game or round (the page says so itself) or the store does not answer.
async fn origins(store: &Store, which: Embed, uri: &Uri) -> Vec<String> {
    let id: Option<i64> = uri
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("id=")))
        .and_then(|v| v.parse().ok());
    let Some(id) = id else {
        return Vec::new();
    };
    let found = match which {
        Embed::Game => store.embed_origins(None, Some(id)).await,
        Embed::Round => store.embed_origins(Some(id), None).await,
    };
    found.unwrap_or_default()
}

/// The page, allowed in frames of the tournament's listed origins.
pub async fn page(store: Store, web_dir: Option<PathBuf>, which: Embed, uri: Uri) -> Response {
    let name = match which {
        Embed::Game => "/embed/game.html",
        Embed::Round => "/embed/round.html",
    };
    let mut r = pages::serve(web_dir.as_ref(), name);
    if r.status() != StatusCode::OK {
        return r;
    }
    let origins = origins(&store, which, &uri).await;
    // The origins were checked when they were set (scheme, host, port: nothing that ends
    // the directive); one that still does not make a header value leaves only 'self'.
    let policy = format!("frame-ancestors 'self' {}", origins.join(" "));
    let value = HeaderValue::from_str(policy.trim_end())
        .unwrap_or_else(|_| HeaderValue::from_static("frame-ancestors 'self'"));
    r.headers_mut()
        .insert(header::CONTENT_SECURITY_POLICY, value);
    r
}
