//! `relay emulate`: a hall of emulated DGT boards on pseudo-terminals, each playing real games
//! the way people do (lifting, sliding, capturing in either order, pressing the clock), so the
//! relay and its operators can be tried without hardware.

use anyhow::{Context, Result, bail};
use boards::protocol::{ClockSide, Orientation};
use clap::Args;
use emulator::board::{BoardIdentity, EmulatedBoard};
use emulator::clock::{ChessClock, TimeControl};
use emulator::line::{Line, VirtualClock};
use emulator::play::{Table, play};
use emulator::player::{
    ArbiterConfig, GameScore, NoiseConfig, PlannedIllegal, ScriptOptions, parse_plan, read_games,
    script,
};
use shakmaty::Position;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Public-domain classics (1620–1920) the demo plays when no PGN is given.
pub const CLASSICS: &str = include_str!("../../data/classics.pgn");

#[derive(Args, Debug, Clone)]
pub struct HallArgs {
    /// How many boards.
    #[arg(long, default_value_t = 8, env = "RELAY_DEMO_BOARDS")]
    pub boards: usize,
    /// Put all boards on one line, as a chain of serial boards in bus mode.
    #[arg(long)]
    pub bus: bool,
    /// Games to play (PGN); default: the bundled classics.
    #[arg(long)]
    pub pgn: Option<PathBuf>,
    /// How much faster than real time the games run.
    #[arg(long, default_value_t = 10.0, env = "RELAY_DEMO_SPEED")]
    pub speed: f64,
    /// Take each game up after this many plies: the board stands set up in that position,
    /// its clock showing the times recorded there, and the rest of the game is played (games
    /// that end by then are left out). For measuring what happens deep in real games, such as
    /// evaluating positions no engine has seen, without playing their openings first.
    #[arg(long, default_value_t = 0)]
    pub from_ply: usize,
    /// Play every game twice as often, once as played and once with the colours swapped and
    /// the board turned (every position new), so that a hall larger than the file plays
    /// positions no other board plays.
    #[arg(long)]
    pub mirror: bool,
    /// Time control for games whose PGN has none (PGN TimeControl form).
    #[arg(long, default_value = "5400+30")]
    pub time_control: String,
    /// Chance per move of each kind of human noise (slides, lifted pieces, takebacks).
    #[arg(long, default_value_t = 0.15)]
    pub noise: f64,
    /// Seed for the noise and timing, so a run can be repeated.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seconds (of game time) the boards stand set up before the first game starts, as
    /// before a round.
    #[arg(long, default_value_t = 0)]
    pub hold_secs: u64,
    /// The boards stand set up (after `--hold-secs`) until this file exists, then play: a
    /// benchmark starts the games once the relay reads every board and the spectators are
    /// there, however long that took. The clocks are started within one (virtual) second of
    /// it, each board at its own moment, as in a hall.
    #[arg(long)]
    pub start_file: Option<PathBuf>,
    /// Serial numbers of the boards, in order, comma separated (default 00001, 00002, ...).
    /// A serial given twice makes two boards that report the same number, as a repaired
    /// board or a clone can.
    #[arg(long, value_delimiter = ',')]
    pub serials: Vec<u16>,
    /// Append, for every game a board starts, one JSON line per move with the time its
    /// mover's clock shows after the press (`serial`, `game` = index in the PGN, `ply`,
    /// `clk_ms`), and before them one per illegal move played (`serial`, `game`, `illegal`:
    /// `ply`, `color`, `kind`, `uci` or null): the truth tests check the record against.
    #[arg(long)]
    pub press_log: Option<PathBuf>,
    /// Illegal moves in every game a board plays: plies (from 1; the move the illegal one is
    /// made in place of), each with a kind — `move` (default: a piece moved as it cannot),
    /// `capture`, `check` (own king left in check) or `press` (the clock pressed without a
    /// move), e.g. `12,31:press,40:check`. The mover does it and presses the clock; the
    /// arbiter stops the clock, puts the position back, gives the opponent
    /// `--illegal-extra-secs`, takes the false press's increment back and restarts the clock;
    /// then the game's real move is played. Plies beyond a game are ignored; a position with
    /// no displacement of the kind gets another kind (the press log says which).
    #[arg(long, value_parser = parse_illegal)]
    pub illegal: Option<IllegalPlan>,
    /// The time the arbiter gives the opponent after an illegal move (FIDE: 120 in standard
    /// play, 60 in rapid and blitz).
    #[arg(long, default_value_t = 120)]
    pub illegal_extra_secs: u64,
    /// Directory for stable links to the terminals (dgt-1, dgt-2, ...).
    #[arg(long)]
    pub link_dir: Option<PathBuf>,
    /// Boards whose own memory holds nothing (a log wiped, a board without the feature):
    /// what they did while nothing read them cannot be read back.
    #[arg(long)]
    pub forgetful: bool,
    /// Every this many seconds (wall time) the next line in turn goes silent for
    /// `--outage-secs` (a cable pulled, a Bluetooth link dropped): its board plays and logs
    /// on, the host hears nothing, then the line is back. For measuring recoveries.
    #[arg(long)]
    pub outage_every: Option<f64>,
    /// How long each outage of `--outage-every` lasts, in seconds (wall time).
    #[arg(long, default_value_t = 8.0)]
    pub outage_secs: f64,
}

/// The illegal moves of `--illegal`.
#[derive(Clone, Debug)]
pub struct IllegalPlan(pub Vec<PlannedIllegal>);

fn parse_illegal(s: &str) -> Result<IllegalPlan, String> {
    parse_plan(s).map(IllegalPlan)
}

#[derive(Args, Debug)]
pub struct EmulateArgs {
    #[command(flatten)]
    hall: HallArgs,
}

/// Running emulated lines and the threads playing on them.
pub struct Hall {
    pub lines: Vec<Arc<Line>>,
    /// For each line, the serial numbers of its boards.
    pub serials: Vec<Vec<String>>,
    players: Vec<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
}

impl Hall {
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for p in self.players.drain(..) {
            let _ = p.join();
        }
    }
}

pub fn load_games(args: &HallArgs) -> Result<Vec<GameScore>> {
    let text = match &args.pgn {
        Some(p) => {
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?
        }
        None => CLASSICS.to_string(),
    };
    let default_tc: TimeControl = args.time_control.parse()?;
    let mut games = read_games(&text)?;
    if games.is_empty() {
        bail!("no games in the PGN");
    }
    for g in &mut games {
        if g.time_control.is_none() {
            g.time_control = Some(g.guess_time_control().unwrap_or_else(|| default_tc.clone()));
        }
    }
    if args.from_ply > 0 {
        // The time control is guessed from the whole game first: the cut leaves too few
        // recorded clocks to guess from.
        let all = games.len();
        games.retain_mut(|g| match g.taken_up_after(args.from_ply) {
            Some(cut) => {
                *g = cut;
                true
            }
            None => false,
        });
        if games.is_empty() {
            bail!("none of the {all} games goes on past ply {}", args.from_ply);
        }
    }
    if args.mirror {
        let mirrors: Vec<GameScore> = games.iter().filter_map(GameScore::mirrored).collect();
        games.extend(mirrors);
    }
    Ok(games)
}

/// Starts the hall: lines, boards, and one player thread per board.
pub fn start_hall(args: &HallArgs, stop: Arc<AtomicBool>) -> Result<Hall> {
    if args.boards == 0 || args.boards > 2000 {
        bail!("--boards must be between 1 and 2000");
    }
    if !args.serials.is_empty() && args.serials.len() != args.boards {
        bail!(
            "--serials gives {} numbers for {} boards",
            args.serials.len(),
            args.boards
        );
    }
    let games = Arc::new(load_games(args)?);
    if let Some(d) = &args.link_dir {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let clock = VirtualClock::new(args.speed);
    let link = |i: usize| {
        args.link_dir
            .as_deref()
            .map(|d: &Path| d.join(format!("dgt-{i}")))
    };
    let make_board = |n: usize| {
        let tc = games[0]
            .time_control
            .clone()
            .unwrap_or(TimeControl::Unknown);
        let number = args.serials.get(n - 1).copied().unwrap_or(n as u16);
        let mut board = EmulatedBoard::new(
            BoardIdentity::from_number(number),
            Some(ChessClock::new(tc, ClockSide::Left)),
        );
        if args.forgetful {
            board.forget();
        }
        board
    };
    let mut lines = Vec::new();
    let mut serials = Vec::new();
    if args.bus {
        let boards: Vec<EmulatedBoard> = (1..=args.boards).map(make_board).collect();
        serials.push(boards.iter().map(|b| b.identity().serial.clone()).collect());
        lines.push(Arc::new(Line::open(
            boards,
            clock.clone(),
            link(1).as_deref(),
        )?));
    } else {
        for i in 1..=args.boards {
            let b = make_board(i);
            serials.push(vec![b.identity().serial.clone()]);
            lines.push(Arc::new(Line::open(
                vec![b],
                clock.clone(),
                link(i).as_deref(),
            )?));
        }
    }
    let press_log = match &args.press_log {
        Some(p) => Some(Arc::new(parking_lot::Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("cannot open {}", p.display()))?,
        ))),
        None => None,
    };
    let mut players = Vec::new();
    let mut board_no = 0usize;
    for line in &lines {
        for index in 0..line.board_count() {
            let (line, games, stop) = (line.clone(), games.clone(), stop.clone());
            let press_log = press_log.clone();
            let serial = line
                .act(index, |b| (b.identity().serial.clone(), Vec::new()))
                .unwrap_or_default();
            let seed = args.seed.wrapping_add(board_no as u64 * 7919);
            let hold_ms = args.hold_secs.saturating_mul(1000);
            let start_file = args.start_file.clone();
            let options = ScriptOptions {
                noise: NoiseConfig {
                    probability: args.noise,
                    handling_ms: (250, 700),
                },
                illegal: args.illegal.clone().map(|p| p.0).unwrap_or_default(),
                arbiter: ArbiterConfig {
                    extra_ms: args.illegal_extra_secs.saturating_mul(1000),
                },
            };
            let first = board_no;
            board_no += 1;
            players.push(std::thread::spawn(move || {
                let mut k = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    let game = &games[(first + k) % games.len()];
                    // Tables differ: some clocks stand with White's side right, some boards
                    // are turned around.
                    let table = Table {
                        white_clock: if (first + k).is_multiple_of(2) {
                            ClockSide::Left
                        } else {
                            ClockSide::Right
                        },
                        orientation: if (first + k) % 5 == 4 {
                            Orientation::Rotated
                        } else {
                            Orientation::Normal
                        },
                    };
                    let s = script(game, seed.wrapping_add(k as u64), &options);
                    if let Some(log) = &press_log {
                        let mut text = String::new();
                        for i in &s.illegal {
                            let line = serde_json::json!({
                                "serial": serial,
                                "game": (first + k) % games.len(),
                                "illegal": {
                                    "ply": i.ply,
                                    "color": i.color.fold_wb("white", "black"),
                                    "kind": i.kind.name(),
                                    "uci": i.uci(),
                                },
                            });
                            text.push_str(&format!("{line}\n"));
                        }
                        for (i, m) in s.moves.iter().enumerate() {
                            if let Some(clk) = m.clk_ms {
                                let line = serde_json::json!({
                                    "serial": serial,
                                    "game": (first + k) % games.len(),
                                    "ply": i + 1,
                                    "clk_ms": clk,
                                });
                                text.push_str(&format!("{line}\n"));
                            }
                        }
                        use std::io::Write;
                        let mut f = log.lock();
                        let _ = f.write_all(text.as_bytes());
                    }
                    if k == 0 && (hold_ms > 0 || start_file.is_some()) {
                        let c = line.clock();
                        line.act(index, |b| {
                            (
                                (),
                                b.set_position(game.start.board(), table.orientation, c.now_ms()),
                            )
                        });
                        c.sleep_until(c.now_ms() + hold_ms, &stop);
                        while let Some(f) = &start_file
                            && !f.exists()
                            && !stop.load(Ordering::Relaxed)
                        {
                            std::thread::sleep(std::time::Duration::from_millis(50));
                        }
                        // In a hall the clocks are started by hand, each at its own moment, and
                        // presses come at any millisecond. The scripts keep whole-second clock
                        // times, so boards started in the same instant would tick and press in
                        // step for the whole game: with 1000 boards, a burst of a thousand clock
                        // messages at the same point of every second, which no hall sends.
                        if start_file.is_some() {
                            c.sleep_until(c.now_ms() + seed % 1000, &stop);
                        }
                    }
                    if let Some(set_up) = table.clock_for(&s) {
                        line.act(index, |b| {
                            if let Some(c) = b.clock_mut() {
                                *c = set_up;
                            }
                            ((), Vec::new())
                        });
                    }
                    play(&line, index, game.start.board(), &s, table, None, &stop);
                    // A pause between games, as in a hall between rounds.
                    let c = line.clock();
                    c.sleep_until(c.now_ms() + 20_000, &stop);
                    k += 1;
                }
            }));
        }
    }
    if let Some(every) = args.outage_every.filter(|e| *e > 0.0) {
        let (lines, stop) = (lines.clone(), stop.clone());
        let length = Duration::from_secs_f64(args.outage_secs.max(0.0));
        players.push(std::thread::spawn(move || {
            let mut cut: Vec<(std::time::Instant, Arc<Line>)> = Vec::new();
            let mut next = std::time::Instant::now() + Duration::from_secs_f64(every);
            let mut turn = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let now = std::time::Instant::now();
                cut.retain(|(until, line)| {
                    let over = *until <= now;
                    if over {
                        line.mute(false);
                    }
                    !over
                });
                if now >= next && !lines.is_empty() {
                    let line = lines[turn % lines.len()].clone();
                    line.mute(true);
                    cut.push((now + length, line));
                    turn += 1;
                    next = now + Duration::from_secs_f64(every);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            for (_, line) in cut {
                line.mute(false);
            }
        }));
    }
    Ok(Hall {
        lines,
        serials,
        players,
        stop,
    })
}

pub fn run(args: EmulateArgs) -> Result<()> {
    let stop = super::stop_flag()?;
    let hall = start_hall(&args.hall, stop.clone())?;
    for (line, serials) in hall.lines.iter().zip(&hall.serials) {
        let mode = if serials.len() > 1 { " (bus)" } else { "" };
        println!(
            "{}  boards {}{mode}",
            line.path().display(),
            serials.join(", ")
        );
    }
    println!(
        "emulating {} board(s) at {}x speed; Ctrl-C to stop",
        args.hall.boards, args.hall.speed
    );
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    hall.stop();
    Ok(())
}

impl std::fmt::Debug for Hall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hall").finish_non_exhaustive()
    }
}
