//! `relay sniff` against `relay emulate`, as an operator runs them in two terminals.

use super::{Proc, collect, temp_dir, wait_for_path};
use std::path::{Path, PathBuf};

fn count(lines: &[serde_json::Value], ty: &str) -> usize {
    lines.iter().filter(|v| v["type"] == ty).count()
}

/// `relay emulate ARGS` with its links in `dir`, once the first link is there: the process
/// (stopped when dropped) and that first link.
fn emulate(dir: &Path, args: &[&str]) -> (Proc, PathBuf) {
    let link_dir = dir.display().to_string();
    let mut all = vec!["emulate"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--link-dir", &link_dir]);
    let emulator = Proc::start(&all);
    let link = dir.join("dgt-1");
    wait_for_path(&link);
    (emulator, link)
}

#[test]
fn sniff_a_single_emulated_board() {
    let dir = temp_dir("sniff-single");
    let (_emulator, link) = emulate(&dir, &["--boards", "1", "--speed", "30", "--noise", "0"]);
    let mut sniff = Proc::start(&["sniff", &link.display().to_string()]);
    let rx = sniff.lines();
    let lines = collect(&rx, 30, |l| {
        count(l, "field") >= 6 && count(l, "clock") >= 3
    });
    assert_eq!(lines[0]["type"], "opened");
    let id = lines
        .iter()
        .find(|v| v["type"] == "identified")
        .expect("identified line");
    assert_eq!(id["serial"], "00001");
    let version = lines
        .iter()
        .find(|v| v["type"] == "version")
        .expect("version line");
    assert_eq!(version["version"], "1.2");
    let board = lines
        .iter()
        .find(|v| v["type"] == "board")
        .expect("board line");
    assert_eq!(board["board"], "00001");
    assert!(
        board["fen"]
            .as_str()
            .is_some_and(|f| f.split('/').count() == 8)
    );
    let field = lines
        .iter()
        .find(|v| v["type"] == "field")
        .expect("field line");
    assert!(field["square"].as_str().is_some_and(|s| s.len() == 2));
    let clock = lines
        .iter()
        .rev()
        .find(|v| v["type"] == "clock")
        .expect("clock line");
    assert!(clock["left"]["seconds"].as_u64().is_some_and(|s| s > 0));
    assert!(clock["running"] == "left" || clock["running"] == "right");
    assert!(sniff.interrupt(), "sniff stops on Ctrl-C");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sniff_a_bus_of_three_emulated_boards() {
    let dir = temp_dir("sniff-bus");
    let (_emulator, link) = emulate(&dir, &["--boards", "3", "--bus", "--speed", "30"]);
    let mut sniff = Proc::start(&["sniff", "--bus", &link.display().to_string()]);
    let rx = sniff.lines();
    let lines = collect(&rx, 40, |l| {
        let boards_with_fields: std::collections::HashSet<String> = l
            .iter()
            .filter(|v| v["type"] == "field")
            .filter_map(|v| v["board"].as_str().map(str::to_string))
            .collect();
        count(l, "identified") >= 3 && boards_with_fields.len() == 3
    });
    let mut serials: Vec<&str> = lines
        .iter()
        .filter(|v| v["type"] == "identified")
        .filter_map(|v| v["serial"].as_str())
        .collect();
    serials.sort();
    assert_eq!(serials, vec!["00001", "00002", "00003"]);
    assert!(sniff.interrupt(), "sniff stops on Ctrl-C");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Emulated boards on `boards` links (one line, or a bus with `--bus`), then `relay ports
/// --probe` over them with `probe_args`: its standard output.
fn probe_emulated(name: &str, emulate_args: &[&str], probe_args: &[&str]) -> String {
    let dir = temp_dir(name);
    let link_dir = dir.display().to_string();
    let mut args = vec!["--speed", "1"];
    args.extend_from_slice(emulate_args);
    let (_emulator, _) = emulate(&dir, &args);
    let scan = format!("{link_dir}/dgt-*");
    let mut args = vec!["ports", "--probe", "--scan", &scan];
    args.extend_from_slice(probe_args);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(&args)
        .output()
        .expect("relay ports");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "relay ports failed: {text}");
    assert!(
        text.contains(&format!("{link_dir}/dgt-1")),
        "lists the port: {text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    text
}

#[test]
fn ports_probe_finds_emulated_boards() {
    let text = probe_emulated("ports", &["--boards", "1"], &[]);
    assert!(
        text.contains("e-board answered (single board): serial 00001, version 1.2"),
        "probe answer: {text}"
    );
}

#[test]
fn ports_probe_as_a_bus_finds_every_board_of_a_chain() {
    let text = probe_emulated("ports-bus", &["--boards", "3", "--bus"], &["--bus"]);
    assert!(
        text.contains("e-board answered (bus): serial 00001, 00002, 00003"),
        "probe answer: {text}"
    );
}
