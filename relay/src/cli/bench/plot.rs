//! `relay bench --sweep-boards/--sweep-clients … --plot FILE.svg`: how a figure grows with the
//! hall or the crowd, drawn as one small chart per figure (a plain SVG file, no library), so a
//! reader sees the slope and not only a point. Each chart has its own vertical scale from 0;
//! the values are written beside their points, and a run that gave no figure leaves a gap.

use std::fmt::Write;

/// One figure measured at every point of a sweep (`None`: that run gave none).
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub unit: String,
    pub values: Vec<Option<f64>>,
}

const PANEL_W: f64 = 320.0;
const PANEL_H: f64 = 200.0;
const MARGIN_L: f64 = 56.0;
const MARGIN_T: f64 = 40.0;
const MARGIN_B: f64 = 44.0;
const GAP: f64 = 24.0;

/// The SVG text: `title`, then a chart per series side by side, `xs` on every horizontal axis
/// (each where its value puts it, labelled `x_label`).
pub fn svg(title: &str, x_label: &str, xs: &[f64], series: &[Series]) -> String {
    let n = series.len().max(1) as f64;
    let width = n * (MARGIN_L + PANEL_W + GAP) + GAP;
    let height = MARGIN_T + PANEL_H + MARGIN_B + 24.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{GAP}" y="20" font-size="14" font-weight="bold">{}</text>"#,
        escape(title)
    );
    for (i, s) in series.iter().enumerate() {
        let left = GAP + i as f64 * (MARGIN_L + PANEL_W + GAP) + MARGIN_L;
        panel(&mut out, left, x_label, xs, s);
    }
    out.push_str("</svg>\n");
    out
}

/// A chart: axes, the scale's top value, the points joined in order, each value written.
fn panel(out: &mut String, left: f64, x_label: &str, xs: &[f64], s: &Series) {
    let top = MARGIN_T;
    let bottom = MARGIN_T + PANEL_H;
    let max = s
        .values
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let scale_top = nice_ceiling(max);
    // The sizes stand where their values put them, so the slope is the real one.
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(*x), hi.max(*x))
        });
    let x_at = |i: usize| {
        if hi > lo {
            left + 16.0 + (PANEL_W - 32.0) * (xs[i] - lo) / (hi - lo)
        } else {
            left + PANEL_W / 2.0
        }
    };
    let y_at = |v: f64| bottom - PANEL_H * (v / scale_top).clamp(0.0, 1.0);
    let _ = writeln!(
        out,
        r#"<text x="{left}" y="{:.0}" font-weight="bold">{} ({})</text>"#,
        top - 8.0,
        escape(&s.name),
        escape(&s.unit)
    );
    let _ = writeln!(
        out,
        r##"<path d="M{left} {top} V{bottom} H{:.1}" fill="none" stroke="#444"/>"##,
        left + PANEL_W
    );
    for (v, y) in [(0.0, bottom), (scale_top, top)] {
        let _ = writeln!(
            out,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#444">{}</text>"##,
            left - 6.0,
            y + 4.0,
            number(v)
        );
    }
    for (i, x) in xs.iter().enumerate() {
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x_at(i),
            bottom + 16.0,
            number(*x)
        );
    }
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#444">{}</text>"##,
        left + PANEL_W / 2.0,
        bottom + 34.0,
        escape(x_label)
    );
    // The line is broken where a run gave no figure.
    let mut d = String::new();
    let mut pen_down = false;
    for (i, v) in s.values.iter().enumerate().take(xs.len()) {
        match v.filter(|v| v.is_finite()) {
            Some(v) => {
                let _ = write!(
                    d,
                    "{}{:.1} {:.1} ",
                    if pen_down { "L" } else { "M" },
                    x_at(i),
                    y_at(v)
                );
                pen_down = true;
            }
            None => pen_down = false,
        }
    }
    if !d.is_empty() {
        let _ = writeln!(
            out,
            r##"<path d="{}" fill="none" stroke="#1f6feb" stroke-width="2"/>"##,
            d.trim_end()
        );
    }
    for (i, v) in s.values.iter().enumerate().take(xs.len()) {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            let (x, y) = (x_at(i), y_at(v));
            let _ = writeln!(
                out,
                r##"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="#1f6feb"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                y - 8.0,
                number(v)
            );
        }
    }
}

/// The scale's top: the smallest of 1, 2, 2.5 or 5 times a power of ten at or above `v`.
fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10_f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|c| *c >= v)
        .unwrap_or(10.0 * p)
}

/// A figure as the charts write it: whole above 100, else up to three significant digits.
fn number(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::{Series, nice_ceiling, number, svg};

    #[test]
    fn every_value_is_drawn_and_written_and_a_missing_one_breaks_the_line() {
        let xs = [250.0, 500.0, 1000.0, 2000.0];
        let series = vec![
            Series {
                name: "CPU".into(),
                unit: "cores".into(),
                values: vec![Some(0.05), Some(0.09), Some(0.17), Some(0.33)],
            },
            Series {
                name: "p99 beyond settle".into(),
                unit: "ms".into(),
                values: vec![Some(3.0), None, Some(4.0), Some(14.0)],
            },
        ];
        let text = svg("real pace <boards>", "boards", &xs, &series);
        assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(text.trim_end().ends_with("</svg>"));
        assert!(text.contains("real pace &lt;boards&gt;"), "escaped title");
        for label in ["0.05", "0.09", "0.17", "0.33", "250", "2000", "14"] {
            assert!(
                text.contains(&format!(">{label}</text>")),
                "{label} missing"
            );
        }
        assert_eq!(text.matches("<circle").count(), 7, "one point per value");
        // The CPU line is one stroke; the p99 line starts again after its gap.
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("stroke=\"#1f6feb\""))
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].matches('M').count(), 1);
        assert_eq!(lines[1].matches('M').count(), 2);
        // An XML reader that is not ours takes the file whole.
        let file = std::env::temp_dir().join(format!("relay-plot-{}.svg", std::process::id()));
        std::fs::write(&file, &text).expect("write the chart");
        let parsed = std::process::Command::new("python3")
            .args(["-c", "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); print(r.tag)"])
            .arg(&file)
            .output();
        let _ = std::fs::remove_file(&file);
        match parsed {
            Ok(o) => {
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                assert_eq!(
                    String::from_utf8_lossy(&o.stdout).trim(),
                    "{http://www.w3.org/2000/svg}svg"
                );
            }
            Err(e) => {
                assert!(
                    std::env::var_os("RELAY_REQUIRE_ALL").is_none(),
                    "python3 is needed to read the chart (RELAY_REQUIRE_ALL=1): {e}"
                );
                println!("skipped the outside XML check: no python3 ({e})");
            }
        }
        // Every point lies inside its chart.
        for l in text.lines().filter(|l| l.contains("<circle")) {
            let cy: f64 = l
                .split("cy=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .and_then(|v| v.parse().ok())
                .expect("cy");
            assert!((40.0..=240.0).contains(&cy), "{l}");
        }
    }

    #[test]
    fn scales_end_on_round_numbers() {
        assert_eq!(nice_ceiling(0.33), 0.5);
        assert_eq!(nice_ceiling(14.0), 20.0);
        assert_eq!(nice_ceiling(2.0), 2.0);
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(number(0.170), "0.17");
        assert_eq!(number(1.2346), "1.235");
        assert_eq!(number(19000.0), "19000");
    }
}
