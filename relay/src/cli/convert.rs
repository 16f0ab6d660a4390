//! `relay convert IN OUT --to FORMAT`: PGN, a PGC file (`.pgc`), a ChessBase file (`.cbf`,
//! through its `.cbi` beside it when there is one) or a one-byte file to PGN as the relay
//! writes it, to the archival order of the PGN standard, EPD, PGC, CBF (+ CBI) or the one-byte
//! encoding. PGN and PGC are read a game at a time, so a file of any size converts in the
//! memory of one game (the archival order keeps the written games in a file beside the
//! output and only their keys in memory; the compact one-byte and CBF files are held whole).
//! A game that does not read (an illegal move as the source recorded it, a broken tag
//! section) or that the target format cannot hold (Chess960 in CBF, a name too long for its
//! field…) is left out with a warning naming it, its byte offset and the reason; the rest is
//! written, the summary says how many games were written and skipped, and the exit status is
//! 3 when any was skipped. `--strict` keeps the all-or-nothing of old: the first such game
//! stops the conversion and no output file is left. Either way the output is written beside
//! it under a temporary name and renamed at the end.

use anyhow::{Context, Result, bail};
use clap::Args;
use relay_core::convert::{AddError, Format, GameWriter};
use relay_core::game::Game;
use relay_core::pgn::read_games;
use relay_core::pgn::split::GamePieces;
use std::io::{BufRead, BufReader, BufWriter, Read};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// A PGN file, a PGC file (`.pgc`), a ChessBase file (`.cbf`), or a one-byte file.
    input: PathBuf,
    /// Where to write (replaced only when the whole input converted).
    output: PathBuf,
    /// The format to write.
    #[arg(long = "to", value_enum)]
    to: Format,
    /// EPD: the final position of each game only.
    #[arg(long = "final")]
    final_only: bool,
    /// All or nothing: a game that does not read or cannot be written stops the conversion
    /// and nothing is written (by default such a game is left out, named, and the rest is
    /// written).
    #[arg(long)]
    strict: bool,
}

/// The games left out, as the run ends: the command prints the summary and exits with
/// status 3 (`main` looks for this error).
#[derive(Debug)]
pub struct GamesSkipped(pub usize);

impl std::fmt::Display for GamesSkipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} game(s) skipped (each named above)", self.0)
    }
}

impl std::error::Error for GamesSkipped {}

/// The exit status of a run that skipped games.
pub const SKIPPED_STATUS: u8 = 3;

/// Ok, or [`GamesSkipped`] when `skipped` is not 0.
pub fn skipped_result(skipped: usize) -> Result<()> {
    if skipped == 0 {
        Ok(())
    } else {
        Err(GamesSkipped(skipped).into())
    }
}

/// Where a game stands in its input, to name it.
#[derive(Clone, Copy, Debug)]
pub struct Place {
    /// From 1, in file order (games that do not read counted too).
    pub game: usize,
    /// Where its text begins, when the format tells (PGN).
    pub offset: Option<u64>,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(at) => write!(f, "game {} (from byte {at})", self.game),
            None => write!(f, "game {}", self.game),
        }
    }
}

/// Adds `g` to `writer`; a game the format cannot hold is skipped with a warning naming it
/// (or, `strict`, stops everything), and one written other than it reads is named with how.
pub fn add_or_skip<W: std::io::Write>(
    writer: &mut GameWriter<W>,
    g: &Game,
    name: &str,
    strict: bool,
    skipped: &mut usize,
) -> Result<()> {
    match writer.add(g) {
        Ok(()) => {
            if writer.format() == Format::Cbf {
                for note in relay_core::cbf::write_notes(g) {
                    eprintln!("relay: {name}, {}: {note}", g.label());
                }
            }
            Ok(())
        }
        Err(AddError::CannotHold(why)) if !strict => {
            eprintln!(
                "relay: skipped {name}, {}: cannot be written as {}: {why}",
                g.label(),
                writer.format().extension()
            );
            *skipped += 1;
            Ok(())
        }
        Err(AddError::CannotHold(why)) => bail!(
            "{name}, {}: cannot be written as {}: {why}; nothing was written",
            g.label(),
            writer.format().extension()
        ),
        Err(AddError::Io(e)) => Err(e.into()),
    }
}

/// The writer every output goes through: to a file beside `output` under a temporary name,
/// renamed to `output` once `fill` has written everything and the file is on disk; removed
/// when `fill` fails, so no half-written file is left (`relay convert` and `relay export`).
/// A CBF file gets its CBI index beside it, written the same way and renamed into place with
/// it (the index first, so a CBF file never stands without its index; on failure neither is).
/// `fill` returns how many games it skipped, for the summary; so does this.
pub fn write_file(
    output: &Path,
    to: Format,
    final_only: bool,
    fill: impl FnOnce(&mut GameWriter<BufWriter<std::fs::File>>) -> Result<usize>,
) -> Result<usize> {
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let tmp = output.with_file_name(format!(".{name}.part"));
    let cbi = output.with_extension("cbi");
    let cbi_tmp = output.with_file_name(format!(".{name}.cbi.part"));
    let spill = output.with_file_name(format!(".{name}.sort"));
    let written = (|| -> Result<(usize, usize)> {
        let file = std::fs::File::create(&tmp)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        let mut writer = GameWriter::new(BufWriter::new(file), to, final_only);
        if to == Format::Archive {
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
        let skipped = fill(&mut writer)?;
        let n = writer.games();
        if to == Format::Cbf {
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
        Ok((n, skipped))
    })();
    let _ = std::fs::remove_file(&spill);
    match written {
        Ok((n, skipped)) => {
            if to == Format::Cbf {
                std::fs::rename(&cbi_tmp, &cbi)
                    .with_context(|| format!("cannot write {}", cbi.display()))?;
            }
            std::fs::rename(&tmp, output)
                .with_context(|| format!("cannot write {}", output.display()))?;
            if skipped == 0 {
                eprintln!("relay: {n} games written to {}", output.display());
            } else {
                eprintln!(
                    "relay: {n} games written to {}, {skipped} skipped",
                    output.display()
                );
            }
            Ok(skipped)
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

/// Reads `input` (PGN or PGC a game at a time, a CBF or one-byte file whole) into `writer`;
/// returns how many games were skipped (read or written).
pub fn convert(
    input: &Path,
    strict: bool,
    writer: &mut GameWriter<BufWriter<std::fs::File>>,
) -> Result<usize> {
    let mut skipped = 0;
    let name = input.display().to_string();
    let unread = each_game(input, "nothing was written", strict, |g, place| {
        add_or_skip(writer, g, &format!("{name}: {place}"), strict, &mut skipped)
    })?;
    Ok(unread + skipped)
}

/// Calls `each` with every game of `input` (any format `relay convert` reads), in order, and
/// where it stands. A game that does not read is skipped with a warning naming it, its byte
/// offset and the reason, and counted in the number returned; `strict`, it stops everything
/// instead, with `then` (what that means for the caller: "nothing was written").
pub fn each_game(
    input: &Path,
    then: &str,
    strict: bool,
    mut each: impl FnMut(&Game, Place) -> Result<()>,
) -> Result<usize> {
    let file =
        std::fs::File::open(input).with_context(|| format!("cannot read {}", input.display()))?;
    let mut reader = BufReader::new(file);
    let mut skipped = 0;
    // A game that does not read: warned and counted, or (strict) the end.
    let mut unread = |e: String| -> Result<()> {
        if strict {
            bail!("{}: {e}; {then}", input.display());
        }
        eprintln!("relay: skipped {}: {e}", input.display());
        skipped += 1;
        Ok(())
    };
    let mut n = 0;
    let mut place = |offset: Option<u64>| {
        n += 1;
        Place { game: n, offset }
    };
    match extension(input).as_str() {
        "pgc" => {
            for g in relay_core::pgc::games(reader) {
                match g {
                    Ok(g) => each(&g, place(None))?,
                    Err(e) => unread(e.0)?,
                }
            }
            return Ok(skipped);
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
            let games = relay_core::cbf::games(&bytes, index.as_deref())
                .map_err(|e| anyhow::anyhow!("{}: {e}; {then}", input.display()))?;
            for g in games {
                match g {
                    Ok(g) => each(&g, place(None))?,
                    Err(e) => unread(e.to_string())?,
                }
            }
            return Ok(skipped);
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
        let games = relay_core::onebyte::container_games(&bytes)
            .map_err(|e| anyhow::anyhow!("{}: {e}; {then}", input.display()))?;
        for g in games {
            match g {
                Ok(g) => each(&g, place(None))?,
                Err(e) => unread(e.to_string())?,
            }
        }
        return Ok(skipped);
    }
    for piece in GamePieces::new(reader) {
        let piece = piece.with_context(|| format!("cannot read {}", input.display()))?;
        for g in read_games(&piece.text) {
            let at = place(Some(piece.offset));
            match g {
                Ok(g) => each(&g, at).with_context(|| format!("{}: {at}", input.display()))?,
                Err(e) => {
                    // The reader numbers games and lines within this game's text, not the file.
                    let names = match (&e.white, &e.black) {
                        (None, None) => String::new(),
                        (w, b) => format!(
                            ", {} - {}",
                            w.as_deref().unwrap_or("?"),
                            b.as_deref().unwrap_or("?")
                        ),
                    };
                    unread(format!(
                        "{at}{names} does not read: {} (line {} of the game's text)",
                        e.kind, e.line
                    ))?
                }
            }
        }
    }
    Ok(skipped)
}

pub fn main(args: ConvertArgs) -> Result<()> {
    let skipped = write_file(&args.output, args.to, args.final_only, |w| {
        convert(&args.input, args.strict, w)
    })?;
    skipped_result(skipped)
}
