//! Placing e-boards first seen, many at once. At a hall's start every e-board is new to the
//! writer, and placing each on its own (`Writer::slot_for`, then `start_game`) took two
//! commits and a dozen statements a board: 1000 boards stood on their boards 4–5 s after
//! the start, though every port had been read within 2–3 s. The e-boards first seen in one
//! batch of jobs are placed together here, with one commit for their seats and one for where
//! their games start, exactly as the one-by-one path would have placed them; whatever is not
//! that plain case (a game already under way on the board's new seat, a stored game from
//! another position) is left to that path.

use super::carry::Slot;
use super::games::{Setup, setup};
use super::state::Writer;
use crate::serve::jobs::{Job, Snapshot};
use relay_store::{GameId, GameStart, StoreError, StoredGame};
use std::collections::{HashMap, HashSet};

impl Writer {
    /// The e-boards first seen in `batch`, placed before the batch runs. Only the boards whose
    /// first job comes before any job that needs the store's answer in order (an arbiter's
    /// assignment or edit, another relay's change): those must see the boards as they were.
    /// A failure leaves them to the one-by-one path, which retries.
    pub(super) async fn place_newcomers(&mut self, batch: &[Job]) {
        let mut seen = HashSet::new();
        let mut newcomers: Vec<&Snapshot> = Vec::new();
        for job in batch {
            match job {
                Job::Sync(snap) => {
                    if self.slots.get(&snap.serial).is_none()
                        && !self.slots.adopting(&snap.serial)
                        && seen.insert(snap.serial.as_str())
                    {
                        newcomers.push(snap);
                    }
                }
                Job::Raws(_) | Job::Touch { .. } | Job::Clock { .. } | Job::Eboard(_) => {}
                _ => break,
            }
        }
        // One board is placed as well by the one-by-one path; the batch pays from two on.
        if newcomers.len() < 2 {
            return;
        }
        let started = std::time::Instant::now();
        match self.place(&newcomers).await {
            Ok(()) => tracing::debug!(
                boards = newcomers.len(),
                ms = started.elapsed().as_millis() as u64,
                "e-boards placed together"
            ),
            Err(e) => {
                tracing::warn!(error = %e, boards = newcomers.len(), "e-boards not placed together; placing them one by one")
            }
        }
    }

    /// Seats `snaps`' e-boards in the current round (an assignment an arbiter made, else the
    /// next free board numbers), in one commit; then stores where each plain new game starts,
    /// in another; then binds and announces each.
    async fn place(&mut self, snaps: &[&Snapshot]) -> Result<(), StoreError> {
        let store = self.store.clone();
        // An arbiter may have opened a new round or closed this one since.
        if let Some(r) = store.current_round().await? {
            self.current = r;
        }
        let round = self.current.id;
        let assigned = store.assignments(round).await?;
        let unassigned = snaps
            .iter()
            .filter(|s| !assigned.iter().any(|(_, serial)| *serial == s.serial))
            .count();
        let mut free = store
            .free_board_nos(round, self.slots.first_board(), unassigned)
            .await?
            .into_iter();
        let mut seats = Vec::with_capacity(snaps.len());
        for s in snaps {
            let board_no = match assigned.iter().find(|(_, serial)| *serial == s.serial) {
                Some((b, _)) => *b,
                None => free.next().ok_or(StoreError::NotFound {
                    what: "free board number",
                    id: round.to_string(),
                })?,
            };
            seats.push((board_no, s.serial.clone(), Some(s.port.clone())));
        }
        let placed = store.assign_many(round, &seats).await?;
        let ids: Vec<GameId> = placed.iter().map(|(game, _)| *game).collect();
        let stored = store.games(&ids).await?;
        if stored.len() != ids.len() {
            return Err(StoreError::NotFound {
                what: "game of a placed e-board",
                id: round.to_string(),
            });
        }
        let mut slots = Vec::with_capacity(snaps.len());
        for (((board_no, serial, _), (_, seq)), (snap, g)) in
            seats.iter().zip(&placed).zip(snaps.iter().zip(&stored))
        {
            self.committed(round, *seq);
            tracing::info!(%serial, board_no, %round, "e-board placed on a board");
            let slot = Slot::stored(g, 0);
            self.bind(serial, slot.clone());
            slots.push((slot, *snap));
        }
        // Every change number goes out, in order (the live feeds' order waits for a missing
        // one and has it read back from the log): each seat's first, in the order committed.
        for (g, (_, seq)) in stored.iter().zip(&placed) {
            self.publish_stored(g, *seq, true);
        }
        // Where each game starts, as `sync` would store it before the board's moves; a new
        // game after one under way, or a game going on from another position, is `sync`'s.
        let mut starts = Vec::new();
        let mut starting = Vec::new();
        for (i, (slot, snap)) in slots.iter().enumerate() {
            if setup(slot, snap) == Setup::Start {
                starts.push(GameStart {
                    game: slot.game_id,
                    start_fen: snap.start_fen.clone(),
                    chess960: snap.chess960,
                    orientation: snap.orientation.map(str::to_string),
                });
                starting.push(i);
            }
        }
        let seqs = store.start_games(&starts).await?;
        let games: HashMap<GameId, StoredGame> = store
            .games(&starts.iter().map(|s| s.game).collect::<Vec<_>>())
            .await?
            .into_iter()
            .map(|g| (g.id, g))
            .collect();
        for (i, seq) in starting.into_iter().zip(seqs) {
            let (slot, snap) = &mut slots[i];
            self.committed(round, seq);
            slot.game_no = snap.game_no;
            slot.orientation = snap.orientation.map(str::to_string);
            slot.start_fen = snap.start_fen.clone();
            self.bind(&snap.serial, slot.clone());
            // Then each start, again in the order committed.
            if let Some(g) = games.get(&slot.game_id) {
                self.publish_stored(g, seq, true);
            }
        }
        Ok(())
    }
}
