//! Shard files (`draughts_selfplay::decode_shard`, what `read_shard` runs on a file's bytes, and
//! `encode_shard`, what `write_shard` writes): versioned, checksummed batches of training
//! records.
//!
//! Input: a mode byte, then bytes that are
//! - mode 0: a shard file as it is;
//! - mode 1: a shard file whose magic, version, length field and CRC-32 are first set right, so
//!   that the fuzzer reaches the checks of every field behind the checksum;
//! - mode 2: a description of a shard (header, games, records with any positions, counters,
//!   policies over any moves, any root values, NaN included) built in memory and written.
//!
//! Invariant: no panic on any bytes, and no allocation beyond what the bytes can hold. A file
//! that is not a good shard is a typed `ShardError` (bad magic, version, truncation, trailing
//! bytes, checksum, or a corrupt field with its offset), never an I/O or writer error. A shard
//! that reads writes back to bytes that read back to an equal shard (compared as bytes, so NaN
//! root values compare equal); a shard written from fuzzed records reads back equal.
#![no_main]

use std::path::Path;

use draughts_core::{Bitboard, Color, Counters, DrawReason, Outcome, Rules, Square, WinReason};
use draughts_selfplay::{
    decode_shard, encode_shard, GameEnd, GameSummary, MoveKey, PolicyEntry, RecordFlags, ResignPoint, Shard,
    ShardErrorKind, ShardHeader, TrainingRecord, Wdl, POLICY_SCALE,
};
use libfuzzer_sys::fuzz_target;

#[path = "common/mod.rs"]
mod common;

const MAGIC: &[u8; 8] = b"DRSHARD\0";

/// Hands out the input's bytes as numbers; zeros once it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn u8(&mut self) -> u8 {
        self.take(1).first().copied().unwrap_or(0)
    }
    fn u16(&mut self) -> u16 {
        u16::from(self.u8()) | u16::from(self.u8()) << 8
    }
    fn u32(&mut self) -> u32 {
        u32::from(self.u16()) | u32::from(self.u16()) << 16
    }
    fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }
    fn square(&mut self) -> Square {
        Square::new(self.u8() % 50 + 1).expect("1..=50")
    }
    fn string(&mut self) -> String {
        let n = self.u8() as usize % 24;
        String::from_utf8_lossy(self.take(n)).into_owned()
    }
    fn color(&mut self) -> Color {
        if self.u8() & 1 == 0 {
            Color::White
        } else {
            Color::Black
        }
    }
}

fn record(b: &mut Bytes) -> TrainingRecord {
    let n = b.u8() as usize % 24;
    let position = common::position_from_bytes(b.take(n));
    let counters = Counters { no_progress: b.u16(), no_capture: b.u16(), endgame: b.u16() };
    let entries = b.u8() as usize % 12;
    let mut policy = Vec::with_capacity(entries);
    let mut sum = 0u32;
    for i in 0..entries {
        let from = b.square();
        let to = b.square();
        let captured: Bitboard = if b.u8() & 1 == 1 {
            let bits = b.u64();
            (0..50u8).filter(|i| bits >> i & 1 == 1).filter_map(|i| Square::new(i + 1)).collect()
        } else {
            Bitboard::EMPTY
        };
        // Weights sum to exactly POLICY_SCALE, as a writer's do.
        let weight = if i + 1 == entries { (POLICY_SCALE - sum) as u16 } else { u16::from(b.u8()) };
        sum += u32::from(weight);
        policy.push(PolicyEntry { mv: MoveKey { from, to, captured }, weight });
    }
    let result = [Wdl::Win, Wdl::Draw, Wdl::Loss][b.u8() as usize % 3];
    let root_wdl = [f32::from_bits(b.u32()), f32::from_bits(b.u32()), f32::from_bits(b.u32())];
    TrainingRecord {
        position,
        counters,
        repetitions: b.u8(),
        ply: b.u16(),
        moves_left: b.u16(),
        policy,
        result,
        root_wdl,
        flags: RecordFlags(b.u8() & RecordFlags::ALL.0),
    }
}

fn game(b: &mut Bytes, records: u32) -> GameSummary {
    let draws = [
        DrawReason::Repetition,
        DrawReason::NoProgress,
        DrawReason::NoCapture,
        DrawReason::ThreeVsOne,
        DrawReason::TwoVsOne,
    ];
    let end = match b.u8() % 9 {
        0 => GameEnd::Rules(Outcome::Win { winner: b.color(), reason: WinReason::NoPieces }),
        1 => GameEnd::Rules(Outcome::Win { winner: b.color(), reason: WinReason::NoMoves }),
        c @ 2..=6 => GameEnd::Rules(Outcome::Draw(draws[c as usize - 2])),
        7 => GameEnd::Resigned { loser: b.color() },
        _ => GameEnd::MaxPlies,
    };
    let flags = b.u8();
    let resign = (flags & 2 != 0).then(|| ResignPoint { ply: b.u16(), loser: b.color() });
    GameSummary {
        index: b.u64(),
        seed: b.u64(),
        plies: b.u16(),
        opening_plies: b.u16(),
        records,
        end,
        playthrough: flags & 1 != 0,
        resign,
    }
}

fn build(b: &mut Bytes) -> Shard {
    let header = ShardHeader { model_id: b.string(), rules: b.string(), created_unix: b.u64(), seed: b.u64() };
    let n_records = b.u8() as usize % 8;
    let n_games = (b.u8() as usize % 4).max(usize::from(n_records > 0));
    let records: Vec<TrainingRecord> = (0..n_records).map(|_| record(b)).collect();
    let mut left = n_records as u32;
    let games = (0..n_games)
        .map(|i| {
            let r = if i + 1 == n_games { left } else { u32::from(b.u8()) % (left + 1) };
            left -= r;
            game(b, r)
        })
        .collect();
    Shard { header, games, records }
}

fn has_nan(shard: &Shard) -> bool {
    shard.records.iter().any(|r| r.root_wdl.iter().any(|x| x.is_nan()))
}

/// A shard that reads must write back to bytes that read back to the same shard.
fn check_good(shard: &Shard) {
    let path = Path::new("fuzz.bin");
    let bytes = encode_shard(shard).expect("short strings encode");
    let back = decode_shard(&bytes, path).unwrap_or_else(|e| panic!("a written shard does not read back: {e}"));
    if !has_nan(shard) {
        assert_eq!(&back, shard, "a written shard reads back different");
    }
    assert_eq!(encode_shard(&back).expect("encodes"), bytes, "a shard read back writes different bytes");
    assert_eq!(back.games.iter().map(|g| g.records as usize).sum::<usize>(), back.records.len());
    for r in &back.records {
        let _ = r.policy_moves(&Rules::FMJD);
        let _ = r.root_value();
    }
}

fn check_bytes(bytes: &[u8]) {
    match decode_shard(bytes, Path::new("fuzz.bin")) {
        Ok(shard) => check_good(&shard),
        Err(e) => {
            assert!(
                !matches!(
                    e.kind,
                    ShardErrorKind::Io(_)
                        | ShardErrorKind::TooLarge { .. }
                        | ShardErrorKind::StringTooLong { .. }
                        | ShardErrorKind::Rules(_)
                        | ShardErrorKind::Pdn { .. }
                ),
                "{e}"
            );
            assert!(e.to_string().contains("fuzz.bin"));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if rest.len() > 64 * 1024 {
        return;
    }
    match mode % 3 {
        0 => check_bytes(rest),
        1 => {
            let mut bytes = rest.to_vec();
            if bytes.len() < 24 {
                bytes.resize(24, 0);
            }
            bytes[..8].copy_from_slice(MAGIC);
            let version: u32 = if mode & 4 == 0 { 2 } else { 1 };
            bytes[8..12].copy_from_slice(&version.to_le_bytes());
            let len = bytes.len();
            bytes[12..20].copy_from_slice(&(len as u64).to_le_bytes());
            let crc = crc32fast::hash(&bytes[..len - 4]);
            bytes[len - 4..].copy_from_slice(&crc.to_le_bytes());
            check_bytes(&bytes);
        }
        _ => {
            let shard = build(&mut Bytes(rest));
            check_good(&shard);
        }
    }
});

