//! The CBI index beside a CBF file: a count, one word a game and an end word, each offset
//! by the game's number. Writing builds it from the records' offsets; reading checks it
//! holds the words it announces and gives each game's offset back.

use super::error::CbfError;

/// Builds the CBI index for games written at the given byte offsets in the CBF file; `end`
/// is the CBF file's length. The words are 32 bits: a file near 4 GiB would wrap (CBF files
/// are far smaller; KnightStalker managed only about 4000 games a file).
pub fn index(offsets: &[u32], end: u32) -> Vec<u8> {
    let games = offsets.len() as u32;
    let mut out = Vec::with_capacity(4 * (offsets.len() + 2));
    out.extend_from_slice(&games.wrapping_add(1).to_be_bytes());
    for (i, offset) in (1u32..).zip(offsets) {
        out.extend_from_slice(&offset.wrapping_add(i + 1).to_be_bytes());
    }
    out.extend_from_slice(&end.wrapping_add(games).wrapping_add(2).to_be_bytes());
    out
}

fn be_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(
        bytes.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// A CBI index as read, known to hold a word for each of its games.
#[derive(Debug)]
pub(super) struct Index<'a> {
    cbi: &'a [u8],
    count: usize,
}

impl<'a> Index<'a> {
    /// The index `cbi`, refused when it is shorter than the words its first word announces.
    pub(super) fn read(cbi: &'a [u8]) -> Result<Index<'a>, CbfError> {
        let first = be_u32(cbi, 0).ok_or(CbfError::IndexCut)?;
        let count = first.checked_sub(1).ok_or(CbfError::IndexCountZero)? as usize;
        // The count, one word a game and the end.
        let needed = count
            .checked_add(2)
            .and_then(|w| w.checked_mul(4))
            .filter(|n| *n <= cbi.len())
            .is_some();
        if !needed {
            return Err(CbfError::IndexTooShort {
                len: cbi.len(),
                games: count,
            });
        }
        Ok(Index { cbi, count })
    }

    /// How many games the index lists (deleted ones too).
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// The byte offset in the CBF file of game `n` (from 1, at most [`Index::count`]).
    pub(super) fn offset(&self, n: usize) -> Result<usize, CbfError> {
        // In bounds: `read` checked the index holds `count` + 2 words.
        let entry = be_u32(self.cbi, 4 * n).map(|e| e.checked_sub(n as u32 + 1));
        match entry {
            Some(Some(at)) => Ok(at as usize),
            _ => Err(CbfError::IndexEntryTooLow { game: n }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_index_example() {
        // Three games of 48, 39 and 35 bytes: at 0, 48 and 87, the file 122 bytes long.
        let cbi = index(&[0, 48, 87], 122);
        let words: Vec<u32> = cbi
            .chunks(4)
            .map(|w| u32::from_be_bytes(w.try_into().expect("four bytes")))
            .collect();
        assert_eq!(words, [4, 2, 51, 91, 127]);
    }
}
