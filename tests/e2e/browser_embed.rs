//! The embeds on an organiser's site, in real headless Chromium: a page served from another
//! origin (a small HTTP server of the test's own, on another port) includes
//! `/embed/relay-board.js` from the relay and shows `<relay-board game=…>` and
//! `<relay-board round=…>`. With the site's origin in the tournament's `embed_origins`, the
//! frames show the boards live (the host page counts their messages, ply rising); without it,
//! the relay's `frame-ancestors` keeps the frames empty and no message comes.

use super::browser::{Browser, Service, TOKEN, blocking, browser_test, eventually, try_json};
use super::temp_dir;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

/// The key under which WebDriver hands back an element a script returned.
const W3C_ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A site on another origin: answers every request with `page` (HTML), on a thread, for as
/// long as the test process runs. Returns its origin (`http://127.0.0.1:PORT`).
fn host_site(page: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the host site");
    let origin = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().expect("address").port()
    );
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            // The request's head (nothing here has a body); what it asks does not matter.
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
                match stream.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                 Content-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    origin
}

/// The organiser's page: the script from the relay, a game's board and the round's boards,
/// and every message from the frames noted with its origin (what the test reads).
fn host_page(relay: &str, game: i64, round: i64) -> String {
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Chess club: live</title>
<script>
  window.relayMessages = [];
  window.addEventListener('message', (e) => {{
    if (e.data && e.data.relay === 'embed') window.relayMessages.push(Object.assign({{ origin: e.origin }}, e.data));
  }});
</script>
<script src="{relay}/embed/relay-board.js"></script>
<style>body {{ font-family: sans-serif; margin: 1rem; }} .row {{ display: flex; gap: 1rem; align-items: flex-start; }}</style>
</head><body>
<h1>Our club's games, live</h1>
<div class="row">
  <div style="width: 360px"><relay-board id="game" game="{game}" orientation="black"></relay-board></div>
  <div style="width: 560px"><relay-board id="round" round="{round}" theme="blue,dark"></relay-board></div>
</div>
</body></html>"#
    )
}

/// The frames' messages the host page has had so far.
async fn messages(b: &Browser) -> Vec<Value> {
    let v = b.js("return window.relayMessages || [];", vec![]).await;
    v.as_array().cloned().unwrap_or_default()
}

/// Sets the tournament's `embed_origins`.
fn set_origins(svc: &Service, tournament: i64, origins: &[&str]) {
    let body = json!({ "embed_origins": origins }).to_string();
    let answer = svc.admin(
        "PATCH",
        &format!("/api/tournaments/{tournament}"),
        Some(("application/json", body.as_bytes())),
    );
    assert_eq!(answer.status, 200, "PATCH embed_origins: {}", answer.text());
}

/// The `Content-Security-Policy` the relay sends with an embed page.
fn policy_of(url: &str) -> String {
    blocking(|| {
        let answer = super::service::agent()
            .get(url)
            .call()
            .expect("the embed page");
        answer
            .headers()
            .get("content-security-policy")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    })
}

#[test]
fn browser_embed_on_another_site_live_and_refused_when_not_listed() {
    browser_test("embed", || async {
        let dir = temp_dir("browser-embed");
        let svc = Service::demo(
            &dir,
            &[
                "--boards",
                "2",
                "--speed",
                "5",
                "--seed",
                "3",
                "--admin-token",
                TOKEN,
            ],
        );
        let round = eventually!(60, "round 1 with its games", async {
            let r = try_json(&svc.url("/api/rounds/1"))?;
            (r["games"].as_array()?.len() == 2).then_some(r)
        });
        let game = round["games"][0]["id"].as_i64().expect("game id");
        let tournament = round["tournament_id"].as_i64().expect("tournament id");
        let host = host_site(host_page(&svc.base, game, 1));
        assert_ne!(host, svc.base, "the site must be another origin");

        // Listed: the frames show the boards and follow the games.
        set_origins(&svc, tournament, &[&host]);
        let game_page = svc.url(&format!("/embed/game.html?id={game}"));
        let policy = policy_of(&game_page);
        println!("frame-ancestors with the site listed: {policy:?}");
        assert!(
            policy.contains("frame-ancestors") && policy.contains(&host),
            "the embed's policy does not name {host}: {policy:?}"
        );
        let b = Browser::start("embed").await;
        let opened = Instant::now();
        b.goto(&format!("{host}/")).await;
        let game_id = game.to_string();
        let first = eventually!(20, "the game's frame to say it shows the game", async {
            messages(&b)
                .await
                .into_iter()
                .find(|m| m["kind"] == "game" && m["id"] == game_id.as_str())
        });
        println!(
            "first message from the game's frame {} ms after opening the site: {first}",
            opened.elapsed().as_millis()
        );
        assert_eq!(first["origin"], svc.base, "{first}");
        eventually!(20, "the round's frame to say it shows the round", async {
            messages(&b)
                .await
                .into_iter()
                .find(|m| m["kind"] == "round" && m["id"] == "1")
        });
        // Live: the game's ply rises, message after message, as the board plays on.
        let rising = eventually!(90, "three moves to reach the frame", async {
            let plies: Vec<i64> = messages(&b)
                .await
                .iter()
                .filter(|m| m["kind"] == "game")
                .filter_map(|m| m["ply"].as_i64())
                .collect();
            let mut ups = Vec::new();
            for p in plies {
                if ups.last().is_none_or(|&l| p > l) {
                    ups.push(p);
                }
            }
            (ups.len() >= 4).then_some(ups)
        });
        println!("plies the game's frame told: {rising:?}");
        let api = try_json(&svc.url(&format!("/api/games/{game}"))).expect("the game");
        let api_ply = api["moves"].as_array().map_or(0, Vec::len) as i64;
        assert!(
            rising.last().is_some_and(|&p| p <= api_ply),
            "the frame told ply {rising:?}, the game has {api_ply}"
        );
        // The frame is as high as its content says, and shows a board with pieces.
        let sizes = b
            .js(
                "const f = (id) => document.getElementById(id).shadowRoot.querySelector('iframe').getBoundingClientRect();
                 return { game: [f('game').width, f('game').height], round: [f('round').width, f('round').height] };",
                vec![],
            )
            .await;
        println!("frames: {sizes}");
        let (w, h) = (
            sizes["game"][0].as_f64().unwrap_or(0.0),
            sizes["game"][1].as_f64().unwrap_or(0.0),
        );
        assert!(
            (w - 360.0).abs() < 1.0 && h > w && h < 1.25 * w,
            "the game's frame is {w}×{h} in a 360 px column: a board and two lines"
        );
        // Two boards abreast in 560 px: one row, not the 420 px the frame starts with.
        let round_h = sizes["round"][1].as_f64().unwrap_or(0.0);
        assert!(
            (150.0..400.0).contains(&round_h),
            "the round's frame is {round_h} px high for one row of boards"
        );
        let c = b.client();
        // The frame is in the element's shadow root: found by script, entered by reference.
        let frame = b
            .js(
                "return document.getElementById('game').shadowRoot.querySelector('iframe');",
                vec![],
            )
            .await;
        let frame_id = frame[W3C_ELEMENT]
            .as_str()
            .expect("a reference to the frame element")
            .to_string();
        fantoccini::elements::Element::from_element_id(c.clone(), frame_id.into())
            .enter_frame()
            .await
            .expect("into the game's frame");
        let inside = b
            .js(
                "const y = (c) => document.querySelector(`cg-board piece.king.${c}`).getBoundingClientRect().top;
                 return { pieces: document.querySelectorAll('cg-board piece').length,
                          names: [...document.querySelectorAll('.embed-player .name')].map((n) => n.textContent),
                          white_king_above: y('white') < y('black') };",
                vec![],
            )
            .await;
        c.enter_parent_frame().await.expect("back out");
        println!("inside the game's frame: {inside}");
        assert!(
            inside["pieces"].as_u64().is_some_and(|n| n >= 2),
            "{inside}"
        );
        // orientation="black": Black at the bottom, and Black's name under the board.
        assert_eq!(inside["white_king_above"], true, "{inside}");
        assert_eq!(
            inside["names"][1], api["black"]["name"],
            "the lower name is Black's: {inside}"
        );
        // The round's frame, theme="blue,dark": lichess's blue squares on a dark page.
        let frame = b
            .js(
                "return document.getElementById('round').shadowRoot.querySelector('iframe');",
                vec![],
            )
            .await;
        let frame_id = frame[W3C_ELEMENT]
            .as_str()
            .expect("a reference to the round's frame")
            .to_string();
        fantoccini::elements::Element::from_element_id(c.clone(), frame_id.into())
            .enter_frame()
            .await
            .expect("into the round's frame");
        let colours = b
            .js(
                "return { squares: getComputedStyle(document.querySelector('cg-board')).backgroundColor,
                          page: getComputedStyle(document.body).backgroundColor,
                          boards: document.querySelectorAll('.embed-card').length };",
                vec![],
            )
            .await;
        c.enter_parent_frame().await.expect("back out");
        assert_eq!(
            colours,
            json!({"squares": "rgb(222, 227, 230)", "page": "rgb(22, 21, 18)", "boards": 2}),
            "the round's frame in blue on dark"
        );
        tokio::time::sleep(Duration::from_millis(400)).await;
        b.screenshot("listed").await;

        // Not listed: the frames stay empty, and no message comes.
        set_origins(&svc, tournament, &["https://club.example"]);
        let policy = policy_of(&game_page);
        println!("frame-ancestors with another site listed: {policy:?}");
        assert!(!policy.contains(&host), "{policy:?}");
        b.goto(&format!("{host}/")).await;
        // The script ran and the frames were given the embed pages: only the relay's policy
        // can keep them empty.
        let srcs = eventually!(10, "the frames to be made", async {
            let v = b
                .js(
                    "const s = (id) => document.getElementById(id)?.shadowRoot?.querySelector('iframe')?.src || null;
                     return [s('game'), s('round')];",
                    vec![],
                )
                .await;
            (v[0].is_string() && v[1].is_string()).then_some(v)
        });
        assert!(
            srcs[0]
                .as_str()
                .is_some_and(|s| s.starts_with(&format!("{}/embed/game.html?id={game}", svc.base))),
            "{srcs}"
        );
        tokio::time::sleep(Duration::from_secs(6)).await;
        let heard = messages(&b).await;
        b.screenshot("not-listed").await;
        assert!(
            heard.is_empty(),
            "a frame the relay does not allow on {host} still spoke: {heard:?}"
        );
        b.quit().await;
    });
}
