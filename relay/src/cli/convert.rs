//! `relay convert IN OUT --to FORMAT`: a PGN file to PGN as the relay writes it, to the
//! archival order of the PGN standard, or to EPD. The input is read a game at a time
//! (`relay_core::pgn::split`), so a file of any size converts in the memory of one game
//! (the archival order holds the written games to sort them). A game that does not read
//! stops the conversion with its number and byte offset, and no output file is left: the
//! output is written beside it under a temporary name and renamed at the end.

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use relay_core::convert::{Format, GameWriter};
use relay_core::pgn::read_games;
use relay_core::pgn::split::GamePieces;
use std::io::{BufRead, BufReader, BufWriter, Read};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum To {
    /// PGN export format, games in file order.
    Pgn,
    /// PGN export format in the standard's archival order (§12).
    Archive,
    /// One EPD line per position of every game (id, hmvc, fmvn, sm, cc where clocked).
    Epd,
    /// The one-byte move encoding, in the container the README describes.
    Onebyte,
}

impl To {
    pub fn format(self) -> Format {
        match self {
            To::Pgn => Format::Pgn,
            To::Archive => Format::Archive,
            To::Epd => Format::Epd,
            To::Onebyte => Format::OneByte,
        }
    }
}

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// A PGN file, or a one-byte file this command wrote.
    input: PathBuf,
    /// Where to write (replaced only when the whole input converted).
    output: PathBuf,
    /// The format to write.
    #[arg(long = "to", value_enum)]
    to: To,
    /// EPD: the final position of each game only.
    #[arg(long = "final")]
    final_only: bool,
}

/// The writer every output goes through: to a file beside `output` under a temporary name,
/// renamed to `output` once `fill` has written everything and the file is on disk; removed
/// when `fill` fails, so no half-written file is left (`relay convert` and `relay export`).
pub fn write_file(
    output: &Path,
    to: To,
    final_only: bool,
    fill: impl FnOnce(&mut GameWriter<BufWriter<std::fs::File>>) -> Result<()>,
) -> Result<()> {
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let tmp = output.with_file_name(format!(".{name}.part"));
    let written = (|| -> Result<usize> {
        let file = std::fs::File::create(&tmp)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        let mut writer = GameWriter::new(BufWriter::new(file), to.format(), final_only);
        fill(&mut writer)?;
        let n = writer.games();
        writer
            .finish()?
            .into_inner()
            .map_err(|e| e.into_error())?
            .sync_all()?;
        Ok(n)
    })();
    match written {
        Ok(n) => {
            std::fs::rename(&tmp, output)
                .with_context(|| format!("cannot write {}", output.display()))?;
            eprintln!("relay: {n} games written to {}", output.display());
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Reads `input` (PGN a game at a time, or a one-byte file) into `writer`.
fn convert(input: &Path, writer: &mut GameWriter<BufWriter<std::fs::File>>) -> Result<()> {
    let file =
        std::fs::File::open(input).with_context(|| format!("cannot read {}", input.display()))?;
    let mut reader = BufReader::new(file);
    let head = reader
        .fill_buf()
        .with_context(|| format!("cannot read {}", input.display()))?;
    if head.starts_with(relay_core::onebyte::MAGIC) {
        // A one-byte file is held whole (about a byte a move); its games are read one by one.
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {}", input.display()))?;
        let fail = |e: relay_core::onebyte::OneByteError| {
            anyhow::anyhow!("{}: {e}; nothing was written", input.display())
        };
        for g in relay_core::onebyte::container_games(&bytes).map_err(fail)? {
            writer.add(&g.map_err(fail)?)?;
        }
        return Ok(());
    }
    let mut game = 0;
    for piece in GamePieces::new(reader) {
        let piece = piece.with_context(|| format!("cannot read {}", input.display()))?;
        for g in read_games(&piece.text) {
            game += 1;
            match g {
                Ok(g) => writer.add(&g).with_context(|| {
                    format!(
                        "{}: game {game} (from byte {})",
                        input.display(),
                        piece.offset
                    )
                })?,
                Err(e) => bail!(
                    "{}: game {game} (from byte {}) does not read: {e}; nothing was written",
                    input.display(),
                    piece.offset
                ),
            }
        }
    }
    Ok(())
}

pub fn main(args: ConvertArgs) -> Result<()> {
    write_file(&args.output, args.to, args.final_only, |w| {
        convert(&args.input, w)
    })
}
