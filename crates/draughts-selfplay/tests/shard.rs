//! Shard files: round trips, every kind of damage, directory scans, the writer and its PDN.

mod common;

use std::fs;
use std::path::Path;

use common::{small_config, tiny_mcts};
use draughts_core::Rules;
use draughts_mcts::Material;
use draughts_selfplay::shard::{MAGIC, VERSION};
use draughts_selfplay::{
    decode_shard, encode_shard, list_shards, read_all, read_shard, write_shard, FinishedGame, Pool, SelfplayConfig,
    Shard, ShardErrorKind, ShardHeader, ShardWriter,
};

fn games(n: u64, config: &SelfplayConfig) -> Vec<FinishedGame> {
    let mcts = draughts_mcts::MctsConfig { full_search_prob: 0.5, ..tiny_mcts() };
    Pool::new(config, &mcts, Material::default(), 0).unwrap().play(n).unwrap()
}

/// A shard of a few short games: resignations, playthroughs, ply limits, fast searches recorded.
fn sample_shard() -> Shard {
    let config = SelfplayConfig {
        resign_threshold: -0.5,
        resign_consecutive: 2,
        resign_playthrough_fraction: 0.5,
        record_fast_searches: true,
        random_opening_plies: 3,
        ..small_config(4, 30)
    };
    let gs = games(6, &config);
    Shard {
        header: ShardHeader { model_id: "net-4x32-step1200".into(), rules: "fmjd".into(), created_unix: 1_700_000_000, seed: 7 },
        games: gs.iter().map(|g| g.summary).collect(),
        records: gs.into_iter().flat_map(|g| g.records).collect(),
    }
}

#[test]
fn round_trip() {
    let shard = sample_shard();
    assert!(shard.records.len() > 50);
    assert!(shard.records.iter().any(|r| r.policy.iter().any(|e| e.mv.captured.any())), "no capture in the sample");
    let bytes = encode_shard(&shard).unwrap();
    assert_eq!(&bytes[..8], &MAGIC);
    let back = decode_shard(&bytes, Path::new("mem")).unwrap();
    assert_eq!(back, shard);
    // Records decode to positions whose policy still names legal moves.
    for r in &back.records {
        r.policy_moves(&Rules::FMJD).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.bin");
    write_shard(&path, &shard).unwrap();
    assert_eq!(read_shard(&path).unwrap(), shard);
    assert_eq!(fs::read(&path).unwrap(), bytes);
    assert!(!dir.path().join("a.bin.tmp").exists());
    // An empty shard is a valid shard.
    let empty = Shard { games: vec![], records: vec![], ..shard };
    assert_eq!(decode_shard(&encode_shard(&empty).unwrap(), Path::new("e")).unwrap(), empty);
}

#[test]
fn every_truncation_is_reported_as_truncated() {
    let bytes = encode_shard(&sample_shard()).unwrap();
    let path = Path::new("runs/x/games/t.bin");
    for cut in 0..bytes.len() {
        let err = decode_shard(&bytes[..cut], path).unwrap_err();
        match err.kind {
            ShardErrorKind::Truncated { at, expected } => {
                assert_eq!(at, cut as u64);
                assert!(expected > at);
            }
            ref k => panic!("cut at {cut}: {k}"),
        }
        if cut == bytes.len() / 2 {
            let msg = err.to_string();
            assert!(msg.contains("t.bin") && msg.contains(&format!("truncated at byte {cut}")), "{msg}");
        }
    }
}

#[test]
fn every_flipped_byte_is_rejected_with_the_right_error() {
    let bytes = encode_shard(&sample_shard()).unwrap();
    let path = Path::new("f.bin");
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0x80] {
            let mut bad = bytes.clone();
            bad[i] ^= mask;
            let kind = decode_shard(&bad, path).unwrap_err().kind;
            let ok = match i {
                0..=7 => matches!(kind, ShardErrorKind::BadMagic { .. }),
                8..=11 => matches!(kind, ShardErrorKind::UnsupportedVersion { found, supported: VERSION } if found != VERSION),
                12..=19 => matches!(kind, ShardErrorKind::Truncated { .. } | ShardErrorKind::TrailingBytes { .. }),
                _ => matches!(kind, ShardErrorKind::ChecksumMismatch { .. }),
            };
            assert!(ok, "byte {i} ^ {mask:#x}: {kind}");
        }
    }
}

/// Rewrites the checksum so that only the later checks can catch a change.
fn reseal(bytes: &mut [u8]) {
    let n = bytes.len() - 4;
    let crc = crc32fast::hash(&bytes[..n]);
    bytes[n..].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn magic_version_and_contents_are_checked() {
    let good = encode_shard(&sample_shard()).unwrap();
    let path = Path::new("g.bin");

    let mut pdn = b"[Event \"x\"]\n".to_vec();
    pdn.resize(good.len(), b' ');
    let err = decode_shard(&pdn, path).unwrap_err();
    assert!(matches!(err.kind, ShardErrorKind::BadMagic { .. }));
    assert!(err.to_string().contains("not a shard file"), "{err}");

    let mut future = good.clone();
    future[8..12].copy_from_slice(&3u32.to_le_bytes());
    reseal(&mut future);
    let err = decode_shard(&future, path).unwrap_err();
    assert!(matches!(err.kind, ShardErrorKind::UnsupportedVersion { found: 3, supported: 2 }));
    assert!(err.to_string().contains("unsupported format version 3"), "{err}");

    // Version 1 (the same layout without the quiet flag) still reads.
    let mut old = good.clone();
    old[8..12].copy_from_slice(&1u32.to_le_bytes());
    reseal(&mut old);
    assert_eq!(decode_shard(&old, path).unwrap(), decode_shard(&good, path).unwrap());

    let mut longer = good.clone();
    longer.extend_from_slice(b"junk");
    let err = decode_shard(&longer, path).unwrap_err();
    assert!(matches!(err.kind, ShardErrorKind::TrailingBytes { extra: 4, .. }), "{err}");

    let mut flipped = good.clone();
    let mid = good.len() / 2;
    flipped[mid] ^= 0x10;
    let err = decode_shard(&flipped, path).unwrap_err();
    assert!(err.to_string().contains("checksum mismatch"), "{err}");

    // A valid checksum over an invalid field: the side-to-move byte of the first record. The
    // header is 44 bytes plus two strings; the games table follows (30 bytes per game).
    let shard = sample_shard();
    let h = &shard.header;
    let first_record = 44 + 2 + h.model_id.len() + 2 + h.rules.len() + 30 * shard.games.len();
    let mut bad_side = good.clone();
    bad_side[first_record + 24] = 7;
    reseal(&mut bad_side);
    match decode_shard(&bad_side, path).unwrap_err().kind {
        ShardErrorKind::Corrupt { offset, what } => {
            assert_eq!(offset as usize, first_record + 24);
            assert!(what.contains("side to move 7"), "{what}");
        }
        k => panic!("{k}"),
    }
    // A record count that does not match the games table.
    let mut bad_count = good.clone();
    let n = u32::from_le_bytes(bad_count[40..44].try_into().unwrap());
    bad_count[40..44].copy_from_slice(&(n - 1).to_le_bytes());
    reseal(&mut bad_count);
    assert!(matches!(decode_shard(&bad_count, path).unwrap_err().kind, ShardErrorKind::Corrupt { .. }));
}

#[test]
fn a_directory_with_damaged_shards_still_yields_the_good_ones() {
    let dir = tempfile::tempdir().unwrap();
    let shard = sample_shard();
    for name in ["a.bin", "b.bin", "c.bin", "d.bin"] {
        write_shard(dir.path().join(name), &shard).unwrap();
    }
    // b: truncated; d: one flipped byte; plus an unfinished temporary file and a PDN file.
    let b = dir.path().join("b.bin");
    let bytes = fs::read(&b).unwrap();
    fs::write(&b, &bytes[..bytes.len() - 100]).unwrap();
    let d = dir.path().join("d.bin");
    let mut bytes = fs::read(&d).unwrap();
    bytes[200] ^= 1;
    fs::write(&d, &bytes).unwrap();
    fs::write(dir.path().join("e.bin.tmp"), b"half a shard").unwrap();
    fs::write(dir.path().join("a.pdn"), b"1. 32-28 *").unwrap();

    let listed = list_shards(dir.path()).unwrap();
    let names: Vec<_> = listed.iter().map(|p| p.file_name().unwrap().to_str().unwrap().to_owned()).collect();
    assert_eq!(names, ["a.bin", "b.bin", "c.bin", "d.bin"]);
    let set = read_all(dir.path()).unwrap();
    assert_eq!(set.shards.len(), 2);
    assert_eq!(set.records().count(), 2 * shard.records.len());
    assert_eq!(set.games().count(), 2 * shard.games.len());
    assert_eq!(set.skipped.len(), 2);
    assert_eq!(set.skipped[0].path, b);
    assert!(matches!(set.skipped[0].kind, ShardErrorKind::Truncated { .. }));
    assert!(set.skipped[0].to_string().contains("b.bin"), "{}", set.skipped[0]);
    assert_eq!(set.skipped[1].path, d);
    assert!(matches!(set.skipped[1].kind, ShardErrorKind::ChecksumMismatch { .. }));

    let missing = read_all(dir.path().join("nope")).unwrap_err();
    assert!(missing.to_string().contains("nope"), "{missing}");
    assert!(matches!(read_shard(dir.path().join("zz.bin")).unwrap_err().kind, ShardErrorKind::Io(_)));
}

#[test]
fn writer_cuts_shards_and_writes_pdn_beside_them() {
    let dir = tempfile::tempdir().unwrap();
    let games_dir = dir.path().join("games");
    let config = SelfplayConfig { records_per_shard: 40, ..small_config(4, 24) };
    let gs = games(7, &config);
    let mut w = ShardWriter::new(&games_dir, "model-a", &config).unwrap();
    let mut written = Vec::new();
    for g in &gs {
        written.extend(w.add(g).unwrap());
    }
    written.extend(w.flush().unwrap());
    assert_eq!(w.flush().unwrap(), None, "nothing left to flush");
    assert_eq!(w.written(), &written[..]);
    assert!(written.len() >= 2, "{written:?}");

    let set = read_all(&games_dir).unwrap();
    assert!(set.skipped.is_empty());
    assert_eq!(set.shards.len(), written.len());
    let all_games: Vec<_> = set.games().copied().collect();
    assert_eq!(all_games, gs.iter().map(|g| g.summary).collect::<Vec<_>>());
    let all_records: Vec<_> = set.records().cloned().collect();
    assert_eq!(all_records, gs.iter().flat_map(|g| g.records.clone()).collect::<Vec<_>>());
    for (path, shard) in &set.shards {
        assert_eq!(shard.header.model_id, "model-a");
        assert_eq!(shard.header.rules, "fmjd");
        assert_eq!(shard.header.seed, config.seed);
        // Every shard but the last holds at least records_per_shard records.
        if path != written.last().unwrap() {
            assert!(shard.records.len() >= 40);
        }
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("shard-") && name.ends_with(".bin"), "{name}");
        // The PDN beside it replays to the same games.
        let text = fs::read_to_string(path.with_extension("pdn")).unwrap();
        let mut reader = draughts_pdn::Reader::new(text.as_bytes());
        for summary in &shard.games {
            let pdn = reader.next_game().unwrap().unwrap();
            let game = &gs.iter().find(|g| g.summary.index == summary.index).unwrap().game;
            assert_eq!(pdn.moves, game.moves().collect::<Vec<_>>());
            assert_eq!(pdn.result, summary.end.pdn_result());
            assert_eq!(pdn.tag("Seed"), Some(summary.seed.to_string().as_str()));
            assert_eq!(pdn.white(), Some("model-a"));
        }
        assert!(reader.next_game().is_none());
    }
    let leftovers: Vec<_> = fs::read_dir(&games_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Two writers in one directory (two processes) never pick the same names.
    let mut w2 = ShardWriter::new(&games_dir, "model-b", &config).unwrap();
    w2.add(&gs[0]).unwrap();
    let p2 = w2.flush().unwrap().unwrap();
    assert!(!written.contains(&p2));
    assert_eq!(list_shards(&games_dir).unwrap().len(), written.len() + 1);

    // Switching models flushes first, so no shard mixes models.
    let mut w3 = ShardWriter::new(&games_dir, "model-c", &config).unwrap();
    w3.add(&gs[1]).unwrap();
    let flushed = w3.set_model_id("model-d").unwrap().unwrap();
    assert_eq!(read_shard(&flushed).unwrap().header.model_id, "model-c");
    w3.add(&gs[2]).unwrap();
    let p = w3.flush().unwrap().unwrap();
    assert_eq!(read_shard(&p).unwrap().header.model_id, "model-d");

    // A failed write keeps the games; the next flush writes them.
    let lost = dir.path().join("gone");
    let mut w4 = ShardWriter::new(&lost, "model-e", &config).unwrap();
    w4.add(&gs[3]).unwrap();
    fs::remove_dir(&lost).unwrap();
    let err = w4.flush().unwrap_err();
    assert!(matches!(err.kind, ShardErrorKind::Io(_)) && err.to_string().contains("gone"), "{err}");
    assert_eq!(w4.pending_records(), gs[3].records.len());
    fs::create_dir(&lost).unwrap();
    let p = w4.flush().unwrap().unwrap();
    assert_eq!(read_shard(&p).unwrap().games, vec![gs[3].summary]);
    assert_eq!(fs::read_dir(&lost).unwrap().count(), 2, "one shard and its PDN");

    let bad = SelfplayConfig { rules: "russian".into(), ..config };
    assert!(ShardWriter::new(&games_dir, "m", &bad).unwrap_err().to_string().contains("russian"));
}
