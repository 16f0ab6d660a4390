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

/// The tournament an embed page shows, from the `id` in its query; `None` when there is no
/// such game or round (the page says so itself).
async fn tournament_of(store: &Store, which: Embed, uri: &Uri) -> Option<i64> {
    let id: i64 = uri
        .query()?
        .split('&')
        .find_map(|kv| kv.strip_prefix("id="))?
        .parse()
        .ok()?;
    let round = match which {
        Embed::Game => store.game(id).await.ok()?.round_id,
        Embed::Round => id,
    };
    Some(store.round(round).await.ok()?.tournament_id)
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
    let origins = match tournament_of(&store, which, &uri).await {
        Some(t) => store
            .tournament(t)
            .await
            .map(|t| t.embed_origins)
            .unwrap_or_default(),
        None => Vec::new(),
    };
    // The origins were checked when they were set (scheme, host, port: nothing that ends
    // the directive); one that still does not make a header value leaves only 'self'.
    let policy = format!("frame-ancestors 'self' {}", origins.join(" "));
    let value = HeaderValue::from_str(policy.trim_end())
        .unwrap_or_else(|_| HeaderValue::from_static("frame-ancestors 'self'"));
    r.headers_mut()
        .insert(header::CONTENT_SECURITY_POLICY, value);
    r
}
