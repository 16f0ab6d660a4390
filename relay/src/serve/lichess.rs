//! Pushing a round to Lichess broadcasts (`--lichess-round ID --lichess-token TOKEN`):
//! `POST {lichess}/api/broadcast/round/{id}/push` with the games as PGN (`text/plain`), a
//! token with `study:write`.
//!
//! What Lichess documents and its code does (see `../shared/research/lichess-push-and-lcc.md`):
//! a request carries at most 100 games (more are dropped silently) and about 512 KiB (more is
//! refused); a game is matched to its chapter by `[GameId]` first, so a push may carry only
//! the games that changed; `[WhiteClock]`/`[BlackClock]` give the clocks of the last moves;
//! the reply lists each game with `moves` or an `error`; a 429 means wait a minute.
//!
//! So: each game gets a stable `[GameId]` (`relay-<game id>`), `[Round "r.b"]`, FIDE ids when
//! known, `[%clk]` after every move whose clock is known (never a made-up one), the two clock
//! tags, and Chess960 as `[Variant]` + `[FEN]` (the PGN writer's). Moves come from the store,
//! replayed from the start position, so an illegal move or a kings-in-the-centre gesture
//! (never recorded as a move) cannot go out. Games are sent when their PGN changed since
//! Lichess last took it, at most one request a second per Lichess round; boards 1–100 go to
//! the first Lichess round given, 101–200 to the second, and so on. After a 429 nothing is
//! sent for 60 s; after a network error or a 5xx, again after 1 s doubling to 60 s. What was
//! not taken stays due: the outbox is the store itself, and a restart sends every game once
//! more (Lichess matches them by `[GameId]`, so nothing is doubled). The round's broadcast
//! delay applies: Lichess gets what spectators here see.

use super::claims::Duty;
use super::lookup::Lookup;
use super::upstream::Pushing;
use super::views::cut_game;
use relay_store::{PushConflict, StoredGame, now_ms};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::time::Duration;

/// Games Lichess takes in one request (it drops the rest).
pub const GAMES_PER_REQUEST: usize = 100;
/// Bytes of PGN per request, under Lichess's 512 KiB body limit.
pub const BYTES_PER_REQUEST: usize = 500 * 1024;
/// Games one Lichess round shows.
pub const GAMES_PER_ROUND: u32 = 100;
/// Requests to one Lichess round are at least this far apart.
const SPACING_MS: i64 = 1000;
/// After a 429.
const SLOW_DOWN_MS: i64 = 60_000;

/// Where to push on Lichess.
#[derive(Clone, Debug)]
pub struct LichessTarget {
    /// Lichess round ids: boards 1–100 go to the first, 101–200 to the second, ...
    pub rounds: Vec<String>,
    pub token: String,
    /// `https://lichess.org`, or a stand-in for tests.
    pub url: String,
    /// The relay's round to push (default: the newest open round when the service starts).
    pub local_round: Option<i64>,
}

/// One game's PGN as Lichess gets it.
#[derive(Clone, Debug)]
pub struct Entry {
    pub game_id: i64,
    pub board_no: u32,
    pub pgn: String,
}

/// Cuts the games for one Lichess round into requests of at most [`GAMES_PER_REQUEST`]
/// games and [`BYTES_PER_REQUEST`] bytes, in board order.
pub fn requests(mut games: Vec<Entry>) -> Vec<Vec<Entry>> {
    games.sort_by_key(|e| e.board_no);
    let mut out: Vec<Vec<Entry>> = Vec::new();
    let mut bytes = 0;
    for e in games {
        let fits = out.last().is_some_and(|last| {
            last.len() < GAMES_PER_REQUEST && bytes + e.pgn.len() + 2 <= BYTES_PER_REQUEST
        });
        if !fits {
            out.push(Vec::new());
            bytes = 0;
        }
        bytes += e.pgn.len() + 2;
        if let Some(last) = out.last_mut() {
            last.push(e);
        }
    }
    out
}

/// Which of the configured Lichess rounds a board goes to (`None`: more boards than rounds).
pub fn lichess_round_of(board_no: u32, rounds: usize) -> Option<usize> {
    let i = ((board_no.max(1) - 1) / GAMES_PER_ROUND) as usize;
    (i < rounds).then_some(i)
}

/// The PGN of one game for Lichess.
pub fn game_pgn(g: &StoredGame, event: &str, site: Option<&str>, round: &str) -> String {
    let mut game = relay_store::to_game(g, event, site, round);
    game.tags.set("GameId", format!("relay-{}", g.id));
    // The clocks as the last move of each side left them (H:MM:SS), of the moves that go
    // out (the writer's replay stops at a move that is not legal).
    let out = &g.moves[..game.moves.len().min(g.moves.len())];
    for (tag, white) in [("WhiteClock", true), ("BlackClock", false)] {
        let last = out
            .iter()
            .rev()
            .filter(|m| (m.ply % 2 == 1) == white)
            .find_map(|m| m.clk_ms);
        if let Some(ms) = last {
            game.tags
                .set(tag, relay_core::clock_time::ClockTime(ms).to_string());
        }
    }
    let opts = relay_core::pgn::WriteOptions::default();
    relay_core::pgn::write_game(&game, &opts)
        .trim_end()
        .to_string()
}

fn hash_of(s: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// What Lichess answered one request.
enum Answer {
    /// Per game, in order: `None` when taken, else Lichess's error.
    Ok(Vec<Option<String>>),
    SlowDown,
    Refused(u16, String),
    Failed(String),
}

fn post(url: &str, token: &str, body: String) -> Answer {
    let plain = "text/plain; charset=utf-8";
    match super::upstream::post(url, token, plain, body.as_bytes(), Duration::from_secs(20)) {
        Err(e) => Answer::Failed(e),
        Ok(r) if r.status == 200 => match serde_json::from_str::<serde_json::Value>(&r.text) {
            Ok(v) => Answer::Ok(
                v["games"]
                    .as_array()
                    .map(|gs| {
                        gs.iter()
                            .map(|g| g["error"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            Err(e) => Answer::Failed(format!("the answer does not read: {e}")),
        },
        Ok(r) if r.status == 429 => Answer::SlowDown,
        Ok(r) => Answer::Refused(r.status, r.error()),
    }
}

/// The round's games as Lichess should have them now (the broadcast delay applied).
async fn entries(
    lookup: &Lookup,
    t: &relay_store::TournamentInfo,
    info: &relay_store::RoundInfo,
    delay: i64,
) -> Result<Vec<Entry>, relay_store::StoreError> {
    let cut = (delay > 0).then(|| now_ms() - delay);
    let games = lookup.store.round_games(info.id).await?;
    Ok(games
        .iter()
        .map(|g| {
            let g = cut_game(g, cut);
            Entry {
                game_id: g.id,
                board_no: g.pairing.board_no,
                pgn: game_pgn(&g, &t.name, t.site.as_deref(), &info.number),
            }
        })
        .collect())
}

/// Pushes one round to Lichess for the life of the service.
pub async fn push(shared: Pushing, target: LichessTarget) {
    let slot = shared.targets.register(
        format!("lichess round {}", target.rounds.join(", ")),
        "lichess",
    );
    let lookup = &shared.lookup;
    let round = match target.local_round {
        Some(r) => r,
        None => loop {
            match lookup.store.current_round().await {
                Ok(Some(r)) => break r.id,
                Ok(None) => {
                    slot.failed("no round to push yet".into());
                }
                Err(e) => slot.failed(format!("the store: {e}")),
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        },
    };
    tracing::info!(round, lichess = %target.rounds.join(","), "pushing the round to Lichess");
    let base = target.url.trim_end_matches('/').to_string();
    // What Lichess took of each game (a hash of the PGN sent).
    let mut taken: HashMap<i64, u64> = HashMap::new();
    let mut errors: HashMap<i64, PushConflict> = HashMap::new();
    let mut last_request: HashMap<usize, i64> = HashMap::new();
    let mut not_before: i64 = 0;
    let mut backoff_ms: i64 = 0;
    let mut warned_beyond = false;
    // The round's change number when Lichess last had every game as it stood.
    let mut settled: Option<(i64, u64)> = None;
    let mut news = shared.news.clone();
    let mut cycle_ms: i64 = 0;
    let mut duty = Duty::new(format!("relay-push:lichess:{}", target.rounds.join(",")));
    let mut standing_by = false;
    loop {
        let _ = tokio::time::timeout(Duration::from_secs(1), news.changed()).await;
        // One look at the round a second at most: a thousand boards commit many times a
        // second, and each look writes the round's PGN.
        let since = now_ms() - cycle_ms;
        if since < SPACING_MS {
            tokio::time::sleep(Duration::from_millis((SPACING_MS - since) as u64)).await;
        }
        cycle_ms = now_ms();
        news.mark_unchanged();
        if !duty.mine(&lookup.store).await {
            if !standing_by {
                tracing::info!(lichess = %target.rounds.join(","), "another relay pushes the round to Lichess: standing by");
                slot.edit(|t| t.standing_by = true);
            }
            standing_by = true;
            continue;
        }
        if standing_by {
            // Taking over: what Lichess took from the other relay is not known here, so
            // every game goes once more (Lichess matches them by `[GameId]`).
            standing_by = false;
            taken.clear();
            settled = None;
            slot.edit(|t| t.standing_by = false);
            tracing::info!(lichess = %target.rounds.join(","), "this relay pushes the round to Lichess now");
        }
        if now_ms() < not_before {
            continue;
        }
        let looked = async {
            let info = lookup.store.round(round).await?;
            let t = lookup.store.tournament(info.tournament_id).await?;
            let delay = lookup.delay_ms(&info).await?;
            Ok::<_, relay_store::StoreError>((info, t, delay))
        };
        let (info, t, delay) = match looked.await {
            Ok(x) => x,
            Err(e) => {
                slot.failed(format!("the store: {e}"));
                continue;
            }
        };
        // Nothing changed since Lichess had it all (no change, no edit of the tags the games
        // take from the tournament and round), and no delayed move came due: the PGN of the
        // round is not written again.
        let key = (
            info.seq,
            hash_of(&format!(
                "{:?}",
                (&t.name, &t.site, &t.time_control, &info.number, &info.date)
            )),
        );
        if delay == 0 && settled == Some(key) {
            continue;
        }
        let all = match entries(lookup, &t, &info, delay).await {
            Ok(e) => e,
            Err(e) => {
                slot.failed(format!("the store: {e}"));
                continue;
            }
        };
        let due: Vec<Entry> = all
            .into_iter()
            .filter(|e| taken.get(&e.game_id) != Some(&hash_of(&e.pgn)))
            .collect();
        settled = due.is_empty().then_some(key);
        slot.edit(|t| t.queued = due.len() as i64);
        let mut by_round: HashMap<usize, Vec<Entry>> = HashMap::new();
        for e in due {
            match lichess_round_of(e.board_no, target.rounds.len()) {
                Some(i) => by_round.entry(i).or_default().push(e),
                None => {
                    if !warned_beyond {
                        tracing::warn!(
                            board = e.board_no,
                            "this board has no Lichess round: give one --lichess-round per 100 boards"
                        );
                        warned_beyond = true;
                    }
                }
            }
        }
        let mut order: Vec<usize> = by_round.keys().copied().collect();
        order.sort_unstable();
        'rounds: for i in order {
            if now_ms() - last_request.get(&i).copied().unwrap_or(0) < SPACING_MS {
                continue;
            }
            let Some(games) = by_round.remove(&i) else {
                continue;
            };
            let url = format!("{base}/api/broadcast/round/{}/push", target.rounds[i]);
            for chunk in requests(games) {
                let body = chunk
                    .iter()
                    .map(|e| e.pgn.as_str())
                    .collect::<Vec<_>>()
                    .join("\n\n")
                    + "\n";
                last_request.insert(i, now_ms());
                let (u, tok) = (url.clone(), target.token.clone());
                let answer = tokio::task::spawn_blocking(move || post(&u, &tok, body))
                    .await
                    .unwrap_or_else(|e| Answer::Failed(e.to_string()));
                match answer {
                    Answer::Ok(results) => {
                        backoff_ms = 0;
                        for (k, e) in chunk.iter().enumerate() {
                            // A game the answer does not list was not taken: due again.
                            match results.get(k) {
                                None => continue,
                                Some(None) => {
                                    errors.remove(&e.game_id);
                                }
                                Some(Some(err)) => {
                                    if !errors.contains_key(&e.game_id) {
                                        tracing::warn!(board = e.board_no, error = %err, "Lichess refused a game");
                                    }
                                    errors.insert(
                                        e.game_id,
                                        PushConflict {
                                            game_id: e.game_id,
                                            cloud_game_id: 0,
                                            board_no: e.board_no,
                                            message: format!(
                                                "Lichess refused board {}: {err}",
                                                e.board_no
                                            ),
                                        },
                                    );
                                }
                            }
                            // Taken or refused, it is not sent again until it changes.
                            taken.insert(e.game_id, hash_of(&e.pgn));
                        }
                        let mut list: Vec<PushConflict> = errors.values().cloned().collect();
                        list.sort_by_key(|c| c.board_no);
                        slot.edit(|t| {
                            t.last_ok_ms = Some(now_ms());
                            t.last_error = None;
                            t.waiting_until_ms = None;
                            t.delivered_batches += 1;
                            t.delivered_changes += chunk.len() as u64;
                            t.conflicts = list;
                        });
                    }
                    Answer::SlowDown => {
                        not_before = now_ms() + SLOW_DOWN_MS;
                        slot.failed("Lichess asked to slow down (429): waiting a minute".into());
                        slot.edit(|t| t.waiting_until_ms = Some(not_before));
                        break 'rounds;
                    }
                    Answer::Refused(status, msg) => {
                        let what = match status {
                            401 | 403 => format!(
                                "Lichess refused the token ({status}): {msg} (it needs the study:write scope and a round this account may push to)"
                            ),
                            _ => format!("Lichess answered {status}: {msg}"),
                        };
                        slot.failed(what);
                        backoff_ms = (backoff_ms * 2).clamp(1000, 60_000);
                        not_before = now_ms() + backoff_ms;
                        break 'rounds;
                    }
                    Answer::Failed(e) => {
                        slot.failed(format!("cannot reach Lichess: {e}"));
                        backoff_ms = (backoff_ms * 2).clamp(1000, 60_000);
                        not_before = now_ms() + backoff_ms;
                        break 'rounds;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(board: u32, bytes: usize) -> Entry {
        Entry {
            game_id: i64::from(board),
            board_no: board,
            pgn: "x".repeat(bytes),
        }
    }

    #[test]
    fn requests_hold_at_most_100_games_and_512_kib() {
        let games: Vec<Entry> = (1..=250).rev().map(|b| entry(b, 100)).collect();
        let reqs = requests(games);
        assert_eq!(
            reqs.iter().map(Vec::len).collect::<Vec<_>>(),
            [100, 100, 50]
        );
        assert_eq!(reqs[0][0].board_no, 1, "in board order");
        let big: Vec<Entry> = (1..=10).map(|b| entry(b, 120 * 1024)).collect();
        let reqs = requests(big);
        assert!(
            reqs.iter()
                .all(|r| r.iter().map(|e| e.pgn.len() + 2).sum::<usize>() <= BYTES_PER_REQUEST)
        );
        assert_eq!(reqs.iter().map(Vec::len).sum::<usize>(), 10);
    }

    #[test]
    fn a_game_carries_its_id_round_clocks_fide_ids_and_chess960_start() {
        let start = "bqnrkrnb/pppppppp/8/8/8/8/PPPPPPPP/BQNRKRNB w KQkq - 0 1";
        let mv = |ply, uci: &str, clk| relay_store::StoredMove {
            ply,
            san: String::new(),
            uci: uci.into(),
            clk_ms: clk,
            emt_ms: None,
            accepted_at_ms: 0,
            fen_after: String::new(),
        };
        let g = StoredGame {
            id: 42,
            round_id: 1,
            pairing: relay_store::Pairing {
                board_no: 7,
                white: relay_store::Player {
                    name: Some("Moss, M".into()),
                    fide_id: Some(400_017),
                    ..Default::default()
                },
                black: Default::default(),
            },
            result: "*".into(),
            termination: None,
            status: "live".into(),
            start_fen: Some(start.into()),
            chess960: true,
            orientation: None,
            result_at_ms: None,
            edits: 0,
            moves: vec![
                mv(1, "g2g3", Some(5_395_000)),
                mv(2, "g7g6", None),
                // Not legal here: it and anything after it never go out.
                mv(3, "e1e8", Some(1)),
            ],
        };
        let pgn = game_pgn(&g, "Open", Some("Hall"), "3");
        for want in [
            "[GameId \"relay-42\"]",
            "[Round \"3.7\"]",
            "[WhiteFideId \"400017\"]",
            "[Variant \"Chess960\"]",
            &format!("[FEN \"{start}\"]"),
            "[WhiteClock \"1:29:55\"]",
            "1. g3 {[%clk 1:29:55]} 1... g6 *",
        ] {
            assert!(pgn.contains(want), "{want} missing in\n{pgn}");
        }
        assert!(
            !pgn.contains("BlackClock"),
            "no clock was read for Black:\n{pgn}"
        );
        assert!(!pgn.contains("2."), "the illegal move went out:\n{pgn}");
    }

    #[test]
    fn boards_go_to_lichess_rounds_by_hundreds() {
        assert_eq!(lichess_round_of(1, 2), Some(0));
        assert_eq!(lichess_round_of(100, 2), Some(0));
        assert_eq!(lichess_round_of(101, 2), Some(1));
        assert_eq!(lichess_round_of(201, 2), None);
    }
}
