//! PGN in and out: [`read_games`] imports what real software writes (built on pgn-reader), and
//! [`write_game`] exports in the strict export format of the PGN standard (§8), with the clock
//! commands of the PGN clock supplement (`[%clk]`, `[%emt]`).

pub mod archive;
mod charset;
mod error;
mod reader;
pub mod split;
mod writer;

pub use charset::decode_pgn_bytes;
pub use error::{ImportErrorKind, PgnImportError};
pub use reader::{read_game, read_games};
pub(crate) use writer::tag_line;
pub use writer::{WriteOptions, export_tags, write_game, write_games};
