//! `relay demo`: emulated boards on pseudo-terminals, read back through the real serial path
//! (the same sessions `relay serve` will use), with every board's position printed as it is
//! read. The spectator web page arrives with the live service.

use super::emulate::{HallArgs, start_hall};
use anyhow::Result;
use boards::protocol::{ClockMessage, LineMode, Message, Orientation, Placement};
use boards::transport::{PortEvent, SessionConfig};
use clap::Args;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

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
    let boards: Arc<Mutex<BTreeMap<String, Placement>>> = Arc::default();
    let mut sessions = Vec::new();
    for line in &hall.lines {
        let path = line.path().display().to_string();
        let mode = if line.board_count() > 1 {
            LineMode::Bus
        } else {
            LineMode::Single
        };
        let (stop, boards) = (stop.clone(), boards.clone());
        sessions.push(std::thread::spawn(move || {
            let cfg = SessionConfig::new(&path, mode);
            boards::transport::run(cfg, &mut |event| report(&event, &boards), &stop);
        }));
    }
    for s in sessions {
        let _ = s.join();
    }
    hall.stop();
    Ok(())
}

fn report(event: &PortEvent, boards: &Mutex<BTreeMap<String, Placement>>) {
    let mut boards = boards.lock().unwrap_or_else(|e| e.into_inner());
    match event {
        PortEvent::Identified { serial, path, .. } => println!("e-board {serial} on {path}"),
        PortEvent::Message {
            serial: Some(serial),
            message,
            ..
        } => match message {
            Message::BoardDump { placement } => {
                boards.insert(serial.clone(), *placement);
                println!(
                    "{serial}  board  {}",
                    placement.board_fen(Orientation::Normal)
                );
            }
            Message::FieldUpdate { square, piece } => {
                let p = boards.entry(serial.clone()).or_default();
                p.set(*square, *piece);
                println!(
                    "{serial}  {square} {}  {}",
                    piece.to_char(),
                    p.board_fen(Orientation::Normal)
                );
            }
            Message::Clock {
                clock: ClockMessage::Time(r),
            } => println!("{serial}  clock  {r}"),
            _ => {}
        },
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
