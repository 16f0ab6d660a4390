//! What wsload leaves behind (summary JSON, marker rows, sampled frames), read back, and the
//! small statistics the bench prints from it.

use anyhow::{Context, Result};
use serde_json::Value;
use std::io::BufRead;
use std::path::Path;

/// wsload's `--json` summary, the parts the bench uses.
#[derive(Debug, Default)]
pub struct Summary {
    pub established: u64,
    pub failed: u64,
    pub closed_by_server: u64,
    pub connect_ms: [Option<f64>; 3],
    pub frames: u64,
    pub bytes: u64,
    /// Per reading client: min, median, max.
    pub client_frames: [u64; 3],
    pub client_bytes: [u64; 3],
    pub peak_rss_kib: u64,
}

pub fn summary(path: &Path) -> Result<Summary> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("wsload left no summary at {}", path.display()))?;
    let v: Value = serde_json::from_str(&text).context("wsload's summary is not JSON")?;
    let u = |v: &Value| v.as_u64().unwrap_or(0);
    let mmm = |v: &Value| [u(&v["min"]), u(&v["median"]), u(&v["max"])];
    let rss = match &v["peak_rss_kib"] {
        Value::Array(a) => a.iter().map(u).sum(),
        other => u(other),
    };
    Ok(Summary {
        established: u(&v["established"]),
        failed: u(&v["failed"]),
        closed_by_server: u(&v["closed_by_server"]),
        connect_ms: ["p50", "p99", "max"].map(|k| v["connect_ms"][k].as_f64()),
        frames: u(&v["frames"]),
        bytes: u(&v["bytes"]),
        client_frames: mmm(&v["per_client_frames"]),
        client_bytes: mmm(&v["per_client_bytes"]),
        peak_rss_kib: rss,
    })
}

/// One row of wsload's `--markers-out`: an event, how many clients got it, its first arrival
/// and the spread of the arrivals after that.
#[derive(Debug, Clone)]
pub struct Marker {
    pub text: String,
    pub clients: u64,
    pub first_ns: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub last_ms: f64,
}

pub fn markers(path: &Path) -> Result<Vec<Marker>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("wsload left no marker rows at {}", path.display()))?;
    let mut rows = Vec::new();
    for line in std::io::BufReader::new(file).lines().skip(1) {
        let line = line?;
        let f: Vec<&str> = line.split('\t').collect();
        let [text, clients, first, p50, p99, last] = f[..] else {
            continue;
        };
        let (Ok(clients), Ok(first_ns), Ok(p50_ms), Ok(p99_ms), Ok(last_ms)) = (
            clients.parse(),
            first.parse(),
            p50.parse(),
            p99.parse(),
            last.parse(),
        ) else {
            continue;
        };
        rows.push(Marker {
            text: unescape(text),
            clients,
            first_ns,
            p50_ms,
            p99_ms,
            last_ms,
        });
    }
    Ok(rows)
}

/// Spread of arrivals over the markers that reached at least 99% of the best-reached one's
/// clients (as wsload's own fan-out line): (median, max) of first→p50, first→p99, first→last.
#[derive(Debug, Clone, Copy)]
pub struct Fanout {
    pub markers: usize,
    pub p50: (f64, f64),
    pub p99: (f64, f64),
    pub last: (f64, f64),
}

pub fn fanout<'a>(rows: impl Iterator<Item = &'a Marker>) -> Option<Fanout> {
    let rows: Vec<&Marker> = rows.collect();
    let best = rows.iter().map(|r| r.clients).max()?;
    let full: Vec<&&Marker> = rows
        .iter()
        .filter(|r| r.clients * 100 >= best * 99)
        .collect();
    let spread = |f: fn(&Marker) -> f64| {
        let mut v: Vec<f64> = full.iter().map(|r| f(r)).collect();
        v.sort_by(f64::total_cmp);
        (
            percentile(&v, 50.0).unwrap_or(0.0),
            v.last().copied().unwrap_or(0.0),
        )
    };
    Some(Fanout {
        markers: full.len(),
        p50: spread(|r| r.p50_ms),
        p99: spread(|r| r.p99_ms),
        last: spread(|r| r.last_ms),
    })
}

/// One frame a sampled client received.
#[derive(Debug)]
pub struct Frame {
    pub client: u32,
    pub at_ns: u64,
    pub text: String,
}

/// wsload's `--out` file, frame by frame.
pub fn frames(path: &Path) -> Result<impl Iterator<Item = Frame>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("wsload left no frames at {}", path.display()))?;
    Ok(std::io::BufReader::new(file)
        .lines()
        .map_while(|l| l.ok())
        .filter_map(|line| {
            let mut f = line.splitn(3, '\t');
            let client = f.next()?.parse().ok()?;
            let at_ns = f.next()?.parse().ok()?;
            Some(Frame {
                client,
                at_ns,
                text: unescape(f.next()?),
            })
        }))
}

/// wsload writes `\`, TAB, LF and CR as `\\`, `\t`, `\n` and `\r`.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// Nearest-rank percentile of sorted values.
pub fn percentile<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes_what_wsload_escapes() {
        assert_eq!(unescape(r#"{"a":"x\\"y"}"#), r#"{"a":"x\"y"}"#);
        assert_eq!(unescape(r"a\tb\nc\rd\\e"), "a\tb\nc\rd\\e");
    }

    #[test]
    fn nearest_rank() {
        let v: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&[7u32], 0.0), Some(7));
        assert_eq!(percentile::<u32>(&[], 50.0), None);
    }

    #[test]
    fn fanout_keeps_the_fully_reached_markers() {
        let m = |clients, last_ms| Marker {
            text: String::new(),
            clients,
            first_ns: 0,
            p50_ms: last_ms / 2.0,
            p99_ms: last_ms,
            last_ms,
        };
        let rows = [m(100, 10.0), m(100, 20.0), m(50, 500.0), m(99, 30.0)];
        let f = fanout(rows.iter()).expect("rows");
        assert_eq!(f.markers, 3);
        assert_eq!(f.last, (20.0, 30.0));
    }
}
