//! `relay convert IN OUT --to FORMAT`: PGN, a PGC file (`.pgc`), a ChessBase file (`.cbf`,
//! through its `.cbi` beside it when there is one) or a one-byte file to PGN as the relay
//! writes it, to the archival order of the PGN standard, EPD, PGC, CBF (+ CBI) or the one-byte
//! encoding. PGN and PGC are read a game at a time, so a file of any size converts in the
//! memory of one game (the archival order keeps the written games in a file beside the
//! output and only their keys in memory; the compact one-byte and CBF files are held whole).
//! A game that does not read stops the conversion with its number and byte offset, and no
//! output file is left: the output is written beside it under a temporary name and renamed
//! at the end.

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use relay_core::convert::{Format, GameWriter};
use relay_core::game::Game;
use relay_core::pgn::read_games;
use relay_core::pgn::split::GamePieces;
use std::io::{BufRead, BufReader, BufWriter, Read};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum To {
    /// PGN export format, games in file order.
    Pgn,
    /// PGN export format in the standard's archival order (§12).
    Archive,
    /// One EPD line per position of every game (id, hmvc, fmvn, sm, cc where clocked).
    Epd,
    /// The one-byte move encoding, in the container the README describes.
    Onebyte,
    /// PGC, the binary PGN of the PGN standard (§20).
    Pgc,
    /// ChessBase CBF; its CBI index is written beside OUT (same name, `.cbi`).
    Cbf,
}

impl To {
    pub fn format(self) -> Format {
        match self {
            To::Pgn => Format::Pgn,
            To::Archive => Format::Archive,
            To::Epd => Format::Epd,
            To::Onebyte => Format::OneByte,
            To::Pgc => Format::Pgc,
            To::Cbf => Format::Cbf,
        }
    }
}

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// A PGN file, a PGC file (`.pgc`), a ChessBase file (`.cbf`), or a one-byte file.
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
/// A CBF file gets its CBI index beside it, written the same way and renamed into place with
/// it (the index first, so a CBF file never stands without its index; on failure neither is).
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
    let cbi = output.with_extension("cbi");
    let cbi_tmp = output.with_file_name(format!(".{name}.cbi.part"));
    let spill = output.with_file_name(format!(".{name}.sort"));
    let written = (|| -> Result<usize> {
        let file = std::fs::File::create(&tmp)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        let mut writer = GameWriter::new(BufWriter::new(file), to.format(), final_only);
        if to == To::Archive {
            // The archival order holds every game until the end: on disk, beside the output,
            // so a file of any size sorts in the memory of its keys.
            let spill = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&spill)
                .with_context(|| format!("cannot write {}", spill.display()))?;
            writer = writer.with_spill(Box::new(spill));
        }
        fill(&mut writer)?;
        let n = writer.games();
        if to == To::Cbf {
            let index = writer.cbf_index()?;
            let mut file = std::fs::File::create(&cbi_tmp)
                .with_context(|| format!("cannot write {}", cbi_tmp.display()))?;
            std::io::Write::write_all(&mut file, &index)?;
            file.sync_all()?;
        }
        writer
            .finish()?
            .into_inner()
            .map_err(|e| e.into_error())?
            .sync_all()?;
        Ok(n)
    })();
    let _ = std::fs::remove_file(&spill);
    match written {
        Ok(n) => {
            if to == To::Cbf {
                std::fs::rename(&cbi_tmp, &cbi)
                    .with_context(|| format!("cannot write {}", cbi.display()))?;
            }
            std::fs::rename(&tmp, output)
                .with_context(|| format!("cannot write {}", output.display()))?;
            eprintln!("relay: {n} games written to {}", output.display());
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            let _ = std::fs::remove_file(&cbi_tmp);
            Err(e)
        }
    }
}

/// The extension of `path`, lower case.
fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Reads `input` (PGN or PGC a game at a time, a CBF or one-byte file whole) into `writer`.
pub fn convert(input: &Path, writer: &mut GameWriter<BufWriter<std::fs::File>>) -> Result<()> {
    each_game(input, "nothing was written", |g| Ok(writer.add(g)?))
}

/// Calls `each` with every game of `input` (any format `relay convert` reads), in order. A
/// game that does not read stops it with the game's number and byte offset, and `then` (what
/// that means for the caller: "nothing was written").
pub fn each_game(
    input: &Path,
    then: &str,
    mut each: impl FnMut(&Game) -> Result<()>,
) -> Result<()> {
    let file =
        std::fs::File::open(input).with_context(|| format!("cannot read {}", input.display()))?;
    let mut reader = BufReader::new(file);
    let fail = |e: String| anyhow::anyhow!("{}: {e}; {then}", input.display());
    match extension(input).as_str() {
        "pgc" => {
            for g in relay_core::pgc::games(reader) {
                each(&g.map_err(|e| fail(e.0))?)?;
            }
            return Ok(());
        }
        "cbf" => {
            let mut bytes = Vec::new();
            reader
                .read_to_end(&mut bytes)
                .with_context(|| format!("cannot read {}", input.display()))?;
            // The index beside it, `.cbi` or `.CBI` as DOS-era files are named.
            let index = ["cbi", "CBI"]
                .iter()
                .find_map(|e| std::fs::read(input.with_extension(e)).ok());
            for g in relay_core::cbf::games(&bytes, index.as_deref()).map_err(|e| fail(e.0))? {
                each(&g.map_err(|e| fail(e.0))?)?;
            }
            return Ok(());
        }
        _ => {}
    }
    let head = reader
        .fill_buf()
        .with_context(|| format!("cannot read {}", input.display()))?;
    if head.starts_with(relay_core::onebyte::MAGIC) {
        // A one-byte file is held whole (about a byte a move); its games are read one by one.
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {}", input.display()))?;
        let fail = |e: relay_core::onebyte::OneByteError| fail(e.to_string());
        for g in relay_core::onebyte::container_games(&bytes).map_err(fail)? {
            each(&g.map_err(fail)?)?;
        }
        return Ok(());
    }
    let mut game = 0;
    for piece in GamePieces::new(reader) {
        let piece = piece.with_context(|| format!("cannot read {}", input.display()))?;
        for g in read_games(&piece.text) {
            game += 1;
            match g {
                Ok(g) => each(&g).with_context(|| {
                    format!(
                        "{}: game {game} (from byte {})",
                        input.display(),
                        piece.offset
                    )
                })?,
                Err(e) => bail!(
                    "{}: game {game} (from byte {}) does not read: {e}; {then}",
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
