//! What the store keeps, as plain values.

use crate::id::{GameId, RoundId, Seq, TournamentId};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NewTournament {
    pub name: String,
    pub site: Option<String>,
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    pub time_control: Option<String>,
    /// Broadcast delay for spectators, 0..=3600 s.
    pub delay_secs: u32,
    /// The event key (unique: another tournament's makes the insert a conflict).
    pub event_key: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Player {
    pub name: Option<String>,
    pub title: Option<String>,
    pub rating: Option<u32>,
    pub fide_id: Option<u64>,
    pub federation: Option<String>,
    /// The player's start rank in the tournament (from a pairing program's file).
    #[serde(default)]
    pub start_rank: Option<u32>,
    /// The player's team, in a team event.
    #[serde(default)]
    pub team: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Pairing {
    pub board_no: u32,
    pub white: Player,
    pub black: Player,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StoredMove {
    /// 1 for White's first move.
    pub ply: u32,
    pub san: String,
    pub uci: String,
    pub clk_ms: Option<u64>,
    pub emt_ms: Option<u64>,
    /// When the relay accepted the move (ms since the Unix epoch).
    pub accepted_at_ms: i64,
    /// The position after the move, so a game can be rebuilt without replaying it.
    pub fen_after: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StoredGame {
    pub id: GameId,
    pub round_id: RoundId,
    pub pairing: Pairing,
    pub result: String,
    pub termination: Option<String>,
    /// pending, live, finished, confirmed
    pub status: String,
    pub start_fen: Option<String>,
    pub chess960: bool,
    /// How the e-board lay ("normal" or "rotated"), once known.
    pub orientation: Option<String>,
    /// When the result was set (ms since the epoch).
    pub result_at_ms: Option<i64>,
    /// How many arbiter edits the game has had: an edit names the count it was made on, and
    /// is refused when another came first.
    pub edits: i64,
    pub moves: Vec<StoredMove>,
}

impl StoredGame {
    pub fn castling_mode(&self) -> shakmaty::CastlingMode {
        if self.chess960 {
            shakmaty::CastlingMode::Chess960
        } else {
            shakmaty::CastlingMode::Standard
        }
    }

    /// Where the game starts; `None` when the stored FEN does not read.
    pub fn start_position(&self) -> Option<shakmaty::Chess> {
        match &self.start_fen {
            None => Some(shakmaty::Chess::default()),
            Some(f) => f
                .parse::<shakmaty::fen::Fen>()
                .ok()?
                .into_position(self.castling_mode())
                .ok(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    pub seq: Seq,
    pub game_id: Option<GameId>,
    pub kind: String,
    /// JSON.
    pub payload: String,
    /// When it happened (ms since the epoch).
    pub at_ms: i64,
}

/// A tournament with its rounds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentInfo {
    pub id: TournamentId,
    pub name: String,
    pub site: Option<String>,
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    pub time_control: Option<String>,
    pub delay_secs: u32,
    pub rounds: Vec<RoundInfo>,
    /// From a pairing program's file: the federation, the arbiters (chief first) and the
    /// number of rounds planned.
    #[serde(default)]
    pub federation: Option<String>,
    #[serde(default)]
    pub arbiters: Vec<String>,
    #[serde(default)]
    pub rounds_planned: Option<u32>,
    /// Spectators' outputs (the public game JSON and game PGN) show the arbiter's record of
    /// each game too: illegal moves, clock corrections, a game joined late. Off by default.
    #[serde(default)]
    pub public_incidents: bool,
    /// The origins (`https://club.example`) whose pages may show the tournament's embedded
    /// boards (`/embed/…`) in a frame; none: only this relay's own pages.
    #[serde(default)]
    pub embed_origins: Vec<String>,
    /// The event's name across relays: venues that push tournaments with the same key to a
    /// cloud relay fill one tournament there (several halls, one event).
    #[serde(default)]
    pub event_key: Option<String>,
    /// The tie-break codes set for the standings, in order (TRF-2026 record 202's form); none:
    /// relay's default for the kind of event (the standings say which codes are in force).
    #[serde(default)]
    pub tiebreaks: Vec<String>,
}

/// A round, without its games.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RoundInfo {
    pub id: RoundId,
    pub tournament_id: TournamentId,
    pub number: String,
    pub date: Option<String>,
    /// The round's own delay; `None` means the tournament's.
    pub delay_secs: Option<u32>,
    #[serde(rename = "final")]
    pub is_final: bool,
    /// The round's latest change number.
    pub seq: Seq,
    /// Created by the service for boards nobody had configured.
    pub auto: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RawEntry {
    pub port: String,
    pub serial: Option<String>,
    pub received_at_ms: i64,
    pub bytes: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AuditEntry {
    pub at_ms: i64,
    pub actor: String,
    pub action: String,
    /// JSON.
    pub detail: String,
}

/// An audit entry with its place in the whole trail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AuditRecord {
    pub id: i64,
    /// The game it concerns, if it concerns one.
    pub game_id: Option<i64>,
    #[serde(flatten)]
    pub entry: AuditEntry,
}

pub(crate) const GAME_SELECT_BY_ID: &str = "SELECT id, round_id, board_no,
    white, white_title, white_elo, white_fide_id, white_fed,
    black, black_title, black_elo, black_fide_id, black_fed,
    result, termination, status, start_fen, chess960, orientation, result_at, edits,
    white_rank, black_rank, white_team, black_team FROM games WHERE id = $1";

pub(crate) const GAME_SELECT_BY_ROUND: &str = "SELECT id, round_id, board_no,
    white, white_title, white_elo, white_fide_id, white_fed,
    black, black_title, black_elo, black_fide_id, black_fed,
    result, termination, status, start_fen, chess960, orientation, result_at, edits,
    white_rank, black_rank, white_team, black_team FROM games
    WHERE round_id = $1 ORDER BY board_no";

#[derive(sqlx::FromRow)]
pub(crate) struct GameRow {
    pub(crate) id: GameId,
    round_id: RoundId,
    board_no: i64,
    white: Option<String>,
    white_title: Option<String>,
    white_elo: Option<i64>,
    white_fide_id: Option<i64>,
    white_fed: Option<String>,
    black: Option<String>,
    black_title: Option<String>,
    black_elo: Option<i64>,
    black_fide_id: Option<i64>,
    black_fed: Option<String>,
    result: String,
    termination: Option<String>,
    status: String,
    start_fen: Option<String>,
    chess960: i64,
    orientation: Option<String>,
    result_at: Option<i64>,
    edits: i64,
    white_rank: Option<i64>,
    black_rank: Option<i64>,
    white_team: Option<String>,
    black_team: Option<String>,
}

/// A move row with its game, for reading a whole round at once.
#[derive(sqlx::FromRow)]
pub(crate) struct RoundMoveRow {
    game_id: GameId,
    #[sqlx(flatten)]
    row: MoveRow,
}

impl RoundMoveRow {
    pub(crate) fn split(self) -> (GameId, MoveRow) {
        (self.game_id, self.row)
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct MoveRow {
    ply: i64,
    san: String,
    uci: String,
    clk_ms: Option<i64>,
    emt_ms: Option<i64>,
    accepted_at: i64,
    fen_after: String,
}

pub(crate) fn game_from_rows(g: GameRow, moves: Vec<MoveRow>) -> StoredGame {
    let player =
        |name, title, elo: Option<i64>, fide: Option<i64>, fed, rank: Option<i64>, team| Player {
            name,
            title,
            rating: elo.and_then(|v| u32::try_from(v).ok()),
            fide_id: fide.and_then(|v| u64::try_from(v).ok()),
            federation: fed,
            start_rank: rank.and_then(|v| u32::try_from(v).ok()),
            team,
        };
    StoredGame {
        id: g.id,
        round_id: g.round_id,
        pairing: Pairing {
            board_no: u32::try_from(g.board_no).unwrap_or(0),
            white: player(
                g.white,
                g.white_title,
                g.white_elo,
                g.white_fide_id,
                g.white_fed,
                g.white_rank,
                g.white_team,
            ),
            black: player(
                g.black,
                g.black_title,
                g.black_elo,
                g.black_fide_id,
                g.black_fed,
                g.black_rank,
                g.black_team,
            ),
        },
        result: g.result,
        termination: g.termination,
        status: g.status,
        start_fen: g.start_fen,
        chess960: g.chess960 != 0,
        orientation: g.orientation,
        result_at_ms: g.result_at,
        edits: g.edits,
        moves: moves
            .into_iter()
            .map(|m| StoredMove {
                ply: u32::try_from(m.ply).unwrap_or(0),
                san: m.san,
                uci: m.uci,
                clk_ms: m.clk_ms.and_then(|v| u64::try_from(v).ok()),
                emt_ms: m.emt_ms.and_then(|v| u64::try_from(v).ok()),
                accepted_at_ms: m.accepted_at,
                fen_after: m.fen_after,
            })
            .collect(),
    }
}
