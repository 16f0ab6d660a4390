//! Reads of the store the service's parts share: a round's or a game's view as of a moment
//! (with the boards' live state, which the store does not hold), each round's public delay,
//! and each round's live PGN. The delays and the PGN are remembered until an arbiter edits
//! rounds or tournaments ([`Lookup::edited`]), which open sockets are told of too.
//!
//! Its store is read-only ([`Reads`]): a part holding a `Lookup` cannot change games through
//! it. The parts that write are given a [`Store`] of their own where they are built.

use super::live::Boards;
use super::views::{EvalView, GameView, RoundView, game_view, round_view};
use parking_lot::Mutex;
use relay_store::{GameId, Reads, RoundInfo, Store, StoreError, StoredGame, now_ms, position_key};
use relay_store::{RoundId, Seq};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::watch;

/// A rendered answer kept for a second while its round does not change.
#[derive(Debug, Clone)]
pub struct Cached {
    /// The round's change number it was built at.
    pub seq: Seq,
    pub built_ms: i64,
    pub text: Arc<String>,
    pub etag: String,
}

impl Cached {
    pub fn fresh(&self, seq: Seq) -> bool {
        self.seq == seq && now_ms() - self.built_ms < 1000
    }
}

/// What is remembered of rounds between reads.
#[derive(Debug)]
struct Memory {
    /// Each round's public delay (ms) as last read, so sockets opening need not ask the
    /// store.
    delays: Mutex<HashMap<RoundId, i64>>,
    /// The last live PGN of each round.
    pgn: Mutex<HashMap<RoundId, Cached>>,
    /// The public delay (ms) of each round as of the last arbiter edit that touched it, so
    /// that open sockets can compare it with theirs without asking the store (a spectator
    /// connected before a delay was set must not go on seeing live moves).
    round_edits: watch::Sender<HashMap<RoundId, i64>>,
    /// Positions are evaluated (set once, when evaluation starts).
    evaluating: std::sync::atomic::AtomicBool,
    /// The store was seen to hold an evaluation (evaluations are never deleted): until then
    /// a view asks one small question instead of looking every position up.
    evals_seen: std::sync::atomic::AtomicBool,
}

/// The readers' store (its reads alone) with the boards' live state and what is remembered
/// of rounds; cheap to clone (handles only).
#[derive(Clone, Debug)]
pub struct Lookup {
    pub store: Reads,
    boards: Arc<Boards>,
    memory: Arc<Memory>,
}

impl Lookup {
    /// Reads `store` (and never writes through it).
    pub fn new(store: Store, boards: Arc<Boards>) -> Lookup {
        Lookup {
            store: store.reads(),
            boards,
            memory: Arc::new(Memory {
                delays: Mutex::default(),
                pgn: Mutex::default(),
                round_edits: watch::channel(HashMap::new()).0,
                evaluating: std::sync::atomic::AtomicBool::new(false),
                evals_seen: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    /// The boards' live state the views are built with.
    pub fn boards(&self) -> &Boards {
        &self.boards
    }

    /// A round's view as of `cutoff` (ms; `None`: live), read from the store.
    pub async fn round_view_at(
        &self,
        id: RoundId,
        cutoff: Option<i64>,
    ) -> Result<RoundView, StoreError> {
        let r = self.store.round(id).await?;
        let delay = self.delay_ms(&r).await?;
        self.round_view_of(r, cutoff, delay).await
    }

    /// The view of round `r`, whose public delay is `delay` ms, as of `cutoff`.
    pub async fn round_view_of(
        &self,
        mut r: RoundInfo,
        cutoff: Option<i64>,
        delay: i64,
    ) -> Result<RoundView, StoreError> {
        let id = r.id;
        let t = self.store.tournament(r.tournament_id).await?;
        let games = self.store.round_games(id).await?;
        let byes = self.store.round_byes(id).await?;
        if let Some(c) = cutoff {
            // The delayed view's change number is the one of its moment.
            r.seq = self.store.seq_at(id, c).await?;
        }
        let clocks = self.boards.all_clocks();
        let bound = self.boards.all_bound();
        let mut view = round_view(
            &r,
            &t.name,
            &games,
            byes,
            cutoff,
            delay,
            |g| clocks.get(&g).copied(),
            |g| bound.get(&g).cloned(),
        );
        self.with_evals(&mut view.games).await;
        view.evaluated = self.evaluating();
        Ok(view)
    }

    /// From now on views say that positions are evaluated.
    pub fn set_evaluating(&self) {
        self.memory
            .evaluating
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn evaluating(&self) -> bool {
        self.memory
            .evaluating
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A game's view as of `cutoff` (ms; `None`: live), read from the store.
    pub async fn game_view_at(
        &self,
        id: GameId,
        cutoff: Option<i64>,
    ) -> Result<GameView, StoreError> {
        let g = self.store.game(id).await?;
        let mut view = self.game_view_of(&g, cutoff);
        self.with_evals(std::slice::from_mut(&mut view)).await;
        Ok(view)
    }

    /// Puts the engine's evaluation kept for each move's position on the move. Evaluations
    /// are an extra: when they cannot be read the views go without them (and it is logged).
    pub async fn with_evals(&self, games: &mut [GameView]) {
        let keys: Vec<String> = games
            .iter()
            .flat_map(|g| g.moves.iter().map(|m| position_key(&m.fen)))
            .collect();
        if keys.is_empty() {
            return;
        }
        // A relay that never evaluated (nor shares a store with one that does) would look up
        // every move of every view for nothing: hundreds of queries for a big round's JSON.
        let seen = &self.memory.evals_seen;
        if !seen.load(std::sync::atomic::Ordering::Relaxed) {
            match self.store.any_evals().await {
                Ok(true) => seen.store(true, std::sync::atomic::Ordering::Relaxed),
                Ok(false) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "evaluations not read; views go without them");
                    return;
                }
            }
        }
        let found = match self.store.evals_of(&keys).await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "evaluations not read; views go without them");
                return;
            }
        };
        for m in games.iter_mut().flat_map(|g| g.moves.iter_mut()) {
            if let Some(e) = found.get(&position_key(&m.fen)) {
                m.eval = Some(EvalView::of(e, &m.fen));
            }
        }
    }

    /// A stored game's view as of `cutoff`, with its running clock and e-board.
    pub fn game_view_of(&self, g: &StoredGame, cutoff: Option<i64>) -> GameView {
        let clock = self.boards.clock(g.id);
        let serial = self.boards.eboard_on(g.id);
        game_view(g, clock, serial.as_deref(), cutoff)
    }

    /// The delay spectators of a round get, in ms (the round's own, else the tournament's).
    pub async fn delay_ms(&self, round: &RoundInfo) -> Result<i64, StoreError> {
        let secs = match round.delay_secs {
            Some(d) => d,
            None => self.store.tournament_delay(round.tournament_id).await?,
        };
        Ok(i64::from(secs) * 1000)
    }

    /// The moment views of `round` are cut at (`None`: live data, for arbiters, `live`, and
    /// for a round without a delay), and the round's delay in ms. A failed delay lookup is
    /// an error, never live data.
    pub async fn cutoff(
        &self,
        round: &RoundInfo,
        live: bool,
    ) -> Result<(Option<i64>, i64), StoreError> {
        let delay = self.delay_ms(round).await?;
        Ok(if live || delay == 0 {
            (None, delay)
        } else {
            (Some(now_ms() - delay), delay)
        })
    }

    /// The delay spectators of a round get, in ms, from memory when known (an unknown round
    /// is an error).
    pub async fn spectator_delay(&self, round: RoundId) -> Result<i64, StoreError> {
        if let Some(d) = self.memory.delays.lock().get(&round) {
            return Ok(*d);
        }
        let info = self.store.round(round).await?;
        let d = self.delay_ms(&info).await?;
        self.memory.delays.lock().insert(round, d);
        Ok(d)
    }

    /// The round's live PGN as last built.
    pub fn cached_pgn(&self, round: RoundId) -> Option<Cached> {
        self.memory.pgn.lock().get(&round).cloned()
    }

    pub fn cache_pgn(&self, round: RoundId, c: Cached) {
        self.memory.pgn.lock().insert(round, c);
    }

    /// The public delays (ms) of the rounds arbiters' edits touched, as they change.
    pub fn round_edits(&self) -> watch::Receiver<HashMap<RoundId, i64>> {
        self.memory.round_edits.subscribe()
    }

    /// After an edit of tournaments or rounds: what is remembered of rounds is read again
    /// when next needed, and open sockets learn the `(round, delay ms)` of the rounds it
    /// touched.
    pub fn edited(&self, delays: impl IntoIterator<Item = (RoundId, i64)>) {
        self.memory.delays.lock().clear();
        self.memory.pgn.lock().clear();
        self.memory.round_edits.send_modify(|m| m.extend(delays));
    }
}
