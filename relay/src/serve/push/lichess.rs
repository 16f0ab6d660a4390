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

use super::http::{Post, Reply, Unanswered};
use super::run::{
    self, Failure, Next, NotStarted, Pace, Pushing, Report, Request, Target, Verdict, Wait,
};
use super::status::Slot;
use crate::serve::lookup::Lookup;
use crate::serve::views::cut_game;
use relay_store::{GameId, RoundId, Seq};
use relay_store::{PushConflict, RoundInfo, StoreError, StoredGame, TournamentInfo, now_ms};
use std::collections::{HashMap, VecDeque};
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
/// After a network error or a refusal.
const BACK_OFF: Wait = Wait::BackOff {
    first: Duration::from_secs(1),
    most: Duration::from_secs(60),
};

/// Where to push on Lichess.
#[derive(Clone, Debug)]
pub struct LichessTarget {
    /// Lichess round ids: boards 1–100 go to the first, 101–200 to the second, ...
    pub rounds: Vec<String>,
    pub token: String,
    /// `https://lichess.org`, or a stand-in for tests.
    pub url: String,
    /// The relay's round to push (default: the newest open round when the service starts).
    pub local_round: Option<RoundId>,
}

/// Pushes one round to Lichess for the life of the service.
pub async fn push(pushing: Pushing, target: LichessTarget) {
    let lichess = Lichess::new(pushing.lookup.clone(), target);
    run::push(pushing, lichess).await;
}

/// One game's PGN as Lichess gets it.
#[derive(Clone, Debug)]
pub struct Entry {
    pub game_id: GameId,
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

/// The round's games as Lichess should have them now (the broadcast delay applied).
async fn entries(
    lookup: &Lookup,
    t: &TournamentInfo,
    info: &RoundInfo,
    delay: i64,
) -> Result<Vec<Entry>, StoreError> {
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

fn store_failed(e: StoreError) -> Failure {
    // The next look (a second on) tries again.
    Failure {
        error: format!("the store: {e}"),
        wait: Wait::Usual,
    }
}

/// A round pushed to Lichess as a push target.
#[derive(Debug)]
pub struct Lichess {
    lookup: Lookup,
    target: LichessTarget,
    base: String,
    /// The relay's round pushed (found at start).
    round: RoundId,
    /// What Lichess took of each game (a hash of the PGN sent).
    taken: HashMap<GameId, u64>,
    /// The games Lichess refused, with why.
    errors: HashMap<GameId, PushConflict>,
    /// When each Lichess round was last sent a request.
    last_request: HashMap<usize, i64>,
    warned_beyond: bool,
    /// The round's change number (and a hash of the tags its games take from the tournament
    /// and round) when Lichess last had every game as it stood.
    settled: Option<(Seq, u64)>,
    /// This look's games due, by Lichess round, in order.
    due: VecDeque<(usize, Vec<Entry>)>,
    /// The requests to one Lichess round still to go, and its index.
    requests: VecDeque<Vec<Entry>>,
    sending_to: usize,
    /// No Lichess round was given: the ones `relay lichess setup` made are read at start.
    from_setup: bool,
}

impl Lichess {
    pub fn new(lookup: Lookup, target: LichessTarget) -> Lichess {
        let from_setup = target.rounds.is_empty();
        Lichess {
            lookup,
            base: target.url.trim_end_matches('/').to_string(),
            target,
            round: RoundId::default(),
            taken: HashMap::new(),
            errors: HashMap::new(),
            last_request: HashMap::new(),
            warned_beyond: false,
            settled: None,
            due: VecDeque::new(),
            requests: VecDeque::new(),
            sending_to: 0,
            from_setup,
        }
    }

    /// Lichess's answer to one request, read.
    fn taken(&mut self, chunk: &[Entry], results: &[Option<String>]) -> Report {
        for (k, e) in chunk.iter().enumerate() {
            // A game the answer does not list was not taken: due again.
            match results.get(k) {
                None => continue,
                Some(None) => {
                    self.errors.remove(&e.game_id);
                }
                Some(Some(err)) => {
                    if !self.errors.contains_key(&e.game_id) {
                        tracing::warn!(board = e.board_no, error = %err, "Lichess refused a game");
                    }
                    self.errors.insert(
                        e.game_id,
                        PushConflict {
                            game_id: e.game_id.get(),
                            cloud_game_id: 0,
                            board_no: e.board_no,
                            message: format!("Lichess refused board {}: {err}", e.board_no),
                            clash: false,
                        },
                    );
                }
            }
            // Taken or refused, it is not sent again until it changes.
            self.taken.insert(e.game_id, hash_of(&e.pgn));
        }
        let mut conflicts: Vec<PushConflict> = self.errors.values().cloned().collect();
        conflicts.sort_by_key(|c| c.board_no);
        Report {
            changes: chunk.len() as u64,
            conflicts,
            queued: None,
        }
    }
}

impl Target for Lichess {
    const KIND: &'static str = "lichess";
    // One look at the round a second at most: a thousand boards commit many times a
    // second, and each look writes the round's PGN.
    const PACE: Pace = Pace {
        news_within: Duration::from_secs(1),
        looks_apart: Duration::from_millis(SPACING_MS as u64),
    };
    type Carries = Vec<Entry>;

    fn name(&self) -> String {
        if self.target.rounds.is_empty() {
            "lichess (the rounds relay lichess setup made)".into()
        } else {
            format!("lichess round {}", self.target.rounds.join(", "))
        }
    }

    fn duty(&self) -> String {
        format!("relay-push:lichess:{}", self.target.rounds.join(","))
    }

    async fn start(&mut self) -> Result<(), NotStarted> {
        self.round = match self.target.local_round {
            Some(r) => r,
            None => match self.lookup.store.current_round().await {
                Ok(Some(r)) => r.id,
                Ok(None) => return Err("no round to push yet".into()),
                Err(e) => return Err(format!("the store: {e}").into()),
            },
        };
        if self.from_setup {
            // No --lichess-round: the rounds `relay lichess setup` made for this round.
            self.target.rounds = match self.lookup.store.lichess_rounds(self.round).await {
                Ok(ids) if !ids.is_empty() => ids,
                Ok(_) => {
                    return Err(format!(
                        "round {} has no Lichess rounds yet (relay lichess setup makes them)",
                        self.round
                    )
                    .into());
                }
                Err(e) => return Err(format!("the store: {e}").into()),
            };
        }
        tracing::info!(round = %self.round, lichess = %self.target.rounds.join(","), "pushing the round to Lichess");
        Ok(())
    }

    fn standing_by(&mut self) {
        tracing::info!(lichess = %self.target.rounds.join(","), "another relay pushes the round to Lichess: standing by");
    }

    fn taken_over(&mut self) {
        // What Lichess took from the other relay is not known here, so every game goes once
        // more (Lichess matches them by `[GameId]`).
        self.taken.clear();
        self.settled = None;
        tracing::info!(lichess = %self.target.rounds.join(","), "this relay pushes the round to Lichess now");
    }

    async fn look(&mut self, slot: &Slot) -> Result<(), Failure> {
        self.due.clear();
        self.requests.clear();
        let store = &self.lookup.store;
        let info = store.round(self.round).await.map_err(store_failed)?;
        let t = store
            .tournament(info.tournament_id)
            .await
            .map_err(store_failed)?;
        let delay = self.lookup.delay_ms(&info).await.map_err(store_failed)?;
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
        if delay == 0 && self.settled == Some(key) {
            return Ok(());
        }
        let all = entries(&self.lookup, &t, &info, delay)
            .await
            .map_err(store_failed)?;
        let due: Vec<Entry> = all
            .into_iter()
            .filter(|e| self.taken.get(&e.game_id) != Some(&hash_of(&e.pgn)))
            .collect();
        self.settled = due.is_empty().then_some(key);
        slot.edit(|t| t.queued = due.len() as i64);
        let mut by_round: HashMap<usize, Vec<Entry>> = HashMap::new();
        for e in due {
            match lichess_round_of(e.board_no, self.target.rounds.len()) {
                Some(i) => by_round.entry(i).or_default().push(e),
                None => {
                    if !self.warned_beyond {
                        tracing::warn!(
                            board = e.board_no,
                            "this board has no Lichess round: give one --lichess-round per 100 boards"
                        );
                        self.warned_beyond = true;
                    }
                }
            }
        }
        let mut due: Vec<(usize, Vec<Entry>)> = by_round.into_iter().collect();
        due.sort_unstable_by_key(|(i, _)| *i);
        self.due = due.into();
        Ok(())
    }

    async fn next(&mut self) -> Result<Next<Vec<Entry>>, Failure> {
        loop {
            if let Some(chunk) = self.requests.pop_front() {
                let i = self.sending_to;
                let body = chunk
                    .iter()
                    .map(|e| e.pgn.as_str())
                    .collect::<Vec<_>>()
                    .join("\n\n")
                    + "\n";
                self.last_request.insert(i, now_ms());
                return Ok(Next::Send(Request {
                    post: Post {
                        url: format!(
                            "{}/api/broadcast/round/{}/push",
                            self.base, self.target.rounds[i]
                        ),
                        token: self.target.token.clone(),
                        content_type: "text/plain; charset=utf-8",
                        body: body.into_bytes(),
                    },
                    carries: chunk,
                }));
            }
            let Some((i, games)) = self.due.pop_front() else {
                return Ok(Next::Idle);
            };
            // Its games stay due: the next look sends them.
            if now_ms() - self.last_request.get(&i).copied().unwrap_or(0) < SPACING_MS {
                continue;
            }
            self.sending_to = i;
            self.requests = requests(games).into();
        }
    }

    async fn answered(
        &mut self,
        chunk: Vec<Entry>,
        answer: Result<Reply, Unanswered>,
    ) -> Result<Verdict, Failure> {
        let reply = match answer {
            Ok(r) => r,
            Err(e) => {
                return Err(Failure {
                    error: format!("cannot reach Lichess: {e}"),
                    wait: BACK_OFF,
                });
            }
        };
        match reply.status {
            200 => match serde_json::from_str::<serde_json::Value>(&reply.text) {
                Ok(v) => {
                    // Per game, in order: `None` when taken, else Lichess's error.
                    let results: Vec<Option<String>> = v["games"]
                        .as_array()
                        .map(|gs| {
                            gs.iter()
                                .map(|g| g["error"].as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    Ok(Verdict::Delivered(self.taken(&chunk, &results)))
                }
                Err(e) => Err(Failure {
                    error: format!("cannot reach Lichess: the answer does not read: {e}"),
                    wait: BACK_OFF,
                }),
            },
            429 => Err(Failure {
                error: "Lichess asked to slow down (429): waiting a minute".into(),
                wait: Wait::Until(now_ms() + SLOW_DOWN_MS),
            }),
            status => {
                let msg = reply.error();
                let error = match status {
                    401 | 403 => format!(
                        "Lichess refused the token ({status}): {msg} (it needs the study:write scope and a round this account may push to)"
                    ),
                    _ => format!("Lichess answered {status}: {msg}"),
                };
                Err(Failure {
                    error,
                    wait: BACK_OFF,
                })
            }
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::live::Boards;
    use crate::serve::push::status::{Slot, Targets};
    use crate::serve::push::testing::{play, store_with_round};
    use relay_store::{GameId, RoundId};
    use relay_store::{RoundPatch, Store};
    use std::sync::Arc;

    const ROUNDS: [&str; 2] = ["roundOne", "roundTwo"];

    /// A relay's store of its own with a round of `boards` games, and a Lichess target for
    /// it with `rounds` Lichess rounds.
    async fn pushing(name: &str, boards: u32, rounds: usize) -> (Lichess, Slot, Store, Vec<i64>) {
        let (store, _round, games) =
            store_with_round(&format!("push-lichess-{name}"), boards).await;
        let target = LichessTarget {
            rounds: ROUNDS[..rounds].iter().map(|r| r.to_string()).collect(),
            token: "secret".into(),
            url: "http://lichess.test/".into(),
            local_round: None,
        };
        let lookup = Lookup::new(store.clone(), Arc::new(Boards::default()));
        let mut lichess = Lichess::new(lookup, target);
        lichess.start().await.expect("the round");
        let slot = Targets::default().register(lichess.name(), "lichess");
        (lichess, slot, store, games)
    }

    /// The requests of one look: where each went and the games it carried.
    async fn look(lichess: &mut Lichess, slot: &Slot) -> Vec<(String, Vec<Entry>)> {
        lichess.look(slot).await.expect("look");
        let mut sent = Vec::new();
        while let Next::Send(r) = lichess.next().await.expect("next") {
            assert_eq!(r.post.token, "secret");
            assert_eq!(r.post.content_type, "text/plain; charset=utf-8");
            let body = String::from_utf8(r.post.body).expect("text");
            for e in &r.carries {
                assert!(body.contains(&format!("[GameId \"relay-{}\"]", e.game_id)));
            }
            sent.push((r.post.url, r.carries));
        }
        sent
    }

    /// Lichess's answer: per game, taken (`None`) or its error.
    fn answer(games: &[Option<&str>]) -> Result<Reply, Unanswered> {
        let games: Vec<serde_json::Value> = games
            .iter()
            .map(|g| match g {
                None => serde_json::json!({"moves": 1}),
                Some(e) => serde_json::json!({"error": e}),
            })
            .collect();
        Ok(Reply {
            status: 200,
            text: serde_json::json!({ "games": games }).to_string(),
        })
    }

    fn ids(entries: &[Entry]) -> Vec<i64> {
        entries.iter().map(|e| e.game_id.get()).collect()
    }

    /// As if the last request to each Lichess round were long ago.
    fn a_second_later(lichess: &mut Lichess) {
        lichess.last_request.clear();
    }

    fn entry(board: u32, bytes: usize) -> Entry {
        Entry {
            game_id: GameId::from(i64::from(board)),
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
            id: GameId::from(42),
            round_id: RoundId::from(1),
            pairing: relay_store::Pairing {
                board_no: 7,
                white: relay_store::Player {
                    name: Some("Moss, M".into()),
                    fide_id: Some(400_017),
                    title: Some("IM".into()),
                    rating: Some(2411),
                    federation: Some("IRL".into()),
                    team: Some("Ireland 2".into()),
                    start_rank: Some(12),
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
            // Who plays, as a pairing program's file names them: Lichess reads these.
            "[WhiteTitle \"IM\"]",
            "[WhiteElo \"2411\"]",
            "[WhiteTeam \"Ireland 2\"]",
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

    #[tokio::test]
    async fn a_game_taken_is_not_sent_again_until_its_pgn_changes() {
        let (mut lichess, slot, store, games) = pushing("taken", 2, 1).await;
        let sent = look(&mut lichess, &slot).await;
        assert_eq!(sent.len(), 1);
        let (url, chunk) = sent.into_iter().next().expect("a request");
        assert_eq!(url, "http://lichess.test/api/broadcast/round/roundOne/push");
        assert_eq!(ids(&chunk), games);
        assert_eq!(slot.status().queued, 2);
        let verdict = lichess.answered(chunk, answer(&[None, None])).await;
        assert_eq!(
            verdict,
            Ok(Verdict::Delivered(Report {
                changes: 2,
                ..Report::default()
            }))
        );
        assert!(look(&mut lichess, &slot).await.is_empty());
        play(&store, GameId::from(games[1]), 1, "e4", "e2e4").await;
        let sent = look(&mut lichess, &slot).await;
        assert!(
            sent.is_empty(),
            "a second after the last request at the earliest"
        );
        assert_eq!(slot.status().queued, 1, "due all the same");
        a_second_later(&mut lichess);
        let sent = look(&mut lichess, &slot).await;
        assert_eq!(ids(&sent[0].1), [games[1]], "the game that changed alone");
    }

    #[tokio::test]
    async fn a_game_the_answer_does_not_list_is_sent_again() {
        let (mut lichess, slot, _store, games) = pushing("unlisted", 2, 1).await;
        let mut sent = look(&mut lichess, &slot).await;
        let (_, chunk) = sent.remove(0);
        lichess
            .answered(chunk, answer(&[None]))
            .await
            .expect("delivered");
        a_second_later(&mut lichess);
        let sent = look(&mut lichess, &slot).await;
        assert_eq!(ids(&sent[0].1), [games[1]]);
    }

    #[tokio::test]
    async fn per_game_errors_become_conflicts_until_lichess_takes_the_game() {
        let (mut lichess, slot, store, games) = pushing("refused-game", 2, 1).await;
        let mut sent = look(&mut lichess, &slot).await;
        let (_, chunk) = sent.remove(0);
        let Ok(Verdict::Delivered(report)) = lichess
            .answered(chunk, answer(&[Some("bad move"), None]))
            .await
        else {
            panic!("not delivered");
        };
        assert_eq!(
            report.conflicts,
            [PushConflict {
                game_id: games[0],
                cloud_game_id: 0,
                board_no: 1,
                message: "Lichess refused board 1: bad move".into(),
                clash: false,
            }]
        );
        // Refused, it is not sent again as it is; changed, it is, and taken it is no
        // conflict any more.
        a_second_later(&mut lichess);
        assert!(look(&mut lichess, &slot).await.is_empty());
        play(&store, GameId::from(games[0]), 1, "d4", "d2d4").await;
        a_second_later(&mut lichess);
        let mut sent = look(&mut lichess, &slot).await;
        let (_, chunk) = sent.remove(0);
        assert_eq!(ids(&chunk), [games[0]]);
        let Ok(Verdict::Delivered(report)) = lichess.answered(chunk, answer(&[None])).await else {
            panic!("not delivered");
        };
        assert!(report.conflicts.is_empty());
    }

    #[tokio::test]
    async fn a_429_means_a_minute_and_failures_back_off_leaving_the_games_due() {
        let (mut lichess, slot, _store, games) = pushing("slow-down", 1, 1).await;
        let mut sent = look(&mut lichess, &slot).await;
        let (_, chunk) = sent.remove(0);
        let slow_down = Ok(Reply {
            status: 429,
            text: String::new(),
        });
        let before = now_ms();
        let failure = lichess
            .answered(chunk.clone(), slow_down)
            .await
            .expect_err("slow down");
        assert_eq!(
            failure.error,
            "Lichess asked to slow down (429): waiting a minute"
        );
        let Wait::Until(until) = failure.wait else {
            panic!("{failure:?}");
        };
        assert!((before + 60_000..=now_ms() + 60_000).contains(&until));
        let refused = Ok(Reply {
            status: 403,
            text: r#"{"error":"No such token"}"#.into(),
        });
        let failure = lichess
            .answered(chunk.clone(), refused)
            .await
            .expect_err("refused");
        assert!(
            failure.error.starts_with(
                "Lichess refused the token (403): No such token (it needs the study:write scope"
            ),
            "{failure:?}"
        );
        assert_eq!(failure.wait, BACK_OFF);
        let failure = lichess
            .answered(chunk, Err(Unanswered("timed out".into())))
            .await
            .expect_err("failed");
        assert_eq!(failure.error, "cannot reach Lichess: timed out");
        assert_eq!(failure.wait, BACK_OFF);
        a_second_later(&mut lichess);
        let sent = look(&mut lichess, &slot).await;
        assert_eq!(ids(&sent[0].1), games, "not taken: due again");
    }

    #[tokio::test]
    async fn a_taken_over_target_sends_every_game_again() {
        let (mut lichess, slot, _store, games) = pushing("taken-over", 3, 1).await;
        let mut sent = look(&mut lichess, &slot).await;
        let (_, chunk) = sent.remove(0);
        lichess
            .answered(chunk, answer(&[None, None, None]))
            .await
            .expect("delivered");
        a_second_later(&mut lichess);
        assert!(look(&mut lichess, &slot).await.is_empty());
        lichess.taken_over();
        let sent = look(&mut lichess, &slot).await;
        assert_eq!(ids(&sent[0].1), games);
    }

    #[tokio::test]
    async fn boards_go_to_their_lichess_round_and_boards_beyond_the_last_to_none() {
        let (mut lichess, slot, _store, games) = pushing("rounds", 201, 2).await;
        let sent = look(&mut lichess, &slot).await;
        let urls: Vec<&str> = sent.iter().map(|(u, _)| u.as_str()).collect();
        assert_eq!(
            urls,
            [
                "http://lichess.test/api/broadcast/round/roundOne/push",
                "http://lichess.test/api/broadcast/round/roundTwo/push"
            ]
        );
        assert_eq!(ids(&sent[0].1), games[..100]);
        assert_eq!(ids(&sent[1].1), games[100..200]);
    }

    #[tokio::test]
    async fn the_broadcast_delay_holds_a_move_back() {
        let (mut lichess, slot, store, games) = pushing("delay", 1, 1).await;
        let patch = RoundPatch {
            delay_secs: Some(Some(900)),
            ..Default::default()
        };
        store
            .update_round(lichess.round, &patch)
            .await
            .expect("delay");
        play(&store, GameId::from(games[0]), 1, "e4", "e2e4").await;
        let mut sent = look(&mut lichess, &slot).await;
        let (_, chunk) = sent.remove(0);
        assert!(!chunk[0].pgn.contains("1. e4"), "{}", chunk[0].pgn);
    }
}
