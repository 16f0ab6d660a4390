//! `relay ports`: what serial ports there are, and which carry DGT boards.

use anyhow::Result;
use boards::protocol::LineMode;
use boards::transport::{ports, probe};
use clap::Args;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct PortsArgs {
    /// Open each port that looks like a DGT board and ask it for its serial number and
    /// version, as a single board and as a bus. With --all, probe every port.
    #[arg(long)]
    probe: bool,
    /// With --probe: probe every port, not only those that look like DGT boards.
    #[arg(long)]
    all: bool,
    /// With --probe: ask as a bus first (serial boards chained on one line). Without it a
    /// port is asked as a single board first, which is right for USB and Bluetooth boards;
    /// on a chain every board would answer at once.
    #[arg(long)]
    bus: bool,
    /// More places to look, e.g. /dev/rfcomm0 or a directory of links like /tmp/dgt/* .
    #[arg(long = "scan", env = "RELAY_SCAN", value_delimiter = ',')]
    scan: Vec<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: PortsArgs) -> Result<()> {
    let list = ports::list(&args.scan);
    let mut rows = Vec::new();
    for p in &list {
        let probed = if args.probe
            && (args.all || p.looks_like_dgt || args.scan.iter().any(|s| !s.is_empty()))
        {
            Some(probe(
                &p.path,
                if args.bus {
                    LineMode::Bus
                } else {
                    LineMode::Single
                },
                Duration::from_millis(700),
            ))
        } else {
            None
        };
        rows.push((p, probed));
    }
    if args.json {
        let out: Vec<serde_json::Value> = rows
            .iter()
            .map(|(p, probed)| {
                let mut v = serde_json::to_value(p).unwrap_or_default();
                if let Some(r) = probed {
                    v["probe"] = match r {
                        Ok(r) => serde_json::to_value(r).unwrap_or_default(),
                        Err(e) => serde_json::json!({ "error": e.to_string() }),
                    };
                }
                v
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if rows.is_empty() {
        println!("no serial ports found (use --scan PATH to add Bluetooth or emulated ports)");
    }
    for (p, probed) in rows {
        let usb = match (p.vendor_id, p.product_id) {
            (Some(v), Some(pid)) => format!(" usb {v:04x}:{pid:04x}"),
            _ => String::new(),
        };
        let product = p
            .product
            .as_deref()
            .map(|s| format!(" \"{s}\""))
            .unwrap_or_default();
        let mark = if p.looks_like_dgt {
            "  [looks like DGT]"
        } else {
            ""
        };
        println!("{} ({}{usb}{product}){mark}", p.path, p.kind);
        match probed {
            Some(Ok(r)) if !r.serials.is_empty() => {
                let mode = match r.mode {
                    Some(LineMode::Bus) => "bus",
                    _ => "single board",
                };
                let version = r
                    .version
                    .map(|(a, b)| format!(", version {a}.{b}"))
                    .unwrap_or_default();
                println!(
                    "    e-board answered ({mode}): serial {}{version}",
                    r.serials.join(", ")
                );
            }
            Some(Ok(_)) => println!("    no e-board answered"),
            Some(Err(e)) => println!("    cannot probe: {e}"),
            None => {}
        }
    }
    Ok(())
}
