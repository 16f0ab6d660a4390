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
    page!("standings.html"),
    page!("player.html"),
    page!("team.html"),
    page!("console.html"),
    page!("enter.html"),
    page!("style.css"),
    page!("js/api.js"),
    page!("js/board.js"),
    page!("js/eval.js"),
    page!("js/format.js"),
    page!("js/ground.js"),
    page!("js/round.js"),
    page!("js/game.js"),
    page!("js/flags.js"),
    page!("js/tournament.js"),
    page!("js/spoiler.js"),
    page!("js/standings.js"),
    page!("js/crosstable.js"),
    page!("js/player.js"),
    page!("js/team.js"),
    page!("js/console.js"),
    page!("js/enter.js"),
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
    page!("js/console/tiebreaks.js"),
    page!("embed/game.html"),
    page!("embed/round.html"),
    page!("embed/embed.css"),
    page!("embed/embed.js"),
    page!("embed/relay-board.js"),
    // The rules of chess for the move-entry page: chessops, bundled (vendor/chessops/README.md).
    page!("vendor/chessops/chessops.min.js"),
    // lichess.org's chessground, as its npm package ships it (vendor/chessground/README.md).
    page!("vendor/chessground/chessground.min.js"),
    page!("vendor/chessground/chessground.base.css"),
    page!("vendor/chessground/chessground.brown.css"),
    page!("vendor/chessground/chessground.cburnett.css"),
    page!("vendor/chessground/LICENSE"),
    // lipis's flag-icons (vendor/flags/README.md): its licence here, its flags in `FLAGS`.
    page!("vendor/flags/LICENSE"),
];

/// Where the flags are served: `vendor/flags/{name}.svg`.
const FLAG_DIR: &str = "vendor/flags/";

macro_rules! flags {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../../web/vendor/flags/", $name, ".svg")))),*]
    };
}

/// The federations' flags, by file name without `.svg`, sorted (looked up by binary search:
/// a standings page asks for dozens). One for each federation `web/js/flags.js` knows.
const FLAGS: &[(&str, &str)] = flags![
    "ad", "ae", "af", "ag", "al", "am", "ao", "ar", "as", "at", "au", "aw", "az", "ba", "bb", "bd",
    "be", "bf", "bg", "bh", "bi", "bj", "bm", "bn", "bo", "br", "bs", "bt", "bw", "by", "bz", "ca",
    "cd", "cf", "cg", "ch", "ci", "ck", "cl", "cm", "cn", "co", "cr", "cu", "cv", "cw", "cy", "cz",
    "de", "dj", "dk", "dm", "do", "dz", "ec", "ee", "eg", "er", "es", "et", "fi", "fj", "fm", "fo",
    "fr", "ga", "gb-eng", "gb-sct", "gb-wls", "gd", "ge", "gg", "gh", "gm", "gn", "gq", "gr", "gt",
    "gu", "gw", "gy", "hk", "hn", "hr", "ht", "hu", "id", "ie", "il", "im", "in", "iq", "ir", "is",
    "it", "je", "jm", "jo", "jp", "ke", "kg", "kh", "ki", "km", "kn", "kr", "kw", "ky", "kz", "la",
    "lb", "lc", "li", "lk", "lr", "ls", "lt", "lu", "lv", "ly", "ma", "mc", "md", "me", "mg", "mh",
    "mk", "ml", "mm", "mn", "mo", "mr", "mt", "mu", "mv", "mw", "mx", "my", "mz", "na", "ne", "ng",
    "ni", "nl", "no", "np", "nr", "nz", "om", "pa", "pe", "pg", "ph", "pk", "pl", "pr", "ps", "pt",
    "pw", "py", "qa", "ro", "rs", "ru", "rw", "sa", "sb", "sc", "sd", "se", "sg", "si", "sk", "sl",
    "sm", "sn", "so", "sr", "ss", "st", "sv", "sy", "sz", "td", "tg", "th", "tj", "tl", "tm", "tn",
    "to", "tr", "tt", "tv", "tw", "tz", "ua", "ug", "us", "uy", "uz", "vc", "ve", "vg", "vi", "vn",
    "vu", "ws", "xk", "ye", "za", "zm", "zw",
];

/// A flag's built-in SVG by its path (`vendor/flags/de.svg`).
fn flag(rel: &str) -> Option<&'static str> {
    let name = rel.strip_prefix(FLAG_DIR)?.strip_suffix(".svg")?;
    let i = FLAGS.binary_search_by(|(n, _)| n.cmp(&name)).ok()?;
    Some(FLAGS[i].1)
}

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
    // Only names from the lists: no path from a request ever reaches the file system as is.
    let (built_in, cache) = if let Some((_, text)) = PAGES.iter().find(|(p, _)| *p == rel) {
        (*text, "no-cache")
    } else if let Some(text) = flag(rel) {
        // A flag never changes within a release; a week spares a standings page's dozens of
        // requests on every visit.
        (text, "public, max-age=604800")
    } else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    let text = dir
        .and_then(|d| std::fs::read_to_string(d.join(rel)).ok())
        .unwrap_or_else(|| built_in.to_string());
    let mut r = text.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(rel)),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    r
}

/// A player's photo from the organiser's folder (`--photos-dir`): only a plain file name of
/// letters, digits, `.`, `-` and `_` ending in `.jpg`, `.jpeg`, `.png` or `.webp`, so no
/// request reaches another file; 404 otherwise or when there is none.
pub async fn photo(dir: PathBuf, name: String) -> Response {
    let kind = match name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()) {
        Some(e) if e == "jpg" || e == "jpeg" => "image/jpeg",
        Some(e) if e == "png" => "image/png",
        Some(e) if e == "webp" => "image/webp",
        _ => return (StatusCode::NOT_FOUND, "not found").into_response(),
    };
    let plain = !name.starts_with('.')
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !plain {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    }
    match tokio::fs::read(dir.join(&name)).await {
        Ok(bytes) => {
            let mut r = bytes.into_response();
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
            r.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=86400"),
            );
            r
        }
        Err(_) => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
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
    use super::{FLAG_DIR, FLAGS, PAGES, serve};
    use axum::http::{StatusCode, header};
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

    /// Every flag in `web/vendor/flags/` is built in, the list is sorted (it is searched), and
    /// a flag is served as an SVG that may be cached; a name not on the list is not.
    #[test]
    fn every_flag_is_built_in_and_served() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/vendor/flags");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                name.strip_suffix(".svg").map(str::to_string)
            })
            .collect();
        files.sort();
        let listed: Vec<String> = FLAGS.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(files, listed, "web/vendor/flags and FLAGS differ");
        assert!(
            FLAGS.windows(2).all(|w| w[0].0 < w[1].0),
            "FLAGS is not sorted"
        );

        let r = serve(None, &format!("/{FLAG_DIR}gb-eng.svg"));
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()[header::CONTENT_TYPE], "image/svg+xml");
        assert!(
            r.headers()[header::CACHE_CONTROL]
                .to_str()
                .is_ok_and(|v| v.contains("max-age"))
        );
        for missing in [
            "vendor/flags/zz.svg",
            "vendor/flags/../index.html",
            "vendor/flags/de",
        ] {
            assert_eq!(
                serve(None, missing).status(),
                StatusCode::NOT_FOUND,
                "{missing}"
            );
        }
    }
}
