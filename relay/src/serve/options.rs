//! The options of `relay serve`: each from a flag, else a `RELAY_*` environment variable,
//! else the TOML file given with `--config`, else its default; checked once, into
//! [`Settings`].

use super::push::cloud::PushTarget;
use super::push::lichess::LichessTarget;
use anyhow::{Context, Result, bail};
use boards::protocol::LineMode;
use clap::Args;
use relay_store::RoundId;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Options of the service. Each comes from a flag, else a `RELAY_*` environment variable,
/// else the TOML file given with `--config`, else its default.
#[derive(Args, Debug, Clone, Default)]
pub struct ServeOptions {
    /// TOML file with any of the options below (keys as the long flags, with `_` for `-`).
    #[arg(long, env = "RELAY_CONFIG")]
    pub config: Option<PathBuf>,
    /// Ports to read: device paths, `dir/prefix*` patterns, or `auto` (every port that looks
    /// like a DGT board, re-scanned as boards come and go). Default: auto.
    #[arg(long = "port", env = "RELAY_PORTS", value_delimiter = ',')]
    pub ports: Vec<String>,
    /// The ports carry chains of serial boards (bus mode).
    #[arg(long, env = "RELAY_BUS", num_args = 0..=1, default_missing_value = "true")]
    pub bus: Option<bool>,
    /// Database URL: sqlite://FILE (default sqlite://relay.db) or postgres://USER@HOST/DB.
    #[arg(long, env = "RELAY_DB")]
    pub db: Option<String>,
    /// Address to serve HTTP on (default 127.0.0.1:8080; port 0 picks a free one).
    #[arg(long, env = "RELAY_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Token arbiters send as `Authorization: Bearer TOKEN`. Without one, arbiter actions
    /// are switched off.
    #[arg(long, env = "RELAY_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    /// Broadcast delay in seconds (0..=3600) for the tournament boards go to when nobody
    /// configured one; arbiters set it per tournament or round.
    #[arg(long, env = "RELAY_DELAY")]
    pub delay: Option<u32>,
    /// How long a board must be still before it is read as a position, in ms (default 300;
    /// Bluetooth boards need about 600).
    #[arg(long, env = "RELAY_SETTLE_MS")]
    pub settle_ms: Option<u64>,
    /// Serve the pages from this directory instead of the copy built into the binary.
    #[arg(long, env = "RELAY_WEB_DIR")]
    pub web_dir: Option<PathBuf>,
    /// Players' photos the organiser provides, served at `/photos/NAME` (JPEG, PNG or WebP
    /// files named by the player's FIDE id, `1503014.jpg`); a tournament shows them when its
    /// `photos` is `/photos/{fide_id}.jpg`.
    #[arg(long, env = "RELAY_PHOTOS_DIR")]
    pub photos_dir: Option<PathBuf>,
    /// A WebSocket client that answers nothing for this many seconds (not even the pings the
    /// service sends once it has been quiet for a third of that) has stopped reading and is
    /// closed (default 60, 10..=3600).
    #[arg(long, env = "RELAY_CLIENT_SILENCE_SECS")]
    pub client_silence_secs: Option<u64>,
    /// Read no ports: serve spectators, platforms and arbiters only, from a PostgreSQL that
    /// board-reading relays write to.
    #[arg(long, env = "RELAY_NO_BOARDS", num_args = 0..=1, default_missing_value = "true")]
    pub no_boards: Option<bool>,
    /// Push everything this relay commits to another relay at this URL (a cloud relay
    /// started with --accept-push-token), through any outage: see README "Pushing".
    #[arg(long, env = "RELAY_PUSH_TO")]
    pub push_to: Option<String>,
    /// The token the relay named by --push-to accepts.
    #[arg(long, env = "RELAY_PUSH_TOKEN", hide_env_values = true)]
    pub push_token: Option<String>,
    /// Take pushes from venue relays that send this token (`POST /api/push`).
    #[arg(long, env = "RELAY_ACCEPT_PUSH_TOKEN", hide_env_values = true)]
    pub accept_push_token: Option<String>,
    /// Push the round to these Lichess broadcast rounds (8-character ids; boards 1-100 to
    /// the first, 101-200 to the second, ...).
    #[arg(
        long = "lichess-round",
        env = "RELAY_LICHESS_ROUNDS",
        value_delimiter = ','
    )]
    pub lichess_rounds: Vec<String>,
    /// A Lichess API token with the study:write scope.
    #[arg(long, env = "RELAY_LICHESS_TOKEN", hide_env_values = true)]
    pub lichess_token: Option<String>,
    /// Lichess itself (default https://lichess.org; another address for tests).
    #[arg(long, env = "RELAY_LICHESS_URL")]
    pub lichess_url: Option<String>,
    /// This relay's round to push to Lichess (default: the newest open round at start-up).
    #[arg(long, env = "RELAY_LICHESS_LOCAL_ROUND")]
    pub lichess_local_round: Option<RoundId>,
    /// Evaluate every position on this many threads of this machine, each running the UCI
    /// engine (`--engine`) with one search thread; spectators get each evaluation once it
    /// and its position are public.
    #[arg(long, env = "RELAY_EVAL_WORKERS")]
    pub eval_workers: Option<usize>,
    /// Take evaluation workers from other machines (`relay eval-worker --token T`) that send
    /// this token.
    #[arg(long, env = "RELAY_EVAL_TOKEN", hide_env_values = true)]
    pub eval_token: Option<String>,
    /// How long the engine thinks about each position, in ms (default 500, 50..=60000).
    #[arg(long, env = "RELAY_EVAL_MOVETIME_MS")]
    pub eval_movetime_ms: Option<u64>,
    /// The UCI engine local workers run (default: `stockfish` on the PATH, else Debian's
    /// /usr/games/stockfish).
    #[arg(long, env = "RELAY_ENGINE")]
    pub engine: Option<PathBuf>,
    /// The event key of the tournament this relay makes for its boards when nobody
    /// configured one (given to it at every start, as --delay is): venues pushing the same
    /// key fill one tournament on the cloud relay. Letters, digits, `-`, `_` and `.`, at
    /// most 64.
    #[arg(long, env = "RELAY_EVENT_KEY")]
    pub event_key: Option<String>,
    /// Number the boards this relay places by itself from N (a second hall from 101, say),
    /// so that several halls pushing one event do not claim the same boards. Boards given
    /// by pairings keep the pairing's numbers. Default 1.
    #[arg(long, env = "RELAY_FIRST_BOARD")]
    pub first_board: Option<u32>,
    /// This hall's name on the relay it pushes to (--push-to): its console shows each board's
    /// hall by it (default: this machine's name and process id). At most 64 characters.
    #[arg(long, env = "RELAY_HALL_NAME")]
    pub hall_name: Option<String>,
}

/// The same options as read from a TOML file.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct FileOptions {
    ports: Option<Vec<String>>,
    bus: Option<bool>,
    db: Option<String>,
    listen: Option<SocketAddr>,
    admin_token: Option<String>,
    delay: Option<u32>,
    settle_ms: Option<u64>,
    web_dir: Option<PathBuf>,
    photos_dir: Option<PathBuf>,
    client_silence_secs: Option<u64>,
    no_boards: Option<bool>,
    push_to: Option<String>,
    push_token: Option<String>,
    accept_push_token: Option<String>,
    lichess_rounds: Option<Vec<String>>,
    lichess_token: Option<String>,
    lichess_url: Option<String>,
    lichess_local_round: Option<RoundId>,
    eval_workers: Option<usize>,
    eval_token: Option<String>,
    eval_movetime_ms: Option<u64>,
    engine: Option<PathBuf>,
    event_key: Option<String>,
    first_board: Option<u32>,
    hall_name: Option<String>,
}

/// Options with every default filled in.
#[derive(Debug, Clone)]
pub struct Settings {
    pub ports: Vec<String>,
    pub mode: LineMode,
    pub db: String,
    pub listen: SocketAddr,
    pub admin_token: Option<String>,
    pub delay: Option<u32>,
    pub settle_ms: u64,
    pub web_dir: Option<PathBuf>,
    /// Players' photos served at `/photos/NAME`.
    pub photos_dir: Option<PathBuf>,
    pub client_silence: std::time::Duration,
    /// Read no ports (a relay serving clients only).
    pub no_boards: bool,
    /// A cloud relay to push everything to.
    pub push_to: Option<PushTarget>,
    /// The token venues push here with.
    pub accept_push_token: Option<String>,
    /// Lichess broadcast rounds to push to.
    pub lichess: Option<LichessTarget>,
    /// Evaluation of positions, when asked for.
    pub eval: Option<EvalSettings>,
    /// The event key of the tournament made for the boards.
    pub event_key: Option<String>,
    /// The first board number this relay gives a board by itself.
    pub first_board: u32,
}

/// How positions are evaluated.
#[derive(Debug, Clone)]
pub struct EvalSettings {
    /// Workers on threads of this service.
    pub local_workers: usize,
    /// The token workers elsewhere send.
    pub token: Option<String>,
    pub movetime_ms: u64,
    pub engine: PathBuf,
}

impl ServeOptions {
    pub fn settle(self) -> Result<Settings> {
        let file: FileOptions = match &self.config {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read the configuration {}", p.display()))?;
                toml::from_str(&text)
                    .with_context(|| format!("configuration {} not understood", p.display()))?
            }
            None => FileOptions::default(),
        };
        let ports_given = !self.ports.is_empty();
        let ports = if self.ports.is_empty() {
            file.ports.unwrap_or_else(|| vec!["auto".into()])
        } else {
            self.ports
        };
        let delay = self.delay.or(file.delay);
        if delay.is_some_and(|d| d > 3600) {
            bail!("--delay must be between 0 and 3600 seconds");
        }
        let admin_token = self
            .admin_token
            .or(file.admin_token)
            .filter(|t| !t.is_empty());
        if admin_token.as_ref().is_some_and(|t| t.len() < 8) {
            bail!("the admin token must be at least 8 characters long");
        }
        let settle_ms = self.settle_ms.or(file.settle_ms).unwrap_or(300);
        if !(50..=5000).contains(&settle_ms) {
            bail!("--settle-ms must be between 50 and 5000");
        }
        let client_silence_secs = self
            .client_silence_secs
            .or(file.client_silence_secs)
            .unwrap_or(60);
        if !(10..=3600).contains(&client_silence_secs) {
            bail!("--client-silence-secs must be between 10 and 3600");
        }
        let no_boards = self.no_boards.or(file.no_boards).unwrap_or(false);
        if no_boards && ports_given {
            bail!("--no-boards reads no ports: leave out --port");
        }
        let push_to = match (
            self.push_to.or(file.push_to).filter(|u| !u.is_empty()),
            self.push_token
                .or(file.push_token)
                .filter(|t| !t.is_empty()),
        ) {
            (None, None) => None,
            (None, Some(_)) => bail!("--push-token needs --push-to URL"),
            (Some(_), None) => {
                bail!("--push-to needs --push-token (the token the other relay accepts)")
            }
            (Some(url), Some(token)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    bail!("--push-to must be an http:// or https:// URL, not {url:?}");
                }
                let hall = match self
                    .hall_name
                    .or(file.hall_name)
                    .filter(|n| !n.trim().is_empty())
                {
                    Some(n) if n.trim().chars().count() > 64 => {
                        bail!("--hall-name is at most 64 characters")
                    }
                    Some(n) => n.trim().to_string(),
                    None => crate::serve::instance::instance_name().to_string(),
                };
                Some(PushTarget { url, token, hall })
            }
        };
        let accept_push_token = self
            .accept_push_token
            .or(file.accept_push_token)
            .filter(|t| !t.is_empty());
        if accept_push_token.as_ref().is_some_and(|t| t.len() < 8) {
            bail!("the push token must be at least 8 characters long");
        }
        let lichess_rounds = if self.lichess_rounds.is_empty() {
            file.lichess_rounds.unwrap_or_default()
        } else {
            self.lichess_rounds
        };
        let lichess = match (
            lichess_rounds.is_empty(),
            self.lichess_token
                .or(file.lichess_token)
                .filter(|t| !t.is_empty()),
        ) {
            // Without --lichess-round, the rounds `relay lichess setup` made are pushed to.
            (true, None) => None,
            (false, None) => bail!(
                "--lichess-round needs --lichess-token (a Lichess API token with study:write)"
            ),
            (_, Some(token)) => {
                if let Some(bad) = lichess_rounds
                    .iter()
                    .find(|r| r.len() != 8 || !r.chars().all(|c| c.is_ascii_alphanumeric()))
                {
                    bail!(
                        "{bad:?} is not a Lichess round id (8 letters and digits, as in lichess.org/broadcast/…/ROUNDID)"
                    );
                }
                let url = self
                    .lichess_url
                    .or(file.lichess_url)
                    .unwrap_or_else(|| "https://lichess.org".into());
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    bail!("--lichess-url must be an http:// or https:// URL, not {url:?}");
                }
                Some(LichessTarget {
                    rounds: lichess_rounds,
                    token,
                    url,
                    local_round: self.lichess_local_round.or(file.lichess_local_round),
                })
            }
        };
        let eval_workers = self.eval_workers.or(file.eval_workers).unwrap_or(0);
        if eval_workers > 64 {
            bail!("--eval-workers must be at most 64");
        }
        let eval_token = self
            .eval_token
            .or(file.eval_token)
            .filter(|t| !t.is_empty());
        if eval_token.as_ref().is_some_and(|t| t.len() < 8) {
            bail!("the evaluation token must be at least 8 characters long");
        }
        let movetime_ms = self
            .eval_movetime_ms
            .or(file.eval_movetime_ms)
            .unwrap_or(500);
        if !(50..=60_000).contains(&movetime_ms) {
            bail!("--eval-movetime-ms must be between 50 and 60000");
        }
        let engine = self
            .engine
            .or(file.engine)
            .unwrap_or_else(crate::serve::analysis::engine::default_engine);
        if eval_workers > 0 && !engine.is_file() {
            bail!(
                "--eval-workers needs a UCI engine: {} is not there (apt-get install stockfish, or --engine PATH)",
                engine.display()
            );
        }
        let eval = (eval_workers > 0 || eval_token.is_some()).then_some(EvalSettings {
            local_workers: eval_workers,
            token: eval_token,
            movetime_ms,
            engine,
        });
        let event_key = self.event_key.or(file.event_key).filter(|k| !k.is_empty());
        if let Some(k) = &event_key {
            relay_store::check_event_key(k).map_err(|e| anyhow::anyhow!("--event-key: {e}"))?;
        }
        let first_board = self.first_board.or(file.first_board).unwrap_or(1);
        if !(1..=99_999).contains(&first_board) {
            bail!("--first-board must be between 1 and 99999");
        }
        Ok(Settings {
            event_key,
            first_board,
            eval,
            lichess,
            push_to,
            accept_push_token,
            no_boards,
            client_silence: std::time::Duration::from_secs(client_silence_secs),
            ports,
            mode: if self.bus.or(file.bus).unwrap_or(false) {
                LineMode::Bus
            } else {
                LineMode::Single
            },
            db: self
                .db
                .or(file.db)
                .unwrap_or_else(|| "sqlite://relay.db".into()),
            listen: self
                .listen
                .or(file.listen)
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080))),
            admin_token,
            delay,
            settle_ms,
            web_dir: self.web_dir.or(file.web_dir),
            photos_dir: self.photos_dir.or(file.photos_dir),
        })
    }
}
