//! What travels between a venue and the cloud: the batch a venue sends ([`PushBatch`]), the
//! cloud's answer ([`PushReply`]) with the games it holds back ([`PushConflict`]), and what
//! applying a batch tells the cloud relay itself ([`Applied`]). Every other module of `push`
//! builds on these, so they sit below all of them.

use crate::model::{StoredGame, TournamentInfo};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What a venue sends in one request.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct PushBatch {
    /// The venue's name for itself, made once and kept in its store.
    pub origin: String,
    /// A name for people (the host it runs on).
    pub name: String,
    /// Numbers grow with every request a venue sends.
    pub batch: i64,
    /// Every tournament with its rounds (change numbers are the venue's and are ignored).
    pub tournaments: Vec<TournamentInfo>,
    /// The whole state of each game changed since the last delivered batch.
    pub games: Vec<StoredGame>,
    /// The venue's e-boards as its console shows them, when they changed (JSON views).
    #[serde(default)]
    pub eboards: Option<Vec<serde_json::Value>>,
    /// The venue forgot what it had delivered, as the cloud asked (`PushReply::resend`),
    /// and sends everything again.
    #[serde(default)]
    pub resent: bool,
}

/// What the cloud answers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PushReply {
    /// The batch was older than one already applied: nothing was done.
    pub stale: bool,
    /// The newest batch number applied from this venue.
    #[serde(default)]
    pub last_batch: i64,
    /// Changes stored (moves, clocks, truncations, results, pairings).
    pub changes: usize,
    /// Every game whose venue version is held back (not only this batch's).
    pub conflicts: Vec<PushConflict>,
    /// The venue's tournament joined an event this relay held under another tournament:
    /// the venue should send every game again (it was forgotten where it was).
    #[serde(default)]
    pub resend: bool,
}

/// A game changed on the cloud by an arbiter after the venue's last version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PushConflict {
    /// The venue's id of the game.
    pub game_id: i64,
    /// The cloud's id of the game.
    pub cloud_game_id: i64,
    pub board_no: u32,
    pub message: String,
    /// The game came for a board another game holds in that round here (several halls, one
    /// event): it is not stored until an arbiter here places it on another board; or its
    /// venue renumbered it onto such a board, and it stays on its old board here until that
    /// board is free or an arbiter places it (the message says which board). `board_no` is
    /// the board claimed; `cloud_game_id` the game holding it (0: none any more).
    #[serde(default)]
    pub clash: bool,
}

/// A batch as applied: the reply, and what the cloud relay must tell its own clients.
#[derive(Clone, Debug, Default)]
pub struct Applied {
    pub reply: PushReply,
    /// Rounds changed, each with its newest change number.
    pub rounds: Vec<(i64, i64)>,
    /// Tournaments or rounds were made or edited.
    pub meta_changed: bool,
    /// The venue's ids as this relay's: (kind, venue id) → id.
    pub ids: HashMap<(&'static str, i64), i64>,
    /// Games of this batch that clash with another hall's and did not before.
    pub new_clashes: usize,
}
