//! Publishing in change-number order: every committed change reaches the feeds once, and only
//! after every earlier number of its round has, whichever part or relay committed it (see
//! `follow` for how the holes are filled from the change log).

use super::events::Event;
use parking_lot::Mutex;
use relay_store::{RoundId, Seq};
use std::collections::{BTreeMap, HashMap};
use tokio::sync::mpsc;

/// Where each round's changes have been published up to, and the changes that came early.
#[derive(Debug)]
pub struct Order {
    rounds: Mutex<Rounds>,
    /// Rounds with a hole to fill from the log (the follower reads this).
    fill: mpsc::UnboundedSender<RoundId>,
}

#[derive(Debug)]
struct Rounds {
    /// Each round's change numbers at start-up; `None` when the service was started without
    /// them (in-process tests): a round's first change is then where it starts.
    start: Option<HashMap<RoundId, Seq>>,
    by_round: HashMap<RoundId, RoundOrder>,
}

#[derive(Debug, Default)]
struct RoundOrder {
    /// Every change up to this number has gone out.
    last: Seq,
    /// Changes that came before an earlier one, by number.
    waiting: BTreeMap<Seq, Event>,
}

impl RoundOrder {
    /// The waiting changes whose turn it is now, taken out in order.
    fn ready(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while let Some(next) = self.waiting.first_entry() {
            if *next.key() != self.last + 1 {
                break;
            }
            self.last += 1;
            out.push(next.remove());
        }
        out
    }
}

impl Order {
    /// An order starting from `start` (round → change number); returns the receiver of the
    /// rounds that need filling from the log.
    pub fn new(start: Option<Vec<(RoundId, Seq)>>) -> (Order, mpsc::UnboundedReceiver<RoundId>) {
        let (fill, rx) = mpsc::unbounded_channel();
        let order = Order {
            rounds: Mutex::new(Rounds {
                start: start.map(|s| s.into_iter().collect()),
                by_round: HashMap::new(),
            }),
            fill,
        };
        (order, rx)
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Rounds> {
        self.rounds.lock()
    }

    /// Takes a committed change; returns the changes that can go out now, in order (none
    /// when it is one already sent, or one that must wait for an earlier number).
    pub fn offer(&self, e: Event) -> Vec<Event> {
        let mut rounds = self.lock();
        let Rounds { start, by_round } = &mut *rounds;
        let round = e.round_id;
        let o = match by_round.entry(round) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let last = match start {
                    // A round made after start-up begins at 0.
                    Some(start) => start.get(&round).copied().unwrap_or_default(),
                    None => e.seq - 1,
                };
                v.insert(RoundOrder {
                    last,
                    waiting: BTreeMap::new(),
                })
            }
        };
        if e.seq <= o.last {
            return Vec::new();
        }
        if e.seq > o.last + 1 {
            // The first to come is kept: the writer's own event carries more (the time the
            // board was read, the press riding on it) than the same change read back.
            o.waiting.entry(e.seq).or_insert(e);
            let _ = self.fill.send(round);
            return Vec::new();
        }
        o.last = e.seq;
        let mut out = vec![e];
        out.extend(o.ready());
        out
    }

    /// A change that cannot be shown (its game is gone): the order moves past it.
    pub fn skip(&self, round: RoundId, seq: Seq) -> Vec<Event> {
        let mut rounds = self.lock();
        let Some(o) = rounds.by_round.get_mut(&round) else {
            return Vec::new();
        };
        if seq != o.last + 1 {
            return Vec::new();
        }
        o.last = seq;
        o.ready()
    }

    /// Starts a round again after `seq` (past a hole in the log).
    pub fn restart(&self, round: RoundId, seq: Seq) {
        let mut rounds = self.lock();
        let o = rounds.by_round.entry(round).or_default();
        o.last = seq;
        o.waiting.retain(|s, _| *s > seq);
    }

    /// Asks the follower to read a round's changes from the log (committed by a part of this
    /// relay that does not publish them itself: pushes from a venue).
    pub fn want(&self, round: RoundId) {
        let _ = self.fill.send(round);
    }

    /// Where a round has been published up to (`None`: not known, and not to be read).
    pub fn last(&self, round: RoundId) -> Option<Seq> {
        let rounds = self.lock();
        match (rounds.by_round.get(&round), &rounds.start) {
            (Some(o), _) => Some(o.last),
            (None, Some(start)) => Some(start.get(&round).copied().unwrap_or_default()),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::wire::ServerMessage;
    use relay_store::GameId;

    /// A change `seq` of round `round`, to game 1.
    fn ev(round: i64, seq: i64) -> Event {
        let (round, seq, game) = (RoundId::from(round), Seq::from(seq), GameId::from(1));
        Event::new(
            round,
            Some(game),
            seq,
            &ServerMessage::Truncate {
                seq,
                game_id: game,
                from_ply: 1,
            },
        )
    }

    fn r(n: i64) -> RoundId {
        RoundId::from(n)
    }

    fn s(n: i64) -> Seq {
        Seq::from(n)
    }

    fn seqs(v: &[Event]) -> Vec<i64> {
        v.iter().map(|e| e.seq.get()).collect()
    }

    #[test]
    fn changes_go_out_in_order_once_and_holes_are_asked_for() {
        let (order, mut holes) = Order::new(Some(vec![(r(7), s(10))]));
        assert_eq!(seqs(&order.offer(ev(7, 11))), [11]);
        // 13 comes before 12: it waits, and the round is asked for.
        assert!(order.offer(ev(7, 13)).is_empty());
        assert_eq!(holes.try_recv().ok(), Some(r(7)));
        // 12 (read from the log) lets both out; 13 again is not sent twice.
        assert_eq!(seqs(&order.offer(ev(7, 12))), [12, 13]);
        assert!(order.offer(ev(7, 13)).is_empty());
        assert!(order.offer(ev(7, 5)).is_empty());
        // A round made after start-up starts at 0.
        assert!(order.offer(ev(8, 2)).is_empty());
        assert_eq!(seqs(&order.offer(ev(8, 1))), [1, 2]);
        assert_eq!(order.last(r(9)), Some(s(0)));
    }

    #[test]
    fn a_change_that_cannot_be_shown_is_passed() {
        let (order, _holes) = Order::new(Some(vec![(r(1), s(0))]));
        assert!(order.offer(ev(1, 2)).is_empty());
        assert!(
            order.skip(r(1), s(3)).is_empty(),
            "only the next number is passed"
        );
        assert_eq!(seqs(&order.skip(r(1), s(1))), [2]);
    }

    #[test]
    fn without_start_numbers_a_round_starts_at_its_first_change() {
        let (order, _holes) = Order::new(None);
        assert_eq!(order.last(r(4)), None);
        assert_eq!(seqs(&order.offer(ev(4, 40))), [40]);
        assert_eq!(order.last(r(4)), Some(s(40)));
    }
}
