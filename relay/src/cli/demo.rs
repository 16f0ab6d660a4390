//! `relay demo`: the service with a hall of emulated boards, no hardware and no
//! configuration. The boards sit on pseudo-terminals and are read through the real serial
//! path, recorded, stored (SQLite by default) and served with the pages, exactly as
//! `relay serve` does with real boards.

use super::emulate::{HallArgs, load_games, start_hall};
use crate::serve::options::EvalSettings;
use crate::serve::{self, Settings};
use anyhow::Result;
use boards::protocol::LineMode;
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

#[derive(Args, Debug)]
pub struct DemoArgs {
    #[command(flatten)]
    hall: HallArgs,
    /// Database URL (default: a new SQLite file in the temporary directory, so each demo
    /// starts afresh and never mixes with real data).
    #[arg(long, env = "RELAY_DB")]
    db: Option<String>,
    /// Address to serve on (port 0 picks a free one).
    #[arg(long, env = "RELAY_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Admin token for the arbiter console (default: a new one, printed at start).
    #[arg(long, env = "RELAY_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// Broadcast delay in seconds.
    #[arg(long, env = "RELAY_DELAY")]
    delay: Option<u32>,
    /// Serve the pages from this directory instead of the built-in copy.
    #[arg(long, env = "RELAY_WEB_DIR")]
    web_dir: Option<PathBuf>,
    /// Threads evaluating the positions with the UCI engine (default: 1 when Stockfish is
    /// installed, else none; 0 switches evaluation off).
    #[arg(long, env = "RELAY_EVAL_WORKERS")]
    eval_workers: Option<usize>,
    /// How long the engine thinks about each position, in ms.
    #[arg(long, env = "RELAY_EVAL_MOVETIME_MS", default_value_t = 300)]
    eval_movetime_ms: u64,
    /// The UCI engine (default: `stockfish` on the PATH, else /usr/games/stockfish).
    #[arg(long, env = "RELAY_ENGINE")]
    engine: Option<PathBuf>,
    /// Take evaluation workers from elsewhere (`relay eval-worker --token T`).
    #[arg(long, env = "RELAY_EVAL_TOKEN", hide_env_values = true)]
    eval_token: Option<String>,
}

fn fresh_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    // Two independently seeded hashers (std seeds them from the OS) give 128 random bits.
    let a = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let b = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("{a:016x}{b:016x}")
}

/// Evaluation as the demo's options ask: one local worker when an engine is there and none
/// was asked for; an engine asked for and missing is an error.
fn eval_settings(args: &DemoArgs) -> Result<Option<EvalSettings>> {
    let engine = args
        .engine
        .clone()
        .unwrap_or_else(crate::serve::analysis::engine::default_engine);
    let workers = match args.eval_workers {
        Some(n) if n > 0 && !engine.is_file() => anyhow::bail!(
            "--eval-workers needs a UCI engine: {} is not there (apt-get install stockfish, or --engine PATH)",
            engine.display()
        ),
        Some(n) => n,
        None if engine.is_file() => 1,
        None => {
            println!(
                "relay demo: no engine at {} (apt-get install stockfish): positions are not evaluated",
                engine.display()
            );
            0
        }
    };
    if !(50..=60_000).contains(&args.eval_movetime_ms) {
        anyhow::bail!("--eval-movetime-ms must be between 50 and 60000");
    }
    Ok(
        (workers > 0 || args.eval_token.is_some()).then(|| EvalSettings {
            local_workers: workers,
            token: args.eval_token.clone(),
            movetime_ms: args.eval_movetime_ms,
            engine,
        }),
    )
}

/// A tournament whose first round pairs the players of the games the boards will play, each
/// e-board on its board number (the emulator's board i plays game i of the list first).
fn set_up_round(db: &str, hall: &HallArgs) -> Result<()> {
    let games = load_games(hall)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let store = relay_store::Store::open(db).await?;
        if !store.tournaments().await?.is_empty() {
            return Ok(());
        }
        let date = serve::today();
        let t = store
            .create_tournament(&relay_store::NewTournament {
                name: "relay demo: classics".into(),
                site: Some("emulated boards".into()),
                start_date: Some(date.clone()),
                time_control: Some(hall.time_control.clone()),
                ..Default::default()
            })
            .await?;
        let round = store.create_round(t, "1", Some(&date)).await?;
        for i in 1..=hall.boards {
            let g = &games[(i - 1) % games.len()];
            let tag = |name: &str| {
                g.headers
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .filter(|v| v != "?" && !v.is_empty())
            };
            let player = |side: &str| relay_store::Player {
                name: tag(side),
                rating: tag(&format!("{side}Elo")).and_then(|v| v.parse().ok()),
                ..Default::default()
            };
            let pairing = relay_store::Pairing {
                board_no: i as u32,
                white: player("White"),
                black: player("Black"),
            };
            store.set_pairing(round, &pairing).await?;
            let serial = format!("{:05}", i % 16384);
            store.assign(round, i as u32, &serial, None).await?;
        }
        anyhow::Ok(())
    })
}

pub fn run(args: DemoArgs) -> Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut hall_args = args.hall.clone();
    if hall_args.hold_secs == 0 {
        // The boards stand set up for two real seconds, so the service sees every game begin.
        hall_args.hold_secs = (hall_args.speed * 2.0).ceil() as u64;
    }
    let token = args.admin_token.clone().unwrap_or_else(fresh_token);
    let db = args.db.clone().unwrap_or_else(|| {
        let file = std::env::temp_dir().join(format!("relay-demo-{}.db", std::process::id()));
        format!("sqlite://{}", file.display())
    });
    set_up_round(&db, &hall_args)?;
    let hall = start_hall(&hall_args, stop.clone())?;
    let ports: Vec<String> = hall
        .lines
        .iter()
        .map(|l| l.path().display().to_string())
        .collect();
    let settings = Settings {
        ports,
        mode: if args.hall.bus {
            LineMode::Bus
        } else {
            LineMode::Single
        },
        db: db.clone(),
        listen: args.listen,
        admin_token: Some(token.clone()),
        delay: args.delay,
        settle_ms: 300,
        web_dir: args.web_dir.clone(),
        photos_dir: None,
        client_silence: std::time::Duration::from_secs(60),
        no_boards: false,
        push_to: None,
        accept_push_token: None,
        event_key: None,
        first_board: 1,
        lichess: None,
        eval: eval_settings(&args)?,
    };
    let boards = args.hall.boards;
    let speed = args.hall.speed;
    let result = super::serve::run(settings, |addr| {
        println!(
            "relay demo: {boards} emulated board(s) at {speed}x speed, read through the serial path"
        );
        println!("  spectators:  http://{addr}/");
        println!("  arbiter:     http://{addr}/console.html   (admin token: {token})");
        println!("  round PGN:   http://{addr}/api/rounds/1/pgn");
        println!("  database:    {db}");
        println!("Ctrl-C to stop.");
    });
    hall.stop();
    result
}
