//! The board's own memory, kept as a DGT e-board keeps it (dgt-protocol.md §9.6): a cyclic
//! log of 0x1F00 bytes that goes on recording whether or not anything reads the port.
//!
//! What it writes: a field record for each square's new state (a change on the square of the
//! last record, nothing written since, overwrites that record: the log keeps a square's net
//! state, not every flicker of one hand), a clock record at each lever press with the halted
//! clock's whole seconds (increment included), unless the press came too quickly after the
//! one before (the protocol says very fast moves may skip it), and markers: power-up (three
//! no-ops, the marker, then a field record for every piece present), the start position
//! (normal or rotated, written again only after more than two pieces left it), an empty
//! board, and "downloaded" after each dump. The dump is the whole buffer, oldest byte first,
//! so its first record may be cut in two by the write position; it ends with EE_EOF.

use boards::protocol::{ClockSide, DgtSquare, EeRecord, Orientation, PieceCode, Placement};

/// Bytes of a dump's payload on the original 8 KB board, EE_EOF included (`8F 3E 03`).
pub const DUMP_BYTES: usize = 0x1F00;

/// Presses closer together than this write no clock record (a move "done very fast").
pub const FAST_PRESS_MS: u64 = 800;

/// One board's log.
#[derive(Clone, Debug)]
pub struct BoardMemory {
    /// The cyclic buffer (the dump's bytes less its closing EE_EOF); unwritten bytes read
    /// as EE_NOP2 (0x00), as erased memory.
    ring: Vec<u8>,
    /// Where the next byte goes.
    write: usize,
    /// The last record, when it is a field record nothing followed: its square and where
    /// it starts.
    last_field: Option<(DgtSquare, usize)>,
    /// The setup the last begin-position tag was written for, while fewer than three of its
    /// pieces have left.
    tagged: Option<Placement>,
    /// An empty-board marker was written and no piece has been set down since.
    empty_marked: bool,
    last_press_ms: Option<u64>,
    /// The board remembers nothing (a board whose log was wiped, or a test of a board
    /// without the feature).
    forgetful: bool,
}

impl BoardMemory {
    /// The log of a board just switched on with `placement` on it.
    pub fn power_up(placement: &Placement) -> BoardMemory {
        let mut m = BoardMemory {
            ring: vec![0; DUMP_BYTES - 1],
            write: 0,
            last_field: None,
            tagged: None,
            empty_marked: false,
            last_press_ms: None,
            forgetful: false,
        };
        m.powered(placement);
        m
    }

    /// Power comes back (the board was switched off and on again): the markers and every
    /// piece present.
    pub fn powered(&mut self, placement: &Placement) {
        for r in [
            EeRecord::Nop,
            EeRecord::Nop,
            EeRecord::Nop,
            EeRecord::PowerUp,
        ] {
            self.append(r);
        }
        for square in DgtSquare::all() {
            let piece = placement.get(square);
            if piece != PieceCode::Empty {
                self.append(EeRecord::Field {
                    square,
                    piece,
                    quick: true,
                });
            }
        }
        self.last_field = None;
        self.tagged = None;
        self.empty_marked = false;
        self.mark(placement);
    }

    /// Wipes the log and records nothing from now on.
    pub fn forget(&mut self) {
        self.ring.fill(0);
        self.write = 0;
        self.last_field = None;
        self.forgetful = true;
    }

    /// A square changed: `placement` is the board after it.
    pub fn field(
        &mut self,
        square: DgtSquare,
        piece: PieceCode,
        quick: bool,
        placement: &Placement,
    ) {
        let record = EeRecord::Field {
            square,
            piece,
            quick,
        };
        match self.last_field {
            Some((sq, at)) if sq == square => self.write_at(at, record),
            _ => {
                let at = self.write;
                self.append(record);
                self.last_field = Some((square, at));
            }
        }
        self.mark(placement);
    }

    /// A lever press halted `side` at `seconds`.
    pub fn press(&mut self, side: ClockSide, seconds: u32, now_ms: u64) {
        let fast = self
            .last_press_ms
            .is_some_and(|t| now_ms.saturating_sub(t) < FAST_PRESS_MS);
        self.last_press_ms = Some(now_ms);
        if !fast {
            self.append(EeRecord::Clock { side, seconds });
        }
    }

    /// The log was read out.
    pub fn downloaded(&mut self) {
        self.append(EeRecord::Downloaded);
    }

    /// The dump's payload: the buffer from its oldest byte, then EE_EOF.
    pub fn dump(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(DUMP_BYTES);
        out.extend_from_slice(&self.ring[self.write..]);
        out.extend_from_slice(&self.ring[..self.write]);
        out.push(0x6B);
        out
    }

    /// Start-position and empty-board markers for the board as it now stands.
    fn mark(&mut self, placement: &Placement) {
        if let Some(tagged) = &self.tagged
            && differing(tagged, placement) > 2
        {
            self.tagged = None;
        }
        if self.tagged.is_none() {
            for (orientation, marker) in [
                (Orientation::Normal, EeRecord::BeginPosition),
                (Orientation::Rotated, EeRecord::BeginPositionRotated),
            ] {
                if *placement == Placement::from_board(&shakmaty::Board::default(), orientation) {
                    self.append(marker);
                    self.tagged = Some(*placement);
                }
            }
        }
        let empty = DgtSquare::all().all(|sq| placement.get(sq) == PieceCode::Empty);
        if empty && !self.empty_marked {
            self.append(EeRecord::EmptyBoard);
        }
        self.empty_marked = empty;
    }

    fn append(&mut self, record: EeRecord) {
        if self.forgetful {
            return;
        }
        let mut bytes = Vec::with_capacity(3);
        record.encode(&mut bytes);
        for b in bytes {
            self.ring[self.write] = b;
            self.write = (self.write + 1) % self.ring.len();
        }
        self.last_field = None;
    }

    fn write_at(&mut self, at: usize, record: EeRecord) {
        if self.forgetful {
            return;
        }
        let mut bytes = Vec::with_capacity(2);
        record.encode(&mut bytes);
        for (i, b) in bytes.into_iter().enumerate() {
            let n = self.ring.len();
            self.ring[(at + i) % n] = b;
        }
    }
}

fn differing(a: &Placement, b: &Placement) -> usize {
    DgtSquare::all()
        .filter(|&sq| a.get(sq) != b.get(sq))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use boards::protocol::eeprom::parse_records;

    fn start() -> Placement {
        Placement::from_board(&shakmaty::Board::default(), Orientation::Normal)
    }

    fn sq(i: u8) -> DgtSquare {
        DgtSquare::new(i).expect("square")
    }

    /// The records after the last power-up marker.
    fn records(m: &BoardMemory) -> Vec<EeRecord> {
        let all = parse_records(&m.dump());
        let at = all
            .iter()
            .rposition(|r| *r == EeRecord::PowerUp)
            .expect("power-up");
        all[at + 1..].to_vec()
    }

    #[test]
    fn power_up_lists_the_pieces_and_tags_the_start() {
        let m = BoardMemory::power_up(&start());
        let r = records(&m);
        assert_eq!(r.len(), 32 + 1 + 1, "{r:?}");
        assert_eq!(r[32], EeRecord::BeginPosition);
        assert_eq!(r[33], EeRecord::EndOfFile);
        assert_eq!(m.dump().len(), DUMP_BYTES);
    }

    #[test]
    fn one_piece_changing_overwrites_its_record() {
        let mut board = start();
        let mut m = BoardMemory::power_up(&board);
        // e2 (square 52 with White at the bottom) lifted and put back: one record, its net state.
        board.set(sq(52), PieceCode::Empty);
        m.field(sq(52), PieceCode::Empty, false, &board);
        board.set(sq(52), start().get(sq(52)));
        m.field(sq(52), start().get(sq(52)), true, &board);
        let r = records(&m);
        assert_eq!(r.len(), 32 + 1 + 1 + 1);
        assert!(matches!(r[33], EeRecord::Field { piece, .. } if piece != PieceCode::Empty));
        // A press between two changes of one square keeps both.
        m.press(ClockSide::Left, 100, 0);
        board.set(sq(52), PieceCode::Empty);
        m.field(sq(52), PieceCode::Empty, false, &board);
        assert_eq!(records(&m).len(), 32 + 1 + 1 + 1 + 1 + 1);
    }

    #[test]
    fn fast_presses_skip_their_record_and_the_log_wraps() {
        let mut board = start();
        let mut m = BoardMemory::power_up(&board);
        m.press(ClockSide::Left, 100, 10_000);
        m.press(ClockSide::Right, 99, 10_300);
        m.press(ClockSide::Left, 98, 12_000);
        let clocks = records(&m)
            .iter()
            .filter(|r| matches!(r, EeRecord::Clock { .. }))
            .count();
        assert_eq!(clocks, 2);
        // Thousands of changes later the power-up is gone; the dump stays one size.
        for i in 0..5_000u32 {
            let s = sq(16 + (i % 2) as u8);
            let piece = if board.get(s) == PieceCode::Empty {
                start().get(s)
            } else {
                PieceCode::Empty
            };
            board.set(s, piece);
            m.field(s, piece, false, &board);
        }
        let all = parse_records(&m.dump());
        assert!(!all.contains(&EeRecord::PowerUp));
        assert_eq!(m.dump().len(), DUMP_BYTES);
        assert_eq!(all.last(), Some(&EeRecord::EndOfFile));
    }
}
