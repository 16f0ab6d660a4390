//! The writer: the one place that changes games in the store, and the one that announces
//! changes. Jobs arrive in order from the hall and the arbiter routes; each is committed, then
//! published. When the database does not answer, the job is retried (with the queue behind it
//! kept in memory, readings still being taken) and `/health` says so; nothing is dropped and
//! nothing is announced before it is stored.
//!
//! Games are written by difference: the hall sends the recorder's whole game (a [`Snapshot`]),
//! and the writer stores what differs from what it stored last. A retried job therefore never
//! writes a move twice, and a move the store refuses as already there (a commit whose answer
//! was lost) only makes the writer read the game back and carry on.

mod apply;
mod bundle;
mod carry;
mod clocks;
mod edits;
mod flush;
mod games;
mod group;
mod place;
mod run;
mod state;

pub use carry::{Slot, load_carry};
pub use state::{Handles, Writer};
