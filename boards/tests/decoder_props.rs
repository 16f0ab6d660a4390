//! Property tests for the board → host decoder (`boards::protocol::Decoder`).
//!
//! * Any bytes, fed in any chunking, in either line mode: no panic, the same items as feeding
//!   everything at once (up to how a run of garbage is split into garbage items), and every
//!   byte accounted for (the `raw` bytes of the items, followed by
//!   the `pending()` tail, give back the input).
//! * Real messages (built with the crate's own encoders) with random garbage between them: each
//!   one comes back, in order, with its exact bytes. Garbage may decode into extra items.
//! * A clean stream with bytes flipped, inserted and deleted: no panic, and every message whose
//!   own bytes were left alone still comes back. This holds exactly, not only at a distance: the
//!   first byte of a message is the only one with bit 7 set, so a damaged frame before it ends at
//!   the latest when it reaches that byte (dgt-protocol.md §2.2).
//!
//! The case count is proptest's default (256, or `PROPTEST_CASES`). Failures are not written to
//! a regressions file; proptest prints the minimal failing input instead.

use boards::protocol::{
    BatteryStatus, BusReply, BusReplyKind, ClockAck, ClockMessage, ClockReading, ClockSide,
    ClockStatus, Decoded, Decoder, DgtSquare, EeRecord, LineMode, Message, PieceCode, Placement,
    SideTime, Step,
};
use proptest::prelude::*;
use proptest::sample::Index;
use std::collections::BTreeMap;

type Items = Vec<(Decoded, Vec<u8>)>;

// ---------------------------------------------------------------------------------------------
// Driving the decoder

/// Feeds `bytes` in pieces whose sizes cycle through `chunks` (all at once if `chunks` is
/// empty), collecting every item. Returns the items and the final `pending()` count.
fn decode_chunked(mode: LineMode, bytes: &[u8], chunks: &[usize]) -> (Items, usize) {
    let mut decoder = Decoder::new(mode);
    let mut out = Vec::new();
    let mut rest = bytes;
    let mut sizes = chunks.iter().copied().cycle();
    while !rest.is_empty() {
        let n = sizes.next().unwrap_or(rest.len()).clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        decoder.push(chunk);
        while let Step::Ready { item, raw } = decoder.next_step() {
            out.push((item, raw));
        }
    }
    // Asking again with nothing new must not produce anything either.
    assert_eq!(decoder.next_step(), Step::NeedMore);
    (out, decoder.pending())
}

fn decode_at_once(mode: LineMode, bytes: &[u8]) -> (Items, usize) {
    let mut decoder = Decoder::new(mode);
    let out = decoder.feed(bytes);
    (out, decoder.pending())
}

/// Checks that `wanted` occurs in `got` in order (other items may come between).
fn assert_subsequence(wanted: &[(Decoded, Vec<u8>)], got: &[(Decoded, Vec<u8>)]) {
    let mut it = got.iter();
    for (n, w) in wanted.iter().enumerate() {
        assert!(
            it.any(|g| g == w),
            "wanted item {n} of {} not found in order: {w:?}\n got: {got:?}",
            wanted.len()
        );
    }
}

/// Joins neighbouring garbage items: how a run of garbage is cut up depends on how the bytes
/// arrived, everything else must not.
fn merge_garbage(items: &[(Decoded, Vec<u8>)]) -> Items {
    let mut out: Items = Vec::new();
    for (item, raw) in items {
        if let (Decoded::Garbage { bytes }, Some((Decoded::Garbage { bytes: prev }, prev_raw))) =
            (item, out.last_mut())
        {
            prev.extend_from_slice(bytes);
            prev_raw.extend_from_slice(raw);
        } else {
            out.push((item.clone(), raw.clone()));
        }
    }
    out
}

fn concat_raw(items: &[(Decoded, Vec<u8>)]) -> Vec<u8> {
    items
        .iter()
        .flat_map(|(_, raw)| raw.iter().copied())
        .collect()
}

fn line_mode() -> impl Strategy<Value = LineMode> {
    prop_oneof![Just(LineMode::Single), Just(LineMode::Bus)]
}

fn chunking() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        Just(vec![]),
        Just(vec![1]),
        prop::collection::vec(1usize..16, 1..20),
        prop::collection::vec(1usize..300, 1..8),
    ]
}

// ---------------------------------------------------------------------------------------------
// Generators of real messages

fn square() -> impl Strategy<Value = DgtSquare> {
    (0u8..64).prop_map(|i| DgtSquare::new(i).expect("below 64"))
}

fn piece() -> impl Strategy<Value = PieceCode> {
    (0u8..16).prop_map(PieceCode::from_byte)
}

fn placement() -> impl Strategy<Value = Placement> {
    prop::collection::vec(0u8..16, 64).prop_map(|v| {
        let bytes: [u8; 64] = v.try_into().expect("64 bytes");
        Placement::from_bytes(&bytes)
    })
}

fn side_time() -> impl Strategy<Value = SideTime> {
    (0u32..10 * 3600, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(seconds, flag_fallen, time_per_move, flag_shown)| SideTime {
            seconds,
            flag_fallen,
            time_per_move,
            flag_shown,
        },
    )
}

fn clock_message() -> impl Strategy<Value = ClockMessage> {
    prop_oneof![
        6 => (side_time(), side_time(), 0u8..64).prop_map(|(left, right, status)| {
            let reading = ClockReading {
                left,
                right,
                status: ClockStatus::from_byte(status),
            };
            // A reading of all zero bytes is what the protocol calls a blank message.
            if reading.to_payload() == [0; 7] {
                ClockMessage::Blank
            } else {
                ClockMessage::Time(reading)
            }
        }),
        2 => any::<[u8; 4]>().prop_map(|ack| ClockMessage::Ack(ClockAck { ack })),
        1 => prop_oneof![
            Just(0x0Au8),
            Just(0x0B),
            Just(0x09),
            Just(0x0F),
        ]
        .prop_map(|command| ClockMessage::Ack(ClockAck::for_command(command))),
        1 => Just(ClockMessage::Blank),
    ]
}

fn ee_record() -> impl Strategy<Value = EeRecord> {
    prop_oneof![
        4 => (square(), piece(), any::<bool>()).prop_map(|(square, piece, quick)| EeRecord::Field {
            square,
            piece,
            quick
        }),
        2 => (any::<bool>(), 0u32..10 * 3600).prop_map(|(left, seconds)| EeRecord::Clock {
            side: if left { ClockSide::Left } else { ClockSide::Right },
            seconds
        }),
        1 => prop_oneof![
            Just(EeRecord::PowerUp),
            Just(EeRecord::EndOfFile),
            Just(EeRecord::FourRows),
            Just(EeRecord::EmptyBoard),
            Just(EeRecord::Downloaded),
            Just(EeRecord::BeginPosition),
            Just(EeRecord::BeginPositionRotated),
            Just(EeRecord::StartTag),
            Just(EeRecord::Watchdog),
            Just(EeRecord::Nop),
        ],
    ]
}

fn battery() -> impl Strategy<Value = BatteryStatus> {
    (
        0u8..=100,
        (0u8..128, 0u8..128),
        (0u8..128, 0u8..128),
        (0u8..128, 0u8..128, 0u8..128),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(percent, time_left, on_time, standby, charging, discharging)| BatteryStatus {
                percent,
                time_left,
                on_time,
                standby,
                charging,
                discharging,
            },
        )
}

/// Ids with bit 7 set that single-board mode does not know.
fn unknown_id() -> impl Strategy<Value = u8> {
    const KNOWN: [u8; 12] = [
        0x86, 0x8D, 0x8E, 0x8F, 0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0xA0, 0xA2,
    ];
    (0x80u8..=0xFF).prop_filter("a known id", |id| !KNOWN.contains(id))
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        6 => (square(), piece()).prop_map(|(square, piece)| Message::FieldUpdate { square, piece }),
        6 => clock_message().prop_map(|clock| Message::Clock { clock }),
        2 => placement().prop_map(|placement| Message::BoardDump { placement }),
        1 => "[0-9]{5}".prop_map(|serial| Message::SerialNumber { serial }),
        1 => "[0-9A-Z]{10}".prop_map(|serial| Message::LongSerialNumber { serial }),
        1 => "[ -~]{0,60}".prop_map(|text| Message::Trademark { text }),
        1 => (0u8..128, 0u8..128).prop_map(|(major, minor)| Message::Version { major, minor }),
        1 => (0u16..1 << 14).prop_map(|address| Message::BusAddress { address }),
        1 => battery().prop_map(|status| Message::Battery { status }),
        1 => prop::collection::vec(ee_record(), 0..40)
            .prop_map(|records| Message::EeMoves { records }),
        1 => prop::collection::vec(0u8..16, 50).prop_map(|squares| Message::DraughtsDump { squares }),
        1 => (unknown_id(), prop::collection::vec(0u8..128, 0..20))
            .prop_map(|(id, payload)| Message::Unknown { id, payload }),
    ]
}

fn bus_reply() -> impl Strategy<Value = BusReply> {
    let kind = prop_oneof![
        3 => prop::collection::vec(ee_record(), 0..20)
            .prop_map(|records| BusReplyKind::Changes { records }),
        3 => clock_message().prop_map(|clock| BusReplyKind::Clock { clock }),
        2 => placement().prop_map(|placement| BusReplyKind::BoardDump { placement }),
        1 => prop::collection::vec(ee_record(), 0..40)
            .prop_map(|records| BusReplyKind::FromStart { records }),
        1 => Just(BusReplyKind::Ping),
        1 => Just(BusReplyKind::StartGameWritten),
        1 => (0u8..128, 0u8..128).prop_map(|(major, minor)| BusReplyKind::Version { major, minor }),
        1 => prop::collection::vec(0u8..16, 50)
            .prop_map(|squares| BusReplyKind::DraughtsDump { squares }),
    ];
    (0u16..1 << 14, kind).prop_map(|(address, reply)| BusReply { address, reply })
}

/// A real item of `mode` with the bytes a board sends for it.
fn valid_item(mode: LineMode) -> BoxedStrategy<(Decoded, Vec<u8>)> {
    match mode {
        LineMode::Single => message()
            .prop_map(|message| {
                let raw = message.encode();
                (Decoded::Message { message }, raw)
            })
            .boxed(),
        LineMode::Bus => bus_reply()
            .prop_map(|reply| {
                let raw = reply.reply.encode(reply.address);
                (Decoded::Bus { reply }, raw)
            })
            .boxed(),
    }
}

/// Noise: any bytes, with message ids and small length bytes over-represented so that false
/// starts and half headers are common.
fn garbage() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => any::<u8>(),
        2 => 0u8..16,
        1 => prop::sample::select(vec![0x83u8, 0x84, 0x85, 0x86, 0x87, 0x8A, 0x8D, 0x8E, 0x8F, 0xA0]),
    ];
    prop::collection::vec(byte, 0..24)
}

/// Garbage, then (real item, garbage) pairs.
fn noisy_stream(mode: LineMode) -> impl Strategy<Value = (Vec<u8>, Items)> {
    (
        garbage(),
        prop::collection::vec((valid_item(mode), garbage()), 0..16),
    )
        .prop_map(|(lead, pairs)| {
            let mut bytes = lead;
            let mut items = Vec::new();
            for (item, noise) in pairs {
                bytes.extend_from_slice(&item.1);
                bytes.extend_from_slice(&noise);
                items.push(item);
            }
            (bytes, items)
        })
}

// ---------------------------------------------------------------------------------------------
// Mutations

#[derive(Clone, Copy, Debug)]
enum Mutation {
    /// Replace the byte with itself xor the value (a zero value is made 1).
    Flip(u8),
    Delete,
    /// Put a byte in front of the one at the position (or at the end).
    InsertBefore(u8),
}

fn mutation() -> impl Strategy<Value = (Index, Mutation)> {
    let kind = prop_oneof![
        any::<u8>().prop_map(Mutation::Flip),
        Just(Mutation::Delete),
        any::<u8>().prop_map(Mutation::InsertBefore),
    ];
    (any::<Index>(), kind)
}

/// Applies the mutations (at positions `0..=clean.len()`) to `clean` and returns the damaged bytes and, for every position of
/// `clean`, whether a mutation touched it. An insertion in front of position `i` counts as
/// touching both `i - 1` and `i` — it splits them.
fn mutate(clean: &[u8], mutations: &[(usize, Mutation)]) -> (Vec<u8>, Vec<bool>) {
    let mut at: BTreeMap<usize, Vec<Mutation>> = BTreeMap::new();
    for &(pos, m) in mutations {
        // Positions 0..=len; position len only takes insertions.
        assert!(pos <= clean.len());
        let m = match m {
            Mutation::Flip(_) | Mutation::Delete if pos == clean.len() => {
                Mutation::InsertBefore(0x80)
            }
            other => other,
        };
        at.entry(pos).or_default().push(m);
    }
    let mut touched = vec![false; clean.len()];
    let mut out = Vec::with_capacity(clean.len() + mutations.len());
    for pos in 0..=clean.len() {
        let mut byte = clean.get(pos).copied();
        for m in at.get(&pos).map(Vec::as_slice).unwrap_or_default() {
            match *m {
                Mutation::InsertBefore(b) => {
                    out.push(b);
                    if pos > 0 {
                        touched[pos - 1] = true;
                    }
                    if pos < clean.len() {
                        touched[pos] = true;
                    }
                }
                Mutation::Flip(x) => {
                    byte = byte.map(|b| b ^ x.max(1));
                    touched[pos] = true;
                }
                Mutation::Delete => {
                    byte = None;
                    touched[pos] = true;
                }
            }
        }
        if pos < clean.len()
            && let Some(b) = byte
        {
            out.push(b);
        }
    }
    (out, touched)
}

// ---------------------------------------------------------------------------------------------
// The properties

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Any bytes in any chunking: no panic, the chunking does not matter, and every byte is in
    /// an item or still pending.
    #[test]
    fn arbitrary_bytes_are_all_accounted_for(
        mode in line_mode(),
        bytes in prop::collection::vec(
            prop_oneof![3 => any::<u8>(), 1 => 0u8..8, 1 => 0x80u8..0x90],
            0..600,
        ),
        chunks in chunking(),
    ) {
        let (items, pending) = decode_chunked(mode, &bytes, &chunks);
        prop_assert!(pending <= bytes.len());
        let consumed = bytes.len() - pending;
        prop_assert_eq!(concat_raw(&items), &bytes[..consumed]);
        // No item is empty, and garbage items carry exactly their raw bytes.
        for (item, raw) in &items {
            prop_assert!(!raw.is_empty());
            if let Decoded::Garbage { bytes } = item {
                prop_assert_eq!(bytes, raw);
            }
        }
        let (whole, whole_pending) = decode_at_once(mode, &bytes);
        prop_assert_eq!(merge_garbage(&items), merge_garbage(&whole));
        prop_assert_eq!(pending, whole_pending);
    }

    /// Real single-board messages between garbage all come back, in order, with their bytes.
    #[test]
    fn messages_survive_garbage(
        (bytes, wanted) in noisy_stream(LineMode::Single),
        chunks in chunking(),
    ) {
        let (items, pending) = decode_chunked(LineMode::Single, &bytes, &chunks);
        prop_assert_eq!(concat_raw(&items), &bytes[..bytes.len() - pending]);
        assert_subsequence(&wanted, &items);
    }

    /// The same for bus replies on a bus-mode line.
    #[test]
    fn bus_replies_survive_garbage(
        (bytes, wanted) in noisy_stream(LineMode::Bus),
        chunks in chunking(),
    ) {
        let (items, pending) = decode_chunked(LineMode::Bus, &bytes, &chunks);
        prop_assert_eq!(concat_raw(&items), &bytes[..bytes.len() - pending]);
        assert_subsequence(&wanted, &items);
    }

    /// A clean stream decodes to exactly its messages, nothing more.
    #[test]
    fn clean_stream_decodes_exactly(
        (mode, wanted) in mode_and_items(),
        chunks in chunking(),
    ) {
        let bytes: Vec<u8> = wanted.iter().flat_map(|(_, raw)| raw.clone()).collect();
        let (got, pending) = decode_chunked(mode, &bytes, &chunks);
        prop_assert_eq!(pending, 0);
        prop_assert_eq!(got, wanted);
    }

    /// Flipped, inserted and deleted bytes: no panic, and every message whose bytes were not
    /// touched is still recovered.
    #[test]
    fn untouched_messages_survive_mutations(
        (mode, items) in mode_and_items(),
        mutations in prop::collection::vec(mutation(), 1..8),
        chunks in chunking(),
    ) {
        let mut clean = Vec::new();
        let mut spans = Vec::new();
        for (_, raw) in &items {
            spans.push(clean.len()..clean.len() + raw.len());
            clean.extend_from_slice(raw);
        }
        let mutations: Vec<(usize, Mutation)> = mutations
            .iter()
            .map(|(index, m)| (index.index(clean.len() + 1), *m))
            .collect();
        let (damaged, touched) = mutate(&clean, &mutations);
        let (got, pending) = decode_chunked(mode, &damaged, &chunks);
        prop_assert_eq!(concat_raw(&got), &damaged[..damaged.len() - pending]);
        let intact: Vec<(Decoded, Vec<u8>)> = items
            .iter()
            .zip(&spans)
            .filter(|(_, span)| !touched[span.start..span.end].contains(&true))
            .map(|(item, _)| item.clone())
            .collect();
        assert_subsequence(&intact, &got);
    }
}

/// A line mode and up to 15 real items for it.
fn mode_and_items() -> impl Strategy<Value = (LineMode, Items)> {
    line_mode().prop_flat_map(|mode| (Just(mode), prop::collection::vec(valid_item(mode), 0..16)))
}

// ---------------------------------------------------------------------------------------------
// Fixed cases for the pieces above

#[test]
fn mutate_marks_what_it_touches() {
    let clean = [0x8E, 0x00, 0x05, 0x34, 0x00];
    let (out, touched) = mutate(&clean, &[(0, Mutation::Flip(0x01))]);
    assert_eq!(out, vec![0x8F, 0x00, 0x05, 0x34, 0x00]);
    assert_eq!(touched, vec![true, false, false, false, false]);
    let (out, touched) = mutate(
        &clean,
        &[
            (2, Mutation::InsertBefore(0xAA)),
            (4, Mutation::Delete),
            (5, Mutation::InsertBefore(0x01)),
        ],
    );
    assert_eq!(out, vec![0x8E, 0x00, 0xAA, 0x05, 0x34, 0x01]);
    assert_eq!(touched, vec![false, true, true, false, true]);
}

#[test]
fn a_cut_message_does_not_hide_the_next_one() {
    // A clock message lost its last 4 bytes; the field update behind it must come through.
    let clock = Message::Clock {
        clock: ClockMessage::Time(ClockReading::default()),
    };
    let field = Message::FieldUpdate {
        square: DgtSquare::new(52).expect("square"),
        piece: PieceCode::Empty,
    };
    let mut bytes = clock.encode();
    bytes.truncate(6);
    bytes.extend(field.encode());
    for mode in [LineMode::Single, LineMode::Bus] {
        let (items, pending) = decode_at_once(mode, &bytes);
        assert_eq!(pending, 0);
        assert_eq!(
            items.last().map(|(d, _)| d),
            Some(&Decoded::Message {
                message: field.clone()
            })
        );
    }
}
