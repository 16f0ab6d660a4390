//! `relay serve`: boards, recorders, store and clients in one service.
//!
//! ```text
//! reader threads (one per port) ──PortEvent──▶ hall thread (recorders) ─Job─▶ writer thread
//!                                                                             │ commit, then
//!                                                                             ▼ publish
//!                               HTTP / WebSocket clients ◀── broadcast of committed events
//! ```
//! The hall never waits for the database; the writer is the only part that changes games in
//! the store and the only part that announces changes, always after the commit.

pub mod alarm;
pub mod api;
pub mod claims;
pub mod connections;
pub mod feeds;
pub mod follow;
pub mod hall;
pub mod lichess;
pub mod live;
pub mod pages;
pub mod upstream;
pub mod views;
pub mod wire;
pub mod writer;

use anyhow::{Context, Result, bail};
use boards::protocol::LineMode;
use clap::Args;
use live::Shared;
use relay_core::recorder::RecorderConfig;
use relay_store::Store;
use serde::Deserialize;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
    pub lichess_local_round: Option<i64>,
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
    client_silence_secs: Option<u64>,
    no_boards: Option<bool>,
    push_to: Option<String>,
    push_token: Option<String>,
    accept_push_token: Option<String>,
    lichess_rounds: Option<Vec<String>>,
    lichess_token: Option<String>,
    lichess_url: Option<String>,
    lichess_local_round: Option<i64>,
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
    pub client_silence: std::time::Duration,
    /// Read no ports (a relay serving clients only).
    pub no_boards: bool,
    /// A cloud relay to push everything to.
    pub push_to: Option<upstream::PushTarget>,
    /// The token venues push here with.
    pub accept_push_token: Option<String>,
    /// Lichess broadcast rounds to push to.
    pub lichess: Option<lichess::LichessTarget>,
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
                Some(upstream::PushTarget { url, token })
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
            (true, None) => None,
            (true, Some(_)) => bail!("--lichess-token needs --lichess-round ID"),
            (false, None) => bail!(
                "--lichess-round needs --lichess-token (a Lichess API token with study:write)"
            ),
            (false, Some(token)) => {
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
                Some(lichess::LichessTarget {
                    rounds: lichess_rounds,
                    token,
                    url,
                    local_round: self.lichess_local_round.or(file.lichess_local_round),
                })
            }
        };
        Ok(Settings {
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
        })
    }
}

pub fn today() -> String {
    // Days since the epoch to a civil date (proleptic Gregorian), without a date crate.
    let days = live::now_ms().div_euclid(86_400_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The two connection pools of a service: one for readers (pages, platforms polling) and one
/// for the writer alone, so readers can never keep a move from being stored.
#[derive(Debug)]
pub struct Stores {
    pub readers: Store,
    pub writer: Store,
    /// The writer's connection for its group commits on a SQLite file, called on the
    /// writer's thread (`relay_store::SqliteCommits`); `None`: they go through `writer`.
    pub commits: Option<relay_store::SqliteCommits>,
}

impl Stores {
    /// The writer's connections to the database at `url` (`readers` already open on it).
    pub async fn open(readers: Store, url: &str) -> Result<Stores, relay_store::StoreError> {
        Ok(Stores {
            readers,
            writer: Store::open_writer(url).await?,
            commits: relay_store::SqliteCommits::open(url)?,
        })
    }
}

/// The games the service carries on with after a restart.
#[derive(Debug, Default)]
pub struct Carry {
    /// Each e-board's game in the store (serial → slot).
    pub slots: HashMap<String, writer::Slot>,
    /// What each e-board's recorder resumes from.
    pub resume: HashMap<String, hall::Resume>,
    /// Each round's change number at start-up, where publishing in order starts from
    /// (`None`: from each round's first change published; in-process tests).
    pub seqs: Option<Vec<(i64, i64)>>,
    /// Other relays' commits on the same PostgreSQL (taken before `seqs` were read).
    pub listener: Option<relay_store::Listener>,
}

/// Each e-board's game in the newest open round it is assigned in, as the writer's picture of
/// it and as what its recorder resumes from (at start-up, and when this relay takes over a
/// port another relay was reading).
pub async fn load_carry(
    store: &Store,
) -> Result<(HashMap<String, writer::Slot>, HashMap<String, hall::Resume>), relay_store::StoreError>
{
    let mut slots = HashMap::new();
    let mut resume = HashMap::new();
    let mut rounds: HashMap<i64, Vec<relay_store::StoredGame>> = HashMap::new();
    for (round, board_no, serial) in store.open_assignments().await? {
        if slots.contains_key(&serial) {
            continue;
        }
        if let std::collections::hash_map::Entry::Vacant(e) = rounds.entry(round) {
            e.insert(store.round_games(round).await?);
        }
        let Some(g) = rounds
            .get(&round)
            .and_then(|gs| gs.iter().find(|g| g.pairing.board_no == board_no))
        else {
            continue;
        };
        slots.insert(
            serial.clone(),
            writer::Slot {
                game_id: g.id,
                round_id: g.round_id,
                board_no,
                game_no: 0,
                moves: g.moves.clone(),
                result: g.result.clone(),
                status: g.status.clone(),
                orientation: g.orientation.clone(),
                start_fen: g.start_fen.clone(),
            },
        );
        if let Some(o) = g.orientation.as_deref().and_then(hall::parse_orientation) {
            resume.insert(
                serial,
                hall::Resume {
                    game: relay_store::to_game(g, "", None, ""),
                    orientation: o,
                    moves: g.moves.clone(),
                },
            );
        }
    }
    Ok((slots, resume))
}

/// Runs a part of the ingest path (the writer, the hall) on a thread and runtime of its own;
/// the handle ends when the part does.
///
/// On the shared runtime, every wake-up of the part put it back in the run queue behind every
/// spectator's socket. With 19,000 spectators, a commit took 574 ms on average with the writer
/// there. With the hall there, on a slower machine, the hall judged the boards about once a
/// second and each move waited for that turn. On its own thread a part takes what its own
/// work takes. (The store's connections may belong to the main runtime's I/O driver; they are
/// only polled from the writer's thread, which tokio allows.)
fn spawn_own_thread(
    name: &str,
    part: impl std::future::Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let thread = runtime.map_err(|e| e.to_string()).and_then(|rt| {
        std::thread::Builder::new()
            .name(format!("relay-{name}"))
            .spawn(move || {
                rt.block_on(part);
                let _ = done_tx.send(());
            })
            .map_err(|e| e.to_string())
    });
    match thread {
        Ok(_) => tokio::spawn(async move {
            let _ = done_rx.await;
        }),
        Err(e) => {
            // Without the writer nothing can be stored, without the hall nothing is read:
            // say so and stop.
            tracing::error!(error = %e, "the {name}'s thread could not be started");
            std::process::exit(1);
        }
    }
}

/// The service without its ports and listener: the shared state, the writer and the hall,
/// running. Port events go in through `ports`; [`api::app`] over `shared` answers HTTP. Tests
/// drive it in-process this way.
#[derive(Debug)]
pub struct Core {
    pub shared: Arc<Shared>,
    pub writer: tokio::task::JoinHandle<()>,
    pub hall: tokio::task::JoinHandle<()>,
    pub ports: tokio::sync::mpsc::UnboundedSender<hall::PortInput>,
}

impl Core {
    /// Starts the writer and the hall (on the current tokio runtime).
    pub fn start(
        stores: Stores,
        admin_token: Option<String>,
        current: relay_store::RoundInfo,
        carry: Carry,
        cfg: RecorderConfig,
        limits: live::Limits,
    ) -> Core {
        let (edits_tx, edits_rx) = tokio::sync::mpsc::unbounded_channel();
        let (jobs_tx, jobs_rx) = tokio::sync::mpsc::unbounded_channel();
        let (order, holes) = follow::Order::new(carry.seqs);
        let shared = Arc::new(Shared::new(
            stores.readers,
            admin_token,
            edits_tx,
            jobs_tx.clone(),
            limits,
            order,
        ));
        shared.feeds.attach(&shared);
        tokio::spawn(follow::follow(shared.clone(), holes, carry.listener));
        shared.health.store_ok.store(true, Ordering::Relaxed);
        if matches!(shared.store, Store::Sqlite(_)) {
            tokio::spawn(checkpoints(shared.clone()));
        }
        let writer = writer::Writer::new(
            shared.clone(),
            stores.writer,
            stores.commits,
            current,
            carry.slots,
            jobs_rx,
        );
        let writer = spawn_own_thread("writer", writer.run());
        let (ports, ports_rx) = tokio::sync::mpsc::unbounded_channel();
        let hall = hall::Hall::new(shared.clone(), cfg, carry.resume, jobs_tx);
        let hall = spawn_own_thread("hall", hall.run(ports_rx, edits_rx));
        Core {
            shared,
            writer,
            hall,
            ports,
        }
    }
}

/// How often the readers' store checkpoints the SQLite WAL, which the writer's commits leave
/// alone (`Store::open_writer`).
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Checkpoints the WAL from the readers' side until the service stops (SQLite only: there is
/// nothing to do on PostgreSQL).
async fn checkpoints(shared: Arc<Shared>) {
    let mut closing = shared.closing();
    let mut every = tokio::time::interval(CHECKPOINT_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = closing.changed() => return,
        }
        if let Err(e) = shared.store.checkpoint().await {
            tracing::debug!(error = %e, "WAL checkpoint");
        }
    }
}

/// Runs the service until SIGINT/SIGTERM or until `stop` is set. `ready` gets the address
/// actually listened on.
pub fn run(
    settings: Settings,
    stop: Arc<AtomicBool>,
    ready: impl FnOnce(SocketAddr),
) -> Result<()> {
    // Every spectator is an open socket: take all the open files the system allows (the soft
    // limit is often 1024, the hard one far higher).
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => tracing::debug!(open_files = n, "open-file limit"),
        Err(e) => tracing::warn!(error = %e, "open-file limit not raised"),
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(serve(settings, stop, ready))
}

async fn serve(
    settings: Settings,
    stop: Arc<AtomicBool>,
    ready: impl FnOnce(SocketAddr),
) -> Result<()> {
    let store = Store::open(&settings.db)
        .await
        .with_context(|| format!("database {}", settings.db))?;
    tracing::info!(backend = store.backend(), "database open");
    // Other relays' commits on the same PostgreSQL: listened for before the change numbers
    // are read, so nothing committed in between is missed.
    let listener = store.listen().await?;
    // The round boards play in: the newest open one, or one made now (a relay without
    // boards makes none: it has no boards to put in it).
    let current = match store.current_round().await? {
        Some(r) => r,
        // (No round: id 0, which the writer only uses for boards.)
        None if settings.no_boards => relay_store::RoundInfo::default(),
        None => {
            let date = today();
            let r = store
                .create_auto_round(&format!("Relay {date}"), &date)
                .await?;
            tracing::info!(round = r.id, "no round configured: made one for the boards");
            r
        }
    };
    // --delay sets the delay of the tournament the service made itself; an arbiter's
    // setting of a configured one is never overwritten.
    if let Some(d) = settings.delay
        && current.auto
    {
        store
            .update_tournament(
                current.tournament_id,
                &relay_store::TournamentPatch {
                    delay_secs: Some(d),
                    ..Default::default()
                },
            )
            .await?;
    }
    // Games to carry on with: each e-board's game in the newest open round it is assigned in
    // (boards still finishing the previous round carry on there).
    let (slots, resume) = if settings.no_boards {
        Default::default()
    } else {
        load_carry(&store).await?
    };
    let store_seqs = store.round_seqs().await?;
    let stores = Stores::open(store, &settings.db)
        .await
        .with_context(|| format!("database {}", settings.db))?;
    let cfg = RecorderConfig {
        settle_ms: settings.settle_ms,
        ..RecorderConfig::default()
    };
    let core = Core::start(
        stores,
        settings.admin_token.clone(),
        current,
        Carry {
            slots,
            resume,
            seqs: Some(store_seqs),
            listener,
        },
        cfg,
        live::Limits {
            client_silence: settings.client_silence,
        },
    );
    let Core {
        shared,
        writer: writer_task,
        hall: hall_task,
        ports: ports_tx,
    } = core;
    if let Some(token) = settings.accept_push_token.clone() {
        shared.accept_pushes(token);
        tracing::info!("taking pushes from venue relays (POST /api/push)");
    }
    if let Some(target) = settings.push_to.clone() {
        tokio::spawn(upstream::push(shared.clone(), target));
    }
    if let Some(target) = settings.lichess.clone() {
        tokio::spawn(lichess::push(shared.clone(), target));
    }
    let ports = if settings.no_boards {
        tracing::info!("reading no ports (--no-boards)");
        if matches!(shared.store, Store::Sqlite(_)) {
            tracing::warn!(
                "--no-boards on SQLite: changes another relay writes to the same file are not followed live (that needs PostgreSQL); this relay serves what the file holds"
            );
        }
        Vec::new()
    } else {
        settings.ports.clone()
    };
    // On PostgreSQL a port is read only under its lock: a second relay started on the same
    // ports waits as a standby and takes over when this one dies (`claims`).
    let claims = Arc::new(claims::PortClaims::new(
        matches!(shared.store, Store::Postgres(_)),
        stop.clone(),
    ));
    let _ = shared.health.claims.set(claims.clone());
    tokio::spawn(claims::keep(shared.clone(), claims.clone()));
    let watcher = hall::watch_ports(ports, settings.mode, ports_tx, stop.clone(), claims);

    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .with_context(|| format!("cannot listen on {}", settings.listen))?;
    let addr = listener.local_addr()?;
    ready(addr);
    let app = api::app(shared.clone(), settings.web_dir.clone());
    let stop_http = stop.clone();
    let closing = shared.clone();
    connections::serve(listener, app, async move {
        shutdown_signal(stop_http.clone()).await;
        stop_http.store(true, Ordering::Relaxed);
        tracing::info!("shutting down: closing clients, flushing the store");
        closing.close_clients();
    })
    .await;
    // Stop readings, let the hall flush its recorders, then the writer empty its queue.
    stop.store(true, Ordering::Relaxed);
    let _ = tokio::task::spawn_blocking(move || watcher.join()).await;
    let _ = hall_task.await;
    shared.to_writer(writer::Job::Shutdown);
    let pending = shared.health.pending_writes.load(Ordering::Relaxed);
    if !shared.health.store_ok.load(Ordering::Relaxed) {
        tracing::warn!(
            pending,
            "the database is not answering: waiting to store what was read; interrupt again to quit without it"
        );
    }
    // A second signal quits at once, whatever is still waiting for the database.
    tokio::select! {
        _ = writer_task => {}
        _ = shutdown_signal(Arc::new(AtomicBool::new(false))) => {
            tracing::error!(
                pending = shared.health.pending_writes.load(Ordering::Relaxed),
                "quit before everything read was stored"
            );
            std::process::exit(1);
        }
    }
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal(stop: Arc<AtomicBool>) {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let flag = async {
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => {}
        _ = flag => {}
    }
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub options: ServeOptions,
}

pub fn main(args: ServeArgs) -> Result<()> {
    let settings = args.options.settle()?;
    let stop = Arc::new(AtomicBool::new(false));
    run(settings, stop, |addr| {
        println!("relay: serving on http://{addr}/");
    })
}
