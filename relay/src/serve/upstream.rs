//! Pushing upstream: a venue relay sends everything it commits to a cloud relay
//! (`--push-to URL --push-token TOKEN`), which serves it as its own (see
//! `relay_store::push` for the batch and how it is applied, and `api::push` for the cloud's
//! route).
//!
//! The outbox is the venue's change log: for each target the store keeps how far each
//! round's changes were delivered (written at most every 2 s, so that the pusher hardly
//! competes with the writer for SQLite's lock), and only a reply from the cloud moves that
//! on. So a
//! restart of either side, a cut link or a lost reply costs nothing: the next batch carries
//! the whole state of every game changed since, which the cloud applies once (a batch it
//! already has changes nothing). The pusher wakes on every change handed to this relay's
//! feeds, sends at most one request at a time, and after a failure tries again after 250 ms,
//! doubling up to 5 s, so live moves flow again within seconds of the link coming back.

use super::claims::Duty;
use super::instance::instance_name;
use super::live::Boards;
use super::lookup::Lookup;
use super::targets::Targets;
use relay_store::{PushBatch, PushConflict, PushReply, Store, StoredGame, now_ms};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// What a pusher works with.
#[derive(Clone, Debug)]
pub struct Pushing {
    /// The store (what to send) and the rounds' delays.
    pub lookup: Lookup,
    /// The e-boards this relay reads, for the cloud's console.
    pub boards: Arc<Boards>,
    /// Changes each time a change is committed or e-board news handed on.
    pub news: watch::Receiver<u64>,
    /// Where the pusher says how it goes.
    pub targets: Targets,
}

/// Games one request carries at most (a whole game each: about 2–3 MiB of JSON for long
/// games, well under the cloud's 8 MiB body limit). A plan with more games goes out in
/// several requests, and is delivered once the last is answered.
const GAMES_PER_BATCH: usize = 150;
/// Changes one plan reads at most (their game ids only).
const PLAN_CHANGES: usize = 500_000;
/// Batch numbers taken from the store at a time.
const NUMBERS: i64 = 1000;
/// How far rounds were delivered is written to the store at most this often: on the
/// venue's SQLite every write competes with the writer's, and after a crash the games of
/// the last moments are only sent again (the cloud takes them once).
const NOTE_DELIVERED_MS: i64 = 2000;
/// Changes read from the log in one query while planning a batch.
const PAGE: u32 = 5000;
/// How long a request may take.
const TIMEOUT: Duration = Duration::from_secs(20);
/// E-board news is sent at most this often (readings change `last_seen` all the time).
const EBOARDS_EVERY_MS: i64 = 2000;
/// With nothing to send, a request this often all the same: the console learns that the
/// link works (or not) and which games the cloud still holds back.
const HEARTBEAT_MS: i64 = 10_000;

/// Where a venue pushes to.
#[derive(Clone, Debug)]
pub struct PushTarget {
    /// The cloud relay's base URL (`https://cloud.example/`).
    pub url: String,
    pub token: String,
}

/// The next delivery: the games to send and how far each round will then be delivered.
#[derive(Debug, Default)]
struct Plan {
    games: BTreeSet<i64>,
    upto: Vec<(i64, i64)>,
    /// Changes the delivery covers.
    changes: i64,
    /// Changes waiting in all (these and beyond).
    queued: i64,
}

/// Reads the outbox: the rounds whose changes were not all delivered, and every game those
/// changes touched (reading at most [`PLAN_CHANGES`] changes: a round beyond that is
/// delivered up to where the reading stopped, and the rest comes in the next plan).
async fn plan(store: &Store, sent: &HashMap<i64, i64>) -> Result<Plan, relay_store::StoreError> {
    let mut plan = Plan::default();
    let mut read = 0usize;
    for (round, seq) in store.round_seqs().await? {
        let from = sent.get(&round).copied().unwrap_or(0);
        if seq <= from {
            continue;
        }
        plan.queued += seq - from;
        let mut after = from;
        while read < PLAN_CHANGES {
            let page = store.change_games_since(round, after, PAGE).await?;
            read += page.len();
            for (s, game) in &page {
                if let Some(g) = game {
                    plan.games.insert(*g);
                }
                after = *s;
            }
            if page.len() < PAGE as usize {
                break;
            }
        }
        if after > from {
            plan.changes += after - from;
            plan.upto.push((round, after));
        }
    }
    Ok(plan)
}

fn hash_of(v: &impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// The e-boards this relay reads, as its console shows them, and a hash of what matters in
/// them (not `last_seen`, which every reading moves).
fn own_eboards(boards: &Boards) -> (Vec<serde_json::Value>, u64) {
    let me = instance_name();
    let mut views: Vec<_> = boards
        .eboards()
        .into_iter()
        .filter(|e| e.read_by == me)
        .collect();
    views.sort_by(|a, b| a.serial.cmp(&b.serial));
    let key: Vec<String> = views
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.last_seen_ms = 0;
            serde_json::to_string(&e).unwrap_or_default()
        })
        .collect();
    let values = views
        .into_iter()
        .filter_map(|e| serde_json::to_value(e).ok())
        .collect();
    (values, hash_of(&key))
}

/// How sending a plan went.
enum Outcome {
    /// Every request answered: the plan is delivered.
    Delivered,
    /// Plan again at once.
    Again,
    /// Why, and how long to wait (ms) before trying again.
    Failed(String, u64),
}

/// An answer from the cloud, or why there was none.
enum Answer {
    Ok(PushReply),
    Refused(u16, String),
    Failed(String),
}

/// What a push target answered: its status and body, or why there was no answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub text: String,
}

impl Reply {
    /// The `error` of a JSON error answer, else the body as it came.
    pub fn error(self) -> String {
        serde_json::from_str::<serde_json::Value>(&self.text)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or(self.text)
    }
}

/// POSTs `body` with the Bearer `token` and waits for the answer (blocking: run off the
/// async threads). Every status is an answer; only a failed exchange is an error.
pub fn post(
    url: &str,
    token: &str,
    content_type: &str,
    body: &[u8],
    timeout: Duration,
) -> Result<Reply, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let mut resp = agent
        .post(url)
        .header("Authorization", &format!("Bearer {token}"))
        .header("Content-Type", content_type)
        .header(
            "User-Agent",
            &format!("relay/{} (DGT live relay)", env!("CARGO_PKG_VERSION")),
        )
        .send(body)
        .map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let text = resp
        .body_mut()
        .with_config()
        .limit(4 << 20)
        .read_to_string()
        .unwrap_or_default();
    Ok(Reply { status, text })
}

/// Sends one batch to the cloud relay (blocking).
fn send(url: &str, token: &str, body: Vec<u8>) -> Answer {
    match post(url, token, "application/json", &body, TIMEOUT) {
        Err(e) => Answer::Failed(e),
        Ok(r) if r.status == 200 => match serde_json::from_str::<PushReply>(&r.text) {
            Ok(r) => Answer::Ok(r),
            Err(e) => Answer::Failed(format!("the answer does not read: {e}")),
        },
        Ok(r) => Answer::Refused(r.status, r.error()),
    }
}

/// Pushes to one cloud relay for the life of the service.
pub async fn push(shared: Pushing, target: PushTarget) {
    let endpoint = format!("{}/api/push", target.url.trim_end_matches('/'));
    let slot = shared.targets.register(target.url.clone(), "relay");
    let store = shared.lookup.store.clone();
    let origin = loop {
        match store.upstream_origin(&target.url).await {
            Ok(o) => break o,
            Err(e) => {
                slot.failed(format!("the store: {e}"));
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    };
    // How far each round was delivered: read from the store when this relay starts pushing
    // (at start, or taking over from another relay that moved the marks on), kept here,
    // written back now and then.
    let mut sent: Option<HashMap<i64, i64>> = None;
    let mut noted_ms: i64 = 0;
    let mut unnoted = false;
    // Batch numbers reserved and not used yet: (next, last).
    let mut numbers: (i64, i64) = (1, 0);
    tracing::info!(to = %target.url, origin = %origin, "pushing every change to a cloud relay");
    let name = instance_name().to_string();
    let mut news = shared.news.clone();
    let mut backoff_ms: u64 = 0;
    let mut meta_sent: Option<u64> = None;
    let mut eboards_sent: (Option<u64>, i64) = (None, 0);
    let mut conflicts: BTreeMap<i64, PushConflict> = BTreeMap::new();
    let mut duty = Duty::new(format!("relay-push:{}", target.url.trim_end_matches('/')));
    let mut standing_by = false;
    loop {
        if backoff_ms > 0 {
            tokio::time::sleep(Duration::from_millis(backoff_ms)).await;
        } else {
            // Whatever came meanwhile is in the log; a second's wait at most, for news
            // the feeds did not carry (a round edited, the e-boards' state).
            let _ = tokio::time::timeout(Duration::from_secs(1), news.changed()).await;
        }
        news.mark_unchanged();
        if !duty.mine(&store).await {
            if !standing_by {
                tracing::info!(to = %target.url, "another relay pushes to the cloud relay: standing by");
                slot.edit(|t| t.standing_by = true);
            }
            standing_by = true;
            sent = None;
            backoff_ms = 0;
            continue;
        }
        if sent.is_none() {
            match store.upstream_sent(&target.url).await {
                Ok(s) => sent = Some(s),
                Err(e) => {
                    slot.failed(format!("the store: {e}"));
                    continue;
                }
            }
        }
        let Some(sent) = sent.as_mut() else { continue };
        if standing_by {
            // Taking over from the relay that pushed: what it sent of the tournaments and
            // e-boards is not known here.
            standing_by = false;
            unnoted = false;
            meta_sent = None;
            eboards_sent = (None, 0);
            slot.edit(|t| t.standing_by = false);
            tracing::info!(to = %target.url, "this relay pushes to the cloud relay now");
        }
        if unnoted && now_ms() - noted_ms >= NOTE_DELIVERED_MS {
            let upto: Vec<(i64, i64)> = sent.iter().map(|(r, s)| (*r, *s)).collect();
            match store.upstream_delivered(&target.url, &upto).await {
                Ok(()) => {
                    unnoted = false;
                    noted_ms = now_ms();
                }
                Err(e) => slot.failed(format!("the store: {e}")),
            }
        }
        let plan = match plan(&store, sent).await {
            Ok(p) => p,
            Err(e) => {
                slot.failed(format!("the store: {e}"));
                backoff_ms = 1000;
                continue;
            }
        };
        slot.edit(|t| t.queued = plan.queued);
        let tournaments = match store.tournaments().await {
            Ok(mut ts) => {
                for r in ts.iter_mut().flat_map(|t| t.rounds.iter_mut()) {
                    r.seq = 0;
                }
                ts
            }
            Err(e) => {
                slot.failed(format!("the store: {e}"));
                backoff_ms = 1000;
                continue;
            }
        };
        let meta = hash_of(&serde_json::to_string(&tournaments).unwrap_or_default());
        // The e-boards are looked at only when they may be sent (every commit wakes this
        // loop; writing out a thousand e-boards each time would be work for nothing).
        let may_send = now_ms() - eboards_sent.1 >= EBOARDS_EVERY_MS;
        let (eboards, eboards_hash) = if may_send {
            own_eboards(&shared.boards)
        } else {
            (Vec::new(), 0)
        };
        let eboards_due = may_send && eboards_sent.0 != Some(eboards_hash);
        let last_ok = slot.status().last_ok_ms.unwrap_or(0);
        if plan.games.is_empty()
            && meta_sent == Some(meta)
            && !eboards_due
            && now_ms() - last_ok < HEARTBEAT_MS
        {
            continue;
        }
        let ids: Vec<i64> = plan.games.iter().copied().collect();
        let chunks: Vec<&[i64]> = if ids.is_empty() {
            vec![&[]]
        } else {
            ids.chunks(GAMES_PER_BATCH).collect()
        };
        let mut outcome = Outcome::Delivered;
        for (k, chunk) in chunks.into_iter().enumerate() {
            let first = k == 0;
            let mut games: Vec<StoredGame> = Vec::with_capacity(chunk.len());
            for id in chunk {
                match store.game(*id).await {
                    Ok(g) => games.push(g),
                    Err(e) => {
                        outcome = Outcome::Failed(format!("the store: {e}"), 1000);
                        break;
                    }
                }
            }
            if !matches!(outcome, Outcome::Delivered) {
                break;
            }
            if numbers.0 > numbers.1 {
                match store.upstream_reserve_batches(&target.url, NUMBERS).await {
                    Ok(last) => numbers = (last - NUMBERS + 1, last),
                    Err(e) => {
                        outcome = Outcome::Failed(format!("the store: {e}"), 1000);
                        break;
                    }
                }
            }
            let batch_no = numbers.0;
            numbers.0 += 1;
            let with_eboards = first && eboards_due;
            let batch = PushBatch {
                origin: origin.clone(),
                name: name.clone(),
                batch: batch_no,
                tournaments: tournaments.clone(),
                games,
                eboards: with_eboards.then(|| eboards.clone()),
            };
            let body = match serde_json::to_vec(&batch) {
                Ok(b) => b,
                Err(e) => {
                    outcome = Outcome::Failed(format!("batch not encoded: {e}"), 5000);
                    break;
                }
            };
            let (url, token) = (endpoint.clone(), target.token.clone());
            let answer = tokio::task::spawn_blocking(move || send(&url, &token, body))
                .await
                .unwrap_or_else(|e| Answer::Failed(e.to_string()));
            match answer {
                Answer::Ok(reply) if reply.stale => {
                    // The cloud applied a higher batch number than ours (this store was
                    // restored from a backup): number on from there.
                    tracing::warn!(to = %target.url, "the cloud has newer batch numbers from this venue; numbering on from them");
                    let _ = store
                        .upstream_skip_batches(&target.url, reply.last_batch)
                        .await;
                    numbers = (1, 0);
                    outcome = Outcome::Again;
                    break;
                }
                Answer::Ok(reply) => {
                    for c in &reply.conflicts {
                        if !conflicts.contains_key(&c.game_id) {
                            tracing::warn!(game = c.game_id, message = %c.message, "the cloud holds back this venue's version of a game");
                        }
                    }
                    conflicts = reply
                        .conflicts
                        .iter()
                        .map(|c| (c.game_id, c.clone()))
                        .collect();
                    if first {
                        meta_sent = Some(meta);
                    }
                    if with_eboards {
                        eboards_sent = (Some(eboards_hash), now_ms());
                    }
                    slot.edit(|t| {
                        t.last_ok_ms = Some(now_ms());
                        t.delivered_batches += 1;
                        t.conflicts = conflicts.values().cloned().collect();
                        if t.last_error.is_some() {
                            tracing::info!(to = %t.target, "pushing again");
                        }
                        t.last_error = None;
                    });
                }
                Answer::Refused(status, msg) => {
                    let what = match status {
                        401 | 403 => {
                            format!("the cloud relay refused the push token ({status}): {msg}")
                        }
                        _ => format!("the cloud relay refused the batch ({status}): {msg}"),
                    };
                    outcome = Outcome::Failed(what, 5000);
                    break;
                }
                Answer::Failed(e) => {
                    let wait = (backoff_ms * 2).clamp(250, 5000);
                    outcome = Outcome::Failed(format!("cannot reach {}: {e}", target.url), wait);
                    break;
                }
            }
        }
        match outcome {
            Outcome::Delivered => {
                for (round, seq) in &plan.upto {
                    let e = sent.entry(*round).or_insert(0);
                    *e = (*e).max(*seq);
                    unnoted = true;
                }
                let queued = plan.queued - plan.changes;
                slot.edit(|t| {
                    t.queued = queued;
                    t.delivered_changes += plan.changes.max(0) as u64;
                });
                // More waiting (a backlog): on at once.
                backoff_ms = 0;
                if queued > 0 {
                    news.mark_changed();
                }
            }
            Outcome::Again => backoff_ms = 0,
            Outcome::Failed(what, wait) => {
                slot.failed(what);
                backoff_ms = wait;
            }
        }
    }
}
