//! What the parts of the ingest path ask of one another: the hall's jobs for the writer
//! ([`Job`]), the commands the routes, the writer and the port claims give the hall
//! ([`HallCommand`]), and the handles they send them through. The hall and the writer both
//! stand on this, so neither imports the other.

use super::id::{GameId, Seq};
use super::views::{ClockView, EboardView, GameStatus};
use boards::protocol::Orientation;
use relay_core::game::{Game, GameResult};
use relay_store::RoundId;
use relay_store::{RawEntry, StoreError, StoredMove};
use std::collections::HashMap;
use tokio::sync::{mpsc, oneshot};

/// Why the writer or the hall did not do what an arbiter asked. The HTTP edge gives each
/// kind its own status, so a game gone meanwhile is not answered like a clash.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// What the action names is not there (a game deleted meanwhile, an e-board not seen).
    #[error("{0}")]
    NotFound(String),
    /// The action clashes with the state it would change (another arbiter's edit came
    /// first, a board without a position to go on from).
    #[error("{0}")]
    Conflict(String),
    /// The store failed in a way that waiting does not mend (the detail is logged).
    #[error("{0}")]
    Store(String),
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Refusal {
        match e {
            StoreError::NotFound { .. } => Refusal::NotFound(e.to_string()),
            StoreError::Conflict(m) => Refusal::Conflict(m),
            other => Refusal::Store(other.to_string()),
        }
    }
}

/// Where the writer or the hall answers an arbiter's action: what it made, or why not.
pub type Answer<T> = oneshot::Sender<Result<T, Refusal>>;

/// A recorder's game as the hall saw it.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub serial: String,
    pub port: String,
    /// Which of the e-board's games this is (a new number: a new game was set up).
    pub game_no: u64,
    pub start_fen: Option<String>,
    pub chess960: bool,
    pub orientation: Option<&'static str>,
    pub moves: Vec<StoredMove>,
    pub result: GameResult,
    pub termination: Option<String>,
    /// When the board message that completed the newest move was received (ms since the
    /// epoch): spectators and the benchmark measure the delay from the board from it.
    pub read_at_ms: i64,
    /// When the hall judged the board and made this (the board still for the settle time):
    /// `/metrics` times the commit and publication from it.
    pub judged_at_ms: i64,
    /// A clock reading that came with this change (the lever press that ended the move): it
    /// rides on the move's message instead of a `clock` message of its own.
    pub press: Option<ClockView>,
    /// Illegal moves and clock corrections the recorder saw since the last snapshot, for
    /// the game's record (stored with the change, announced to the console only).
    pub incidents: Vec<relay_store::Incident>,
}

#[derive(Debug)]
pub enum Job {
    /// Raw board messages for the black box, in the order they were read.
    Raws(Vec<RawEntry>),
    /// An e-board was heard from on a port.
    Touch {
        serial: String,
        port: String,
    },
    Sync(Box<Snapshot>),
    /// A reading of an e-board's clock.
    Clock {
        serial: String,
        clock: ClockView,
    },
    Eboard(Box<EboardView>),
    Edit(GameEdit),
    /// An arbiter puts an e-board on a board number.
    Assign {
        round_id: RoundId,
        board_no: u32,
        serial: String,
        /// The game now on the board.
        reply: Answer<GameId>,
    },
    /// This relay takes over a port another relay may have been reading: every e-board's
    /// game but those of `keep` (boards this relay reads, whose games it stored itself) is
    /// read again from the store, and what their recorders resume from goes to the hall
    /// (`HallCommand::Resumed`, which answers `reply`).
    Reload {
        keep: Vec<String>,
        reply: oneshot::Sender<()>,
    },
    /// Another relay on the same database changed this game (an arbiter's edit there): if
    /// one of our boards plays it, our picture and its recorder take the stored game.
    Foreign {
        game: GameId,
    },
    /// The hall's recorder has the game adopted for `Foreign`: the board's changes count again.
    Adopted {
        serial: String,
    },
    /// Everything before this is stored: stop.
    Shutdown,
}

/// A stored game to carry on with when its e-board shows up again after a restart.
#[derive(Debug, Clone)]
pub struct Resume {
    pub game: Game,
    pub orientation: Orientation,
    pub moves: Vec<StoredMove>,
}

/// An arbiter's change to a game, computed by the HTTP layer and applied by the hall (to the
/// board's recorder) and the writer (to the store), in that order.
#[derive(Debug)]
pub struct GameEdit {
    pub game_id: GameId,
    pub action: EditAction,
    /// The moves the game has afterwards.
    pub moves: Vec<StoredMove>,
    /// The game's edit count the change was made on (`None`: whatever it is).
    pub edits: Option<i64>,
    /// The change's number.
    pub reply: Answer<Seq>,
}

impl GameEdit {
    /// Hands the hall this change of `game_id` (made on edit count `edits`, if given); the
    /// answer comes on the receiver once the writer stored it. `None`: the hall has stopped.
    pub fn send(
        hall: &ToHall,
        game_id: GameId,
        action: EditAction,
        moves: Vec<StoredMove>,
        edits: Option<i64>,
    ) -> Option<oneshot::Receiver<Result<Seq, Refusal>>> {
        let (reply, rx) = oneshot::channel();
        hall.send(HallCommand::Edit(GameEdit {
            game_id,
            action,
            moves,
            edits,
            reply,
        }))
        .then_some(rx)
    }
}

/// What arbiters ask of the hall.
#[derive(Debug)]
pub enum HallCommand {
    Edit(GameEdit),
    /// This relay is about to read `port`, which another relay may have been reading: the
    /// boards last seen on it are forgotten and every e-board's game without a board here is
    /// read again from the store (see `claims`). `reply` once the hall has what to resume.
    TakeOver {
        port: String,
        reply: oneshot::Sender<()>,
    },
    /// Another relay changed the game this e-board plays (see `writer::Job::Foreign`): the
    /// recorder carries on from the stored `moves` and `result`.
    Adopt {
        serial: String,
        game_id: GameId,
        moves: Vec<StoredMove>,
        result: GameResult,
    },
    /// The games read for a take-over, to resume from (see [`HallCommand::TakeOver`]).
    Resumed {
        resume: HashMap<String, Resume>,
        reply: oneshot::Sender<()>,
    },
    /// The game on an e-board goes on from the position on the board, `white` to move or not.
    ContinueFromBoard {
        serial: String,
        white_to_move: bool,
        reply: Answer<()>,
    },
}

#[derive(Debug, Clone)]
pub enum EditAction {
    Truncate {
        from_ply: u32,
    },
    Replace {
        what: String,
    },
    /// A move typed for a board without an e-board (the edit's one move), at the ply after
    /// the game's last: stored and announced as a board's move is.
    Typed,
    Result {
        result: GameResult,
        termination: Option<String>,
        status: GameStatus,
    },
}

/// A part's queue, unbounded (the hall and the readers never wait for the part), with the
/// part's end made beside it.
#[derive(Debug)]
pub struct Queue<T>(mpsc::UnboundedSender<T>);

// By hand: a derived `Clone` would ask `T: Clone`, which the queue does not need.
impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue(self.0.clone())
    }
}

impl<T> Queue<T> {
    /// A queue and the part's end of it.
    pub fn channel() -> (Queue<T>, mpsc::UnboundedReceiver<T>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Queue(tx), rx)
    }

    /// Hands `item` to the part; `false` when the part has stopped.
    pub fn send(&self, item: T) -> bool {
        self.0.send(item).is_ok()
    }
}

/// The hall's queue of commands.
pub type ToHall = Queue<HallCommand>;

/// The writer's queue of jobs.
pub type ToWriter = Queue<Job>;

/// How the store writes an orientation.
pub fn orientation_name(o: Orientation) -> &'static str {
    match o {
        Orientation::Normal => "normal",
        Orientation::Rotated => "rotated",
    }
}

/// An orientation as the store writes it.
pub fn parse_orientation(s: &str) -> Option<Orientation> {
    match s {
        "normal" => Some(Orientation::Normal),
        "rotated" => Some(Orientation::Rotated),
        _ => None,
    }
}
