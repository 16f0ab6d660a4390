//! A read-only handle on the store: [`Reads`]. The service's readers (the views, the feeds,
//! the follower, the pushers' looks) hold one, and it has the store's reads and none of its
//! writes, so a part given one cannot change a game, a round or anything else. The parts that
//! write are handed a [`Store`] of their own, so that each write's caller says so.

use crate::cluster::Listener;
use crate::error::Result;
use crate::evals::StoredEval;
use crate::id::{GameId, RoundId, Seq, TournamentId};
use crate::incidents::Incident;
use crate::model::{Change, RoundInfo, StoredGame, TournamentInfo};
use crate::pool::Store;
use crate::standings::RankingTerms;
use crate::trf::{RoundBye, TournamentPlayer};
use relay_core::trf::Trf;
use std::collections::HashMap;

/// The store's reads alone; cheap to clone (a handle on the same pool).
#[derive(Clone, Debug)]
pub struct Reads(Store);

impl Store {
    /// A read-only handle on this store (the same pool).
    pub fn reads(&self) -> Reads {
        Reads(self.clone())
    }
}

/// Each method is the [`Store`] method of the same name, which says more.
macro_rules! reads {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)*) => {
        impl Reads {
            $(
                $(#[$doc])*
                pub async fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
                    self.0.$name($($arg),*).await
                }
            )*
        }
    };
}

reads! {
    /// A game with its moves.
    fn game(id: GameId) -> StoredGame;
    /// A round's games.
    fn round_games(round: RoundId) -> Vec<StoredGame>;
    /// A round's changes after `after`, at most `limit`.
    fn changes_since(round: RoundId, after: Seq, limit: u32) -> Vec<Change>;
    /// A round's change number at `at_ms`.
    fn seq_at(round: RoundId, at_ms: i64) -> Seq;
    /// A round.
    fn round(id: RoundId) -> RoundInfo;
    /// The round boards are played in now.
    fn current_round() -> Option<RoundInfo>;
    /// Every round's change number now.
    fn round_seqs() -> Vec<(RoundId, Seq)>;
    /// A round's byes.
    fn round_byes(round: RoundId) -> Vec<RoundBye>;
    /// The Lichess broadcast rounds made for a round.
    fn lichess_rounds(round: RoundId) -> Vec<String>;
    /// A tournament with its rounds.
    fn tournament(id: TournamentId) -> TournamentInfo;
    /// A tournament's broadcast delay in seconds.
    fn tournament_delay(id: TournamentId) -> u32;
    /// A tournament's time control, and whether its incidents are public.
    fn record_terms(tournament: TournamentId) -> (Option<String>, bool);
    /// A tournament's players with their points, rounds in `cutoffs` cut at a moment.
    fn tournament_players(
        tournament: TournamentId,
        cutoffs: &HashMap<RoundId, i64>,
    ) -> Vec<TournamentPlayer>;
    /// A tournament's record as a TRF, rounds in `cutoffs` cut at a moment.
    fn record_at(
        tournament: TournamentId,
        cutoffs: &HashMap<RoundId, i64>,
    ) -> (Trf, HashMap<(u32, u32), (GameId, u32)>);
    /// How a tournament's standings are ranked.
    fn ranking_terms(tournament: TournamentId) -> RankingTerms;
    /// A game's incidents.
    fn game_incidents(game: GameId) -> Vec<Incident>;
    /// Whether the store holds any evaluation.
    fn any_evals() -> bool;
    /// The evaluations kept for these positions.
    fn evals_of(positions: &[String]) -> HashMap<String, StoredEval>;
    /// E-boards' live states kept since `after_ms` (other relays').
    fn eboards_live_since(after_ms: i64) -> Vec<(String, i64)>;
    /// A listener for other relays' commits (`None` on SQLite).
    fn listen() -> Option<Listener>;
}
