//! Pushing upstream: a venue relay sends everything it commits to a cloud relay
//! (`--push-to URL --push-token TOKEN`), which serves it as its own (see
//! `relay_store::push` for the batch and how it is applied, and `api::push` for the cloud's
//! route).
//!
//! The outbox is the venue's change log: for each target the store keeps how far each
//! round's changes were delivered (written at most every 2 s, so that the pusher hardly
//! competes with the writer for SQLite's lock), and only a reply from the cloud moves that
//! on. So a restart of either side, a cut link or a lost reply costs nothing: the next batch
//! carries the whole state of every game changed since, which the cloud applies once (a batch
//! it already has changes nothing). The pusher (`run::push`) wakes on every change handed to
//! this relay's feeds, sends at most one request at a time, and after a failure tries again
//! after 250 ms, doubling up to 5 s, so live moves flow again within seconds of the link
//! coming back.

use super::http::{Post, Reply, Unanswered};
use super::run::{
    self, Failure, Next, NotStarted, Pace, Pushing, Report, Request, Target, Verdict, Wait,
};
use super::status::Slot;
use crate::serve::instance::instance_name;
use crate::serve::live::Boards;
use crate::serve::lookup::Lookup;
use relay_store::{
    GameId, PushBatch, PushConflict, PushReply, RoundId, Seq, Store, StoreError, TournamentInfo,
    now_ms,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::time::Duration;

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
/// E-board news is sent at most this often (readings change `last_seen` all the time).
const EBOARDS_EVERY_MS: i64 = 2000;
/// With nothing to send, a request this often all the same: the console learns that the
/// link works (or not) and which games the cloud still holds back.
const HEARTBEAT_MS: i64 = 10_000;
/// After the store failed, and after the cloud refused a batch (a token, a limit: trying
/// again at once would only be refused again).
const STORE_WAIT: Duration = Duration::from_secs(1);
const REFUSED_WAIT: Duration = Duration::from_secs(5);
/// After a network failure: a cut link comes back any moment.
const BACK_OFF: Wait = Wait::BackOff {
    first: Duration::from_millis(250),
    most: Duration::from_secs(5),
};

/// Where a venue pushes to.
#[derive(Clone, Debug)]
pub struct PushTarget {
    /// The cloud relay's base URL (`https://cloud.example/`).
    pub url: String,
    pub token: String,
    /// This hall's name there (`--hall-name`, else the instance's name).
    pub hall: String,
}

/// Pushes to one cloud relay for the life of the service.
pub async fn push(pushing: Pushing, target: PushTarget) {
    let cloud = Cloud::new(pushing.lookup.clone(), pushing.store.clone(), target);
    run::push(pushing, cloud).await;
}

/// The next delivery: the games to send and how far each round will then be delivered.
#[derive(Debug, Default)]
struct Plan {
    games: BTreeSet<GameId>,
    upto: Vec<(RoundId, Seq)>,
    /// Changes the delivery covers.
    changes: i64,
    /// Changes waiting in all (these and beyond).
    queued: i64,
}

/// Reads the outbox: the rounds whose changes were not all delivered, and every game those
/// changes touched (reading at most `most` changes: a round beyond that is delivered up to
/// where the reading stopped, and the rest comes in the next plan).
async fn plan(
    store: &Store,
    sent: &HashMap<RoundId, Seq>,
    most: usize,
) -> Result<Plan, StoreError> {
    let mut plan = Plan::default();
    let mut read = 0usize;
    for (round, seq) in store.round_seqs().await? {
        let from = sent.get(&round).copied().unwrap_or_default();
        if seq <= from {
            continue;
        }
        plan.queued += seq - from;
        let mut after = from;
        while read < most {
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

fn store_failed(e: StoreError, wait: Wait) -> Failure {
    Failure {
        error: format!("the store: {e}"),
        wait,
    }
}

/// What one look found to send: the plan's games cut into requests, with every tournament
/// (and the e-boards, when due) in the first.
#[derive(Debug)]
struct Pass {
    chunks: VecDeque<Vec<GameId>>,
    tournaments: Vec<TournamentInfo>,
    /// A hash of the tournaments as sent.
    meta: u64,
    /// The e-boards and their hash, when due (with the first request).
    eboards: Option<(Vec<serde_json::Value>, u64)>,
    first: bool,
    /// Delivered with the last request.
    plan: Plan,
}

/// What a request to the cloud carries for reading its answer.
#[derive(Debug)]
pub struct Sent {
    /// The first of its look: it carries the tournaments as hashed in `meta`.
    first: bool,
    meta: u64,
    /// The hash of the e-boards it carries, if it carries them.
    eboards: Option<u64>,
    /// The last of its look: its answer delivers this plan.
    delivers: Option<Plan>,
}

/// A cloud relay as a push target.
#[derive(Debug)]
pub struct Cloud {
    /// The e-boards this relay reads.
    lookup: Lookup,
    /// The store: the outbox, which the cloud's answers move on, and the games sent.
    store: Store,
    target: PushTarget,
    endpoint: String,
    /// The venue's name for itself towards this target (read at start).
    origin: String,
    /// How far each round was delivered: read from the store when this relay starts pushing
    /// (at start, or taking over from another relay that moved the marks on), kept here,
    /// written back now and then.
    sent: Option<HashMap<RoundId, Seq>>,
    /// When the marks were last written to the store, and whether they moved on since.
    noted_ms: i64,
    unnoted: bool,
    /// Batch numbers reserved and not used yet: (next, last).
    numbers: (i64, i64),
    /// A hash of the tournaments the cloud has.
    meta_sent: Option<u64>,
    /// A hash of the e-boards the cloud has, and when they were sent.
    eboards_sent: (Option<u64>, i64),
    /// The cloud asked for everything again and this relay forgot its marks: its batches
    /// say so until the cloud stops asking.
    resent: bool,
    /// The games the cloud did not take as they are, as its last answer listed them, by
    /// game and whether a clash (each is warned of once).
    conflicts: BTreeMap<(i64, bool), PushConflict>,
    /// With nothing to send, a heartbeat goes [`HEARTBEAT_MS`] after the last answer.
    last_ok_ms: i64,
    /// Changes a plan reads at most ([`PLAN_CHANGES`]; tests make a backlog with less).
    plan_changes: usize,
    /// What this look found to send and has not sent yet.
    pass: Option<Pass>,
    /// The last delivery left changes waiting.
    backlog: bool,
}

impl Cloud {
    pub fn new(lookup: Lookup, store: Store, target: PushTarget) -> Cloud {
        Cloud {
            lookup,
            store,
            endpoint: format!("{}/api/push", target.url.trim_end_matches('/')),
            target,
            origin: String::new(),
            sent: None,
            noted_ms: 0,
            unnoted: false,
            numbers: (1, 0),
            meta_sent: None,
            eboards_sent: (None, 0),
            resent: false,
            conflicts: BTreeMap::new(),
            last_ok_ms: 0,
            plan_changes: PLAN_CHANGES,
            pass: None,
            backlog: false,
        }
    }

    fn store(&self) -> &Store {
        &self.store
    }

    /// The marks moved on (`sent`) are written to the store, at most every
    /// [`NOTE_DELIVERED_MS`].
    async fn note_delivered(&mut self, sent: &HashMap<RoundId, Seq>, slot: &Slot) {
        if !self.unnoted || now_ms() - self.noted_ms < NOTE_DELIVERED_MS {
            return;
        }
        let upto: Vec<(RoundId, Seq)> = sent.iter().map(|(r, s)| (*r, *s)).collect();
        match self
            .store()
            .upstream_delivered(&self.target.url, &upto)
            .await
        {
            Ok(()) => {
                self.unnoted = false;
                self.noted_ms = now_ms();
            }
            // Pushing goes on: the marks are written at the next look.
            Err(e) => slot.failed(format!("the store: {e}")),
        }
    }

    /// The next batch number, reserving more from the store when none is left.
    async fn batch_number(&mut self) -> Result<i64, StoreError> {
        if self.numbers.0 > self.numbers.1 {
            let last = self
                .store()
                .upstream_reserve_batches(&self.target.url, NUMBERS)
                .await?;
            self.numbers = (last - NUMBERS + 1, last);
        }
        let n = self.numbers.0;
        self.numbers.0 += 1;
        Ok(n)
    }
}

impl Target for Cloud {
    const KIND: &'static str = "relay";
    const PACE: Pace = Pace {
        news_within: Duration::from_secs(1),
        looks_apart: Duration::ZERO,
    };
    type Carries = Sent;

    fn name(&self) -> String {
        self.target.url.clone()
    }

    fn duty(&self) -> String {
        format!("relay-push:{}", self.target.url.trim_end_matches('/'))
    }

    async fn start(&mut self) -> Result<(), NotStarted> {
        self.origin = self
            .store()
            .upstream_origin(&self.target.url)
            .await
            .map_err(|e| format!("the store: {e}"))?;
        tracing::info!(to = %self.target.url, origin = %self.origin, "pushing every change to a cloud relay");
        Ok(())
    }

    fn standing_by(&mut self) {
        tracing::info!(to = %self.target.url, "another relay pushes to the cloud relay: standing by");
    }

    fn taken_over(&mut self) {
        // The other relay moved the marks on, and what it sent of the tournaments and
        // e-boards is not known here.
        self.sent = None;
        self.unnoted = false;
        self.meta_sent = None;
        self.eboards_sent = (None, 0);
        tracing::info!(to = %self.target.url, "this relay pushes to the cloud relay now");
    }

    async fn look(&mut self, slot: &Slot) -> Result<(), Failure> {
        self.pass = None;
        self.backlog = false;
        let sent = match self.sent.take() {
            Some(sent) => sent,
            None => self
                .store()
                .upstream_sent(&self.target.url)
                .await
                .map_err(|e| store_failed(e, Wait::Usual))?,
        };
        self.note_delivered(&sent, slot).await;
        let planned = plan(self.store(), &sent, self.plan_changes).await;
        self.sent = Some(sent);
        let plan = planned.map_err(|e| store_failed(e, Wait::For(STORE_WAIT)))?;
        slot.edit(|t| t.queued = plan.queued);
        let mut tournaments = self
            .store()
            .tournaments()
            .await
            .map_err(|e| store_failed(e, Wait::For(STORE_WAIT)))?;
        // Change numbers are the venue's own; the cloud has its own.
        for r in tournaments.iter_mut().flat_map(|t| t.rounds.iter_mut()) {
            r.seq = Seq::default();
        }
        let meta = hash_of(&serde_json::to_string(&tournaments).unwrap_or_default());
        // The e-boards are looked at only when they may be sent (every commit wakes the
        // pusher; writing out a thousand e-boards each time would be work for nothing).
        let eboards = (now_ms() - self.eboards_sent.1 >= EBOARDS_EVERY_MS)
            .then(|| own_eboards(self.lookup.boards()))
            .filter(|(_, hash)| self.eboards_sent.0 != Some(*hash));
        if plan.games.is_empty()
            && self.meta_sent == Some(meta)
            && eboards.is_none()
            && now_ms() - self.last_ok_ms < HEARTBEAT_MS
        {
            return Ok(());
        }
        let ids: Vec<GameId> = plan.games.iter().copied().collect();
        let chunks = if ids.is_empty() {
            // The tournaments, the e-boards or a heartbeat alone.
            VecDeque::from([Vec::new()])
        } else {
            ids.chunks(GAMES_PER_BATCH)
                .map(<[GameId]>::to_vec)
                .collect()
        };
        self.pass = Some(Pass {
            chunks,
            tournaments,
            meta,
            eboards,
            first: true,
            plan,
        });
        Ok(())
    }

    async fn next(&mut self) -> Result<Next<Sent>, Failure> {
        let Some(mut pass) = self.pass.take() else {
            return Ok(Next::Idle);
        };
        let Some(chunk) = pass.chunks.pop_front() else {
            // More waiting than one plan reads (a backlog): on at once.
            return Ok(if self.backlog {
                Next::Again
            } else {
                Next::Idle
            });
        };
        let mut games = Vec::with_capacity(chunk.len());
        for id in chunk {
            let game = self.store().game(id).await;
            games.push(game.map_err(|e| store_failed(e, Wait::For(STORE_WAIT)))?);
        }
        let batch = self
            .batch_number()
            .await
            .map_err(|e| store_failed(e, Wait::For(STORE_WAIT)))?;
        let first = std::mem::replace(&mut pass.first, false);
        let (eboards, eboards_hash) = match pass.eboards.take().filter(|_| first) {
            Some((values, hash)) => (Some(values), Some(hash)),
            None => (None, None),
        };
        let delivers = pass
            .chunks
            .is_empty()
            .then(|| std::mem::take(&mut pass.plan));
        let meta = pass.meta;
        let body = serde_json::to_vec(&PushBatch {
            origin: self.origin.clone(),
            name: self.target.hall.clone(),
            batch,
            tournaments: pass.tournaments.clone(),
            games,
            eboards,
            resent: self.resent,
        });
        self.pass = Some(pass);
        let body = body.map_err(|e| Failure {
            error: format!("batch not encoded: {e}"),
            wait: Wait::For(REFUSED_WAIT),
        })?;
        Ok(Next::Send(Request {
            post: Post {
                url: self.endpoint.clone(),
                token: self.target.token.clone(),
                content_type: "application/json",
                body,
            },
            carries: Sent {
                first,
                meta,
                eboards: eboards_hash,
                delivers,
            },
        }))
    }

    async fn answered(
        &mut self,
        sent: Sent,
        answer: Result<Reply, Unanswered>,
    ) -> Result<Verdict, Failure> {
        let unreachable = |e: String| Failure {
            error: format!("cannot reach {}: {e}", self.target.url),
            wait: BACK_OFF,
        };
        let reply = match answer {
            Err(e) => return Err(unreachable(e.0)),
            Ok(r) if r.status == 200 => match serde_json::from_str::<PushReply>(&r.text) {
                Ok(reply) => reply,
                Err(e) => return Err(unreachable(format!("the answer does not read: {e}"))),
            },
            Ok(r) => {
                let status = r.status;
                let msg = r.error();
                let error = match status {
                    401 | 403 => {
                        format!("the cloud relay refused the push token ({status}): {msg}")
                    }
                    _ => format!("the cloud relay refused the batch ({status}): {msg}"),
                };
                return Err(Failure {
                    error,
                    wait: Wait::For(REFUSED_WAIT),
                });
            }
        };
        if reply.stale {
            // The cloud applied a higher batch number than ours (this store was restored
            // from a backup): number on from there, and plan again.
            tracing::warn!(to = %self.target.url, "the cloud has newer batch numbers from this venue; numbering on from them");
            // Failing, the cloud says `stale` again and this comes back.
            let _ = self
                .store()
                .upstream_skip_batches(&self.target.url, reply.last_batch)
                .await;
            self.numbers = (1, 0);
            self.pass = None;
            return Ok(Verdict::Retry);
        }
        if reply.resend {
            // Our tournament joined an event the cloud held under another tournament (its
            // event key was set after the first pushes): the cloud forgot our games there,
            // so every game goes again.
            tracing::info!(to = %self.target.url, "the cloud asks for every game again (the tournament joined an event there)");
            if let Err(e) = self.store().upstream_forget(&self.target.url).await {
                return Err(store_failed(e, Wait::For(STORE_WAIT)));
            }
            self.sent = Some(HashMap::new());
            self.unnoted = false;
            self.meta_sent = None;
            self.eboards_sent = (None, 0);
            self.pass = None;
            // Said in every batch until the cloud stops asking (its answer may be lost).
            self.resent = true;
            return Ok(Verdict::Retry);
        }
        self.resent = false;
        for c in &reply.conflicts {
            if !self.conflicts.contains_key(&(c.game_id, c.clash)) {
                tracing::warn!(game = c.game_id, clash = c.clash, message = %c.message, "the cloud did not take this venue's game as it is");
            }
        }
        let clashes = |c: &BTreeMap<(i64, bool), PushConflict>| -> BTreeSet<i64> {
            c.values().filter(|c| c.clash).map(|c| c.game_id).collect()
        };
        let before = clashes(&self.conflicts);
        // By game and kind: a game may be both held back (edited there) and a clash.
        self.conflicts = reply
            .conflicts
            .into_iter()
            .map(|c| ((c.game_id, c.clash), c))
            .collect();
        let held_changed = clashes(&self.conflicts) != before;
        if sent.first {
            self.meta_sent = Some(sent.meta);
        }
        if let Some(hash) = sent.eboards {
            self.eboards_sent = (Some(hash), now_ms());
        }
        if held_changed {
            // A game was held back there for another hall's board, or placed on a free one:
            // the e-boards go again, so the cloud shows them where their games are now.
            self.eboards_sent = (None, 0);
        }
        self.last_ok_ms = now_ms();
        let conflicts = self.conflicts.values().cloned().collect();
        let Some(plan) = sent.delivers else {
            return Ok(Verdict::Taken(Report {
                conflicts,
                ..Report::default()
            }));
        };
        // The whole plan is delivered: its rounds' marks move on.
        if let Some(marks) = self.sent.as_mut() {
            for (round, seq) in &plan.upto {
                let e = marks.entry(*round).or_default();
                *e = (*e).max(*seq);
                self.unnoted = true;
            }
        }
        let queued = plan.queued - plan.changes;
        self.backlog = queued > 0;
        Ok(Verdict::Delivered(Report {
            changes: plan.changes.max(0) as u64,
            conflicts,
            queued: Some(queued),
        }))
    }
}

#[cfg(test)]
mod tests;
