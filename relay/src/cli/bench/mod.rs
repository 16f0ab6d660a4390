//! `relay bench`: the live service measured the way spectators meet it, in three processes on
//! this machine. `relay emulate` plays N boards on pseudo-terminals; `relay serve` reads them
//! (SQLite in a temporary directory) as a process of its own, whose CPU time and memory are
//! read from /proc; `wsload` connects M WebSocket spectators to the round and records what
//! they receive. Right after, `echo-server` (a bare broadcast loop) with the same clients
//! gives the machine's own fan-out spread to compare with.
//!
//! The boards stand set up while the spectators connect, then play; the measured window starts
//! one second after the last connection attempt. The delay from the board includes the settle
//! time (a board must be still for `settle_ms` before it is read as a position), printed also
//! without it. Boards, spectators and service share the machine's cores, so the figures are a
//! floor for a server with a machine of its own.
//!
//! Where things are: the command line and the named cases in `cases`; the live cases in
//! `live`, which print through `report` and compare with the `baseline`; wsload in `load`;
//! starting and watching processes in `procs`, reading their results back in `figures`; the
//! other cases in `push`, `convert`, `evals` and `standings`; a sweep's charts in `plot`.

mod baseline;
mod cases;
mod convert;
mod evals;
mod figures;
mod live;
mod load;
mod pgn;
mod plot;
mod postgres;
mod procs;
mod push;
mod report;
mod standings;

pub use cases::BenchArgs;

use anyhow::{Context, Result, bail};
use cases::CaseName;

pub fn run(args: BenchArgs) -> Result<()> {
    let stop = super::stop_flag()?;
    let names = if args.cases.is_empty() {
        vec![CaseName::Smoke]
    } else {
        args.cases.clone()
    };
    let tools = procs::tools(args.wsload_dir.as_deref())?;
    let tck = procs::ticks_per_sec();
    for name in names {
        match name {
            CaseName::Push => {
                push::latency(&args, &tools, &stop).context("bench case push")?;
                continue;
            }
            CaseName::PushBacklog => {
                push::backlog(&args, &stop).context("bench case push-backlog")?;
                continue;
            }
            CaseName::Convert => {
                convert::run(&args).context("bench case convert")?;
                continue;
            }
            CaseName::Standings => {
                standings::run(&args, &stop).context("bench case standings")?;
                continue;
            }
            CaseName::EvalWorkers => {
                evals::workers(&args, &stop).context("bench case eval-workers")?;
                continue;
            }
            _ => {}
        }
        let mut case = name.case();
        case.boards = args.boards.unwrap_or(case.boards);
        case.clients = args.clients.unwrap_or(case.clients);
        case.seconds = args.seconds.unwrap_or(case.seconds);
        case.speed = args.speed.unwrap_or(case.speed);
        case.ramp_per_sec = args.ramp_per_sec.unwrap_or(case.ramp_per_sec);
        case.delay = args.delay.or(case.delay).filter(|d| *d > 0);
        if case.boards == 0 || case.clients == 0 || case.seconds == 0 {
            bail!("--boards, --clients and --seconds must be at least 1");
        }
        if !(case.speed > 0.0 && case.ramp_per_sec > 0.0) {
            bail!("--speed and --ramp-per-sec must be above 0");
        }
        if name == CaseName::Recovery {
            let (steady, cut) = cases::recovery_pair(&case);
            live::run_case(&steady, &args, &tools, &stop, tck)
                .context("bench case recovery (no outage)")?;
            live::run_case(&cut, &args, &tools, &stop, tck)
                .context("bench case recovery (outages)")?;
            continue;
        }
        if name == CaseName::Eval {
            let mut without = None;
            for run in evals::runs(&case, &args.eval_workers) {
                let figures =
                    live::run_case(&run, &args, &tools, &stop, tck).with_context(|| {
                        format!("bench case eval ({} local workers)", run.eval_workers)
                    })?;
                match without {
                    None if run.eval_workers == 0 => without = Some(figures),
                    Some(off) if run.eval_workers > 0 => {
                        evals::compare(off, figures, run.eval_workers)
                    }
                    _ => {}
                }
            }
            continue;
        }
        if !args.sweep_boards.is_empty() || !args.sweep_clients.is_empty() {
            sweep(&case, &args, &tools, &stop, tck)?;
            continue;
        }
        live::run_case(&case, &args, &tools, &stop, tck)
            .with_context(|| format!("bench case {}", case.name))?;
    }
    Ok(())
}

/// The live case run once per size of the sweep (boards or spectators), each a run of its own
/// as `run_case` makes it; then the figures side by side, and drawn with `--plot`.
fn sweep(
    base: &cases::Case,
    args: &BenchArgs,
    tools: &procs::Tools,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    tck: f64,
) -> Result<()> {
    let by_boards = !args.sweep_boards.is_empty();
    let sizes = if by_boards {
        &args.sweep_boards
    } else {
        &args.sweep_clients
    };
    if sizes.contains(&0) {
        bail!("a sweep's sizes must be at least 1");
    }
    let mut runs = Vec::new();
    for &n in sizes {
        let mut case = base.clone();
        if by_boards {
            case.boards = n;
        } else {
            case.clients = n;
        }
        let figures = live::run_case(&case, args, tools, stop, tck)
            .with_context(|| format!("bench case {} at {n}", case.name))?;
        runs.push((n, figures));
    }
    let what = if by_boards { "boards" } else { "spectators" };
    println!("== sweep of {} over {what} ==", base.name);
    let cell = |v: Option<f64>, unit: &str| v.map_or("-".to_string(), |v| format!("{v:.2}{unit}"));
    for (n, f) in &runs {
        println!(
            "  {n:>6} {what:<10} CPU {:.3} cores, p99 {} beyond settle, {} a spectator, fan-out {} the same-bytes baseline",
            f.cores,
            cell(f.p99_beyond_settle_ms, " ms"),
            cell(Some(f.kib_per_spectator), " KiB"),
            cell(f.fanout_vs_same_bytes, "x"),
        );
    }
    if let Some(path) = &args.plot {
        let xs: Vec<f64> = runs.iter().map(|(n, _)| *n as f64).collect();
        let series_of =
            |name: &str, unit: &str, v: &dyn Fn(&evals::LiveFigures) -> Option<f64>| plot::Series {
                name: name.into(),
                unit: unit.into(),
                values: runs.iter().map(|(_, f)| v(f)).collect(),
            };
        let mut series = vec![series_of("service CPU", "cores", &|f| Some(f.cores))];
        if by_boards {
            series.push(series_of(
                "board → spectator p99 beyond settle",
                "ms",
                &|f| f.p99_beyond_settle_ms,
            ));
        } else {
            series.push(series_of("memory a spectator", "KiB", &|f| {
                Some(f.kib_per_spectator)
            }));
            series.push(series_of("fan-out vs the same-bytes baseline", "x", &|f| {
                f.fanout_vs_same_bytes
            }));
        }
        let (hall, crowd) = if by_boards {
            ("boards".to_string(), base.clients.to_string())
        } else {
            (format!("{} boards", base.boards), "N".to_string())
        };
        let title = format!(
            "relay bench --case {}: {hall} at {}x, {crowd} spectators, {} s measured",
            base.name, base.speed, base.seconds
        );
        std::fs::write(path, plot::svg(&title, what, &xs, &series))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("  drawn in {}", path.display());
    }
    Ok(())
}
