//! Which relay reads which port, when several board-reading relays share one PostgreSQL, and
//! which relay pushes to each upstream target ([`Duty`]).
//!
//! A port is read only by the relay holding its PostgreSQL session advisory lock (named after
//! the machine and the port's path). Every board-reading relay asks for the locks of its
//! ports four times a second; the one that gets a lock reads the port, the others wait. The
//! server lets go of a lock the moment the connection holding it closes, so when the reading
//! relay dies (even by SIGKILL, even with the machine's power), the next ask of a waiting
//! relay gets it: a standby takes over within a second or so, with no flag and no protocol of
//! our own. A relay that loses its lock connection reads on (the database may be down for
//! every relay, and readings must not be lost meanwhile); once connected again it takes its
//! locks back, and stops reading any port another relay took in between.
//!
//! Taking over a port, the relay first reads the games of the e-boards from the store (the
//! other relay stored moves meanwhile), so its recorders carry on where the store stands, as
//! after a restart.
//!
//! On SQLite one relay owns the file, and every port is its own at once.

use super::instance::{host_name, instance_name};
use super::jobs::{HallCommand, ToHall};
use parking_lot::{Mutex, MutexGuard};
use relay_store::{Locks, Store};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often a waiting relay asks for the ports it wants, and checks its lock connection.
const ASK_EVERY: Duration = Duration::from_millis(250);

/// The lock a port is read under: the same port path on two machines is two ports.
fn lock_name(port: &str) -> String {
    let canonical =
        std::fs::canonicalize(port).map_or_else(|_| port.to_string(), |p| p.display().to_string());
    format!("relay-port:{}:{canonical}", host_name())
}

/// The ports this relay wants, and whether it holds each.
#[derive(Debug)]
pub struct PortClaims {
    /// Ports are read only under a lock (PostgreSQL); otherwise every port is ours.
    locking: bool,
    /// The service's stop flag.
    stop: Arc<AtomicBool>,
    ports: Mutex<HashMap<String, Claim>>,
}

#[derive(Debug)]
struct Claim {
    held: bool,
    /// Set to end the port's session: the service stops, or the lock was lost.
    session_stop: Arc<AtomicBool>,
}

impl PortClaims {
    pub fn new(locking: bool, stop: Arc<AtomicBool>) -> PortClaims {
        PortClaims {
            locking,
            stop,
            ports: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Claim>> {
        self.ports.lock()
    }

    /// The stop flag a session on `port` runs under while this relay holds the port; `None`
    /// while another relay reads it (the port is wanted from now on).
    pub fn session(&self, port: &str) -> Option<Arc<AtomicBool>> {
        if !self.locking {
            return Some(self.stop.clone());
        }
        let mut ports = self.lock();
        let c = ports.entry(port.to_string()).or_insert_with(|| Claim {
            held: false,
            session_stop: Arc::new(AtomicBool::new(true)),
        });
        c.held.then(|| c.session_stop.clone())
    }

    /// Each wanted port and whether this relay reads it (for `/health`; none on SQLite, where
    /// every port is read without asking).
    pub fn ports(&self) -> Vec<(String, bool)> {
        let mut v: Vec<(String, bool)> = self
            .lock()
            .iter()
            .map(|(p, c)| (p.clone(), c.held))
            .collect();
        v.sort();
        v
    }

    /// The ports this relay reads (`true`) or waits for (`false`).
    fn ports_held(&self, held: bool) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, c)| c.held == held)
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// One port's session ends: another relay holds it.
    fn lose(&self, port: &str) {
        if let Some(c) = self.lock().get_mut(port) {
            c.held = false;
            c.session_stop.store(true, Ordering::Relaxed);
        }
    }

    fn grant(&self, port: &str) {
        if let Some(c) = self.lock().get_mut(port) {
            c.held = true;
            c.session_stop = Arc::new(AtomicBool::new(false));
        }
    }

    /// Every port's session ends (the service stops).
    fn lose_all(&self) {
        for c in self.lock().values_mut() {
            c.held = false;
            c.session_stop.store(true, Ordering::Relaxed);
        }
    }
}

/// Asks for the wanted ports' locks for the life of the service (PostgreSQL only). Before
/// reading a port it takes, the hall is told (see [`take_over`]).
pub async fn keep(store: Store, hall: ToHall, claims: Arc<PortClaims>) {
    if !claims.locking {
        return;
    }
    let mut locks: Option<Locks> = None;
    let mut complained = false;
    // After the lock connection came back: the ports still read must be taken again.
    let mut reconfirm = false;
    let mut tick = tokio::time::interval(ASK_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if claims.stop.load(Ordering::Relaxed) {
            claims.lose_all();
            return;
        }
        if locks.is_none() {
            match store.locks().await {
                Ok(l) => {
                    locks = l;
                    complained = false;
                    reconfirm = true;
                }
                Err(e) => {
                    if !complained {
                        tracing::warn!(error = %e, "cannot reach the database to hold ports; the ports read go on being read, no other is taken");
                        complained = true;
                    }
                    continue;
                }
            }
        }
        let Some(l) = locks.as_mut() else { continue };
        if !l.alive().await {
            // The server let go of our locks with the connection. The ports read are read
            // on (the database may be down for every relay, and readings must not be lost
            // meanwhile); once connected again they are taken back, and one another relay
            // took in between is let go.
            tracing::warn!("lost the connection holding the ports; reading on until it is back");
            locks = None;
            continue;
        }
        if reconfirm {
            let mut ok = true;
            for port in claims.ports_held(true) {
                match l.try_take(&lock_name(&port)).await {
                    Ok(true) => {}
                    Ok(false) => {
                        tracing::warn!(%port, "another relay took the port while the database was out of reach: stopped reading it");
                        claims.lose(&port);
                    }
                    Err(_) => {
                        ok = false;
                        break;
                    }
                }
            }
            if !ok {
                locks = None;
                continue;
            }
            reconfirm = false;
        }
        for port in claims.ports_held(false) {
            match l.try_take(&lock_name(&port)).await {
                Ok(true) => {
                    take_over(&hall, &port).await;
                    claims.grant(&port);
                    tracing::info!(%port, instance = instance_name(), "this relay reads the port now");
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "lost the connection holding the ports");
                    locks = None;
                    break;
                }
            }
        }
    }
}

/// A duty one relay of a cluster does at a time: pushing to one target (a cloud relay, a
/// Lichess round). It is held under a PostgreSQL session advisory lock, as a port is: the
/// relay holding the lock pushes, the others stand by, and when the pushing relay dies (even
/// by SIGKILL) the next ask of a standby takes the lock and it pushes from where the store
/// stands. Two relays pushing the same changes would do no harm (the cloud applies a game
/// once, Lichess matches games by `[GameId]`), but it doubles the requests, and Lichess
/// answers a round asked too often with a 429 and a minute's wait. On SQLite the duty is
/// always this relay's.
#[derive(Debug)]
pub struct Duty {
    /// The lock's name.
    name: String,
    /// PostgreSQL: the duty is done only under the lock.
    locking: bool,
    locks: Option<Locks>,
    /// The connection in `locks` holds the lock.
    held: bool,
    /// This relay does the duty. It outlasts a lost lock connection: the database may be out
    /// of reach for every relay, and the duty goes on until another relay is seen to hold it.
    mine: bool,
    asked: Option<tokio::time::Instant>,
}

impl Duty {
    pub fn new(name: String) -> Duty {
        Duty {
            name,
            locking: true,
            locks: None,
            held: false,
            mine: false,
            asked: None,
        }
    }

    /// Whether this relay does the duty now. The database is asked at most every
    /// [`ASK_EVERY`]; in between the last answer stands.
    pub async fn mine(&mut self, store: &Store) -> bool {
        if !self.locking {
            return true;
        }
        if self.asked.is_some_and(|t| t.elapsed() < ASK_EVERY) {
            return self.mine;
        }
        self.asked = Some(tokio::time::Instant::now());
        if let Some(l) = self.locks.as_mut()
            && !l.alive().await
        {
            // The server let go of the lock with the connection.
            tracing::warn!(duty = %self.name, "lost the connection holding a duty; going on until it is back");
            self.locks = None;
        }
        if self.locks.is_none() {
            match store.locks().await {
                Ok(None) => {
                    // SQLite: one relay owns the file.
                    self.locking = false;
                    self.mine = true;
                    return true;
                }
                Ok(Some(l)) => {
                    self.locks = Some(l);
                    self.held = false;
                }
                Err(_) => return self.mine,
            }
        }
        if self.held {
            return true;
        }
        let Some(l) = self.locks.as_mut() else {
            return self.mine;
        };
        match l.try_take(&self.name).await {
            Ok(true) => {
                self.held = true;
                if !self.mine {
                    tracing::info!(duty = %self.name, instance = instance_name(), "this relay does the duty now");
                }
                self.mine = true;
            }
            Ok(false) => {
                if self.mine {
                    tracing::warn!(duty = %self.name, "another relay took the duty while the database was out of reach: standing by");
                }
                self.mine = false;
            }
            Err(_) => self.locks = None,
        }
        self.mine
    }
}

/// Before reading a port another relay may have been reading: the hall forgets the boards it
/// had on it and the writer reads their games from the store, so the recorders carry on from
/// what is stored.
async fn take_over(hall: &ToHall, port: &str) {
    let (reply, done) = tokio::sync::oneshot::channel();
    if hall.send(HallCommand::TakeOver {
        port: port.to_string(),
        reply,
    }) {
        let _ = done.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_locking_every_port_is_ours_and_with_it_none_until_granted() {
        let stop = Arc::new(AtomicBool::new(false));
        let free = PortClaims::new(false, stop.clone());
        assert!(free.session("/dev/ttyUSB0").is_some());
        let locked = PortClaims::new(true, stop);
        assert!(locked.session("/dev/ttyUSB0").is_none());
        assert_eq!(locked.ports_held(false), ["/dev/ttyUSB0"]);
        locked.grant("/dev/ttyUSB0");
        let s = locked.session("/dev/ttyUSB0").expect("held");
        assert!(!s.load(Ordering::Relaxed));
        locked.lose_all();
        assert!(
            s.load(Ordering::Relaxed),
            "a lost port's session is told to stop"
        );
        assert!(locked.session("/dev/ttyUSB0").is_none());
    }
}
