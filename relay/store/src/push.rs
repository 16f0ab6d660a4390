//! Pushing to another relay: a venue relay sends what it committed to a cloud relay, which
//! keeps it as its own tournaments, rounds and games.
//!
//! The venue's outbox is its change log: for each target it keeps how far each round's
//! changes were delivered (`upstream_sent`), so what was committed is sent after a restart of
//! either side, and nothing is written on the path of a move. A batch carries the *whole*
//! state of every game changed since (and every tournament with its rounds): applying it
//! twice changes nothing, and a backlog of any length collapses to one state per game. Each
//! batch has a number; the cloud applies a batch only when its number is above the last one
//! it applied from that venue, so a request held up in the network cannot take a game back.
//!
//! The cloud stores the difference between what it has and the venue's state, as the
//! writer does for boards (new moves, clocks filled in, a truncation, a result), each a
//! change of its own, in one transaction. A game an arbiter changed here after the venue's
//! last version is not overwritten: the venue's version is held back as a conflict until an
//! arbiter here takes it ([`Store::take_held`](crate::Store::take_held)).
//!
//! The modules, from the bottom: `wire` (the batch and the answer), `ids` (venue ids onto
//! local ones), `clashes` (a board two games claim, renumbered games following theirs),
//! `game` (one game's difference as changes, a version held back), and on them `apply` (a
//! batch applied), `halls` (event keys, settling a clash), `sources` (the venues as the
//! console shows them); `outbox` is the venue's side and stands apart.

mod apply;
mod clashes;
mod game;
mod halls;
mod ids;
mod outbox;
mod sources;
mod wire;

pub use halls::{Settled, check_event_key, event_key_from};
pub use sources::{LINK_SILENT_MS, MirrorSource};
pub use wire::{Applied, PushBatch, PushConflict, PushReply};
