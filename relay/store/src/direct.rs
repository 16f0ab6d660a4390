//! The writer's group commits on SQLite, with SQLite called on the writer's own thread.
//!
//! sqlx runs each SQLite connection on a worker thread and hands that thread every statement:
//! a group commit holding one move was six hand-offs there and back (begin, the readings,
//! the move, the round's change number, the change record, commit), each a wake-up of one
//! thread by another. [`SqliteCommits`] is a connection of its own to the same file, owned
//! and called by the writer, on its thread, which blocks for the length of each commit.

use crate::batch::{Op, same, sql};
use crate::error::{Result, StoreError};
use crate::model::RawEntry;
use crate::open::{SQLITE_BUSY_TIMEOUT, sqlite_pragmas};
use crate::pool::now_ms;
use relay_core::incident::IllegalKind;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use sqlx::sqlite::SqliteConnectOptions;
use std::str::FromStr;

/// A connection for group commits to a SQLite file, used by one thread at a time.
#[derive(Debug)]
pub struct SqliteCommits {
    db: Connection,
}

impl SqliteCommits {
    /// Opens the database file of `url` (already opened and migrated by [`crate::Store::open`])
    /// for group commits. `None` when `url` is not a SQLite file (PostgreSQL, or an in-memory
    /// SQLite database, which a second connection would not see).
    pub fn open(url: &str) -> Result<Option<SqliteCommits>> {
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        if !url.starts_with("sqlite:") || in_memory {
            return Ok(None);
        }
        let opts = SqliteConnectOptions::from_str(url).map_err(|e| StoreError::BadUrl {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
        let connect = |e: rusqlite::Error| StoreError::Connect(e.to_string());
        let db = Connection::open(opts.get_filename()).map_err(connect)?;
        // Set up as the writer's sqlx connection (`Store::open_writer`): no checkpoint inside
        // a commit (the service checkpoints beside the writer).
        db.busy_timeout(SQLITE_BUSY_TIMEOUT).map_err(connect)?;
        let pragmas: String = sqlite_pragmas(false)
            .iter()
            .map(|(key, value)| format!("PRAGMA {key} = {value};"))
            .collect();
        db.execute_batch(&pragmas).map_err(connect)?;
        Ok(Some(SqliteCommits { db }))
    }

    /// Logs `raws` and applies `ops` in order in one transaction, as [`crate::Store::commit`]
    /// does; returns each op's change number after the commit. On any error nothing of the
    /// batch is written.
    pub fn commit(&mut self, raws: &[RawEntry], ops: &[Op]) -> Result<Vec<Option<i64>>> {
        transaction(&mut self.db, raws, ops)
    }
}

/// [`SqliteCommits::commit`]'s transaction.
fn transaction(db: &mut Connection, raws: &[RawEntry], ops: &[Op]) -> Result<Vec<Option<i64>>> {
    // Dropped without `commit` (any `?` below), the transaction rolls back: nothing of the
    // batch is written.
    let tx = db.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut raw = tx.prepare_cached(sql::RAW)?;
        for e in raws {
            raw.execute(params![e.port, e.serial, e.received_at_ms, e.bytes])?;
        }
    }
    let mut seqs = Vec::with_capacity(ops.len());
    for op in ops {
        let game = op.game();
        let record = op.record();
        let payload = record.payload();
        let applied = match op {
            Op::Move { m, .. } => {
                let inserted = tx
                    .prepare_cached(sql::MOVE)?
                    .query_row(
                        params![
                            game,
                            i64::from(m.ply),
                            m.san,
                            m.uci,
                            m.clk_ms.map(|v| v as i64),
                            m.emt_ms.map(|v| v as i64),
                            m.accepted_at_ms,
                            m.fen_after
                        ],
                        |r| r.get::<_, Option<String>>(0),
                    )
                    .optional();
                match inserted {
                    Ok(None) => {
                        return Err(same::ply_taken(game, m.ply));
                    }
                    Ok(Some(status)) => {
                        if status.as_deref() == Some("pending") {
                            tx.prepare_cached(sql::GAME_LIVE)?.execute([game])?;
                        }
                    }
                    Err(rusqlite::Error::SqliteFailure(e, _))
                        if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY =>
                    {
                        return Err(same::no_game(game));
                    }
                    Err(e) => return Err(e.into()),
                }
                true
            }
            Op::MoveClock {
                ply,
                clk_ms,
                emt_ms,
                ..
            } => {
                tx.prepare_cached(sql::MOVE_CLOCK)?.execute(params![
                    clk_ms.map(|v| v as i64),
                    emt_ms.map(|v| v as i64),
                    game,
                    i64::from(*ply)
                ])? > 0
            }
            Op::Truncate {
                from_ply,
                actor,
                reason,
                ..
            } => {
                let detail = same::truncate_detail(*from_ply, reason);
                tx.execute(sql::TRUNCATE, params![game, i64::from(*from_ply)])?;
                tx.execute(
                    sql::AUDIT,
                    params![now_ms(), actor, "truncate", game, detail],
                )?;
                true
            }
            Op::Guard { edits, .. } => {
                if tx.execute(sql::GUARD, params![game, edits])? == 0 {
                    let now: Option<i64> =
                        tx.query_row(sql::EDITS, [game], |r| r.get(0)).optional()?;
                    return Err(same::edited_meanwhile(game, *edits, now));
                }
                false
            }
            Op::Incident { incident: i, .. } => {
                let inserted = tx.prepare_cached(crate::incidents::INSERT)?.query_row(
                    params![
                        game,
                        i.kind.as_str(),
                        i64::from(i.ply),
                        i.color.as_str(),
                        i.illegal.map(IllegalKind::name),
                        i.uci,
                        i.piece,
                        i.captured,
                        i64::from(i.clock_pressed),
                        i.delta_ms,
                        i.at_ms
                    ],
                    |r| r.get::<_, i64>(0),
                );
                let id = match inserted {
                    Ok(id) => id,
                    Err(rusqlite::Error::SqliteFailure(e, _))
                        if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY =>
                    {
                        return Err(same::no_game(game));
                    }
                    Err(e) => return Err(e.into()),
                };
                seqs.push(Some(id));
                continue;
            }
            Op::Result {
                result,
                termination,
                status,
                actor,
                ..
            } => {
                let n = tx.execute(
                    sql::RESULT,
                    params![result, termination, status, now_ms(), game],
                )?;
                if n == 0 {
                    return Err(same::no_game(game));
                }
                tx.execute(
                    sql::AUDIT,
                    params![now_ms(), actor, "result", game, payload],
                )?;
                true
            }
        };
        if applied {
            let (round, seq): (i64, i64) = tx
                .prepare_cached(sql::BUMP)?
                .query_row([game], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?
                .ok_or_else(|| same::no_game(game))?;
            tx.prepare_cached(sql::CHANGE)?.execute(params![
                round,
                seq,
                game,
                record.kind(),
                payload,
                now_ms()
            ])?;
            seqs.push(Some(seq));
        } else {
            seqs.push(None);
        }
    }
    tx.commit()?;
    Ok(seqs)
}

#[cfg(test)]
mod tests {
    use crate::StoreError;
    use rusqlite::ffi;

    fn failure(code: i32) -> StoreError {
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(ffi::Error::new(code), None))
    }

    /// The writer retries what may pass (a busy or locked database, a full disk, an I/O
    /// error) and gives up on what would fail again, as for sqlx's errors.
    #[test]
    fn busy_locked_full_and_io_errors_are_retried_refusals_are_not() {
        for code in [
            ffi::SQLITE_BUSY,
            ffi::SQLITE_LOCKED,
            ffi::SQLITE_IOERR_FSYNC,
            ffi::SQLITE_FULL,
            ffi::SQLITE_CANTOPEN,
        ] {
            assert!(failure(code).is_transient(), "code {code}");
        }
        for code in [
            ffi::SQLITE_CONSTRAINT_FOREIGNKEY,
            ffi::SQLITE_CONSTRAINT_PRIMARYKEY,
            ffi::SQLITE_CORRUPT,
        ] {
            assert!(!failure(code).is_transient(), "code {code}");
        }
        assert!(!StoreError::Sqlite(rusqlite::Error::QueryReturnedNoRows).is_transient());
    }
}
