//! A board's own memory, read when the board is read again after a gap (the session asks
//! for it when it opens the port and when a lost board comes back, before the board's
//! position): the moves made while nothing read the board go into its game as if read live,
//! each with the clock the board logged at its press, and the arbiter's record says they were
//! recovered. A board first read with a game under way (relay started late, a game played
//! with no computer) gets that game from its start. What the memory cannot give is said, on
//! the e-board's view, and nothing is invented.

use super::desk::snapshot;
use super::state::Hall;
use crate::serve::jobs::Job;
use boards::protocol::EeRecord;
use relay_core::board_memory::{LoggedMove, Recovery, latest_game, recover};
use relay_core::game::GameResult;
use relay_core::recorder::{ColorName, Recorder};
use relay_store::{Incident, now_ms};

impl Hall {
    /// The board `serial` sent its memory.
    pub(super) fn read_memory(&mut self, serial: &str, records: &[EeRecord]) {
        let cfg = self.cfg.clone();
        let Some(d) = self.desks.get_mut(serial) else {
            return;
        };
        let (game, first_ply, moves, started) = match d.recorder.game() {
            // A finished game is left as it is: what its board did since is the next game.
            Some(g) if g.result != GameResult::Ongoing => return,
            Some(g) => {
                let ucis: Vec<String> = g
                    .moves
                    .iter()
                    .map(|m| m.uci(g.castling_mode).to_string())
                    .collect();
                match recover(&g.start, &ucis, d.recorder.orientation(), records) {
                    Recovery::Continues { moves, .. } if moves.is_empty() => {
                        tracing::debug!(%serial, plies = ucis.len(), "the board's memory: nothing missed");
                        d.view.memory = None;
                        return;
                    }
                    Recovery::Continues {
                        first_ply, moves, ..
                    } => (g.clone(), first_ply, moves, false),
                    Recovery::Unknown { why } => {
                        tracing::info!(%serial, %why, "the board's memory cannot fill the gap");
                        d.view.memory = Some(format!("Memory not used: {why}."));
                        self.announce(serial);
                        return;
                    }
                }
            }
            None => match latest_game(records) {
                Some(logged) => {
                    let mut g = logged.to_game();
                    let moves: Vec<LoggedMove> = logged.settled_moves().to_vec();
                    g.moves.clear();
                    let orientation = logged.orientation;
                    // A fresh recorder on the game's start, so the game is new to the writer.
                    d.recorder = Recorder::resume(cfg.clone(), g.clone(), orientation);
                    (g, 1, moves, true)
                }
                None => return,
            },
        };
        let orientation = d.recorder.orientation().unwrap_or_default();
        let mut g = game;
        for m in &moves {
            g.push(m.mv, m.clk, None);
        }
        d.recorder = Recorder::resume(cfg, g, orientation);
        if started {
            d.game_no += 1;
            d.sent.clear();
            d.sent_result = GameResult::Ongoing;
            d.view.proposal = None;
        }
        let at_ms = now_ms();
        for (i, m) in moves.iter().enumerate() {
            d.incidents.push(Incident {
                kind: "recovered".into(),
                ply: (first_ply + i) as u32,
                color: match m.color {
                    ColorName::White => "white",
                    ColorName::Black => "black",
                }
                .into(),
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
            self.send_raws();
            let _ = self.jobs.send(Job::Sync(Box::new(snap)));
        }
        self.announce(serial);
    }
}
