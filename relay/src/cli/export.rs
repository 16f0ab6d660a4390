//! `relay export --db URL (--tournament N | --round N | --game N) --to FORMAT OUT`: games
//! from the store as a file, in any format `relay convert` writes, with the tags the PGN
//! routes give them. An operator with the database sees everything: no broadcast delay.
//! Written under a temporary name and renamed at the end, as `relay convert` does.
//!
//! `--to trf` writes a tournament made from a pairing program's file back as FIDE's TRF16,
//! with every result relay has, for the pairing program to read before the next pairing.

use anyhow::{Context, Result, bail};
use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use relay_core::convert::Format;
use relay_store::{GameId, RoundId, Store, TournamentId};
use std::path::PathBuf;
use std::sync::OnceLock;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The database (sqlite://FILE or postgres://…).
    #[arg(long, env = "RELAY_DB")]
    db: String,
    /// A tournament's games (every round).
    #[arg(long, conflicts_with_all = ["round", "game"])]
    tournament: Option<TournamentId>,
    /// A round's games.
    #[arg(long, conflicts_with = "game")]
    round: Option<RoundId>,
    /// One game.
    #[arg(long)]
    game: Option<GameId>,
    /// The format to write.
    #[arg(long = "to", value_enum)]
    to: ExportTo,
    /// EPD: the final position of each game only.
    #[arg(long = "final")]
    final_only: bool,
    /// All or nothing: a game the format cannot hold stops the export and nothing is
    /// written (by default it is left out, named, and the rest is written; exit status 3).
    #[arg(long)]
    strict: bool,
    /// Where to write.
    output: PathBuf,
}

/// What `relay export` writes: a format of games, or a tournament's TRF. Its values are the
/// formats' own (`relay convert`'s), and `trf`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportTo {
    Games(Format),
    /// FIDE's TRF16 of a tournament made from a pairing program's file.
    Trf,
}

impl ValueEnum for ExportTo {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: OnceLock<Vec<ExportTo>> = OnceLock::new();
        ALL.get_or_init(|| {
            let games = Format::value_variants()
                .iter()
                .copied()
                .map(ExportTo::Games);
            games.chain([ExportTo::Trf]).collect()
        })
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        match self {
            ExportTo::Games(f) => f.to_possible_value(),
            ExportTo::Trf => Some(PossibleValue::new("trf").help(
                "FIDE's TRF16 of a tournament made from a pairing program's file (`--tournament` only)",
            )),
        }
    }
}

fn export_trf(a: &ExportArgs) -> Result<()> {
    let Some(t) = a.tournament else {
        bail!("a TRF is a whole tournament's: --tournament N --to trf");
    };
    let trf = super::with_store(&a.db, |store| async move { Ok(store.trf_ranked(t).await?) })?;
    let tmp = a.output.with_extension("trf.partial");
    std::fs::write(&tmp, relay_core::trf::write_trf(&trf))
        .with_context(|| format!("{}", tmp.display()))?;
    std::fs::rename(&tmp, &a.output).with_context(|| format!("{}", a.output.display()))?;
    eprintln!(
        "relay: tournament {t} as TRF: {} players, {} rounds, written to {}",
        trf.players.len(),
        trf.players.iter().map(|p| p.cells.len()).max().unwrap_or(0),
        a.output.display()
    );
    Ok(())
}

async fn games(store: &Store, a: &ExportArgs) -> Result<Vec<relay_core::game::Game>> {
    let (rounds, only) = match (a.tournament, a.round, a.game) {
        (Some(t), None, None) => (store.tournament(t).await?.rounds, None),
        (None, Some(r), None) => (vec![store.round(r).await?], None),
        (None, None, Some(g)) => {
            let g = store.game(g).await?;
            (vec![store.round(g.round_id).await?], Some(g))
        }
        _ => bail!("say what to export: --tournament N, --round N or --game N"),
    };
    let mut out = Vec::new();
    for r in &rounds {
        let t = store.tournament(r.tournament_id).await?;
        let stored = match &only {
            Some(g) => vec![g.clone()],
            None => store.round_games(r.id).await?,
        };
        for g in &stored {
            out.push(relay_store::round_game(
                g,
                &t.name,
                t.site.as_deref(),
                t.time_control.as_deref(),
                r,
            ));
        }
    }
    Ok(out)
}

pub fn main(a: ExportArgs) -> Result<()> {
    let ExportTo::Games(to) = a.to else {
        return export_trf(&a);
    };
    let games = super::with_store(&a.db, |store| {
        let a = &a;
        async move { games(&store, a).await }
    })?;
    let skipped = super::convert::write_file(&a.output, to, a.final_only, |w| {
        let mut skipped = 0;
        for (i, g) in games.iter().enumerate() {
            super::convert::add_or_skip(w, g, &format!("game {}", i + 1), a.strict, &mut skipped)?;
        }
        Ok(skipped)
    })?;
    super::convert::skipped_result(skipped)
}
