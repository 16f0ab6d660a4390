//! `relay eval-worker`: evaluates positions for a relay from any machine. It asks the relay
//! for a position (`POST /api/eval/next`, a long poll), runs the UCI engine on it, and hands
//! the verdict back (`POST /api/eval/answer`), on as many threads as asked, until stopped.

use crate::serve::analysis::desk::Answer;
use crate::serve::analysis::engine::default_engine;
use crate::serve::analysis::worker::{Job, Source, SourceFailed, WorkerSettings, work};
use anyhow::{Result, bail};
use clap::Args;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[derive(Args, Debug)]
pub struct EvalWorkerArgs {
    /// The relay to work for (`http://relay.example:8080`).
    #[arg(long, env = "RELAY_SERVER")]
    server: String,
    /// The relay's evaluation token (`relay serve --eval-token`).
    #[arg(long, env = "RELAY_EVAL_TOKEN", hide_env_values = true)]
    token: String,
    /// Positions evaluated at once, each by an engine with one search thread.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The UCI engine (default: `stockfish` on the PATH, else /usr/games/stockfish).
    #[arg(long, env = "RELAY_ENGINE")]
    engine: Option<PathBuf>,
    /// Hash table of each engine, in MB.
    #[arg(long, default_value_t = 64)]
    hash_mb: u32,
}

/// How long one request for a position waits at the relay before it answers "none".
const WAIT_SECS: u64 = 20;

/// The relay over HTTP.
struct Remote {
    agent: ureq::Agent,
    server: String,
    token: String,
}

impl Remote {
    fn post(&self, path: &str, body: Option<&Value>) -> Result<(u16, String), String> {
        let url = format!("{}{path}", self.server);
        let req = self
            .agent
            .post(&url)
            .header("Authorization", &format!("Bearer {}", self.token))
            .header(
                "User-Agent",
                &format!("relay-eval-worker/{}", env!("CARGO_PKG_VERSION")),
            );
        let sent = match body {
            Some(b) => req
                .header("Content-Type", "application/json")
                .send(b.to_string().as_bytes()),
            None => req.send_empty(),
        };
        let mut resp = sent.map_err(|e| format!("{url}: {e}"))?;
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        Ok((status, text))
    }
}

/// The relay's refusal, worded for the operator.
fn refusal(status: u16, text: &str) -> String {
    let said = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_string))
        .unwrap_or_else(|| text.chars().take(200).collect());
    format!("the relay answered {status}: {said}")
}

impl Source for Remote {
    fn next(&self) -> Result<Option<Job>, SourceFailed> {
        let (status, text) = self.post(&format!("/api/eval/next?wait_secs={WAIT_SECS}"), None)?;
        match status {
            204 => Ok(None),
            200 => {
                let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
                let (Some(lease), Some(fen), Some(movetime_ms)) = (
                    v["lease"].as_u64(),
                    v["fen"].as_str(),
                    v["movetime_ms"].as_u64(),
                ) else {
                    return Err(format!("the relay's task does not read: {text}").into());
                };
                Ok(Some(Job {
                    lease,
                    fen: fen.to_string(),
                    movetime_ms,
                }))
            }
            _ => Err(refusal(status, &text).into()),
        }
    }

    fn answer(&self, a: Answer) -> Result<(), SourceFailed> {
        let body = json!({
            "fen": a.fen, "cp": a.score.cp(), "mate": a.score.mate(), "depth": a.depth,
            "line": a.line, "engine": a.engine,
        });
        let (status, text) = self.post("/api/eval/answer", Some(&body))?;
        match status {
            200 => Ok(()),
            // Taken back on the board meanwhile: nothing to keep, nothing wrong.
            409 => Ok(()),
            _ => Err(refusal(status, &text).into()),
        }
    }

    fn give_back(&self, _lease: u64) {
        // The lease runs out at the relay; nothing to send.
    }
}

pub fn run(args: EvalWorkerArgs) -> Result<()> {
    let server = args.server.trim_end_matches('/').to_string();
    if !(server.starts_with("http://") || server.starts_with("https://")) {
        bail!("--server must be an http:// or https:// URL, not {server:?}");
    }
    if args.threads == 0 || args.threads > 256 {
        bail!("--threads must be between 1 and 256");
    }
    let engine = args.engine.clone().unwrap_or_else(default_engine);
    if !engine.is_file() {
        bail!(
            "no UCI engine at {} (apt-get install stockfish, or --engine PATH)",
            engine.display()
        );
    }
    let stop = super::stop_flag()?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        // The long poll waits WAIT_SECS at the relay; a little more for the answer to come.
        .timeout_global(Some(Duration::from_secs(WAIT_SECS + 15)))
        .http_status_as_error(false)
        .build()
        .into();
    let count = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    for i in 0..args.threads {
        let source = Remote {
            agent: agent.clone(),
            server: server.clone(),
            token: args.token.clone(),
        };
        let settings = WorkerSettings {
            engine: engine.clone(),
            threads: 1,
            hash_mb: args.hash_mb,
        };
        let stop = stop.clone();
        let count = count.clone();
        threads.push(
            std::thread::Builder::new()
                .name(format!("eval-{i}"))
                .spawn(move || {
                    work(&source, &settings, &stop, &|| {
                        count.fetch_add(1, Ordering::Relaxed);
                    })
                })?,
        );
    }
    eprintln!(
        "relay eval-worker: {} thread(s) of {} working for {server}; Ctrl-C to stop",
        args.threads,
        engine.display()
    );
    for t in threads {
        let _ = t.join();
    }
    eprintln!(
        "relay eval-worker: {} position(s) evaluated",
        count.load(Ordering::Relaxed)
    );
    Ok(())
}
