//! Clock announcements: each reading of an e-board's clock is kept as its game's running
//! clock; a change of the side to move is announced at once, the rest in one `clocks`
//! message per round every 10 s; and e-board news goes to the console's clients.

use super::state::Writer;
use crate::serve::events::Event;
use crate::serve::views::{ClockView, EboardView, GameClock};
use crate::serve::wire::ServerMessage;
use relay_core::game::GameResult;
use relay_core::recorder::ColorName;
use relay_store::GameId;
use std::time::Duration;

/// How often the round's running-clock readings are announced (see `run`).
pub(super) const CLOCK_READINGS_EVERY: Duration = Duration::from_secs(10);
/// Running clocks per `clocks` message (about 95 bytes each: a message stays under 4 KiB).
const CLOCKS_PER_MESSAGE: usize = 40;

impl Writer {
    /// Announces the bundled clock readings, one message per round.
    pub(super) fn announce_clocks(&mut self) {
        for (round, all) in self.bundled.take() {
            let seq = self.seq(round);
            // In messages of a few KiB: every socket's write buffer keeps the size of the
            // largest message it sent, and a 1000-board round's clocks in one were 95 KiB.
            for list in all.chunks(CLOCKS_PER_MESSAGE) {
                let body = ServerMessage::Clocks {
                    seq,
                    clocks: list
                        .iter()
                        .map(|(g, c)| GameClock {
                            game_id: *g,
                            clock: *c,
                        })
                        .collect(),
                };
                let mut e = Event::new(round, None, seq, &body);
                e.change = false;
                self.parts.publisher.publish(e);
            }
        }
    }

    /// Takes a reading of an e-board's clock: kept as its game's running clock, bundled into
    /// the round's next `clocks` message when the same side runs on, and announced on its own
    /// (when `announce`) when the side to move changed. Nothing for a game with a result: what
    /// the clock shows then (set up for the next game, or the loser's still running) is not
    /// this game's.
    pub(super) fn clock_reading(&mut self, serial: &str, clock: ClockView, announce: bool) {
        let Some(slot) = self.slots.get(serial) else {
            return;
        };
        if slot.result != GameResult::Ongoing {
            return;
        }
        let (game, round) = (slot.game_id, slot.round_id);
        let side_changed = self.side_changed(game, clock.running);
        self.parts.boards.set_clock(game, clock);
        if !side_changed {
            // A reading while the same side runs: bundled with the round's other readings and
            // announced with them (one message, not one per board: a round of 200
            // boards would otherwise send 200 a second to every spectator).
            self.bundled.hold(round, game, clock);
            return;
        }
        self.bundled.drop_game(round, game);
        if !announce {
            return;
        }
        let seq = self.seq(round);
        let mut e = Event::new(
            round,
            Some(game),
            seq,
            &ServerMessage::Clock {
                seq,
                game_id: game,
                clock,
            },
        );
        e.change = false;
        e.at_ms = clock.at_ms;
        self.parts.publisher.publish(e);
    }

    /// An e-board's news: placed with its game, kept for `/api/eboards`, and announced to
    /// the clients that follow e-boards (the console).
    pub(super) fn eboard_news(&mut self, mut view: EboardView) {
        let slot = self.slots.get(&view.serial);
        view.game_id = slot.map(|s| s.game_id);
        view.board_no = slot.map(|s| s.board_no);
        view.round_id = Some(slot.map_or(self.current.id, |s| s.round_id));
        self.share_eboard(&view);
        self.parts
            .publisher
            .announce_eboard(view, |round| self.seq(round));
    }

    /// Whether `running` is another side to move than the game's last reading.
    pub(super) fn side_changed(&self, game: GameId, running: Option<ColorName>) -> bool {
        self.parts
            .boards
            .clock(game)
            .is_none_or(|l| l.running != running)
    }
}
