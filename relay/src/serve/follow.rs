//! Following the change log: every committed change reaches this service's spectators once,
//! in change-number order, whichever relay committed it.
//!
//! Several relays may share one PostgreSQL (one reading the boards, others serving only
//! spectators; see `--no-boards`). Each change is numbered within its round by the commit
//! that made it (the round's row is locked until the commit, so numbers are committed in
//! order and without holes). A relay publishes its own commits at once; PostgreSQL's
//! `LISTEN/NOTIFY` tells it `round:seq` of everyone's commits, and for a number it has not
//! published it reads the changes from the log. [`Order`](super::order::Order) sits in front of the feeds: a
//! change goes out only when every earlier number of its round has, one that comes early
//! waits for the log to fill the hole, and a number seen twice goes out once. After a lost
//! connection the follower catches every round up from the log by change number, so nothing
//! is skipped or shown twice.

use super::events::{Event, Pending, change_message};
use super::instance::instance_name;
use super::jobs::{Job, ToWriter};
use super::live::Boards;
use super::lookup::Lookup;
use super::metrics::Metrics;
use super::publish::Publisher;
use super::views::{ClockView, EboardView};
use super::wire::ServerMessage;
use relay_core::recorder::ColorName;
use relay_store::{GameId, RoundId};
use relay_store::{Heard, Listener};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Changes read from the log in one query.
const PAGE: u32 = 500;
/// How long to wait before listening again after the database refused a connection.
const RETRY: Duration = Duration::from_secs(1);

/// What the follower works with.
#[derive(Clone, Debug)]
pub struct Follow {
    pub publisher: Publisher,
    pub lookup: Lookup,
    pub boards: Arc<Boards>,
    /// Another relay's edit of a game one of this relay's boards plays goes to the writer.
    pub writer: ToWriter,
    pub metrics: Arc<Metrics>,
}

/// Reads what the order is missing from the log, and, on PostgreSQL, listens for other
/// relays' commits. Runs for the life of the service.
pub async fn follow(
    parts: Follow,
    mut holes: mpsc::UnboundedReceiver<RoundId>,
    mut listener: Option<Listener>,
) {
    let pg = listener.is_some();
    // Whether a failure to listen was logged (once per outage).
    let mut complained = false;
    // E-board states read up to this moment (ms).
    let mut eboards_seen = 0;
    if pg {
        eboards_seen = eboards_changed(&parts, eboards_seen).await;
    }
    loop {
        if pg && listener.is_none() {
            match parts.lookup.store.listen().await {
                Ok(l) => {
                    listener = l;
                    tracing::info!("listening to the database's changes again");
                    complained = false;
                    catch_up_all(&parts).await;
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
        let mut want: HashSet<RoundId> = HashSet::new();
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
                    if parts.publisher.order().last(round).is_some_and(|last| seq > last) {
                        want.insert(round);
                    }
                }
                Ok(Heard::RoundsEdited) => parts.publisher.rounds_edited_elsewhere().await,
                Ok(Heard::EboardsChanged) => eboards_seen = eboards_changed(&parts, eboards_seen).await,
                Ok(Heard::Reconnected) => {
                    tracing::info!("the database connection came back: catching up from the change log");
                    catch_up_all(&parts).await;
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
            catch_up(&parts, round).await;
        }
    }
}

/// Every round that moved on while nobody was listening.
async fn catch_up_all(parts: &Follow) {
    match parts.lookup.store.round_seqs().await {
        Ok(seqs) => {
            for (round, seq) in seqs {
                if parts
                    .publisher
                    .order()
                    .last(round)
                    .is_some_and(|last| seq > last)
                {
                    catch_up(parts, round).await;
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot read the rounds to catch up"),
    }
}

/// Publishes a round's changes after the last one published, read from the log.
async fn catch_up(parts: &Follow, round: RoundId) {
    loop {
        let Some(after) = parts.publisher.order().last(round) else {
            return;
        };
        let changes = match parts.lookup.store.changes_since(round, after, PAGE).await {
            Ok(c) => c,
            Err(e) => {
                // The next notification, hole or reconnection asks again.
                tracing::warn!(%round, error = %e, "cannot read the change log");
                return;
            }
        };
        if changes.is_empty() {
            return;
        }
        let full = changes.len() == PAGE as usize;
        for c in changes {
            if parts
                .publisher
                .order()
                .last(round)
                .is_some_and(|last| c.seq > last + 1)
            {
                // Only a change log with a hole in it (a database edited by hand) gets here.
                tracing::warn!(
                    %round,
                    next = %c.seq,
                    "the change log has a hole; going on from its next change"
                );
                parts.publisher.order().restart(round, c.seq - 1);
            }
            if c.edits_game()
                && let Some(game) = c.game_id
            {
                // Perhaps another relay's arbiter edited a game one of our boards plays.
                parts.writer.send(Job::Foreign { game });
            }
            let out = match event_of(parts, round, &c).await {
                Some(mut e) => {
                    parts.metrics.changes_followed.inc();
                    // The commit's own time: a delay line holds it from then.
                    e.at_ms = c.at_ms;
                    parts.publisher.order().offer(e)
                }
                None => parts.publisher.order().skip(round, c.seq),
            };
            for e in out {
                parts.publisher.push_to_feed(e);
            }
        }
        if !full {
            return;
        }
    }
}

/// A change from the log as the event spectators get.
async fn event_of(parts: &Follow, round: RoundId, c: &relay_store::Change) -> Option<Event> {
    let mut message = match change_message(None, c)? {
        Pending::Message(m) => *m,
        Pending::Game { seq, game } => ServerMessage::Game {
            seq,
            game: Box::new(parts.lookup.game_view_at(game, None).await.ok()?),
        },
    };
    if let ServerMessage::Move {
        game_id, mv, clock, ..
    } = &mut message
        && clock.is_none()
    {
        *clock = running_clock_after(parts, *game_id, mv.ply, &mv.fen, mv.clk_ms, c.at_ms).await;
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
    parts: &Follow,
    game: GameId,
    ply: u32,
    fen_after: &str,
    clk_ms: Option<u64>,
    at_ms: i64,
) -> Option<ClockView> {
    // The relay reading the board has the clock's own readings.
    if let Some(serial) = parts.boards.eboard_on(game)
        && parts
            .boards
            .eboard(&serial)
            .is_some_and(|e| e.read_by == instance_name())
    {
        return None;
    }
    let mover_ms = clk_ms?;
    // The side to move after the move is the one whose clock now runs.
    let white_moved = fen_after.split(' ').nth(1) == Some("b");
    let known = parts.boards.clock(game);
    let other_ms = match known {
        Some(k) => Some(if white_moved { k.black_ms } else { k.white_ms }),
        None => {
            // The first move this relay hears of in the game: its other side's last clock
            // from the store, once.
            let g = parts.lookup.store.game(game).await.ok()?;
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
    let clock = ClockView {
        white_ms,
        black_ms,
        running: Some(if white_moved {
            ColorName::Black
        } else {
            ColorName::White
        }),
        at_ms,
    };
    parts.boards.set_clock(game, clock);
    Some(clock)
}

/// E-boards other relays read, as they last announced them: the console of any relay shows
/// every e-board and which relay reads it. Returns the moment read up to.
async fn eboards_changed(parts: &Follow, after_ms: i64) -> i64 {
    // A second's overlap: a state written in the same millisecond as the last one read is
    // not missed (one already known changes nothing).
    let rows = match parts.lookup.store.eboards_live_since(after_ms - 1000).await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "e-boards of other relays not read");
            return after_ms;
        }
    };
    let mut upto = after_ms;
    for (text, at) in rows {
        upto = upto.max(at);
        let Ok(view) = serde_json::from_str::<EboardView>(&text) else {
            continue;
        };
        let me = instance_name();
        // Known already, or a board this relay reads itself (its own to show).
        let known = parts.boards.eboard(&view.serial);
        if view.read_by == me
            || known
                .as_ref()
                .is_some_and(|e| *e == view || (e.read_by == me && e.connected))
        {
            continue;
        }
        if let (Some(game), Some(board), Some(round)) = (view.game_id, view.board_no, view.round_id)
        {
            parts.boards.bind(&view.serial, game, 0, board, round);
        }
        parts.publisher.announce_eboard(view, |round| {
            parts.publisher.order().last(round).unwrap_or_default()
        });
    }
    upto
}
