//! The emulator's side of a serial line: a pseudo-terminal whose other end the relay opens
//! exactly as it opens a real board's port. One line carries one board (USB/Bluetooth) or
//! several (a serial bus).
//!
//! Time on the line is virtual: `VirtualClock` runs `speed` times faster than the wall clock,
//! so a two-hour game can be played in minutes while the clocks still show the right times.

use super::board::{EmulatedBoard, Outgoing};
use serialport::{SerialPort, TTYPort};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Virtual milliseconds since the clock was made, `speed` times the wall clock, plus any
/// jumps forward (clones share the jumps).
#[derive(Clone, Debug)]
pub struct VirtualClock {
    origin: Instant,
    speed: f64,
    jumped_ms: Arc<AtomicU64>,
}

impl VirtualClock {
    pub fn new(speed: f64) -> VirtualClock {
        VirtualClock {
            origin: Instant::now(),
            speed: if speed > 0.0 { speed } else { 1.0 },
            jumped_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Moves virtual time forward at once (a test skipping a long think).
    pub fn jump(&self, ms: u64) {
        self.jumped_ms.fetch_add(ms, Ordering::Relaxed);
    }

    pub fn speed(&self) -> f64 {
        self.speed
    }

    pub fn now_ms(&self) -> u64 {
        (self.origin.elapsed().as_secs_f64() * 1000.0 * self.speed) as u64
            + self.jumped_ms.load(Ordering::Relaxed)
    }

    /// Sleeps until virtual time `t_ms` (returns at once if it has passed), waking early when
    /// `stop` is set.
    pub fn sleep_until(&self, t_ms: u64, stop: &AtomicBool) {
        loop {
            let now = self.now_ms();
            if now >= t_ms || stop.load(Ordering::Relaxed) {
                return;
            }
            let wall_ms = ((t_ms - now) as f64 / self.speed).ceil() as u64;
            std::thread::sleep(Duration::from_millis(wall_ms.clamp(1, 50)));
        }
    }
}

struct LineState {
    boards: Vec<EmulatedBoard>,
    /// Frames waiting to be written, with the wall time they are due.
    outbox: Vec<(Instant, Vec<u8>)>,
    /// Damage the last byte (a bus checksum) of this many coming frames: line noise on demand.
    corrupt_next: usize,
    /// The boards hear nothing and say nothing (a cable pulled between board and adapter, a
    /// board switched off), while the port itself stays.
    muted: bool,
}

impl LineState {
    fn queue(&mut self, out: Vec<Outgoing>) {
        let now = Instant::now();
        for o in out {
            self.outbox
                .push((now + Duration::from_millis(o.delay_ms), o.bytes));
        }
    }
}

/// A running emulated line.
pub struct Line {
    state: Arc<Mutex<LineState>>,
    clock: VirtualClock,
    path: PathBuf,
    link: Option<PathBuf>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Line")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn lock(state: &Mutex<LineState>) -> MutexGuard<'_, LineState> {
    // A panic while holding the lock can only come from a bug in the emulator itself; keep
    // serving with the state as it is rather than poisoning every later call.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl Line {
    /// Opens a pseudo-terminal carrying `boards`. If `link` is given, a symlink of that name
    /// points at the terminal (like /dev/serial/by-id), and [`Line::path`] returns it.
    pub fn open(
        boards: Vec<EmulatedBoard>,
        clock: VirtualClock,
        link: Option<&Path>,
    ) -> io::Result<Line> {
        let (mut master, slave) = TTYPort::pair().map_err(io::Error::from)?;
        let pts = slave
            .name()
            .ok_or_else(|| io::Error::other("pseudo-terminal has no name"))?;
        // Close our end of the slave: the relay opens it by name, as it would a real port.
        drop(slave);
        master
            .set_timeout(Duration::from_millis(5))
            .map_err(io::Error::from)?;
        let path = match link {
            Some(l) => {
                let _ = std::fs::remove_file(l);
                std::os::unix::fs::symlink(&pts, l)?;
                l.to_path_buf()
            }
            None => PathBuf::from(&pts),
        };
        let state = Arc::new(Mutex::new(LineState {
            boards,
            outbox: Vec::new(),
            corrupt_next: 0,
            muted: false,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (state, stop, clock) = (state.clone(), stop.clone(), clock.clone());
            std::thread::Builder::new()
                .name(format!("emulated line {pts}"))
                .spawn(move || serve(master, state, clock, stop))?
        };
        Ok(Line {
            state,
            clock,
            path,
            link: link.map(Path::to_path_buf),
            stop,
            thread: Some(thread),
        })
    }

    /// The name the host opens.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn clock(&self) -> VirtualClock {
        self.clock.clone()
    }

    pub fn board_count(&self) -> usize {
        lock(&self.state).boards.len()
    }

    /// Does something to board `index` at virtual time `now_ms` (a hand on the board, a lever
    /// press) and sends what the board says about it.
    pub fn act<R>(
        &self,
        index: usize,
        f: impl FnOnce(&mut EmulatedBoard) -> (R, Vec<Outgoing>),
    ) -> Option<R> {
        let mut state = lock(&self.state);
        let board = state.boards.get_mut(index)?;
        let (r, out) = f(board);
        state.queue(out);
        Some(r)
    }

    /// Puts raw bytes on the line (noise, as a bad cable makes).
    pub fn inject(&self, bytes: &[u8]) {
        lock(&self.state)
            .outbox
            .push((Instant::now(), bytes.to_vec()));
    }

    /// Silences the boards (`true`) or brings them back (`false`); the port stays open.
    pub fn mute(&self, muted: bool) {
        let mut st = lock(&self.state);
        st.muted = muted;
        st.outbox.clear();
    }

    /// Flips a bit in the last byte of the next `frames` frames the boards send.
    pub fn corrupt_next(&self, frames: usize) {
        lock(&self.state).corrupt_next = frames;
    }

    /// Pulls the plug: the terminal goes away (the host sees an error or end of file) and the
    /// boards are handed back, so a test can plug them in again on a new line.
    pub fn unplug(mut self) -> Vec<EmulatedBoard> {
        self.shutdown();
        std::mem::take(&mut lock(&self.state).boards)
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Some(l) = &self.link {
            let _ = std::fs::remove_file(l);
        }
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn serve(
    mut master: TTYPort,
    state: Arc<Mutex<LineState>>,
    clock: VirtualClock,
    stop: Arc<AtomicBool>,
) {
    let mut buf = [0u8; 512];
    // With nothing due, a line wakes every 100 virtual ms (at most every 50 ms, at least every
    // 5 ms of wall time) to let its boards tick: a hall of 1000 lines polling every 5 ms took
    // more CPU than the service it feeds.
    let idle = Duration::from_millis(((100.0 / clock.speed()).ceil() as u64).clamp(5, 50));
    let mut wait = Duration::from_millis(5);
    while !stop.load(Ordering::Relaxed) {
        let _ = master.set_timeout(wait);
        let input = match master.read(&mut buf) {
            Ok(n) => &buf[..n],
            Err(e) if e.kind() == io::ErrorKind::TimedOut => &buf[..0],
            Err(_) => {
                // Nobody has the other end open (EIO on a pty master): wait for the host,
                // as long as an idle line would. (Every 5 ms, the 2000 lines of a big hall
                // waiting for the relay to start took both cores, and the hall took four
                // minutes to open.)
                std::thread::sleep(idle);
                &buf[..0]
            }
        };
        let due: Vec<Vec<u8>> = {
            let mut st = lock(&state);
            if st.muted {
                st.outbox.clear();
                drop(st);
                continue;
            }
            let now = clock.now_ms();
            let mut out = Vec::new();
            for board in st.boards.iter_mut() {
                if !input.is_empty() {
                    out.extend(board.receive(input, now));
                }
                out.extend(board.tick(now));
            }
            st.queue(out);
            let wall = Instant::now();
            // Frames due now go out in the order they were made, whole, so replies of
            // different boards never interleave.
            let mut due = Vec::new();
            st.outbox.retain(|(at, bytes)| {
                if *at <= wall {
                    due.push(bytes.clone());
                    false
                } else {
                    true
                }
            });
            // Until the next frame is due, or the next tick.
            wait = st
                .outbox
                .iter()
                .map(|(at, _)| at.saturating_duration_since(wall))
                .min()
                .map_or(idle, |d| d.clamp(Duration::from_millis(1), idle));
            for frame in due.iter_mut() {
                if st.corrupt_next > 0 && frame.len() > 3 {
                    st.corrupt_next -= 1;
                    if let Some(last) = frame.last_mut() {
                        *last ^= 0x01;
                    }
                }
            }
            due
        };
        for bytes in due {
            // With no host attached the write fails; the bytes are lost, as on a real line.
            let _ = master.write_all(&bytes);
        }
    }
}
