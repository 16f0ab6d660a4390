//! Round feeds: what spectators of a round follow, shared by all of them.
//!
//! A feed is one round as seen with one delay. The live feed (delay 0) of a round is fed by
//! the writer, after each commit (`Publisher::publish`); a delayed feed is fed by its delay line,
//! one task per (round, delay) that holds the live feed's events for the delay and then passes
//! them on. Either way every client of a feed gets the same `Arc<Event>` whose text was encoded
//! once, from a channel of its own round only.
//!
//! A feed keeps its last change events in a ring and one snapshot of the round, built from the
//! store at most once a second however many clients ask (rebuilt sooner only when the ring no
//! longer covers the changes since it). A client joining gets that snapshot and the ring's
//! events after it: a crowd joining costs one snapshot build, not one store query per client,
//! and memory per delayed spectator does not grow with the delay.

mod delay_line;
mod feed;

pub use feed::{Feed, Parts, Receiver, SWEEP, SnapshotError, SnapshotOf};

use crate::serve::lookup::Lookup;
use feed::until_next_sweep;
use parking_lot::Mutex;
use relay_store::now_ms;
use relay_store::{GameId, RoundId};
use std::collections::HashMap;
use std::sync::{Arc, Weak};

/// How long a live feed nobody follows keeps what it holds after its last event.
const IDLE_FEED_MS: i64 = 60_000;

/// Every feed of the service, made when first asked for.
#[derive(Debug)]
pub struct Feeds {
    map: Mutex<HashMap<(RoundId, i64), Arc<Feed>>>,
    /// What delay lines read the changes before their start from.
    lookup: Lookup,
}

impl Feeds {
    pub fn new(lookup: Lookup) -> Arc<Feeds> {
        Arc::new(Feeds {
            map: Mutex::default(),
            lookup,
        })
    }

    /// Starts the sweep that lets out crowds' paced events and held presses (call once, on
    /// the runtime; it ends with the feeds). The sweep is a task on the shared runtime on
    /// purpose: when the runtime is overloaded it comes round less often, and a crowd's
    /// events then go out in fewer, larger fan-outs.
    ///
    /// Sweeps fall on the wall clock's multiples of [`SWEEP`], so relays sharing one database
    /// (each serving its share of one audience) let out what they have at the same moments,
    /// as a bare broadcast server's ticks do.
    pub fn start_sweep(self: &Arc<Feeds>) {
        let weak: Weak<Feeds> = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(until_next_sweep(now_ms())).await;
                let Some(feeds) = weak.upgrade() else { return };
                let now = now_ms();
                for f in feeds.all() {
                    f.release_paced();
                    f.release_due(now);
                }
                feeds.drop_idle(now);
            }
        });
    }

    /// The live feed of a round.
    pub fn live(&self, round: RoundId) -> Arc<Feed> {
        self.map
            .lock()
            .entry((round, 0))
            .or_insert_with(|| Arc::new(Feed::new(round, 0)))
            .clone()
    }

    /// The feed of a round with `delay_ms` (the live one for 0), its delay line started when
    /// it is new.
    pub fn get(&self, round: RoundId, delay_ms: i64) -> Arc<Feed> {
        if delay_ms <= 0 {
            return self.live(round);
        }
        let live = self.live(round);
        let mut map = self.map.lock();
        if let Some(f) = map.get(&(round, delay_ms)) {
            return f.clone();
        }
        let feed = Arc::new(Feed::new(round, delay_ms));
        map.insert((round, delay_ms), feed.clone());
        // Subscribed now, before the store is read for what came before.
        let rx = live.subscribe();
        tokio::spawn(delay_line::run(self.lookup.clone(), feed.clone(), rx));
        feed
    }

    /// Lets go of the live feeds nobody has followed or fed for [`IDLE_FEED_MS`]: the rounds
    /// of a long event finish one after the other, and each round's feed kept its ring of
    /// recent events, its channels and its view (with 50 boards, about 2 MiB a round) for the
    /// rest of the relay's life. A round asked for again gets a new feed, its
    /// view read from the store and clients coming back resumed from the store's log, as
    /// after a restart. A feed is let go only when the map holds the one reference to it: a
    /// client that has just taken it, or a writer handing it an event, keeps it.
    fn drop_idle(&self, now: i64) {
        self.map.lock().retain(|(_, delay), f| {
            *delay != 0 || Arc::strong_count(f) > 1 || !f.is_idle(now, IDLE_FEED_MS)
        });
    }

    /// Every feed there is now.
    fn all(&self) -> Vec<Arc<Feed>> {
        self.map.lock().values().cloned().collect()
    }

    /// The rounds that have feeds.
    pub fn rounds(&self) -> Vec<RoundId> {
        let mut r: Vec<RoundId> = self.map.lock().keys().map(|(round, _)| *round).collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// The round a game is in, when a feed's view holds it.
    pub fn round_of(&self, game: GameId) -> Option<RoundId> {
        self.all().iter().find_map(|f| {
            f.lock_view()
                .round
                .as_ref()
                .and_then(|r| r.game(game).map(|g| g.round_id))
        })
    }

    /// Views are read from the store again (after an arbiter's edit of rounds or
    /// tournaments, which the feeds' messages do not carry).
    pub fn forget_views(&self) {
        for f in self.all() {
            f.forget_view();
        }
    }
}
