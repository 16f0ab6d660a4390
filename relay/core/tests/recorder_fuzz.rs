//! Whatever a port delivers, the recorder never panics: random bytes through the decoder, and
//! random well-formed messages (boards, square changes, clock readings) in any order.

use boards::protocol::{
    ClockMessage, ClockReading, ClockStatus, DgtSquare, LineMode, Message, Orientation, PieceCode,
    Placement, SideTime,
};
use proptest::prelude::*;
use relay_core::recorder::{Recorder, RecorderConfig};
use relay_core::replay::{Received, replay};

fn message() -> impl Strategy<Value = Message> {
    let square = (0u8..64).prop_map(|i| DgtSquare::new(i).unwrap_or_else(|| unreachable!("0..64")));
    let piece = (0u8..16).prop_map(PieceCode::from_byte);
    prop_oneof![
        4 => (square.clone(), piece.clone()).prop_map(|(square, piece)| Message::FieldUpdate { square, piece }),
        1 => proptest::collection::vec(0u8..16, 64).prop_map(|v| {
            let mut b = [0u8; 64];
            b.copy_from_slice(&v);
            Message::BoardDump { placement: Placement::from_bytes(&b) }
        }),
        // The start position, so that games actually begin.
        1 => Just(Message::BoardDump { placement: Placement::from_board(&shakmaty::Board::default(), Orientation::Normal) }),
        1 => Just(Message::BoardDump { placement: Placement::from_board(&shakmaty::Board::default(), Orientation::Rotated) }),
        2 => (0u32..36_000, 0u32..36_000, 0u8..64, any::<bool>(), any::<bool>()).prop_map(|(l, r, status, fl, fr)| {
            Message::Clock {
                clock: ClockMessage::Time(ClockReading {
                    left: SideTime { seconds: l, flag_fallen: fl, ..SideTime::default() },
                    right: SideTime { seconds: r, flag_fallen: fr, ..SideTime::default() },
                    status: ClockStatus::from_byte(status),
                }),
            }
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_messages_never_panic(msgs in proptest::collection::vec((message(), 0u64..2_000), 0..300)) {
        let mut rec = Recorder::new(RecorderConfig::default());
        let mut t = 0;
        for (m, dt) in msgs {
            t += dt;
            rec.on_message(&m, t);
            rec.tick(t + 10);
        }
        rec.flush();
        // The arbiter's actions on whatever state this left.
        let _ = rec.continue_from_board(shakmaty::Color::White);
        let _ = rec.position_to_restore();
        rec.confirm_proposal();
    }

    #[test]
    fn random_bytes_never_panic(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..64), bus in any::<bool>()) {
        let received: Vec<Received> = chunks.into_iter().enumerate().map(|(i, bytes)| Received { at_ms: i as u64 * 150, bytes }).collect();
        let mode = if bus { LineMode::Bus } else { LineMode::Single };
        let _ = replay(&received, mode, RecorderConfig::default());
    }
}
