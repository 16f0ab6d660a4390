//! `relay replay` as a user runs it: a real capture to PGN, and clear errors for bad input.

use super::temp_dir;
use std::process::Command;

fn relay(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(args)
        .output()
        .expect("run relay");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn a_real_capture_becomes_pgn_with_clocks() {
    let Some(capture) = boards::testdata::shared_data("dgt-captures/johan.inbytes") else {
        return;
    };
    let (ok, pgn, err) = relay(&["replay", &capture.display().to_string()]);
    assert!(ok, "replay failed: {err}");
    assert!(pgn.starts_with("[Event \"?\"]\n"), "{pgn}");
    assert!(pgn.contains("[Result \"1-0\"]"));
    assert!(
        pgn.contains("1. e4 {[%clk 0:05:09] [%emt 0:00:01]}"),
        "{pgn}"
    );
    assert!(pgn.contains("22. Qxc6 {[%clk 0:00:16]"), "{pgn}");
    assert!(
        pgn.lines().all(|l| l.len() < 80),
        "export lines stay under 80 characters"
    );
}

#[test]
fn the_raw_log_format_replays_too() {
    let dir = temp_dir("replay-log");
    let log = dir.join("board.log");
    // A start position, e2-e4 lifted and placed, then quiet.
    let mut text = String::from("0 86 00 43");
    for b in [8u8, 9, 10, 12, 11, 10, 9, 8]
        .iter()
        .chain([7u8; 8].iter())
        .chain([0u8; 32].iter())
        .chain([1u8; 8].iter())
        .chain([2u8, 3, 4, 6, 5, 4, 3, 2].iter())
    {
        text.push_str(&format!(" {b:02x}"));
    }
    text.push_str(
        "\n1000 8e 00 05 34 00\n1300 8e 00 05 24 01\n2500 8e 00 05 0c 00\n2800 8e 00 05 1c 07\n",
    );
    std::fs::write(&log, text).expect("write log");
    let (ok, pgn, err) = relay(&["replay", &log.display().to_string()]);
    assert!(ok, "replay failed: {err}");
    assert!(pgn.contains("1. e4 e5 *"), "{pgn}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_gets_a_clear_error() {
    let dir = temp_dir("replay-bad");
    let (ok, _, err) = relay(&["replay", &dir.join("missing.log").display().to_string()]);
    assert!(!ok && err.contains("cannot read"), "{err}");
    let junk = dir.join("junk.bin");
    std::fs::write(&junk, [0x01u8, 0x02, 0x03, 0x7F, 0x00]).expect("write");
    let (ok, _, err) = relay(&["replay", &junk.display().to_string()]);
    assert!(!ok && err.contains("no DGT board messages"), "{err}");
    let bad_log = dir.join("bad.log");
    std::fs::write(&bad_log, "100 8e 00 05\n200 zz\n").expect("write");
    let (ok, _, err) = relay(&["replay", &bad_log.display().to_string()]);
    assert!(!ok && err.contains("line 2"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
