//! `relay sniff PORT`: an operator's window on a port. One JSON object per line for every
//! decoded message and every change of the port's state, until Ctrl-C.

use anyhow::Result;
use boards::protocol::{
    AckMeaning, ClockMessage, ClockReading, ClockSide, LineMode, Message, Orientation, PieceCode,
    SideTime,
};
use boards::transport::{PortEvent, SessionConfig};
use clap::Args;
use serde_json::{Value, json};
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Args, Debug)]
pub struct SniffArgs {
    /// The serial port (e.g. /dev/ttyUSB0, /dev/rfcomm0, or an emulator's pseudo-terminal).
    port: String,
    /// The port carries a chain of serial boards: drive it in bus mode.
    #[arg(long)]
    bus: bool,
    /// Include each message's raw bytes (hex).
    #[arg(long)]
    raw: bool,
}

pub fn run(args: SniffArgs) -> Result<()> {
    let stop = super::stop_flag()?;
    let mode = if args.bus {
        LineMode::Bus
    } else {
        LineMode::Single
    };
    let cfg = SessionConfig::new(&args.port, mode);
    let stdout = std::io::stdout();
    let raw = args.raw;
    boards::transport::run(
        cfg,
        &mut |event| {
            let line = event_json(&event, raw);
            let mut out = stdout.lock();
            // A closed stdout (e.g. piped into `head`) ends nothing important; ignore it.
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        },
        &stop,
    );
    Ok(())
}

fn side_json(t: &SideTime) -> Value {
    json!({
        "seconds": t.seconds,
        "flag_fallen": t.flag_fallen,
        "flag_shown": t.flag_shown,
        "time_per_move": t.time_per_move,
    })
}

/// A clock side as the JSON names it.
fn side_name(side: ClockSide) -> &'static str {
    match side {
        ClockSide::Left => "left",
        ClockSide::Right => "right",
    }
}

fn reading_json(r: &ClockReading) -> Value {
    json!({
        "type": "clock",
        "left": side_json(&r.left),
        "right": side_json(&r.right),
        "running": r.running_side().map(side_name),
        "battery_low": r.status.battery_low,
        "no_clock": r.status.no_clock,
    })
}

fn piece_json(p: PieceCode) -> Value {
    match p {
        PieceCode::Empty => Value::Null,
        other => Value::String(other.to_char().to_string()),
    }
}

/// The JSON object for one message (without time and board).
pub fn message_json(m: &Message) -> Value {
    match m {
        Message::BoardDump { placement } => json!({
            "type": "board",
            "fen": placement.board_fen(Orientation::Normal),
            "magic": placement.magic_pieces().iter().map(|(sq, p)| json!({"square": sq.to_string(), "piece": p})).collect::<Vec<_>>(),
        }),
        Message::FieldUpdate { square, piece } => {
            json!({ "type": "field", "square": square.to_string(), "piece": piece_json(*piece) })
        }
        Message::Clock {
            clock: ClockMessage::Time(r),
        } => reading_json(r),
        Message::Clock {
            clock: ClockMessage::Ack(a),
        } => {
            let meaning = match a.meaning() {
                AckMeaning::Command { command, ok } => json!({"command": command, "ok": ok}),
                AckMeaning::Version { major, minor } => {
                    json!({"version": format!("{major}.{minor}")})
                }
                AckMeaning::Ready => json!({"ready": true}),
                AckMeaning::Button { button } => json!({"button": button}),
                AckMeaning::Other { code } => json!({"code": code}),
            };
            json!({ "type": "clock_ack", "ack": meaning })
        }
        Message::Clock {
            clock: ClockMessage::Blank,
        } => json!({ "type": "clock_blank" }),
        Message::SerialNumber { serial } => json!({ "type": "serial", "serial": serial }),
        Message::LongSerialNumber { serial } => json!({ "type": "long_serial", "serial": serial }),
        Message::Trademark { text } => json!({ "type": "trademark", "text": text }),
        Message::Version { major, minor } => {
            json!({ "type": "version", "version": format!("{major}.{minor}") })
        }
        Message::BusAddress { address } => json!({ "type": "bus_address", "address": address }),
        Message::Battery { status } => json!({ "type": "battery", "status": status }),
        Message::EeMoves { records } => json!({ "type": "ee_moves", "records": records }),
        Message::ClockRecord { side, seconds } => json!({
            "type": "clock_record",
            "side": side_name(*side),
            "seconds": seconds,
            "time": boards::protocol::clock::format_hms(*seconds),
        }),
        Message::DraughtsDump { squares } => {
            json!({ "type": "draughts_board", "squares": squares })
        }
        Message::Unknown { id, payload } => {
            json!({ "type": "unknown", "id": id, "payload": hex(payload) })
        }
        Message::Malformed {
            id,
            payload,
            reason,
        } => {
            json!({ "type": "malformed", "id": id, "payload": hex(payload), "reason": reason })
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn unix_ms(t: SystemTime) -> u128 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// The JSON line for one session event.
pub fn event_json(e: &PortEvent, raw: bool) -> Value {
    let now = unix_ms(SystemTime::now());
    match e {
        PortEvent::Message {
            serial,
            message,
            raw: bytes,
            at,
        } => {
            let mut v = message_json(message);
            v["board"] = json!(serial);
            v["time_ms"] = json!(unix_ms(*at));
            if raw {
                v["raw"] = json!(hex(bytes));
            }
            v
        }
        PortEvent::Garbage { bytes } => {
            json!({ "type": "garbage", "time_ms": now, "bytes": hex(bytes) })
        }
        other => {
            let mut v = serde_json::to_value(other).unwrap_or_default();
            if let Some(kind) = v.get("event").cloned() {
                v["type"] = kind;
                if let Some(o) = v.as_object_mut() {
                    o.remove("event");
                }
            }
            v["time_ms"] = json!(now);
            v
        }
    }
}
