//! The relay's storage: one [`Store`] over SQLite (the embedded default, `sqlite://relay.db`)
//! or PostgreSQL (`postgres://…`), with per-backend migrations applied at start-up. A part
//! that only reads holds a [`Reads`] ([`Store::reads`]), which has no write.
//!
//! Every write that changes what spectators see (a move, a correction, a result) happens in
//! one transaction with the round's change sequence number, and returns that number only after
//! the commit: the caller publishes after this returns, so nothing is announced that a crash
//! could take back. SQLite runs in WAL mode with `synchronous=FULL` (the commit is on disk
//! when it returns); PostgreSQL with its defaults (`fsync`, `synchronous_commit` on).
//!
//! The SQL is shared by both backends: parameters are written `$1`, `$2`, … in the order they
//! first appear, which SQLite reads as numbered parameters too. Only the schema differs.

mod batch;
mod change;
mod cluster;
mod direct;
mod error;
mod evals;
mod export;
mod games;
mod id;
mod incidents;
mod logs;
mod migrate;
mod model;
mod open;
mod pool;
mod push;
mod reads;
mod rounds;
mod sources;
mod standings;
mod trf;
mod trf_record;

pub use batch::Op;
pub use change::{ChangeRecord, MoveClockRecord, MoveRecord, ResultRecord, TruncateRecord};
pub use cluster::{
    CHANGES_CHANNEL, EBOARDS_CHANNEL, Heard, Listener, Locks, ROUNDS_CHANNEL, lock_key,
};
pub use direct::SqliteCommits;
pub use error::{Result, StoreError};
pub use evals::{Score, StoredEval, position_key};
pub use export::{round_game, stored_moves, to_game};
pub use id::{BadId, GameId, RoundId, Seq, TournamentId};
pub use incidents::{Incident, IncidentKind, Side, UnknownWord};
pub use migrate::SCHEMA_VERSION;
pub use model::{
    AuditEntry, AuditRecord, Change, NewTournament, Pairing, Player, RawEntry, RoundInfo,
    StoredGame, StoredMove, TournamentInfo,
};
pub use pool::{Store, now_ms};
pub use push::{
    Applied, LINK_SILENT_MS, MirrorSource, PushBatch, PushConflict, PushReply, Settled,
    check_event_key, event_key_from,
};
pub use reads::Reads;
pub use relay_core::incident::Ruling;
pub use rounds::{GameStart, RoundPatch, TournamentPatch, next_round_number};
pub use sources::PgnSource;
pub use standings::{RankingTerms, known_codes};
pub use trf::{RoundBye, TournamentPlayer, TournamentTeam, TrfImported};
