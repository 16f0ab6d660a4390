//! The WebSocket messages: the one place their shapes are written. Every message a client
//! gets is a [`ServerMessage`], encoded once per event and shared by every client of a feed;
//! `GET /api/ws-messages.schema.json` serves the JSON Schema of this enum, so pages and
//! platforms have a contract.

use super::views::{
    ClockView, EboardView, EvalView, GameClock, GameStatus, GameView, MoveView, RoundView,
    stored_result,
};
use axum::body::Bytes;
use relay_core::game::GameResult;
use relay_store::{ChangeRecord, Incident};
use relay_store::{GameId, Seq};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// What the server sends on `/api/rounds/{id}/ws` and `/api/games/{id}/ws`. `seq` is the
/// round's change number: changes carry a new one, in order; running clocks and e-board news
/// repeat the latest. A client coming back with `?since=seq` gets what it missed.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// The first message: the round (`round`) or game (`game`) as the client's view shows it.
    /// A big round's snapshot comes in parts, so that no message is large: `more` `games`
    /// messages follow at once with the rest of its games, and the snapshot is whole (and its
    /// `seq` reached) only with the last of them.
    Snapshot {
        seq: Seq,
        #[serde(skip_serializing_if = "Option::is_none")]
        round: Option<Box<RoundView>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        game: Option<Box<GameView>>,
        #[serde(default, skip_serializing_if = "is_zero")]
        more: u32,
    },
    /// More games of the round snapshot just sent (see `snapshot`).
    Games {
        seq: Seq,
        games: Vec<GameView>,
    },
    /// More moves of the game snapshot just sent: a long game's snapshot comes in parts too.
    Moves {
        seq: Seq,
        game_id: GameId,
        moves: Vec<MoveView>,
    },
    /// A move was played. `clock` is the running clock after it, when the lever press came
    /// with the move; `read_at_ms` is when the board message that completed it was read.
    Move {
        seq: Seq,
        game_id: GameId,
        #[serde(rename = "move")]
        mv: MoveView,
        #[serde(skip_serializing_if = "Option::is_none")]
        read_at_ms: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// The clock of a move already sent, known from the lever press that ended it; `clock` is
    /// the running clock from that press (no separate `clock` message follows).
    MoveClock {
        seq: Seq,
        game_id: GameId,
        ply: u32,
        clk_ms: Option<u64>,
        emt_ms: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// The moves from `from_ply` on are gone (a takeback or correction).
    Truncate {
        seq: Seq,
        game_id: GameId,
        from_ply: u32,
    },
    Result {
        seq: Seq,
        game_id: GameId,
        result: GameResult,
        termination: Option<String>,
        status: GameStatus,
    },
    /// A game set up, paired or replaced as a whole.
    Game {
        seq: Seq,
        game: Box<GameView>,
    },
    /// The side to move changed on a game's clock (a lever press with no move to carry it).
    Clock {
        seq: Seq,
        game_id: GameId,
        clock: ClockView,
    },
    /// The latest reading of each running clock, every 10 s (pages count down in between).
    Clocks {
        seq: Seq,
        clocks: Vec<GameClock>,
    },
    /// Engine evaluations of positions the client can see (each position is evaluated once,
    /// for every spectator), several in one message: a round gets at most two a second.
    Eval {
        seq: Seq,
        evals: Vec<EvalEntry>,
    },
    /// An e-board's state, for clients that asked (`?eboards=1`).
    Eboard {
        seq: Seq,
        eboard: EboardView,
    },
    /// A completed illegal move (or a clock pressed without a move) on a game's record, for
    /// the clients that follow e-boards (the console); the game's moves are untouched.
    IllegalMove {
        seq: Seq,
        game_id: GameId,
        incident: Incident,
    },
    /// A clock time changed by hand (time given by an arbiter, a clock set right), on a
    /// game's record, for the console.
    ClockAdjustment {
        seq: Seq,
        game_id: GameId,
        incident: Incident,
    },
    /// Every 5 s, stamped with the server's time.
    Heartbeat {
        at_ms: i64,
    },
    Error {
        error: String,
    },
}

impl ServerMessage {
    pub fn encode(&self) -> String {
        // Strings, numbers and JSON values only: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }

    /// The message encoded and framed for the wire.
    pub fn frame(&self) -> Frame {
        Frame::text(&self.encode())
    }

    /// The round's change number the message carries.
    pub fn seq(&self) -> Option<Seq> {
        match self {
            ServerMessage::Snapshot { seq, .. }
            | ServerMessage::Games { seq, .. }
            | ServerMessage::Moves { seq, .. }
            | ServerMessage::Move { seq, .. }
            | ServerMessage::MoveClock { seq, .. }
            | ServerMessage::Truncate { seq, .. }
            | ServerMessage::Result { seq, .. }
            | ServerMessage::Game { seq, .. }
            | ServerMessage::Clock { seq, .. }
            | ServerMessage::Clocks { seq, .. }
            | ServerMessage::Eval { seq, .. }
            | ServerMessage::Eboard { seq, .. }
            | ServerMessage::IllegalMove { seq, .. }
            | ServerMessage::ClockAdjustment { seq, .. } => Some(*seq),
            ServerMessage::Heartbeat { .. } | ServerMessage::Error { .. } => None,
        }
    }

    /// The message as a client `delay_ms` behind gets it: every running clock in it
    /// re-stamped, so a page counts down from the delayed moment, not the live one.
    pub fn delayed(&self, delay_ms: i64) -> ServerMessage {
        let mut m = self.clone();
        if delay_ms <= 0 {
            return m;
        }
        match &mut m {
            ServerMessage::Move { clock, .. } | ServerMessage::MoveClock { clock, .. } => {
                *clock = clock.map(|c| c.shifted(delay_ms));
            }
            ServerMessage::Clock { clock, .. } => *clock = clock.shifted(delay_ms),
            ServerMessage::Clocks { clocks, .. } => {
                for c in clocks {
                    c.clock = c.clock.shifted(delay_ms);
                }
            }
            ServerMessage::Game { game, .. } => {
                game.clock = game.clock.map(|c| c.shifted(delay_ms));
            }
            _ => {}
        }
        m
    }

    /// A stored change as the message it was announced with; `None` for a change that needs
    /// the game read as a whole (or a record that does not read).
    pub fn from_change(seq: Seq, game_id: GameId, record: ChangeRecord) -> Option<ServerMessage> {
        Some(match record {
            ChangeRecord::Move(m) => ServerMessage::Move {
                seq,
                game_id,
                mv: m.into(),
                read_at_ms: None,
                clock: None,
            },
            ChangeRecord::MoveClock(c) => ServerMessage::MoveClock {
                seq,
                game_id,
                ply: c.ply,
                clk_ms: c.clk_ms,
                emt_ms: c.emt_ms,
                clock: None,
            },
            ChangeRecord::Truncate(t) => ServerMessage::Truncate {
                seq,
                game_id,
                from_ply: t.from_ply,
            },
            ChangeRecord::Result(r) => ServerMessage::Result {
                seq,
                game_id,
                result: stored_result(&r.result),
                termination: r.termination,
                status: GameStatus::stored(&r.status),
            },
            ChangeRecord::Game => return None,
        })
    }
}

/// One evaluation in an `eval` message: the position after move `ply` of game `game_id`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct EvalEntry {
    pub game_id: GameId,
    pub ply: u32,
    #[serde(flatten)]
    pub eval: EvalView,
}

/// About how many bytes of games one part of a round snapshot holds, so that no message is
/// large (when sockets still wrote through tungstenite's buffer, which keeps the size of the
/// largest message it sent, a 200-board round's snapshot in one message cost every spectator
/// 90 KiB; the feed's frames now go round that buffer, see [`Frame`]).
pub const SNAPSHOT_PART_BYTES: usize = 4 * 1024;

/// A round's snapshot as messages: the `snapshot` with the round and its first games, then
/// `games` messages with the rest, each about [`SNAPSHOT_PART_BYTES`].
pub fn round_snapshot(seq: Seq, mut round: RoundView) -> Vec<String> {
    let mut parts = in_parts(std::mem::take(&mut round.games)).into_iter();
    round.games = parts.next().unwrap_or_default();
    let rest: Vec<Vec<GameView>> = parts.collect();
    let mut out = vec![
        ServerMessage::Snapshot {
            seq,
            round: Some(Box::new(round)),
            game: None,
            more: u32::try_from(rest.len()).unwrap_or(u32::MAX),
        }
        .encode(),
    ];
    out.extend(
        rest.into_iter()
            .map(|games| ServerMessage::Games { seq, games }.encode()),
    );
    out
}

/// A game's snapshot as messages: the `snapshot` with the game and its first moves, then
/// `moves` messages with the rest, each about [`SNAPSHOT_PART_BYTES`].
pub fn game_snapshot(seq: Seq, mut game: GameView) -> Vec<String> {
    let game_id = game.id;
    let mut parts = in_parts(std::mem::take(&mut game.moves)).into_iter();
    game.moves = parts.next().unwrap_or_default();
    let rest: Vec<Vec<MoveView>> = parts.collect();
    let mut out = vec![
        ServerMessage::Snapshot {
            seq,
            round: None,
            game: Some(Box::new(game)),
            more: u32::try_from(rest.len()).unwrap_or(u32::MAX),
        }
        .encode(),
    ];
    out.extend(rest.into_iter().map(|moves| {
        ServerMessage::Moves {
            seq,
            game_id,
            moves,
        }
        .encode()
    }));
    out
}

/// Items in groups of about [`SNAPSHOT_PART_BYTES`] encoded (at least one group).
fn in_parts<T: Serialize>(items: Vec<T>) -> Vec<Vec<T>> {
    let mut parts: Vec<Vec<T>> = vec![Vec::new()];
    let mut size = 0;
    for item in items {
        // Serializing a view cannot fail (strings, numbers, options).
        let n = serde_json::to_vec(&item).map_or(0, |v| v.len());
        if size > 0 && size + n > SNAPSHOT_PART_BYTES {
            parts.push(Vec::new());
            size = 0;
        }
        size += n;
        if let Some(p) = parts.last_mut() {
            p.push(item);
        }
    }
    parts
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A WebSocket message as sent: a [`ServerMessage`], and with a change, the lever presses
/// (each a `move_clock`) the round's feed held since its last change, which a client applies
/// before the message itself. A press that comes after its move was announced would otherwise
/// cost every spectator a frame of its own; held for the next change of the round (at most a
/// second), it rides along.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Announcement {
    #[serde(flatten)]
    pub message: ServerMessage,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub presses: Vec<ServerMessage>,
}

impl Announcement {
    pub fn encode(&self) -> String {
        // As ServerMessage::encode: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// A message as it goes on the wire: a WebSocket text frame, header and JSON, built once and
/// written as it is to every client of a feed. A server's frames are not masked (RFC 6455,
/// 5.1), so all clients get the same bytes: sockets write these shared bytes themselves
/// (`api::ws::Wire`) instead of copying each message into a buffer of every socket's own and
/// framing it again there.
#[derive(Clone, PartialEq, Eq)]
pub struct Frame(Bytes);

impl Frame {
    /// A final text frame carrying `json`.
    pub fn text(json: &str) -> Frame {
        let n = json.len();
        let mut b = Vec::with_capacity(n + 10);
        b.push(0x81); // FIN, opcode 1 (text)
        if n < 126 {
            b.push(n as u8);
        } else if let Ok(n16) = u16::try_from(n) {
            b.push(126);
            b.extend_from_slice(&n16.to_be_bytes());
        } else {
            b.push(127);
            b.extend_from_slice(&(n as u64).to_be_bytes());
        }
        b.extend_from_slice(json.as_bytes());
        Frame(Bytes::from(b))
    }

    /// The frame's bytes, header included.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The JSON the frame carries.
    pub fn json(&self) -> &str {
        let start = match self.0.get(1) {
            Some(126) => 4,
            Some(127) => 10,
            _ => 2,
        };
        // Built from a `&str` by `text`, so the payload is UTF-8.
        std::str::from_utf8(self.0.get(start..).unwrap_or_default()).unwrap_or_default()
    }
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Frame").field(&self.json()).finish()
    }
}

/// The meaning of the messages for a view that follows them (a page does the same with the
/// same messages).
impl RoundView {
    /// Brings the view up to date with a message its feed passes on: the same message every
    /// client gets, so the view and the clients cannot disagree. `change`: the message
    /// announces a stored change (one this view already has, by its number, is skipped).
    pub fn apply(&mut self, m: &ServerMessage, change: bool) {
        if change {
            let Some(seq) = m.seq() else { return };
            if seq <= self.seq {
                return;
            }
            self.seq = seq;
        }
        match m {
            ServerMessage::Move {
                game_id, mv, clock, ..
            } => {
                if let Some(g) = self.game_mut(*game_id) {
                    g.moves.retain(|x| x.ply < mv.ply);
                    g.moves.push(mv.clone());
                    g.settle_fen();
                    if g.status == GameStatus::Pending {
                        g.status = GameStatus::Live;
                    }
                    if let Some(c) = clock {
                        g.set_clock(*c);
                    }
                }
            }
            ServerMessage::MoveClock {
                game_id,
                ply,
                clk_ms,
                emt_ms,
                clock,
                ..
            } => {
                if let Some(g) = self.game_mut(*game_id) {
                    if let Some(x) = g.moves.iter_mut().find(|x| x.ply == *ply) {
                        x.clk_ms = *clk_ms;
                        x.emt_ms = *emt_ms;
                    }
                    if let Some(c) = clock {
                        g.set_clock(*c);
                    }
                }
            }
            ServerMessage::Eval { evals, .. } => {
                for e in evals {
                    if let Some(g) = self.game_mut(e.game_id)
                        && let Some(x) = g.moves.iter_mut().find(|x| x.ply == e.ply)
                    {
                        x.eval = Some(e.eval.clone());
                    }
                }
            }
            ServerMessage::Truncate {
                game_id, from_ply, ..
            } => {
                if let Some(g) = self.game_mut(*game_id) {
                    g.moves.retain(|x| x.ply < *from_ply);
                    g.settle_fen();
                }
            }
            ServerMessage::Result {
                game_id,
                result,
                termination,
                status,
                ..
            } => {
                if let Some(g) = self.game_mut(*game_id) {
                    g.result = *result;
                    g.termination = termination.clone();
                    g.status = *status;
                    if g.result != GameResult::Ongoing {
                        g.clock = None;
                    }
                }
            }
            ServerMessage::Game { game, .. } => self.upsert(GameView::clone(game)),
            ServerMessage::Games { games, .. } => {
                for g in games {
                    self.upsert(g.clone());
                }
            }
            ServerMessage::Moves { game_id, moves, .. } => {
                if let (Some(g), Some(first)) = (self.game_mut(*game_id), moves.first()) {
                    g.moves.retain(|x| x.ply < first.ply);
                    g.moves.extend(moves.iter().cloned());
                    g.settle_fen();
                }
            }
            ServerMessage::Clock { game_id, clock, .. } => {
                if let Some(g) = self.game_mut(*game_id) {
                    g.set_clock(*clock);
                }
            }
            ServerMessage::Clocks { clocks, .. } => {
                for c in clocks {
                    if let Some(g) = self.game_mut(c.game_id) {
                        g.set_clock(c.clock);
                    }
                }
            }
            ServerMessage::Eboard { eboard, .. } => {
                for g in &mut self.games {
                    if Some(g.id) == eboard.game_id {
                        g.eboard = Some(eboard.serial.clone());
                    } else if g.eboard.as_deref() == Some(eboard.serial.as_str()) {
                        g.eboard = None;
                    }
                }
            }
            ServerMessage::Snapshot { .. }
            | ServerMessage::Heartbeat { .. }
            | ServerMessage::IllegalMove { .. }
            | ServerMessage::ClockAdjustment { .. }
            | ServerMessage::Error { .. } => {}
        }
        // A result or a new pairing can change a team match's score or teams.
        if matches!(
            m,
            ServerMessage::Result { .. } | ServerMessage::Game { .. } | ServerMessage::Games { .. }
        ) && (!self.matches.is_empty() || self.games.iter().any(|g| g.white.team.is_some()))
        {
            self.matches = crate::serve::views::team_matches(&self.games, &self.byes);
        }
    }
}

/// The JSON Schema of every WebSocket message.
pub fn schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Announcement)).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_store::{GameId, RoundId, Seq, TournamentId};

    /// A frame reads back with tungstenite, the client side's own library, at each of the
    /// three length encodings (7 bits, 16 bits, 64 bits; RFC 6455, 5.2).
    #[test]
    fn frames_read_back_at_every_length_encoding() {
        use tungstenite::protocol::frame::FrameHeader;
        for n in [0, 1, 125, 126, 127, 65_535, 65_536, 70_000] {
            let json = "x".repeat(n);
            let f = Frame::text(&json);
            assert_eq!(f.json(), json, "length {n}");
            let mut cursor = std::io::Cursor::new(f.bytes());
            let (header, len) = FrameHeader::parse(&mut cursor)
                .expect("a header")
                .expect("a whole header");
            assert!(header.is_final && header.mask.is_none(), "length {n}");
            assert_eq!(
                header.opcode,
                tungstenite::protocol::frame::coding::OpCode::Data(
                    tungstenite::protocol::frame::coding::Data::Text,
                )
            );
            assert_eq!(len as usize, n);
            assert_eq!(
                cursor.position() as usize + n,
                f.bytes().len(),
                "length {n}"
            );
        }
    }

    /// Clients may dispatch on the frame's first bytes, and `relay bench` counts moves that
    /// way (its wsload marker is anchored at the start): `type` first, then `seq`.
    #[test]
    fn a_frame_begins_with_its_type_then_its_seq() {
        let mv = ServerMessage::Move {
            seq: Seq::from(31),
            game_id: GameId::from(5),
            mv: MoveView {
                ply: 1,
                san: "e4".into(),
                uci: "e2e4".into(),
                fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
                clk_ms: Some(5_400_000),
                emt_ms: Some(3_000),
                clk_unseen: false,
                eval: None,
            },
            read_at_ms: Some(1),
            clock: None,
        };
        assert!(mv.encode().starts_with(r#"{"type":"move","seq":31,"#));
        let snap = ServerMessage::Snapshot {
            seq: Seq::from(9),
            round: None,
            game: None,
            more: 0,
        };
        assert!(snap.encode().starts_with(r#"{"type":"snapshot","seq":9"#));
    }

    #[test]
    fn messages_carry_their_type_and_the_schema_names_every_one() {
        let m = ServerMessage::Truncate {
            seq: Seq::from(4),
            game_id: GameId::from(2),
            from_ply: 7,
        };
        assert_eq!(
            m.encode(),
            r#"{"type":"truncate","seq":4,"game_id":2,"from_ply":7}"#
        );
        let schema = schema().to_string();
        for kind in [
            "presses",
            "snapshot",
            "games",
            "move",
            "move_clock",
            "truncate",
            "result",
            "game",
            "clock",
            "clocks",
            "eboard",
            "heartbeat",
            "error",
        ] {
            assert!(schema.contains(&format!("\"{kind}\"")), "{kind}");
        }
    }

    #[test]
    fn a_big_round_snapshot_comes_in_small_parts_that_add_up_to_it() {
        let game = |id: i64| GameView {
            status: GameStatus::Live,
            ..GameView::empty(GameId::from(id), id as u32)
        };
        let round = RoundView {
            id: RoundId::from(1),
            tournament_id: TournamentId::from(1),
            tournament: "T".into(),
            number: "1".into(),
            seq: Seq::from(9),
            delay_secs: 0,
            is_final: false,
            auto: false,
            games: (1..=200).map(game).collect(),
            byes: vec![],
            matches: vec![],
            evaluated: false,
        };
        let one_game = serde_json::to_vec(&game(1)).map(|v| v.len()).unwrap_or(0);
        let parts = round_snapshot(Seq::from(9), round.clone());
        assert!(parts.len() > 5, "{} parts", parts.len());
        let mut whole: Value = serde_json::from_str(&parts[0]).expect("JSON");
        assert_eq!(whole["more"], parts.len() - 1);
        for p in &parts[1..] {
            assert!(p.len() <= SNAPSHOT_PART_BYTES + 2 * one_game, "{}", p.len());
            let v: Value = serde_json::from_str(p).expect("JSON");
            assert_eq!(
                (v["type"].as_str(), v["seq"].as_i64()),
                (Some("games"), Some(9))
            );
            let games = v["games"].as_array().cloned().expect("games");
            whole["round"]["games"]
                .as_array_mut()
                .expect("games")
                .extend(games);
        }
        assert_eq!(whole["round"], serde_json::to_value(&round).expect("JSON"));
        // A small round stays one message.
        let small = RoundView {
            games: vec![game(1)],
            ..round
        };
        let parts = round_snapshot(Seq::from(9), small);
        assert_eq!(parts.len(), 1);
        assert!(!parts[0].contains("more"));
    }

    #[test]
    fn a_long_game_snapshot_comes_in_parts_that_add_up_to_it() {
        let mv = |ply: u32| MoveView {
            ply,
            san: "Nf3".into(),
            uci: "g1f3".into(),
            fen: "rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1".into(),
            clk_ms: Some(5_400_000),
            emt_ms: Some(12_000),
            clk_unseen: false,
            eval: None,
        };
        let game = GameView {
            moves: (1..=120).map(mv).collect(),
            ..GameView::empty(GameId::from(3), 3)
        };
        let parts = game_snapshot(Seq::from(4), game.clone());
        assert!(parts.len() > 3, "{} parts", parts.len());
        let mut whole: Value = serde_json::from_str(&parts[0]).expect("JSON");
        assert_eq!(whole["more"], parts.len() - 1);
        for p in &parts[1..] {
            let v: Value = serde_json::from_str(p).expect("JSON");
            assert_eq!(
                (v["type"].as_str(), v["game_id"].as_i64()),
                (Some("moves"), Some(3))
            );
            let moves = v["moves"].as_array().cloned().expect("moves");
            whole["game"]["moves"]
                .as_array_mut()
                .expect("moves")
                .extend(moves);
        }
        assert_eq!(whole["game"], serde_json::to_value(&game).expect("JSON"));
    }
}

#[cfg(test)]
mod view_tests {
    use super::*;
    use crate::serve::views::{ClockView, GameClock, GameView, MoveView, RoundView};
    use relay_core::recorder::ColorName;
    use relay_store::{RoundId, TournamentId};

    fn game(id: i64, board_no: u32) -> GameView {
        GameView::empty(GameId::from(id), board_no)
    }

    fn round() -> RoundView {
        RoundView {
            id: RoundId::from(1),
            tournament_id: TournamentId::from(1),
            tournament: "T".into(),
            number: "1".into(),
            seq: Seq::from(10),
            delay_secs: 0,
            is_final: false,
            auto: false,
            games: vec![game(5, 1), game(6, 2)],
            byes: vec![],
            matches: vec![],
            evaluated: false,
        }
    }

    fn clock(white_ms: u64) -> ClockView {
        ClockView {
            white_ms,
            black_ms: 1000,
            running: Some(ColorName::Black),
            at_ms: 7,
        }
    }

    #[test]
    fn a_view_follows_moves_clocks_takebacks_and_results_and_skips_what_it_has() {
        let mut r = round();
        let e4 = ServerMessage::Move {
            seq: Seq::from(11),
            game_id: GameId::from(5),
            mv: MoveView::bare(1, "e4", "after e4"),
            read_at_ms: None,
            clock: Some(clock(900)),
        };
        r.apply(&e4, true);
        let g = r.game(GameId::from(5)).expect("game 5");
        assert_eq!(
            (g.status.as_str(), g.fen.as_str(), g.moves.len()),
            ("live", "after e4", 1)
        );
        assert_eq!(g.clock, Some(clock(900)));
        assert_eq!(r.seq, Seq::from(11));
        // The same change again (a client's ring and the store overlapping) changes nothing.
        let before = r.clone();
        r.apply(&e4, true);
        assert_eq!(r, before);
        r.apply(
            &ServerMessage::Move {
                seq: Seq::from(12),
                game_id: GameId::from(5),
                mv: MoveView::bare(2, "e5", "after e5"),
                read_at_ms: None,
                clock: None,
            },
            true,
        );
        r.apply(
            &ServerMessage::MoveClock {
                seq: Seq::from(13),
                game_id: GameId::from(5),
                ply: 2,
                clk_ms: Some(55),
                emt_ms: Some(3),
                clock: None,
            },
            true,
        );
        assert_eq!(
            r.game(GameId::from(5)).map(|g| g.moves[1].clk_ms),
            Some(Some(55))
        );
        // A running-clock bundle repeats the seq: applied, the number stays.
        r.apply(
            &ServerMessage::Clocks {
                seq: Seq::from(13),
                clocks: vec![GameClock {
                    game_id: GameId::from(5),
                    clock: clock(800),
                }],
            },
            false,
        );
        assert_eq!(
            r.game(GameId::from(5)).and_then(|g| g.clock),
            Some(clock(800))
        );
        assert_eq!(r.seq, Seq::from(13));
        r.apply(
            &ServerMessage::Truncate {
                seq: Seq::from(14),
                game_id: GameId::from(5),
                from_ply: 2,
            },
            true,
        );
        let g = r.game(GameId::from(5)).expect("game 5");
        assert_eq!((g.moves.len(), g.fen.as_str()), (1, "after e4"));
        r.apply(
            &ServerMessage::Result {
                seq: Seq::from(15),
                game_id: GameId::from(5),
                result: GameResult::WhiteWins,
                termination: Some("resignation".into()),
                status: GameStatus::Finished,
            },
            true,
        );
        let g = r.game(GameId::from(5)).expect("game 5");
        assert_eq!(
            (g.result.to_string(), g.status.as_str(), g.clock),
            ("1-0".to_string(), "finished", None)
        );
        // A finished game's clock does not run again.
        r.apply(
            &ServerMessage::Clock {
                seq: Seq::from(15),
                game_id: GameId::from(5),
                clock: clock(1),
            },
            false,
        );
        assert_eq!(r.game(GameId::from(5)).and_then(|g| g.clock), None);
        // A game set up anew replaces the old one, in board order; the summary keeps the last
        // move of each game only.
        let mut board3 = game(7, 3);
        board3.moves = vec![MoveView::bare(1, "d4", "a"), MoveView::bare(2, "d5", "b")];
        r.apply(
            &ServerMessage::Game {
                seq: Seq::from(16),
                game: Box::new(board3),
            },
            true,
        );
        assert_eq!(
            r.games.iter().map(|g| g.id.get()).collect::<Vec<_>>(),
            vec![5, 6, 7]
        );
        let s = r.summary();
        assert_eq!(s.game(GameId::from(7)).map(|g| g.moves.len()), Some(1));
        assert_eq!(r.game(GameId::from(7)).map(|g| g.moves.len()), Some(2));
    }

    #[test]
    fn an_eboard_is_on_one_game_at_a_time() {
        let mut r = round();
        let on = |game: Option<GameId>| ServerMessage::Eboard {
            seq: Seq::from(10),
            eboard: crate::serve::views::EboardView {
                serial: "01025".into(),
                port: "/dev/x".into(),
                connected: true,
                lost_since_ms: None,
                last_seen_ms: 0,
                battery: None,
                clock: None,
                clock_battery_low: false,
                in_sync: true,
                board_fen: String::new(),
                game_id: game,
                board_no: None,
                round_id: Some(RoundId::from(1)),
                proposal: None,
                warning: None,
                memory: None,
                read_by: String::new(),
            },
        };
        r.apply(&on(Some(GameId::from(5))), false);
        assert_eq!(
            r.game(GameId::from(5))
                .and_then(|g| g.eboard.clone())
                .as_deref(),
            Some("01025")
        );
        r.apply(&on(Some(GameId::from(6))), false);
        assert_eq!(r.game(GameId::from(5)).and_then(|g| g.eboard.clone()), None);
        assert_eq!(
            r.game(GameId::from(6))
                .and_then(|g| g.eboard.clone())
                .as_deref(),
            Some("01025")
        );
    }
}
