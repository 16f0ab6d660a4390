//! Events: what the writer, the follower and the routes hand to the feeds once a change is
//! committed (or a running clock or an e-board's news is known), each message encoded once.
//!
//! Events are made after the store has committed what they announce (or, for running clocks
//! and e-board status, after the raw readings they come from are logged), so a client never
//! sees anything a crash could take back.

use super::views::{ClockView, EboardView};
use super::wire::{Announcement, Frame, ServerMessage};
use relay_store::now_ms;
use relay_store::{GameId, RoundId, Seq};

/// One thing that happened, ready to send. `text` is the JSON message every client of the
/// live view gets; delayed clients get it `delay` later (clock messages re-stamped).
#[derive(Debug)]
pub struct Event {
    pub round_id: RoundId,
    pub game_id: Option<GameId>,
    pub seq: Seq,
    pub at_ms: i64,
    /// The message, typed: feeds keep their round's view up to date with it.
    pub message: ServerMessage,
    /// Lever presses (`move_clock` messages of earlier changes) held by the feed and carried
    /// by this change; they are in `text` too, and each alone in `press_texts` (with its game
    /// and change number) for a game page whose game is not this event's.
    pub presses: Vec<ServerMessage>,
    pub press_texts: Vec<(GameId, Seq, Frame)>,
    /// The message, encoded and framed once; every client gets these same bytes.
    pub text: Frame,
    /// Only for clients that asked for e-board news (the console): spectators do not
    /// pay for a frame each time a board is touched.
    pub arbiters: bool,
    /// A stored change (its seq is new); running clocks and e-board news only repeat the
    /// round's latest seq.
    pub change: bool,
}

impl Event {
    pub fn new(
        round_id: RoundId,
        game_id: Option<GameId>,
        seq: Seq,
        message: &ServerMessage,
    ) -> Event {
        Event {
            round_id,
            game_id,
            seq,
            at_ms: now_ms(),
            text: message.frame(),
            message: message.clone(),
            presses: Vec::new(),
            press_texts: Vec::new(),
            arbiters: false,
            change: true,
        }
    }

    /// E-board news: for the clients that follow e-boards (the console), and no change of
    /// its own (it repeats the round's latest change number).
    pub fn eboard(round_id: RoundId, seq: Seq, eboard: EboardView) -> Event {
        let mut e = Event::new(
            round_id,
            eboard.game_id,
            seq,
            &ServerMessage::Eboard { seq, eboard },
        );
        e.change = false;
        e.arbiters = true;
        e
    }

    /// An illegal move or clock correction put on a game's record: for the console only,
    /// like e-board news (it repeats the round's latest change number).
    pub fn incident(round_id: RoundId, seq: Seq, incident: relay_store::Incident) -> Event {
        let game_id = incident.game_id;
        let message = if incident.kind == relay_store::IncidentKind::ClockAdjustment {
            ServerMessage::ClockAdjustment {
                seq,
                game_id,
                incident,
            }
        } else {
            ServerMessage::IllegalMove {
                seq,
                game_id,
                incident,
            }
        };
        let mut e = Event::new(round_id, Some(game_id), seq, &message);
        e.change = false;
        e.arbiters = true;
        e
    }

    /// A `clock` message's clock (a side to move changed with no move to carry it).
    pub fn clock(&self) -> Option<ClockView> {
        match &self.message {
            ServerMessage::Clock { clock, .. } => Some(*clock),
            _ => None,
        }
    }

    /// Whether this is a running-clock bundle with `game`'s clock in it.
    pub fn bundles_clock_of(&self, game: GameId) -> bool {
        matches!(&self.message, ServerMessage::Clocks { clocks, .. } if clocks.iter().any(|c| c.game_id == game))
    }

    /// Whether this is an `eval` message with an evaluation of a position of `game`.
    pub fn evaluates(&self, game: GameId) -> bool {
        matches!(&self.message, ServerMessage::Eval { evals, .. } if evals.iter().any(|e| e.game_id == game))
    }

    /// A lever press on its own (a `move_clock` change with nothing carried): what a feed
    /// holds for the next change.
    pub fn is_press(&self) -> bool {
        self.change
            && self.presses.is_empty()
            && matches!(self.message, ServerMessage::MoveClock { .. })
    }

    /// The oldest change number the event brings: a carried press's, or its own.
    pub fn first_seq(&self) -> Seq {
        self.presses
            .iter()
            .filter_map(ServerMessage::seq)
            .fold(self.seq, Seq::min)
    }

    /// The same event carrying `presses` (oldest first); encoded again, once.
    pub fn carrying(&self, presses: Vec<ServerMessage>) -> Event {
        let press_texts = presses
            .iter()
            .filter_map(|p| match p {
                ServerMessage::MoveClock { game_id, seq, .. } => Some((*game_id, *seq, p.frame())),
                _ => None,
            })
            .collect();
        let text = Announcement {
            message: self.message.clone(),
            presses,
        };
        Event {
            round_id: self.round_id,
            game_id: self.game_id,
            seq: self.seq,
            at_ms: self.at_ms,
            text: Frame::text(&text.encode()),
            message: text.message,
            presses: text.presses,
            press_texts,
            arbiters: self.arbiters,
            change: self.change,
        }
    }
}

/// A message waiting to be sent: the message, or a game replaced wholesale whose view is
/// built when it is sent (as of that moment, which for a delayed view is its own moment).
#[derive(Debug)]
pub enum Pending {
    Message(Box<ServerMessage>),
    Game { seq: Seq, game: GameId },
}

/// A stored change as the message a client gets (`only_game`: a game page's client).
pub fn change_message(only_game: Option<GameId>, c: &relay_store::Change) -> Option<Pending> {
    let game = c.game_id?;
    if only_game.is_some_and(|g| g != game) {
        return None;
    }
    let record = match c.record() {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(seq = %c.seq, kind = %c.kind, error = %e, "a stored change does not read; the game is sent whole");
            relay_store::ChangeRecord::Game
        }
    };
    Some(match ServerMessage::from_change(c.seq, game, record) {
        Some(m) => Pending::Message(Box::new(m)),
        None => Pending::Game { seq: c.seq, game },
    })
}
