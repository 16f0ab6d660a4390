//! A UCI engine (Stockfish, from Debian's `stockfish` package, or any other) as a child
//! process: started, asked about one position at a time, and stopped. Its lines are read on a
//! thread of their own, so an engine that hangs is noticed (and killed) instead of hanging the
//! worker.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Where Debian puts Stockfish (`/usr/games` is not on every `PATH`).
pub const DEBIAN_STOCKFISH: &str = "/usr/games/stockfish";

/// The engine to run when none is named: `stockfish` on the `PATH`, else Debian's.
pub fn default_engine() -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("stockfish"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| PathBuf::from(DEBIAN_STOCKFISH))
}

/// What the engine said of a position, from White's point of view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub cp: Option<i32>,
    pub mate: Option<i32>,
    pub depth: u32,
    /// The best line, UCI moves.
    pub line: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot start the engine {path}: {error}")]
    Start { path: String, error: std::io::Error },
    #[error("the engine stopped talking ({0})")]
    Silent(&'static str),
    #[error("the engine gave no score for the position")]
    NoScore,
    #[error("cannot write to the engine: {0}")]
    Write(#[from] std::io::Error),
}

/// A running engine.
#[derive(Debug)]
pub struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    /// The name it gives (`id name`).
    pub name: String,
}

/// How long an engine may take to answer `uci` or `isready`.
const HANDSHAKE: Duration = Duration::from_secs(10);

impl Engine {
    /// Starts the engine at `path` with `threads` search threads and `hash_mb` of hash.
    pub fn start(path: &Path, threads: u32, hash_mb: u32) -> Result<Engine, EngineError> {
        let mut child = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| EngineError::Start {
                path: path.display().to_string(),
                error,
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(EngineError::Silent("no pipes"));
        };
        let (tx, lines) = mpsc::channel();
        std::thread::Builder::new()
            .name("relay-engine-out".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { return };
                    if tx.send(line).is_err() {
                        return;
                    }
                }
            })
            .map_err(EngineError::Write)?;
        let mut e = Engine {
            child,
            stdin,
            lines,
            name: String::new(),
        };
        e.say("uci")?;
        let deadline = Instant::now() + HANDSHAKE;
        loop {
            let line = e.line_before(deadline, "uci")?;
            if let Some(name) = line.strip_prefix("id name ") {
                e.name = name.trim().to_string();
            }
            if line.trim() == "uciok" {
                break;
            }
        }
        if e.name.is_empty() {
            e.name = path
                .file_name()
                .map_or("engine".into(), |n| n.to_string_lossy().to_string());
        }
        e.say(&format!("setoption name Threads value {}", threads.max(1)))?;
        e.say(&format!("setoption name Hash value {}", hash_mb.max(1)))?;
        e.ready()?;
        Ok(e)
    }

    fn say(&mut self, text: &str) -> Result<(), EngineError> {
        writeln!(self.stdin, "{text}")?;
        self.stdin.flush()?;
        Ok(())
    }

    fn line_before(
        &self,
        deadline: Instant,
        waiting_for: &'static str,
    ) -> Result<String, EngineError> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.lines
            .recv_timeout(left)
            .map_err(|_| EngineError::Silent(waiting_for))
    }

    fn ready(&mut self) -> Result<(), EngineError> {
        self.say("isready")?;
        let deadline = Instant::now() + HANDSHAKE;
        while self.line_before(deadline, "isready")?.trim() != "readyok" {}
        Ok(())
    }

    /// The engine's verdict on the position `fen` after thinking `movetime_ms`.
    pub fn evaluate(&mut self, fen: &str, movetime_ms: u64) -> Result<Verdict, EngineError> {
        self.say(&format!("position fen {fen}"))?;
        self.say(&format!("go movetime {movetime_ms}"))?;
        // The engine stops at the time; a few seconds more before it counts as hung.
        let deadline = Instant::now() + Duration::from_millis(movetime_ms) + HANDSHAKE;
        let mut best: Option<Verdict> = None;
        loop {
            let line = self.line_before(deadline, "go")?;
            if line.starts_with("bestmove") {
                break;
            }
            if let Some(v) = read_info(&line) {
                best = Some(v);
            }
        }
        let mut v = best.ok_or(EngineError::NoScore)?;
        // UCI scores are the side to move's; spectators read them as White's.
        if fen.split_whitespace().nth(1) == Some("b") {
            v.cp = v.cp.map(|c| -c);
            v.mate = v.mate.map(|m| -m);
        }
        Ok(v)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.say("quit");
        // An engine that does not quit at once is killed: a worker stopping must not wait.
        std::thread::sleep(Duration::from_millis(20));
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// A UCI `info` line with a whole score and a line (bounds and lines of other PVs are
/// passed over), as the side to move sees it.
fn read_info(line: &str) -> Option<Verdict> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.first() != Some(&"info") {
        return None;
    }
    let mut v = Verdict {
        cp: None,
        mate: None,
        depth: 0,
        line: Vec::new(),
    };
    let mut i = 1;
    while i < words.len() {
        match words[i] {
            "depth" => v.depth = words.get(i + 1)?.parse().ok()?,
            "multipv" if words.get(i + 1) != Some(&"1") => return None,
            "lowerbound" | "upperbound" => return None,
            "score" => {
                let n = words.get(i + 2)?.parse().ok()?;
                match *words.get(i + 1)? {
                    "cp" => v.cp = Some(n),
                    "mate" => v.mate = Some(n),
                    _ => return None,
                }
                i += 1;
            }
            "pv" => {
                v.line = words[i + 1..].iter().map(|s| s.to_string()).collect();
                break;
            }
            _ => {}
        }
        i += 1;
    }
    (v.depth > 0 && (v.cp.is_some() || v.mate.is_some()) && !v.line.is_empty()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_with_a_whole_score_and_a_line() {
        let v = read_info(
            "info depth 12 seldepth 16 multipv 1 score cp -23 nodes 9000 nps 1 pv e7e5 g1f3 b8c6",
        )
        .expect("a score and a line");
        assert_eq!((v.depth, v.cp, v.mate), (12, Some(-23), None));
        assert_eq!(v.line, ["e7e5", "g1f3", "b8c6"]);
        let m = read_info("info depth 30 score mate -3 pv h7h8").expect("mate");
        assert_eq!(m.mate, Some(-3));
        assert_eq!(
            read_info("info depth 12 score cp 40 lowerbound pv e2e4"),
            None
        );
        assert_eq!(read_info("info depth 5 multipv 2 score cp 1 pv d2d4"), None);
        assert_eq!(read_info("info string NNUE evaluation enabled"), None);
        assert_eq!(
            read_info("info depth 3 currmove e2e4 currmovenumber 1"),
            None
        );
        assert_eq!(read_info("bestmove e2e4"), None);
    }

    /// Debian's Stockfish, when installed (CI installs it): a real engine's answer.
    #[test]
    fn stockfish_sees_a_mate_in_one_from_whites_side() {
        let path = default_engine();
        if !path.is_file() {
            assert!(
                std::env::var_os("RELAY_REQUIRE_ALL").is_none(),
                "RELAY_REQUIRE_ALL is set and no stockfish was found (apt-get install stockfish)"
            );
            println!("skipped: no stockfish (apt-get install stockfish)");
            return;
        }
        let mut e = Engine::start(&path, 1, 16).expect("stockfish starts");
        assert!(e.name.to_lowercase().contains("stockfish"), "{}", e.name);
        // White to play: Qxf7 is mate (the scholar's mate).
        let white = e
            .evaluate(
                "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
                200,
            )
            .expect("a verdict");
        assert_eq!(white.mate, Some(1), "{white:?}");
        assert_eq!(white.line.first().map(String::as_str), Some("h5f7"));
        // Black to play mates with Qh4 (the fool's mate): mate in one for Black is -1.
        let black = e
            .evaluate(
                "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2",
                200,
            )
            .expect("a verdict");
        assert_eq!(black.mate, Some(-1), "{black:?}");
    }
}
