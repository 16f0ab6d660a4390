//! `relay`: the command-line entry point. Each subcommand lives in `cli/`.

use clap::{Parser, Subcommand};
use relay::cli;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "relay",
    version,
    about = "Live-broadcast relay for DGT electronic chess boards"
)]
struct Args {
    /// Log as JSON lines instead of human-readable text (logs go to stderr).
    #[arg(long, global = true, env = "RELAY_LOG_JSON")]
    log_json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List serial ports, marking those that look like DGT boards; --probe asks each who it is.
    Ports(cli::ports::PortsArgs),
    /// Print every message a board sends, one JSON object per line, until interrupted.
    Sniff(cli::sniff::SniffArgs),
    /// The games a board kept in its own memory (played with no computer attached), as PGN.
    BoardMemory(cli::board_memory::BoardMemoryArgs),
    /// Emulated DGT boards on pseudo-terminals, playing real games like humans do.
    Emulate(cli::emulate::EmulateArgs),
    /// Serve boards, games and pages: read the boards, record, store, broadcast.
    Serve(cli::serve::ServeArgs),
    /// The service with emulated boards playing real games: no hardware, no configuration.
    Demo(cli::demo::DemoArgs),
    /// Measure the live service: board-to-WebSocket delay and PGN polling rate.
    Bench(cli::bench::BenchArgs),
    /// Turn a recorded board byte stream into PGN, with the code the live service uses.
    Replay(cli::replay::ReplayArgs),
    /// Convert games between PGN, the archival order, EPD, PGC, CBF (+CBI) and the one-byte encoding.
    Convert(cli::convert::ConvertArgs),
    /// Write a tournament, round or game from the store as a file (any convert format).
    Export(cli::export::ExportArgs),
    /// Read games (PGN, PGC, CBF, one-byte) into the store: an earlier round, a pairing list.
    Import(cli::import::ImportArgs),
    /// Evaluate positions for a relay with a UCI engine (Stockfish), from any machine.
    EvalWorker(cli::eval_worker::EvalWorkerArgs),
    /// Lichess: make a tournament's broadcast (tour and rounds) for relay serve to push to.
    Lichess(cli::lichess::LichessArgs),
}

/// Errors end the program with one line an operator can act on ("relay: database …: cannot
/// open the database: role \"x\" does not exist"), with no backtrace even where
/// `RUST_BACKTRACE` is set.
fn main() -> ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_env("RELAY_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if args.log_json {
        logs.json().init();
    } else {
        logs.init();
    }
    let done = match args.command {
        Command::Ports(a) => cli::ports::run(a),
        Command::Sniff(a) => cli::sniff::run(a),
        Command::BoardMemory(a) => cli::board_memory::run(a),
        Command::Emulate(a) => cli::emulate::run(a),
        Command::Serve(a) => cli::serve::main(a),
        Command::Demo(a) => cli::demo::run(a),
        Command::Replay(a) => cli::replay::run(a),
        Command::Bench(a) => cli::bench::run(a),
        Command::Convert(a) => cli::convert::main(a),
        Command::Export(a) => cli::export::main(a),
        Command::Import(a) => cli::import::main(a),
        Command::EvalWorker(a) => cli::eval_worker::run(a),
        Command::Lichess(a) => cli::lichess::main(a),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        // Convert, import and export wrote what they could; the games left out were named.
        Err(e) if e.downcast_ref::<cli::convert::GamesSkipped>().is_some() => {
            eprintln!("relay: {e}");
            ExitCode::from(cli::convert::SKIPPED_STATUS)
        }
        Err(e) => {
            eprintln!("relay: {e:#}");
            ExitCode::FAILURE
        }
    }
}
