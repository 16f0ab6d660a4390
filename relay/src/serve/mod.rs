//! `relay serve`: boards, recorders, store and clients in one service.
//!
//! ```text
//! reader threads (one per port) ──PortEvent──▶ hall thread (recorders) ─Job─▶ writer thread
//!                                                                             │ commit, then
//!                                                                             ▼ publish
//!                               HTTP / WebSocket clients ◀── feeds ◀── order ◀┘
//! ```
//! The hall never waits for the database; the writer is the only part that changes games in
//! the store and the only part that announces changes, always after the commit.
//!
//! The modules stand in layers, each importing only those below it: ARCHITECTURE.md ("The
//! service's layers") is the one map of them, and `relay/tests/house_rules.rs` fails on an
//! import circle.
//!
//! This file runs it all: [`start`] opens the store and starts every part, and
//! [`Started::serve`] answers HTTP on a listener its caller bound until the caller's
//! `shutdown` future resolves, then drains. What ends the service (Ctrl-C, SIGTERM) and the
//! exit status are the caller's choice (`cli::serve`): nothing here ends the process.

pub mod alarm;
pub mod analysis;
pub mod api;
pub mod claims;
pub mod connections;
pub mod events;
pub mod feeds;
pub mod follow;
pub mod hall;
pub mod health;
pub mod id;
pub mod instance;
pub mod jobs;
pub mod live;
pub mod lookup;
pub mod metrics;
pub mod options;
pub mod order;
pub mod pages;
pub mod publish;
pub mod push;
pub mod service;
pub mod shutdown;
pub mod sources;
pub mod views;
pub mod wire;
pub mod writer;

pub use options::{ServeOptions, Settings};
pub use service::{Carry, Core, Limits, Shared, Stores};
pub use writer::load_carry;

use anyhow::{Context, Result};
use hall::PortInput;
use relay_core::recorder::RecorderConfig;
use relay_store::{RoundInfo, Store};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub fn today() -> String {
    // Days since the epoch to a civil date (proleptic Gregorian), without a date crate.
    let days = relay_store::now_ms().div_euclid(86_400_000);
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

/// How a service that was told to stop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Ended {
    /// Everything read was stored.
    Drained,
    /// Told to quit while the writer still waited for the database: `pending` jobs (moves,
    /// readings) were never stored.
    Abandoned { pending: u64 },
}

/// The service with every part running (store, writer, hall, port readers, pushers), not
/// yet answering HTTP: [`start`] makes it, [`Started::serve`] answers on a listener.
#[derive(Debug)]
pub struct Started {
    shared: Arc<Shared>,
    writer: JoinHandle<()>,
    hall: JoinHandle<()>,
    /// The thread that finds ports and starts a reader for each.
    watcher: std::thread::JoinHandle<()>,
    web_dir: Option<PathBuf>,
    photos_dir: Option<PathBuf>,
}

/// Opens the store and starts every part the settings ask for.
pub async fn start(settings: &Settings) -> Result<Started> {
    let store = Store::open(&settings.db)
        .await
        .with_context(|| format!("database {}", settings.db))?;
    tracing::info!(backend = store.backend(), "database open");
    // Other relays' commits on the same PostgreSQL: listened for before the change numbers
    // are read, so nothing committed in between is missed.
    let listener = store.listen().await?;
    let current = current_round(&store, settings).await?;
    set_own_tournament(&store, &current, settings).await?;
    let core = start_core(store, listener, current, settings).await?;
    start_options(&core.shared, settings);
    // The relay reading the boards polls the sources too (one of several on a PostgreSQL).
    if !settings.no_boards {
        sources::start_all(core.shared.polling()).await;
    }
    let watcher = watch_boards(&core.shared, settings, core.ports);
    Ok(Started {
        shared: core.shared,
        writer: core.writer,
        hall: core.hall,
        watcher,
        web_dir: settings.web_dir.clone(),
        photos_dir: settings.photos_dir.clone(),
    })
}

impl Started {
    /// Answers HTTP on `listener` until `shutdown` resolves; then clients are closed, readings
    /// stop, the hall flushes its recorders and the writer stores everything it was given.
    /// `quit` is first polled once the service waits for the writer and ends that wait (an
    /// operator's second interrupt while the database is down): [`Ended::Abandoned`].
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
        quit: impl Future<Output = ()>,
    ) -> Ended {
        let app = api::app(self.shared.clone(), self.web_dir, self.photos_dir);
        let closing = self.shared.clone();
        connections::serve(listener, app, async move {
            shutdown.await;
            tracing::info!("shutting down: closing clients, flushing the store");
            closing.shut_down();
        })
        .await;
        drain(&self.shared, self.watcher, self.hall, self.writer, quit).await
    }
}

/// The round boards play in: the newest open one, or one made now (a relay without boards
/// makes none: it has no boards to put in it).
async fn current_round(store: &Store, settings: &Settings) -> Result<RoundInfo> {
    Ok(match store.current_round().await? {
        Some(r) => r,
        // (No round: id 0, which the writer only uses for boards.)
        None if settings.no_boards => RoundInfo::default(),
        None => {
            let date = today();
            let r = store
                .create_auto_round(&format!("Relay {date}"), &date)
                .await?;
            tracing::info!(round = %r.id, "no round configured: made one for the boards");
            r
        }
    })
}

/// `--delay` and `--event-key` set the tournament the service made itself; an arbiter's
/// settings of a configured one are never overwritten.
async fn set_own_tournament(store: &Store, current: &RoundInfo, settings: &Settings) -> Result<()> {
    if !current.auto {
        return Ok(());
    }
    if let Some(d) = settings.delay {
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
    // The event key: several halls pushing one event to a cloud relay.
    let Some(key) = &settings.event_key else {
        return Ok(());
    };
    let named = store
        .update_tournament(
            current.tournament_id,
            &relay_store::TournamentPatch {
                event_key: Some(Some(key.clone())),
                ..Default::default()
            },
        )
        .await;
    match named {
        Ok(()) => Ok(()),
        // An earlier tournament of this relay has it (its rounds all final, the boards went
        // to a new one): the key stays there, so the new tournament's rounds do not land on
        // the old ones in the cloud. An arbiter moves it if that is wanted.
        Err(relay_store::StoreError::Conflict(m)) => {
            tracing::warn!(key = %key, tournament = %current.tournament_id, "--event-key not given to this relay's new tournament: {m}");
            Ok(())
        }
        Err(e) => Err(e).context("--event-key"),
    }
}

/// The shared state, the writer and the hall, started on the store and carrying on with the
/// game each e-board was playing.
async fn start_core(
    store: Store,
    listener: Option<relay_store::Listener>,
    current: RoundInfo,
    settings: &Settings,
) -> Result<Core> {
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
    let carry = Carry {
        slots,
        resume,
        seqs: Some(store_seqs),
        listener,
    };
    let limits = Limits {
        client_silence: settings.client_silence,
    };
    let admin_token = settings.admin_token.clone();
    let core = Core::start(
        stores,
        admin_token,
        current,
        carry,
        cfg,
        limits,
        settings.first_board,
    )?;
    Ok(core)
}

/// What the options switch on besides the boards: pushes taken from venues, evaluation, and
/// pushing to a cloud relay and to Lichess.
fn start_options(shared: &Shared, settings: &Settings) {
    if let Some(token) = settings.accept_push_token.clone() {
        shared.accept_pushes(token);
        tracing::info!("taking pushes from venue relays (POST /api/push)");
    }
    if let Some(eval) = settings.eval.clone() {
        let terms = analysis::desk::EvalTerms {
            movetime_ms: eval.movetime_ms,
        };
        shared.evaluate(terms, eval.local_workers, &eval.engine, eval.token);
        tracing::info!(
            local_workers = eval.local_workers,
            engine = %eval.engine.display(),
            "evaluating positions as games reach them"
        );
    }
    if let Some(target) = settings.push_to.clone() {
        tokio::spawn(push::cloud::push(shared.pushing(), target));
    }
    if let Some(target) = settings.lichess.clone() {
        tokio::spawn(push::lichess::push(shared.pushing(), target));
    }
}

/// Starts watching for the ports (none with `--no-boards`); their readings go to the hall
/// through `ports_tx`. On PostgreSQL a port is read only under its lock: a second relay
/// started on the same ports waits as a standby and takes over when this one dies (`claims`).
fn watch_boards(
    shared: &Shared,
    settings: &Settings,
    ports_tx: mpsc::UnboundedSender<PortInput>,
) -> std::thread::JoinHandle<()> {
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
    let claims = Arc::new(claims::PortClaims::new(
        matches!(shared.store, Store::Postgres(_)),
        shared.stop_flag(),
    ));
    let _ = shared.claims.set(claims.clone());
    tokio::spawn(claims::keep(
        shared.store.clone(),
        shared.hall.clone(),
        claims.clone(),
    ));
    hall::watch_ports(ports, settings.mode, ports_tx, shared.stop_flag(), claims)
}

/// After the shutdown: the readers stop, the hall flushes its recorders, then the writer
/// empties its queue, unless `quit` resolves first.
async fn drain(
    shared: &Shared,
    watcher: std::thread::JoinHandle<()>,
    hall: JoinHandle<()>,
    writer: JoinHandle<()>,
    quit: impl Future<Output = ()>,
) -> Ended {
    let _ = tokio::task::spawn_blocking(move || watcher.join()).await;
    let _ = hall.await;
    shared.writer.send(jobs::Job::Shutdown);
    let pending = shared.health.pending_writes.load(Ordering::Relaxed);
    if !shared.health.store_ok.load(Ordering::Relaxed) {
        tracing::warn!(
            pending,
            "the database is not answering: waiting to store what was read; interrupt again to quit without it"
        );
    }
    tokio::select! {
        _ = writer => {
            tracing::info!("stopped");
            Ended::Drained
        }
        () = quit => Ended::Abandoned {
            pending: shared.health.pending_writes.load(Ordering::Relaxed),
        },
    }
}
