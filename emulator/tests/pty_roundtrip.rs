//! Emulator → pseudo-terminal → serial transport → decoder, in single-board and bus mode,
//! including an unplug and a replug under a new port name.

use boards::protocol::{
    ClockMessage, ClockSide, DgtSquare, LineMode, Message, Orientation, PieceCode,
};
use boards::testdata::temp_dir;
use boards::transport::{PortEvent, SessionConfig};
use emulator::board::{BoardIdentity, EmulatedBoard};
use emulator::clock::ChessClock;
use emulator::line::{Line, VirtualClock};
use shakmaty::Square;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

struct Session {
    events: Receiver<PortEvent>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Session {
    fn start(path: &Path, mode: LineMode, rescan: &Path) -> Session {
        let mut cfg = SessionConfig::new(&path.display().to_string(), mode);
        cfg.keepalive = Duration::from_millis(300);
        cfg.lost_after = Duration::from_millis(1500);
        cfg.backoff_min = Duration::from_millis(50);
        cfg.backoff_max = Duration::from_millis(200);
        cfg.bus_poll_gap = Duration::from_millis(20);
        cfg.rescan = vec![format!("{}/dgt-*", rescan.display())];
        let (tx, events) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            boards::transport::run(
                cfg,
                &mut |e| {
                    let _ = tx.send(e);
                },
                &s,
            )
        });
        Session {
            events,
            stop,
            thread: Some(thread),
        }
    }

    /// Waits for an event matching `want`, returning it; panics with what arrived on timeout.
    fn expect(&self, what: &str, mut want: impl FnMut(&PortEvent) -> bool) -> PortEvent {
        let end = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        while Instant::now() < end {
            if let Ok(e) = self.events.recv_timeout(Duration::from_millis(50)) {
                if want(&e) {
                    return e;
                }
                seen.push(format!("{e:?}"));
            }
        }
        let tail = seen.len().saturating_sub(15);
        panic!(
            "no {what} within 10 s; last events:\n{}",
            seen[tail..].join("\n")
        );
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn board(n: u16) -> EmulatedBoard {
    let clock = ChessClock::new("180+2".parse().expect("time control"), ClockSide::Left);
    EmulatedBoard::new(BoardIdentity::from_number(n), Some(clock))
}

fn sq(s: Square) -> DgtSquare {
    DgtSquare::from_square(s, Orientation::Normal)
}

fn is_field(e: &PortEvent, serial: &str, square: Square, piece: PieceCode) -> bool {
    matches!(e, PortEvent::Message { serial: Some(s), message: Message::FieldUpdate { square: q, piece: p }, .. }
        if s == serial && *q == sq(square) && *p == piece)
}

fn is_dump_with(e: &PortEvent, serial: &str, fen: &str) -> bool {
    matches!(e, PortEvent::Message { serial: Some(s), message: Message::BoardDump { placement }, .. }
        if s == serial && placement.board_fen(Orientation::Normal) == fen)
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
const AFTER_E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR";

fn play_e4(line: &Line, index: usize) {
    let t = line.clock().now_ms();
    line.act(index, |b| {
        ((), b.set_square(sq(Square::E2), PieceCode::Empty, t))
    });
    line.act(index, |b| {
        (
            (),
            b.set_square(sq(Square::E4), PieceCode::from_byte(1), t + 300),
        )
    });
}

#[test]
fn single_board_round_trip_with_unplug_and_replug() {
    let dir = temp_dir("single");
    let clock = VirtualClock::new(1.0);
    let line = Line::open(vec![board(1025)], clock.clone(), Some(&dir.join("dgt-a"))).expect("pty");
    let session = Session::start(line.path(), LineMode::Single, &dir);

    session.expect(
        "identification",
        |e| matches!(e, PortEvent::Identified { serial, .. } if serial == "01025"),
    );
    session.expect("version", |e| {
        matches!(
            e,
            PortEvent::Message {
                message: Message::Version { major: 1, minor: 2 },
                ..
            }
        )
    });
    session.expect("start position", |e| is_dump_with(e, "01025", START));

    // Garbage on the line is reported and skipped; the next real message still arrives.
    line.inject(&[0x01, 0x02, 0x8E, 0x00]);
    play_e4(&line, 0);
    session.expect("garbage", |e| matches!(e, PortEvent::Garbage { .. }));
    session.expect("e2 lifted", |e| {
        is_field(e, "01025", Square::E2, PieceCode::Empty)
    });
    session.expect("e4 placed", |e| {
        is_field(e, "01025", Square::E4, PieceCode::from_byte(1))
    });

    // The clock: started, left side runs; a lever press hands over to the right side.
    let t = line.clock().now_ms();
    line.act(0, |b| ((), b.start_clock(t)));
    session.expect("left running", |e| matches!(e, PortEvent::Message { message: Message::Clock { clock: ClockMessage::Time(r) }, .. }
        if r.running_side() == Some(ClockSide::Left)));
    let t = line.clock().now_ms();
    line.act(0, |b| ((), b.press_lever(ClockSide::Left, t)));
    session.expect("right running", |e| matches!(e, PortEvent::Message { message: Message::Clock { clock: ClockMessage::Time(r) }, .. }
        if r.running_side() == Some(ClockSide::Right) && r.left.seconds == 182));

    // Silence (board switched off, port still there): lost; then back, and started again.
    line.mute(true);
    session.expect(
        "lost",
        |e| matches!(e, PortEvent::Lost { serial: Some(s) } if s == "01025"),
    );
    line.mute(false);
    session.expect(
        "back",
        |e| matches!(e, PortEvent::Back { serial: Some(s) } if s == "01025"),
    );
    session.expect("dump after coming back", |e| {
        is_dump_with(e, "01025", AFTER_E4)
    });

    // Unplug: the port closes. Replug under a new name: found again by serial number.
    let boards = line.unplug();
    session.expect("close", |e| matches!(e, PortEvent::Closed { .. }));
    let line = Line::open(boards, clock.clone(), Some(&dir.join("dgt-b"))).expect("pty");
    let moved = session.expect("move to the new name", |e| {
        matches!(e, PortEvent::Moved { .. })
    });
    let PortEvent::Moved { serial, to, .. } = moved else {
        unreachable!()
    };
    assert_eq!(serial, "01025");
    assert_eq!(to, line.path().display().to_string());
    session.expect("board dump after replug", |e| {
        is_dump_with(e, "01025", AFTER_E4)
    });
    let t = line.clock().now_ms();
    line.act(0, |b| {
        ((), b.set_square(sq(Square::E7), PieceCode::Empty, t))
    });
    session.expect("e7 lifted after replug", |e| {
        is_field(e, "01025", Square::E7, PieceCode::Empty)
    });
    drop(session);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bus_round_trip_with_three_boards_checksum_errors_and_replug() {
    let dir = temp_dir("bus");
    let clock = VirtualClock::new(1.0);
    let line = Line::open(
        vec![board(1025), board(2049), board(77)],
        clock.clone(),
        Some(&dir.join("dgt-bus-a")),
    )
    .expect("pty");
    let session = Session::start(line.path(), LineMode::Bus, &dir);

    let mut found = Vec::new();
    while found.len() < 3 {
        if let PortEvent::Identified {
            serial, address, ..
        } = session.expect("three boards", |e| {
            matches!(e, PortEvent::Identified { .. })
        }) {
            assert_eq!(address, serial.parse().ok());
            found.push(serial);
        }
    }
    found.sort();
    assert_eq!(found, vec!["00077", "01025", "02049"]);
    for s in ["00077", "01025", "02049"] {
        session.expect("dump", |e| is_dump_with(e, s, START));
    }

    play_e4(&line, 1);
    session.expect("e2 lifted on 02049", |e| {
        is_field(e, "02049", Square::E2, PieceCode::Empty)
    });
    session.expect("e4 placed on 02049", |e| {
        is_field(e, "02049", Square::E4, PieceCode::from_byte(1))
    });

    // A damaged reply: the session asks for a repeat and loses nothing.
    line.corrupt_next(1);
    session.expect("checksum error", |e| {
        matches!(e, PortEvent::ChecksumError { .. })
    });
    play_e4(&line, 0);
    session.expect("e4 placed on 01025", |e| {
        is_field(e, "01025", Square::E4, PieceCode::from_byte(1))
    });

    let t = line.clock().now_ms();
    line.act(2, |b| ((), b.start_clock(t)));
    session.expect("clock of 00077 running", |e| matches!(e, PortEvent::Message { serial: Some(s), message: Message::Clock { clock: ClockMessage::Time(r) }, .. }
        if s == "00077" && r.running_side() == Some(ClockSide::Left)));

    let boards = line.unplug();
    session.expect("close", |e| matches!(e, PortEvent::Closed { .. }));
    let line = Line::open(boards, clock, Some(&dir.join("dgt-bus-b"))).expect("pty");
    session.expect("moved", |e| matches!(e, PortEvent::Moved { .. }));
    session.expect("dump of 02049 after replug", |e| {
        is_dump_with(e, "02049", AFTER_E4)
    });
    let t = line.clock().now_ms();
    line.act(0, |b| {
        ((), b.set_square(sq(Square::D7), PieceCode::Empty, t))
    });
    session.expect("d7 lifted on 01025", |e| {
        is_field(e, "01025", Square::D7, PieceCode::Empty)
    });
    drop(session);
    drop(line);
    let _ = std::fs::remove_dir_all(&dir);
}
