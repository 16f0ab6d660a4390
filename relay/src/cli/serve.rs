//! `relay serve`, and the service under `relay demo`: the process around the library's
//! service. What only a process decides is here, not in `serve`: the open-file limit, the
//! runtime, the socket listened on, which signals stop the service (SIGINT and SIGTERM: the
//! first drains and stores everything read, a second one while the database keeps the writer
//! waiting quits without it) and the exit status each ending gets.

use crate::serve::{self, Ended, ServeOptions, Settings};
use anyhow::{Context, Result, bail};
use clap::Args;
use std::net::SocketAddr;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::watch;

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub options: ServeOptions,
}

pub fn main(args: ServeArgs) -> Result<()> {
    let settings = args.options.settle()?;
    run(settings, |addr| {
        println!("relay: serving on http://{addr}/");
    })
}

/// Runs the service until SIGINT or SIGTERM. `ready` gets the address actually listened on,
/// once the service answers there.
pub fn run(settings: Settings, ready: impl FnOnce(SocketAddr)) -> Result<()> {
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
    let ended = rt.block_on(async {
        let started = serve::start(&settings).await?;
        let listener = tokio::net::TcpListener::bind(settings.listen)
            .await
            .with_context(|| format!("cannot listen on {}", settings.listen))?;
        let interrupts = Interrupts::listen();
        ready(listener.local_addr()?);
        let (shutdown, quit) = (interrupts.clone().first(), interrupts.next());
        anyhow::Ok(started.serve(listener, shutdown, quit).await)
    })?;
    match ended {
        Ended::Drained => Ok(()),
        Ended::Abandoned { pending } => {
            // The writer's thread may still be retrying the database: nothing is waited for.
            rt.shutdown_background();
            bail!("quit before everything read was stored ({pending} jobs were waiting)")
        }
    }
}

/// SIGINT (Ctrl-C) and SIGTERM, counted from the moment they are listened for: until then
/// either ends the process, as it does for any program.
#[derive(Clone, Debug)]
struct Interrupts(watch::Receiver<u32>);

impl Interrupts {
    /// Listens on the current runtime. A signal that cannot be listened for is warned about
    /// and never arrives.
    fn listen() -> Interrupts {
        let (tx, rx) = watch::channel(0);
        let mut int = listen_for(SignalKind::interrupt(), "SIGINT");
        let mut term = listen_for(SignalKind::terminate(), "SIGTERM");
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = arrival(&mut int) => {}
                    () = arrival(&mut term) => {}
                }
                tx.send_modify(|n| *n += 1);
            }
        });
        Interrupts(rx)
    }

    /// Resolves once a signal arrived since [`Interrupts::listen`].
    async fn first(mut self) {
        if self.0.wait_for(|n| *n > 0).await.is_err() {
            // The listening task is gone (the runtime is shutting down): no signal will come.
            std::future::pending::<()>().await;
        }
    }

    /// Resolves on a signal that arrives after this is first polled: one sent while the
    /// service was still closing its clients does not also abandon the writer.
    async fn next(mut self) {
        self.0.borrow_and_update();
        if self.0.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

fn listen_for(kind: SignalKind, name: &str) -> Option<Signal> {
    signal(kind)
        .inspect_err(|e| tracing::warn!(error = %e, "cannot listen for {name}"))
        .ok()
}

/// The next arrival of `signal`; never, once it cannot arrive.
async fn arrival(signal: &mut Option<Signal>) {
    if let Some(s) = signal {
        if s.recv().await.is_some() {
            return;
        }
        *signal = None;
    }
    std::future::pending::<()>().await;
}
