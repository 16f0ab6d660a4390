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
//! The modules stand in layers, each importing only those below it (checked by
//! `relay/tests/house_rules.rs`; ARCHITECTURE.md draws the map):
//!
//! 1. `views` (the views' shapes), `id` (the interface's ids), `health`, `instance`,
//!    `metrics`: nothing of the service.
//! 2. `wire` (the messages), `live` (the boards' live state), `jobs` (what the hall and the
//!    writer ask of each other).
//! 3. `events`, `lookup` (views read from the store), `order`; then `feeds`, `publish`.
//! 4. The parts, each with its own handles: `writer`, `hall`, `follow`, `claims`, `push`
//!    (to a cloud relay and to Lichess: one loop, `push::run`, and a state per target).
//! 5. `service` puts them together; `api` answers HTTP on top; this file runs it all.

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
pub mod views;
pub mod wire;
pub mod writer;

pub use options::{ServeOptions, Settings};
pub use service::{Carry, Core, Limits, Shared, Stores};
pub use writer::load_carry;

use anyhow::{Context, Result};
use clap::Args;
use relay_core::recorder::RecorderConfig;
use relay_store::Store;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
            tracing::info!(round = %r.id, "no round configured: made one for the boards");
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
    // --event-key names the event of the tournament the service made itself (several halls
    // pushing one event to a cloud relay); a configured tournament's key is the arbiter's.
    if let Some(key) = &settings.event_key
        && current.auto
    {
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
            Ok(()) => {}
            // An earlier tournament of this relay has it (its rounds all final, the boards
            // went to a new one): the key stays there, so the new tournament's rounds do not
            // land on the old ones in the cloud. An arbiter moves it if that is wanted.
            Err(relay_store::StoreError::Conflict(m)) => {
                tracing::warn!(key = %key, tournament = %current.tournament_id, "--event-key not given to this relay's new tournament: {m}");
            }
            Err(e) => return Err(e).context("--event-key"),
        }
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
        Limits {
            client_silence: settings.client_silence,
        },
        settings.first_board,
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
    if let Some(eval) = settings.eval.clone() {
        shared.evaluate(
            analysis::desk::EvalTerms {
                movetime_ms: eval.movetime_ms,
            },
            eval.local_workers,
            &eval.engine,
            eval.token,
            stop.clone(),
        );
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
    let _ = shared.claims.set(claims.clone());
    tokio::spawn(claims::keep(
        shared.store.clone(),
        shared.hall.clone(),
        claims.clone(),
    ));
    let watcher = hall::watch_ports(ports, settings.mode, ports_tx, stop.clone(), claims);

    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .with_context(|| format!("cannot listen on {}", settings.listen))?;
    let addr = listener.local_addr()?;
    ready(addr);
    let app = api::app(
        shared.clone(),
        settings.web_dir.clone(),
        settings.photos_dir.clone(),
    );
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
    shared.writer.send(jobs::Job::Shutdown);
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
