//! Games out in one of the archive formats: PGN as the relay writes it, PGN in the archival
//! order of §12, EPD (one line per position), the one-byte move encoding, PGC (§20) or
//! ChessBase CBF with its CBI index. The same code serves `relay convert`, `relay export` and
//! the export routes.

use crate::game::Game;
use crate::pgn::archive::{ArchiveKey, archive_key, compare, movetext};
use crate::pgn::{WriteOptions, write_game};
use std::io::{Cursor, Read, Seek, SeekFrom, Write};

/// Where the archival order keeps the written games until it can sort them: memory unless the
/// caller gives it somewhere else ([`GameWriter::with_spill`]: `relay convert` gives it a file,
/// so a file of any size sorts in the memory of its keys).
pub trait Spill: Read + Write + Seek + std::fmt::Debug {}
impl<T: Read + Write + Seek + std::fmt::Debug> Spill for T {}

/// How many bytes of a game's movetext sort with its key: enough to tell nearly every two
/// games with equal tags apart without reading their text back; ties beyond are read back.
const PREFIX: usize = 64;

/// A game held for the archival order: its key, the start of its movetext, and where its
/// written text lies in the spill.
#[derive(Debug)]
struct Held {
    key: ArchiveKey,
    prefix: Vec<u8>,
    at: u64,
    len: usize,
}

/// Why a game was not added.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    /// The format cannot hold this game (Chess960 in CBF, a name too long…): nothing of it
    /// was written, and the writer goes on with the next game.
    #[error("{0}")]
    CannotHold(String),
    /// Writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A format games can be written in. With the `clap` feature it is also the value of the
/// commands' `--to` (`relay convert`, `relay export`), spelled as [`Format::parse`] reads it,
/// with the doc comments below as the help; the CBI index is no choice there, as it is written
/// beside its CBF file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Format {
    /// PGN export format, games in the order given.
    Pgn,
    /// PGN export format in the standard's archival order (§12; the games are held until the
    /// end).
    Archive,
    /// EPD: a line per position of every game, in game order (id, hmvc, fmvn, sm, cc where
    /// clocked).
    Epd,
    /// The one-byte move encoding, in its container (`onebyte`: tags, start, result kept).
    #[cfg_attr(feature = "clap", value(name = "onebyte"))]
    OneByte,
    /// PGC, the binary PGN of the PGN standard (§20: tags, start, moves, result kept).
    Pgc,
    /// ChessBase CBF; its CBI index is written beside it (same name, `.cbi`).
    Cbf,
    /// The CBI index of the CBF file the same games make.
    #[cfg_attr(feature = "clap", value(skip))]
    Cbi,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "pgn" => Some(Format::Pgn),
            "archive" => Some(Format::Archive),
            "epd" => Some(Format::Epd),
            "onebyte" => Some(Format::OneByte),
            "pgc" => Some(Format::Pgc),
            "cbf" => Some(Format::Cbf),
            "cbi" => Some(Format::Cbi),
            _ => None,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Pgn | Format::Archive => "application/x-chess-pgn; charset=utf-8",
            Format::Epd => "text/plain; charset=utf-8",
            Format::OneByte | Format::Pgc | Format::Cbf | Format::Cbi => "application/octet-stream",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::Pgn | Format::Archive => "pgn",
            Format::Epd => "epd",
            Format::OneByte => "1b",
            Format::Pgc => "pgc",
            Format::Cbf => "cbf",
            Format::Cbi => "cbi",
        }
    }
}

/// Writes games one at a time (for the archival order, at the end).
#[derive(Debug)]
pub struct GameWriter<W: Write> {
    format: Format,
    out: W,
    /// EPD: only the final position of each game.
    final_only: bool,
    held: Vec<Held>,
    spill: Box<dyn Spill>,
    spill_len: u64,
    games: usize,
    /// CBF/CBI: where each game's record starts, and the bytes written so far.
    offsets: Vec<u32>,
    cbf_len: u64,
}

impl<W: Write> GameWriter<W> {
    pub fn new(out: W, format: Format, final_only: bool) -> GameWriter<W> {
        GameWriter {
            format,
            out,
            final_only,
            held: Vec::new(),
            spill: Box::new(Cursor::new(Vec::new())),
            spill_len: 0,
            games: 0,
            offsets: Vec::new(),
            cbf_len: 0,
        }
    }

    /// Keeps the games the archival order holds in `spill` instead of memory.
    pub fn with_spill(mut self, spill: Box<dyn Spill>) -> GameWriter<W> {
        self.spill = spill;
        self
    }

    /// Writes one game, or leaves it out whole when the format cannot hold it
    /// ([`AddError::CannotHold`]; the caller says which game, as it knows the file and where
    /// the game began).
    pub fn add(&mut self, g: &Game) -> Result<(), AddError> {
        let n = self.games + 1;
        match self.format {
            Format::Pgc => {
                let bytes = crate::pgc::encode_game(g).map_err(|e| AddError::CannotHold(e.0))?;
                self.out.write_all(&bytes)?;
            }
            Format::Cbf | Format::Cbi => {
                let bytes =
                    crate::cbf::encode_game(g).map_err(|e| AddError::CannotHold(e.to_string()))?;
                let at = u32::try_from(self.cbf_len).map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::InvalidData, "a CBF file holds 4 GiB")
                })?;
                self.offsets.push(at);
                self.cbf_len += bytes.len() as u64;
                if self.format == Format::Cbf {
                    self.out.write_all(&bytes)?;
                }
            }
            Format::OneByte => {
                let bytes = crate::onebyte::container_game(g)
                    .map_err(|e| AddError::CannotHold(e.to_string()))?;
                if n == 1 {
                    self.out.write_all(crate::onebyte::MAGIC)?;
                }
                self.out.write_all(&bytes)?;
            }
            Format::Pgn => self
                .out
                .write_all(write_game(g, &WriteOptions::default()).as_bytes())?,
            Format::Archive => {
                let text = write_game(g, &WriteOptions::default());
                let moves = movetext(&text).as_bytes();
                self.held.push(Held {
                    key: archive_key(g),
                    prefix: moves[..moves.len().min(PREFIX)].to_vec(),
                    at: self.spill_len,
                    len: text.len(),
                });
                // Games are appended one after another; the spill is only read (sought) at
                // the end, in `write_sorted`.
                self.spill.write_all(text.as_bytes())?;
                self.spill_len += text.len() as u64;
            }
            Format::Epd => {
                for line in crate::epd::game_epds(g, &format!("game {n}"), self.final_only) {
                    self.out.write_all(line.as_bytes())?;
                    self.out.write_all(b"\n")?;
                }
            }
        }
        self.games = n;
        Ok(())
    }

    /// The format written.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Games written.
    pub fn games(&self) -> usize {
        self.games
    }

    /// The held games in §12's order: sorted by key and the start of the movetext in memory;
    /// a run that still ties is read back whole and sorted by its full movetext.
    fn write_sorted(&mut self) -> std::io::Result<()> {
        let mut held = std::mem::take(&mut self.held);
        held.sort_by(|a, b| (&a.key, &a.prefix).cmp(&(&b.key, &b.prefix)));
        let mut i = 0;
        while i < held.len() {
            let mut j = i + 1;
            while j < held.len() && held[j].key == held[i].key && held[j].prefix == held[i].prefix {
                j += 1;
            }
            let mut run = Vec::with_capacity(j - i);
            for h in &held[i..j] {
                run.push((&h.key, self.read_back(h)?));
            }
            if run.len() > 1 {
                run.sort_by(|a, b| compare((a.0, &a.1), (b.0, &b.1)));
            }
            for (_, text) in run {
                self.out.write_all(text.as_bytes())?;
            }
            i = j;
        }
        Ok(())
    }

    fn read_back(&mut self, h: &Held) -> std::io::Result<String> {
        let mut bytes = vec![0; h.len];
        self.spill.seek(SeekFrom::Start(h.at))?;
        self.spill.read_exact(&mut bytes)?;
        String::from_utf8(bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }

    /// The CBI index of the CBF records written so far.
    pub fn cbf_index(&self) -> std::io::Result<Vec<u8>> {
        let end = u32::try_from(self.cbf_len).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "a CBF file holds 4 GiB")
        })?;
        Ok(crate::cbf::index(&self.offsets, end))
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        if self.format == Format::Cbi {
            let index = self.cbf_index()?;
            self.out.write_all(&index)?;
        }
        if self.format == Format::Archive {
            self.write_sorted()?;
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archival_order_reads_back_games_that_tie_on_key_and_movetext_start() {
        // Same tags; the same first 30 moves (well past the movetext prefix kept in memory);
        // then 31. a3 in one and 31. a4 in the other, which sorts first.
        let common = "1. Nf3 Nf6 2. Ng1 Ng8 ".repeat(15);
        let late =
            crate::pgn::read_game(&format!("[White \"A\"]\n\n{common} 31. a4 *\n")).expect("pgn");
        let early =
            crate::pgn::read_game(&format!("[White \"A\"]\n\n{common} 31. a3 *\n")).expect("pgn");
        let other = crate::pgn::read_game("[White \"B\"]\n\n1. e4 *\n").expect("pgn");
        let mut w = GameWriter::new(Vec::new(), Format::Archive, false)
            .with_spill(Box::new(Cursor::new(Vec::new())));
        for g in [&other, &late, &early] {
            w.add(g).expect("add");
        }
        let out = String::from_utf8(w.finish().expect("finish")).expect("utf-8");
        let a3 = out.find("31. a3").expect("a3");
        let a4 = out.find("31. a4").expect("a4");
        let b = out.find("[White \"B\"]").expect("B");
        assert!(a3 < a4 && a4 < b, "{out}");
    }
}
