//! The spectator and arbiter pages from `web/`: built into the binary (so an installed relay
//! needs no files beside it), or read from a directory given with `--web-dir` (for editing
//! the pages without rebuilding).

use axum::body::Body;
use axum::http::{HeaderValue, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::convert::Infallible;
use std::path::PathBuf;

macro_rules! page {
    ($path:literal) => {
        ($path, include_str!(concat!("../../../web/", $path)))
    };
}

/// Every page file, as built in.
const PAGES: &[(&str, &str)] = &[
    page!("index.html"),
    page!("round.html"),
    page!("game.html"),
    page!("console.html"),
    page!("style.css"),
    page!("js/api.js"),
    page!("js/board.js"),
    page!("js/eval.js"),
    page!("js/format.js"),
    page!("js/ground.js"),
    page!("js/round.js"),
    page!("js/game.js"),
    page!("js/console.js"),
    page!("js/console/alerts.js"),
    page!("js/console/eboard-actions.js"),
    page!("js/console/eboards.js"),
    page!("js/console/game-actions.js"),
    page!("js/console/games.js"),
    page!("js/console/illegal.js"),
    page!("js/console/page.js"),
    page!("js/console/push.js"),
    page!("js/console/round.js"),
    page!("js/console/settings.js"),
    page!("js/console/state.js"),
    page!("embed/game.html"),
    page!("embed/round.html"),
    page!("embed/embed.css"),
    page!("embed/embed.js"),
    page!("embed/relay-board.js"),
    // lichess.org's chessground, as its npm package ships it (vendor/chessground/README.md).
    page!("vendor/chessground/chessground.min.js"),
    page!("vendor/chessground/chessground.base.css"),
    page!("vendor/chessground/chessground.brown.css"),
    page!("vendor/chessground/chessground.cburnett.css"),
    page!("vendor/chessground/LICENSE"),
];

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        // A licence or notice file, named without an extension.
        _ if !path.rsplit('/').next().unwrap_or(path).contains('.') => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// One page file by its path (`/embed/game.html`), or 404 for a name not on the list.
pub fn serve(dir: Option<&PathBuf>, uri_path: &str) -> Response {
    let rel = uri_path.trim_start_matches('/');
    let rel = if rel.is_empty() { "index.html" } else { rel };
    // Only names from the list: no path from a request ever reaches the file system as is.
    let Some((name, built_in)) = PAGES.iter().find(|(p, _)| *p == rel) else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    let text = dir
        .and_then(|d| std::fs::read_to_string(d.join(name)).ok())
        .unwrap_or_else(|| (*built_in).to_string());
    let mut r = text.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(name)),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// A service answering page requests (the router's fallback).
pub fn service(
    dir: Option<PathBuf>,
) -> impl tower::Service<
    Request<Body>,
    Response = Response,
    Error = Infallible,
    Future = std::future::Ready<Result<Response, Infallible>>,
> + Clone {
    tower::service_fn(move |req: Request<Body>| {
        std::future::ready(Ok(serve(dir.as_ref(), req.uri().path())))
    })
}

#[cfg(test)]
mod tests {
    use super::PAGES;
    use std::path::Path;

    /// Every page, script and style sheet in `web/` (not its node tooling) is built in: a
    /// module left off the list is a 404 in the installed relay, and every page importing it
    /// breaks, while `--web-dir` would hide it.
    #[test]
    fn every_file_of_the_pages_is_built_in() {
        fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for e in entries.flatten() {
                let p = e.path();
                let name = e.file_name().to_string_lossy().to_string();
                if p.is_dir() {
                    if name != "node_modules" && name != "types" {
                        walk(&p, base, out);
                    }
                } else if ["html", "css", "js"]
                    .iter()
                    .any(|ext| name.ends_with(&format!(".{ext}")))
                {
                    let rel = p.strip_prefix(base).unwrap_or(&p);
                    out.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
        let mut files = Vec::new();
        walk(&web, &web, &mut files);
        assert!(!files.is_empty(), "no pages found in {}", web.display());
        let missing: Vec<&String> = files
            .iter()
            .filter(|f| !PAGES.iter().any(|(p, _)| p == f))
            .collect();
        assert!(missing.is_empty(), "not built in: {missing:?}");
    }
}
