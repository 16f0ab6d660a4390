//! Running `relay serve` (and `relay emulate`) as real processes, and talking to the service
//! over real HTTP and WebSockets.

use super::temp_dir;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `relay` process whose stderr (the log) goes to a file, shown when a test fails.
pub struct Relay {
    pub child: Child,
    pub base: String,
    pub log: PathBuf,
}

impl Relay {
    /// Starts `relay serve ARGS --listen 127.0.0.1:0` and waits for its address.
    pub fn serve(dir: &Path, args: &[&str]) -> Relay {
        Relay::serve_logging(dir, args, "info,relay=debug")
    }

    /// The same, with `RELAY_LOG` set to `filter`.
    pub fn serve_logging(dir: &Path, args: &[&str], filter: &str) -> Relay {
        let log = dir.join(format!(
            "serve-{}.log",
            Instant::now().elapsed().as_nanos() ^ u128::from(rand_u32())
        ));
        let mut all = vec!["serve", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let mut child = Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(&all)
            .env("RELAY_LOG", filter)
            .env_remove("RELAY_ADMIN_TOKEN")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("start relay serve");
        let out = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(out).lines();
        let base = loop {
            match lines.next() {
                Some(Ok(l)) => {
                    if let Some(rest) = l.strip_prefix("relay: serving on ") {
                        break rest.trim_end_matches('/').to_string();
                    }
                }
                _ => {
                    let text = std::fs::read_to_string(&log).unwrap_or_default();
                    panic!("relay serve did not start:\n{text}");
                }
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Relay { child, base, log }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn ws_url(&self, path: &str) -> String {
        format!("{}{path}", self.base.replacen("http://", "ws://", 1))
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL: no chance to flush anything.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then wait for a clean exit.
    pub fn terminate(&mut self) -> bool {
        super::signal_and_wait(&mut self.child, "-TERM", 15).is_some_and(|st| st.success())
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        super::reap(&mut self.child);
    }
}

fn rand_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish() as u32
}

/// `relay emulate` with stable links `dir/dgt-N`.
pub struct Emulator {
    pub child: Child,
    pub dir: PathBuf,
}

impl Emulator {
    pub fn start(name: &str, args: &[&str]) -> Emulator {
        let dir = temp_dir(name);
        let links = dir.join("links");
        let links_s = links.display().to_string();
        let mut all = vec!["emulate", "--link-dir", links_s.as_str()];
        all.extend_from_slice(args);
        let child = Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(&all)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start relay emulate");
        let e = Emulator { child, dir };
        super::wait_for_path(&links.join("dgt-1"));
        e
    }

    pub fn ports(&self) -> String {
        format!("{}/links/dgt-*", self.dir.display())
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP client that returns every status as an answer (errors are what we test).
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into()
}

/// An answer: status, headers we look at, body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

/// One request. `headers` are (name, value); `body` is sent as is.
pub fn request(method: &str, url: &str, headers: &[(&str, &str)], body: Option<&[u8]>) -> Answer {
    let a = agent();
    let mut req = axum_free_builder(method, url);
    for (n, v) in headers {
        req = req.header(*n, *v);
    }
    let resp = match body {
        Some(b) => a.run(req.body(b.to_vec()).expect("request")),
        None => a.run(req.body(Vec::new()).expect("request")),
    };
    let mut resp = resp.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let mut body = Vec::new();
    resp.body_mut()
        .as_reader()
        .read_to_end(&mut body)
        .expect("read body");
    Answer {
        status,
        headers,
        body,
    }
}

fn axum_free_builder(method: &str, url: &str) -> ureq::http::request::Builder {
    ureq::http::Request::builder().method(method).uri(url)
}

pub fn get(url: &str) -> Answer {
    request("GET", url, &[], None)
}

pub fn get_json(url: &str) -> Value {
    let a = get(url);
    assert_eq!(a.status, 200, "GET {url}: {}", a.text());
    a.json()
}

/// Now, in ms since the epoch (the server stamps messages the same way).
pub fn epoch_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A WebSocket client reading JSON messages.
pub struct Socket {
    ws: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    /// The connection was closed or failed.
    closed: bool,
    /// When each heartbeat was sent (server time, ms) and when it arrived (ours); `next`
    /// keeps them here rather than returning them.
    pub heartbeats: Vec<(i64, i64)>,
    /// Messages a frame carried that are still to be returned.
    carried: std::collections::VecDeque<Value>,
    /// Whether the last frame read carried lever presses.
    pub last_frame_carried: bool,
}

impl Socket {
    pub fn connect(url: &str) -> Socket {
        Socket::try_connect(url).unwrap_or_else(|e| panic!("ws {url}: {e}"))
    }

    /// A connection with an arbiter's Bearer token (arbiters follow a round live).
    pub fn connect_as(url: &str, token: &str) -> Socket {
        use tungstenite::client::IntoClientRequest;
        let mut req = url.into_client_request().expect("a WebSocket URL");
        let bearer = format!("Bearer {token}").parse().expect("a header value");
        req.headers_mut().insert("Authorization", bearer);
        Socket::try_connect(req).unwrap_or_else(|e| panic!("ws {url}: {e}"))
    }

    /// A connection, or why there is none (the service may be down).
    pub fn try_connect(
        req: impl tungstenite::client::IntoClientRequest,
    ) -> Result<Socket, tungstenite::Error> {
        let (ws, _) = tungstenite::connect(req)?;
        if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
            let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
        }
        Ok(Socket {
            ws,
            closed: false,
            heartbeats: Vec::new(),
            carried: Default::default(),
            last_frame_carried: false,
        })
    }

    /// The next JSON message other than a heartbeat, or `None` after `within` with nothing.
    /// A round snapshot sent in parts comes back whole, as pages see it.
    pub fn next(&mut self, within: Duration) -> Option<Value> {
        let end = Instant::now() + within;
        let mut v = self.next_frame(within)?;
        let more = v["more"].as_u64().unwrap_or(0);
        if v["type"] == "snapshot" && more > 0 {
            // A round's games or a game's moves.
            let (holder, key, part_type) = if v["round"].is_object() {
                ("round", "games", "games")
            } else {
                ("game", "moves", "moves")
            };
            for _ in 0..more {
                let left = end.saturating_duration_since(Instant::now()) + Duration::from_secs(2);
                let part = self.next_frame(left).expect("the rest of a snapshot");
                assert_eq!(part["type"], part_type, "{part}");
                assert_eq!(part["seq"], v["seq"], "{part}");
                let items = part[key].as_array().cloned().expect("the part's items");
                v[holder][key]
                    .as_array_mut()
                    .expect("a snapshot's list")
                    .extend(items);
            }
            if let Some(o) = v.as_object_mut() {
                o.remove("more");
            }
        }
        Some(v)
    }

    /// The next JSON message other than a heartbeat: lever presses a frame carries come
    /// first, each on its own, as pages see them.
    fn next_frame(&mut self, within: Duration) -> Option<Value> {
        if let Some(v) = self.carried.pop_front() {
            return Some(v);
        }
        let mut v = self.read_frame(within)?;
        self.last_frame_carried = v.get("presses").is_some();
        if let Some(presses) = v.as_object_mut().and_then(|o| o.remove("presses")) {
            self.carried
                .extend(presses.as_array().cloned().unwrap_or_default());
            self.carried.push_back(v);
            return self.carried.pop_front();
        }
        Some(v)
    }

    /// The next JSON frame other than a heartbeat.
    fn read_frame(&mut self, within: Duration) -> Option<Value> {
        let end = Instant::now() + within;
        while Instant::now() < end {
            match self.ws.read() {
                Ok(tungstenite::Message::Text(t)) => {
                    let v: Value = serde_json::from_str(t.as_str()).expect("JSON message");
                    if v["type"] == "heartbeat" {
                        let sent = v["at_ms"].as_i64().expect("a heartbeat's at_ms");
                        self.heartbeats.push((sent, epoch_ms()));
                        continue;
                    }
                    return Some(v);
                }
                Ok(tungstenite::Message::Close(_)) => {
                    self.closed = true;
                    return None;
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => {
                    self.closed = true;
                    return None;
                }
            }
        }
        None
    }

    /// Whether the connection is gone (closed by the server, or broken).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Messages until `done` is satisfied (panics after `secs`).
    pub fn until(&mut self, secs: u64, mut done: impl FnMut(&Value) -> bool) -> Vec<Value> {
        let end = Instant::now() + Duration::from_secs(secs);
        let mut got = Vec::new();
        while Instant::now() < end {
            if let Some(v) = self.next(Duration::from_millis(200)) {
                let stop = done(&v);
                got.push(v);
                if stop {
                    return got;
                }
            }
        }
        panic!(
            "no such message within {secs} s; got {} messages: {:?}",
            got.len(),
            got.iter().rev().take(5).collect::<Vec<_>>()
        );
    }

    pub fn close(mut self) {
        let _ = self.ws.close(None);
    }
}

/// The SAN of every move of a game as the API gives it (none when it has no moves).
pub fn sans(game: &Value) -> Vec<String> {
    game["moves"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["san"].as_str().map(str::to_string))
        .collect()
}

/// Polls `f` until it returns `Some`, or panics with `what` after `secs`.
pub fn wait_until<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The PostgreSQL server to test against (`RELAY_TEST_POSTGRES`), or `None` with a notice
/// that `test` is skipped; with `RELAY_REQUIRE_ALL=1` a missing server fails the test.
pub fn postgres_url(test: &str) -> Option<String> {
    match std::env::var("RELAY_TEST_POSTGRES") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            let notice = format!("RELAY_TEST_POSTGRES is not set: {test} is skipped");
            if std::env::var("RELAY_REQUIRE_ALL").is_ok_and(|v| v == "1") {
                panic!("{notice} (RELAY_REQUIRE_ALL=1)");
            }
            eprintln!("{notice}");
            None
        }
    }
}

/// Makes a new, empty database `name` on the server of `url`; returns its URL.
pub fn postgres_database(url: &str, name: &str) -> String {
    let admin = std::process::Command::new("psql")
        .args([
            url,
            "-q",
            "-c",
            &format!("DROP DATABASE IF EXISTS {name}"),
            "-c",
            &format!("CREATE DATABASE {name}"),
        ])
        .output()
        .expect("psql");
    assert!(
        admin.status.success(),
        "cannot create the test database: {}",
        String::from_utf8_lossy(&admin.stderr)
    );
    let (server, _) = url.rsplit_once('/').expect("URL with a database");
    format!("{server}/{name}")
}

/// A relay's first push target, from its `/health`.
pub fn push_target(r: &Relay) -> Value {
    get_json(&r.url("/health"))["upstream"][0].clone()
}

fn pushed(r: &Relay) -> u64 {
    push_target(r)["delivered_batches"].as_u64().unwrap_or(0)
}

/// Two relays started alike with `args` (a push target among them), the second as the
/// first's standby: once the first pushes and the second stands by, both stay up for `hold`
/// (the games going on) and the second must have pushed nothing.
pub fn pushing_pair(dir: &Path, args: &[&str], hold: Duration) -> (Relay, Relay) {
    let first = Relay::serve(dir, args);
    wait_until(30, "the first relay to push", || {
        (pushed(&first) > 0).then_some(())
    });
    let second = Relay::serve(dir, args);
    wait_until(10, "the second relay to stand by", || {
        (push_target(&second)["standing_by"] == true).then_some(())
    });
    std::thread::sleep(hold);
    let (one, other) = (push_target(&first), push_target(&second));
    assert_eq!(other["delivered_batches"], 0, "the standby pushed: {other}");
    assert_eq!(other["standing_by"], true, "{other}");
    assert_eq!(one["standing_by"], false, "{one}");
    (first, second)
}

/// SIGKILLs the pushing relay and waits for the standby to push, within 5 s.
pub fn kill_the_pusher(first: &mut Relay, second: &Relay) {
    first.kill();
    let killed = Instant::now();
    wait_until(10, "the standby to push", || {
        (pushed(second) > 0).then_some(())
    });
    let took = killed.elapsed();
    eprintln!("the standby pushed {} ms after the kill", took.as_millis());
    assert!(took < Duration::from_secs(5), "the standby took {took:?}");
    assert_eq!(push_target(second)["standing_by"], false);
}
