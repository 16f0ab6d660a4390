//! Spoiler-free on the round and game pages, in real headless Chromium against `relay serve`:
//! a round of two boards, one game over (1-0) and one in play, every position evaluated (the
//! test answers as an evaluation worker would, so no engine is needed).
//!
//! - The organiser's default on (`PATCH /api/tournaments/{id}` `spoiler_free`): the round page
//!   shows no result and no evaluation bar, its switch on and the notice; the game in play
//!   still gets its moves live, and a result set meanwhile stays hidden; "Show results" shows
//!   both results and the bars.
//! - The game page, the choice forgotten: no result and no evaluation until "Show results";
//!   the choice is remembered (reopened, it shows them), and the switch hides them again, on
//!   the round page too (one choice per tournament).
//! - The default off: both pages show results and evaluations as before, no notice.

use super::browser::{Browser, TOKEN, blocking, browser_test, eventually, try_json};
use super::service::{Relay, request};
use super::temp_dir;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const EVAL_TOKEN: &str = "browser-spoiler-worker";

/// The finished game (White wins, though nothing on the board says so) and the game in play.
const FINISHED: &str = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 *";
const IN_PLAY: &str = "1. d4 d5 2. c4 *";
const IN_PLAY_ON: &str = "1. d4 d5 2. c4 e6 3. Nc3 *";

/// What the round page shows of each card: its result, whether it carries a result code,
/// its plies and status, and its evaluation bar (null: none made); and the switch, notice.
const READ_ROUND: &str = r#"
const cards = [...document.querySelectorAll('article.board-card')].map((card) => {
  const bar = card.querySelector('.eval-bar');
  return { game: Number(card.dataset.gameId), plies: Number(card.dataset.plies),
           status: card.dataset.status,
           result: card.querySelector('.result').textContent,
           coded: card.querySelector('.result').hasAttribute('data-result'),
           text: card.innerText,
           bar: bar ? { hidden: bar.hidden || bar.getBoundingClientRect().height === 0,
                        score: bar.dataset.score } : null };
});
return { cards, spoiler: document.body.classList.contains('spoiler-free'),
         switched: document.getElementById('spoiler-free').checked,
         notice: !document.getElementById('spoiler-notice').hidden };
"#;

/// What the game page shows: the result line, the evaluation (bar and analysis), the last
/// move, the whole page's text, and the switch and notice.
const READ_GAME: &str = r#"
const bar = document.querySelector('#board-area .eval-bar');
const line = document.querySelector('.result-line');
return { latest: document.getElementById('latest').textContent,
         line_shown: !line.hidden && line.getBoundingClientRect().height > 0,
         result: document.getElementById('result').textContent,
         termination: document.getElementById('termination').textContent,
         bar_shown: !bar.hidden && bar.getBoundingClientRect().height > 0,
         analysis_shown: !document.getElementById('analysis').hidden,
         score: document.getElementById('eval-score').textContent,
         text: document.querySelector('main').innerText,
         pgn: document.getElementById('download-pgn').getAttribute('href'),
         spoiler: document.body.classList.contains('spoiler-free'),
         switched: document.getElementById('spoiler-free').checked,
         notice: !document.getElementById('spoiler-notice').hidden };
"#;

/// The score as the pages write it: "+0.35", "-1.20", "0.00".
fn score_text(cp: i64) -> String {
    match cp {
        0 => "0.00".into(),
        c if c > 0 => format!("+{:.2}", c as f64 / 100.0),
        c => format!("{:.2}", c as f64 / 100.0),
    }
}

/// The centipawns the test's "engine" gives the position after `ply` of a game.
fn cp_of(game: i64, ply: u64) -> i64 {
    40 + 15 * ply as i64 + game % 7
}

/// An arbiter's request with the test's token; its status and text.
fn admin(r: &Relay, method: &str, path: &str, content_type: &str, body: &str) -> (u16, String) {
    let auth = format!("Bearer {TOKEN}");
    let answer = blocking(|| {
        request(
            method,
            &r.url(path),
            &[
                ("Authorization", auth.as_str()),
                ("Content-Type", content_type),
            ],
            Some(body.as_bytes()),
        )
    });
    (answer.status, answer.text())
}

fn admin_ok(r: &Relay, method: &str, path: &str, content_type: &str, body: &str) -> Value {
    let (status, text) = admin(r, method, path, content_type, body);
    assert!(
        (200..300).contains(&status),
        "{method} {path}: {status} {text}"
    );
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

fn api(r: &Relay, path: &str) -> Value {
    try_json(&r.url(path)).unwrap_or_else(|| panic!("GET {path} did not answer JSON"))
}

/// Answers for every position of the game, as an evaluation worker would; then waits for
/// the game's JSON to carry them.
async fn evaluate(r: &Relay, game: i64) {
    let g = api(r, &format!("/api/games/{game}"));
    let auth = format!("Bearer {EVAL_TOKEN}");
    for m in g["moves"].as_array().into_iter().flatten() {
        let ply = m["ply"].as_u64().expect("ply");
        let body = json!({"fen": m["fen"], "cp": cp_of(game, ply), "depth": 20,
                          "line": [], "engine": "Test engine 1"})
        .to_string();
        let answer = blocking(|| {
            request(
                "POST",
                &r.url("/api/eval/answer"),
                &[
                    ("Authorization", auth.as_str()),
                    ("Content-Type", "application/json"),
                ],
                Some(body.as_bytes()),
            )
        });
        assert_eq!(
            answer.status,
            200,
            "evaluation of ply {ply}: {}",
            answer.text()
        );
    }
    eventually!(
        15,
        format!("game {game}'s evaluations in its JSON"),
        async {
            let g = try_json(&r.url(&format!("/api/games/{game}")))?;
            g["moves"]
                .as_array()?
                .iter()
                .all(|m| m["eval"].is_object())
                .then_some(())
        }
    );
}

async fn round_shown(b: &Browser) -> Value {
    b.js(READ_ROUND, vec![]).await
}

async fn game_shown(b: &Browser) -> Value {
    b.js(READ_GAME, vec![]).await
}

/// The card of `game` as the page shows it.
fn card(shown: &Value, game: i64) -> Option<Value> {
    shown["cards"]
        .as_array()?
        .iter()
        .find(|c| c["game"] == game)
        .cloned()
}

/// Waits for the round page to show both cards with the spoiler-free state settled to `on`.
async fn wait_round(b: &Browser, on: bool, what: &str) -> Value {
    eventually!(20, what, async {
        let v = round_shown(b).await;
        (v["cards"].as_array()?.len() == 2 && v["switched"] == on && v["spoiler"] == on)
            .then_some(v)
    })
}

/// Waits for the game page to show its moves with the spoiler-free state settled to `on`.
async fn wait_game(b: &Browser, on: bool, what: &str) -> Value {
    eventually!(20, what, async {
        let v = game_shown(b).await;
        (v["latest"].as_str().is_some_and(|t| !t.is_empty())
            && v["switched"] == on
            && v["spoiler"] == on)
            .then_some(v)
    })
}

fn forget_choice(tournament: i64) -> String {
    format!("localStorage.removeItem('relay.spoilerFree.{tournament}');")
}

#[test]
fn browser_spoiler_free_hides_results_and_evaluations_on_the_round_and_game_pages() {
    browser_test("spoiler", || async {
        let dir = temp_dir("browser-spoiler");
        let db = format!("sqlite://{}", dir.join("relay.db").display());
        let r = blocking(|| {
            Relay::serve(
                &dir,
                &[
                    "--db",
                    db.as_str(),
                    "--no-boards",
                    "--admin-token",
                    TOKEN,
                    "--eval-token",
                    EVAL_TOKEN,
                ],
            )
        });
        let json_type = "application/json";
        let t = admin_ok(
            &r,
            "POST",
            "/api/tournaments",
            json_type,
            r#"{"name": "Spoiler Open"}"#,
        )["id"]
            .as_i64()
            .expect("the tournament");
        let round = admin_ok(
            &r,
            "POST",
            &format!("/api/tournaments/{t}/rounds"),
            json_type,
            r#"{"number": "1"}"#,
        )["id"]
            .as_i64()
            .expect("the round");
        let pairings = json!([
            {"board_no": 1, "white": {"name": "Anand, Viswanathan"}, "black": {"name": "Carlsen, Magnus"}},
            {"board_no": 2, "white": {"name": "Polgar, Judit"}, "black": {"name": "Kasparov, Garry"}},
        ]);
        admin_ok(
            &r,
            "PUT",
            &format!("/api/rounds/{round}/pairings"),
            json_type,
            &pairings.to_string(),
        );
        let games = api(&r, &format!("/api/rounds/{round}"))["games"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let on_board = |n: u64| {
            games
                .iter()
                .find(|g| g["board_no"] == n)
                .and_then(|g| g["id"].as_i64())
                .unwrap_or_else(|| panic!("board {n}'s game"))
        };
        let (over, playing) = (on_board(1), on_board(2));
        admin_ok(
            &r,
            "PUT",
            &format!("/api/games/{over}/pgn"),
            "text/plain",
            FINISHED,
        );
        admin_ok(
            &r,
            "POST",
            &format!("/api/games/{over}/result"),
            json_type,
            r#"{"result": "1-0"}"#,
        );
        admin_ok(
            &r,
            "PUT",
            &format!("/api/games/{playing}/pgn"),
            "text/plain",
            IN_PLAY,
        );
        evaluate(&r, over).await;
        evaluate(&r, playing).await;
        let finished = api(&r, &format!("/api/games/{over}"));
        assert_eq!(finished["result"], "1-0", "{finished}");
        let last_ply = finished["moves"].as_array().map_or(0, Vec::len) as u64;
        let over_score = score_text(cp_of(over, last_ply));

        // ---- the organiser's default on ----
        admin_ok(
            &r,
            "PATCH",
            &format!("/api/tournaments/{t}"),
            json_type,
            r#"{"spoiler_free": true}"#,
        );
        assert_eq!(
            api(&r, &format!("/api/tournaments/{t}/ranking"))["spoiler_free"],
            true
        );
        let b = Browser::start("spoiler").await;
        b.goto(&r.url(&format!("/round.html?id={round}"))).await;
        let hidden = wait_round(&b, true, "the round page, spoiler-free").await;
        println!("round page, spoiler-free: {hidden}");
        assert_eq!(
            hidden["notice"], true,
            "the notice with Show results: {hidden}"
        );
        for c in hidden["cards"].as_array().into_iter().flatten() {
            assert_eq!(c["result"], "", "a result shown spoiler-free: {c}");
            assert_eq!(c["coded"], false, "a result code on the card: {c}");
            assert!(
                c["bar"].is_null() || c["bar"]["hidden"] == true,
                "an evaluation bar shown spoiler-free: {c}"
            );
        }
        let over_card = card(&hidden, over).expect("the finished game's card");
        assert!(
            !over_card["text"].as_str().unwrap_or("").contains("1-0"),
            "{over_card}"
        );
        b.screenshot("round-hidden").await;

        // Live, spoiler-free: the moves still come; a result set meanwhile does not show.
        admin_ok(
            &r,
            "PUT",
            &format!("/api/games/{playing}/pgn"),
            "text/plain",
            IN_PLAY_ON,
        );
        eventually!(15, "the game in play's new moves on its card", async {
            let v = round_shown(&b).await;
            (card(&v, playing)?["plies"] == 5).then_some(())
        });
        admin_ok(
            &r,
            "POST",
            &format!("/api/games/{playing}/result"),
            json_type,
            r#"{"result": "0-1"}"#,
        );
        let ended = api(&r, &format!("/api/games/{playing}"));
        let status = ended["status"].as_str().unwrap_or("").to_string();
        let seen = eventually!(
            15,
            format!("the card to hear the game ended ({status})"),
            async {
                let v = round_shown(&b).await;
                let c = card(&v, playing)?;
                (c["status"] == status.as_str()).then_some(c)
            }
        );
        assert_eq!(
            seen["result"], "",
            "a live result shown spoiler-free: {seen}"
        );
        assert!(
            !seen["text"].as_str().unwrap_or("").contains("0-1"),
            "{seen}"
        );

        // "Show results": both results, and the bars from the evaluations.
        b.click("#show-results").await;
        let shown = eventually!(10, "the results and bars shown", async {
            let v = round_shown(&b).await;
            let a = card(&v, over)?;
            let c = card(&v, playing)?;
            (v["spoiler"] == false
                && a["result"] == "1-0"
                && c["result"] == "0-1"
                && a["bar"]["hidden"] == false
                && c["bar"]["hidden"] == false)
                .then_some(v)
        });
        assert_eq!(shown["notice"], false, "{shown}");
        assert_eq!(
            card(&shown, over).expect("card")["bar"]["score"],
            over_score.as_str(),
            "{shown}"
        );
        let stored = b
            .js(
                &format!("return localStorage.getItem('relay.spoilerFree.{t}');"),
                vec![],
            )
            .await;
        assert_eq!(
            stored, "0",
            "the choice kept under the standings pages' key"
        );
        b.screenshot("round-shown").await;

        // ---- the game page, the choice forgotten: the default again ----
        b.js(&forget_choice(t), vec![]).await;
        b.goto(&r.url(&format!("/game.html?id={over}"))).await;
        let hidden = wait_game(&b, true, "the game page, spoiler-free").await;
        println!("game page, spoiler-free: {hidden}");
        assert_eq!(hidden["notice"], true, "{hidden}");
        assert_eq!(
            hidden["line_shown"], false,
            "the result line shown: {hidden}"
        );
        assert_eq!(hidden["result"], "", "{hidden}");
        assert_eq!(hidden["termination"], "", "{hidden}");
        assert_eq!(
            hidden["bar_shown"], false,
            "the evaluation bar shown: {hidden}"
        );
        assert_eq!(
            hidden["analysis_shown"], false,
            "the evaluation shown: {hidden}"
        );
        assert_eq!(hidden["score"], "", "{hidden}");
        let text = hidden["text"].as_str().unwrap_or("");
        assert!(
            !text.contains("1-0") && !text.contains(&over_score),
            "{text}"
        );
        assert_eq!(
            hidden["pgn"],
            format!("api/games/{over}/pgn").as_str(),
            "the PGN stays"
        );
        b.screenshot("game-hidden").await;

        b.click("#show-results").await;
        let shown = eventually!(10, "the game's result and evaluation shown", async {
            let v = game_shown(&b).await;
            (v["spoiler"] == false && v["result"] == "1-0" && v["analysis_shown"] == true)
                .then_some(v)
        });
        assert_eq!(shown["line_shown"], true, "{shown}");
        assert_eq!(shown["bar_shown"], true, "{shown}");
        assert_eq!(shown["score"], over_score.as_str(), "{shown}");
        assert_eq!(shown["notice"], false, "{shown}");
        b.screenshot("game-shown").await;

        // Remembered: reopened, the game shows them at once.
        b.goto(&r.url(&format!("/game.html?id={over}"))).await;
        let again = wait_game(&b, false, "the game page reopened").await;
        assert_eq!(again["result"], "1-0", "{again}");
        assert_eq!(again["analysis_shown"], true, "{again}");
        // The switch hides them again, and the round page too keeps that choice.
        b.click("#spoiler-free").await;
        eventually!(10, "the switch to hide the result again", async {
            let v = game_shown(&b).await;
            (v["spoiler"] == true && v["result"] == "" && v["analysis_shown"] == false)
                .then_some(())
        });
        b.goto(&r.url(&format!("/round.html?id={round}"))).await;
        let kept = wait_round(&b, true, "the round page, switched on from the game page").await;
        assert!(
            kept["cards"]
                .as_array()
                .into_iter()
                .flatten()
                .all(|c| c["result"] == "" && (c["bar"].is_null() || c["bar"]["hidden"] == true)),
            "{kept}"
        );

        // ---- the default off: results and evaluations as before ----
        admin_ok(
            &r,
            "PATCH",
            &format!("/api/tournaments/{t}"),
            json_type,
            r#"{"spoiler_free": false}"#,
        );
        b.js(&forget_choice(t), vec![]).await;
        b.goto(&r.url(&format!("/round.html?id={round}"))).await;
        let open = eventually!(20, "the round page with its results", async {
            let v = round_shown(&b).await;
            let a = card(&v, over)?;
            (v["spoiler"] == false && a["result"] == "1-0" && a["bar"]["hidden"] == false)
                .then_some(v)
        });
        assert_eq!(open["notice"], false, "{open}");
        assert_eq!(card(&open, playing).expect("card")["result"], "0-1");
        b.goto(&r.url(&format!("/game.html?id={over}"))).await;
        let open = wait_game(&b, false, "the game page with its result").await;
        assert_eq!(open["result"], "1-0", "{open}");
        assert_eq!(open["analysis_shown"], true, "{open}");
        assert_eq!(open["score"], over_score.as_str(), "{open}");
        assert_eq!(open["notice"], false, "{open}");
        b.quit().await;
    });
}
