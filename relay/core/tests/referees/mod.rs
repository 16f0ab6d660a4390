//! The outside reader relay's TRF is checked against (caissify-pairings, run by
//! `trf_caissify.py` beside this file) and the pairing programs' files in
//! `shared/data/pairings/`, for relay-core's, relay-store's and the end-to-end tests (each
//! compiles this file with `#[path]`; it uses only `boards`, `relay_core`, `serde_json` and
//! std).
//!
//! Without python3 and caissify-pairings the checks print a notice and are skipped, unless
//! `RELAY_REQUIRE_ALL=1` (as in CI), which makes that a failure.

// Each test binary that includes this module uses a different part of it.
#![allow(dead_code)]

use relay_core::trf::{Cell, Trf};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every file of `shared/data/pairings/` that is a TRF.
pub const FILES: &[&str] = &[
    "fide_example1_karl_mala_2005.trf",
    "javafo_sample2_gros_2010.trf",
    "grandmommys_cup_trf26_team.trf",
    "icu_bunratty_masters_2011.tab",
    "lichess_swiss_2020_13p.trf",
    "bbp_issue15_autotest_180p.trf",
    "vega_sample_tournament.trfx",
];

/// The workspace's root: the nearest folder above this crate with the `Cargo.lock`.
fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|d| d.join("Cargo.lock").exists())
        .unwrap_or(here)
        .to_path_buf()
}

/// A file of `shared/data/pairings/` (the shared folder sits beside the checkout), or `None`
/// by the shared data's one rule (`boards::testdata::shared_data`: a notice, or a failure
/// under `RELAY_REQUIRE_SHARED_DATA=1`).
pub fn data(name: &str) -> Option<PathBuf> {
    boards::testdata::shared_data(&format!("pairings/{name}"))
}

/// A file of `shared/data/pairings/` once a test has found the folder there ([`data`]).
pub fn file(name: &str) -> PathBuf {
    data(name).unwrap_or_else(|| panic!("{name} is not in shared/data/pairings"))
}

/// A file's bytes, or `None` as for [`data`].
pub fn bytes_of(name: &str) -> Option<Vec<u8>> {
    data(name).map(|p| std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// Whether the outside reader can run here (see the module text).
pub fn available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import caissify_pairings"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("RELAY_REQUIRE_ALL").as_deref() == Ok("1") {
            panic!(
                "python3 with caissify-pairings is required (RELAY_REQUIRE_ALL=1): pip install caissify-pairings==0.5.0"
            );
        }
        println!(
            "skipping: python3 with caissify_pairings not found (pip install caissify-pairings==0.5.0)"
        );
    }
    ok
}

/// `trf_caissify.py WHAT FILE`: "read" (every player and cell as it reads them) or "pair"
/// (the next round as its FIDE Dutch engine pairs it).
pub fn referee(what: &str, file: &Path) -> Value {
    let script = root().join("relay/core/tests/referees/trf_caissify.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(what)
        .arg(file)
        .output()
        .expect("start python3");
    assert!(
        out.status.success(),
        "the referee failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the referee's JSON")
}

/// `t` as it stood when round `n` had just been paired: later rounds gone, round `n`
/// without results, no points column.
pub fn as_paired(t: &Trf, n: usize) -> Trf {
    let mut t = t.clone();
    for p in &mut t.players {
        p.cells.truncate(n);
        if let Some(Cell::Game { outcome, .. }) = p.cells.get_mut(n - 1) {
            *outcome = None;
        }
        p.points = None;
    }
    t
}
