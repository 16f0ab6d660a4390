//! Points for each kind of result: FIDE's 1/½/0 unless the file says otherwise, in TRF-2026's
//! record 162 (individuals), 362 (team match points) or JaVaFo's `XXS` lines.
//!
//! 162 puts a result code at column 6 and its points at 7–10, the next code at 15 (points
//! 16–19), then every nine columns: `W` a win (over the board, by forfeit, or a full-point
//! bye), `D` a draw or half-point bye, `L` a loss, `A` an absence (zero-point bye, forfeit
//! loss), `P` the pairing-allocated bye (as `W` unless given), `X` an unknown result (not a
//! cell relay keeps). 362 does the same with `TW`, `TD`, `TL`. `XXS` has `CODE=VALUE` pairs
//! (`WW`, `BW`, `WD`, `BD`, `WL`, `BL`, `ZPB`, `HPB`, `FPB`, `PAB`, `FW`, `FL`, and the
//! shortcuts `W` for WW/BW/FW/FPB and `D` for WD/BD/HPB), the last one written winning.

use crate::trf::{ByeCode, Cell, Colour, Outcome, TrfTournament};
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
    /// A win with black, where it differs from [`Scoring::win`] (TRF(x) `BW`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub win_black: Option<f64>,
    /// A draw with black, where it differs (TRF(x) `BD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw_black: Option<f64>,
    /// A loss with black, where it differs (TRF(x) `BL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_black: Option<f64>,
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
            win_black: None,
            draw_black: None,
            loss_black: None,
        }
    }
}

/// A scoring line that does not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScoringError(pub String);

/// `(code, points)` pairs of a 162/362 line: a code is a run of letters, its points the
/// number after it (the fixed columns of the text read the same way, and so do lines whose
/// columns slipped).
fn pairs(line: &str) -> Result<Vec<(String, f64)>, ScoringError> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else { break };
        if !first.is_ascii_alphabetic() {
            return Err(ScoringError(format!(
                "{line:?}: a result code was expected at {first:?}"
            )));
        }
        let mut code = String::new();
        while let Some(&c) = chars.peek().filter(|c| c.is_ascii_alphabetic()) {
            code.push(c.to_ascii_uppercase());
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut num = String::new();
        while let Some(&c) = chars.peek().filter(|c| c.is_ascii_digit() || **c == '.') {
            num.push(c);
            chars.next();
        }
        let points = num
            .parse::<f64>()
            .map_err(|_| ScoringError(format!("{line:?}: {code} has no points")))?;
        out.push((code, points));
    }
    Ok(out)
}

impl Scoring {
    /// From a file's 162 line and TRF(x) `XXS` lines (these last, so they win); the defaults
    /// where it has neither. Parts that do not read keep their defaults (see
    /// [`Scoring::try_from_trf`] to be told).
    pub fn from_trf(t: &TrfTournament) -> Scoring {
        let mut s = Scoring::default();
        if let Some(l) = &t.scoring {
            let _ = s.apply_162(l);
        }
        for l in &t.scoring_xxs {
            let _ = s.apply_xxs(l);
        }
        s
    }

    /// As [`Scoring::from_trf`], refusing a line that does not read.
    pub fn try_from_trf(t: &TrfTournament) -> Result<Scoring, ScoringError> {
        let mut s = Scoring::default();
        if let Some(l) = &t.scoring {
            s.apply_162(l)?;
        }
        for l in &t.scoring_xxs {
            s.apply_xxs(l)?;
        }
        Ok(s)
    }

    /// A 162 line from column 5.
    pub fn apply_162(&mut self, line: &str) -> Result<(), ScoringError> {
        let mut pairing = None;
        for (code, v) in pairs(line)? {
            match code.as_str() {
                "W" => {
                    self.win = v;
                    self.forfeit_win = v;
                    self.full_bye = v;
                }
                "D" => {
                    self.draw = v;
                    self.half_bye = v;
                }
                "L" => self.loss = v,
                "A" => {
                    self.zero_bye = v;
                    self.forfeit_loss = v;
                }
                "P" => pairing = Some(v),
                // An unknown result (an adjourned game): not a cell relay keeps.
                "X" => {}
                other => {
                    return Err(ScoringError(format!(
                        "{line:?}: {other:?} is not one of W D L A P X"
                    )));
                }
            }
        }
        // The pairing-allocated bye scores as a win unless the line says otherwise.
        self.pairing_bye = pairing.unwrap_or(self.win);
        Ok(())
    }

    /// One `XXS` line (`WW=1 BW=1 D=.5`).
    pub fn apply_xxs(&mut self, line: &str) -> Result<(), ScoringError> {
        for item in line.split_whitespace() {
            let Some((code, v)) = item.split_once('=') else {
                return Err(ScoringError(format!("{item:?} is not CODE=VALUE")));
            };
            let v: f64 = v
                .parse()
                .map_err(|_| ScoringError(format!("{item:?}: {v:?} is not a number")))?;
            match code.to_ascii_uppercase().as_str() {
                "WW" => self.win = v,
                "BW" => self.win_black = Some(v),
                "WD" => self.draw = v,
                "BD" => self.draw_black = Some(v),
                "WL" => self.loss = v,
                "BL" => self.loss_black = Some(v),
                "ZPB" => self.zero_bye = v,
                "HPB" => self.half_bye = v,
                "FPB" => self.full_bye = v,
                "PAB" => self.pairing_bye = v,
                "FW" => self.forfeit_win = v,
                "FL" => self.forfeit_loss = v,
                "W" => {
                    self.win = v;
                    self.win_black = None;
                    self.forfeit_win = v;
                    self.full_bye = v;
                }
                "D" => {
                    self.draw = v;
                    self.draw_black = None;
                    self.half_bye = v;
                }
                other => return Err(ScoringError(format!("{other:?} is not an XXS code"))),
            }
        }
        // A colour's own value equal to the common one says nothing more.
        for (black, common) in [
            (&mut self.win_black, self.win),
            (&mut self.draw_black, self.draw),
            (&mut self.loss_black, self.loss),
        ] {
            if *black == Some(common) {
                *black = None;
            }
        }
        Ok(())
    }

    /// FIDE's 1/½/0 with the byes and forfeits it implies.
    pub fn is_standard(&self) -> bool {
        *self == Scoring::default()
    }

    /// What a game's result scored, by the colour it was played with.
    pub fn of_outcome(&self, o: Outcome, colour: Colour) -> f64 {
        let black = colour == Colour::Black;
        match o {
            Outcome::Win | Outcome::ShortWin => {
                self.win_black.filter(|_| black).unwrap_or(self.win)
            }
            Outcome::Draw | Outcome::ShortDraw => {
                self.draw_black.filter(|_| black).unwrap_or(self.draw)
            }
            Outcome::Loss | Outcome::ShortLoss => {
                self.loss_black.filter(|_| black).unwrap_or(self.loss)
            }
            Outcome::ForfeitWin => self.forfeit_win,
            Outcome::ForfeitLoss => self.forfeit_loss,
        }
    }

    /// What a bye scored.
    pub fn of_bye(&self, b: ByeCode) -> f64 {
        match b {
            ByeCode::Full => self.full_bye,
            ByeCode::Half => self.half_bye,
            ByeCode::Pairing => self.pairing_bye,
            ByeCode::Zero | ByeCode::ForfeitLoss => self.zero_bye,
            ByeCode::ForfeitWin => self.forfeit_win,
        }
    }

    /// What a cell scored (nothing for a game not played yet or a blank).
    pub fn of_cell(&self, c: &Cell) -> f64 {
        match *c {
            Cell::Game {
                outcome: Some(o),
                colour,
                ..
            } => self.of_outcome(o, colour),
            Cell::Game { outcome: None, .. } => 0.0,
            Cell::Bye { code, .. } => self.of_bye(code),
            Cell::Blank => self.zero_bye,
        }
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
    /// From a file's 362 line; the defaults where it has none or it does not read.
    pub fn from_trf(t: &TrfTournament) -> TeamScoring {
        let mut s = TeamScoring::default();
        if let Some(l) = &t.team_scoring {
            let _ = s.apply_362(l);
        }
        s
    }

    /// A 362 line from column 5 (`TW 2     TD 1     TL 0`).
    pub fn apply_362(&mut self, line: &str) -> Result<(), ScoringError> {
        for (code, v) in pairs(line)? {
            match code.as_str() {
                "TW" => self.win = v,
                "TD" => self.draw = v,
                "TL" => self.loss = v,
                other => {
                    return Err(ScoringError(format!(
                        "{line:?}: {other:?} is not one of TW TD TL"
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of_162(line: &str) -> Scoring {
        let t = TrfTournament {
            scoring: Some(line.to_string()),
            ..Default::default()
        };
        Scoring::try_from_trf(&t).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn record_162_at_its_columns() {
        // As read from column 5: column 6 is the second character.
        let s = of_162(" W 1.0    D 0.5    L 0.0");
        assert!(s.is_standard());
        let s = of_162(" W 3.0    D 1.0    L 0.0");
        assert_eq!((s.win, s.draw, s.loss), (3.0, 1.0, 0.0));
        assert_eq!(
            (s.forfeit_win, s.full_bye, s.pairing_bye, s.half_bye),
            (3.0, 3.0, 3.0, 1.0)
        );
        let s = of_162(" W 3.0    D 1.0    L 0.0    P 1.0    A 0.0");
        assert_eq!(s.pairing_bye, 1.0);
        let s = of_162(" W11.5    D 0.5");
        assert_eq!(s.win, 11.5);
        let t = TrfTournament {
            scoring: Some(" Q 1.0".into()),
            ..Default::default()
        };
        assert!(Scoring::try_from_trf(&t).is_err());
        assert!(Scoring::from_trf(&t).is_standard());
    }

    #[test]
    fn xxs_lines_last_one_wins() {
        let t = TrfTournament {
            scoring_xxs: vec!["WW=3 BW=3 WD=1 BD=1".into(), "FW=3 PAB=1 D=1".into()],
            ..Default::default()
        };
        let s = Scoring::from_trf(&t);
        assert_eq!(
            (s.win, s.win_black, s.draw, s.half_bye),
            (3.0, None, 1.0, 1.0)
        );
        assert_eq!((s.pairing_bye, s.forfeit_win, s.full_bye), (1.0, 3.0, 1.0));
        let t = TrfTournament {
            scoring_xxs: vec!["WW=1 BW=1.5".into()],
            ..Default::default()
        };
        let s = Scoring::from_trf(&t);
        assert_eq!(s.of_outcome(Outcome::Win, Colour::Black), 1.5);
        assert_eq!(s.of_outcome(Outcome::Win, Colour::White), 1.0);
    }

    #[test]
    fn record_362() {
        let t = TrfTournament {
            team_scoring: Some("TW 2     TD 1     TL 0 ".into()),
            ..Default::default()
        };
        assert_eq!(TeamScoring::from_trf(&t), TeamScoring::default());
        let t = TrfTournament {
            team_scoring: Some("TW 3     TD 1     TL 0".into()),
            ..Default::default()
        };
        assert_eq!(TeamScoring::from_trf(&t).win, 3.0);
    }
}
