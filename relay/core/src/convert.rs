//! Games out in one of the archive formats: PGN as the relay writes it, PGN in the archival
//! order of §12, EPD (one line per position), the one-byte move encoding, PGC (§20) or
//! ChessBase CBF with its CBI index. The same code serves `relay convert`, `relay export` and
//! the export routes.

use crate::game::Game;
use crate::pgn::archive::{ArchiveKey, archive_key, compare};
use crate::pgn::{WriteOptions, write_game};
use std::io::Write;

/// A format games can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// PGN export format, games in the order given.
    Pgn,
    /// PGN export format in the archival order of §12 (the games are held until the end).
    Archive,
    /// EPD: a line per position of every game, in game order.
    Epd,
    /// The one-byte move encoding in the container of `onebyte` (tags, start, result kept).
    OneByte,
    /// PGC, the binary PGN of §20 (tags, start, moves, result kept).
    Pgc,
    /// ChessBase CBF game records (its index is [`Format::Cbi`], written beside it).
    Cbf,
    /// The CBI index of the CBF file the same games make.
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
    held: Vec<(ArchiveKey, String)>,
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
            games: 0,
            offsets: Vec::new(),
            cbf_len: 0,
        }
    }

    pub fn add(&mut self, g: &Game) -> std::io::Result<()> {
        self.games += 1;
        if self.games == 1 && self.format == Format::OneByte {
            self.out.write_all(crate::onebyte::MAGIC)?;
        }
        // The caller says which game (it knows the file and where the game began).
        let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
        match self.format {
            Format::Pgc => {
                let bytes = crate::pgc::encode_game(g).map_err(|e| invalid(e.0))?;
                self.out.write_all(&bytes)
            }
            Format::Cbf | Format::Cbi => {
                let bytes = crate::cbf::encode_game(g).map_err(|e| invalid(e.0))?;
                let at = u32::try_from(self.cbf_len)
                    .map_err(|_| invalid("a CBF file holds 4 GiB".into()))?;
                self.offsets.push(at);
                self.cbf_len += bytes.len() as u64;
                if self.format == Format::Cbf {
                    self.out.write_all(&bytes)?;
                }
                Ok(())
            }
            Format::OneByte => {
                let bytes =
                    crate::onebyte::container_game(g).map_err(|e| invalid(e.to_string()))?;
                self.out.write_all(&bytes)
            }
            Format::Pgn => self
                .out
                .write_all(write_game(g, &WriteOptions::default()).as_bytes()),
            Format::Archive => {
                self.held
                    .push((archive_key(g), write_game(g, &WriteOptions::default())));
                Ok(())
            }
            Format::Epd => {
                for line in
                    crate::epd::game_epds(g, &format!("game {}", self.games), self.final_only)
                {
                    self.out.write_all(line.as_bytes())?;
                    self.out.write_all(b"\n")?;
                }
                Ok(())
            }
        }
    }

    /// Games written.
    pub fn games(&self) -> usize {
        self.games
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
            let mut held = std::mem::take(&mut self.held);
            held.sort_by(|a, b| compare((&a.0, &a.1), (&b.0, &b.1)));
            for (_, text) in held {
                self.out.write_all(text.as_bytes())?;
            }
        }
        self.out.flush()?;
        Ok(self.out)
    }
}
