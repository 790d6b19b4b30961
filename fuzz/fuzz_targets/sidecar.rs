//! Checkpoint sidecars and weights: `draughts_model::read_meta` (the `ID.json` sidecar, read
//! from a file), `read_weights`, `parse_json_named`, and `read_tensors` (the safetensors
//! weights, from bytes, checked against the names and shapes an architecture needs).
//!
//! Input: a mode byte, then a sidecar (even mode) or a safetensors file (odd mode).
//!
//! Invariant: no panic on any bytes, and no allocation beyond what the bytes hold. A bad sidecar
//! or weights file is a typed `MetaError` naming the file. A sidecar that reads is within its
//! ranges, and written back (`sidecar::to_json`, what the trainer writes, sealed with the
//! sidecar's checksum) reads back equal but for the seal.
//! Tensors that read are exactly the expected names with the expected number of finite values.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use draughts_model::sidecar::{sidecar_checksum, to_json};
use draughts_model::{parse_json_named, read_meta, read_tensors, read_weights, CheckpointMeta, MetaError, NetConfig};
use libfuzzer_sys::fuzz_target;

#[path = "common/mod.rs"]
mod common;

fn sidecar_file() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| common::scratch_dir().join("fuzz-s00000001.json"))
}

fn expected_lists() -> &'static [Vec<(String, Vec<usize>)>] {
    static LISTS: OnceLock<Vec<Vec<(String, Vec<usize>)>>> = OnceLock::new();
    LISTS.get_or_init(|| {
        let tiny = NetConfig { accumulator: 8, hidden: vec![1], ..NetConfig::sparse() };
        vec![
            vec![("a".to_owned(), vec![2, 2]), ("b".to_owned(), vec![3])],
            vec![("w".to_owned(), vec![]), ("x.y".to_owned(), vec![1, 0, 2])],
            Vec::new(),
            draughts_nnue::tensor_shapes(&tiny),
        ]
    })
}

fn check_sidecar(bytes: &[u8]) {
    let path = sidecar_file();
    std::fs::write(path, bytes).expect("write the scratch sidecar");
    let parsed = parse_json_named::<CheckpointMeta>(bytes);
    match read_meta(path) {
        Ok(meta) => {
            assert_eq!(parsed.as_ref().ok(), Some(&meta));
            assert!(meta.architecture.validate().is_ok());
            std::fs::write(path, to_json(&meta)).expect("write");
            let back = read_meta(path).unwrap_or_else(|e| panic!("a sidecar written back does not read: {e}"));
            // The writer seals what it writes with the sidecar's own checksum.
            assert_eq!(back.sidecar_fnv1a64, Some(sidecar_checksum(&meta)));
            let unsealed = |m: &CheckpointMeta| CheckpointMeta { sidecar_fnv1a64: None, ..m.clone() };
            assert_eq!(unsealed(&back), unsealed(&meta), "a sidecar written back reads different");
            match read_weights(path, &meta) {
                Ok((_, weights)) => assert_eq!(weights.len() as u64, meta.weights.bytes),
                Err(e) => check_error(&e),
            }
        }
        Err(e) => {
            check_error(&e);
            // The field may be empty: it is the path of the offending key, and a key may be `""`.
            if let MetaError::BadSidecar { message, .. } = &e {
                assert!(!message.is_empty());
            }
        }
    }
}

fn check_error(e: &MetaError) {
    assert!(!matches!(e, MetaError::Io { .. } | MetaError::InvalidName { .. }), "{e}");
    assert!(!e.to_string().is_empty());
}

fn check_weights(choice: u8, bytes: &[u8]) {
    let lists = expected_lists();
    let expected = &lists[choice as usize % lists.len()];
    let path = PathBuf::from("fuzz.safetensors");
    match read_tensors(bytes, &path, expected) {
        Ok(tensors) => {
            assert_eq!(tensors.len(), expected.len());
            for (name, shape) in expected {
                let values = &tensors[name];
                assert_eq!(values.len(), shape.iter().product::<usize>(), "{name}");
                assert!(values.iter().all(|v| v.is_finite()));
            }
        }
        Err(e) => {
            check_error(&e);
            assert!(e.to_string().contains("fuzz.safetensors"), "{e}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if rest.len() > 256 * 1024 {
        return;
    }
    if mode & 1 == 0 {
        check_sidecar(rest);
    } else {
        check_weights(mode >> 1, rest);
    }
});
