//! ChessBase's old game file (CBF) and its index (CBI), as described in
//! `../shared/specs/chessbase-cbf-format.txt` (the 1993 description by Horst Aurisch and
//! others). A record is a 14-byte coded header, the player and source texts (coded), one byte
//! a move (coded), the comments (plain) and, for a game that does not begin from the usual
//! position, 33 bytes of start position. A move is stored as its number in the list ChessBase's
//! move generator makes, so the generator's order *is* the format.
//!
//! ## What a record holds, and how each open question was settled
//!
//! The 1993 text leaves room, and relay's first writer (2025-2026) filled it by guessing. The
//! only outside program that still reads the format is Scidb's ChessBase-DOS codec (Gregor
//! Cramer, GPL-2.0-or-later, `src/db/cbf/`), written to read real ChessBase databases (its
//! comments cite games of public ChessBase archives it was checked on). No ChessBase file
//! could be found to test with here, so where the text is silent the reader written against
//! real files decides, and where the text speaks, the text and the reader were compared:
//!
//! - **Header byte 13** (§2.7, "magic", "checksum ?"). ChessBase's public games carry a check
//!   byte computed from the other header bytes, and Scidb refuses a record whose byte 13 is
//!   neither `GY·0x25 + byte5 + byte9` nor `byte3·0x1EC1·(byte8 + 1)·GY` (mod 256, on the
//!   plain header). Written: the first. Relay's first writer wrote 0, which is how a record
//!   from it is told apart (see "Reading" below).
//! - **Castling in the generator** (§2.4: "requires the king and the corresponding rook to be
//!   correctly placed, and the intervening squares to be free"). The text names no castling
//!   right and Scidb tests none: king on e1/e8, own rook in the corner, the squares between
//!   empty, and the castling is numbered whether or not it may still be played. Relay's first
//!   writer also asked for the right, so after a king or rook had moved and come back, every
//!   later move of that side numbered one lower than ChessBase's.
//! - **The pawn on the a-file** (not in the text). Scidb counts one extra number for a pawn
//!   of the side to move on a5 (White) or a4 (Black) when the last move was no double step,
//!   after that pawn's own moves: ChessBase's generator lists a capture "a5xh6 e.p." that
//!   wraps round the board edge. It is a number no move has. In the Tata Steel 2017
//!   broadcast 30 of 92 games reach such a position, and 17 of relay's first files of them
//!   failed in Scidb from this and the castling question above; a reader disagreeing with
//!   ChessBase here could not have read a third of real games, which is why the reader is
//!   taken to be right.
//! - **The e.p. carried over a castling** (§2.4's "illegal e.p."). After a double step
//!   answered by castling, ChessBase keeps the e.p. file for the side that made the double
//!   step: its pawns that could take "e.p." towards that file count one number each, whatever
//!   stands on the target square (an enemy piece there is counted a second time, after its
//!   ordinary capture), again for no move relay writes. Scidb does the same.
//! - **Promotions, e.p., the order of pieces and directions**: the text and Scidb agree with
//!   each other and with relay's first writer (below).
//! - **Texts.** ChessBase for DOS wrote the PC's code page; Scidb reads code page 850, and
//!   so do relay now (relay's first writer wrote Latin-1). The player text is "White-Black",
//!   split by readers at the *first* '-', so a '-' in White's name ("Vachier-Lagrave") is
//!   written as the code page's horizontal line '─' (0xC4), which relay reads back as '-'
//!   (and `relay convert` says so when it writes one); the source text is the event with the round in
//!   brackets, "Wijk aan Zee (3)", the form Scidb takes the round out of. There is no site.
//! - **Comments** (§2.5): the area starts with one 0xFF; each comment is four bytes of
//!   evaluations (0: none) and its text, and ends with 0xFF. Scidb reads the area one byte
//!   past the moves, which is that first 0xFF.
//!
//! ## The rules as written and read
//!
//! - Move generator (§2.4): the squares are visited file by file, a1..a8, b1..b8, …, h1..h8,
//!   and each piece of the side to move adds its moves. All directions are from White's side
//!   of the board for both colours, only pawns go towards their own promotion rank.
//!   King: the steps (file, rank) (−1,−1), (−1,0), (−1,+1), (0,−1), (0,+1), (+1,−1), (+1,0),
//!   (+1,+1), regardless of threats, then the short and the long castling as above (checks
//!   are not looked at). Queen: the bishop's runs, then the rook's. Rook: runs left, down,
//!   right, up. Bishop: runs left-down, right-down, right-up, left-up. A run stops before an
//!   own piece and on (taking) an enemy one. Knight: (−2,−1), (−2,+1), (+2,−1), (+2,+1),
//!   (−1,−2), (−1,+2), (+1,−2), (+1,+2). Pawn: the double step (from its start rank, both
//!   squares empty), the single step, the capture towards the a-file, the capture towards
//!   the h-file (each to the last rank as four moves: =Q, =R, =B, =N), then e.p. towards the
//!   a-file and towards the h-file, with the numbers for no move of the two items above in
//!   their places. The list is pseudo-legal (a move may leave the own king in check); a move
//!   is written as its number, from 1.
//! - A move byte is its number 1..=127, bit 7 set when the move has a comment. A game whose
//!   move would need a number above 127, or a commented move numbered 127 (that byte, 0xFF,
//!   starts a variation), cannot be written. Variations are never written (a [`Game`] has
//!   none); reading skips them ($FF … $80, nested), and their commented moves use up their
//!   comments.
//! - Coding: the header, texts and moves are XOR-coded exactly as the specification's C
//!   snippets say (writing runs them backwards: header byte 11 first, then the 14-byte key run).
//!   Multibyte integers are big-endian.
//! - Header: the year comes from the `Date` tag (1772..=2026, else 127, "no year": a game of
//!   2027 or later is written without its year; reading gives `YYYY.??.??` or `????.??.??`).
//!   Result: 0 = 0-1, 1 = ½-½, 2 = 1-0, 3 with variant 0 = `*` (reading any 3 gives `*`). Elo:
//!   `WhiteElo`/`BlackElo` rounded to the nearest multiple of 5 and kept when within
//!   1605..=2875 as (Elo − 1600)/5, else 0 ("none"). ECO (standard start only): "B90" is ECO1 =
//!   1·100 + 90 + 1, its bits spread as §2.2 says; ECO2 (the sub-code) is written 0 and ignored
//!   when read, and an ECO1 whose letter would be F is ignored (no such ECO code). Byte 12 is
//!   the number of full moves the game spans (a game of more than 255 cannot be written),
//!   byte 13 the check byte above; flags2 bit 6 is written 0 and ignored. Games marked deleted
//!   (flags1 bit 7) are skipped.
//! - Set-up start: flags1 bit 1 Black to move, bits 2..5 the castling rights (White O-O-O,
//!   White O-O, Black O-O-O, Black O-O), flags2 bits 0..3 the en passant file (1..8, 0 none;
//!   written from [`EnPassantMode::Always`] so that the reader's generator numbers alike).
//!   The 33 bytes hold two squares a byte in the order a1, b1, …, h1, a2, …, h8, the first of
//!   each pair in the high nibble, pieces K1 Q2 N3 B4 R5 P6 (Black + 8), and the full move
//!   number − 1 (a start beyond move 256 cannot be written). The half-move clock is not kept
//!   (read as 0). Reading drops castling rights whose king and rook are not in place and an en
//!   passant file no double step can explain, rather than refusing the game.
//! - Texts, each at most 63 bytes of code page 850. What a game cannot have written exactly
//!   is refused ([`encode_game`] says why; `relay convert` leaves such a game out, named):
//!   a character of the names that code page 850 lacks, or one of "óúñÑªº", whose codes ChessBase shows as chess
//!   pieces in names; names over 63 bytes together. The event is the least of a game: a
//!   character the code page lacks is written '?' and an event too long is cut, keeping the
//!   round. The round is written when it is digits and dots ("3", "1.4"), else left out;
//!   `Site` and the other tags are not kept. Missing or "?" names and event are written empty and read back as "?".
//!   Reading sets the seven roster tags (`Site` "?"), `WhiteElo`/`BlackElo`/`ECO` when
//!   present, and the start position in [`Game::start`] (as the PGN reader does, not as tags).
//! - Comments: as above, '\n' written 0xFE ('\r' dropped); characters code page 850 lacks,
//!   0xFE and 0xFF, and 177..=182 (which ChessBase shows as piece symbols) are written '?'.
//!   Only the move's comment is written: CBF has no clocks, and a comment before the first
//!   move has no place (dropped). Reading splits the area at 0xFF; a piece whose first four
//!   bytes are all below 0x20 with the fourth 0 loses those four, another loses its leading
//!   bytes below 0x20 (evaluations; they are not kept); 0xFE reads as '\n' and 177..=182 as
//!   "K", "Q", "N", "B", "R" and "" (the pawn, as in SAN); an empty text is no comment.
//! - CBI: `games + 1`, then for game i (from 1) its offset + i + 1, then the file's length +
//!   games + 2, each a big-endian `u32`. Reading goes through the index when there is one
//!   (§2 says games should be reached only through it), else record after record.
//!
//! ## Reading
//!
//! A record whose byte 13 is one of the two check values is read by ChessBase's rules above.
//! One whose byte 13 is neither was written by relay before this change (or is a "private"
//! ChessBase game, which nobody can read): it is read by relay's first rules — the generator
//! without the numbers for no move and with castling only while the right is held, Latin-1
//! texts, the source text `Event|Site|Round`, the players split at " - " when there is one.
//! If a record does not read by the rules its byte 13 points to, the other rules are tried.
//!
//! ## Where things are
//!
//! - `layout.rs`: the record's sizes, marker bytes and XOR codings (§2.1–§2.5).
//! - `movegen.rs`: ChessBase's move generator, whose order numbers the moves (§2.4).
//! - `text.rs`: the player, source and comment texts in code page 850, both ways.
//! - `position.rs`: a set-up start position and its header flags (§2.6).
//! - `write.rs`: a game as a record; `read.rs`: the games of a file; `cbi.rs`: the index.
//! - `error.rs`: [`CbfError`], every refusal of the module, each naming what was refused.
//!
//! [`Game`]: crate::game::Game
//! [`Game::start`]: crate::game::Game::start
//! [`EnPassantMode::Always`]: shakmaty::EnPassantMode::Always

mod cbi;
mod error;
mod layout;
mod movegen;
mod position;
mod read;
mod text;
mod write;

pub use cbi::index;
pub use error::CbfError;
pub use movegen::{EpMemory, Rules, generator_moves};
pub use read::games;
pub use text::write_notes;
pub use write::encode_game;

#[cfg(test)]
mod tests;
