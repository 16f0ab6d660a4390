//! The real capture of a game on a DGT board with a DGT clock replays to the moves that game
//! really had, with the clock shown after each move.

mod support;

use relay_core::recorder::Outcome;
use support::{johan_messages, replay_messages, shared_text};

#[test]
fn johan_capture_replays_to_the_real_game() {
    let (Some(messages), Some(pgn)) = (johan_messages(), shared_text("dgt-captures/johan.pgn"))
    else {
        return;
    };
    let expected: Vec<String> = pgn
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && !t.contains('-') || t.starts_with("O-O"))
        .map(str::to_string)
        .collect();
    let (games, outcomes) = replay_messages(messages.clone());
    assert_eq!(games.len(), 1, "one game");
    let game = &games[0];
    let got: Vec<String> = game.moves.iter().map(|m| m.san.to_string()).collect();
    let got_plain: Vec<String> = got
        .iter()
        .map(|s| s.trim_end_matches(['+', '#']).to_string())
        .collect();
    assert_eq!(got_plain, expected, "moves");
    // Every move has a clock, equal to what the mover's display showed right after the lever
    // press. The presses are read off the raw clock bytes here, independently of the recorder:
    // status bit 0 = running, bit 1 = right side's lever up (the right side runs).
    let mut shown = Vec::new();
    let mut prev: Option<(bool, [u32; 2])> = None;
    for m in &messages {
        if m[0] != 0x8D {
            continue;
        }
        let secs = |h: u8, mm: u8, ss: u8| {
            u32::from(h & 0x0F) * 3600
                + u32::from(mm >> 4) * 600
                + u32::from(mm & 0x0F) * 60
                + u32::from(ss >> 4) * 10
                + u32::from(ss & 0x0F)
        };
        let (right, left) = (secs(m[3], m[4], m[5]), secs(m[6], m[7], m[8]));
        let running = m[9] & 1 != 0;
        let right_runs = m[9] & 2 != 0;
        if let Some((was_right, _)) = prev
            && running
            && was_right != right_runs
        {
            // The side that ran before pressed: its time now.
            shown.push(if was_right { right } else { left });
        }
        if running {
            prev = Some((right_runs, [left, right]));
        }
    }
    let clks: Vec<u32> = game
        .moves
        .iter()
        .map(|m| m.clk.map_or(u32::MAX, |c| c.secs() as u32))
        .collect();
    assert_eq!(clks, shown, "clock after each move");
    let proposal = outcomes.iter().find_map(|o| match o {
        Outcome::ResultProposed { result, .. } => Some(result.to_string()),
        _ => None,
    });
    assert_eq!(
        proposal.as_deref(),
        Some("1-0"),
        "the kings gesture at the end proposes 1-0"
    );
    let clocks: Vec<String> = game
        .moves
        .iter()
        .map(|m| m.clk.map(|c| c.to_string()).unwrap_or_default())
        .collect();
    println!(
        "{}",
        got.iter()
            .zip(&clocks)
            .map(|(s, c)| format!("{s} {{{c}}}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
}
