//! The service put together: the one place every part is made and handed the handles it
//! needs ([`Core::start`]), and what the HTTP routes are given ([`Shared`]). Nothing below
//! this module knows of it: the writer, the hall, the feeds, the follower and the pushers
//! each get their own narrow handles.

use super::analysis::desk::{self, Analysis, EvalTerms};
use super::analysis::worker::start_local;
use super::claims::PortClaims;
use super::feeds::Feeds;
use super::follow::{Follow, follow};
use super::hall::{Hall, PortInput};
use super::health::Health;
use super::jobs::{Resume, ToHall, ToWriter};
use super::live::Boards;
use super::lookup::Lookup;
use super::metrics::Metrics;
use super::order::Order;
use super::publish::Publisher;
use super::push::run::Pushing;
use super::push::status::Targets;
use super::shutdown::Shutdown;
use super::writer::{self, Slot, Writer};
use crate::serve::sources::{Polling, Sources};
use relay_core::recorder::RecorderConfig;
use relay_store::{RoundId, RoundInfo, Seq, SqliteCommits, Store, StoreError, now_ms};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::{mpsc, watch};

/// Bounds on what clients may cost, fixed at start-up.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How long a WebSocket client may answer nothing before it is closed.
    pub client_silence: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            client_silence: std::time::Duration::from_secs(60),
        }
    }
}

/// What the HTTP routes work with: the readers' store and the handles of every part, each a
/// part of its own; the tokens and the shutdown signal through methods.
#[derive(Debug)]
pub struct Shared {
    /// The readers' store (the writer has connections of its own): the routes that write
    /// take it (`lookup` has its reads alone).
    pub store: Store,
    /// Views read from the store, delays and the live PGN remembered.
    pub lookup: Lookup,
    /// Every round's feeds: what spectators follow.
    pub feeds: Arc<Feeds>,
    /// Committed changes go to the feeds through this, in change-number order.
    pub publisher: Publisher,
    pub boards: Arc<Boards>,
    pub health: Arc<Health>,
    pub metrics: Arc<Metrics>,
    /// Bounds set at start-up.
    pub limits: Limits,
    /// The hall's queue (arbiters' actions on games an e-board plays).
    pub hall: ToHall,
    /// The writer's queue (arbiters' actions that need no recorder).
    pub writer: ToWriter,
    /// The ports this relay wants and whether it reads each now (another relay on the same
    /// PostgreSQL may hold one: see `claims`); set once the ports are watched.
    pub claims: OnceLock<Arc<PortClaims>>,
    /// Each push target's state.
    pub targets: Targets,
    /// The analysis desk, when evaluation is on (`--eval-workers`, `--eval-token`).
    pub analysis: OnceLock<Arc<Analysis>>,
    /// The PGN sources this relay polls, and what each found.
    pub sources: Arc<Sources>,
    tokens: Tokens,
    started_at_ms: i64,
    /// Told when the service shuts down: live sockets close cleanly, readers and workers end.
    shutdown: Shutdown,
}

/// The tokens requests are checked against: the arbiters' (fixed at start-up) and the one
/// venue relays push with (`--accept-push-token`, set once after). Cheap to clone; its
/// `Debug` never shows a token.
#[derive(Clone)]
pub struct Tokens {
    admin: Option<Arc<str>>,
    push: Arc<OnceLock<String>>,
    eval: Arc<OnceLock<String>>,
}

impl Tokens {
    pub fn admin(&self) -> Option<&str> {
        self.admin.as_deref()
    }

    pub fn push(&self) -> Option<&str> {
        self.push.get().map(String::as_str)
    }

    /// The token evaluation workers on other machines send.
    pub fn eval(&self) -> Option<&str> {
        self.eval.get().map(String::as_str)
    }
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("admin", &self.admin.is_some())
            .field("push", &self.push.get().is_some())
            .field("eval", &self.eval.get().is_some())
            .finish()
    }
}

impl Shared {
    /// Takes pushes from venue relays that send this token.
    pub fn accept_pushes(&self, token: String) {
        let _ = self.tokens.push.set(token);
    }

    /// Evaluates positions as games reach them: the desk is started, with `local` workers on
    /// threads of this service running `engine`, and workers elsewhere sending `token` are
    /// served. Call once, on the runtime.
    pub fn evaluate(
        &self,
        terms: EvalTerms,
        local: usize,
        engine: &std::path::Path,
        token: Option<String>,
    ) -> Arc<Analysis> {
        let analysis = desk::start(
            self.publisher.clone(),
            self.lookup.clone(),
            self.store.clone(),
            self.publisher.positions(),
            terms,
        );
        let _ = self.analysis.set(analysis.clone());
        self.lookup.set_evaluating();
        if let Some(t) = token {
            let _ = self.tokens.eval.set(t);
        }
        if local > 0 {
            start_local(analysis.clone(), local, engine, self.stop_flag());
        }
        analysis
    }

    /// The tokens, for the HTTP edge's checks.
    pub fn tokens(&self) -> Tokens {
        self.tokens.clone()
    }

    pub fn uptime_s(&self) -> i64 {
        (now_ms() - self.started_at_ms) / 1000
    }

    /// The service is shutting down: live sockets close cleanly, port readers and engine
    /// workers end.
    pub fn shut_down(&self) {
        self.shutdown.begin();
    }

    /// Changes to `true` when the service shuts down.
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.shutdown.watch()
    }

    /// Set when the service shuts down, for threads, which cannot wait on [`Shared::closing`].
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.shutdown.flag()
    }

    /// What a pusher works with.
    /// What polling the PGN sources needs.
    pub fn polling(&self) -> Polling {
        Polling {
            store: self.store.clone(),
            boards: self.boards.clone(),
            hall: self.hall.clone(),
            sources: self.sources.clone(),
            closing: self.closing(),
        }
    }

    pub fn pushing(&self) -> Pushing {
        Pushing {
            lookup: self.lookup.clone(),
            store: self.store.clone(),
            news: self.publisher.news(),
            targets: self.targets.clone(),
        }
    }
}

/// The two connection pools of a service: one for readers (pages, platforms polling) and one
/// for the writer alone, so readers can never keep a move from being stored.
#[derive(Debug)]
pub struct Stores {
    pub readers: Store,
    pub writer: Store,
    /// The writer's connection for its group commits on a SQLite file, called on the
    /// writer's thread (`relay_store::SqliteCommits`); `None`: they go through `writer`.
    pub commits: Option<SqliteCommits>,
}

impl Stores {
    /// The writer's connections to the database at `url` (`readers` already open on it).
    pub async fn open(readers: Store, url: &str) -> Result<Stores, StoreError> {
        Ok(Stores {
            readers,
            writer: Store::open_writer(url).await?,
            commits: SqliteCommits::open(url)?,
        })
    }
}

/// The games the service carries on with after a restart.
#[derive(Debug, Default)]
pub struct Carry {
    /// Each e-board's game in the store (serial → slot).
    pub slots: HashMap<String, Slot>,
    /// What each e-board's recorder resumes from.
    pub resume: HashMap<String, Resume>,
    /// Each round's change number at start-up, where publishing in order starts from
    /// (`None`: from each round's first change published; in-process tests).
    pub seqs: Option<Vec<(RoundId, Seq)>>,
    /// Other relays' commits on the same PostgreSQL (taken before `seqs` were read).
    pub listener: Option<relay_store::Listener>,
}

/// A part of the ingest path whose thread could not be started: without the writer nothing
/// can be stored, without the hall nothing is read, so the service does not start.
#[derive(Debug, thiserror::Error)]
#[error("the {part}'s thread could not be started: {source}")]
pub struct PartNotStarted {
    part: &'static str,
    source: std::io::Error,
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
    name: &'static str,
    part: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<tokio::task::JoinHandle<()>, PartNotStarted> {
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    runtime
        .and_then(|rt| {
            std::thread::Builder::new()
                .name(format!("relay-{name}"))
                .spawn(move || {
                    rt.block_on(part);
                    let _ = done_tx.send(());
                })
        })
        .map_err(|source| PartNotStarted { part: name, source })?;
    Ok(tokio::spawn(async move {
        let _ = done_rx.await;
    }))
}

/// The service without its ports and listener: the shared state, the writer and the hall,
/// running. Port events go in through `ports`; `api::app` over `shared` answers HTTP. Tests
/// drive it in-process this way.
#[derive(Debug)]
pub struct Core {
    pub shared: Arc<Shared>,
    pub writer: tokio::task::JoinHandle<()>,
    pub hall: tokio::task::JoinHandle<()>,
    pub ports: mpsc::UnboundedSender<PortInput>,
}

impl Core {
    /// Makes every part and starts the writer and the hall (on the current tokio runtime).
    /// Fails only when the system gives no thread for one of them.
    pub fn start(
        stores: Stores,
        admin_token: Option<String>,
        current: RoundInfo,
        carry: Carry,
        cfg: RecorderConfig,
        limits: Limits,
        first_board: u32,
    ) -> Result<Core, PartNotStarted> {
        let boards = Arc::new(Boards::default());
        let health = Arc::new(Health::default());
        let metrics = Arc::new(Metrics::default());
        let lookup = Lookup::new(stores.readers.clone(), boards.clone());
        let feeds = Feeds::new(lookup.clone());
        feeds.start_sweep();
        let (order, holes) = Order::new(carry.seqs);
        let publisher = Publisher::new(
            Arc::new(order),
            feeds.clone(),
            boards.clone(),
            lookup.clone(),
        );
        let (hall_tx, hall_rx) = ToHall::channel();
        let (jobs_tx, jobs_rx) = ToWriter::channel();
        let shared = Arc::new(Shared {
            store: stores.readers.clone(),
            lookup: lookup.clone(),
            feeds,
            publisher: publisher.clone(),
            boards: boards.clone(),
            health: health.clone(),
            metrics: metrics.clone(),
            limits,
            hall: hall_tx.clone(),
            writer: jobs_tx.clone(),
            claims: OnceLock::new(),
            targets: Targets::default(),
            analysis: OnceLock::new(),
            sources: Default::default(),
            tokens: Tokens {
                admin: admin_token.map(Arc::from),
                push: Arc::default(),
                eval: Arc::default(),
            },
            started_at_ms: now_ms(),
            shutdown: Shutdown::default(),
        });
        let follower = Follow {
            publisher: publisher.clone(),
            lookup,
            boards: boards.clone(),
            writer: jobs_tx.clone(),
            metrics: metrics.clone(),
        };
        tokio::spawn(follow(follower, holes, carry.listener));
        health.store_ok.store(true, Ordering::Relaxed);
        if matches!(stores.readers, Store::Sqlite(_)) {
            tokio::spawn(checkpoints(stores.readers.clone(), shared.closing()));
        }
        let handles = writer::Handles {
            publisher,
            boards: boards.clone(),
            health,
            metrics: metrics.clone(),
            hall: hall_tx,
        };
        let writer = Writer::new(
            handles,
            stores.writer,
            stores.commits,
            current,
            carry.slots,
            jobs_rx,
        );
        let writer = writer.first_board(first_board);
        let writer = spawn_own_thread("writer", writer.run())?;
        let (ports, ports_rx) = mpsc::unbounded_channel();
        let hall = Hall::new(boards, metrics, cfg, carry.resume, jobs_tx);
        let closing = shared.closing();
        let hall = spawn_own_thread("hall", hall.run(ports_rx, hall_rx, closing))?;
        Ok(Core {
            shared,
            writer,
            hall,
            ports,
        })
    }
}

/// How often the readers' store checkpoints the SQLite WAL, which the writer's commits leave
/// alone (`Store::open_writer`).
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Checkpoints the WAL from the readers' side until the service stops (SQLite only: there is
/// nothing to do on PostgreSQL).
async fn checkpoints(store: Store, mut closing: watch::Receiver<bool>) {
    let mut every = tokio::time::interval(CHECKPOINT_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = closing.changed() => return,
        }
        if let Err(e) = store.checkpoint().await {
            tracing::debug!(error = %e, "WAL checkpoint");
        }
    }
}
