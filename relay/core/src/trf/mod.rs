//! FIDE's Tournament Report File (TRF16, TRF-2026, with JaVaFo's TRF(x) additions): what
//! pairing programs write, read into plain values, and written back with relay's results.
//!
//! How the texts in `shared/specs/` are read here:
//! - A `001` line is a player: start rank (columns 5–8), sex (10), title (11–13), name
//!   (15–47), rating (49–52), federation (54–56), FIDE id (58–68), birth date (70–79), points
//!   (81–84), rank (86–89), then one ten-column cell per round from column 92: opponent
//!   (4), colour (1 of `w`/`b`/`-`), result (1). Columns count from 1, as in the texts.
//! - A cell naming an opponent is a game of the round; `+`/`-` there is a forfeit, `W`/`D`/`L`
//!   a game of less than one move, a blank result a pairing not yet played. A cell without an
//!   opponent (`0000` or blank) is a bye: `H`, `F`, `U`, `Z`, `+` or `-`; a blank result there
//!   is `Z` as the text says, unless the points column can only be made up by that bye (real
//!   files count a blank bye as half a point), then it is the `H` or `F` it scored.
//! - The rounds of the file are those up to the last cell anyone has filled; blank cells after
//!   it are padding, not byes of rounds nobody has paired.
//! - Teams come from `013` (name, then start ranks in board order) or `310` (number, name,
//!   nickname, then start ranks) lines.
//! - Lenient where real files are: CR, LF or CRLF line ends, Latin-1 or UTF-8 with or without
//!   a BOM, tabs as blanks, old title letters (`g`, `m`, `f`, `wg`…), `m`/`w`/`M`/`F`/`f` for
//!   sex, `###` comments and unknown tournament lines (`??2`), national rating lines (a
//!   federation code in columns 1–3) and JaVaFo's `XX?` lines (`XXR` read, the rest kept
//!   out). Dates in the forms real files use become ISO dates where they read.
//! - Strict where it matters: a record whose numbers do not read, a cell that does not read,
//!   two players with one start rank, a cell naming a player who is not there, or two players
//!   who disagree about their game is an error naming the line; nothing is returned then.

mod compare;
mod dates;
mod model;
mod order;
mod read;
mod records;
mod write;

pub use compare::{Difference, differences};
pub use model::{
    ByeCode, Cell, Colour, HalfPoints, Outcome, RoundRecord, Sex, Trf, TrfPlayer, TrfTeam,
    TrfTournament, scores_before, total,
};
pub use order::{Board, RoundPlan, TeamMatch, plan_rounds};
pub use read::{TrfError, decode, read_trf};
pub use records::{read_record, write_record};
pub use write::write_trf;

/// Whether `d` is an ISO date (YYYY-MM-DD), as the reader makes the dates it can read.
pub fn iso_date(d: &str) -> bool {
    dates::iso(d).as_deref() == Some(d)
}
