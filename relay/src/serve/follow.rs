//! Following the change log: every committed change reaches this service's spectators once,
//! in change-number order, whichever relay committed it.
//!
//! Several relays may share one PostgreSQL (one reading the boards, others serving only
//! spectators; see `--no-boards`). Each change is numbered within its round by the commit
//! that made it (the round's row is locked until the commit, so numbers are committed in
//! order and without holes). A relay publishes its own commits at once; PostgreSQL's
//! `LISTEN/NOTIFY` tells it `round:seq` of everyone's commits, and for a number it has not
//! published it reads the changes from the log. [`Order`] sits in front of the feeds: a
//! change goes out only when every earlier number of its round has, one that comes early
//! waits for the log to fill the hole, and a number seen twice goes out once. After a lost
//! connection the follower catches every round up from the log by change number, so nothing
//! is skipped or shown twice.

use super::api::game_view_at;
use super::live::{Event, Pending, Shared, change_message};
use super::wire::ServerMessage;
use relay_store::{Heard, Listener};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Changes read from the log in one query.
const PAGE: u32 = 500;
/// How long to wait before listening again after the database refused a connection.
const RETRY: Duration = Duration::from_secs(1);

/// Where each round's changes have been published up to, and the changes that came early.
#[derive(Debug)]
pub struct Order {
    rounds: Mutex<Rounds>,
    /// Rounds with a hole to fill from the log (the follower reads this).
    fill: mpsc::UnboundedSender<i64>,
}

#[derive(Debug)]
struct Rounds {
    /// Each round's change numbers at start-up; `None` when the service was started without
    /// them (in-process tests): a round's first change is then where it starts.
    start: Option<HashMap<i64, i64>>,
    by_round: HashMap<i64, RoundOrder>,
}

#[derive(Debug, Default)]
struct RoundOrder {
    /// Every change up to this number has gone out.
    last: i64,
    /// Changes that came before an earlier one, by number.
    waiting: BTreeMap<i64, Event>,
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
    pub fn new(start: Option<Vec<(i64, i64)>>) -> (Order, mpsc::UnboundedReceiver<i64>) {
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Rounds> {
        self.rounds.lock().unwrap_or_else(|e| e.into_inner())
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
                    Some(start) => start.get(&round).copied().unwrap_or(0),
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
    fn skip(&self, round: i64, seq: i64) -> Vec<Event> {
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
    fn restart(&self, round: i64, seq: i64) {
        let mut rounds = self.lock();
        let o = rounds.by_round.entry(round).or_default();
        o.last = seq;
        o.waiting.retain(|s, _| *s > seq);
    }

    /// Asks the follower to read a round's changes from the log (committed by a part of this
    /// relay that does not publish them itself: pushes from a venue).
    pub fn want(&self, round: i64) {
        let _ = self.fill.send(round);
    }

    /// Where a round has been published up to (`None`: not known).
    pub fn last_published(&self, round: i64) -> Option<i64> {
        self.last(round)
    }

    /// Where a round has been published up to (`None`: not known, and not to be read).
    fn last(&self, round: i64) -> Option<i64> {
        let rounds = self.lock();
        match (rounds.by_round.get(&round), &rounds.start) {
            (Some(o), _) => Some(o.last),
            (None, Some(start)) => Some(start.get(&round).copied().unwrap_or(0)),
            (None, None) => None,
        }
    }
}

/// Reads what the order is missing from the log, and, on PostgreSQL, listens for other
/// relays' commits. Runs for the life of the service.
pub async fn follow(
    shared: Arc<Shared>,
    mut holes: mpsc::UnboundedReceiver<i64>,
    mut listener: Option<Listener>,
) {
    let pg = listener.is_some();
    // Whether a failure to listen was logged (once per outage).
    let mut complained = false;
    // E-board states read up to this moment (ms).
    let mut eboards_seen = 0;
    if pg {
        eboards_seen = eboards_changed(&shared, eboards_seen).await;
    }
    loop {
        if pg && listener.is_none() {
            match shared.store.listen().await {
                Ok(l) => {
                    listener = l;
                    tracing::info!("listening to the database's changes again");
                    complained = false;
                    catch_up_all(&shared).await;
                }
                Err(e) => {
                    if !complained {
                        tracing::warn!(error = %e, "cannot listen to the database's changes; trying again");
                        complained = true;
                    }
                }
            }
        }
        let retry = tokio::time::sleep(RETRY);
        let mut want: HashSet<i64> = HashSet::new();
        tokio::select! {
            r = holes.recv() => match r {
                Some(round) => { want.insert(round); }
                None => return,
            },
            h = async {
                match listener.as_mut() {
                    Some(l) => l.next().await,
                    None => std::future::pending().await,
                }
            } => match h {
                Ok(Heard::Changed { round, seq }) => {
                    if shared.order.last(round).is_some_and(|last| seq > last) {
                        want.insert(round);
                    }
                }
                Ok(Heard::RoundsEdited) => rounds_edited(&shared).await,
                Ok(Heard::EboardsChanged) => eboards_seen = eboards_changed(&shared, eboards_seen).await,
                Ok(Heard::Reconnected) => {
                    tracing::info!("the database connection came back: catching up from the change log");
                    catch_up_all(&shared).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "lost the database's change notifications");
                    listener = None;
                    continue;
                }
            },
            _ = retry, if pg && listener.is_none() => continue,
        }
        while let Ok(round) = holes.try_recv() {
            want.insert(round);
        }
        for round in want {
            catch_up(&shared, round).await;
        }
    }
}

/// Every round that moved on while nobody was listening.
async fn catch_up_all(shared: &Arc<Shared>) {
    match shared.store.round_seqs().await {
        Ok(seqs) => {
            for (round, seq) in seqs {
                if shared.order.last(round).is_some_and(|last| seq > last) {
                    catch_up(shared, round).await;
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot read the rounds to catch up"),
    }
}

/// Publishes a round's changes after the last one published, read from the log.
async fn catch_up(shared: &Arc<Shared>, round: i64) {
    loop {
        let Some(after) = shared.order.last(round) else {
            return;
        };
        let changes = match shared.store.changes_since(round, after, PAGE).await {
            Ok(c) => c,
            Err(e) => {
                // The next notification, hole or reconnection asks again.
                tracing::warn!(round, error = %e, "cannot read the change log");
                return;
            }
        };
        if changes.is_empty() {
            return;
        }
        let full = changes.len() == PAGE as usize;
        for c in changes {
            if shared
                .order
                .last(round)
                .is_some_and(|last| c.seq > last + 1)
            {
                // Only a change log with a hole in it (a database edited by hand) gets here.
                tracing::warn!(
                    round,
                    next = c.seq,
                    "the change log has a hole; going on from its next change"
                );
                shared.order.restart(round, c.seq - 1);
            }
            if matches!(c.kind.as_str(), "truncate" | "result" | "game")
                && let Some(game) = c.game_id
            {
                // Perhaps another relay's arbiter edited a game one of our boards plays.
                shared.to_writer(super::writer::Job::Foreign { game });
            }
            let out = match event_of(shared, round, &c).await {
                Some(mut e) => {
                    shared
                        .metrics
                        .changes_followed
                        .fetch_add(1, Ordering::Relaxed);
                    // The commit's own time: a delay line holds it from then.
                    e.at_ms = c.at_ms;
                    shared.order.offer(e)
                }
                None => shared.order.skip(round, c.seq),
            };
            for e in out {
                shared.push_to_feed(e);
            }
        }
        if !full {
            return;
        }
    }
}

/// A change from the log as the event spectators get.
async fn event_of(shared: &Arc<Shared>, round: i64, c: &relay_store::Change) -> Option<Event> {
    let mut message = match change_message(None, c)? {
        Pending::Message(m) => *m,
        Pending::Game { seq, game } => ServerMessage::Game {
            seq,
            game: Box::new(game_view_at(shared, game, None).await.ok()?),
        },
    };
    if let ServerMessage::Move {
        game_id, mv, clock, ..
    } = &mut message
        && clock.is_none()
    {
        *clock = running_clock_after(shared, *game_id, mv.ply, &mv.fen, mv.clk_ms, c.at_ms).await;
    }
    let mut e = Event::new(round, c.game_id, c.seq, &message);
    // When it was committed, as on the relay that committed it: crowds' sweeps and delay
    // lines time it from there on every relay alike.
    e.at_ms = c.at_ms;
    Some(e)
}

/// The running clock after a move another relay read, as far as the moves tell it: the
/// mover's clock as the move left it, the other side's as its last move left it, running
/// from the move's commit. (The relay reading the board has the clock's own readings; a
/// relay that reads no board would otherwise show clocks that never tick.) `None` when this
/// relay reads the board itself, or a side's time is not known.
async fn running_clock_after(
    shared: &Arc<Shared>,
    game: i64,
    ply: u32,
    fen_after: &str,
    clk_ms: Option<u64>,
    at_ms: i64,
) -> Option<super::live::ClockView> {
    // The relay reading the board has the clock's own readings.
    if let Some(serial) = shared.boards.eboard_on(game)
        && shared
            .boards
            .eboard(&serial)
            .is_some_and(|e| e.read_by == super::claims::instance_name())
    {
        return None;
    }
    let mover_ms = clk_ms?;
    // The side to move after the move is the one whose clock now runs.
    let white_moved = fen_after.split(' ').nth(1) == Some("b");
    let known = shared.boards.clock(game);
    let other_ms = match known {
        Some(k) => Some(if white_moved { k.black_ms } else { k.white_ms }),
        None => {
            // The first move this relay hears of in the game: its other side's last clock
            // from the store, once.
            let g = shared.store.game(game).await.ok()?;
            g.moves
                .iter()
                .rev()
                .filter(|m| m.ply < ply && m.ply % 2 != ply % 2)
                .find_map(|m| m.clk_ms)
        }
    }?;
    let (white_ms, black_ms) = if white_moved {
        (mover_ms, other_ms)
    } else {
        (other_ms, mover_ms)
    };
    let clock = super::live::ClockView {
        white_ms,
        black_ms,
        running: Some(if white_moved { "black" } else { "white" }),
        at_ms,
    };
    shared.boards.set_clock(game, clock);
    Some(clock)
}

/// E-boards other relays read, as they last announced them: the console of any relay shows
/// every e-board and which relay reads it. Returns the moment read up to.
async fn eboards_changed(shared: &Arc<Shared>, after_ms: i64) -> i64 {
    // A second's overlap: a state written in the same millisecond as the last one read is
    // not missed (one already known changes nothing).
    let rows = match shared.store.eboards_live_since(after_ms - 1000).await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "e-boards of other relays not read");
            return after_ms;
        }
    };
    let mut upto = after_ms;
    for (text, at) in rows {
        upto = upto.max(at);
        let Ok(view) = serde_json::from_str::<super::live::EboardView>(&text) else {
            continue;
        };
        let me = super::claims::instance_name();
        // Known already, or a board this relay reads itself (its own to show).
        let known = shared.boards.eboard(&view.serial);
        if view.read_by == me
            || known
                .as_ref()
                .is_some_and(|e| *e == view || (e.read_by == me && e.connected))
        {
            continue;
        }
        if let (Some(game), Some(board), Some(round)) = (view.game_id, view.board_no, view.round_id)
        {
            shared.boards.bind(&view.serial, game, 0, board, round);
        }
        shared.announce_eboard(view, |round| shared.order.last(round).unwrap_or(0));
    }
    upto
}

/// Another relay edited rounds or tournaments: caches and open sockets learn the new delays.
pub(crate) async fn rounds_edited(shared: &Arc<Shared>) {
    let mut delays = Vec::new();
    for round in shared.feeds.rounds() {
        if let Ok(info) = shared.store.round(round).await
            && let Ok(d) = shared.delay_ms(&info).await
        {
            delays.push((round, d));
        }
    }
    shared.round_edited(delays);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(round: i64, seq: i64) -> Event {
        Event::new(
            round,
            Some(1),
            seq,
            &ServerMessage::Truncate {
                seq,
                game_id: 1,
                from_ply: 1,
            },
        )
    }

    fn seqs(v: &[Event]) -> Vec<i64> {
        v.iter().map(|e| e.seq).collect()
    }

    #[test]
    fn changes_go_out_in_order_once_and_holes_are_asked_for() {
        let (order, mut holes) = Order::new(Some(vec![(7, 10)]));
        assert_eq!(seqs(&order.offer(ev(7, 11))), [11]);
        // 13 comes before 12: it waits, and the round is asked for.
        assert!(order.offer(ev(7, 13)).is_empty());
        assert_eq!(holes.try_recv().ok(), Some(7));
        // 12 (read from the log) lets both out; 13 again is not sent twice.
        assert_eq!(seqs(&order.offer(ev(7, 12))), [12, 13]);
        assert!(order.offer(ev(7, 13)).is_empty());
        assert!(order.offer(ev(7, 5)).is_empty());
        // A round made after start-up starts at 0.
        assert!(order.offer(ev(8, 2)).is_empty());
        assert_eq!(seqs(&order.offer(ev(8, 1))), [1, 2]);
        assert_eq!(order.last(9), Some(0));
    }

    #[test]
    fn a_change_that_cannot_be_shown_is_passed() {
        let (order, _holes) = Order::new(Some(vec![(1, 0)]));
        assert!(order.offer(ev(1, 2)).is_empty());
        assert!(
            order.skip(1, 3).is_empty(),
            "only the next number is passed"
        );
        assert_eq!(seqs(&order.skip(1, 1)), [2]);
    }

    #[test]
    fn without_start_numbers_a_round_starts_at_its_first_change() {
        let (order, _holes) = Order::new(None);
        assert_eq!(order.last(4), None);
        assert_eq!(seqs(&order.offer(ev(4, 40))), [40]);
        assert_eq!(order.last(4), Some(40));
    }
}
