//! Pushing what this relay commits to targets elsewhere: a cloud relay (`cloud`) and Lichess
//! broadcast rounds (`lichess`).
//!
//! Both go through one loop (`run`), which registers the target's line on `/health`
//! (`status`), does the pushing only while this relay holds the target's duty (standing by
//! otherwise, taking over when it comes), waits for news, and waits after failures. A target
//! is a small state that says what to send next and what an answer means; `http` makes the
//! one call they all make.
//!
//! The modules stand in layers: `status` and `http` at the bottom, `run` on them, the
//! targets on top.

pub mod cloud;
pub mod http;
pub mod lichess;
pub mod run;
pub mod status;
#[cfg(test)]
mod testing;
