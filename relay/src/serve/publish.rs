//! Publishing: how a committed change, a running clock or an e-board's news reaches the
//! feeds. Committed changes go through [`Order`], so they go out in change-number order
//! whoever committed them; everything handed on counts as news for the pushers.

use super::analysis::intake::{Intake, News, Reached};
use super::events::Event;
use super::feeds::Feeds;
use super::live::Boards;
use super::lookup::Lookup;
use super::order::Order;
use super::views::EboardView;
use super::wire::ServerMessage;
use relay_store::{GameId, RoundId, Seq};
use std::sync::Arc;
use tokio::sync::watch;

/// The way to the feeds, for every part that publishes (the writer, the follower, the routes
/// that commit); cheap to clone (handles only).
#[derive(Clone, Debug)]
pub struct Publisher {
    order: Arc<Order>,
    feeds: Arc<Feeds>,
    boards: Arc<Boards>,
    lookup: Lookup,
    /// Counts committed changes and e-board news handed to the feeds: what pushes to other
    /// services wait on.
    news: Arc<watch::Sender<u64>>,
    /// Positions the games reach, for the analysis desk when evaluation is on.
    positions: Intake,
}

impl Publisher {
    pub fn new(order: Arc<Order>, feeds: Arc<Feeds>, boards: Arc<Boards>, lookup: Lookup) -> Self {
        Publisher {
            order,
            feeds,
            boards,
            lookup,
            news: Arc::new(watch::channel(0).0),
            positions: Intake::default(),
        }
    }

    /// Where each round's changes have gone out up to.
    pub fn order(&self) -> &Order {
        &self.order
    }

    /// Changes each time a committed change or e-board news goes to a feed.
    pub fn news(&self) -> watch::Receiver<u64> {
        self.news.subscribe()
    }

    /// Games an arbiter's request changed and committed (pairings loaded, a TRF imported, a
    /// board renumbered): each `(round, game, change number)` goes out as the game's whole
    /// view, read from the store.
    pub async fn games_changed(&self, changed: &[(RoundId, GameId, Seq)]) {
        for &(round, game, seq) in changed {
            if let Ok(v) = self.lookup.game_view_at(game, None).await {
                self.publish(Event::new(
                    round,
                    Some(game),
                    seq,
                    &ServerMessage::Game {
                        seq,
                        game: Box::new(v),
                    },
                ));
            }
        }
    }

    /// Hands a committed change (or running clock, or e-board news) to its round's live feed.
    /// Committed changes go out in change-number order (see [`Order`]): one whose
    /// predecessor, committed elsewhere, has not gone out yet waits for it.
    pub fn publish(&self, e: Event) {
        if !e.change {
            self.push_to_feed(e);
            return;
        }
        for e in self.order.offer(e) {
            self.push_to_feed(e);
        }
    }

    /// Where the positions games reach are told (connected when evaluation is on).
    pub fn positions(&self) -> &Intake {
        &self.positions
    }

    /// Hands an event whose turn it is to its round's live feed.
    pub fn push_to_feed(&self, e: Event) {
        if e.change || matches!(e.message, ServerMessage::Eboard { .. }) {
            self.news.send_modify(|n| *n = n.wrapping_add(1));
        }
        if self.positions.is_on() {
            self.tell_positions(&e);
        }
        self.feeds.live(e.round_id).push(Arc::new(e));
    }

    /// The positions an event's moves reach, and moves it takes back, for the analysis desk.
    fn tell_positions(&self, e: &Event) {
        let reached = |game: GameId, m: &crate::serve::views::MoveView| {
            News::Reached(Reached {
                round: e.round_id,
                game,
                ply: m.ply,
                fen: m.fen.clone(),
                at_ms: e.at_ms,
                seq: e.seq,
            })
        };
        match &e.message {
            ServerMessage::Move { game_id, mv, .. } => self.positions.tell(reached(*game_id, mv)),
            ServerMessage::Truncate {
                game_id, from_ply, ..
            } => self.positions.tell(News::Cut {
                game: *game_id,
                from_ply: *from_ply,
            }),
            ServerMessage::Game { game, .. } => {
                self.positions.tell(News::Cut {
                    game: game.id,
                    from_ply: 1,
                });
                for m in &game.moves {
                    self.positions.tell(reached(game.id, m));
                }
            }
            _ => {}
        }
    }

    /// Keeps an e-board's view and tells its round's feed. An e-board that moved on to another
    /// round (its next game) is told to the round it left too: that round's view takes it off
    /// its old game, and a console following that round learns where it went.
    /// `seq_of` gives a round's latest change number (e-board news has none of its own).
    pub fn announce_eboard(&self, view: EboardView, seq_of: impl Fn(RoundId) -> Seq) {
        let left = view
            .round_id
            .and_then(|round| self.boards.tell_round(&view.serial, round));
        self.boards.put_eboard(view.clone());
        if let Some(old) = left {
            self.push_to_feed(Event::eboard(old, seq_of(old), view.clone()));
        }
        if let Some(round) = view.round_id {
            self.push_to_feed(Event::eboard(round, seq_of(round), view));
        }
    }

    /// After an edit of tournaments or rounds, which the feeds' messages do not carry: the
    /// feeds' views and what is remembered of rounds are read again, and open sockets learn
    /// the `(round, delay ms)` of the rounds the edit touched.
    pub fn round_edited(&self, delays: impl IntoIterator<Item = (RoundId, i64)>) {
        self.feeds.forget_views();
        self.lookup.edited(delays);
    }

    /// Rounds or tournaments were edited elsewhere (another relay, a venue's push): as
    /// [`Publisher::round_edited`], with the delays of the rounds followed here read again.
    pub async fn rounds_edited_elsewhere(&self) {
        let mut delays = Vec::new();
        for round in self.feeds.rounds() {
            if let Ok(info) = self.lookup.store.round(round).await
                && let Ok(d) = self.lookup.delay_ms(&info).await
            {
                delays.push((round, d));
            }
        }
        self.round_edited(delays);
    }
}
