//! `relay export --db URL (--tournament N | --round N | --game N) --to FORMAT OUT`: games
//! from the store as a file, in any format `relay convert` writes, with the tags the PGN
//! routes give them. An operator with the database sees everything: no broadcast delay.
//! Written under a temporary name and renamed at the end, as `relay convert` does.

use super::convert::To;
use anyhow::{Context, Result, bail};
use clap::Args;
use relay_store::Store;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The database (sqlite://FILE or postgres://…).
    #[arg(long, env = "RELAY_DB")]
    db: String,
    /// A tournament's games (every round).
    #[arg(long, conflicts_with_all = ["round", "game"])]
    tournament: Option<i64>,
    /// A round's games.
    #[arg(long, conflicts_with = "game")]
    round: Option<i64>,
    /// One game.
    #[arg(long)]
    game: Option<i64>,
    /// The format to write.
    #[arg(long = "to", value_enum)]
    to: To,
    /// EPD: the final position of each game only.
    #[arg(long = "final")]
    final_only: bool,
    /// Where to write.
    output: PathBuf,
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
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let games = rt.block_on(async {
        let store = Store::open(&a.db)
            .await
            .with_context(|| format!("database {}", a.db))?;
        games(&store, &a).await
    })?;
    super::convert::write_file(&a.output, a.to, a.final_only, |w| {
        for (i, g) in games.iter().enumerate() {
            w.add(g)
                .with_context(|| format!("game {}, {}", i + 1, g.label()))?;
        }
        Ok(())
    })
}
