//! Operator tokens: what an arbiter hands whoever types the moves of boards without e-boards
//! (`POST /api/rounds/{id}/operators`). A token names its round and boards and carries an
//! HMAC-SHA256 of them keyed with the admin token, so the relay keeps nothing of it: a token
//! outlives a restart, works on every relay that shares the admin token, cannot be widened to
//! other boards without the admin token, and changing the admin token withdraws every
//! operator token at once.

use crate::serve::id::RoundId;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What an operator token allows: entering the moves, takebacks and results of these boards
/// of this round, nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub round: RoundId,
    /// Ascending, without repeats.
    pub boards: Vec<u32>,
}

/// What marks a token as an operator's (the admin token is never read as one).
const PREFIX: &str = "op-";

/// HMAC-SHA256 (RFC 2104): `H((K ^ opad) || H((K ^ ipad) || message))`, the key hashed first
/// when longer than the block.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > block.len() {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner = Sha256::new()
        .chain_update(block.map(|b| b ^ 0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(block.map(|b| b ^ 0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The part of a token that names the grant: `3-4.5` for boards 4 and 5 of round 3.
fn named(grant: &Grant) -> String {
    let boards: Vec<String> = grant.boards.iter().map(u32::to_string).collect();
    format!("{}-{}", grant.round, boards.join("."))
}

fn signature(admin: &str, name: &str) -> String {
    hex(&hmac_sha256(
        admin.as_bytes(),
        format!("relay operator {name}").as_bytes(),
    ))
}

/// The token for `grant`, signed with the admin token.
pub fn mint(admin: &str, grant: &Grant) -> String {
    let name = named(grant);
    let mac = signature(admin, &name);
    format!("{PREFIX}{name}-{mac}")
}

/// Whether `token` looks like an operator token at all (else it is taken for the admin
/// token, and refused as a wrong one).
pub fn is_operator_token(token: &str) -> bool {
    token.starts_with(PREFIX)
}

/// The grant `token` carries when the admin token signed it; `None` for anything else (a
/// changed board list, another relay's token, a token signed before the admin token changed).
pub fn verify(admin: &str, token: &str) -> Option<Grant> {
    let rest = token.strip_prefix(PREFIX)?;
    let (name, mac) = rest.rsplit_once('-')?;
    let (round, boards) = name.split_once('-')?;
    let grant = Grant {
        round: round.parse().ok()?,
        boards: boards
            .split('.')
            .map(|b| b.parse().ok())
            .collect::<Option<Vec<u32>>>()?,
    };
    // Only the one spelling the relay writes is signed ("04" for "4" is another token).
    if named(&grant) != name {
        return None;
    }
    let expected = signature(admin, name);
    bool::from(expected.as_bytes().ct_eq(mac.as_bytes())).then_some(grant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_is_rfc_4231s() {
        // RFC 4231, test cases 2 and 6 (a key longer than the block).
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_token_carries_its_grant_and_nothing_else() {
        let grant = Grant {
            round: RoundId::from(3),
            boards: vec![4, 5],
        };
        let token = mint("admin-secret", &grant);
        assert!(token.starts_with("op-3-4.5-"), "{token}");
        assert!(is_operator_token(&token));
        assert_eq!(verify("admin-secret", &token), Some(grant));
        // Another admin token, boards added, a round changed, a signature cut: nothing.
        assert_eq!(verify("other-secret", &token), None);
        let mac = token.rsplit_once('-').map(|(_, m)| m).unwrap_or_default();
        for forged in [
            format!("op-3-4.5.6-{mac}"),
            format!("op-4-4.5-{mac}"),
            format!("op-3-04.5-{mac}"),
            token[..token.len() - 1].to_string(),
            "op-3-4.5".to_string(),
            "op-".to_string(),
            "admin-secret".to_string(),
        ] {
            assert_eq!(verify("admin-secret", &forged), None, "{forged}");
        }
    }
}
