//! The pages in a real browser: headless Chromium, driven over WebDriver (chromedriver and the
//! `fantoccini` client), against the real `relay` binary with emulated boards playing.
//!
//! Skipped with a notice when Chromium or chromedriver is not installed (Debian: `apt-get
//! install chromium chromium-driver`), unless `RELAY_REQUIRE_ALL=1`, which makes that a
//! failure. Each test saves screenshots to `target/browser-screenshots/`.
//!
//! The tests take turns (one browser at a time): on a small machine three browsers and three
//! services at once would measure the machine, not the pages.

use super::service::{Emulator, agent, epoch_ms};
use super::temp_dir;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde::Deserialize;
use serde_json::{Value, json};
use std::future::Future;
use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
pub(super) const TOKEN: &str = "browser-test-token";

/// The most a committed move may take to show on a spectator's page.
const LATENCY_LIMIT: Duration = Duration::from_secs(1);

static ONE_BROWSER_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Whether the browser is here; without it, a notice (or a failure with `RELAY_REQUIRE_ALL=1`).
fn browser_installed(test: &str) -> bool {
    let missing: Vec<&str> = [CHROMIUM, CHROMEDRIVER]
        .into_iter()
        .filter(|p| !Path::new(p).exists())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let notice = format!(
        "browser test {test} needs Chromium and chromedriver; missing: {} \
         (Debian: apt-get install chromium chromium-driver)",
        missing.join(", ")
    );
    if std::env::var("RELAY_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("{notice}; RELAY_REQUIRE_ALL=1 requires every test to run");
    }
    println!("SKIPPED: {notice}");
    false
}

/// Runs one browser test: skip check, then the test alone, on a runtime of its own.
pub(super) fn browser_test<F: Future<Output = ()>>(name: &str, test: impl FnOnce() -> F) {
    if !browser_installed(name) {
        return;
    }
    let _turn = ONE_BROWSER_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let started = Instant::now();
    runtime.block_on(test());
    println!("{name}: done in {:.1} s", started.elapsed().as_secs_f64());
}

pub(super) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind a free port")
        .local_addr()
        .expect("local address")
        .port()
}

/// Blocking HTTP from async code (the runtime has other threads for the browser's session).
pub(super) fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

/// GET `url` as JSON; `None` unless it answers 200 with JSON (a service that is down too).
pub(super) fn try_json(url: &str) -> Option<Value> {
    blocking(|| {
        let mut answer = agent().get(url).call().ok()?;
        if answer.status() != 200 {
            return None;
        }
        let text = answer.body_mut().read_to_string().ok()?;
        serde_json::from_str(&text).ok()
    })
}

/// Awaits `$check` (an async block giving an `Option`) every 100 ms until it gives `Some`,
/// and evaluates to that; panics with `$what` (evaluated only then) after `$secs` seconds.
macro_rules! eventually {
    ($secs:expr, $what:expr, $check:expr $(,)?) => {{
        let secs: u64 = $secs;
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(v) = $check.await {
                break v;
            }
            assert!(
                Instant::now() < end,
                "timed out after {secs} s waiting for {}",
                $what
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }};
}
pub(super) use eventually;

// ---- the service ---------------------------------------------------------------------------

/// A `relay` process (demo or serve) with its log in a file, killed when dropped.
pub(super) struct Service {
    child: Child,
    pub(super) base: String,
    log: PathBuf,
}

impl Service {
    /// Starts `relay ARGS` and waits for the stdout line starting with `banner`, which carries
    /// the address. Standard output is drained for as long as the process runs.
    fn try_start(dir: &Path, label: &str, args: &[&str], banner: &str) -> Result<Service, String> {
        let log = dir.join(format!("{label}.log"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(args)
            .env("RELAY_LOG", "info,relay=debug")
            .env_remove("RELAY_ADMIN_TOKEN")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("create the service log"))
            .spawn()
            .expect("start relay");
        let out = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = channel();
        let banner = banner.to_string();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(out).lines().map_while(Result::ok);
            for line in lines.by_ref() {
                if let Some(rest) = line.strip_prefix(banner.as_str()) {
                    let _ = tx.send(rest.trim().trim_end_matches('/').to_string());
                    break;
                }
            }
            for _ in lines {}
        });
        let mut service = Service {
            child,
            base: String::new(),
            log,
        };
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(base) => {
                service.base = base;
                Ok(service)
            }
            Err(_) => {
                service.kill();
                Err(format!(
                    "relay {} did not start:\n{}",
                    args.join(" "),
                    service.log_text()
                ))
            }
        }
    }

    /// `relay demo` with emulated boards, on a port of its choosing.
    pub(super) fn demo(dir: &Path, args: &[&str]) -> Service {
        let db = format!("sqlite://{}/relay.db", dir.display());
        let mut all = vec!["demo", "--listen", "127.0.0.1:0", "--db", &db];
        all.extend_from_slice(args);
        Service::try_start(dir, "demo", &all, "  spectators:  ").unwrap_or_else(|e| panic!("{e}"))
    }

    /// `relay serve` on a fixed port (clap refuses a second `--listen`, so the helper that
    /// picks port 0 cannot be told another). Retries for a while: right after a kill the port
    /// may still be held for a moment.
    fn serve_on(dir: &Path, label: &str, port: u16, args: &[&str]) -> Service {
        let listen = format!("127.0.0.1:{port}");
        let mut all = vec!["serve", "--listen", listen.as_str()];
        all.extend_from_slice(args);
        let end = Instant::now() + Duration::from_secs(20);
        let mut attempt = 0;
        loop {
            attempt += 1;
            match Service::try_start(
                dir,
                &format!("{label}-{attempt}"),
                &all,
                "relay: serving on ",
            ) {
                Ok(s) => return s,
                Err(e) if Instant::now() > end => panic!("{e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(500)),
            }
        }
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `relay serve` on a free port reading `ports` (a glob), with the test's admin token and
    /// a database in `dir`.
    fn serve_ports(dir: &Path, ports: &str) -> Service {
        let db = format!("sqlite://{}/relay.db", dir.display());
        Service::serve_on(
            dir,
            "serve",
            free_port(),
            &["--db", &db, "--port", ports, "--admin-token", TOKEN],
        )
    }

    /// An arbiter request with the token (`body` as `content_type`, if any).
    pub(super) fn admin(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
    ) -> super::service::Answer {
        let auth = format!("Bearer {TOKEN}");
        let mut headers = vec![("Authorization", auth.as_str())];
        if let Some((content_type, _)) = body {
            headers.push(("Content-Type", content_type));
        }
        blocking(|| {
            super::service::request(method, &self.url(path), &headers, body.map(|(_, b)| b))
        })
    }

    pub(super) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL, as a crash or a power cut would.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.kill();
    }
}

// ---- the browser ---------------------------------------------------------------------------

/// chromedriver (in a process group of its own, with the Chromium it starts) and one session.
pub(super) struct Browser {
    driver: Child,
    client: Option<Client>,
    test: &'static str,
    /// Chromium's user data directory, new for each session and removed after it.
    profile: PathBuf,
}

impl Browser {
    pub(super) async fn start(test: &'static str) -> Browser {
        let dir = temp_dir(&format!("{test}-chromium"));
        let port = free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .arg(format!(
                "--log-path={}",
                dir.join("chromedriver.log").display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start chromedriver");
        let profile = dir.join("profile");
        let mut browser = Browser {
            driver,
            client: None,
            test,
            profile: profile.clone(),
        };
        let end = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < end,
                "chromedriver did not listen on port {port}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let args = [
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-dev-shm-usage".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--window-size=1280,1000".into(),
            format!("--user-data-dir={}", profile.display()),
        ];
        let mut caps = serde_json::Map::new();
        caps.insert("browserName".into(), json!("chrome"));
        caps.insert(
            "goog:chromeOptions".into(),
            json!({"binary": CHROMIUM, "args": args}),
        );
        let connecting = tokio::time::timeout(
            Duration::from_secs(60),
            ClientBuilder::new(HttpConnector::new())
                .capabilities(caps)
                .connect(&format!("http://127.0.0.1:{port}")),
        )
        .await;
        let client = match connecting {
            Ok(Ok(client)) => client,
            failed => {
                let why = match failed {
                    Ok(Err(e)) => e.to_string(),
                    _ => "no answer within 60 s".into(),
                };
                let log = std::fs::read_to_string(dir.join("chromedriver.log")).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(30).collect();
                panic!(
                    "no WebDriver session with Chromium: {why}\nchromedriver log, newest first:\n{}",
                    tail.join("\n")
                );
            }
        };
        browser.client = Some(client);
        browser
    }

    pub(super) fn client(&self) -> &Client {
        self.client.as_ref().expect("an open session")
    }

    pub(super) async fn goto(&self, url: &str) {
        self.client()
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("open {url}: {e}"));
    }

    /// Runs `script` (a function body) in the page, with `args` as `arguments`.
    pub(super) async fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.client()
            .execute(script, args)
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Types the admin token into the console and saves it.
    pub async fn enter_token(&self) {
        self.type_into("#token", TOKEN).await;
        self.click("#token-save").await;
    }

    /// Replaces what the field `css` finds holds with `text`, typed as a user would.
    pub async fn type_into(&self, css: &str, text: &str) {
        let field = self
            .client()
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"));
        field
            .clear()
            .await
            .unwrap_or_else(|e| panic!("clear {css}: {e}"));
        field
            .send_keys(text)
            .await
            .unwrap_or_else(|e| panic!("type into {css}: {e}"));
    }

    /// Clicks the element `css` finds, as a user would.
    pub async fn click(&self, css: &str) {
        self.client()
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("click {css}: {e}"));
    }

    /// The text of the element with this id, if there is one.
    async fn text_of(&self, id: &str) -> Option<String> {
        let v = self
            .js(
                "const e = document.getElementById(arguments[0]); return e ? e.textContent : null;",
                vec![json!(id)],
            )
            .await;
        v.as_str().map(str::to_string)
    }

    async fn live_status(&self) -> String {
        let v = self
            .js(
                "const b = document.getElementById('live-status'); return b ? b.dataset.status : null;",
                vec![],
            )
            .await;
        v.as_str().unwrap_or("(none)").to_string()
    }

    /// Saves a PNG of the window to `target/browser-screenshots/TEST-LABEL.png`.
    pub(super) async fn screenshot(&self, label: &str) -> PathBuf {
        let png = self
            .client()
            .screenshot()
            .await
            .unwrap_or_else(|e| panic!("screenshot {label}: {e}"));
        assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        let path = dir.join(format!("{}-{label}.png", self.test));
        std::fs::write(&path, &png).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        println!("screenshot: {}", path.display());
        path
    }

    /// Ends the session (Chromium quits); the driver goes when dropped.
    pub(super) async fn quit(mut self) {
        if let Some(client) = self.client.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), client.close()).await;
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The whole group: chromedriver and any Chromium it left behind.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.driver.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// `target/browser-screenshots`, found from the test executable (`target/debug/deps/e2e-…`).
fn screenshot_dir() -> PathBuf {
    let target = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(Path::to_path_buf))
        .filter(|t| t.join("debug").is_dir() || t.join("release").is_dir())
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("browser-screenshots")
}

/// Processes other than the emulator with one of its terminals open: a stray `relay serve`
/// still reading old links that now point at these terminal numbers takes the boards away.
fn foreign_holders(emu: &Emulator) -> Vec<String> {
    let ttys: Vec<PathBuf> = std::fs::read_dir(emu.dir.join("links"))
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::canonicalize(e.ok()?.path()).ok())
        .collect();
    let mut found = Vec::new();
    for proc_dir in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = proc_dir.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == emu.child.id() {
            continue;
        }
        let holds = std::fs::read_dir(proc_dir.path().join("fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| ttys.contains(&t)));
        if holds {
            let cmd = std::fs::read(proc_dir.path().join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            found.push(format!("{pid}: {}", cmd.trim()));
        }
    }
    found
}

// ---- what the pages show ---------------------------------------------------------------------

#[derive(Debug, Deserialize)]
struct Clock {
    text: String,
    running: bool,
}

/// One `article.board-card` of the round page, as read in the browser.
#[derive(Debug, Deserialize)]
struct Card {
    game: i64,
    board: i64,
    plies: usize,
    white: String,
    black: String,
    white_clock: Clock,
    black_clock: Clock,
    last_move: String,
}

impl Card {
    fn running(&self) -> Option<&'static str> {
        match (self.white_clock.running, self.black_clock.running) {
            (true, false) => Some("white"),
            (false, true) => Some("black"),
            _ => None,
        }
    }

    fn running_clock(&self) -> Option<&str> {
        match self.running()? {
            "white" => Some(&self.white_clock.text),
            _ => Some(&self.black_clock.text),
        }
    }
}

const READ_CARDS: &str = r#"
const clock = (card, side) => {
  const node = card.querySelector(`.${side}-clock`);
  return { text: node.textContent, running: node.classList.contains('running') };
};
return [...document.querySelectorAll('article.board-card')].map((card) => ({
  game: Number(card.dataset.gameId),
  board: Number(card.dataset.boardNo),
  plies: Number(card.dataset.plies),
  white: card.querySelector('.white-name').textContent,
  black: card.querySelector('.black-name').textContent,
  white_clock: clock(card, 'white'),
  black_clock: clock(card, 'black'),
  last_move: card.querySelector('footer .last-move').textContent,
}));
"#;

async fn cards(b: &Browser) -> Vec<Card> {
    let v = b.js(READ_CARDS, vec![]).await;
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("cards not as expected ({e}): {v}"))
}

/// The page's `data-plies` of one game's card.
async fn card_plies(b: &Browser, game: i64) -> Option<usize> {
    let v = b
        .js(
            "const c = document.querySelector(`article.board-card[data-game-id=\"${arguments[0]}\"]`);
             return c ? Number(c.dataset.plies) : null;",
            vec![json!(game)],
        )
        .await;
    v.as_u64().map(|n| n as usize)
}

/// The SAN of every move of a game from the API.
fn sans(game: &Value) -> Vec<String> {
    game["moves"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["san"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// What the console's moves cell says for a game from the standard start: "13 plies, 7. Nd5#".
fn moves_cell(game: &Value) -> String {
    let sans = sans(game);
    let Some(last) = sans.last() else {
        return "–".into();
    };
    let ply = sans.len();
    let dots = if ply % 2 == 1 { "." } else { "..." };
    let unit = if ply == 1 { "ply" } else { "plies" };
    format!("{ply} {unit}, {}{dots} {last}", ply.div_ceil(2))
}

/// A clock as the pages write it: h:mm:ss, a started second counting as whole.
fn clock_text(ms: i64) -> String {
    let s = (ms.max(0) + 999) / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// h:mm:ss
fn is_clock_text(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() == 3
        && !parts[0].is_empty()
        && parts[1].len() == 2
        && parts[2].len() == 2
        && parts.iter().all(|p| p.bytes().all(|c| c.is_ascii_digit()))
}

fn plies_of(game: &Value) -> usize {
    game["moves"].as_array().map_or(0, Vec::len)
}

/// Game id → plies, from `/api/rounds/{round}`.
fn round_plies(round: &Value) -> Vec<(i64, usize)> {
    round["games"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|g| (g["id"].as_i64().unwrap_or(-1), plies_of(g)))
        .collect()
}

/// Page and API agree on every game's plies; the differences otherwise.
async fn plies_agree(b: &Browser, api: &str) -> Result<(), String> {
    let round = try_json(api).ok_or("the API did not answer")?;
    let page: Vec<(i64, usize)> = cards(b).await.iter().map(|c| (c.game, c.plies)).collect();
    let mut want = round_plies(&round);
    let mut got = page;
    want.sort();
    got.sort();
    if want == got {
        Ok(())
    } else {
        Err(format!("API {want:?}, page {got:?}"))
    }
}

// ---- the tests -------------------------------------------------------------------------------

/// Four emulated boards: the round page shows a card per board with names and clocks, a move
/// reaches the page within a second of being committed, and the running clock ticks.
#[test]
fn browser_round_page_shows_boards_and_live_moves() {
    browser_test("round_page", || async {
        let dir = temp_dir("browser-round");
        let svc = Service::demo(
            &dir,
            &[
                "--boards",
                "4",
                "--speed",
                "4",
                "--seed",
                "3",
                "--admin-token",
                TOKEN,
            ],
        );
        let api_round = svc.url("/api/rounds/1");
        eventually!(60, "round 1 with 4 games, each with a move", async {
            let round = try_json(&api_round)?;
            let plies = round_plies(&round);
            (plies.len() == 4 && plies.iter().all(|&(_, n)| n > 0)).then_some(())
        });

        let b = Browser::start("round_page").await;
        b.goto(&svc.url("/round.html?id=1")).await;
        eventually!(20, "the page to go live", async {
            (b.live_status().await == "live").then_some(())
        });
        let shown = eventually!(15, "4 board cards", async {
            let c = cards(&b).await;
            (c.len() == 4).then_some(c)
        });

        // A card per board, in board order, with names and clocks.
        let round = try_json(&api_round).expect("the round over HTTP");
        let games = round["games"].as_array().expect("games");
        let boards: Vec<i64> = shown.iter().map(|c| c.board).collect();
        assert_eq!(boards, [1, 2, 3, 4], "cards: {shown:#?}");
        for card in &shown {
            let game = games
                .iter()
                .find(|g| g["id"].as_i64() == Some(card.game))
                .unwrap_or_else(|| panic!("card of game {} not in the API: {round}", card.game));
            assert_eq!(Some(card.board), game["board_no"].as_i64());
            let name = |side: &str| game[side]["name"].as_str().unwrap_or("N.N.").to_string();
            assert_eq!(card.white, name("white"), "{card:?}");
            assert_eq!(card.black, name("black"), "{card:?}");
            assert!(
                is_clock_text(&card.white_clock.text) && is_clock_text(&card.black_clock.text),
                "clocks not h:mm:ss: {card:?}"
            );
            assert!(!card.last_move.is_empty(), "no last move: {card:?}");
        }
        println!("cards: {shown:#?}");
        eventually!(10, "page and API to agree on every game's plies", async {
            plies_agree(&b, &api_round).await.ok()
        });
        b.screenshot("cards").await;

        // Each card notes when (browser wall clock) it first showed each ply count.
        b.js(
            "window.plyShownAt = {};
             const note = (card) => {
               const key = `${card.dataset.gameId}:${card.dataset.plies}`;
               if (!(key in window.plyShownAt)) window.plyShownAt[key] = Date.now();
             };
             document.querySelectorAll('article.board-card').forEach(note);
             new MutationObserver((changes) => changes.forEach((c) => note(c.target)))
               .observe(document.getElementById('grid'),
                        { subtree: true, attributes: true, attributeFilter: ['data-plies'] });
             // When the board message completing each move was read (the service stamps it).
             window.readAt = {};
             const probe = new WebSocket(arguments[0]);
             probe.onmessage = (ev) => {
               const m = JSON.parse(ev.data);
               if (m.type === 'move') window.readAt[`${m.game_id}:${m.move.ply}`] = m.read_at_ms;
             };
             return true;",
            vec![json!(
                svc.url("/api/rounds/1/ws").replacen("http://", "ws://", 1)
            )],
        )
        .await;

        // Latency: from when the API first shows a new move to when the card shows it.
        let mut samples: Vec<(i64, usize, Duration)> = Vec::new();
        let sampling_end = Instant::now() + Duration::from_secs(25);
        let mut turn = 0usize;
        while samples.len() < 5 && Instant::now() < sampling_end {
            let round = try_json(&api_round).expect("the round over HTTP");
            let live: Vec<(i64, usize)> = round["games"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|g| g["status"] == "live")
                .map(|g| (g["id"].as_i64().unwrap_or(-1), plies_of(g)))
                .collect();
            assert!(!live.is_empty(), "no live game left: {round}");
            let (game, mut before) = live[turn % live.len()];
            turn += 1;
            let api_game = svc.url(&format!("/api/games/{game}"));
            // Poll the API quickly for the next move of this game.
            let wait_end = Instant::now() + Duration::from_secs(8);
            let committed = loop {
                if Instant::now() > wait_end {
                    break None;
                }
                if let Some(g) = try_json(&api_game) {
                    let n = plies_of(&g);
                    if n > before {
                        break Some((n, Instant::now(), epoch_ms()));
                    }
                    before = n; // a take-back on the board
                }
                tokio::time::sleep(Duration::from_millis(15)).await;
            };
            let Some((plies, at, at_ms)) = committed else {
                continue;
            };
            let shown_at = loop {
                if card_plies(&b, game).await.is_some_and(|p| p >= plies) {
                    break Instant::now();
                }
                if at.elapsed() > Duration::from_secs(5) {
                    b.screenshot("latency-failure").await;
                    panic!(
                        "game {game}: ply {plies} was in the API {:?} ago and is not on the page \
                         (card says {:?})",
                        at.elapsed(),
                        card_plies(&b, game).await
                    );
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            };
            let latency = shown_at - at;
            // The same moment by the browser's clock (the machine's clock, like ours): below
            // zero when the page had the move before the API poll saw it.
            // And from the board: the reading that completed the move to the page showing
            // it (the settle time a board must be still for is part of it).
            let times = b
                .js(
                    "return { shown: window.plyShownAt[arguments[0]] ?? null,
                              read: window.readAt[arguments[0]] ?? null };",
                    vec![json!(format!("{game}:{plies}"))],
                )
                .await;
            let (page_ms, read_at) = (times["shown"].as_i64(), times["read"].as_i64());
            let page_vs_api = page_ms.map_or("?".to_string(), |p| format!("{:+}", p - at_ms));
            let from_board = match (page_ms, read_at) {
                (Some(p), Some(r)) => Duration::from_millis(u64::try_from(p - r).unwrap_or(0)),
                _ => panic!(
                    "game {game} ply {plies}: no page time {page_ms:?} or board time {read_at:?}"
                ),
            };
            println!(
                "latency: game {game} ply {plies} on the page {} ms after the board message \
                 that completed it, {} ms after the API showed it (page's own timestamp: \
                 {page_vs_api} ms)",
                from_board.as_millis(),
                latency.as_millis()
            );
            samples.push((game, plies, from_board.max(latency)));
        }
        assert!(
            samples.len() >= 3,
            "too few moves to measure in 25 s: {samples:?}"
        );
        let mut ms: Vec<u128> = samples.iter().map(|s| s.2.as_millis()).collect();
        ms.sort();
        println!(
            "latency over {} moves: min {} ms, median {} ms, max {} ms (limit {} ms)",
            ms.len(),
            ms[0],
            ms[ms.len() / 2],
            ms[ms.len() - 1],
            LATENCY_LIMIT.as_millis()
        );
        for (game, plies, latency) in &samples {
            assert!(
                *latency <= LATENCY_LIMIT,
                "game {game} ply {plies} took {latency:?} to reach the page (limit {LATENCY_LIMIT:?})"
            );
        }

        // The running clock ticks on its own: its text changes while no move is made.
        let mut ticked = None;
        let tick_end = Instant::now() + Duration::from_secs(15);
        while ticked.is_none() && Instant::now() < tick_end {
            let now = cards(&b).await;
            let Some(card) = now.iter().find(|c| c.running().is_some()) else {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            let (game, plies) = (card.game, card.plies);
            let side = card.running().unwrap_or_default();
            let text = card.running_clock().unwrap_or_default().to_string();
            let since = Instant::now();
            while since.elapsed() < Duration::from_millis(2500) {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let again = cards(&b).await;
                let Some(c) = again.iter().find(|c| c.game == game) else {
                    break;
                };
                if c.plies != plies || c.running() != Some(side) {
                    break; // a move: try again on a quiet clock
                }
                let now_text = c.running_clock().unwrap_or_default();
                if now_text != text {
                    ticked = Some((
                        game,
                        side,
                        text.clone(),
                        now_text.to_string(),
                        since.elapsed(),
                    ));
                    break;
                }
            }
        }
        let (game, side, from, to, after) =
            ticked.expect("a running clock changed its text within 2.5 s without a move");
        println!(
            "clock: game {game} {side} went {from} → {to} in {} ms, no move made",
            after.as_millis()
        );
        b.screenshot("ticking").await;
        b.quit().await;
    });
}

/// The service is killed while the boards play on: the page says it lost the live feed, and
/// once the service is back on the same port it is live again with every move in.
#[test]
fn browser_round_page_reconnects_after_restart() {
    browser_test("reconnect", || async {
        let emu = Emulator::start(
            "browser-reconnect",
            &[
                "--boards",
                "2",
                "--speed",
                "4",
                "--hold-secs",
                "8",
                "--seed",
                "5",
            ],
        );
        let dir = emu.dir.clone();
        let db = format!("sqlite://{}/relay.db", dir.display());
        let ports = emu.ports();
        let args = ["--db", db.as_str(), "--port", ports.as_str()];
        let port = free_port();
        let mut svc = Service::serve_on(&dir, "serve", port, &args);
        assert_eq!(svc.base, format!("http://127.0.0.1:{port}"));
        let api_round = svc.url("/api/rounds/1");
        eventually!(60, "round 1 with 2 games under way", async {
            let round = try_json(&api_round)?;
            let plies = round_plies(&round);
            (plies.len() == 2 && plies.iter().all(|&(_, n)| n > 0)).then_some(())
        });

        let b = Browser::start("reconnect").await;
        b.goto(&svc.url("/round.html?id=1")).await;
        eventually!(20, "the page to go live", async {
            (b.live_status().await == "live").then_some(())
        });
        eventually!(10, "page and API to agree before the kill", async {
            plies_agree(&b, &api_round).await.ok()
        });
        let before: Vec<(i64, usize)> = cards(&b).await.iter().map(|c| (c.game, c.plies)).collect();
        b.screenshot("before-kill").await;

        svc.kill();
        let killed = Instant::now();
        let status = eventually!(10, "the page to notice the service is gone", async {
            let s = b.live_status().await;
            (s != "live").then_some(s)
        });
        assert!(
            status == "reconnecting" || status == "offline",
            "status after the kill: {status}"
        );
        println!(
            "after SIGKILL the page said {status:?} within {} ms",
            killed.elapsed().as_millis()
        );
        b.screenshot("service-down").await;

        // The boards play on while the service is down.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let svc = Service::serve_on(&dir, "serve-again", port, &args);
        let restarted = Instant::now();
        eventually!(30, "the page to be live again", async {
            (b.live_status().await == "live").then_some(())
        });
        println!(
            "live again {} ms after the restart ({} ms after the kill)",
            restarted.elapsed().as_millis(),
            killed.elapsed().as_millis()
        );
        // The restarted service reads the boards again: more moves than before the kill.
        let before_total: usize = before.iter().map(|&(_, p)| p).sum();
        let mut api_now = String::new();
        eventually!(
            20,
            format!(
                "the restarted service to record moves again (API now {api_now}, before the kill \
                 {before:?}); other processes holding the boards' terminals: {:?}\nlog:\n{}",
                foreign_holders(&emu),
                svc.log_text()
            ),
            async {
                let plies = round_plies(&try_json(&api_round)?);
                api_now = format!("{plies:?}");
                (plies.iter().map(|&(_, p)| p).sum::<usize>() > before_total).then_some(())
            },
        );
        let mut last = String::new();
        eventually!(
            10,
            format!("the page to catch up with the API after the restart: {last}"),
            async {
                match plies_agree(&b, &api_round).await {
                    Ok(()) => Some(()),
                    Err(e) => {
                        last = e;
                        None
                    }
                }
            },
        );
        let after: Vec<(i64, usize)> = cards(&b).await.iter().map(|c| (c.game, c.plies)).collect();
        println!(
            "plies before the kill {before:?}, after the restart {after:?} ({} ms after the restart)",
            restarted.elapsed().as_millis()
        );
        for (game, plies) in &before {
            let now = after.iter().find(|(g, _)| g == game).map(|&(_, p)| p);
            assert!(
                now.is_some_and(|p| p >= *plies),
                "game {game} had {plies} plies before the kill, {now:?} after:\n{}",
                svc.log_text()
            );
        }
        assert_eq!(b.live_status().await, "live");
        b.screenshot("caught-up").await;

        // Heartbeats that arrive late: the page says it is behind, and by how much. The
        // page's clock is put 30 s ahead, which makes every heartbeat look 30 s old, as on
        // a link that holds messages back.
        b.js(
            "window.realNow = Date.now; Date.now = () => window.realNow.call(Date) + 30000;",
            vec![],
        )
        .await;
        let behind = eventually!(8, "the page to say it is behind", async {
            // The state first, then its words: the page sets both in one go, so words read
            // after the state are that state's (read the other way round, a tick of the page
            // between the two reads paired "live" with "behind").
            if b.live_status().await != "behind" {
                return None;
            }
            b.text_of("live-status").await
        });
        assert!(
            ["behind by 29 s", "behind by 30 s", "behind by 31 s"].contains(&behind.as_str()),
            "the badge says {behind:?}"
        );
        b.screenshot("behind").await;
        b.js("Date.now = window.realNow;", vec![]).await;
        eventually!(
            8,
            "the page to be live again once heartbeats are on time",
            async { (b.live_status().await == "live").then_some(()) }
        );

        // A connection that goes silent without closing (the service frozen, as behind a
        // dead Wi-Fi link): given up after 15 s of silence, and live again once the
        // service answers, with every move in.
        let pid = svc.child.id().to_string();
        let signal = |sig: &str| {
            let ok = Command::new("kill")
                .args([sig, pid.as_str()])
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "kill {sig} {pid}");
        };
        signal("-STOP");
        let stopped = Instant::now();
        let status = eventually!(25, "the page to give up the silent connection", async {
            let s = b.live_status().await;
            (s != "live" && s != "behind").then_some(s)
        });
        let silent_ms = stopped.elapsed().as_millis();
        signal("-CONT");
        assert_eq!(status, "reconnecting");
        assert!(
            (14_000..20_000).contains(&silent_ms),
            "the silent connection was given up after {silent_ms} ms"
        );
        println!("a frozen service: the page reconnected after {silent_ms} ms of silence");
        eventually!(30, "the page to be live again after the freeze", async {
            (b.live_status().await == "live").then_some(())
        });
        eventually!(20, "the page to catch up after the freeze", async {
            plies_agree(&b, &api_round).await.ok()
        });
        b.quit().await;
    });
}

/// A game ends by checkmate on the board; the arbiter opens the console, is told the token is
/// needed, enters it and confirms the result with one click.
#[test]
fn browser_console_confirms_a_result() {
    browser_test("console_confirm", || async {
        let dir = temp_dir("browser-console");
        let svc = Service::demo(
            &dir,
            &[
                "--boards",
                "1",
                "--speed",
                "20",
                "--seed",
                "1",
                "--admin-token",
                TOKEN,
            ],
        );
        // The first bundled game is Légal's mate: 7 moves, 1-0 on the board.
        let api_round = svc.url("/api/rounds/1");
        let game = eventually!(
            60,
            format!("the first game to finish:\n{}", svc.log_text()),
            async {
                let round = try_json(&api_round)?;
                let g = round["games"].as_array()?.first()?.clone();
                (g["status"] == "finished").then_some(g)
            },
        );
        let id = game["id"].as_i64().expect("game id");
        assert_eq!(game["result"], "1-0", "{game}");
        // The board's clock runs on after the mate (and is reset for the next game); the game
        // has no running clock any more.
        assert_eq!(game["clock"], Value::Null, "{game}");
        assert_eq!(
            sans(&game).last().map(String::as_str),
            Some("Nd5#"),
            "{game}"
        );
        println!(
            "game {id} finished {} after {} plies",
            game["result"],
            plies_of(&game)
        );

        let b = Browser::start("console_confirm").await;
        b.goto(&svc.url("/console.html?round=1")).await;
        let row = format!("#games tr[data-game-id=\"{id}\"]");
        let button = format!("{row} button.confirm-result");
        let c = b.client();
        let confirm = c
            .wait()
            .at_most(Duration::from_secs(15))
            .for_element(Locator::Css(&button))
            .await
            .unwrap_or_else(|e| panic!("no confirm button for game {id}: {e}"));
        let cell = c
            .find(Locator::Css(&format!("{row} .plies")))
            .await
            .expect("the row's moves cell")
            .text()
            .await
            .expect("moves cell text");
        assert_eq!(
            cell,
            moves_cell(&game),
            "the row does not show the game played"
        );
        let label = confirm.text().await.expect("button text");
        assert!(label.contains("1-0"), "button says {label:?}");

        // Without the token the action is refused, and the page says what to do.
        confirm.click().await.expect("click confirm");
        let error = eventually!(10, "an error about the missing token", async {
            let v = b
                .js(
                    "const e = document.getElementById('error'); return e.hidden ? null : e.textContent;",
                    vec![],
                )
                .await;
            v.as_str().map(str::to_string)
        });
        assert!(error.contains("token"), "error shown: {error:?}");
        let still = try_json(&svc.url(&format!("/api/games/{id}"))).expect("game over HTTP");
        assert_eq!(still["status"], "finished", "confirmed without a token");
        b.screenshot("no-token").await;

        // The arbiter enters the token and confirms.
        b.enter_token().await;
        let state = c
            .find(Locator::Css("#token-state"))
            .await
            .expect("#token-state")
            .text()
            .await
            .expect("token state text");
        assert!(state.contains("saved"), "token state: {state:?}");
        b.screenshot("before-confirm").await;
        c.find(Locator::Css(&button))
            .await
            .expect("the confirm button is still there")
            .click()
            .await
            .expect("click confirm");

        let confirmed = eventually!(
            10,
            format!("the game to be confirmed:\n{}", svc.log_text()),
            async {
                let g = try_json(&svc.url(&format!("/api/games/{id}")))?;
                (g["status"] == "confirmed").then_some(g)
            },
        );
        assert_eq!(confirmed["result"], "1-0", "{confirmed}");
        let shown = eventually!(10, "the row to show the confirmation", async {
            let v = b
                .js(
                    "const row = document.querySelector(arguments[0]);
                     if (!row) return null;
                     return { status: row.dataset.status,
                              status_text: row.querySelector('.status').textContent,
                              result: row.querySelector('.result').textContent,
                              moves: row.querySelector('.plies').textContent,
                              button: row.querySelector('button.confirm-result') !== null,
                              error: document.getElementById('error').hidden ? null
                                     : document.getElementById('error').textContent };",
                    vec![json!(row)],
                )
                .await;
            (v["status"] == "confirmed" && v["status_text"] == "confirmed" && v["button"] == false)
                .then_some(v)
        });
        assert_eq!(shown["result"], "1-0", "{shown}");
        // Still the game that was played and confirmed, move for move.
        assert_eq!(
            sans(&confirmed),
            sans(&game),
            "the confirmed game's moves changed:\nbefore {game}\nafter {confirmed}"
        );
        assert_eq!(shown["moves"], moves_cell(&game), "{shown}");
        assert_eq!(
            shown["error"],
            Value::Null,
            "an error is still shown: {shown}"
        );
        println!("console row after confirming: {shown}");
        b.screenshot("confirmed").await;

        // Spectators see the clocks of the last moves, standing, while the e-board's clock is
        // set up for the next game.
        eventually!(30, "the e-board to start its next game", async {
            let boards = try_json(&svc.url("/api/eboards"))?;
            (boards[0]["game_id"].as_i64()? != id).then_some(())
        });
        b.goto(&svc.url("/round.html?id=1")).await;
        let last_clk = |white: bool| {
            let moves = confirmed["moves"].as_array().expect("moves");
            let ms = moves
                .iter()
                .rev()
                .find(|m| (m["ply"].as_i64().unwrap_or(0) % 2 == 1) == white)
                .and_then(|m| m["clk_ms"].as_i64())
                .expect("a clock on the side's last move");
            clock_text(ms)
        };
        let card = eventually!(15, "the finished game's card", async {
            cards(&b).await.into_iter().find(|c| c.game == id)
        });
        assert_eq!(card.white_clock.text, last_clk(true), "{card:?}");
        assert_eq!(card.black_clock.text, last_clk(false), "{card:?}");
        assert_eq!(card.running(), None, "{card:?}");
        b.screenshot("finished-card").await;
        b.quit().await;
    });
}

/// Pairings of a round of `boards` boards as JSON, everyone a "Player".
fn plain_pairings(boards: u32) -> Value {
    let player = |board: u32, side: &str| json!({"name": format!("Player {side} {board:03}"), "rating": 1500 + board});
    Value::Array(
        (1..=boards)
            .map(|b| json!({"board_no": b, "white": player(b, "white"), "black": player(b, "black")}))
            .collect(),
    )
}

/// The same boards as a PGN of tags only, as pairing programs export them; board 512's White
/// has accents, to be found by a plain-letter query.
fn pgn_pairings(boards: u32) -> String {
    let mut pgn = String::new();
    for b in 1..=boards {
        let white = if b == 512 {
            "Hågensen, Åsa".to_string()
        } else {
            format!("Player white {b:03}")
        };
        pgn.push_str(&format!(
            "[Event \"Big round\"]\n[Round \"1.{b}\"]\n[White \"{white}\"]\n\
             [Black \"Player black {b:03}\"]\n[WhiteElo \"{}\"]\n[Result \"*\"]\n\n*\n\n",
            1500 + b
        ));
    }
    pgn
}

const MINIATURE: &str = "[Event \"Big round\"]\n[Result \"*\"]\n\n\
1. e4 {[%clk 1:30:00]} e5 {[%clk 1:29:50]} 2. f4 {[%clk 1:29:40]} exf4 {[%clk 1:29:30]} \
3. Bc4 {[%clk 1:29:20]} Qh4+ {[%clk 1:29:10]} 4. Kf1 {[%clk 1:29:00]} *\n";

/// The page is wider than the window (a phone would scroll sideways): its widths, else `None`.
/// The window's width is the viewport's, less a vertical scroll bar if there is one (a page
/// 20 px too wide under a scroll bar of 15 px scrolls sideways too).
async fn sideways_overflow(b: &Browser) -> Option<Value> {
    let v = b
        .js(
            "const d = document.documentElement;
             return { scroll: d.scrollWidth, window: d.clientWidth, inner: window.innerWidth };",
            vec![],
        )
        .await;
    (v["scroll"].as_i64()? > v["window"].as_i64()?).then_some(v)
}

/// The page's own figures for its socket's messages (`window.relayTiming`, kept by
/// `web/js/api.js`: their count, the script's time handling them, and the time from a burst's
/// first message to the end of the frame showing it) and its paint timings (first contentful
/// and largest contentful paint, from the browser's PerformanceObserver), printed under `what`
/// and returned; `reset` starts the message figures again.
async fn page_timing(b: &Browser, what: &str, reset: bool) -> Value {
    let v = b
        .js(
            "const t = window.relayTiming;
             const out = { messages: t.messages, handle_ms: t.handleMs, handle_max_ms: t.handleMaxMs,
                           paints: t.paints, paint_ms: t.paintMs, paint_max_ms: t.paintMaxMs };
             if (arguments[0]) t.reset();
             const fcp = performance.getEntriesByName('first-contentful-paint')[0];
             out.fcp_ms = fcp ? fcp.startTime : null;
             const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
             out.shown_ms = mark('relay:round-shown');
             out.painted_ms = mark('relay:round-painted');
             return new Promise((resolve) => {
               let lcp = null;
               const o = new PerformanceObserver((list) => {
                 for (const e of list.getEntries()) lcp = e.startTime;
               });
               o.observe({ type: 'largest-contentful-paint', buffered: true });
               setTimeout(() => { o.disconnect(); out.lcp_ms = lcp; resolve(out); }, 100);
             });",
            vec![json!(reset)],
        )
        .await;
    let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let n = v["messages"].as_f64().unwrap_or(0.0).max(1.0);
    let paints = v["paints"].as_f64().unwrap_or(0.0).max(1.0);
    println!(
        "timing, {what}: {} messages handled in {:.1} ms ({:.2} ms each, longest {:.1} ms); \
         {} frames after them, {:.1} ms each from message to frame (longest {:.1} ms); \
         first contentful paint {:.0} ms, largest {:.0} ms after navigation; the round's \
         boards placed {:.0} ms, painted {:.0} ms after navigation",
        v["messages"],
        f("handle_ms"),
        f("handle_ms") / n,
        f("handle_max_ms"),
        v["paints"],
        f("paint_ms") / paints,
        f("paint_max_ms"),
        f("fcp_ms"),
        f("lcp_ms"),
        f("shown_ms"),
        f("painted_ms"),
    );
    v
}

/// What the game page shows for the move on the board: the current move's ply (0 at the
/// start) and the board's accessible label.
async fn game_view(b: &Browser) -> (i64, String) {
    let v = b
        .js(
            "const cur = document.querySelector('#moves .move.current');
             return { ply: cur ? Number(cur.dataset.ply) : 0,
                      label: document.getElementById('board').getAttribute('aria-label') };",
            vec![],
        )
        .await;
    (
        v["ply"].as_i64().unwrap_or(-1),
        v["label"].as_str().unwrap_or("").to_string(),
    )
}

/// The pieces a chessground board in `css` shows, as a FEN's placement field (read from the
/// squares its piece elements stand on; pieces fading out after a capture left out).
async fn board_placement(b: &Browser, css: &str) -> String {
    let v = b
        .js(
            "const board = document.querySelector(arguments[0] + ' cg-board');
             if (!board) return null;
             const letter = { king: 'k', queen: 'q', rook: 'r', bishop: 'b', knight: 'n', pawn: 'p' };
             const at = {};
             for (const p of board.querySelectorAll('piece')) {
               if (p.classList.contains('fading') || p.classList.contains('ghost') || !p.cgKey) continue;
               const role = Object.keys(letter).find((r) => p.classList.contains(r));
               const l = letter[role];
               at[p.cgKey] = p.classList.contains('white') ? l.toUpperCase() : l;
             }
             const rows = [];
             for (let r = 8; r >= 1; r--) {
               let row = '', empty = 0;
               for (const f of 'abcdefgh') {
                 const piece = at[f + r];
                 if (!piece) { empty += 1; continue; }
                 if (empty) row += empty;
                 row += piece;
                 empty = 0;
               }
               rows.push(row + (empty ? empty : ''));
             }
             return rows.join('/');",
            vec![json!(css)],
        )
        .await;
    v.as_str().unwrap_or("").to_string()
}

/// Waits for the board in `css` to show the placement of `fen` (a move may be animating).
async fn board_shows(b: &Browser, css: &str, fen: &str) {
    let want = fen.split(' ').next().unwrap_or("").to_string();
    let mut seen = String::new();
    eventually!(5, format!("{css} to show {want}, it shows {seen}"), async {
        seen = board_placement(b, css).await;
        (seen == want).then_some(())
    });
}

/// A 700-board round. Pairings arrive while a spectator has the round page open (700 game
/// messages at once); the arbiter then loads corrected pairings as a PGN file from the
/// console. The round page shows all 700 boards while drawing only those near the screen,
/// finds a player by a plain-letter query, and shows a correction on that board live. Then, at
/// a phone's width, the game page steps through the moves by keyboard and gives moves and
/// clocks as text.
#[test]
fn browser_700_boards_from_console_pairings_and_a_phone() {
    browser_test("big_round", || async {
        const BOARDS: u32 = 700;
        let dir = temp_dir("browser-big-round");
        let svc = Service::serve_ports(&dir, &format!("{}/no-such-port-*", dir.display()));
        let b = Browser::start("big_round").await;
        let c = b.client();

        // A spectator waits on the empty round; the pairings come in all at once.
        b.goto(&svc.url("/round.html?id=1")).await;
        eventually!(20, "the empty round page to go live", async {
            (b.live_status().await == "live").then_some(())
        });
        let sent = Instant::now();
        let json = plain_pairings(BOARDS).to_string();
        let answer = svc.admin(
            "PUT",
            "/api/rounds/1/pairings",
            Some(("application/json", json.as_bytes())),
        );
        assert_eq!(answer.status, 200, "{}", answer.text());
        let arrived = eventually!(30, "the open page to show 700 boards", async {
            (b.text_of("count").await? == format!("{BOARDS} boards")).then(|| sent.elapsed())
        });
        println!(
            "pairings of {BOARDS} boards on the open round page {} ms after the request",
            arrived.as_millis()
        );
        page_timing(&b, "700 new pairings on the open round page", true).await;
        // Placing every card for each of the 700 messages once took ~10 s here.
        assert!(
            arrived <= Duration::from_secs(5),
            "new pairings took {arrived:?} to show"
        );

        // The arbiter: token, then the corrected pairings through the file picker, as PGN.
        let pairings = dir.join("round-1-pairings.pgn");
        std::fs::write(&pairings, pgn_pairings(BOARDS)).expect("write the pairings file");
        b.goto(&svc.url("/console.html?round=1")).await;
        b.enter_token().await;
        eventually!(20, "the console to list the round's games", async {
            let v = b
                .js(
                    "return document.querySelectorAll('#games tbody tr').length;",
                    vec![],
                )
                .await;
            (v == BOARDS).then_some(())
        });
        c.find(Locator::Css("#pairings-file"))
            .await
            .expect("#pairings-file")
            .send_keys(&pairings.display().to_string())
            .await
            .expect("choose the pairings file");
        c.find(Locator::Css("#pairings-upload"))
            .await
            .expect("#pairings-upload")
            .click()
            .await
            .expect("load the pairings");
        // The round has games, so the console asks first.
        let question = eventually!(10, "the console to ask before replacing players", async {
            c.get_alert_text().await.ok()
        });
        assert!(question.contains("replaced"), "asked {question:?}");
        c.accept_alert().await.expect("accept");
        let said = eventually!(30, "the console to report the pairings loaded", async {
            let text = b.text_of("pairings-msg").await?;
            text.contains("loaded").then_some(text)
        });
        assert_eq!(said, format!("Pairings loaded from PGN: {BOARDS} boards."));
        let game = eventually!(10, "board 512's row to show the new name", async {
            let round = try_json(&svc.url("/api/rounds/1"))?;
            let game = round["games"]
                .as_array()?
                .iter()
                .find(|g| g["board_no"] == 512)?
                .clone();
            let row = b
                .js(
                    "const row = document.querySelector(`#games tr[data-game-id=\"${arguments[0]}\"] .white`);
                     return row ? row.textContent : null;",
                    vec![game["id"].clone()],
                )
                .await;
            row.as_str()?.contains("Hågensen").then_some(game)
        });
        assert_eq!(game["white"]["name"], "Hågensen, Åsa", "{game}");
        assert_eq!(game["white"]["rating"], 2012, "{game}");
        let id = game["id"].as_i64().expect("game id");
        b.screenshot("console-pairings").await;

        // The round page: every board, few of them drawn.
        let opened = Instant::now();
        b.goto(&svc.url("/round.html?id=1")).await;
        let counted = eventually!(30, "the page to count 700 boards", async {
            (b.text_of("count").await? == format!("{BOARDS} boards")).then_some(opened.elapsed())
        });
        eventually!(20, "the page to go live", async {
            (b.live_status().await == "live").then_some(())
        });
        let census = b
            .js(
                "return { cards: document.querySelectorAll('article.board-card').length,
                          boards: document.querySelectorAll('article.board-card cg-board').length };",
                vec![],
            )
            .await;
        println!(
            "round page: {} cards, {} boards drawn, 700 counted {} ms after opening",
            census["cards"],
            census["boards"],
            counted.as_millis()
        );
        page_timing(&b, "the round page opened on 700 boards", true).await;
        assert_eq!(census["cards"], BOARDS, "{census}");
        let drawn = census["boards"].as_u64().unwrap_or(0);
        assert!(
            (1..=150).contains(&drawn),
            "{drawn} boards drawn: only those near the screen should be"
        );

        // The last board is drawn once scrolled to, and the drawn count stays small.
        b.js(
            "window.scrollTo(0, document.documentElement.scrollHeight);",
            vec![],
        )
        .await;
        eventually!(10, "the last board to be drawn", async {
            let v = b
                .js(
                    "const cards = document.querySelectorAll('article.board-card');
                     const last = cards[cards.length - 1];
                     return { board: Number(last.dataset.boardNo), drawn: !!last.querySelector('cg-board piece'),
                              total: document.querySelectorAll('article.board-card cg-board').length };",
                    vec![],
                )
                .await;
            (v["board"] == BOARDS && v["drawn"] == true && v["total"].as_u64()? <= 150)
                .then_some(())
        });
        b.screenshot("scrolled-to-the-end").await;

        // A plain-letter query finds the accented name.
        let filter = c.find(Locator::Css("#filter")).await.expect("#filter");
        filter.send_keys("hagensen").await.expect("type a query");
        let shown = eventually!(10, "the filter to leave one board", async {
            let v = b
                .js(
                    "const shown = [...document.querySelectorAll('article.board-card')].filter((c) => !c.hidden);
                     return { count: document.getElementById('count').textContent,
                              boards: shown.map((c) => Number(c.dataset.boardNo)),
                              drawn: shown.length === 1 && !!shown[0].querySelector('cg-board piece') };",
                    vec![],
                )
                .await;
            (v["count"] == json!(format!("1 of {BOARDS} boards")) && v["drawn"] == true)
                .then_some(v)
        });
        assert_eq!(shown["boards"], json!([512]), "{shown}");

        // The arbiter enters the game from a score sheet; the card follows within a second.
        page_timing(&b, "the filter", true).await;
        let sent = Instant::now();
        let answer = svc.admin(
            "PUT",
            &format!("/api/games/{id}/pgn"),
            Some(("application/x-chess-pgn", MINIATURE.as_bytes())),
        );
        assert_eq!(answer.status, 200, "{}", answer.text());
        let took = eventually!(10, "the card to show the game", async {
            (card_plies(&b, id).await == Some(7)).then(|| sent.elapsed())
        });
        println!(
            "board 512 corrected: on the page {} ms after the request",
            took.as_millis()
        );
        // Everything since the filter (the correction's messages, the board drawn again).
        tokio::time::sleep(Duration::from_millis(300)).await;
        page_timing(&b, "board 512's correction (filtered to it)", true).await;
        assert!(took <= LATENCY_LIMIT, "took {took:?}");
        let card = cards(&b)
            .await
            .into_iter()
            .find(|c| c.game == id)
            .expect("the card of board 512");
        assert_eq!(card.last_move, "4. Kf1", "{card:?}");
        assert_eq!(card.white, "Hågensen, Åsa", "{card:?}");
        let api_game = try_json(&svc.url(&format!("/api/games/{id}"))).expect("the game");
        let fen_at = |ply: usize| -> String {
            if ply == 0 {
                api_game["start_fen"]
                    .as_str()
                    .expect("start FEN")
                    .to_string()
            } else {
                api_game["moves"][ply - 1]["fen"]
                    .as_str()
                    .expect("a FEN")
                    .to_string()
            }
        };
        // The card's board shows the position after the last move.
        board_shows(
            &b,
            &format!("article.board-card[data-game-id=\"{id}\"]"),
            &fen_at(7),
        )
        .await;
        b.screenshot("filtered").await;

        // The same on board 1, with every board shown: what a move costs a page of 700.
        let first = try_json(&svc.url("/api/rounds/1"))
            .and_then(|r| {
                r["games"]
                    .as_array()?
                    .iter()
                    .find(|g| g["board_no"] == 1)?
                    .get("id")?
                    .as_i64()
            })
            .expect("board 1's game");
        b.js(
            "const f = document.getElementById('filter');
             f.value = '';
             f.dispatchEvent(new Event('input'));
             window.scrollTo(0, 0);",
            vec![],
        )
        .await;
        eventually!(10, "every board shown again, board 1 drawn", async {
            let v = b
                .js(
                    "const c = document.querySelector('article.board-card[data-board-no=\"1\"]');
                     return { count: document.getElementById('count').textContent,
                              drawn: !!(c && c.querySelector('.board-link cg-board piece')) };",
                    vec![],
                )
                .await;
            (v["count"] == json!(format!("{BOARDS} boards")) && v["drawn"] == true).then_some(())
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        page_timing(&b, "the filter cleared", true).await;
        let sent = Instant::now();
        let answer = svc.admin(
            "PUT",
            &format!("/api/games/{first}/pgn"),
            Some(("application/x-chess-pgn", MINIATURE.as_bytes())),
        );
        assert_eq!(answer.status, 200, "{}", answer.text());
        let took = eventually!(10, "board 1's card to show the game", async {
            (card_plies(&b, first).await == Some(7)).then(|| sent.elapsed())
        });
        println!(
            "board 1 corrected among 700 shown: on the page {} ms after the request",
            took.as_millis()
        );
        assert!(took <= LATENCY_LIMIT, "took {took:?}");
        board_shows(
            &b,
            &format!("article.board-card[data-game-id=\"{first}\"]"),
            &fen_at(7),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        page_timing(&b, "board 1's correction among 700 boards shown", true).await;

        // A phone: nothing wider than the screen, on the round page and the game page.
        c.set_window_size(390, 844)
            .await
            .expect("a phone-sized window");
        let width = b.js("return window.innerWidth;", vec![]).await;
        assert!(
            width.as_i64().is_some_and(|w| w <= 400),
            "the window is {width} px wide"
        );
        b.goto(&svc.url("/round.html?id=1")).await;
        eventually!(30, "the round page at a phone's width", async {
            (b.text_of("count").await? == format!("{BOARDS} boards")).then_some(())
        });
        if let Some(widths) = sideways_overflow(&b).await {
            panic!("the round page scrolls sideways on a phone: {widths}");
        }
        b.screenshot("phone-round").await;

        b.goto(&svc.url(&format!("/game.html?id={id}"))).await;
        let latest = eventually!(20, "the game page's last move", async {
            let text = b.text_of("latest").await?;
            (!text.is_empty()).then_some(text)
        });
        assert_eq!(latest, "Last move: 4. Kf1");
        if let Some(widths) = sideways_overflow(&b).await {
            panic!("the game page scrolls sideways on a phone: {widths}");
        }
        // Moves and clocks are text a screen reader reads, each clock named.
        let text = b
            .js(
                "return { moves: document.getElementById('moves').textContent,
                          result: document.getElementById('result').textContent,
                          white: document.getElementById('white-clock').getAttribute('aria-label'),
                          black: document.getElementById('black-clock').getAttribute('aria-label'),
                          board: document.querySelector('#board cg-board').getBoundingClientRect().width };",
                vec![],
            )
            .await;
        let moves = text["moves"].as_str().unwrap_or("");
        for part in [
            "1.", "e4", "1:30:00", "Qh4+", "1:29:10", "4.", "Kf1", "1:29:00",
        ] {
            assert!(
                moves.contains(part),
                "{part:?} not in the move list {moves:?}"
            );
        }
        assert_eq!(text["result"], "in play", "{text}");
        assert_eq!(text["white"], "White's clock", "{text}");
        assert_eq!(text["black"], "Black's clock", "{text}");
        assert!(
            text["board"]
                .as_f64()
                .is_some_and(|w| w > 200.0 && w <= 390.0),
            "the board is {} px wide on a 390 px screen",
            text["board"]
        );
        b.screenshot("phone-game").await;

        // The keyboard steps through the game.
        assert_eq!(game_view(&b).await.0, 7, "the page opens at the last move");
        let body = c.find(Locator::Css("body")).await.expect("body");
        let press = |key: fantoccini::key::Key| char::from(key).to_string();
        body.send_keys(&press(fantoccini::key::Key::Home))
            .await
            .expect("press Home");
        let (ply, label) = game_view(&b).await;
        assert_eq!((ply, label.as_str()), (0, "Board 512: starting position"));
        board_shows(&b, "#board", &fen_at(0)).await;
        body.send_keys(&(press(fantoccini::key::Key::Right) + &press(fantoccini::key::Key::Right)))
            .await
            .expect("press → twice");
        let (ply, label) = game_view(&b).await;
        assert_eq!(
            (ply, label.as_str()),
            (2, "Board 512: position after 1... e5")
        );
        board_shows(&b, "#board", &fen_at(2)).await;
        body.send_keys(&press(fantoccini::key::Key::End))
            .await
            .expect("press End");
        body.send_keys(&press(fantoccini::key::Key::Left))
            .await
            .expect("press ←");
        let (ply, label) = game_view(&b).await;
        assert_eq!(
            (ply, label.as_str()),
            (6, "Board 512: position after 3... Qh4+")
        );
        board_shows(&b, "#board", &fen_at(6)).await;
        // 3... Qh4+ gives check: the king in check is marked, and the move's two squares.
        let marks = b
            .js(
                "return { check: document.querySelectorAll('#board square.check').length,
                          last: document.querySelectorAll('#board square.last-move').length };",
                vec![],
            )
            .await;
        assert_eq!(marks, json!({"check": 1, "last": 2}), "after 3... Qh4+");
        // The move back has been animated by now.
        tokio::time::sleep(Duration::from_millis(400)).await;
        b.screenshot("phone-game-stepped").await;

        // A click on a move shows it.
        b.click("#moves .move[data-ply='3']").await;
        let (ply, label) = game_view(&b).await;
        assert_eq!(
            (ply, label.as_str()),
            (3, "Board 512: position after 2. f4")
        );
        board_shows(&b, "#board", &fen_at(3)).await;

        // Flip: file a goes from White's left to White's right.
        let files = "const x = (f) => [...document.querySelectorAll('#board coords.files coord')]
                         .find((t) => t.textContent === f).getBoundingClientRect().left;
                     return x('a') < x('h') ? 'white below' : 'black below';";
        assert_eq!(b.js(files, vec![]).await, "white below");
        b.click("#flip").await;
        assert_eq!(b.js(files, vec![]).await, "black below");
        assert_eq!(game_view(&b).await.0, 3, "flipping keeps the move shown");
        board_shows(&b, "#board", &fen_at(3)).await;
        // Black at the bottom: the white king (e1) is drawn above the black one (e8).
        let kings = b
            .js(
                "const y = (c) => document.querySelector(`#board piece.king.${c}`).getBoundingClientRect().top;
                 return y('white') < y('black');",
                vec![],
            )
            .await;
        assert_eq!(kings, true, "the board is not turned");
        b.screenshot("phone-game-flipped").await;

        // Copy FEN hands the shown position's FEN to the clipboard. What reaches the
        // clipboard API is noted on its way (headless Chromium may refuse the clipboard; the
        // page then falls back to a selection copy, which the status line reports the same).
        let fen_after_3 = fen_at(3);
        b.js(
            "window.copied = [];
             const write = navigator.clipboard?.writeText?.bind(navigator.clipboard);
             if (navigator.clipboard) navigator.clipboard.writeText = (t) => {
               window.copied.push(t);
               return write(t);
             };",
            vec![],
        )
        .await;
        b.click("#copy-fen").await;
        eventually!(5, "the page to say the FEN was copied", async {
            (b.text_of("copy-status").await? == "FEN copied.").then_some(())
        });
        let copied = b.js("return window.copied;", vec![]).await;
        assert_eq!(
            copied,
            json!([fen_after_3]),
            "FEN of the position after 2. f4"
        );

        // Download PGN: the link names a file and gives the game's PGN.
        let link = b
            .js(
                "const a = document.getElementById('download-pgn');
                 return fetch(a.href).then(async (r) => ({ file: a.download, status: r.status,
                   type: r.headers.get('Content-Type'), text: await r.text() }));",
                vec![],
            )
            .await;
        assert_eq!(link["file"], format!("game-{id}.pgn"), "{link}");
        assert_eq!(link["status"], 200, "{link}");
        assert!(
            link["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("application/x-chess-pgn")),
            "{link}"
        );
        let pgn = blocking(|| {
            agent()
                .get(&svc.url(&format!("/api/games/{id}/pgn")))
                .call()
                .expect("the game's PGN")
                .body_mut()
                .read_to_string()
                .expect("PGN text")
        });
        assert_eq!(link["text"], pgn, "the downloaded PGN is the game's");
        assert!(pgn.contains("4. Kf1"), "{pgn}");
        b.quit().await;
    });
}

/// Before the round starts, the e-board that turned up as board 1 is put on board 3 from the
/// console (the arbiter answers the console's question); the game then played on it is board
/// 3's, with board 3's players, and board 1 stays empty.
#[test]
fn browser_console_puts_an_eboard_on_a_board() {
    browser_test("console_assign", || async {
        // Game time: 100 s set up before the first move, at 4× speed: 25 s to assign (it
        // takes about 3).
        let emu = Emulator::start(
            "browser-assign",
            &[
                "--boards",
                "1",
                "--speed",
                "4",
                "--hold-secs",
                "100",
                "--seed",
                "2",
            ],
        );
        let svc = Service::serve_ports(&emu.dir, &emu.ports());
        let started = Instant::now();
        let board = eventually!(30, "the e-board to turn up on board 1", async {
            let boards = try_json(&svc.url("/api/eboards"))?;
            let b = boards.as_array()?.first()?.clone();
            (b["board_no"] == 1 && b["connected"] == true).then_some(b)
        });
        let serial = board["serial"].as_str().expect("serial").to_string();
        let json = plain_pairings(3).to_string();
        let answer = svc.admin(
            "PUT",
            "/api/rounds/1/pairings",
            Some(("application/json", json.as_bytes())),
        );
        assert_eq!(answer.status, 200, "{}", answer.text());

        let b = Browser::start("console_assign").await;
        let c = b.client();
        b.goto(&svc.url("/console.html?round=1")).await;
        b.enter_token().await;
        let row = format!("#eboards tr[data-serial=\"{serial}\"]");
        let input = c
            .wait()
            .at_most(Duration::from_secs(15))
            .for_element(Locator::Css(&format!("{row} .assign-board")))
            .await
            .unwrap_or_else(|e| panic!("no assign field for e-board {serial}: {e}"));
        input.send_keys("3").await.expect("type the board number");
        c.find(Locator::Css(&format!("{row} button.assign")))
            .await
            .expect("the assign button")
            .click()
            .await
            .expect("click assign");
        let question = eventually!(10, "the console to ask before moving the e-board", async {
            c.get_alert_text().await.ok()
        });
        assert!(question.contains("board 1"), "asked {question:?}");
        c.accept_alert().await.expect("accept");
        eventually!(10, "the console to show the e-board on board 3", async {
            let v = b
                .js(
                    "const cell = document.querySelector(arguments[0] + ' .eb-game');
                     return cell ? cell.textContent : null;",
                    vec![json!(row)],
                )
                .await;
            (v == "Board 3").then_some(())
        });
        b.screenshot("assigned").await;
        println!(
            "e-board on board 3 {} ms after the service started",
            started.elapsed().as_millis()
        );

        // The game played on the e-board is board 3's.
        let round = eventually!(
            90,
            format!("moves on board 3:\n{}", svc.log_text()),
            async {
                let round = try_json(&svc.url("/api/rounds/1"))?;
                let on3 = round["games"]
                    .as_array()?
                    .iter()
                    .find(|g| g["board_no"] == 3)?
                    .clone();
                (plies_of(&on3) >= 2).then_some(round)
            },
        );
        let games = round["games"].as_array().expect("games");
        let on = |n: u32| {
            games
                .iter()
                .find(|g| g["board_no"] == n)
                .unwrap_or_else(|| panic!("board {n} in {round}"))
        };
        assert_eq!(on(3)["white"]["name"], "Player white 003", "{}", on(3));
        assert_eq!(plies_of(on(1)), 0, "board 1 got moves: {}", on(1));
        let eboards = try_json(&svc.url("/api/eboards")).expect("e-boards");
        assert_eq!(eboards[0]["board_no"], 3, "{eboards}");
        assert_eq!(eboards[0]["game_id"], on(3)["id"], "{eboards}");
        let audit = svc
            .admin("GET", &format!("/api/games/{}/audit", on(3)["id"]), None)
            .json();
        assert!(
            audit.to_string().contains("\"assign\""),
            "no assignment in the audit trail: {audit}"
        );
        println!(
            "board 3 after the assignment: {} plies; audit {audit}",
            plies_of(on(3))
        );
        b.screenshot("playing-on-board-3").await;
        b.quit().await;
    });
}

/// The arbiter's day with a pairing program: in the console, load the TRF of the round just
/// paired (a new tournament), see its pairings beside the e-boards, and put the e-board on a
/// board with one click (the board is offered already; the console asks, as the e-board is
/// on a game of another round).
#[test]
fn browser_console_loads_a_trf_and_puts_an_eboard_on_a_paired_board() {
    browser_test("console_trf", || async {
        let emu = Emulator::start(
            "browser-trf",
            &[
                "--boards",
                "1",
                "--speed",
                "4",
                "--hold-secs",
                "100",
                "--seed",
                "5",
            ],
        );
        let svc = Service::serve_ports(&emu.dir, &emu.ports());
        let board = eventually!(30, "the e-board to turn up", async {
            let boards = try_json(&svc.url("/api/eboards"))?;
            let b = boards.as_array()?.first()?.clone();
            (b["connected"] == true && b["game_id"].is_i64()).then_some(b)
        });
        let serial = board["serial"].as_str().expect("serial").to_string();
        // Vega's sample as it stood after round 1 was paired.
        let Some(bytes) = super::referees::bytes_of("vega_sample_tournament.trfx") else {
            return;
        };
        let trf = super::referees::as_paired(&relay_core::trf::read_trf(&bytes).expect("reads"), 1);
        let file = emu.dir.join("vega-round1.trfx");
        std::fs::write(&file, relay_core::trf::write_trf(&trf)).expect("write");

        let b = Browser::start("console_trf").await;
        let c = b.client();
        b.goto(&svc.url("/console.html")).await;
        b.enter_token().await;
        let upload = c
            .wait()
            .at_most(Duration::from_secs(15))
            .for_element(Locator::Css("#pairings-file"))
            .await
            .expect("the pairings file field");
        upload
            .send_keys(&file.display().to_string())
            .await
            .expect("choose the file");
        b.click("#trf-new").await;
        b.click("#pairings-upload").await;
        // The console moves to the tournament's round 1 and lists its pairings.
        let white1 = trf
            .players
            .iter()
            .find(|p| p.start_rank == 4)
            .expect("player 4")
            .name
            .clone();
        eventually!(20, "the TRF round's pairings in the games table", async {
            let v = b
                .js(
                    "const rows = [...document.querySelectorAll('#games tbody tr')];
                     return rows.map((r) => r.querySelector('.white').textContent + ' | ' + r.querySelector('.black').textContent);",
                    vec![],
                )
                .await;
            let rows = v.as_array().cloned().unwrap_or_default();
            (rows.len() == 3
                && rows
                    .iter()
                    .any(|r| r.as_str().is_some_and(|t| t.contains(&white1))))
            .then_some(())
        });
        let note = b.text_of("pairings-msg").await.unwrap_or_default();
        assert!(
            note.contains("6 players") && note.contains("3 boards added"),
            "{note}"
        );
        b.screenshot("trf-loaded").await;
        // The e-board's row offers the first paired board; one click puts it there.
        let row = format!("#eboards tr[data-serial=\"{serial}\"]");
        let offered = eventually!(10, "a board offered to the e-board", async {
            let v = b
                .js("const i = document.querySelector(arguments[0] + ' .assign-board'); return i ? i.value : null;", vec![json!(row)])
                .await;
            v.as_str().filter(|s| !s.is_empty()).map(str::to_string)
        });
        assert_eq!(offered, "1");
        b.click(&format!("{row} button.assign")).await;
        let question = eventually!(10, "the console to ask before moving the e-board", async {
            c.get_alert_text().await.ok()
        });
        assert!(question.contains("another round"), "asked {question:?}");
        c.accept_alert().await.expect("accept");
        eventually!(10, "the console to show the e-board on board 1", async {
            let v = b
                .js("const cell = document.querySelector(arguments[0] + ' .eb-game'); return cell ? cell.textContent : null;", vec![json!(row)])
                .await;
            (v == "Board 1").then_some(())
        });
        let tournaments = try_json(&svc.url("/api/tournaments")).expect("tournaments");
        let round = tournaments
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == "Vega sample tournament"))
            .and_then(|t| t["rounds"][0]["id"].as_i64())
            .expect("the TRF's round");
        let eboards = try_json(&svc.url("/api/eboards")).expect("e-boards");
        assert_eq!(eboards[0]["round_id"], round, "{eboards}");
        assert_eq!(eboards[0]["board_no"], 1, "{eboards}");
        b.screenshot("eboard-on-board-1").await;
        b.quit().await;
    });
}

/// The console raises an alert, seen and heard, when an e-board is lost: the emulator (the
/// board's end of the line) goes away while the console is open.
/// A short time control: a flag falls in the second game and the players play on (the
/// emulator's hands do). The console shows the proposed time forfeit and how many moves were
/// played after it, and the game keeps those moves.
#[test]
fn browser_console_shows_moves_played_after_a_flag_fell() {
    browser_test("console_flag", || async {
        let emu = Emulator::start(
            "browser-flag",
            &[
                "--boards",
                "1",
                "--speed",
                "20",
                "--noise",
                "0",
                "--seed",
                "2",
                "--time-control",
                "90",
            ],
        );
        let svc = Service::serve_ports(&emu.dir, &emu.ports());
        let board = eventually!(
            90,
            format!("a flag to fall and a move after it:\n{}", svc.log_text()),
            async {
                let boards = try_json(&svc.url("/api/eboards"))?;
                let b = boards.as_array()?.first()?.clone();
                (b["proposal"]["reason"] == "time_forfeit"
                    && b["proposal"]["moves_after"].as_u64()? >= 1)
                    .then_some(b)
            }
        );
        let serial = board["serial"].as_str().expect("serial").to_string();
        let at_ply = board["proposal"]["at_ply"].as_u64().expect("at_ply");
        let game = try_json(&svc.url(&format!(
            "/api/games/{}",
            board["game_id"].as_i64().expect("game")
        )))
        .expect("the game");
        let plies = plies_of(&game) as u64;
        // (The game may have ended since, by a mate played after the flag.)
        assert!(plies > at_ply, "no move after the flag in the game: {game}");

        let b = Browser::start("console_flag").await;
        b.goto(&svc.url("/console.html")).await;
        let row = format!("#eboards tr[data-serial=\"{serial}\"]");
        // At 20x the games go on (a flag, moves after it, the next game, its flag): the
        // console must show the proposal the service has at the same moment, so the two are
        // read together until they agree.
        // A game can end (mate after the flag) and the next one must reach its own flag before
        // the two agree again: give it the time a game takes at 20x, not just a page refresh.
        // What each side showed last, for the failure message.
        let last = std::cell::RefCell::new(String::new());
        let text = eventually!(
            45,
            format!(
                "the service's proposal in the e-board's row; last seen: {}\n{}",
                last.borrow(),
                svc.log_text()
            ),
            async {
                let v = b
                    .js(
                        "const row = document.querySelector(arguments[0]);
                     return row ? row.querySelector('.eb-proposal').textContent : null;",
                        vec![json!(row)],
                    )
                    .await;
                let now = try_json(&svc.url("/api/eboards"))?;
                let p = now.as_array()?.first()?["proposal"].clone();
                *last.borrow_mut() = format!("console {v} / service {p}");
                let text = v.as_str()?.to_string();
                let from = format!("from ply {}", p["at_ply"].as_u64()? + 1);
                (p["reason"] == "time_forfeit"
                    && text.contains("played after it")
                    && text.contains(&from))
                .then_some(text)
            }
        );
        println!(
            "e-board {serial}: {text} (the game had {plies} plies when the flag was first seen at ply {at_ply})"
        );
        assert!(text.contains("time forfeit"), "{text}");

        // With no pairings, each new game on the e-board starts a round of its own. The
        // console was opened with no round named, so it follows the newest: it goes with the
        // e-board to the next round and hears that round's news.
        let round_of = || -> Option<i64> {
            try_json(&svc.url("/api/eboards"))?.as_array()?.first()?["round_id"].as_i64()
        };
        let now = round_of().expect("the e-board's round");
        let next = eventually!(60, "the e-board's next game", async {
            round_of().filter(|r| *r > now)
        });
        let shown = eventually!(
            15,
            format!("the console to follow the e-board to round {next}"),
            async {
                let v = b
                    .js(
                        "return document.getElementById('round-select').value;",
                        vec![],
                    )
                    .await;
                (v.as_str()? == next.to_string()).then_some(v)
            }
        );
        println!("console followed the e-board from round {now} to round {shown}");
        drop(b);
        drop(emu);
    });
}

#[test]
fn browser_console_alerts_when_an_eboard_is_lost() {
    browser_test("console_alert", || async {
        let mut emu = Emulator::start(
            "browser-alert",
            &["--boards", "1", "--speed", "4", "--seed", "4"],
        );
        let svc = Service::serve_ports(&emu.dir, &emu.ports());
        let board = eventually!(30, "the e-board to be connected", async {
            let boards = try_json(&svc.url("/api/eboards"))?;
            let b = boards.as_array()?.first()?.clone();
            (b["connected"] == true).then_some(b)
        });
        let serial = board["serial"].as_str().expect("serial").to_string();

        let b = Browser::start("console_alert").await;
        let c = b.client();
        b.goto(&svc.url("/console.html")).await;
        let row = format!("#eboards tr[data-serial=\"{serial}\"]");
        c.wait()
            .at_most(Duration::from_secs(15))
            .for_element(Locator::Css(&row))
            .await
            .unwrap_or_else(|e| panic!("no row for e-board {serial}: {e}"));
        // A click lets the page play sound (browsers allow audio only after one); the test
        // counts the tones it starts.
        c.find(Locator::Css("h2"))
            .await
            .expect("a heading")
            .click()
            .await
            .expect("click the page");
        let audio = b
            .js(
                "window.__tones = 0;
                 const make = AudioContext.prototype.createOscillator;
                 AudioContext.prototype.createOscillator = function () { window.__tones += 1; return make.call(this); };
                 return document.getElementById('alert-banner').hidden;",
                vec![],
            )
            .await;
        assert_eq!(audio, true, "an alert before anything went wrong");

        let _ = emu.child.kill();
        let _ = emu.child.wait();
        let lost = Instant::now();
        let shown = eventually!(30, "the console to alert", async {
            let v = b
                .js(
                    "const banner = document.getElementById('alert-banner');
                     const row = document.querySelector(arguments[0]);
                     if (banner.hidden || !row) return null;
                     return { alerts: document.getElementById('alert-list').textContent,
                              connection: row.querySelector('.eb-connection').textContent,
                              serious: row.classList.contains('serious'),
                              tones: window.__tones };",
                    vec![json!(row)],
                )
                .await;
            (!v.is_null()).then_some(v)
        });
        println!(
            "alert {} ms after the board went: {shown}",
            lost.elapsed().as_millis()
        );
        let alerts = shown["alerts"].as_str().unwrap_or("");
        assert!(
            alerts.contains(&format!("e-board {serial}")) && alerts.contains("lost"),
            "{shown}"
        );
        assert!(
            shown["connection"]
                .as_str()
                .is_some_and(|t| t.starts_with("lost since")),
            "{shown}"
        );
        assert_eq!(shown["serious"], true, "{shown}");
        assert!(
            shown["tones"].as_u64().is_some_and(|n| n >= 1),
            "no sound: {shown}"
        );
        b.screenshot("lost").await;

        // Acknowledged, the banner goes; the row still says the board is lost.
        c.find(Locator::Css("#alert-ack"))
            .await
            .expect("#alert-ack")
            .click()
            .await
            .expect("acknowledge");
        let after = b
            .js(
                "return { banner: document.getElementById('alert-banner').hidden,
                          serious: document.querySelector(arguments[0]).classList.contains('serious') };",
                vec![json!(row)],
            )
            .await;
        assert_eq!(after, json!({"banner": true, "serious": true}));
        b.quit().await;
    });
}

/// Boards in trouble while still connected, on real pseudo-terminals: a Bluetooth board low on
/// charge whose clock says its battery is low, and a board with no clock whose pieces stop
/// matching the game. The console shows each problem in the board's row and raises an alert for
/// it; the out-of-sync row shows the board as read next to the game, and once the piece is
/// back the alert says it has been resolved.
#[test]
fn browser_console_shows_battery_clock_and_sync_problems() {
    use boards::protocol::{ClockSide, Orientation, PieceCode, piece::DgtSquare};
    use emulator::board::{BoardIdentity, EmulatedBoard};
    use emulator::clock::ChessClock;
    use emulator::line::{Line, VirtualClock};
    use shakmaty::{Color, Piece, Role, Square};

    browser_test("console_problems", || async {
        let dir = temp_dir("browser-problems");
        let links = dir.join("links");
        std::fs::create_dir_all(&links).expect("links directory");
        let time = VirtualClock::new(1.0);
        let mut low = EmulatedBoard::new(
            BoardIdentity {
                bluetooth: true,
                ..BoardIdentity::from_number(201)
            },
            Some(ChessClock::new(
                "5400+30".parse().expect("a time control"),
                ClockSide::Right,
            )),
        );
        low.set_battery(12);
        if let Some(c) = low.clock_mut() {
            c.set_battery_low(true);
        }
        let bare = EmulatedBoard::new(BoardIdentity::from_number(202), None);
        let _line_a =
            Line::open(vec![low], time.clone(), Some(&links.join("dgt-a"))).expect("a pty");
        let line_b =
            Line::open(vec![bare], time.clone(), Some(&links.join("dgt-b"))).expect("a pty");
        let svc = Service::serve_ports(&dir, &format!("{}/dgt-*", links.display()));
        // A board's clock is `null` until the relay has asked it and heard (or not heard) a
        // clock; under load that can come after the battery.
        let boards = eventually!(30, "both e-boards connected, one with a battery", async {
            let list = try_json(&svc.url("/api/eboards"))?;
            let list = list.as_array()?.clone();
            (list.len() == 2
                && list
                    .iter()
                    .all(|b| b["connected"] == true && !b["clock"].is_null())
                && list.iter().any(|b| b["battery"] == 12))
            .then_some(list)
        });
        let serial_of = |battery: bool| {
            boards
                .iter()
                .find(|b| b["battery"].is_null() != battery)
                .and_then(|b| b["serial"].as_str())
                .expect("a serial")
                .to_string()
        };
        let (low_serial, bare_serial) = (serial_of(true), serial_of(false));
        let api = boards
            .iter()
            .map(|b| {
                (
                    b["serial"].clone(),
                    b["clock"].clone(),
                    b["clock_battery_low"].clone(),
                )
            })
            .collect::<Vec<_>>();
        assert!(
            api.contains(&(json!(low_serial), json!(true), json!(true))),
            "{api:?}"
        );
        assert!(
            api.contains(&(json!(bare_serial), json!(false), json!(false))),
            "{api:?}"
        );

        let b = Browser::start("console_problems").await;
        b.goto(&svc.url("/console.html")).await;
        let row_of = |serial: &str| format!("#eboards tr[data-serial=\"{serial}\"]");
        let cells = "const row = document.querySelector(arguments[0]);
                     if (!row) return null;
                     const cell = (n) => row.querySelector('.eb-' + n).textContent;
                     return { battery: cell('battery'), clock: cell('clock'),
                              position: cell('position'),
                              alerts: [...document.querySelectorAll('#alert-list li')]
                                        .map((li) => li.textContent) };";
        // Whether one alert names the e-board and the problem.
        let alerted = |v: &Value, serial: &str, problem: &str| {
            v["alerts"].as_array().is_some_and(|list| {
                list.iter().filter_map(Value::as_str).any(|a| {
                    a.contains(&format!("e-board {serial} (board ")) && a.ends_with(problem)
                })
            })
        };
        let low_row = eventually!(20, "the low board's row", async {
            let v = b.js(cells, vec![json!(row_of(&low_serial))]).await;
            (!v.is_null() && v["battery"] != "–").then_some(v)
        });
        assert_eq!(low_row["battery"], "12%, clock battery low", "{low_row}");
        assert_eq!(low_row["clock"], "yes", "{low_row}");
        let bare_row = b.js(cells, vec![json!(row_of(&bare_serial))]).await;
        assert_eq!(bare_row["clock"], "missing", "{bare_row}");
        assert_eq!(bare_row["battery"], "–", "{bare_row}");
        assert!(alerted(&bare_row, &low_serial, "battery low"), "{bare_row}");
        assert!(alerted(&bare_row, &bare_serial, "no clock"), "{bare_row}");
        b.screenshot("battery-and-clock").await;

        // On the board without a clock: 1. e4, then the white queen set down on d3, which no
        // move explains.
        let square = |s: Square| DgtSquare::from_square(s, Orientation::Normal);
        let white = |role: Role| {
            PieceCode::Piece(Piece {
                color: Color::White,
                role,
            })
        };
        // A white piece lifted from one square and set down on another.
        let shift = |role: Role, from: Square, to: Square| {
            blocking(|| {
                for (sq, piece) in [(from, PieceCode::Empty), (to, white(role))] {
                    line_b.act(0, |board| {
                        ((), board.set_square(square(sq), piece, time.now_ms()))
                    });
                    std::thread::sleep(Duration::from_millis(150));
                }
            })
        };
        shift(Role::Pawn, Square::E2, Square::E4);
        eventually!(20, "1. e4 recorded", async {
            let round = try_json(&svc.url("/api/rounds/1"))?;
            let games = round["games"].as_array()?.clone();
            games
                .iter()
                .any(|g| g["eboard"] == json!(bare_serial) && plies_of(g) == 1)
                .then_some(())
        });
        shift(Role::Queen, Square::D1, Square::D3);
        let out = eventually!(20, "the console to show the board out of sync", async {
            let v = b.js(cells, vec![json!(row_of(&bare_serial))]).await;
            v["position"]
                .as_str()?
                .starts_with("out of sync")
                .then_some(v)
        });
        assert!(alerted(&out, &bare_serial, "out of sync"), "{out}");
        let pair = b
            .js(
                "return document.querySelector(arguments[0] + ' .eb-position svg') ? 
                   document.querySelectorAll(arguments[0] + ' .eb-position svg').length : 0;",
                vec![json!(row_of(&bare_serial))],
            )
            .await;
        assert_eq!(pair, 2, "the board as read next to the game's position");
        b.screenshot("out-of-sync").await;

        // The queen goes back: in sync again, and the alert says so.
        shift(Role::Queen, Square::D3, Square::D1);
        let back = eventually!(20, "the board in sync again", async {
            let v = b.js(cells, vec![json!(row_of(&bare_serial))]).await;
            (v["position"] == "in sync").then_some(v)
        });
        assert!(
            alerted(&back, &bare_serial, "out of sync (since resolved)"),
            "{back}"
        );
        b.screenshot("in-sync-again").await;
        b.quit().await;
    });
}

/// A player completes two illegal moves on an emulated board (`relay demo --illegal`): the
/// console, opened with the admin token, lists each at once with a beep, naming the board,
/// the player and which of theirs it is, with what the Laws prescribe; for the second it
/// offers the result they prescribe, and the arbiter's click puts it in the PGN with its
/// termination and in the audit trail.
#[test]
fn browser_console_alerts_an_illegal_move_and_gives_the_prescribed_result() {
    browser_test("console_illegal", || async {
        let dir = temp_dir("browser-illegal");
        let svc = Service::demo(
            &dir,
            &[
                "--boards",
                "1",
                "--speed",
                "3",
                "--noise",
                "0",
                "--seed",
                "1",
                "--illegal",
                "3,7:press",
                "--admin-token",
                TOKEN,
            ],
        );
        let b = Browser::start("console_illegal").await;
        b.goto(&svc.url("/console.html?round=1")).await;
        b.enter_token().await;
        // The first illegal move: listed, no result offered.
        let first = eventually!(
            60,
            format!("the first illegal move in the console:\n{}", svc.log_text()),
            async {
                let v = b
                    .js(
                        "const li = document.querySelector('#illegal-list li.first');
                         return li && !document.getElementById('illegal-banner').hidden ? li.textContent : null;",
                        vec![],
                    )
                    .await;
                v.as_str().map(str::to_string)
            }
        );
        println!("console: {first}");
        assert!(first.contains("Board 1: White"), "{first}");
        assert!(first.contains("first illegal move in this game"), "{first}");
        assert!(first.contains("two minutes"), "{first}");
        // The second, a press without a move by the same player: the result is offered.
        let second = eventually!(
            90,
            format!(
                "the second illegal move in the console:\n{}",
                svc.log_text()
            ),
            async {
                let v = b
                    .js(
                        "const li = document.querySelector('#illegal-list li.second');
                         return li ? li.textContent : null;",
                        vec![],
                    )
                    .await;
                v.as_str().map(str::to_string)
            }
        );
        println!("console: {second}");
        assert!(
            second.contains("second illegal move in this game"),
            "{second}"
        );
        assert!(second.contains("clock pressed without a move"), "{second}");
        assert!(second.contains("Give 0-1"), "{second}");
        b.screenshot("illegal-move-alert").await;
        let button = b
            .client()
            .find(Locator::Css(
                "#illegal-list li.second button[data-ruling=\"result\"]",
            ))
            .await
            .expect("the result button");
        button.click().await.expect("click");
        let game = eventually!(20, "the prescribed result stored", async {
            let g = try_json(&svc.url("/api/rounds/1"))?["games"]
                .as_array()?
                .first()?
                .clone();
            (g["result"] == "0-1").then_some(g)
        });
        assert_eq!(game["termination"], "rules infraction", "{game}");
        let id = game["id"].as_i64().expect("id");
        let pgn = svc
            .admin("GET", &format!("/api/games/{id}/pgn"), None)
            .text();
        assert!(pgn.contains("[Termination \"rules infraction\"]"), "{pgn}");
        assert!(pgn.contains("[Result \"0-1\"]"), "{pgn}");
        let flat = pgn.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("Illegal move by White (second in this game)"),
            "{pgn}"
        );
        // The ruling is written after the result it gave (seen above), so it is waited for.
        eventually!(10, "the ruling in the game's audit trail", async {
            let trail = svc
                .admin("GET", &format!("/api/games/{id}/audit"), None)
                .text();
            trail.contains("incident_ruling").then_some(())
        });
        // The alert is gone once ruled on.
        let left = b
            .js(
                "return document.querySelectorAll('#illegal-list li.second').length;",
                vec![],
            )
            .await;
        assert_eq!(left, json!(0));
        drop(b);
    });
}

/// Debian's Stockfish, which `--eval-workers` runs.
const STOCKFISH: &str = "/usr/games/stockfish";

/// The score as the pages write it: "+0.35", "-1.20", "0.00", "#3", "#-3".
fn score_text(eval: &Value) -> String {
    if let Some(m) = eval["mate"].as_i64() {
        return format!("#{m}");
    }
    let cp = eval["cp"].as_i64().expect("cp or mate");
    match cp {
        0 => "0.00".into(),
        c if c > 0 => format!("+{:.2}", c as f64 / 100.0),
        c => format!("{:.2}", c as f64 / 100.0),
    }
}

/// White's share of the bar, in percent: lichess's curve, a mate filling it.
fn white_share(eval: &Value) -> f64 {
    if let Some(m) = eval["mate"].as_i64() {
        return if m > 0 { 100.0 } else { 0.0 };
    }
    let cp = eval["cp"].as_f64().expect("cp or mate");
    50.0 + 50.0 * (2.0 / (1.0 + (-0.00368208 * cp).exp()) - 1.0)
}

/// The engine's line from the position after `ply` (of a game from the standard start),
/// numbered: "3. Bc4 Nc6 4. Qh5".
fn line_text(eval: &Value, ply: usize) -> String {
    let sans: Vec<&str> = eval["line"]
        .as_array()
        .expect("a line")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let mut out = Vec::new();
    for (i, san) in sans.iter().enumerate() {
        let p = ply + 1 + i;
        let number = p.div_ceil(2);
        if p % 2 == 1 {
            out.push(format!("{number}. {san}"));
        } else if i == 0 {
            out.push(format!("{number}... {san}"));
        } else {
            out.push((*san).to_string());
        }
    }
    out.join(" ")
}

/// What the game page says of the position shown: score, depth, engine, line, and the bar's
/// share as the page set it and as drawn (the white part's height over the bar's).
async fn shown_eval(b: &Browser) -> Value {
    b.js(
        "const bar = document.querySelector('#board-area .eval-bar');
         const fill = bar.querySelector('.eval-white');
         return { hidden: document.getElementById('analysis').hidden || bar.hidden,
                  score: document.getElementById('eval-score').textContent,
                  depth: document.getElementById('eval-depth').textContent,
                  engine: document.getElementById('eval-engine').textContent,
                  line: document.getElementById('eval-line').textContent,
                  share: Number(bar.dataset.share),
                  drawn: 100 * fill.getBoundingClientRect().height / bar.getBoundingClientRect().height,
                  beside: bar.getBoundingClientRect().right <= document.querySelector('#board cg-board').getBoundingClientRect().left };",
        vec![],
    )
    .await
}

/// With an engine (`relay demo --eval-workers 1`, Debian's Stockfish): the game page, open
/// while the game is played, gets each evaluation as it comes and shows the one of the
/// position on its board (a bar beside the board, the score, depth, engine and the line with
/// move numbers); the round grid shows a bar on the card from the last move's evaluation
/// (from the last one evaluated, marked older, when the last position has none: a mate has no
/// line). And the clock a move brings: the mover's time is the move's own `clk_ms` at once.
#[test]
fn browser_evaluations_on_the_game_page_and_the_round_grid() {
    browser_test("evals", || async {
        if !Path::new(STOCKFISH).exists() {
            let notice = format!(
                "browser test evals needs Stockfish at {STOCKFISH} (apt-get install stockfish)"
            );
            assert!(
                std::env::var("RELAY_REQUIRE_ALL").as_deref() != Ok("1"),
                "{notice}; RELAY_REQUIRE_ALL=1 requires every test to run"
            );
            println!("SKIPPED: {notice}");
            return;
        }
        let dir = temp_dir("browser-evals");
        let svc = Service::demo(
            &dir,
            &[
                "--boards",
                "2",
                "--speed",
                "10",
                "--seed",
                "1",
                "--eval-workers",
                "1",
            ],
        );
        let on_board = |round: &Value, n: i64| -> Option<Value> {
            round["games"]
                .as_array()?
                .iter()
                .find(|g| g["board_no"] == n)
                .cloned()
        };
        let id = eventually!(60, "board 1's game to start", async {
            let round = try_json(&svc.url("/api/rounds/1"))?;
            on_board(&round, 1)?["id"].as_i64()
        });
        // The page is open before the evaluations come: they reach it as eval messages.
        let b = Browser::start("evals").await;
        b.goto(&svc.url(&format!("/game.html?id={id}"))).await;
        eventually!(20, "the game page to go live", async {
            (b.live_status().await == "live").then_some(())
        });
        let opened_at = try_json(&svc.url(&format!("/api/games/{id}"))).expect("the game");
        let evaluated_then = opened_at["moves"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["eval"].is_object()).count());

        // Légal's mate, 13 plies; every position but the mate evaluated.
        let game = eventually!(
            120,
            format!("game {id} to end and be evaluated:\n{}", svc.log_text()),
            async {
                let g = try_json(&svc.url(&format!("/api/games/{id}")))?;
                let moves = g["moves"].as_array()?;
                let done = g["status"] == "finished"
                    && moves.len() == 13
                    && moves[..12].iter().all(|m| m["eval"].is_object());
                done.then_some(g)
            },
        );
        let moves = game["moves"].as_array().expect("moves");
        println!(
            "game {id}: {evaluated_then} positions evaluated when the page opened, 12 at the end; \
             the mate's: {}",
            moves[12]["eval"]
        );
        assert!(
            evaluated_then < 12,
            "every position was evaluated before the page opened: no eval message was tested"
        );

        // Each position shown with its own evaluation, the bar beside the board.
        for ply in [4usize, 5, 9] {
            b.click(&format!("#moves .move[data-ply='{ply}']")).await;
            let eval = &moves[ply - 1]["eval"];
            tokio::time::sleep(Duration::from_millis(600)).await; // the bar's transition
            let shown = shown_eval(&b).await;
            println!("ply {ply}: API {eval}\n  page {shown}");
            assert_eq!(shown["hidden"], false, "{shown}");
            assert_eq!(shown["score"], score_text(eval), "ply {ply}: {shown}");
            assert_eq!(
                shown["depth"],
                format!("depth {}", eval["depth"]),
                "ply {ply}: {shown}"
            );
            assert_eq!(shown["engine"], eval["engine"], "ply {ply}: {shown}");
            assert_eq!(shown["line"], line_text(eval, ply), "ply {ply}: {shown}");
            let want = white_share(eval);
            let set = shown["share"].as_f64().unwrap_or(f64::NAN);
            let drawn = shown["drawn"].as_f64().unwrap_or(f64::NAN);
            assert!(
                (set - want).abs() < 0.1,
                "ply {ply}: share {set}, want {want}"
            );
            assert!(
                (drawn - want).abs() < 2.0,
                "ply {ply}: drawn {drawn} %, want {want}"
            );
            assert_eq!(shown["beside"], true, "the bar is not beside the board");
        }
        b.screenshot("game-eval").await;
        // The mate has no evaluation (no line): the page says it is mate, the bar White's.
        b.click("#moves .move[data-ply='13']").await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        let shown = shown_eval(&b).await;
        assert_eq!(shown["score"], "Checkmate", "{shown}");
        assert_eq!(shown["line"], "", "{shown}");
        assert_eq!(shown["share"], 100.0, "{shown}");

        // The round grid: the card's bar from its last move, here the mate, White's.
        b.goto(&svc.url("/round.html?id=1")).await;
        let card = eventually!(20, "the card's evaluation bar", async {
            let v = b
                .js(
                    "const bar = document.querySelector(`article.board-card[data-game-id=\"${arguments[0]}\"] .eval-bar`);
                     return bar && !bar.hidden ? { score: bar.dataset.score, share: Number(bar.dataset.share),
                       stale: bar.classList.contains('stale'),
                       under: bar.getBoundingClientRect().top >= bar.parentElement.querySelector('.board-link').getBoundingClientRect().bottom - 1 } : null;",
                    vec![json!(id)],
                )
                .await;
            (!v.is_null()).then_some(v)
        });
        assert_eq!(card["score"], "#", "{card}");
        assert_eq!(card["stale"], false, "{card}");
        assert_eq!(card["under"], true, "the bar is under the board: {card}");
        assert_eq!(card["share"], 100.0, "{card}");
        // Board 2 plays on: its card's bar follows its last move's evaluation (eval messages).
        let mut seen = Value::Null;
        let (score, ply) = eventually!(
            60,
            format!("board 2's bar to show its last move's evaluation; last seen {seen}"),
            async {
                let round = try_json(&svc.url("/api/rounds/1"))?;
                let game = on_board(&round, 2)?;
                let last = game["moves"].as_array()?.last()?.clone();
                let want = score_text(last["eval"].as_object().map(|_| &last["eval"])?);
                seen = b
                    .js(
                        "const bar = document.querySelector(`article.board-card[data-game-id=\"${arguments[0]}\"] .eval-bar`);
                         return bar ? { hidden: bar.hidden, score: bar.dataset.score, stale: bar.classList.contains('stale'),
                                        share: Number(bar.dataset.share) } : null;",
                        vec![game["id"].clone()],
                    )
                    .await;
                let share_ok = (seen["share"].as_f64()? - white_share(&last["eval"])).abs() < 0.1;
                (seen["hidden"] == false
                    && seen["score"] == want.as_str()
                    && seen["stale"] == false
                    && share_ok)
                    .then(|| (want, last["ply"].clone()))
            },
        );
        println!("board 2's card shows {score} for ply {ply}");
        b.screenshot("round-eval").await;

        // The clock a move brings: the mover's is the move's own time (a period's bonus in
        // it, which the board's reading may not show yet), the other side's runs on from the
        // reading; the board's next reading is shown as it is.
        let clocks = b
            .js(
                "return Promise.all([import('./js/api.js'), import('./js/format.js')]).then(([api, format]) => {
                   const start = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';
                   const now = 1_000_000;
                   const game = { id: 1, start_fen: start, fen: start, status: 'live', result: '*', moves: [],
                                  clock: { white_ms: 700000, black_ms: 650000, running: 'white', at_ms: now - 5000 } };
                   for (let ply = 1; ply <= 78; ply++) game.moves.push({ ply, san: 'x', uci: 'a1a1', fen: start });
                   api.applyGameEvent(game, { type: 'move', seq: 1, game_id: 1,
                     move: { ply: 79, san: 'Nf3', uci: 'g1f3', fen: start, clk_ms: 2_400_000 },
                     clock: { white_ms: 600_000, black_ms: 650_000, running: 'black', at_ms: now } });
                   const after = { white: format.clockMs(game, 'white', now + 3000), black: format.clockMs(game, 'black', now + 3000) };
                   api.applyGameEvent(game, { type: 'clock', seq: 2, game_id: 1,
                     clock: { white_ms: 2_400_000, black_ms: 640_000, running: 'black', at_ms: now + 10000 } });
                   const later = { white: format.clockMs(game, 'white', now + 12000), black: format.clockMs(game, 'black', now + 12000) };
                   return { after, later };
                 });",
                vec![],
            )
            .await;
        assert_eq!(
            clocks,
            json!({"after": {"white": 2_400_000, "black": 647_000},
                   "later": {"white": 2_400_000, "black": 638_000}}),
            "{clocks}"
        );
        b.quit().await;
    });
}
