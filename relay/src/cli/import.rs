//! `relay import --db URL IN [--tournament N] [--round R]`: games from a PGN, PGC, CBF or
//! one-byte file into the store, as an earlier round, a pairing list (games without moves)
//! or games entered by hand.
//!
//! Where each game goes: the tournament `--tournament N`, or one made from the first game's
//! `[Event]`/`[Site]`/`[Date]`/`[TimeControl]` (found by name when it exists already); the
//! round `--round R`, or the game's `[Round]` before its dot (`3.12` is round 3, board 12),
//! made when missing; the board from `[Round]` after the dot, else `[Board]`, else the next
//! free board of the round. Players (name, title, Elo, FIDE id, federation) come from the
//! tags. A game already on that board has its moves replaced (the old ones stay in the audit
//! trail, as for an arbiter's upload); a game with a result gets it, status `finished`.
//!
//! The whole file is read and checked first, so a bad file changes nothing; each game is then
//! written in its own transactions (pairing, start, moves, result).
//!
//! A pairing program's file (FIDE's TRF: `.trf`, `.trfx`, `.tab`, or any file whose records
//! read as one) makes or updates a whole tournament in one transaction instead: players, rounds,
//! pairings, results, byes and teams; `--tournament N` updates N (after the next pairing).

use anyhow::{Context, Result, bail};
use clap::Args;
use relay_core::game::{Game, GameResult};
use relay_store::{NewTournament, Pairing, Player, RoundId, Store, TournamentId};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The database (sqlite://FILE or postgres://…).
    #[arg(long, env = "RELAY_DB")]
    db: String,
    /// Into this tournament (default: one named after the first game's [Event]).
    #[arg(long)]
    tournament: Option<TournamentId>,
    /// Into the round with this number (default: each game's [Round] before its dot).
    #[arg(long)]
    round: Option<String>,
    /// A PGN, PGC (.pgc), ChessBase (.cbf), one-byte, or TRF (.trf, .trfx, .tab) file.
    input: PathBuf,
    /// All or nothing: a game that does not read stops the import and nothing is imported
    /// (by default it is left out, named, and the rest is imported; exit status 3).
    #[arg(long)]
    strict: bool,
}

/// A tag's value when it says something (not empty, not `?`).
fn tag<'a>(g: &'a Game, name: &str) -> Option<&'a str> {
    g.tags
        .get(name)
        .map(str::trim)
        .filter(|v| !v.is_empty() && !v.chars().all(|c| c == '?' || c == '-'))
}

fn player(g: &Game, side: &str) -> Player {
    Player {
        name: tag(g, side).map(str::to_string),
        title: tag(g, &format!("{side}Title")).map(str::to_string),
        rating: tag(g, &format!("{side}Elo")).and_then(|v| v.parse().ok()),
        fide_id: tag(g, &format!("{side}FideId")).and_then(|v| v.parse().ok()),
        federation: tag(g, &format!("{side}Fed"))
            .or_else(|| tag(g, &format!("{side}Team")))
            .map(str::to_string),
        start_rank: None,
        team: tag(g, &format!("{side}Team")).map(str::to_string),
    }
}

/// The round number and board of a game from its tags (`[Round "3.12"]`, `[Board "12"]`).
fn round_and_board(g: &Game) -> (Option<String>, Option<u32>) {
    let round = tag(g, "Round");
    let (r, b) = match round.and_then(|r| r.split_once('.')) {
        Some((r, b)) => (Some(r.to_string()), b.parse().ok()),
        None => (round.map(str::to_string), None),
    };
    let b = b.or_else(|| tag(g, "Board").and_then(|v| v.parse().ok()));
    (r, b.filter(|&b| b > 0))
}

async fn import(store: &Store, a: &ImportArgs, games: &[Game]) -> Result<()> {
    let Some(first) = games.first() else {
        bail!(
            "{}: no games in it; nothing was imported",
            a.input.display()
        );
    };
    let tournament = match a.tournament {
        Some(t) => store.tournament(t).await?.id,
        None => {
            let name = tag(first, "Event").unwrap_or("Imported games").to_string();
            let existing = store.tournaments().await?;
            match existing.iter().find(|t| t.name == name) {
                Some(t) => t.id,
                None => {
                    store
                        .create_tournament(&NewTournament {
                            name,
                            site: tag(first, "Site").map(str::to_string),
                            start_date: tag(first, "Date").map(|d| d.replace('.', "-")),
                            end_date: None,
                            time_control: tag(first, "TimeControl").map(str::to_string),
                            delay_secs: 0,
                            event_key: None,
                        })
                        .await?
                }
            }
        }
    };
    // Rounds by number, made as they are met.
    let mut rounds: BTreeMap<String, RoundId> = store
        .tournament(tournament)
        .await?
        .rounds
        .into_iter()
        .map(|r| (r.number, r.id))
        .collect();
    let (mut moves_in, mut results) = (0usize, 0usize);
    for g in games {
        let (tag_round, tag_board) = round_and_board(g);
        let number = a
            .round
            .clone()
            .or(tag_round)
            .unwrap_or_else(|| "1".to_string());
        let round = match rounds.get(&number) {
            Some(&id) => id,
            None => {
                let date = tag(g, "Date")
                    .filter(|d| !d.contains('?'))
                    .map(|d| d.replace('.', "-"));
                let id = store
                    .create_round(tournament, &number, date.as_deref())
                    .await?;
                rounds.insert(number.clone(), id);
                id
            }
        };
        let board_no = match tag_board {
            Some(b) => b,
            None => store.free_board_no(round, 1).await?,
        };
        let id = store
            .set_pairing(
                round,
                &Pairing {
                    board_no,
                    white: player(g, "White"),
                    black: player(g, "Black"),
                },
            )
            .await?;
        if g.has_custom_start() {
            let fen = g.start_fen().to_string();
            let chess960 = g.castling_mode == shakmaty::CastlingMode::Chess960;
            store.start_game(id, Some(&fen), chess960, None).await?;
        }
        let moves = relay_store::stored_moves(g, relay_store::now_ms());
        let had = store.game(id).await?.moves.len();
        if !moves.is_empty() || had > 0 {
            store.replace_moves(id, &moves, "import").await?;
            moves_in += moves.len();
        }
        if g.result != GameResult::Ongoing {
            let termination = tag(g, "Termination");
            store
                .set_result(id, &g.result.to_string(), termination, "finished", "import")
                .await?;
            results += 1;
        }
    }
    eprintln!(
        "relay: {} games imported into tournament {tournament} ({} rounds), {moves_in} moves, {results} results",
        games.len(),
        rounds.len()
    );
    Ok(())
}

/// Whether a file is a TRF: by its name, else by its first record ("012 …", "001 …", "### …").
fn is_trf(path: &std::path::Path, bytes: &[u8]) -> bool {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if matches!(ext.as_deref(), Some("trf" | "trfx" | "tab")) {
        return true;
    }
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    text.split(['\r', '\n'])
        .map(|l| l.trim_start_matches('\u{feff}'))
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| {
            let b = l.as_bytes();
            b.len() > 4
                && b[3] == b' '
                && (b[..3].iter().all(u8::is_ascii_digit) || &b[..3] == b"###")
        })
}

fn import_trf(a: &ImportArgs, bytes: &[u8]) -> Result<()> {
    let trf = relay_core::trf::read_trf(bytes).with_context(|| {
        format!(
            "{}: not a TRF relay can read; nothing was imported",
            a.input.display()
        )
    })?;
    if a.round.is_some() {
        bail!("--round does not go with a TRF: the file numbers its rounds");
    }
    super::with_store(&a.db, |store| async move {
        let who = std::env::var("USER").unwrap_or_else(|_| "import".into());
        let done = store
            .import_trf(
                &trf,
                bytes,
                a.tournament,
                &who,
                &a.input.display().to_string(),
            )
            .await
            .with_context(|| format!("{}: nothing was imported", a.input.display()))?;
        eprintln!(
            "relay: tournament {} from {}: {} players, {} teams; rounds added {:?}; {} games added, {} updated, {} results taken, {} byes",
            done.tournament_id,
            a.input.display(),
            done.players,
            done.teams,
            done.rounds_added,
            done.games_added,
            done.games_updated,
            done.results_taken,
            done.byes
        );
        for k in &done.results_kept {
            eprintln!("relay: kept relay's result: {k}");
        }
        for m in &done.boards_moved {
            eprintln!("relay: {m}");
        }
        for d in &done.differences {
            eprintln!("relay: the file and relay's record differ: {}", d.text);
        }
        Ok(())
    })
}

pub fn main(a: ImportArgs) -> Result<()> {
    let bytes = std::fs::read(&a.input).with_context(|| format!("{}", a.input.display()))?;
    if is_trf(&a.input, &bytes) {
        return import_trf(&a, &bytes);
    }
    // Everything is read and checked before the store is touched; a game that does not read
    // is left out, named (`--strict`: nothing is imported).
    let mut games = Vec::new();
    let skipped = super::convert::each_game(&a.input, "nothing was imported", a.strict, |g, _| {
        games.push(g.clone());
        Ok(())
    })?;
    let (a, games) = (&a, &games);
    super::with_store(&a.db, |store| async move { import(&store, a, games).await })?;
    if skipped > 0 {
        eprintln!("relay: {} games imported, {skipped} skipped", games.len());
    }
    super::convert::skipped_result(skipped)
}
