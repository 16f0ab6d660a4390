//! A PGN file's bytes made text: the reader takes text, and files come in two encodings, so
//! whoever reads a file (the stream cut into games, the converters) decodes it here first.

use std::borrow::Cow;

/// Decodes a PGN file's bytes: UTF-8 when they are valid UTF-8, otherwise ISO 8859/1, the
/// character set of the PGN standard (§4.1) that older software still writes.
pub fn decode_pgn_bytes(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect()),
    }
}
