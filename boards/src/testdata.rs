//! The shared real test data (`../shared/data` beside the checkout) and the one rule for its
//! absence, used by every test that reads it: a user's clone has no `../shared`, so such a test
//! prints a notice and passes; with `RELAY_REQUIRE_SHARED_DATA=1` (as CI sets) it fails instead.

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
