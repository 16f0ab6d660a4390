//! Tie-break codes as TRF-2026 record 202 writes them. (Stub: being written.)

use std::fmt;

/// One tie-break with its modifiers, e.g. `BH/C1`, `SB`, `BH:MP/C1/P`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Code {
    text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CodeError(pub String);

impl Code {
    pub fn parse(s: &str) -> Result<Code, CodeError> {
        Ok(Code {
            text: s.trim().to_string(),
        })
    }

    /// A team tie-break (ranks teams, not players).
    pub fn is_team(&self) -> bool {
        false
    }
}

/// A comma-separated list as record 202 has it.
pub fn parse_list(s: &str) -> Result<Vec<Code>, CodeError> {
    s.split(',')
        .filter(|c| !c.trim().is_empty())
        .map(Code::parse)
        .collect()
}

/// Every base code relay computes, with what it is, for a chooser.
pub fn known() -> &'static [(&'static str, &'static str)] {
    &[]
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
