//! The arbiter's record of a game: illegal moves completed by a clock press (or presses
//! without a move) and clock corrections, as the recorder saw them, with the arbiter's ruling.
//! They are written in the writer's group commit with the game's moves ([`crate::Op::Incident`])
//! and are not changes of the round: spectators' feeds never carry them.

use crate::error::{Result, StoreError};
use crate::pool::{Store, now_ms, on_pool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the board showed, as it is stored; `id` is 0 before it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Incident {
    pub id: i64,
    pub game_id: i64,
    /// `illegal_move` or `clock_adjustment`.
    pub kind: String,
    /// The move it came in place of (an illegal move) or before (a correction), from 1.
    pub ply: u32,
    /// Whose move or whose clock: `white` or `black`.
    pub color: String,
    /// An illegal move's kind: `move_not_allowed`, `king_in_check`, `illegal_castling`,
    /// `pawn_not_promoted` or `press_without_move`.
    pub illegal: Option<String>,
    /// The squares as seen (`g1g4`); none for a press without a move.
    pub uci: Option<String>,
    /// The piece moved and the one on the target square, as FEN letters.
    pub piece: Option<String>,
    pub captured: Option<String>,
    pub clock_pressed: bool,
    /// A correction: by how much the side's clock changed.
    pub delta_ms: Option<i64>,
    pub at_ms: i64,
    /// The arbiter's answer: `dismissed`, or `result` (the result the Laws prescribe was
    /// given); none yet.
    pub ruling: Option<String>,
    pub ruled_at_ms: Option<i64>,
}

pub(crate) const INSERT: &str = "INSERT INTO incidents (game_id, kind, ply, color, illegal, uci, piece, captured, clock_pressed, delta_ms, at_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id";

/// The columns read back, in [`Row`]'s order.
macro_rules! select {
    ($rest:literal) => {
        concat!("SELECT id, game_id, kind, ply, color, illegal, uci, piece, captured, clock_pressed, delta_ms, at_ms, ruling, ruled_at_ms FROM incidents ", $rest)
    };
}

type Row = (
    i64,
    i64,
    String,
    i64,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    i64,
    Option<i64>,
    i64,
    Option<String>,
    Option<i64>,
);

fn from_row(r: Row) -> Incident {
    Incident {
        id: r.0,
        game_id: r.1,
        kind: r.2,
        ply: u32::try_from(r.3).unwrap_or(0),
        color: r.4,
        illegal: r.5,
        uci: r.6,
        piece: r.7,
        captured: r.8,
        clock_pressed: r.9 != 0,
        delta_ms: r.10,
        at_ms: r.11,
        ruling: r.12,
        ruled_at_ms: r.13,
    }
}

impl Store {
    /// A game's record, oldest first.
    pub async fn game_incidents(&self, game: i64) -> Result<Vec<Incident>> {
        let rows: Vec<Row> = on_pool!(self, pool => sqlx::query_as(select!("WHERE game_id = $1 ORDER BY id"))
            .bind(game).fetch_all(pool).await?);
        Ok(rows.into_iter().map(from_row).collect())
    }

    /// The illegal moves of a round's games that no arbiter has ruled on yet, oldest first
    /// (what the console lists when it opens).
    pub async fn open_illegal_moves(&self, round: i64) -> Result<Vec<Incident>> {
        let rows: Vec<Row> = on_pool!(self, pool => sqlx::query_as(select!(
            "WHERE kind = 'illegal_move' AND ruling IS NULL AND game_id IN (SELECT id FROM games WHERE round_id = $1) ORDER BY id"))
            .bind(round).fetch_all(pool).await?);
        Ok(rows.into_iter().map(from_row).collect())
    }

    /// One incident.
    pub async fn incident(&self, id: i64) -> Result<Incident> {
        let row: Option<Row> = on_pool!(self, pool => sqlx::query_as(select!("WHERE id = $1"))
            .bind(id).fetch_optional(pool).await?);
        row.map(from_row).ok_or(StoreError::NotFound {
            what: "incident",
            id: id.to_string(),
        })
    }

    /// The arbiter's ruling on an incident (`dismissed` or `result`), with an audit entry;
    /// the incident as it is now (as written, not read again).
    pub async fn rule_incident(&self, id: i64, ruling: &str, actor: &str) -> Result<Incident> {
        let before = self.incident(id).await?;
        let detail = serde_json::json!({
            "incident": id,
            "ruling": ruling,
            "kind": before.kind,
            "illegal": before.illegal,
            "ply": before.ply,
            "color": before.color,
            "uci": before.uci,
        })
        .to_string();
        let at = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            sqlx::query("UPDATE incidents SET ruling = $1, ruled_at_ms = $2 WHERE id = $3")
                .bind(ruling).bind(at).bind(id).execute(&mut *tx).await?;
            sqlx::query("INSERT INTO audit (at, actor, action, game_id, detail) VALUES ($1, $2, $3, $4, $5)")
                .bind(at).bind(actor).bind("incident_ruling").bind(before.game_id).bind(&detail)
                .execute(&mut *tx).await?;
            tx.commit().await?;
        });
        Ok(Incident {
            ruling: Some(ruling.to_string()),
            ruled_at_ms: Some(at),
            ..before
        })
    }
}
