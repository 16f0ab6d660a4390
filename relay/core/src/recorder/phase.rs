//! Where the recorder stands, as state of its own below the recorder's files.

use boards::protocol::{ClockSide, Orientation};
use shakmaty::Board;

/// A board first read in the middle of a game.
#[derive(Clone, Debug)]
pub(super) struct LateBoard {
    pub(super) board: Board,
    pub(super) orientation: Orientation,
    pub(super) running: Option<ClockSide>,
}
