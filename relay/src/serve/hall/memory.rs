//! A board's own memory, read when the board is read again after a gap: the moves made while
//! nothing read the board go into its game as if read live, each with the clock the board
//! logged at its press, and the arbiter's record says they were recovered. What the memory
//! cannot give is said on the e-board's view, and nothing is invented.
//!
//! A single board is asked for its whole log (the session does it when it opens the port and
//! when a lost board comes back, before the board's position); a board first read with a game
//! under way (relay started late, a game played with no computer) gets that game from its
//! start. A bus board's first change poll after a restart or a return brings what it logged
//! since the last poll that was answered (its backlog), which continues the stored game.

use super::desk::snapshot;
use super::state::Hall;
use crate::serve::jobs::Job;
use boards::protocol::{EeRecord, Placement};
use relay_core::board_memory::{
    LoggedGame, LoggedMove, Recovery, continue_from, game_from_start, latest_game, recover,
};
use relay_core::game::{Game, GameResult};
use relay_core::recorder::Recorder;
use relay_store::{Incident, IncidentKind, now_ms};

impl Hall {
    /// The single board `serial` sent its whole memory.
    pub(super) fn read_memory(&mut self, serial: &str, records: &[EeRecord]) {
        let Some(d) = self.desks.get_mut(serial) else {
            return;
        };
        match d.recorder.game() {
            // A finished game is left as it is: what its board did since is the next game.
            Some(g) if g.result != GameResult::Ongoing => {}
            Some(g) => {
                let g = g.clone();
                let recovery = recover(&g.start, &ucis(&g), d.recorder.orientation(), records);
                self.take_recovered(serial, g, recovery);
            }
            None => {
                if let Some(logged) = latest_game(records) {
                    self.start_recovered(serial, &logged);
                }
            }
        }
    }

    /// A game the memory holds from its start, on a board with no game yet.
    fn start_recovered(&mut self, serial: &str, logged: &LoggedGame) {
        let cfg = self.cfg.clone();
        let Some(d) = self.desks.get_mut(serial) else {
            return;
        };
        let mut g = logged.to_game();
        let moves: Vec<LoggedMove> = logged.settled_moves().to_vec();
        g.moves.clear();
        // A fresh recorder on the game's start: a new game for the writer.
        d.recorder = Recorder::resume(cfg, g.clone(), logged.orientation);
        d.game_no += 1;
        d.sent.clear();
        d.sent_result = GameResult::Ongoing;
        d.view.proposal = None;
        if moves.is_empty() {
            // Only a first move not pressed yet: the game begins from its start, and the live
            // reading takes that move from the board.
            if let Some(snap) = snapshot(serial, d) {
                self.writer.send_after_readings(Job::Sync(Box::new(snap)));
            }
            return;
        }
        let recovery = Recovery::Continues {
            first_ply: 1,
            without_clock: Vec::new(),
            moves,
        };
        self.take_recovered(serial, g, recovery);
    }

    /// The bus board `serial` sent what it logged while nothing polled it, and `now` is the
    /// board read right after. With a game going on, it continues that game; with no game
    /// yet, it is a game from the start position when the records play that out to exactly
    /// `now`; otherwise the records go to the recorder one by one as any poll's.
    pub(super) fn read_backlog(
        &mut self,
        serial: &str,
        records: &[EeRecord],
        now: Option<&Placement>,
        at_ms: u64,
    ) {
        let Some(d) = self.desks.get_mut(serial) else {
            return;
        };
        if let (Some(g), Some(orientation)) = (d.recorder.game(), d.recorder.orientation())
            && g.result == GameResult::Ongoing
        {
            let g = g.clone();
            let recovery = continue_from(&g.start, &ucis(&g), orientation, records, now);
            self.take_recovered(serial, g, recovery);
            return;
        }
        if d.recorder.game().is_none()
            && let Some(now) = now
            && let Some(logged) = game_from_start(records, now)
        {
            self.start_recovered(serial, &logged);
            return;
        }
        let Some(d) = self.desks.get_mut(serial) else {
            return;
        };
        let mut outs = Vec::new();
        for message in records.iter().filter_map(EeRecord::as_message) {
            outs.extend(d.recorder.on_message(&message, at_ms));
        }
        if let Some(at) = d.recorder.judge_at() {
            self.due.at(at, serial);
        }
        self.after(serial, &outs);
    }

    /// Plays what the memory gave into the game `game` (the desk's, as it stood) and says so.
    fn take_recovered(&mut self, serial: &str, game: Game, recovery: Recovery) {
        let cfg = self.cfg.clone();
        let Some(d) = self.desks.get_mut(serial) else {
            return;
        };
        let (first_ply, moves) = match recovery {
            Recovery::Continues { moves, .. } if moves.is_empty() => {
                tracing::debug!(%serial, plies = game.moves.len(), "the board's memory: nothing missed");
                return;
            }
            Recovery::Continues {
                first_ply, moves, ..
            } => (first_ply, moves),
            Recovery::Unknown { why } => {
                tracing::info!(%serial, %why, "the board's memory cannot fill the gap");
                d.view.memory = Some(format!("Memory not used: {why}."));
                self.announce(serial);
                return;
            }
        };
        let orientation = d.recorder.orientation().unwrap_or_default();
        let mut g = game;
        for m in &moves {
            g.push(m.mv, m.clk, None);
        }
        d.recorder = Recorder::resume(cfg, g, orientation);
        let at_ms = now_ms();
        // The moves were read now, from the memory (not with the board's last message
        // before the gap).
        d.board_read_ms = at_ms;
        for (i, m) in moves.iter().enumerate() {
            d.incidents.push(Incident {
                kind: IncidentKind::Recovered,
                ply: (first_ply + i) as u32,
                color: m.color.into(),
                // Whether the board logged the move's clock.
                clock_pressed: m.clk.is_some(),
                at_ms,
                ..Incident::default()
            });
        }
        let last = first_ply + moves.len() - 1;
        let unclocked: Vec<String> = moves
            .iter()
            .enumerate()
            .filter(|(_, m)| m.clk.is_none())
            .map(|(i, _)| (first_ply + i).to_string())
            .collect();
        let mut note = format!(
            "{} {} recovered from the board's memory, plies {first_ply}–{last}",
            moves.len(),
            if moves.len() == 1 { "move" } else { "moves" }
        );
        if !unclocked.is_empty() {
            note.push_str(&format!(
                "; no clock in the memory for ply {}",
                unclocked.join(", ")
            ));
        }
        tracing::info!(%serial, first_ply, last, "{note}");
        d.view.memory = Some(format!("{note}."));
        if let Some(snap) = snapshot(serial, d) {
            self.writer.send_after_readings(Job::Sync(Box::new(snap)));
        }
        self.announce(serial);
    }
}

/// The game's moves as the store and the log's reader write them.
fn ucis(g: &Game) -> Vec<String> {
    g.moves
        .iter()
        .map(|m| m.uci(g.castling_mode).to_string())
        .collect()
}
