//! A delayed round as its spectators see it, against the same round followed live: every
//! change comes the delay late and otherwise exactly as it went out live (the move, its
//! reading time, the running clock shifted by the delay, the lever presses a change carried).

use super::service::{Emulator, Relay, Socket};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const TOKEN: &str = "arbiter-delay-1";
const DELAY_SECS: i64 = 4;

/// The change messages a socket got (carried presses each on its own, as pages see them),
/// by (change number, type): what a spectator's page is built from.
type Changes = BTreeMap<(i64, String), Value>;

fn note(changes: &mut Changes, m: Value) {
    let kind = m["type"].as_str().unwrap_or_default().to_string();
    if !matches!(
        kind.as_str(),
        "move" | "move_clock" | "truncate" | "result" | "game"
    ) {
        return;
    }
    let seq = m["seq"].as_i64().expect("a change's seq");
    changes.insert((seq, kind), m);
}

/// The message as a spectator `delay_ms` behind should get it: running clocks shifted.
fn shifted(mut m: Value, delay_ms: i64) -> Value {
    for at in ["/clock/at_ms", "/game/clock/at_ms"] {
        if let Some(v) = m.pointer_mut(at)
            && let Some(ms) = v.as_i64()
        {
            *v = Value::from(ms + delay_ms);
        }
    }
    m
}

#[test]
fn a_delayed_spectator_sees_every_change_as_it_went_out_live_the_delay_late() {
    // At 4x the lever is pressed 60–175 ms after the piece is put down: with a 120 ms settle
    // time some moves go out with the clock the press started, and some presses come after
    // their move is judged and travel alone or carried by the next change.
    let emu = Emulator::start(
        "serve-delay",
        &[
            "--boards", "3", "--speed", "4", "--noise", "0", "--seed", "3",
        ],
    );
    let db = format!("sqlite://{}/relay.db", emu.dir.display());
    let ports = emu.ports();
    let delay = DELAY_SECS.to_string();
    let r = Relay::serve(
        &emu.dir,
        &[
            "--db",
            &db,
            "--port",
            &ports,
            "--settle-ms",
            "120",
            "--delay",
            &delay,
            "--admin-token",
            TOKEN,
        ],
    );
    let url = r.ws_url("/api/rounds/1/ws");
    // The spectator first: its delay line starts with the changes of the last delay read
    // from the store (with no running clock: the store keeps none), and the changes the live
    // socket hears come after that.
    let mut delayed = Socket::connect(&url);
    std::thread::sleep(Duration::from_millis(500));
    let mut live = Socket::connect_as(&url, TOKEN);
    let (mut seen_live, mut seen_delayed) = (Changes::new(), Changes::new());
    let mut carried = 0;
    let watch = Duration::from_secs(20);
    let start = Instant::now();
    let end_live = start + watch;
    // The delayed socket is read for the delay and a second (presses held) longer.
    let end_delayed = end_live + Duration::from_millis(DELAY_SECS as u64 * 1000 + 1500);
    while Instant::now() < end_delayed {
        if Instant::now() < end_live
            && let Some(m) = live.next(Duration::from_millis(20))
        {
            note(&mut seen_live, m);
        }
        if let Some(m) = delayed.next(Duration::from_millis(20)) {
            carried += usize::from(delayed.last_frame_carried);
            note(&mut seen_delayed, m);
        }
    }
    let delay_ms = DELAY_SECS * 1000;
    let first_live = seen_live
        .keys()
        .next()
        .map(|k| k.0)
        .expect("no change heard live");
    let last_live = seen_live.keys().last().map_or(0, |k| k.0);
    let mut compared = 0;
    for (key, m) in &seen_live {
        let Some(got) = seen_delayed.get(key) else {
            panic!("the delayed spectator never got {key:?}: {m}");
        };
        assert_eq!(
            *got,
            shifted(m.clone(), delay_ms),
            "{key:?}: the delayed message differs from the live one"
        );
        compared += 1;
    }
    // Nothing the live feed did not send, in the span both followed.
    for key in seen_delayed.keys() {
        if (first_live..=last_live).contains(&key.0) {
            assert!(
                seen_live.contains_key(key),
                "the delayed spectator got {key:?}, which never went out live"
            );
        }
    }
    let moves = seen_live.keys().filter(|k| k.1 == "move").count();
    let clocked = seen_live
        .values()
        .filter(|m| m["type"] == "move" && m["clock"].is_object())
        .count();
    assert!(
        clocked >= 3,
        "only {clocked} moves went out with a running clock"
    );
    let presses = seen_live.keys().filter(|k| k.1 == "move_clock").count();
    assert!(moves >= 12, "only {moves} moves heard live");
    assert!(presses >= 3, "only {presses} lever presses heard live");
    assert!(carried > 0, "no delayed frame carried a press");
    assert!(compared >= moves);
}
