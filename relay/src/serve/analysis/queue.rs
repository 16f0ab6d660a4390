//! The analysis queue: which positions wait for an engine, which are out with a worker, which
//! evaluations are known, and which are owed to spectators. It is pure (every call is given
//! the time), so its rules are tested without a clock or an engine:
//!
//! - a position is handed out only once it is public (the round's delay after its move went
//!   out live): a worker on another machine never learns a move before spectators do;
//! - the newest position of each game first, newest games first; older positions (a game
//!   replaced whole, moves that came faster than the engine) after;
//! - a position is evaluated once: one already known (in memory or in the store, checked
//!   first) or out with a worker is not handed out again, whichever games reach it;
//! - a worker has `lease_ms` to answer; after that the position goes to the next worker that
//!   asks, so a worker that vanishes loses nothing;
//! - every game and ply that reaches an evaluated position is owed it once, when public.

use super::intake::Reached;
use relay_store::{GameId, RoundId, Seq};
use relay_store::{StoredEval, position_key};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A position handed to a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    pub lease: u64,
    pub fen: String,
    /// Other positions that could have been handed out instead (the backlog).
    pub behind: usize,
}

/// An evaluation owed to the spectators of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owed {
    pub round: RoundId,
    pub game: GameId,
    pub ply: u32,
    pub fen: String,
    /// When the move went out live, and its change number.
    pub at_ms: i64,
    pub seq: Seq,
    pub eval: StoredEval,
}

#[derive(Debug)]
struct Ply {
    key: String,
    fen: String,
    at_ms: i64,
    seq: Seq,
    public_at: i64,
    /// The store was asked whether it knows the position.
    checked: bool,
    /// Its evaluation went out.
    sent: bool,
}

#[derive(Debug)]
struct Track {
    round: RoundId,
    plies: BTreeMap<u32, Ply>,
}

#[derive(Debug)]
struct Lease {
    key: String,
    until_ms: i64,
}

/// What the queue counts, for `/metrics` and the benchmark.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Public positions with no evaluation and none out with a worker.
    pub waiting: usize,
    /// Positions out with workers.
    pub out: usize,
    pub known: usize,
}

#[derive(Debug)]
pub struct Queue {
    games: HashMap<GameId, Track>,
    known: HashMap<String, StoredEval>,
    leases: HashMap<u64, Lease>,
    next_lease: u64,
    lease_ms: i64,
}

impl Queue {
    pub fn new(lease_ms: i64) -> Queue {
        Queue {
            games: HashMap::new(),
            known: HashMap::new(),
            leases: HashMap::new(),
            next_lease: 1,
            lease_ms,
        }
    }

    /// A game reached a position (a move at `ply` replaces any moves from there on), public
    /// from `public_at`.
    pub fn reached(&mut self, r: Reached, public_at: i64) {
        let track = self.games.entry(r.game).or_insert_with(|| Track {
            round: r.round,
            plies: BTreeMap::new(),
        });
        track.round = r.round;
        let _ = track.plies.split_off(&r.ply);
        let key = position_key(&r.fen);
        let checked = self.known.contains_key(&key);
        track.plies.insert(
            r.ply,
            Ply {
                key,
                fen: r.fen,
                at_ms: r.at_ms,
                seq: r.seq,
                public_at,
                checked,
                sent: false,
            },
        );
    }

    /// The moves of `game` from `from_ply` on are gone.
    pub fn cut(&mut self, game: GameId, from_ply: u32) {
        if let Some(t) = self.games.get_mut(&game) {
            let _ = t.plies.split_off(&from_ply);
        }
    }

    /// Positions the store has not been asked about yet.
    pub fn unchecked(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .games
            .values()
            .flat_map(|t| t.plies.values())
            .filter(|p| !p.checked)
            .map(|p| p.key.clone())
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The store's answer for `keys`: the evaluations it holds of them.
    pub fn checked(&mut self, keys: &[String], found: HashMap<String, StoredEval>) {
        self.known.extend(found);
        let asked: HashSet<&String> = keys.iter().collect();
        for p in self.games.values_mut().flat_map(|t| t.plies.values_mut()) {
            if asked.contains(&p.key) {
                p.checked = true;
            }
        }
    }

    /// Leases whose time ran out end: their positions can go to another worker.
    fn expire(&mut self, now: i64) {
        self.leases.retain(|_, l| l.until_ms > now);
    }

    /// The positions out with workers now.
    fn out_keys(&self) -> HashSet<&str> {
        self.leases.values().map(|l| l.key.as_str()).collect()
    }

    /// The next position for a worker, leased to it until `now + lease_ms`.
    pub fn next(&mut self, now: i64) -> Option<Task> {
        self.expire(now);
        // (older than its game's newest, -time of its move): the smallest goes first.
        let mut best: Option<((bool, i64), &Ply)> = None;
        let mut candidates = 0;
        let out = self.out_keys();
        for t in self.games.values() {
            let newest = t.plies.keys().next_back().copied();
            for (ply, p) in &t.plies {
                if !p.checked
                    || p.public_at > now
                    || self.known.contains_key(&p.key)
                    || out.contains(p.key.as_str())
                {
                    continue;
                }
                candidates += 1;
                let rank = (Some(*ply) != newest, -p.at_ms);
                if best.as_ref().is_none_or(|(b, _)| rank < *b) {
                    best = Some((rank, p));
                }
            }
        }
        let (_, p) = best?;
        let (key, fen) = (p.key.clone(), p.fen.clone());
        let lease = self.next_lease;
        self.next_lease += 1;
        self.leases.insert(
            lease,
            Lease {
                key,
                until_ms: now + self.lease_ms,
            },
        );
        Some(Task {
            lease,
            fen,
            behind: candidates - 1,
        })
    }

    /// Whether some game here reached the position.
    pub fn plays(&self, key: &str) -> bool {
        self.games
            .values()
            .flat_map(|t| t.plies.values())
            .any(|p| p.key == key)
    }

    /// A worker's evaluation. Taken when some game reached its position (a worker cannot
    /// fill the store with positions nobody played); a deeper one replaces a shallower one.
    /// Whether it was taken.
    pub fn done(&mut self, eval: StoredEval) -> bool {
        let key = eval.position.clone();
        if !self.plays(&key) {
            return false;
        }
        self.leases.retain(|_, l| l.key != key);
        let deeper = self.known.get(&key).is_none_or(|k| eval.depth > k.depth);
        if deeper {
            self.known.insert(key, eval);
        }
        deeper
    }

    /// A lease given back unfinished (its worker's engine failed): the position is free again.
    pub fn give_back(&mut self, lease: u64) {
        self.leases.remove(&lease);
    }

    /// The evaluations owed now: each game and ply whose position is evaluated and public and
    /// whose evaluation has not gone out.
    pub fn due(&mut self, now: i64) -> Vec<Owed> {
        self.expire(now);
        let mut out = Vec::new();
        for (&game, t) in &mut self.games {
            for (&ply, p) in &mut t.plies {
                if p.sent || p.public_at > now {
                    continue;
                }
                if let Some(e) = self.known.get(&p.key) {
                    p.sent = true;
                    out.push(Owed {
                        round: t.round,
                        game,
                        ply,
                        fen: p.fen.clone(),
                        at_ms: p.at_ms,
                        seq: p.seq,
                        eval: e.clone(),
                    });
                }
            }
        }
        out.sort_by_key(|o| (o.round, o.at_ms, o.game, o.ply));
        out
    }

    /// Whether ply `ply` of `game` still stands at the position `fen` (it may have been taken
    /// back, and another move played there, since its evaluation was owed).
    pub fn stands(&self, game: GameId, ply: u32, fen: &str) -> bool {
        self.games
            .get(&game)
            .and_then(|t| t.plies.get(&ply))
            .is_some_and(|p| p.fen == fen)
    }

    pub fn counts(&self, now: i64) -> Counts {
        let out = self.out_keys();
        let mut waiting = HashSet::new();
        for p in self.games.values().flat_map(|t| t.plies.values()) {
            if p.public_at <= now
                && !self.known.contains_key(&p.key)
                && !out.contains(p.key.as_str())
            {
                waiting.insert(&p.key);
            }
        }
        Counts {
            waiting: waiting.len(),
            out: self.leases.values().filter(|l| l.until_ms > now).count(),
            known: self.known.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_store::{GameId, RoundId, Seq};

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    const E4E5: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    const D4: &str = "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1";

    fn reached(game: GameId, ply: u32, fen: &str, at_ms: i64) -> Reached {
        Reached {
            round: RoundId::from(1),
            game,
            ply,
            fen: fen.into(),
            at_ms,
            seq: Seq::from(at_ms),
        }
    }

    fn eval(fen: &str, depth: u32) -> StoredEval {
        StoredEval {
            position: position_key(fen),
            score: relay_store::Score::Cp(30),
            depth,
            line: vec![],
            engine: "test".into(),
        }
    }

    fn all_checked(q: &mut Queue) {
        let keys = q.unchecked();
        q.checked(&keys, HashMap::new());
    }

    #[test]
    fn nothing_goes_out_before_it_is_public_or_before_the_store_was_asked() {
        let mut q = Queue::new(5_000);
        q.reached(reached(GameId::from(1), 1, E4, 1_000), 61_000);
        assert_eq!(q.next(2_000), None, "the store was not asked yet");
        all_checked(&mut q);
        assert_eq!(q.next(60_999), None, "not public yet");
        assert_eq!(q.next(61_000).map(|t| t.fen), Some(E4.to_string()));
    }

    #[test]
    fn newest_positions_first_and_each_position_once() {
        let mut q = Queue::new(5_000);
        q.reached(reached(GameId::from(1), 1, E4, 100), 100);
        q.reached(reached(GameId::from(1), 2, E4E5, 300), 300);
        q.reached(reached(GameId::from(2), 1, D4, 200), 200);
        // Game 3 reaches e4 too: one evaluation serves both games.
        q.reached(reached(GameId::from(3), 1, E4, 250), 250);
        all_checked(&mut q);
        let order: Vec<String> = std::iter::from_fn(|| q.next(1_000).map(|t| t.fen)).collect();
        // Newest positions of games first (game 1's e4-e5, game 3's e4, game 2's d4); game
        // 1's e4 is out already as game 3's.
        assert_eq!(order, [E4E5, E4, D4]);
        assert!(q.done(eval(E4, 20)));
        let owed: Vec<(i64, u32)> = q.due(1_000).iter().map(|o| (o.game.get(), o.ply)).collect();
        assert_eq!(owed, [(1, 1), (3, 1)]);
        assert!(q.due(2_000).is_empty(), "owed once");
    }

    #[test]
    fn a_vanished_workers_position_goes_to_the_next_worker() {
        let mut q = Queue::new(5_000);
        q.reached(reached(GameId::from(1), 1, E4, 0), 0);
        all_checked(&mut q);
        let first = q.next(0).expect("handed out");
        assert_eq!(q.next(4_999), None, "out with the first worker");
        let second = q.next(5_000).expect("the lease ran out");
        assert_eq!(second.fen, first.fen);
        assert_ne!(second.lease, first.lease);
        // The first worker's late answer still counts; the position is not handed out again.
        assert!(q.done(eval(E4, 18)));
        assert_eq!(q.next(20_000), None);
        assert_eq!(q.counts(20_000).waiting, 0);
    }

    #[test]
    fn known_positions_are_not_evaluated_again_and_strangers_are_refused() {
        let mut q = Queue::new(5_000);
        q.reached(reached(GameId::from(1), 1, E4, 0), 0);
        let keys = q.unchecked();
        let found = HashMap::from([(position_key(E4), eval(E4, 22))]);
        q.checked(&keys, found);
        assert_eq!(q.next(0), None);
        assert_eq!(q.due(0).len(), 1);
        assert!(!q.done(eval(START, 30)), "nobody played the start here");
        assert!(!q.done(eval(E4, 10)), "shallower than the one known");
    }

    #[test]
    fn a_takeback_cancels_what_was_owed_to_the_moves_taken_back() {
        let mut q = Queue::new(5_000);
        q.reached(reached(GameId::from(1), 1, E4, 0), 10_000);
        q.reached(reached(GameId::from(1), 2, E4E5, 0), 10_000);
        all_checked(&mut q);
        assert!(q.stands(GameId::from(1), 2, E4E5));
        q.cut(GameId::from(1), 2);
        assert!(!q.stands(GameId::from(1), 2, E4E5));
        assert!(q.done(eval(E4, 20)));
        assert!(!q.done(eval(E4E5, 20)), "e5 was taken back");
        assert!(q.due(9_999).is_empty(), "not public yet");
        let owed: Vec<u32> = q.due(10_000).iter().map(|o| o.ply).collect();
        assert_eq!(owed, [1]);
    }
}
