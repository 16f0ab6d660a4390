//! `relay board-memory PORT`: the games a board kept in its own memory, as PGN, with the
//! clock it logged at each press. For a club evening or a venue without a computer at every
//! table: play on the boards, read them afterwards (as DGT's own software once did).

use anyhow::{Context, Result, bail};
use clap::Args;
use relay_core::board_memory::games;
use relay_core::pgn::{WriteOptions, write_games};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct BoardMemoryArgs {
    /// The board's serial port (a single board: USB, Bluetooth or one serial board).
    port: String,
    /// Write the PGN here instead of to standard output.
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Seconds to wait for the board to start answering.
    #[arg(long, default_value_t = 15)]
    wait: u64,
}

pub fn run(args: BoardMemoryArgs) -> Result<()> {
    let (serial, records) =
        boards::transport::read_board_memory(&args.port, Duration::from_secs(args.wait))
            .with_context(|| format!("reading the memory of the board on {}", args.port))?;
    let serial = serial.unwrap_or_else(|| "?".into());
    let logged = games(&records);
    if logged.is_empty() {
        bail!(
            "the memory of board {serial} holds no game from the start position ({} records)",
            records.len()
        );
    }
    let mut out = Vec::new();
    for (i, g) in logged.iter().enumerate() {
        let mut game = g.to_game();
        if game.moves.is_empty() {
            continue;
        }
        game.tags.set("Event", "From the board's memory");
        game.tags.set("Site", format!("e-board {serial}"));
        game.tags.set("Round", (i + 1).to_string());
        let without: usize = game.moves.iter().filter(|m| m.clk.is_none()).count();
        if g.clocked && without > 0 {
            game.intro = Some(format!(
                "The board logged no clock for {without} of its {} moves (presses too fast to log).",
                game.moves.len()
            ));
        }
        out.push(game);
    }
    let text = write_games(&out, &WriteOptions::default());
    eprintln!(
        "relay: board {serial}: {} games in its memory, {} with moves",
        logged.len(),
        out.len()
    );
    match &args.out {
        Some(p) => std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?,
        None => print!("{text}"),
    }
    Ok(())
}
