//! Pushing a round to Lichess, against a stand-in server that keeps Lichess's documented
//! contract (Lichess itself cannot be reached from here): `POST
//! /api/broadcast/round/{id}/push` with a Bearer token, at most 100 games and 512 KiB a
//! request, a JSON answer with `moves` or `error` per game, and 429 when asked too often.
//! The stand-in answers one 429 and refuses board 4 every time; the relay must wait a minute
//! after the 429, show the refusal, and end with the stand-in holding every other game as the
//! relay does.

use super::service::{
    Emulator, Relay, get_json, kill_the_pusher, postgres_database, postgres_url, push_target,
    pushing_pair, wait_until,
};
use super::temp_dir;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const LICHESS_TOKEN: &str = "lip_standin_token";
pub const ROUND_ID: &str = "Ab3dE5gH";
/// Lichess rounds for boards 101-200 and 201-300 (a several-hall event's boards).
pub const MORE_ROUNDS: [&str; 2] = ["Bc4dF6hJ", "Cd5eG7jK"];

/// One request the stand-in got.
#[derive(Clone, Debug)]
struct Seen {
    at: Instant,
    status: u16,
    games: usize,
}

#[derive(Default)]
pub struct StandIn {
    requests: Vec<Seen>,
    /// The Lichess round each `[GameId]` was pushed to.
    pub round_of: HashMap<String, String>,
    /// The last PGN taken for each `[GameId]`, with its board.
    pub games: HashMap<String, (String, relay_core::game::Game)>,
    /// Each board's `[GameId]`s over time (must stay one).
    ids_of_board: HashMap<String, std::collections::BTreeSet<String>>,
    slowed_at: Option<Instant>,
    /// Answers every request as Lichess does when all is well: no 429, no refused board.
    plain: bool,
    /// Tours made (`POST /broadcast/new`): id and form.
    pub tours: Vec<(String, HashMap<String, String>)>,
    /// Rounds made (`POST /broadcast/{tour}/new`): tour, id and form.
    pub made_rounds: Vec<(String, String, HashMap<String, String>)>,
}

/// An `application/x-www-form-urlencoded` body's fields.
fn form_fields(text: &str) -> HashMap<String, String> {
    let decode = |s: &str| {
        let bytes = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < bytes.len() => {
                    let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                    out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                    i += 2;
                }
                b => out.push(b),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    text.split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}

/// Lichess's tour and round creation, as its API documents them: a form, the token, a name
/// of 3 to 80 characters, a round only in a tour that exists; the ids in the answer.
fn make(s: &mut StandIn, path: &str, auth: &str, text: &str) -> Option<(u16, Value)> {
    let tour_of_round = path
        .strip_prefix("/broadcast/")
        .and_then(|p| p.strip_suffix("/new"))
        .filter(|t| *t != "new" && !t.contains('/'));
    if path != "/broadcast/new" && tour_of_round.is_none() {
        return None;
    }
    if auth != format!("Bearer {LICHESS_TOKEN}") {
        return Some((401, json!({"error": "No such token"})));
    }
    let form = form_fields(text.trim());
    let name = form.get("name").cloned().unwrap_or_default();
    if !(3..=80).contains(&name.chars().count()) {
        return Some((
            400,
            json!({"error": {"name": ["Must be 3 to 80 characters"]}}),
        ));
    }
    Some(match tour_of_round {
        None => {
            let id = format!("Tour{:04}", s.tours.len() + 1);
            s.tours.push((id.clone(), form));
            (200, json!({"tour": {"id": id, "name": name}, "rounds": []}))
        }
        Some(tour) => {
            if !s.tours.iter().any(|(t, _)| t == tour) {
                return Some((404, json!({"error": "Not found"})));
            }
            let id = format!("Rnd{:05}", s.made_rounds.len() + 1);
            s.made_rounds.push((tour.to_string(), id.clone(), form));
            (
                200,
                json!({"round": {"id": id, "name": name}, "tour": {"id": tour}, "study": {"writeable": true}}),
            )
        }
    })
}

pub type Shared = Arc<Mutex<StandIn>>;

fn answer(stream: &mut TcpStream, status: u16, body: &Value) -> std::io::Result<()> {
    let text = body.to_string();
    let reason = match status {
        200 => "OK",
        401 => "Unauthorized",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        _ => "Bad Request",
    };
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
        text.len()
    )?;
    stream.flush()
}

/// Serves one connection (keep-alive: requests one after another).
fn serve(stream: TcpStream, state: Shared) {
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(_) => return,
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut length = 0usize;
        let mut auth = String::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                match k.to_ascii_lowercase().as_str() {
                    "content-length" => length = v.trim().parse().unwrap_or(0),
                    "authorization" => auth = v.trim().to_string(),
                    _ => {}
                }
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let text = String::from_utf8_lossy(&body).replace('\r', "");
        let (status, reply) = handle(&state, &path, &auth, &text);
        if answer(&mut writer, status, &reply).is_err() {
            return;
        }
    }
}

fn handle(state: &Shared, path: &str, auth: &str, text: &str) -> (u16, Value) {
    let mut s = state.lock().expect("lock");
    if let Some(made) = make(&mut s, path, auth, text) {
        return made;
    }
    let n = s.requests.len();
    let games: Vec<&str> = text.split("\n\n[").collect();
    let mut seen = Seen {
        at: Instant::now(),
        status: 200,
        games: games.len(),
    };
    let lichess_round = path
        .strip_prefix("/api/broadcast/round/")
        .and_then(|p| p.strip_suffix("/push"))
        .filter(|r| {
            *r == ROUND_ID
                || MORE_ROUNDS.contains(r)
                || s.made_rounds.iter().any(|(_, id, _)| id == r)
        })
        .unwrap_or("")
        .to_string();
    let out = if lichess_round.is_empty() {
        (404, json!({"error": "Not found"}))
    } else if auth != format!("Bearer {LICHESS_TOKEN}") {
        (401, json!({"error": "No such token"}))
    } else if text.len() > 512 * 1024 {
        (413, json!({"error": "too large"}))
    } else if n == 2 && !s.plain {
        // The third request is told to slow down.
        s.slowed_at = Some(Instant::now());
        (429, json!({"error": "Too many requests. Try again later."}))
    } else {
        let mut results = Vec::new();
        // Lichess keeps the first 100 games.
        for (i, g) in games.iter().take(100).enumerate() {
            let pgn = if i == 0 {
                g.to_string()
            } else {
                format!("[{g}")
            };
            match relay_core::pgn::read_game(&pgn) {
                Err(e) => results.push(json!({"error": e.to_string()})),
                Ok(game) => {
                    let board = game.tags.get("Board").unwrap_or("").to_string();
                    let id = game.tags.get("GameId").unwrap_or("").to_string();
                    s.ids_of_board
                        .entry(board.clone())
                        .or_default()
                        .insert(id.clone());
                    if board == "4" && !s.plain {
                        results.push(json!({"tags": {}, "error": "stand-in: board 4 is refused in this test"}));
                    } else {
                        results.push(json!({"tags": {}, "moves": game.moves.len()}));
                        s.round_of.insert(id.clone(), lichess_round.clone());
                        s.games.insert(id, (board, game));
                    }
                }
            }
        }
        (200, json!({"games": results}))
    };
    seen.status = out.0;
    s.requests.push(seen);
    out
}

pub fn start_standin(plain: bool) -> (String, Shared) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let state: Shared = Arc::new(Mutex::new(StandIn {
        plain,
        ..Default::default()
    }));
    let st = state.clone();
    std::thread::spawn(move || {
        for c in listener.incoming().flatten() {
            let st = st.clone();
            std::thread::spawn(move || serve(c, st));
        }
    });
    (url, state)
}

/// `relay serve` on `db` reading `ports`, pushing to the stand-in at `lichess`.
fn relay_args<'a>(db: &'a str, ports: &'a str, lichess: &'a str) -> [&'a str; 10] {
    [
        "--db",
        db,
        "--port",
        ports,
        "--lichess-round",
        ROUND_ID,
        "--lichess-token",
        LICHESS_TOKEN,
        "--lichess-url",
        lichess,
    ]
}

#[test]
fn a_round_is_pushed_to_a_lichess_stand_in_that_slows_it_down_and_refuses_a_game() {
    let (url, state) = start_standin(false);
    let dir = temp_dir("serve-lichess");
    let emu = Emulator::start(
        "serve-lichess-emu",
        &[
            "--boards", "4", "--speed", "4", "--noise", "0", "--seed", "3",
        ],
    );
    let db = format!("sqlite://{}", dir.join("venue.db").display());
    let ports = emu.ports();
    let relay = Relay::serve(&dir, &relay_args(&db, &ports, &url));
    let lichess = push_target;

    // The 429: the relay says it waits, and sends nothing for a minute.
    wait_until(60, "the stand-in to ask the relay to slow down", || {
        state.lock().expect("lock").slowed_at
    });
    let h = wait_until(5, "the wait on the relay's health", || {
        let u = lichess(&relay);
        u["waiting_until_ms"].as_i64().map(|_| u)
    });
    eprintln!("after the 429: {h}");
    assert!(
        h["last_error"].as_str().unwrap_or("").contains("429"),
        "{h}"
    );
    wait_until(80, "a request after the minute", || {
        (state.lock().expect("lock").requests.len() > 3).then_some(())
    });
    {
        let s = state.lock().expect("lock");
        let slowed = s.slowed_at.expect("slowed");
        let next = s.requests[3].at;
        let waited = next.duration_since(slowed);
        eprintln!(
            "the next request came {} ms after the 429",
            waited.as_millis()
        );
        assert!(
            waited >= Duration::from_secs(60),
            "the relay came back after {waited:?}"
        );
    }

    // Board 4's refusal is an alert on the relay.
    let u = wait_until(10, "Lichess's refusal in the relay's health", || {
        let u = lichess(&relay);
        let refused = u["conflicts"].as_array().is_some_and(|c| !c.is_empty());
        refused.then_some(u)
    });
    assert_eq!(u["conflicts"][0]["board_no"], 4, "{u}");
    assert!(
        u["conflicts"][0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("board 4"),
        "{u}"
    );

    // In the end the stand-in holds boards 1-3 as the relay does: the same moves, a clock
    // after every move the relay has one for, one GameId per board.
    let round = get_json(&relay.url("/api/rounds/1"));
    let boards_played = round["games"].as_array().map_or(0, Vec::len);
    assert!(boards_played >= 3, "{round}");
    wait_until(20, "the stand-in to hold what the relay holds", || {
        holds_what_the_relay_holds(&state, &relay, Some("4"))
    });
    let s = state.lock().expect("lock");
    for (board, ids) in &s.ids_of_board {
        assert_eq!(ids.len(), 1, "board {board} was sent with GameIds {ids:?}");
    }
    assert!(s.requests.iter().all(|r| r.games <= 100));
    // At most a request a second (one Lichess round here).
    assert_spaced(&s.requests);
    let moves: usize = s.games.values().map(|(_, g)| g.moves.len()).sum();
    eprintln!(
        "{} requests ({} refused with 429), {moves} moves on {} boards at the stand-in",
        s.requests.len(),
        s.requests.iter().filter(|r| r.status == 429).count(),
        s.games.len()
    );
    let _ = emu;
}

/// Lichess asks for a request a second at most per round.
fn assert_spaced(requests: &[Seen]) {
    for w in requests.windows(2) {
        let gap = w[1].at.duration_since(w[0].at);
        assert!(
            gap >= Duration::from_millis(900),
            "two requests {gap:?} apart"
        );
    }
}

/// `Some` once the stand-in holds every game of the relay's round 1 (but board `skip`) as
/// the relay does: the same moves, a `[%clk]` after every move the relay has a clock for.
pub fn holds_what_the_relay_holds(state: &Shared, relay: &Relay, skip: Option<&str>) -> Option<()> {
    let round = get_json(&relay.url("/api/rounds/1"));
    let s = state.lock().expect("lock");
    for g in round["games"].as_array()? {
        let board = g["board_no"].as_u64()?.to_string();
        if Some(board.as_str()) == skip {
            continue;
        }
        let id = format!("relay-{}", g["id"].as_i64()?);
        let (_, taken) = s.games.get(&id)?;
        let want: Vec<&str> = g["moves"]
            .as_array()?
            .iter()
            .filter_map(|m| m["san"].as_str())
            .collect();
        let have: Vec<String> = taken.moves.iter().map(|m| m.san.to_string()).collect();
        if want != have {
            return None;
        }
        // A move's clock may come with the next lever press, after the move went out: the
        // game is sent again then, and until it is the stand-in does not hold what the relay
        // does (a clock never sent times the wait out).
        for (m, t) in g["moves"].as_array()?.iter().zip(&taken.moves) {
            if m["clk_ms"].is_u64() && t.clk.is_none() {
                return None;
            }
        }
        assert_eq!(taken.tags.get("Round"), Some(format!("1.{board}").as_str()));
    }
    Some(())
}

/// Two relays on one PostgreSQL read the same ports and are given the same Lichess round, as
/// a standby is started: one pushes, the other stands by (two would ask Lichess twice as
/// often). SIGKILL the pushing relay and the standby takes over the pushing with the boards,
/// and the stand-in ends holding every game as the store has it.
#[test]
fn of_two_relays_given_the_same_lichess_round_one_pushes_and_the_standby_takes_over() {
    let Some(pg) = postgres_url("the Lichess standby test") else {
        return;
    };
    let db = postgres_database(
        &pg,
        &format!("relay_lichess_standby_{}", std::process::id()),
    );
    let (url, state) = start_standin(true);
    let dir = temp_dir("serve-lichess-standby");
    let emu = Emulator::start(
        "serve-lichess-standby-emu",
        &[
            "--boards", "4", "--speed", "10", "--noise", "0", "--seed", "5",
        ],
    );
    let ports = emu.ports();
    let args = relay_args(&db, &ports, &url);
    // Both up for a while, the games going on: one relay asks Lichess, at most once a second.
    let hold = Duration::from_secs(5);
    let (mut first, second) = pushing_pair(&dir, &args, hold);
    {
        let s = state.lock().expect("lock");
        let since = Instant::now() - hold;
        let asked = s.requests.iter().filter(|r| r.at >= since).count();
        assert!(asked > 1, "{asked} requests with both up");
        assert_spaced(&s.requests);
    }

    let moves_at = |s: &StandIn| s.games.values().map(|(_, g)| g.moves.len()).sum::<usize>();
    let at_kill = moves_at(&state.lock().expect("lock"));
    kill_the_pusher(&mut first, &second);
    let after = state.lock().expect("lock").requests.len();
    // The games go on, read by the standby now, and reach Lichess from it.
    wait_until(60, "the stand-in to hold what the store holds", || {
        let more = moves_at(&state.lock().expect("lock")) >= at_kill + 8;
        holds_what_the_relay_holds(&state, &second, None).filter(|()| more)
    });
    let s = state.lock().expect("lock");
    // From the standby alone, spaced again.
    assert_spaced(&s.requests[after..]);
    for (board, ids) in &s.ids_of_board {
        assert_eq!(ids.len(), 1, "board {board} was sent with GameIds {ids:?}");
    }
    eprintln!(
        "{} requests, {} moves on {} boards at the stand-in ({at_kill} at the kill)",
        s.requests.len(),
        moves_at(&s),
        s.games.len()
    );
    let _ = emu;
}

/// `relay lichess setup` makes the broadcast from the tournament (a pairing program's file:
/// its name, time control, players' FIDE ids and rounds), keeps the round ids, and `relay
/// serve --lichess-token` without `--lichess-round` pushes a round to the Lichess round made
/// for it: nothing pasted by hand.
#[test]
fn lichess_set_up_from_relay_and_pushed_to_without_pasting_ids() {
    let Some(trf) = super::referees::data("vega_sample_tournament.trfx") else {
        return;
    };
    let dir = temp_dir("lichess-setup");
    let db = format!("sqlite://{}/relay.db", dir.display());
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(args)
            .output()
            .expect("relay");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };
    let (ok, text) = run(&["import", "--db", &db, &trf.display().to_string()]);
    assert!(ok, "{text}");
    let (url, state) = start_standin(true);
    // A wrong token: refused, nothing kept.
    let (ok, text) = run(&[
        "lichess",
        "setup",
        "--db",
        &db,
        "--tournament",
        "1",
        "--token",
        "lip_wrong",
        "--url",
        &url,
    ]);
    assert!(!ok && text.contains("401"), "{text}");
    let (ok, text) = run(&[
        "lichess",
        "setup",
        "--db",
        &db,
        "--tournament",
        "1",
        "--token",
        LICHESS_TOKEN,
        "--url",
        &url,
    ]);
    assert!(ok, "{text}");
    let (tours, made) = {
        let s = state.lock().expect("lock");
        (s.tours.clone(), s.made_rounds.clone())
    };
    assert_eq!(tours.len(), 1, "{text}");
    let (tour, form) = &tours[0];
    assert!(form["name"].len() >= 3, "{form:?}");
    let players = form.get("players").cloned().unwrap_or_default();
    // The file's four players with a FIDE id, as Lichess's replacements.
    assert!(
        players.lines().count() == 4 && players.lines().any(|l| l == "John Doe = 123456"),
        "players with FIDE ids: {players:?}"
    );
    // A Lichess round per relay round, pushed to (not pulled), each in the tour made.
    let rounds = get_rounds(&db);
    assert_eq!(made.len(), rounds, "{text}");
    assert!(
        made.iter()
            .all(|(t, _, f)| t == tour && f["syncSource"] == "push")
    );

    // The service pushes round 2 to the Lichess round made for it.
    let second = made[1].1.clone();
    let r = Relay::serve(
        &dir,
        &[
            "--db",
            &db,
            "--port",
            &format!("{}/none-*", dir.display()),
            "--lichess-token",
            LICHESS_TOKEN,
            "--lichess-url",
            &url,
            "--lichess-local-round",
            "2",
        ],
    );
    let expected = get_json(&r.url("/api/rounds/2"))["games"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0);
    assert!(expected > 0);
    wait_until(30, "every game of round 2 on its Lichess round", || {
        let s = state.lock().expect("lock");
        let n = s.round_of.values().filter(|r| **r == second).count();
        (n == expected).then_some(())
    });
}

/// How many rounds the store's first tournament has.
fn get_rounds(db: &str) -> usize {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let store = relay_store::Store::open(db).await.expect("store");
        let t = store
            .tournament(relay_store::TournamentId::from(1))
            .await
            .expect("tournament");
        t.rounds.len()
    })
}
