//! What a game's tags decide before its moves are read: whether the `Variant` is chess or
//! Chess960 (or rules relay cannot play), and the start position of a `FEN` tag, read as
//! leniently as other readers do.

use crate::game::Tags;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, PositionError, PositionErrorKinds};

/// Tags as read, before the movetext decides the start position.
#[derive(Debug, Default)]
pub(super) struct TagsRead {
    pub(super) tags: Tags,
}

impl TagsRead {
    pub(super) fn player(&self, name: &str) -> Option<String> {
        self.tags.get(name).map(str::to_string)
    }
}

/// How a `Variant` tag value is played.
pub(super) enum VariantKind {
    Standard,
    Chess960,
    Unsupported,
}

pub(super) fn variant_kind(value: &str) -> VariantKind {
    let v: String = value
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect();
    if v.contains("960") || v.contains("fischer") || v == "frc" {
        return VariantKind::Chess960;
    }
    // Variants with other rules would be played wrongly as chess. Unknown names ("starwars",
    // "normal", "From Position") are taken as standard chess, as other readers do.
    const OTHER_RULES: [&str; 16] = [
        "antichess",
        "suicide",
        "giveaway",
        "losers",
        "atomic",
        "crazyhouse",
        "bughouse",
        "horde",
        "kingofthehill",
        "koth",
        "racingkings",
        "threecheck",
        "3check",
        "fivecheck",
        "duck",
        "placement",
    ];
    if OTHER_RULES.iter().any(|o| v.contains(o)) {
        VariantKind::Unsupported
    } else {
        VariantKind::Standard
    }
}

/// A position despite castling rights or an en passant square that fit no position.
fn relaxed(e: PositionError<Chess>) -> Result<Chess, String> {
    match e.ignore_invalid_castling_rights() {
        Ok(pos) => Ok(pos),
        Err(e) => e.ignore_invalid_ep_square().map_err(|e| e.to_string()),
    }
}

/// The start position from a FEN tag. Castling rights that only make sense in Chess960 (a
/// Shredder-FEN `HAha`, rooks not in the corners) switch to Chess960; castling rights or an en
/// passant square that fit no position are dropped, as lenient readers do.
pub(super) fn setup_position(fen: &str, chess960: bool) -> Result<(Chess, CastlingMode), String> {
    let parsed = Fen::from_ascii(fen.as_bytes()).map_err(|e| e.to_string())?;
    if chess960 {
        return parsed
            .into_position(CastlingMode::Chess960)
            .or_else(relaxed)
            .map(|p| (p, CastlingMode::Chess960));
    }
    match parsed
        .clone()
        .into_position::<Chess>(CastlingMode::Standard)
    {
        Ok(p) => Ok((p, CastlingMode::Standard)),
        Err(e)
            if e.kinds()
                .contains(PositionErrorKinds::INVALID_CASTLING_RIGHTS) =>
        {
            match parsed.into_position::<Chess>(CastlingMode::Chess960) {
                Ok(p) => Ok((p, CastlingMode::Chess960)),
                Err(_) => relaxed(e).map(|p| (p, CastlingMode::Standard)),
            }
        }
        Err(e) => relaxed(e).map(|p| (p, CastlingMode::Standard)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants() {
        assert!(matches!(
            variant_kind("Fischerandom"),
            VariantKind::Chess960
        ));
        assert!(matches!(variant_kind("Chess 960"), VariantKind::Chess960));
        assert!(matches!(
            variant_kind(" Standard    "),
            VariantKind::Standard
        ));
        assert!(matches!(variant_kind("starwars"), VariantKind::Standard));
        assert!(matches!(
            variant_kind("Antichess"),
            VariantKind::Unsupported
        ));
        assert!(matches!(
            variant_kind("King of the Hill"),
            VariantKind::Unsupported
        ));
    }
}
