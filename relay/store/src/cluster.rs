//! What several relays on one PostgreSQL need from it, and nothing more: notifications of
//! committed changes (`LISTEN/NOTIFY`), the change numbers to start following from, and
//! session advisory locks that say which relay reads which port.
//!
//! The database is the only thing the relays share; there is no protocol between them. A
//! notification carries `round:seq` and never a change itself: a listener reads the changes
//! from the log (`Store::changes_since`), so a notification lost with a connection costs
//! nothing once the listener catches up by change number.

use crate::error::{Result, StoreError, plain_message};
use crate::id::{RoundId, Seq};
use crate::pool::{Store, on_pool};
use sqlx::Connection;
use sqlx::postgres::{PgConnection, PgListener};

/// The PostgreSQL notification channel that carries `round:seq` after each commit.
pub const CHANGES_CHANNEL: &str = "relay_changes";
/// The channel that says "rounds or tournaments were edited" (delays, names, final).
pub const ROUNDS_CHANNEL: &str = "relay_rounds";
/// The channel that says "an e-board's live state changed" (see `Store::put_eboard_live`).
pub const EBOARDS_CHANNEL: &str = "relay_eboards";

/// Every channel a listener listens on.
const CHANNELS: [&str; 3] = [CHANGES_CHANNEL, ROUNDS_CHANNEL, EBOARDS_CHANNEL];

/// What a listener heard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    /// A round's changes up to `seq` are committed.
    Changed { round: RoundId, seq: Seq },
    /// Rounds or tournaments were edited: delays and names may differ.
    RoundsEdited,
    /// A relay announced news of an e-board it reads.
    EboardsChanged,
    /// The connection was lost and made again: anything may have been missed meanwhile.
    Reconnected,
}

/// A connection of its own that listens for other relays' commits (PostgreSQL only).
pub struct Listener(PgListener);

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Listener")
    }
}

impl Listener {
    /// The next thing heard. After a lost connection this is [`Heard::Reconnected`] once the
    /// connection is back (the caller catches up from the log); an error means it could not
    /// be made again yet (wait a little and ask again).
    pub async fn next(&mut self) -> Result<Heard> {
        loop {
            match self.0.try_recv().await? {
                // sqlx has connected again and listens on every channel before saying so
                // (`eager_reconnect`, its default): whatever the caller reads from the log
                // after this cannot miss a later notification.
                None => return Ok(Heard::Reconnected),
                Some(n) if n.channel() == ROUNDS_CHANNEL => return Ok(Heard::RoundsEdited),
                Some(n) if n.channel() == EBOARDS_CHANNEL => return Ok(Heard::EboardsChanged),
                Some(n) => {
                    let parsed = n
                        .payload()
                        .split_once(':')
                        .and_then(|(r, s)| Some((r.parse::<i64>().ok()?, s.parse::<i64>().ok()?)));
                    // Someone else's notification on our channel: not ours to read.
                    if let Some((round, seq)) = parsed {
                        return Ok(Heard::Changed {
                            round: round.into(),
                            seq: seq.into(),
                        });
                    }
                }
            }
        }
    }
}

/// Session advisory locks on a connection of their own: a lock is held for as long as that
/// connection lives, so a relay that dies (even by SIGKILL) lets go of everything it held the
/// moment the server sees its connection close.
pub struct Locks {
    conn: PgConnection,
}

impl std::fmt::Debug for Locks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Locks")
    }
}

/// A lock's number for a name (64-bit FNV-1a: the same on every relay and every run).
pub fn lock_key(name: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

impl Locks {
    /// Takes `name` if nobody holds it; `true` when this connection holds it now.
    pub async fn try_take(&mut self, name: &str) -> Result<bool> {
        let (got,): (bool,) = sqlx::query_as("SELECT pg_try_advisory_lock($1)")
            .bind(lock_key(name))
            .fetch_one(&mut self.conn)
            .await?;
        Ok(got)
    }

    /// Lets go of `name`.
    pub async fn release(&mut self, name: &str) -> Result<()> {
        sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(lock_key(name))
            .execute(&mut self.conn)
            .await?;
        Ok(())
    }

    /// Whether the connection (and so every lock on it) is still there.
    pub async fn alive(&mut self) -> bool {
        self.conn.ping().await.is_ok()
    }
}

impl Store {
    /// A listener for other relays' commits; `None` on SQLite (one relay per file).
    pub async fn listen(&self) -> Result<Option<Listener>> {
        let Store::Postgres(pool) = self else {
            return Ok(None);
        };
        let mut l = PgListener::connect_with(pool)
            .await
            .map_err(|e| StoreError::Connect(plain_message(&e)))?;
        l.listen_all(CHANNELS).await?;
        Ok(Some(Listener(l)))
    }

    /// A connection for advisory locks; `None` on SQLite, where one relay owns the file.
    pub async fn locks(&self) -> Result<Option<Locks>> {
        let Store::Postgres(pool) = self else {
            return Ok(None);
        };
        let conn = PgConnection::connect_with(&pool.connect_options())
            .await
            .map_err(|e| StoreError::Connect(plain_message(&e)))?;
        Ok(Some(Locks { conn }))
    }

    /// Every round's change number now (where a relay starts following from).
    pub async fn round_seqs(&self) -> Result<Vec<(RoundId, Seq)>> {
        Ok(
            on_pool!(self, pool => sqlx::query_as("SELECT id, seq FROM rounds")
            .fetch_all(pool).await?),
        )
    }

    /// Keeps an e-board's live state (`view`, JSON) for relays that do not read it, and tells
    /// them (PostgreSQL only; on SQLite nobody else reads the file). A state older than the
    /// one kept never replaces it.
    pub async fn put_eboard_live(&self, serial: &str, view: &str, at_ms: i64) -> Result<()> {
        if let Store::Postgres(pool) = self {
            sqlx::query(
                "INSERT INTO eboard_live (serial, view, updated_at) VALUES ($1, $2, $3)
                 ON CONFLICT (serial) DO UPDATE SET view = excluded.view, updated_at = excluded.updated_at
                 WHERE eboard_live.updated_at <= excluded.updated_at",
            )
            .bind(serial)
            .bind(view)
            .bind(at_ms)
            .execute(pool)
            .await?;
            sqlx::query("SELECT pg_notify($1, '')")
                .bind(EBOARDS_CHANNEL)
                .execute(pool)
                .await?;
        }
        Ok(())
    }

    /// E-boards' live states kept since `after_ms` (inclusive): (view JSON, updated at).
    pub async fn eboards_live_since(&self, after_ms: i64) -> Result<Vec<(String, i64)>> {
        Ok(on_pool!(self, pool => sqlx::query_as(
            "SELECT view, updated_at FROM eboard_live WHERE updated_at >= $1 ORDER BY updated_at")
            .bind(after_ms).fetch_all(pool).await?))
    }

    /// Tells other relays that rounds or tournaments were edited (PostgreSQL only).
    pub(crate) async fn notify_rounds_edited(&self) -> Result<()> {
        if let Store::Postgres(pool) = self {
            sqlx::query("SELECT pg_notify($1, '')")
                .bind(ROUNDS_CHANNEL)
                .execute(pool)
                .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_keys_are_stable_and_differ() {
        assert_eq!(lock_key("/dev/ttyUSB0"), lock_key("/dev/ttyUSB0"));
        assert_ne!(lock_key("/dev/ttyUSB0"), lock_key("/dev/ttyUSB1"));
        // FNV-1a of the empty string is its offset basis.
        assert_eq!(lock_key("") as u64, 0xcbf2_9ce4_8422_2325);
    }
}
