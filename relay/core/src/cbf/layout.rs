//! The record's layout (§2.1–§2.5): the sizes and marker bytes of its parts, and the XOR
//! codings of the header, the texts and the moves. Writing and reading both build on it, so
//! it lies below them and uses nothing else of the module.

/// A record starts with its 14-byte header.
pub(super) const HEADER_LEN: usize = 14;
/// The size fields of the texts are six bits wide.
pub(super) const MAX_TEXT: usize = 63;
/// A set-up start position, after the comments: 32 bytes of squares and the move number.
pub(super) const POSITION_LEN: usize = 33;
/// In the move list: a variation starts (never a move: 127 with the comment bit).
pub(super) const VARIANT_START: u8 = 0xff;
/// In the move list: a variation ends (never a move: there is no move 0).
pub(super) const VARIANT_END: u8 = 0x80;
/// A move byte's comment bit.
pub(super) const COMMENTED: u8 = 0x80;
/// In the comment area: a comment starts.
pub(super) const COMMENT_START: u8 = 0xff;

/// XORs the header with the key run of §2.1 (101, times 3 each byte, from byte 13 down).
fn header_keys(h: &mut [u8; HEADER_LEN]) {
    let mut k: u8 = 101;
    for b in h.iter_mut().rev() {
        *b ^= k;
        k = k.wrapping_mul(3);
    }
}

/// The extra key of header byte 11, from the plain text sizes.
fn flags2_key(h: &[u8; HEADER_LEN]) -> u8 {
    14u8.wrapping_add(h[4] & 63).wrapping_add(h[5] & 63)
}

/// The inverse of [`decode_header`]: byte 11 first (it needs the plain sizes), then the run.
pub(super) fn encode_header(mut h: [u8; HEADER_LEN]) -> [u8; HEADER_LEN] {
    h[11] ^= flags2_key(&h);
    header_keys(&mut h);
    h
}

/// §2.1's decoding snippet.
pub(super) fn decode_header(mut h: [u8; HEADER_LEN]) -> [u8; HEADER_LEN] {
    header_keys(&mut h);
    h[11] ^= flags2_key(&h);
    h
}

/// The two check values of header byte 13 that ChessBase's public games carry, from the
/// plain header (see the module notes of [`super`]).
pub(super) fn check_bytes(h: &[u8; HEADER_LEN]) -> [u8; 2] {
    let gy = h[0];
    [
        gy.wrapping_mul(0x25).wrapping_add(h[5]).wrapping_add(h[9]),
        h[3].wrapping_mul(0xc1) // 0x1EC1 mod 256
            .wrapping_mul(h[8].wrapping_add(1))
            .wrapping_mul(gy),
    ]
}

/// §2.3: the player and source text together; the key starts at 3 × their length and is
/// multiplied by 3 each byte, from the last down. Its own inverse.
pub(super) fn code_text(text: &mut [u8]) {
    let mut k = (3 * text.len()) as u8;
    for b in text.iter_mut().rev() {
        *b ^= k;
        k = k.wrapping_mul(3);
    }
}

/// §2.4: the move bytes, `s` being their count + 1 (the header's mlen); the key starts at
/// 49 × s and is multiplied by 7, from byte s − 2 down to byte 1 (byte 0 is left as it is, as
/// ChessBase does). Its own inverse.
pub(super) fn code_moves(moves: &mut [u8]) {
    let s = moves.len() + 1;
    let mut k = (49 * s) as u8;
    for b in moves.iter_mut().skip(1).rev() {
        *b ^= k;
        k = k.wrapping_mul(7);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codings_undo_themselves() {
        let plain: [u8; 14] = [85, 2, 0, 4, 19, 6, 0, 0, 220, 0, 0, 0, 2, 0];
        let coded = encode_header(plain);
        assert_ne!(coded, plain);
        assert_eq!(decode_header(coded), plain);
        // Byte 11 depends on the plain sizes: a differing byte 11 shows through.
        let mut other = plain;
        other[11] = 5;
        assert_eq!(decode_header(encode_header(other)), other);

        let mut text = b"Kasparov,G-Karpov,AMoscow".to_vec();
        code_text(&mut text);
        assert_ne!(&text, b"Kasparov,G-Karpov,AMoscow");
        code_text(&mut text);
        assert_eq!(&text, b"Kasparov,G-Karpov,AMoscow");

        let plain_moves: Vec<u8> = (1..=100).collect();
        let mut moves = plain_moves.clone();
        code_moves(&mut moves);
        assert_eq!(moves[0], 1, "the first move is not coded");
        assert_ne!(moves, plain_moves);
        code_moves(&mut moves);
        assert_eq!(moves, plain_moves);
        // One move or none: nothing to code.
        let mut one = vec![7];
        code_moves(&mut one);
        assert_eq!(one, [7]);
        code_moves(&mut []);
    }
}
