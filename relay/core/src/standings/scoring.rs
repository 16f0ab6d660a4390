//! Points for each kind of result. (Stub: being written.)

use crate::trf::TrfTournament;
use serde::{Deserialize, Serialize};

/// Points a player gets, by kind of result (FIDE's 1/½/0 by default).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Scoring {
    pub win: f64,
    pub draw: f64,
    pub loss: f64,
    pub forfeit_win: f64,
    pub forfeit_loss: f64,
    pub full_bye: f64,
    pub half_bye: f64,
    pub zero_bye: f64,
    pub pairing_bye: f64,
}

impl Default for Scoring {
    fn default() -> Self {
        Scoring {
            win: 1.0,
            draw: 0.5,
            loss: 0.0,
            forfeit_win: 1.0,
            forfeit_loss: 0.0,
            full_bye: 1.0,
            half_bye: 0.5,
            zero_bye: 0.0,
            pairing_bye: 1.0,
        }
    }
}

impl Scoring {
    /// From a file's 162 line or TRF(x) `XXS` lines; the defaults where it has neither.
    pub fn from_trf(_t: &TrfTournament) -> Scoring {
        Scoring::default()
    }
}

/// Match points of a team event (2/1/0 by default; TRF-2026 `362`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TeamScoring {
    pub win: f64,
    pub draw: f64,
    pub loss: f64,
}

impl Default for TeamScoring {
    fn default() -> Self {
        TeamScoring {
            win: 2.0,
            draw: 1.0,
            loss: 0.0,
        }
    }
}

impl TeamScoring {
    pub fn from_trf(_t: &TrfTournament) -> TeamScoring {
        TeamScoring::default()
    }
}
