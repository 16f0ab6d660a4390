//! What a live case prints once it has run: the processes' CPU and memory over the window,
//! the snapshots and move frames the spectators got, the delay from board to spectator and
//! the fan-out, read from what wsload left and from the moves the service stored.

use super::cases::Case;
use super::figures::{self, Fanout, Marker, mib, percentile};
use super::load::Load;
use super::procs::{self, Proc, Sample, sample};
use anyhow::{Context, Result};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;

/// The three processes sampled at one edge of the window.
#[derive(Debug)]
pub struct Window {
    serve: Sample,
    boards: Option<Sample>,
    wsload: Option<Sample>,
    /// The `--no-boards` relays, in order.
    webs: Vec<Sample>,
}

impl Window {
    pub fn sample(
        serve: &Proc,
        boards: &Proc,
        wsload: &Proc,
        webs: &[(Proc, SocketAddr)],
    ) -> Result<Window> {
        Ok(Window {
            serve: sample(serve.pid()).context("the service has gone")?,
            boards: sample(boards.pid()),
            wsload: sample(wsload.pid()),
            webs: webs
                .iter()
                .map(|(w, _)| sample(w.pid()).context("a --no-boards relay has gone"))
                .collect::<Result<_>>()?,
        })
    }
}

/// What one case measured, ready to print.
pub struct Run<'a> {
    pub case: &'a Case,
    pub settle_ms: u64,
    pub tck: f64,
    pub window_ms: (i64, i64),
    pub load_ns: u64,
    pub ramp_secs: f64,
    pub before: Sample,
    /// The `--no-boards` relays before spectators came.
    pub webs_before: Vec<Sample>,
    pub start: Window,
    pub end: Window,
    /// The board reader's group commits (count, µs spent) at the window's start and end.
    pub commits: Option<((u64, u64), (u64, u64))>,
    /// Every stored move: seq → stored at (ms since the epoch).
    pub moves: BTreeMap<i64, i64>,
}

impl Run<'_> {
    /// Prints what the relay did; returns its fan-out and the bytes a second its sampled
    /// spectators got in the window (median), for the baselines, and the board → spectator
    /// p99 beyond the settle time.
    pub fn report(&self, load: &Load) -> Result<Reported> {
        let clients = self.case.clients as u64;
        let delay_ms = i64::from(self.case.delay.unwrap_or(0)) * 1000;
        let (w0, w1) = self.window_ms;
        let wall = (w1 - w0) as f64 / 1000.0;
        let summary = figures::summary(&load.path("summary.json"))?;
        let markers = figures::markers(&load.path("markers.tsv"))?;

        // The relays serving spectators, when they are not the one reading the boards.
        if !self.webs_before.is_empty() {
            let (s0, s1) = (&self.start.serve, &self.end.serve);
            println!(
                "  board reader      CPU {:.2} cores over the {wall:.1} s window; RSS {} (peak {}); serves no spectator",
                procs::cores(s0, s1, self.tck),
                mib(s1.rss_kib),
                mib(s1.hwm_kib),
            );
            let n = self.webs_before.len();
            let mut grown = 0;
            for (i, ((b, w0), w1)) in self
                .webs_before
                .iter()
                .zip(&self.start.webs)
                .zip(&self.end.webs)
                .enumerate()
            {
                grown += w0.rss_kib.saturating_sub(b.rss_kib);
                println!(
                    "  --no-boards {}     CPU {:.2} cores; RSS {} before spectators, {} connected, {} at the end (peak {}); about {} spectators",
                    i + 1,
                    procs::cores(w0, w1, self.tck),
                    mib(b.rss_kib),
                    mib(w0.rss_kib),
                    mib(w1.rss_kib),
                    mib(w1.hwm_kib),
                    clients as usize / n,
                );
            }
            println!(
                "  per spectator     {:.1} KiB of relay memory once connected (all --no-boards relays)",
                grown as f64 / clients as f64
            );
        }
        // The service.
        let (s0, s1) = (&self.start.serve, &self.end.serve);
        let per_client_kib = s0.rss_kib.saturating_sub(self.before.rss_kib) as f64 / clients as f64;
        // At the end too: buffers that grow while spectators follow count as much as those
        // taken at connection.
        let at_end_kib = s1.hwm_kib.saturating_sub(self.before.rss_kib) as f64 / clients as f64;
        if self.webs_before.is_empty() {
            println!(
                "  service           CPU {:.2} cores over the {wall:.1} s window; RSS {} before spectators, {} connected, {} at the end (peak {}): {per_client_kib:.1} KiB per spectator once connected, {at_end_kib:.1} KiB at the peak",
                procs::cores(s0, s1, self.tck),
                mib(self.before.rss_kib),
                mib(s0.rss_kib),
                mib(s1.rss_kib),
                mib(s1.hwm_kib),
            );
        }
        if let Some(((n0, us0), (n1, us1))) = self.commits {
            let n = n1.saturating_sub(n0);
            println!(
                "  commits           {:.0} a second (group commits of the writer, one fsync each), {:.2} ms each on average",
                n as f64 / wall,
                us1.saturating_sub(us0) as f64 / 1000.0 / n.max(1) as f64
            );
        }
        let other = |a: &Option<Sample>, b: &Option<Sample>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.2}", procs::cores(a, b, self.tck)),
            _ => "?".into(),
        };
        println!(
            "  same machine      boards {} cores, wsload {} cores (its main process), {} cores in all",
            other(&self.start.boards, &self.end.boards),
            other(&self.start.wsload, &self.end.wsload),
            std::thread::available_parallelism().map_or(0, |n| n.get())
        );

        // Snapshots: every client's first one is the marker `snapshot`.
        let snap = markers.iter().find(|m| m.text == "snapshot");
        let reached = snap.map_or(0, |m| m.clients);
        let conn = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
        println!(
            "  snapshots         {reached} of {clients} spectators got one{}; connect+handshake p50 {} / p99 {} / max {} ms; {} never connected, {} connected but got nothing, {} closed by the service",
            snap.map(|m| format!(
                ", the last {:.2} s after the first connection attempt (ramp {:.2} s)",
                (m.first_ns as f64 + m.last_ms * 1e6 - self.load_ns as f64) / 1e9,
                self.ramp_secs
            ))
            .unwrap_or_default(),
            conn(summary.connect_ms[0]),
            conn(summary.connect_ms[1]),
            conn(summary.connect_ms[2]),
            summary.failed,
            summary.established.saturating_sub(reached),
            summary.closed_by_server,
        );

        // The moves spectators should have seen during the window: stored, plus the delay.
        let window: HashSet<i64> = self
            .moves
            .iter()
            .filter(|(_, at)| (w0..=w1).contains(&(**at + delay_ms)))
            .map(|(seq, _)| *seq)
            .collect();
        let by_seq: HashMap<i64, &Marker> = markers
            .iter()
            .filter_map(|m| Some((m.text.parse::<i64>().ok()?, m)))
            .collect();
        let moves = window.len() as u64;
        let delivered: u64 = window
            .iter()
            .filter_map(|s| by_seq.get(s))
            .map(|m| m.clients)
            .sum();
        let expected = moves * clients;
        println!(
            "  delivered         {delivered} of {expected} move frames expected ({moves} moves in the window x {clients} spectators){}",
            if expected > 0 {
                format!(" = {:.1}%", delivered as f64 * 100.0 / expected as f64)
            } else {
                String::new()
            }
        );

        let (bytes_per_sec, p99_beyond_settle_ms) = self.sampled(load, &window, moves, delay_ms)?;
        println!(
            "  whole run         per spectator median {} frames, {:.1} KiB (min {} frames); {} frames, {:.1} MiB to all; wsload peak RSS {}",
            summary.client_frames[1],
            summary.client_bytes[1] as f64 / 1024.0,
            summary.client_frames[0],
            summary.frames,
            summary.bytes as f64 / 1048576.0,
            mib(summary.peak_rss_kib),
        );

        let fan = figures::fanout(window.iter().filter_map(|s| by_seq.get(s).copied()));
        println!("  fan-out relay     {}", fanout_line(fan.as_ref(), "moves"));
        Ok(Reported {
            fanout: fan,
            bytes_per_sec,
            p99_beyond_settle_ms,
        })
    }

    /// Latency and per-spectator traffic from the sampled spectators' frames.
    /// Returns the median bytes a second a sampled spectator got in the window, and the
    /// board → spectator p99 beyond the settle time.
    fn sampled(
        &self,
        load: &Load,
        window: &HashSet<i64>,
        moves: u64,
        delay_ms: i64,
    ) -> Result<(Option<f64>, Option<f64>)> {
        if load.sample == 0 {
            return Ok((None, None));
        }
        let (w0, w1) = self.window_ms;
        let (w0_ns, w1_ns) = (w0 as u64 * 1_000_000, w1 as u64 * 1_000_000);
        let mut latency_ms: Vec<f64> = Vec::new();
        // The first move of each game apart: it is the one that starts a stored game's
        // clock and orientation, and at a round's start every board makes it at once.
        let mut first_ms: Vec<f64> = Vec::new();
        let mut from_store = 0usize;
        let mut frames: HashMap<u32, (u64, u64)> = HashMap::new();
        let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
        for f in figures::frames(&load.path("frames.tsv"))? {
            let in_window = (w0_ns..=w1_ns).contains(&f.at_ns);
            let entry = frames.entry(f.client).or_default();
            if !in_window {
                continue;
            }
            entry.0 += 1;
            entry.1 += f.text.len() as u64;
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&f.text) else {
                continue;
            };
            let kind = v["type"].as_str().unwrap_or("?");
            *kinds.entry(kind.to_string()).or_default() += 1;
            let Some(seq) = v["seq"].as_i64() else {
                continue;
            };
            if kind != "move" || !window.contains(&seq) {
                continue;
            }
            // The board's read time if the frame carries it, else the time it was stored.
            let read = match v["read_at_ms"].as_i64() {
                Some(r) => r,
                None => match self.moves.get(&seq) {
                    Some(at) => {
                        from_store += 1;
                        *at
                    }
                    None => continue,
                },
            };
            let ms = f.at_ns as f64 / 1e6 - (read + delay_ms) as f64;
            latency_ms.push(ms);
            if v["move"]["ply"].as_i64() == Some(1) {
                first_ms.push(ms);
            }
        }
        latency_ms.sort_by(f64::total_cmp);
        first_ms.sort_by(f64::total_cmp);
        let sampled = load.sample;
        let delay = if delay_ms > 0 {
            format!(", minus the {} s delay", delay_ms / 1000)
        } else {
            String::new()
        };
        match (
            percentile(&latency_ms, 50.0),
            percentile(&latency_ms, 99.0),
            latency_ms.last(),
        ) {
            (Some(p50), Some(p99), Some(max)) => {
                let settle = self.settle_ms as f64;
                println!(
                    "  board → spectator p50 {p50:.0} / p99 {p99:.0} / max {max:.0} ms over {} move frames at {sampled} sampled spectators{delay}; beyond the {} ms settle time: {:.0} / {:.0} / {:.0} ms",
                    latency_ms.len(),
                    self.settle_ms,
                    p50 - settle,
                    p99 - settle,
                    max - settle
                );
                if let (Some(f50), Some(f99), Some(fmax)) = (
                    percentile(&first_ms, 50.0),
                    percentile(&first_ms, 99.0),
                    first_ms.last(),
                ) {
                    println!(
                        "                    the first move of each game alone (ply 1): {:.0} / {:.0} / {:.0} ms beyond the settle time over {} move frames",
                        f50 - settle,
                        f99 - settle,
                        fmax - settle,
                        first_ms.len()
                    );
                }
                if from_store > 0 {
                    println!(
                        "                    ({from_store} of them carried no read_at_ms and are timed from when the service stored the move, which leaves out the settle time)"
                    );
                }
            }
            _ => println!(
                "  board → spectator no move frames in the window at the sampled spectators"
            ),
        }
        // Every sampled client counts, one that got nothing included.
        let mut counts: Vec<(u64, u64)> = frames.into_values().collect();
        counts.resize(sampled.max(counts.len()), (0, 0));
        let mut f: Vec<u64> = counts.iter().map(|c| c.0).collect();
        let mut b: Vec<u64> = counts.iter().map(|c| c.1).collect();
        f.sort_unstable();
        b.sort_unstable();
        let (f50, b50) = (
            percentile(&f, 50.0).unwrap_or(0),
            percentile(&b, 50.0).unwrap_or(0),
        );
        let wall = (w1 - w0) as f64 / 1000.0;
        let per_move = |n: f64| {
            if moves > 0 {
                format!("{:.2}", n / (moves as f64))
            } else {
                "-".into()
            }
        };
        let n = sampled.max(1) as f64;
        println!(
            "  per spectator     {} frames per move in the window ({}); median {f50} frames, {:.1} KiB ({:.2} KiB/s)",
            per_move(f50 as f64),
            kinds
                .iter()
                .map(|(k, c)| format!("{k} {}", per_move(*c as f64 / n)))
                .collect::<Vec<_>>()
                .join(", "),
            b50 as f64 / 1024.0,
            b50 as f64 / 1024.0 / wall
        );
        let p99_beyond_settle_ms =
            percentile(&latency_ms, 99.0).map(|p99| p99 - self.settle_ms as f64);
        Ok((
            (wall > 0.0).then(|| b50 as f64 / wall),
            p99_beyond_settle_ms,
        ))
    }
}

/// What [`Run::report`] hands back for the baselines and a sweep's chart.
pub struct Reported {
    pub fanout: Option<Fanout>,
    pub bytes_per_sec: Option<f64>,
    pub p99_beyond_settle_ms: Option<f64>,
}

pub fn fanout_line(f: Option<&Fanout>, what: &str) -> String {
    match f {
        Some(f) => format!(
            "first arrival → p50 median {:.1} / max {:.1} ms, → p99 {:.1} / {:.1} ms, → last {:.1} / {:.1} ms over {} {what}",
            f.p50.0, f.p50.1, f.p99.0, f.p99.1, f.last.0, f.last.1, f.markers
        ),
        None => format!("no {what} to measure"),
    }
}
