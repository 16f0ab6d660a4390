//! The shared real test data (`../shared/data` beside the checkout) and the one rule for its
//! absence, used by every test that reads it: a user's clone has no `../shared`, so such a test
//! prints a notice and passes; with `RELAY_REQUIRE_SHARED_DATA=1` (as CI sets) it fails instead.
//!
//! It also holds the few small test-only helpers that the tests of several crates need (a
//! scratch folder, a move from SAN, a clock reading), so that each exists once: every crate's
//! tests already depend on this crate, and these need nothing beyond it.

use crate::protocol::{ClockReading, ClockSide, ClockStatus, SideTime};
use shakmaty::san::San;
use shakmaty::{Chess, Move, Position};
use std::path::PathBuf;

/// The path of `relative` under the shared data folder, or `None` (after printing a notice)
/// when it is missing. Panics when missing and `RELAY_REQUIRE_SHARED_DATA=1`.
pub fn shared_data(relative: &str) -> Option<PathBuf> {
    // This crate sits one level below the workspace root; the shared folder is beside the root.
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(relative);
    if p.exists() {
        return Some(p);
    }
    if std::env::var("RELAY_REQUIRE_SHARED_DATA").as_deref() == Ok("1") {
        panic!(
            "{} is required (RELAY_REQUIRE_SHARED_DATA=1) but missing",
            p.display()
        );
    }
    println!("skipping: ../shared/data not found ({relative})");
    None
}

/// The files directly inside the shared folder `relative`, in name order, or `None` as for
/// [`shared_data`].
pub fn shared_files(relative: &str) -> Option<Vec<PathBuf>> {
    let dir = shared_data(relative)?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    // read_dir's order is the file system's; tests want the same order on every machine.
    files.sort();
    Some(files)
}

/// A new, empty scratch folder `relay-NAME-PID` in the system's temporary folder; whatever a
/// previous run of this process id left there is removed first.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("relay-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    d
}

/// Plays the move `san` in `pos` and returns it. Panics when `san` is not a legal move there:
/// a test's own moves are known to be right.
pub fn play_san(pos: &mut Chess, san: &str) -> Move {
    let m = san
        .parse::<San>()
        .unwrap_or_else(|e| panic!("bad SAN {san}: {e}"))
        .to_move(pos)
        .unwrap_or_else(|e| panic!("{san} is not legal: {e}"));
    pos.play_unchecked(m);
    m
}

/// A clock reading showing `left` and `right` seconds, with the side that runs (none: the
/// clock stands) and the side whose flag fell, if any.
pub fn clock_reading(
    left: u32,
    right: u32,
    running: Option<ClockSide>,
    flag: Option<ClockSide>,
) -> ClockReading {
    let side = |seconds: u32, me: ClockSide| SideTime {
        seconds,
        flag_fallen: flag == Some(me),
        ..SideTime::default()
    };
    ClockReading {
        left: side(left, ClockSide::Left),
        right: side(right, ClockSide::Right),
        status: ClockStatus {
            running: running.is_some(),
            // The lever is high on the side whose time runs.
            lever_right_high: running == Some(ClockSide::Right),
            ..ClockStatus::default()
        },
    }
}
