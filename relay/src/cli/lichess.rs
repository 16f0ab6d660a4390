//! `relay lichess setup`: the Lichess broadcast of a tournament made from what relay knows of
//! it, instead of made by hand and its round ids pasted: the tour (name, dates, time control,
//! place, the players' FIDE ids as Lichess's replacements) with `POST /broadcast/new`, then a
//! Lichess round per relay round and per hundred boards (`POST /broadcast/{tour}/new`, push
//! rounds, start times from the rounds' dates). The ids are kept in the store, where `relay
//! serve --lichess-token T` (without `--lichess-round`) finds them and pushes.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use relay_store::{RoundInfo, Store, TournamentId};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct LichessArgs {
    #[command(subcommand)]
    command: LichessCommand,
}

#[derive(Subcommand, Debug)]
enum LichessCommand {
    /// Make the Lichess broadcast (tour and rounds) of a tournament and keep its round ids.
    Setup(SetupArgs),
}

#[derive(Args, Debug)]
struct SetupArgs {
    /// The database (sqlite://FILE or postgres://…).
    #[arg(long, env = "RELAY_DB")]
    db: String,
    /// The tournament to broadcast.
    #[arg(long)]
    tournament: TournamentId,
    /// A Lichess API token with the study:write scope.
    #[arg(long, env = "RELAY_LICHESS_TOKEN", hide_env_values = true)]
    token: String,
    /// Lichess itself (another address for tests).
    #[arg(long, env = "RELAY_LICHESS_URL", default_value = "https://lichess.org")]
    url: String,
}

/// Boards one Lichess round shows.
const BOARDS_PER_ROUND: usize = 100;

pub fn main(args: LichessArgs) -> Result<()> {
    match args.command {
        LichessCommand::Setup(a) => setup(a),
    }
}

/// A Lichess answer's JSON, or the refusal in words.
fn post_form(url: &str, token: &str, form: &[(String, String)]) -> Result<Value> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .http_status_as_error(false)
        .build()
        .into();
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut resp = agent
        .post(url)
        .header("Authorization", &format!("Bearer {token}"))
        .header(
            "User-Agent",
            &format!("relay/{} (DGT live relay)", env!("CARGO_PKG_VERSION")),
        )
        .send_form(pairs)
        .with_context(|| format!("POST {url}"))?;
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    if status != 200 {
        bail!("POST {url}: Lichess answered {status}: {}", text.trim());
    }
    serde_json::from_str(&text).with_context(|| format!("POST {url}: not JSON: {text}"))
}

/// A round's start, in ms since the epoch, from its date (`2026.11.30` or `2026-11-30`,
/// optionally with `HH:MM`; UTC), if it has one.
fn starts_at(round: &RoundInfo) -> Option<i64> {
    let date = round.date.as_deref()?.trim();
    let (day, time) = date.split_once([' ', 'T']).unwrap_or((date, ""));
    let parts: Vec<i64> = day
        .split(['.', '-', '/'])
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [y, m, d] = parts[..] else { return None };
    let (hh, mm) = time
        .split_once(':')
        .and_then(|(h, m)| Some((h.parse::<i64>().ok()?, m.get(..2)?.parse::<i64>().ok()?)))
        .unwrap_or((0, 0));
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + hh) * 60 + mm) * 60_000)
}

fn setup(a: SetupArgs) -> Result<()> {
    if !(a.url.starts_with("http://") || a.url.starts_with("https://")) {
        bail!("--url must be an http:// or https:// URL");
    }
    let base = a.url.trim_end_matches('/').to_string();
    super::with_store(&a.db, |store| async move {
        let t = store.tournament(a.tournament).await?;
        let players = store
            .tournament_players(a.tournament, &HashMap::new())
            .await
            .unwrap_or_default();
        let mut boards = Vec::new();
        for r in &t.rounds {
            boards.push(store.round_games(r.id).await?.len());
        }
        // The tour: Lichess takes names of 3 to 80 characters.
        let mut name: String = t.name.chars().take(80).collect();
        while name.chars().count() < 3 {
            name.push('.');
        }
        let mut form = vec![("name".to_string(), name)];
        let dates = match (&t.start_date, &t.end_date) {
            (Some(s), Some(e)) if s != e => format!("{s} – {e}"),
            (Some(s), _) => s.clone(),
            _ => String::new(),
        };
        if let Some(tc) = &t.time_control {
            form.push(("info.tc".into(), tc.clone()));
        }
        if let Some(site) = &t.site {
            form.push(("info.location".into(), site.clone()));
        }
        if !dates.is_empty() {
            form.push(("info.dates".into(), dates));
        }
        // Lichess's player replacements, one a line: "Name = FIDE id".
        let replacements: Vec<String> = players
            .iter()
            .filter_map(|p| Some(format!("{} = {}", p.name, p.fide_id?)))
            .collect();
        if !replacements.is_empty() {
            form.push(("players".into(), replacements.join("\n")));
        }
        let made = post_form(&format!("{base}/broadcast/new"), &a.token, &form)?;
        let tour = made["tour"]["id"]
            .as_str()
            .context("Lichess's answer names no tour id")?
            .to_string();
        println!(
            "relay: Lichess tour {tour} made for tournament {} ({} players with FIDE ids)",
            a.tournament,
            replacements.len()
        );
        for (r, n) in t.rounds.iter().zip(boards) {
            let slices = n.div_ceil(BOARDS_PER_ROUND).max(1);
            let mut ids = Vec::new();
            for s in 0..slices {
                let mut name = format!("Round {}", r.number);
                if slices > 1 {
                    let first = s * BOARDS_PER_ROUND + 1;
                    name.push_str(&format!(
                        " (boards {first}–{})",
                        (first + BOARDS_PER_ROUND - 1).min(n)
                    ));
                }
                let mut form = vec![
                    ("name".to_string(), name),
                    ("syncSource".to_string(), "push".to_string()),
                ];
                if let Some(ms) = starts_at(r) {
                    form.push(("startsAt".into(), ms.to_string()));
                }
                let made = post_form(&format!("{base}/broadcast/{tour}/new"), &a.token, &form)?;
                let id = made["round"]["id"]
                    .as_str()
                    .context("Lichess's answer names no round id")?
                    .to_string();
                ids.push(id);
            }
            store_rounds(&store, r, &tour, &ids).await?;
            println!(
                "relay: round {} (id {}, {n} boards) → Lichess round(s) {}",
                r.number,
                r.id,
                ids.join(", ")
            );
        }
        println!(
            "relay: relay serve --lichess-token … (without --lichess-round) pushes each round to its Lichess rounds"
        );
        Ok(())
    })
}

async fn store_rounds(store: &Store, r: &RoundInfo, tour: &str, ids: &[String]) -> Result<()> {
    store
        .set_lichess_rounds(r.id, tour, ids)
        .await
        .with_context(|| format!("keeping round {}'s Lichess rounds", r.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rounds_date_is_its_start() {
        let round = |date: &str| RoundInfo {
            date: Some(date.into()),
            ..RoundInfo::default()
        };
        assert_eq!(starts_at(&round("1970.01.02")), Some(86_400_000));
        assert_eq!(
            starts_at(&round("2026-11-30 14:30")),
            Some(1_796_049_000_000)
        );
        assert_eq!(starts_at(&round("soon")), None);
    }
}
