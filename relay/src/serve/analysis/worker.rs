//! An evaluation worker: asks for a position, has its engine think about it, hands the verdict
//! back, and again. The same loop runs on threads of the service (`relay serve
//! --eval-workers N`, asking the desk directly) and in `relay eval-worker` on any machine
//! (asking a relay over HTTP); [`Source`] is the difference.

use super::desk::{Analysis, Answer, Refused};
use super::engine::{Engine, EngineError};
use relay_store::Score;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A position to evaluate, and how long to think.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub lease: u64,
    pub fen: String,
    pub movetime_ms: u64,
}

/// Why the source of positions could not be asked (the relay away, its answer refused or
/// unreadable), in words for the worker's log; the worker waits and asks again.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SourceFailed(pub String);

impl From<String> for SourceFailed {
    fn from(why: String) -> Self {
        SourceFailed(why)
    }
}

/// Where a worker gets positions and takes its answers.
pub trait Source {
    /// The next position, or `None` when there was none for a while (ask again).
    fn next(&self) -> Result<Option<Job>, SourceFailed>;
    fn answer(&self, a: Answer) -> Result<(), SourceFailed>;
    /// A position the worker could not finish (its engine failed).
    fn give_back(&self, lease: u64);
}

/// How a worker runs its engine.
#[derive(Clone, Debug)]
pub struct WorkerSettings {
    pub engine: PathBuf,
    /// Search threads of the engine.
    pub threads: u32,
    pub hash_mb: u32,
}

/// Waits after a failure (the relay or the engine), doubling up to a limit.
struct Backoff(Duration);

impl Backoff {
    fn new() -> Backoff {
        Backoff(Duration::from_millis(250))
    }
    fn wait(&mut self, stop: &AtomicBool) {
        let until = std::time::Instant::now() + self.0;
        while std::time::Instant::now() < until && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.0 = (self.0 * 2).min(Duration::from_secs(10));
    }
}

/// Works until `stop` is set: the engine is started (again, after it failed) and fed one
/// position after another. `done` is called after each answer taken (for counting).
pub fn work(source: &dyn Source, settings: &WorkerSettings, stop: &AtomicBool, done: &dyn Fn()) {
    let mut engine: Option<Engine> = None;
    let mut backoff = Backoff::new();
    while !stop.load(Ordering::Relaxed) {
        let e = match engine.as_mut() {
            Some(e) => e,
            None => match Engine::start(&settings.engine, settings.threads, settings.hash_mb) {
                Ok(e) => {
                    tracing::info!(engine = %e.name, "evaluation worker ready");
                    engine.insert(e)
                }
                Err(err) => {
                    tracing::error!(error = %err, "evaluation worker has no engine");
                    backoff.wait(stop);
                    continue;
                }
            },
        };
        let job = match source.next() {
            Ok(Some(job)) => job,
            Ok(None) => continue,
            Err(err) => {
                tracing::warn!(error = %err, "no position from the relay");
                backoff.wait(stop);
                continue;
            }
        };
        match e.evaluate(&job.fen, job.movetime_ms) {
            Ok(v) => {
                let Some(score) = Score::from_parts(v.cp, v.mate) else {
                    // The engine's reader gives a verdict only with a score.
                    continue;
                };
                let answer = Answer {
                    fen: job.fen,
                    score,
                    depth: v.depth,
                    line: v.line,
                    engine: e.name.clone(),
                };
                match source.answer(answer) {
                    Ok(()) => {
                        backoff = Backoff::new();
                        done();
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "evaluation not taken");
                        backoff.wait(stop);
                    }
                }
            }
            Err(EngineError::NoScore) => {
                // The position itself (the relay hands out none without moves): the lease
                // runs out and another engine may try.
                tracing::warn!(fen = %job.fen, "the engine gave no score");
            }
            Err(err) => {
                tracing::warn!(error = %err, fen = %job.fen, "the engine failed; starting it again");
                source.give_back(job.lease);
                engine = None;
                if matches!(err, EngineError::Start { .. }) {
                    backoff.wait(stop);
                }
            }
        }
    }
}

/// The desk of this service, asked directly by its own workers.
///
/// A worker is a plain thread, and the desk's calls are futures on the service's runtime. The
/// worker does not poll them itself (`Handle::block_on`): the runtime may end under it when the
/// service stops, and a timer polled on an ending runtime panics. Each call is spawned onto the
/// runtime instead and its answer awaited on a channel; a runtime that has ended drops the
/// call, the channel closes, and the worker sees the stop.
struct Local {
    analysis: Arc<Analysis>,
    runtime: tokio::runtime::Handle,
}

impl Local {
    /// `call` run on the service's runtime; `None` once that runtime has ended.
    fn on_runtime<T, F>(&self, call: F) -> Option<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = T> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.runtime.spawn(async move {
            let _ = tx.send(call.await);
        });
        rx.blocking_recv().ok()
    }
}

impl Source for Local {
    fn next(&self) -> Result<Option<Job>, SourceFailed> {
        let terms = self.analysis.terms;
        let analysis = self.analysis.clone();
        // `None` twice over: no position within the wait, or the service has stopped (the
        // worker's loop then sees its stop flag).
        let task = self
            .on_runtime(async move { analysis.next(Duration::from_secs(1)).await })
            .flatten();
        Ok(task.map(|t| Job {
            lease: t.lease,
            movetime_ms: terms.movetime_for(t.behind),
            fen: t.fen,
        }))
    }

    fn answer(&self, a: Answer) -> Result<(), SourceFailed> {
        let analysis = self.analysis.clone();
        match self.on_runtime(async move { analysis.answer(a).await }) {
            // Taken back on the board while the engine thought: nothing to keep.
            Some(Ok(_) | Err(Refused::Unplayed)) => Ok(()),
            Some(Err(e)) => Err(SourceFailed(e.to_string())),
            None => Err(SourceFailed(
                "the service stopped before the evaluation was stored".into(),
            )),
        }
    }

    fn give_back(&self, lease: u64) {
        self.analysis.give_back(lease);
    }
}

/// Starts `n` workers on threads of this service, each with an engine of one thread, until
/// `stop` is set.
pub fn start_local(analysis: Arc<Analysis>, n: usize, engine: &Path, stop: Arc<AtomicBool>) {
    let runtime = tokio::runtime::Handle::current();
    for i in 0..n {
        let source = Local {
            analysis: analysis.clone(),
            runtime: runtime.clone(),
        };
        let settings = WorkerSettings {
            engine: engine.to_path_buf(),
            threads: 1,
            hash_mb: 64,
        };
        let stop = stop.clone();
        let started = std::thread::Builder::new()
            .name(format!("relay-eval-{i}"))
            .spawn(move || work(&source, &settings, &stop, &|| {}));
        if let Err(e) = started {
            tracing::error!(error = %e, "evaluation worker thread not started");
        }
    }
}
