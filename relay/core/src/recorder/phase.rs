//! Where the recorder stands, as state of its own below the recorder's files: the game's
//! phase, how far reading the board has come, and the board remembered while no game is known.
//!
//! The phase and the reading were five flags (`finished`, `ended_on_board`, `out_of_sync`;
//! `have_board`, `evaluated`) whose combinations could say what never happens: a game ended
//! on the board but not finished, or ended on the board while out of sync. Each enum below
//! holds only the combinations the recorder reaches. They are two enums, not one, because
//! they change apart: a stored game resumed after a restart is finished or going on before
//! any board has been read, and a finished game's board still settles and is judged (for the
//! start position of the next game).
//!
//! Left as flags and options in the recorder, because they hold in any phase: whether
//! readings were missed (a silence while a clock ran, cleared once a board is explained), the
//! result the board proposes (players may play on after it), and whether a game exists at
//! all (an arbiter may give a result before any game began, and continue from the board
//! after that).

use boards::protocol::{ClockSide, Orientation};
use shakmaty::Board;

/// The game's phase, as far as reading the board into it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// The game goes on (or none has begun yet) and the board agrees with it: still boards
    /// are read into moves.
    Playing,
    /// The board shows a position the game cannot explain; the game waits for it to come
    /// back (or for an arbiter).
    OutOfSync,
    /// Mate or stalemate on the board ended the game. The last move can still turn out to be
    /// another one (a queen slid past its square), so a correction or takeback of the end
    /// reopens the game.
    EndedOnBoard,
    /// A result was given (by an arbiter, or the stored game's): nothing on the board is
    /// recorded until the next game is set up. `out_of_sync`: the board disagreed with the
    /// game when the result came; it is still reported so, and the game waits again for the
    /// board if the result is taken back.
    Finished { out_of_sync: bool },
}

impl Phase {
    /// The game has ended, on the board or by a result given.
    pub(super) fn is_over(self) -> bool {
        matches!(self, Phase::EndedOnBoard | Phase::Finished { .. })
    }

    /// The board shows a position the game cannot explain.
    pub(super) fn is_out_of_sync(self) -> bool {
        matches!(
            self,
            Phase::OutOfSync | Phase::Finished { out_of_sync: true }
        )
    }

    /// The phase once the board agrees with the game again (an arbiter continued from it):
    /// whether the game is over does not change.
    pub(super) fn in_sync(self) -> Phase {
        match self {
            Phase::OutOfSync => Phase::Playing,
            Phase::Finished { .. } => Phase::Finished { out_of_sync: false },
            p => p,
        }
    }

    /// The phase once a result is given (`over`) or taken back: the board's agreement with
    /// the game stays as it was.
    pub(super) fn with_result(self, over: bool) -> Phase {
        let out_of_sync = self.is_out_of_sync();
        match (over, out_of_sync) {
            (true, _) => Phase::Finished { out_of_sync },
            (false, true) => Phase::OutOfSync,
            (false, false) => Phase::Playing,
        }
    }
}

/// How far reading the board has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BoardRead {
    /// No dump has shown the whole board yet. Field updates before it are kept in the board
    /// as read, but there is nothing to judge until the first dump.
    Unread,
    /// The board changed at `since_ms` and is judged once it has been still for the settle
    /// time: a hand may still be moving.
    Settling { since_ms: u64 },
    /// The still board has been judged.
    Judged,
}

/// A board first read in the middle of a game.
#[derive(Clone, Debug)]
pub(super) struct LateBoard {
    pub(super) board: Board,
    pub(super) orientation: Orientation,
    pub(super) running: Option<ClockSide>,
}
