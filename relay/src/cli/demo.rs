//! `relay demo`: emulated boards on pseudo-terminals, read back through the real serial path
//! (the same sessions `relay serve` will use) and recorded by the real recorder, with every
//! move printed with its clock as it is accepted. The spectator web page arrives with the live
//! service.

use super::emulate::{HallArgs, start_hall};
use anyhow::Result;
use boards::protocol::LineMode;
use boards::transport::{PortEvent, SessionConfig};
use clap::Args;
use relay_core::recorder::{Outcome, Recorder, RecorderConfig};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Args, Debug)]
pub struct DemoArgs {
    #[command(flatten)]
    hall: HallArgs,
}

pub fn run(args: DemoArgs) -> Result<()> {
    let stop = super::stop_flag()?;
    let hall = start_hall(&args.hall, stop.clone())?;
    println!(
        "demo: {} emulated board(s) on {} pseudo-terminal(s), read through the serial path; Ctrl-C to stop",
        args.hall.boards,
        hall.lines.len()
    );
    // One recorder per e-board, shared by the port sessions (a bus line carries several).
    let recorders: Arc<Mutex<BTreeMap<String, Recorder>>> = Arc::default();
    let mut sessions = Vec::new();
    for line in &hall.lines {
        let path = line.path().display().to_string();
        let mode = if line.board_count() > 1 {
            LineMode::Bus
        } else {
            LineMode::Single
        };
        let (stop, recorders) = (stop.clone(), recorders.clone());
        sessions.push(std::thread::spawn(move || {
            let cfg = SessionConfig::new(&path, mode);
            boards::transport::run(cfg, &mut |event| report(&event, &recorders), &stop);
        }));
    }
    for s in sessions {
        let _ = s.join();
    }
    hall.stop();
    Ok(())
}

fn ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn report(event: &PortEvent, recorders: &Mutex<BTreeMap<String, Recorder>>) {
    // Held only while one message is recorded; no I/O but the print under it.
    let mut recorders = recorders.lock().unwrap_or_else(|e| e.into_inner());
    match event {
        PortEvent::Identified { serial, path, .. } => println!("e-board {serial} on {path}"),
        PortEvent::Message {
            serial: Some(serial),
            message,
            at,
            ..
        } => {
            let rec = recorders
                .entry(serial.clone())
                .or_insert_with(|| Recorder::new(RecorderConfig::default()));
            let mut outs = rec.on_message(message, ms(*at));
            outs.extend(rec.tick(ms(SystemTime::now())));
            for o in outs {
                let line = match &o {
                    Outcome::NewGame {
                        orientation,
                        chess960,
                        ..
                    } => {
                        format!(
                            "new game ({orientation:?} board{})",
                            if *chess960 { ", Chess960" } else { "" }
                        )
                    }
                    Outcome::Move { ply, san, .. } => {
                        let number = ply.div_ceil(2);
                        if ply % 2 == 1 {
                            format!("{number}. {san}")
                        } else {
                            format!("{number}... {san}")
                        }
                    }
                    Outcome::MoveClock { ply, clk, .. } => format!("  ply {ply}: clock {clk}"),
                    Outcome::Correction { ply, san, replaced } => {
                        format!("ply {ply} corrected: {replaced} -> {san}")
                    }
                    Outcome::Takeback { ply } => format!("taken back to ply {ply}"),
                    Outcome::OutOfSync { board_fen, .. } => {
                        format!("out of sync: board shows {board_fen}")
                    }
                    Outcome::InSync => "in sync again".to_string(),
                    Outcome::GameOver { result, end } => format!("{result} ({end:?})"),
                    Outcome::ResultProposed { result, reason } => {
                        format!("result proposed: {result} ({reason:?})")
                    }
                    Outcome::Draw { condition } => format!("draw condition: {condition:?}"),
                    Outcome::Clock { .. } => continue,
                };
                println!("{serial}  {line}");
            }
        }
        PortEvent::Lost { serial } | PortEvent::Back { serial } => {
            let what = if matches!(event, PortEvent::Lost { .. }) {
                "lost"
            } else {
                "back"
            };
            println!("{}  {what}", serial.as_deref().unwrap_or("?"));
        }
        PortEvent::Closed { path, reason } => println!("{path}  closed: {reason}"),
        _ => {}
    }
}
