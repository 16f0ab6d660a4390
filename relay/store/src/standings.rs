//! How a tournament is ranked, kept beside it: the tie-break codes in order (as TRF-2026 record
//! 202 writes them), its scoring, the edition of FIDE's tie-break rules, whether it is a round
//! robin, where players' photos come from and whether the pages hide results until asked.
//!
//! One JSON value in `tournaments.ranking`: read whole, written whole. A pairing program's file
//! sets what it says (202, 162 or `XXS`, 362, 092/192) on every import; the arbiter changes the
//! rest, or the same, with `PATCH /api/tournaments/{id}`. Nothing set is relay's default for the
//! kind of event ([`RankingTerms::codes`]).

use crate::error::{Result, StoreError};
use crate::id::TournamentId;
use crate::pool::{Store, on_pool};
use relay_core::standings::{Code, Edition, Scoring, Settings, TeamScoring, codes};
use relay_core::trf::{HalfPoints, Trf, TrfTournament};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a tournament is ranked (see the module text). Every field may be left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RankingTerms {
    /// Tie-break codes in order (`BH/C1`, `SB`, `BH:MP/C1/P`); empty: relay's default for the
    /// kind of event.
    pub tiebreaks: Vec<String>,
    /// `"2026"` (FIDE C.07 in force since 1 March 2026, the default) or `"2024"`.
    pub edition: Option<String>,
    /// Points per kind of result; none: 1/½/0.
    pub scoring: Option<Scoring>,
    /// Match points of a team event; none: 2/1/0.
    pub team_scoring: Option<TeamScoring>,
    /// A round robin; none: by the file's type line (092/192), else a Swiss.
    pub round_robin: Option<bool>,
    /// Players' photos: an address with `{fide_id}` in it (`https://example.org/{fide_id}.jpg`,
    /// or `/photos/{fide_id}.jpg` for the folder `relay serve --photos-dir` serves); none
    /// shows no photos.
    pub photos: Option<String>,
    /// The credit line shown under a photo.
    pub photo_credit: Option<String>,
    /// Pages open with results and evaluations hidden until the spectator asks.
    pub spoiler_free: bool,
}

/// The codes relay ranks by when a tournament has none of its own: FIDE's usual choices.
const SWISS: &[&str] = &["BH/C1", "BH", "SB"];
const ROUND_ROBIN: &[&str] = &["DE", "SB", "WIN"];
const TEAMS: &[&str] = &["GP", "BH:MP/C1", "EDE"];

impl RankingTerms {
    /// Whether a file's type line says round robin (`Individual: Round-Robin`, `RR`, …).
    fn round_robin_by(t: &TrfTournament) -> bool {
        let says = |s: &Option<String>| {
            s.as_deref().is_some_and(|k| {
                let k = k.to_ascii_lowercase();
                k.contains("robin")
                    || k.contains("rundenturnier")
                    || k.split(['_', ' ', ':']).any(|w| w == "rr")
            })
        };
        says(&t.kind) || says(&t.kind_code)
    }

    /// What a pairing program's file says about ranking, over what was set (a file without a
    /// 202 line keeps the order the arbiter chose).
    pub fn take_from_file(&mut self, t: &TrfTournament) {
        if let Some(list) = &t.tiebreaks {
            let codes: Vec<String> = list
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect();
            if codes.iter().all(|c| Code::parse(c).is_ok()) && !codes.is_empty() {
                self.tiebreaks = codes;
            }
        }
        if t.scoring.is_some() || !t.scoring_xxs.is_empty() {
            self.scoring = Some(Scoring::from_trf(t));
        }
        if t.team_scoring.is_some() {
            self.team_scoring = Some(TeamScoring::from_trf(t));
        }
        if t.kind.is_some() || t.kind_code.is_some() {
            self.round_robin = Some(Self::round_robin_by(t));
        }
    }

    /// The codes in force: the tournament's own, else the default for the kind of event.
    pub fn codes(&self, trf: &Trf) -> Vec<String> {
        if !self.tiebreaks.is_empty() {
            return self.tiebreaks.clone();
        }
        let d = if !trf.teams.is_empty() {
            TEAMS
        } else if self.is_round_robin(trf) {
            ROUND_ROBIN
        } else {
            SWISS
        };
        d.iter().map(|c| c.to_string()).collect()
    }

    pub fn is_round_robin(&self, trf: &Trf) -> bool {
        self.round_robin
            .unwrap_or_else(|| Self::round_robin_by(&trf.tournament))
    }

    /// The core's settings for `trf` after `round` (`None`: the last round with a result).
    pub fn settings(&self, trf: &Trf, round: Option<u32>) -> Result<Settings> {
        let tiebreaks = self
            .codes(trf)
            .iter()
            .map(|c| Code::parse(c))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| StoreError::Conflict(format!("the tie-break order does not read: {e}")))?;
        Ok(Settings {
            scoring: self.scoring.clone().unwrap_or_default(),
            team_scoring: self.team_scoring.clone().unwrap_or_default(),
            tiebreaks,
            edition: self.edition()?,
            round_robin: self.is_round_robin(trf),
            round,
        })
    }

    pub fn edition(&self) -> Result<Edition> {
        match self.edition.as_deref() {
            None | Some("2026") => Ok(Edition::Fide2026),
            Some("2024") => Ok(Edition::Fide2024),
            Some(e) => Err(StoreError::Conflict(format!(
                "edition {e:?}: FIDE's tie-break rules are \"2026\" or \"2024\""
            ))),
        }
    }

    /// Refuses what could not rank anything, naming it: an unknown code, an edition that is
    /// not one, a photo address without `{fide_id}`.
    pub fn check(&self) -> std::result::Result<(), String> {
        for c in &self.tiebreaks {
            Code::parse(c).map_err(|e| format!("tie-break {c:?}: {e}"))?;
        }
        self.edition().map_err(|e| e.to_string())?;
        if let Some(p) = &self.photos {
            if !p.contains("{fide_id}") {
                return Err(format!(
                    "photos {p:?}: give an address with {{fide_id}} in it, where the player's FIDE id goes"
                ));
            }
            // Pages put it in an image's address: a web address or a path on this relay only.
            let web = p.starts_with("https://") || p.starts_with("http://");
            let here = p.starts_with('/') && !p.starts_with("//");
            if !(web || here) || p.chars().any(|c| c.is_whitespace() || c == '"' || c == '<') {
                return Err(format!(
                    "photos {p:?}: an http(s):// address or a path on this relay (/photos/{{fide_id}}.jpg)"
                ));
            }
        }
        for (what, s) in [
            ("scoring", self.scoring.as_ref().map(scoring_values)),
            (
                "team_scoring",
                self.team_scoring
                    .as_ref()
                    .map(|t| vec![t.win, t.draw, t.loss]),
            ),
        ] {
            if let Some(v) = s
                && v.iter().any(|x| !x.is_finite() || *x < 0.0 || *x > 100.0)
            {
                return Err(format!("{what}: points are numbers from 0 to 100"));
            }
        }
        Ok(())
    }

    /// The photo of a player with a FIDE id, when the organiser gave an address.
    pub fn photo_of(&self, fide_id: Option<u64>) -> Option<String> {
        let (tpl, id) = (self.photos.as_ref()?, fide_id?);
        Some(tpl.replace("{fide_id}", &id.to_string()))
    }
}

fn scoring_values(s: &Scoring) -> Vec<f64> {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| {
            v.as_object()
                .map(|o| o.values().filter_map(|x| x.as_f64()).collect())
        })
        .unwrap_or_default()
}

/// Every code relay can rank by, with what it is.
pub fn known_codes() -> Vec<(String, String)> {
    codes::known()
        .iter()
        .map(|(c, d)| (c.to_string(), d.to_string()))
        .collect()
}

/// A scoring as TRF-2026 record 162 writes it (a code at column 6, 15, 24 …, its points in
/// the four columns after), from column 5 as the writer takes it. 162's `W` covers forfeit
/// wins and full-point byes, `A` forfeit losses and zero-point byes.
fn scoring_162(s: &Scoring) -> String {
    [
        ('W', s.win),
        ('D', s.draw),
        ('L', s.loss),
        ('A', s.zero_bye),
        ('P', s.pairing_bye),
    ]
    .iter()
    .map(|(c, p)| format!(" {c}{p:>4.1}    "))
    .collect::<String>()
    .trim_end()
    .to_string()
}

impl Store {
    /// The tournament as a TRF for the pairing program and FIDE's report: relay's record
    /// with each player's points under the tournament's scoring, the ranks its standings give
    /// under its tie-breaks, the codes in 202 and a scoring other than 1/½/0 in 162.
    pub async fn trf_ranked(&self, tournament: TournamentId) -> Result<Trf> {
        let mut trf = self.trf_of(tournament).await?;
        let terms = self.ranking_terms(tournament).await?;
        let settings = terms.settings(&trf, None)?;
        let table = relay_core::standings::standings(&trf, &settings);
        let line: std::collections::HashMap<u32, (u32, f64)> = table
            .players
            .iter()
            .map(|p| (p.start_rank, (p.rank, p.points)))
            .collect();
        for p in &mut trf.players {
            if let Some((rank, points)) = line.get(&p.start_rank) {
                p.rank = Some(*rank);
                p.points = Some(HalfPoints((points * 2.0).round().max(0.0) as u32));
            }
        }
        trf.tournament.tiebreaks = Some(terms.codes(&trf).join(","));
        if let Some(s) = terms.scoring.as_ref().filter(|s| !s.is_standard()) {
            trf.tournament.scoring = Some(scoring_162(s));
        }
        Ok(trf)
    }

    /// How a tournament is ranked (its defaults when nothing was set).
    pub async fn ranking_terms(&self, tournament: TournamentId) -> Result<RankingTerms> {
        let row: Option<(Option<String>,)> = on_pool!(self, pool => sqlx::query_as("SELECT ranking FROM tournaments WHERE id = $1")
            .bind(tournament).fetch_optional(pool).await?);
        let (json,) = row.ok_or(StoreError::NotFound {
            what: "tournament",
            id: tournament.to_string(),
        })?;
        Ok(json
            .and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default())
    }

    /// Replaces how a tournament is ranked (checked by [`RankingTerms::check`] first).
    pub async fn set_ranking_terms(
        &self,
        tournament: TournamentId,
        terms: &RankingTerms,
    ) -> Result<()> {
        terms.check().map_err(StoreError::Conflict)?;
        let json = serde_json::to_string(terms)
            .map_err(|e| StoreError::Conflict(format!("ranking terms: {e}")))?;
        let n = on_pool!(self, pool => sqlx::query("UPDATE tournaments SET ranking = $1 WHERE id = $2")
            .bind(json).bind(tournament).execute(pool).await?.rows_affected());
        if n == 0 {
            return Err(StoreError::NotFound {
                what: "tournament",
                id: tournament.to_string(),
            });
        }
        Ok(())
    }
}
