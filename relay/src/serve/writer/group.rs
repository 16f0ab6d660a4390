//! Planning and flushing a group commit: what differs between each board's stored game and
//! the recorder's is planned into one transaction with the black box's readings, committed
//! (retried while the store is down), then announced in job order.

use super::carry::Slot;
use super::state::{Writer, retrying};
use crate::serve::events::Event;
use crate::serve::jobs::{Job, Snapshot};
use crate::serve::metrics::seconds_between;
use crate::serve::views::{ClockView, GameStatus};
use crate::serve::wire::ServerMessage;
use relay_core::game::GameResult;
use relay_store::{GameId, RoundId, Seq};
use relay_store::{IncidentKind, Op, RawEntry, now_ms};
use std::collections::HashMap;

/// What a group commit holds: the black-box readings, the ops of the board games planned
/// into it, and what is done after the commit, in the order the jobs came.
#[derive(Default)]
pub(super) struct Group {
    pub(super) raws: Vec<RawEntry>,
    pub(super) ops: Vec<Op>,
    /// Each board's stored game as it will be once the group is committed.
    pub(super) shadows: HashMap<String, Slot>,
    pub(super) after: Vec<After>,
}

pub(super) enum After {
    /// A board's game planned into the group; `ops` are its indexes in the group's ops.
    Sync {
        snap: Box<Snapshot>,
        game: GameId,
        round: RoundId,
        ops: Vec<usize>,
    },
    /// A job that only needs the group committed before it (running clocks, e-board news).
    Job(Job),
}

/// Whether the board plays the stored game from the same position: the same game, the same
/// start, and no orientation newly known (anything else needs the store first).
pub(super) fn same_game(slot: &Slot, snap: &Snapshot) -> bool {
    slot.game_no == snap.game_no
        && slot.start_fen == snap.start_fen
        && !(slot.orientation.is_none() && snap.orientation.is_some())
}

/// How many of the stored game's first moves the board's game still has.
fn moves_in_common(slot: &Slot, snap: &Snapshot) -> usize {
    slot.moves
        .iter()
        .zip(&snap.moves)
        .take_while(|(a, b)| a.uci == b.uci)
        .count()
}

/// Whether the board's game differs from the stored one only in the clocks of its moves: the
/// same game, the same moves and the same result.
pub(super) fn only_clocks(slot: &Slot, snap: &Snapshot) -> bool {
    same_game(slot, snap)
        && slot.result == snap.result
        && slot.moves.len() == snap.moves.len()
        && moves_in_common(slot, snap) == slot.moves.len()
}

impl Writer {
    /// Whether a board's game can join a group commit: its stored game is known and is the
    /// [`same_game`].
    pub(super) fn plannable(&self, snap: &Snapshot, group: &Group) -> bool {
        group
            .shadows
            .get(&snap.serial)
            .or_else(|| self.slots.get(&snap.serial))
            .is_some_and(|slot| same_game(slot, snap))
    }

    /// Adds what differs between the stored game and the board's to the group: moves no
    /// longer there, clocks now known, new moves, the result. The writer's picture of the
    /// stored game changes only when the group is committed.
    pub(super) fn plan(&mut self, snap: Box<Snapshot>, group: &mut Group) {
        let Some(mut slot) = group
            .shadows
            .remove(&snap.serial)
            .or_else(|| self.slots.get(&snap.serial).cloned())
        else {
            return;
        };
        let (game, round) = (slot.game_id, slot.round_id);
        let mut mine = Vec::new();
        let mut add = |group: &mut Group, op: Op| {
            mine.push(group.ops.len());
            group.ops.push(op);
        };
        let same = moves_in_common(&slot, &snap);
        if slot.moves.len() > same {
            let from_ply = (same + 1) as u32;
            add(
                group,
                Op::Truncate {
                    game,
                    from_ply,
                    actor: "recorder".into(),
                    reason: "taken back or corrected on the board".into(),
                },
            );
            slot.moves.truncate(same);
        }
        for i in 0..same {
            let new = &snap.moves[i];
            let old = &mut slot.moves[i];
            if old.clk_ms != new.clk_ms || old.emt_ms != new.emt_ms {
                add(
                    group,
                    Op::MoveClock {
                        game,
                        ply: new.ply,
                        clk_ms: new.clk_ms,
                        emt_ms: new.emt_ms,
                    },
                );
                old.clk_ms = new.clk_ms;
                old.emt_ms = new.emt_ms;
            }
        }
        for m in &snap.moves[same..] {
            let mut m = m.clone();
            m.accepted_at_ms = m.accepted_at_ms.max(1);
            add(group, Op::Move { game, m: m.clone() });
            slot.moves.push(m);
        }
        for i in &snap.incidents {
            let incident = relay_store::Incident {
                game_id: game,
                ..i.clone()
            };
            add(group, Op::Incident { game, incident });
        }
        // A result the board gave (mate, stalemate) is stored; one the board takes back (the
        // mating move corrected) is undone, but never a result an arbiter confirmed.
        let ongoing = snap.result == GameResult::Ongoing;
        let reopened = ongoing && slot.status == GameStatus::Finished;
        if snap.result != slot.result && (!ongoing || reopened) {
            let status = if reopened {
                GameStatus::Live
            } else {
                GameStatus::Finished
            };
            add(
                group,
                Op::Result {
                    game,
                    result: snap.result.to_string(),
                    termination: snap.termination.clone(),
                    status: status.to_string(),
                    actor: "recorder".into(),
                },
            );
            slot.result = snap.result;
            slot.status = status;
        }
        group.shadows.insert(snap.serial.clone(), slot);
        group.after.push(After::Sync {
            snap,
            game,
            round,
            ops: mine,
        });
    }

    /// After a group's commit: the writer's picture of the stored games moves on, each
    /// committed op is announced with its change number (`seqs`, by index in `ops`), and the
    /// jobs that waited run, in order. The clock reading that came with a board's change (its
    /// lever press) rides on the change's move or move-clock message when it has one.
    /// Returns the jobs that need the store (e-board touches), to be run next.
    #[must_use]
    pub(super) fn announce(
        &mut self,
        shadows: HashMap<String, Slot>,
        after: Vec<After>,
        ops: &[Op],
        seqs: &[Option<i64>],
    ) -> Vec<Job> {
        let mut rest = Vec::new();
        for (serial, slot) in shadows {
            self.update_slot(&serial, &slot);
        }
        for a in after {
            let (snap, game, round, mine) = match a {
                After::Job(Job::Clock { serial, clock }) => {
                    self.clock_reading(&serial, clock, true);
                    continue;
                }
                After::Job(Job::Eboard(view)) => {
                    self.eboard_news(*view);
                    continue;
                }
                After::Job(job) => {
                    rest.push(job);
                    continue;
                }
                After::Sync {
                    snap,
                    game,
                    round,
                    ops: mine,
                } => (snap, game, round, mine),
            };
            let carried = mine
                .iter()
                .any(|&i| matches!(ops.get(i), Some(Op::Move { .. } | Op::MoveClock { .. })));
            let mut ride = snap
                .press
                .and_then(|press| self.press_with(&snap.serial, game, press, carried));
            for i in mine {
                let (Some(seq), Some(op)) = (seqs.get(i).copied().flatten(), ops.get(i)) else {
                    continue;
                };
                if let Op::Incident { incident, .. } = op {
                    // A game joined late or moves recovered from the board's memory say so in
                    // its record and on the e-board; the console learns of them with the game.
                    if matches!(
                        incident.kind,
                        IncidentKind::JoinedLate | IncidentKind::Recovered
                    ) {
                        continue;
                    }
                    // Its slot holds the incident's id, not a change number.
                    let stored = relay_store::Incident {
                        id: seq,
                        ..incident.clone()
                    };
                    let latest = self.seq(round);
                    self.parts
                        .publisher
                        .publish(Event::incident(round, latest, stored));
                    continue;
                }
                let seq = Seq::from(seq);
                self.committed(round, seq);
                let Some(mut message) = ServerMessage::from_change(seq, game, op.record()) else {
                    continue;
                };
                match &mut message {
                    ServerMessage::Move {
                        read_at_ms, clock, ..
                    } => {
                        let m = &self.parts.metrics;
                        m.moves_committed.inc();
                        m.move_publish
                            .observe(seconds_between(snap.judged_at_ms, now_ms()));
                        *read_at_ms = Some(snap.read_at_ms);
                        *clock = ride.take();
                    }
                    ServerMessage::MoveClock { clock, .. } => *clock = ride.take(),
                    _ => {}
                }
                self.parts
                    .publisher
                    .publish(Event::new(round, Some(game), seq, &message));
            }
        }
        rest
    }

    /// Takes the clock reading that came with a board's change: kept as its game's clock, and
    /// a lever press is returned to ride on the change's message when it has one to ride on
    /// (`carried`), else announced on its own.
    pub(super) fn press_with(
        &mut self,
        serial: &str,
        game: GameId,
        press: ClockView,
        carried: bool,
    ) -> Option<ClockView> {
        let side_changed = self.side_changed(game, press.running);
        self.clock_reading(serial, press, !carried);
        (carried
            && side_changed
            && self
                .slots
                .get(serial)
                .is_some_and(|s| s.result == GameResult::Ongoing))
        .then_some(press)
    }

    pub(super) async fn flush_raw(&mut self, raws: &mut Vec<RawEntry>) {
        if raws.is_empty() {
            return;
        }
        let logged = retrying!(self, self.store.log_raw(raws).await);
        if let Err(e) = logged {
            tracing::error!(error = %e, "raw board messages could not be logged");
            // The database answered (with a refusal): it is up.
            self.stored_ok();
        }
        self.parts.metrics.raw_logged.inc_by(raws.len() as u64);
        raws.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_store::StoredMove;

    fn played(ucis: &[&str], clk_ms: Option<u64>) -> Vec<StoredMove> {
        ucis.iter()
            .enumerate()
            .map(|(i, uci)| StoredMove {
                ply: i as u32 + 1,
                san: String::new(),
                uci: (*uci).to_string(),
                clk_ms,
                emt_ms: None,
                accepted_at_ms: 1,
                fen_after: String::new(),
            })
            .collect()
    }

    fn stored(ucis: &[&str]) -> Slot {
        Slot {
            game_id: relay_store::GameId::from(1),
            round_id: relay_store::RoundId::from(1),
            board_no: 1,
            game_no: 1,
            moves: played(ucis, None),
            result: GameResult::Ongoing,
            status: GameStatus::Live,
            orientation: Some("normal".into()),
            start_fen: None,
        }
    }

    fn read(ucis: &[&str], clk_ms: Option<u64>) -> Snapshot {
        Snapshot {
            serial: "7001".into(),
            port: "/dev/ttyUSB0".into(),
            game_no: 1,
            start_fen: None,
            chess960: false,
            orientation: Some("normal"),
            moves: played(ucis, clk_ms),
            result: GameResult::Ongoing,
            termination: None,
            read_at_ms: 1,
            judged_at_ms: 1,
            press: None,
            incidents: Vec::new(),
        }
    }

    /// Only a change that adds clocks to the moves already stored may wait for company;
    /// anything that would show spectators a new move, a taken-back one or a result may not.
    #[test]
    fn only_the_clocks_of_stored_moves_may_wait() {
        let slot = stored(&["e2e4", "e7e5"]);
        assert!(only_clocks(
            &slot,
            &read(&["e2e4", "e7e5"], Some(5_400_000))
        ));
        assert!(!only_clocks(&slot, &read(&["e2e4", "e7e5", "g1f3"], None)));
        assert!(!only_clocks(&slot, &read(&["e2e4"], None)));
        assert!(!only_clocks(&slot, &read(&["e2e4", "c7c5"], None)));
        let mut over = read(&["e2e4", "e7e5"], None);
        over.result = GameResult::BlackWins;
        assert!(!only_clocks(&slot, &over));
        let mut next = read(&["e2e4", "e7e5"], None);
        next.game_no = 2;
        assert!(!only_clocks(&slot, &next));
    }
}
