//! What `relay bench` is asked for: its command line, and the named cases (boards, spectators,
//! pace, length), each of which the command line may override.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Case to run; repeat for several. smoke: 20 boards at 10x, 200 spectators, 10 s.
    /// real100 / real1000 / real2000: 100 / 1000 / 2000 boards at real pace, 10 spectators,
    /// 60 s. crowd: 200
    /// boards at 10x, 5000 spectators ramping at 2000/s, 40 s. crowd-real: 200 boards at real
    /// pace, 19,000 spectators (as many as one process holds under a 20,000 open-file limit)
    /// ramping at 2000/s, 40 s. delayed: 50 boards at 10x with a 30 s broadcast delay, 1000
    /// spectators, 60 s. cluster10k / cluster40k: several relays on one PostgreSQL
    /// (`--postgres`): one reading 200 boards at real pace, three `--no-boards` relays
    /// serving 10,000 / 40,000 spectators between them (source addresses 127.0.0.2-9), 40 s.
    /// push: a venue relay (50 boards at 10x, SQLite) pushing to a cloud relay (`--postgres`)
    /// with 1000 spectators, 30 s: venue → cloud spectator per move. push-backlog: 100,000
    /// changes (`--clients` sets the number; games of 100 moves) waiting at the venue,
    /// drained to a cloud relay. convert: `relay convert` on 100,000 games (`--boards`) of
    /// the shared PGN repeated, each format each way, python-chess beside it, sizes per game.
    /// eval: 200 boards at real pace, 1000 spectators, 60 s, run without evaluation and then
    /// with one local worker (Stockfish, `--eval-movetime-ms`; `--eval-workers` for other
    /// runs), and what evaluation added.
    /// eval-workers: positions waiting, evaluated by one `relay eval-worker` process, then two
    /// (`--seconds` each, default 20). recovery: 100 boards at real pace, 10 spectators, 60 s,
    /// run as they are and then with a board's line cut for 8 s every 2 s, each in turn
    /// (each comes back with its memory read and the moves of the gap recovered): the
    /// board → spectator figures of every other board's live moves during the recoveries.
    /// standings: a 700-player (`--boards`), 11-round Swiss's standings recomputed after a
    /// result, in the core and through `relay serve` (result set → counted in the public
    /// standings; `--seconds` results, default 10).
    #[arg(long = "case", value_enum)]
    pub(super) cases: Vec<CaseName>,
    /// Emulated boards (overrides the case's).
    #[arg(long)]
    pub(super) boards: Option<usize>,
    /// WebSocket spectators following the round (overrides the case's).
    #[arg(long)]
    pub(super) clients: Option<usize>,
    /// Seconds measured once every spectator has connected (overrides the case's).
    #[arg(long)]
    pub(super) seconds: Option<u64>,
    /// How much faster than real time the games run (overrides the case's).
    #[arg(long)]
    pub(super) speed: Option<f64>,
    /// Spectator connections started per second (overrides the case's).
    #[arg(long)]
    pub(super) ramp_per_sec: Option<f64>,
    /// Broadcast delay in seconds given to the service (overrides the case's).
    #[arg(long)]
    pub(super) delay: Option<u32>,
    /// Chance per move of each kind of human noise (slides, lifted pieces, takebacks).
    #[arg(long, default_value_t = 0.15)]
    pub(super) noise: f64,
    /// The service's settle time in ms (`relay serve --settle-ms`).
    #[arg(long, default_value_t = 300)]
    pub(super) settle_ms: u64,
    /// Spectators whose every frame is recorded and timed (spread evenly over all).
    #[arg(long, default_value_t = 50)]
    pub(super) sample: usize,
    /// wsload worker processes (default: one per 15,000 spectators; each has its own fd
    /// limit).
    #[arg(long)]
    pub(super) wsload_procs: Option<usize>,
    /// Skip the echo-server baseline.
    #[arg(long)]
    pub(super) no_baseline: bool,
    /// Games the emulated boards play (PGN; default: the bundled classics, which many boards
    /// share). A file of real games with clocks makes real pace the games' own.
    #[arg(long)]
    pub(super) pgn: Option<PathBuf>,
    /// The boards take each game up after this many plies (`relay emulate --from-ply`): set
    /// up in that position with the recorded clocks, e.g. 40 for real games from their move
    /// 20 on. Such a board's game is joined with its first move, so the bench starts the
    /// clocks as soon as the service reads every board, before the spectators connect.
    #[arg(long, default_value_t = 0)]
    pub(super) from_ply: usize,
    /// The boards also play every game with the colours swapped (`relay emulate --mirror`):
    /// twice as many games with no position in common.
    #[arg(long)]
    pub(super) mirror: bool,
    /// The eval case's runs: the service's local evaluation workers in each (0: a run
    /// without evaluation, which the others are compared with), e.g. `1,2` for the workers
    /// a hall needs.
    #[arg(long, value_delimiter = ',', default_values_t = [0, 1])]
    pub(super) eval_workers: Vec<usize>,
    /// How long the engine thinks about a position in the eval case, in ms.
    #[arg(long, default_value_t = 300)]
    pub(super) eval_movetime_ms: u64,
    /// Seconds each round-PGN polling measurement runs, after the window (0: none).
    #[arg(long, default_value_t = 0)]
    pub(super) pgn_seconds: u64,
    /// Concurrent connections polling the round PGN.
    #[arg(long, default_value_t = 16)]
    pub(super) pgn_connections: usize,
    /// PostgreSQL server for the cluster cases (a database `relay_bench_PID` is made on it
    /// and dropped afterwards), e.g. postgres://postgres@127.0.0.1:5432/test.
    #[arg(long, env = "RELAY_BENCH_POSTGRES")]
    pub(super) postgres: Option<String>,
    /// Runs the (live) case once per number of boards given (`250,500,1000,2000`) and prints
    /// how CPU and latency grow; with `--plot`, draws it.
    #[arg(long, value_delimiter = ',', conflicts_with = "sweep_clients")]
    pub(super) sweep_boards: Vec<usize>,
    /// Runs the (live) case once per number of spectators given (`1000,5000,10000,19000`)
    /// and prints how CPU, memory and the fan-out against the same-bytes baseline grow; with
    /// `--plot`, draws it.
    #[arg(long, value_delimiter = ',')]
    pub(super) sweep_clients: Vec<usize>,
    /// Where a sweep's charts go, as an SVG file (one chart per figure).
    #[arg(long, value_name = "FILE.svg")]
    pub(super) plot: Option<PathBuf>,
    /// Directory with the `wsload` and `echo-server` binaries. Default: the release build in
    /// `<target>/wsload`, built from `../shared/tools/wsload` when missing.
    #[arg(long, env = "RELAY_WSLOAD_DIR")]
    pub(super) wsload_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CaseName {
    Smoke,
    Real100,
    Real1000,
    Real2000,
    Crowd,
    CrowdReal,
    Delayed,
    Cluster10k,
    Cluster40k,
    Push,
    PushBacklog,
    Convert,
    Eval,
    EvalWorkers,
    Recovery,
    Standings,
}

/// One configuration measured.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: &'static str,
    pub boards: usize,
    pub speed: f64,
    pub clients: usize,
    pub ramp_per_sec: f64,
    pub seconds: u64,
    pub delay: Option<u32>,
    /// Relays started with `--no-boards` on the same PostgreSQL, serving the spectators
    /// (0: the board-reading relay on SQLite serves them itself).
    pub web: usize,
    /// Evaluation workers on the service's threads (0: no evaluation).
    pub eval_workers: usize,
    /// Cut a board's line every this many seconds, each in turn, for 8 s (its memory is
    /// read when it comes back): `relay emulate --outage-every`.
    pub outage_every: Option<f64>,
}

impl CaseName {
    pub fn case(self) -> Case {
        let c = |name, boards, speed, clients, seconds| Case {
            name,
            boards,
            speed,
            clients,
            ramp_per_sec: 2000.0,
            seconds,
            delay: None,
            web: 0,
            eval_workers: 0,
            outage_every: None,
        };
        match self {
            CaseName::Smoke => c("smoke", 20, 10.0, 200, 10),
            CaseName::Real100 => c("real100", 100, 1.0, 10, 60),
            CaseName::Real1000 => c("real1000", 1000, 1.0, 10, 60),
            CaseName::Real2000 => c("real2000", 2000, 1.0, 10, 60),
            CaseName::Crowd => c("crowd", 200, 10.0, 5000, 40),
            CaseName::CrowdReal => c("crowd-real", 200, 1.0, 19_000, 40),
            CaseName::Delayed => Case {
                delay: Some(30),
                ..c("delayed", 50, 10.0, 1000, 60)
            },
            CaseName::Cluster10k => Case {
                web: 3,
                ..c("cluster10k", 200, 1.0, 10_000, 40)
            },
            CaseName::Cluster40k => Case {
                web: 3,
                ..c("cluster40k", 200, 1.0, 40_000, 40)
            },
            // Run once for each number of workers `--eval-workers` lists, 0 without evaluation
            // (`evals::runs`).
            CaseName::Eval => c("eval", 200, 1.0, 1000, 60),
            // Run as a pair, boards read without a gap and with outages (`recovery_pair`).
            CaseName::Recovery => c("recovery", 100, 1.0, 10, 60),
            // Run by `push`, `convert` and `evals` (never asked for here).
            CaseName::Push
            | CaseName::PushBacklog
            | CaseName::Convert
            | CaseName::EvalWorkers
            | CaseName::Standings => c("push", 50, 10.0, 1000, 30),
        }
    }
}

/// The round the service makes for the boards in a fresh database, which spectators follow.
pub const ROUND: i64 = 1;

/// The `recovery` pair: the same hall with no outage, then with a line cut every 2 s.
pub fn recovery_pair(base: &Case) -> (Case, Case) {
    let steady = Case {
        name: "recovery-off",
        outage_every: None,
        ..base.clone()
    };
    let cut = Case {
        name: "recovery",
        outage_every: Some(2.0),
        ..base.clone()
    };
    (steady, cut)
}
