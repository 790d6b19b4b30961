//! Checkpoints: round trip, and every kind of damage gives its own error.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use draughts_model::MetaError;
use draughts_nn::checkpoint::{self, CheckpointError, CheckpointInfo};
use draughts_nn::encoding::{encode_batch, EncodeInput, INPUT_SIZE};
use draughts_nn::{Net, ENCODING_VERSION};
use tch::{Device, Tensor};

fn info(name: &str, step: u64) -> CheckpointInfo {
    CheckpointInfo {
        name: name.to_owned(),
        step,
        rules: "fmjd".to_owned(),
        seed: 42,
        parent: Some("base-s00000000".to_owned()),
    }
}

fn batch() -> Tensor {
    let states = common::mixed_states(12, 4, 21);
    let mut buf = Vec::new();
    encode_batch(
        states.iter().map(|s| EncodeInput {
            position: &s.position,
            counters: s.counters,
            repetitions: s.repetitions,
        }),
        &mut buf,
    );
    Tensor::from_slice(&buf).reshape([16, INPUT_SIZE as i64])
}

fn outputs(net: &Net, xs: &Tensor) -> Vec<Tensor> {
    let out = tch::no_grad(|| net.forward(xs)).unwrap();
    let mut v = vec![out.policy, out.wdl];
    v.extend(out.moves_left);
    v
}

/// Saves a perturbed tiny net and returns (dir guard, sidecar path, the net).
fn saved(moves_left: bool) -> (tempfile::TempDir, PathBuf, Net) {
    let dir = tempfile::tempdir().unwrap();
    let net = common::perturbed_net(&common::tiny_config(moves_left), 8);
    let meta = checkpoint::save(&net, &dir.path().join("ckpt"), &info("unit", 1200)).unwrap();
    let sidecar = checkpoint::sidecar_path(&dir.path().join("ckpt"), &meta.model_id);
    (dir, sidecar, net)
}

/// Edits a sidecar as a person would by hand: without its seal (`sidecar_fnv1a64`), so that
/// the checks after the seal's are reached.
fn edit_sidecar(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    assert!(v.as_object_mut().unwrap().remove("sidecar_fnv1a64").is_some(), "a written sidecar is sealed");
    edit(&mut v);
    fs::write(path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

#[test]
fn every_flipped_bit_of_a_sealed_sidecar_is_an_error_naming_it() {
    let (_dir, sidecar, _) = saved(false);
    let original = fs::read(&sidecar).unwrap();
    for i in 0..original.len() {
        for mask in [0x01u8, 0x20] {
            let mut bad = original.clone();
            bad[i] ^= mask;
            fs::write(&sidecar, &bad).unwrap();
            // A flip in the indentation or in the final newline changes nothing that is read.
            let harmless = original[i].is_ascii_whitespace() && bad[i].is_ascii_whitespace();
            match checkpoint::load(&sidecar, Device::Cpu) {
                Err(e) => assert!(e.to_string().contains(&*sidecar.to_string_lossy()), "byte {i}: {e}"),
                Ok(_) => assert!(harmless, "byte {i} ^ {mask:#x} loaded: {:?}", String::from_utf8_lossy(&bad[i.saturating_sub(20)..(i + 20).min(bad.len())])),
            }
        }
    }
    fs::write(&sidecar, &original).unwrap();
    checkpoint::load(&sidecar, Device::Cpu).unwrap();
}

#[test]
fn round_trip_gives_identical_outputs() {
    tch::set_num_threads(1);
    for moves_left in [false, true] {
        let (dir, sidecar, net) = saved(moves_left);
        let xs = batch();
        let (loaded, meta) = checkpoint::load(&sidecar, Device::Cpu).unwrap();
        for (a, b) in outputs(&net, &xs).iter().zip(outputs(&loaded, &xs)) {
            assert!(a.equal(&b), "outputs differ after a round trip");
        }
        // A fresh net of the same shape is different: the test would catch a missed load.
        let fresh = Net::new(&common::tiny_config(moves_left), Device::Cpu, 99).unwrap();
        assert!(!outputs(&fresh, &xs)[0].equal(&outputs(&net, &xs)[0]));
        assert_eq!(meta.model_id, "unit-s00001200");
        assert_eq!(meta.architecture, common::tiny_config(moves_left));
        assert_eq!(meta.encoding_version, ENCODING_VERSION);
        assert_eq!(
            (meta.step, meta.seed, meta.rules.as_str()),
            (1200, 42, "fmjd")
        );
        assert_eq!(meta.parent.as_deref(), Some("base-s00000000"));
        assert_eq!(meta.tch_version, "0.24.0");
        assert!(meta.created.ends_with('Z') && meta.created_unix_s > 1_600_000_000);
        // Loading by the weights path works too; no temporary file is left behind.
        let weights = sidecar.with_extension("safetensors");
        assert!(checkpoint::load(&weights, Device::Cpu).is_ok());
        let mut names: Vec<String> = fs::read_dir(sidecar.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            vec!["unit-s00001200.json", "unit-s00001200.safetensors"]
        );
        drop(dir);
    }
}

#[test]
fn saving_again_replaces_and_stays_consistent() {
    let (_dir, sidecar, _) = saved(false);
    let other = common::perturbed_net(&common::tiny_config(false), 9);
    checkpoint::save(&other, sidecar.parent().unwrap(), &info("unit", 1200)).unwrap();
    let (loaded, _) = checkpoint::load(&sidecar, Device::Cpu).unwrap();
    let xs = batch();
    assert!(outputs(&loaded, &xs)[0].equal(&outputs(&other, &xs)[0]));
}

#[test]
fn missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let err = checkpoint::load(&dir.path().join("nope.json"), Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::Meta(MetaError::Missing { .. })), "{err}");
    assert!(err.to_string().contains("nope.json"), "{err}");
    let (_dir, sidecar, _) = saved(false);
    fs::remove_file(sidecar.with_extension("safetensors")).unwrap();
    let err = checkpoint::load(&sidecar, Device::Cpu).unwrap_err();
    assert!(
        matches!(err, CheckpointError::Meta(MetaError::Missing { ref path }) if path.ends_with("unit-s00001200.safetensors")),
        "{err}"
    );
}

#[test]
fn damaged_sidecar_names_the_field() {
    let (_dir, sidecar, _) = saved(false);
    let original = fs::read(&sidecar).unwrap();
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|v| v["step"] = "twelve".into()), "step"),
        (
            Box::new(|v| v["architecture"]["blocks"] = (-1).into()),
            "architecture.blocks",
        ),
        (
            Box::new(|v| v["weights"]["bytes"] = serde_json::Value::Null),
            "weights.bytes",
        ),
        (Box::new(|v| v["colour"] = "red".into()), "colour"),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("rules");
            }),
            "rules",
        ),
        (
            Box::new(|v| {
                v["weights"].as_object_mut().unwrap().remove("file");
            }),
            "weights.file",
        ),
        (
            Box::new(|v| v["weights"]["file"] = "../evil.safetensors".into()),
            "weights.file",
        ),
    ];
    for (edit, field) in cases {
        fs::write(&sidecar, &original).unwrap();
        edit_sidecar(&sidecar, edit);
        let err = checkpoint::load(&sidecar, Device::Cpu).unwrap_err();
        match &err {
            CheckpointError::Meta(MetaError::BadSidecar { field: f, .. }) => assert_eq!(f, field, "{err}"),
            other => panic!("expected a bad sidecar at {field}, got {other}"),
        }
        println!("{err}");
    }
    // Not JSON at all, or cut short.
    for bytes in [
        &b"{\"format\": 1,"[..],
        &original[..original.len() / 2],
        b"",
        b"[1, 2]",
    ] {
        fs::write(&sidecar, bytes).unwrap();
        let err = checkpoint::load(&sidecar, Device::Cpu).unwrap_err();
        assert!(matches!(err, CheckpointError::Meta(MetaError::BadSidecar { .. })), "{err}");
    }
    // Trailing garbage after the document.
    let mut trailing = original.clone();
    trailing.extend_from_slice(b"}x");
    fs::write(&sidecar, &trailing).unwrap();
    assert!(matches!(
        checkpoint::load(&sidecar, Device::Cpu),
        Err(CheckpointError::Meta(MetaError::BadSidecar { .. }))
    ));
}

#[test]
fn wrong_versions_and_architecture() {
    let (_dir, sidecar, _) = saved(false);
    let original = fs::read(&sidecar).unwrap();
    edit_sidecar(&sidecar, |v| {
        v["encoding_version"] = (ENCODING_VERSION + 1).into()
    });
    let err = checkpoint::load(&sidecar, Device::Cpu).unwrap_err();
    assert!(
        matches!(err, CheckpointError::Meta(MetaError::EncodingVersion { found, .. }) if found == ENCODING_VERSION + 1),
        "{err}"
    );

    fs::write(&sidecar, &original).unwrap();
    edit_sidecar(&sidecar, |v| v["format"] = 99.into());
    assert!(matches!(
        checkpoint::load(&sidecar, Device::Cpu),
        Err(CheckpointError::Meta(MetaError::Format { found: 99, .. }))
    ));

    fs::write(&sidecar, &original).unwrap();
    edit_sidecar(&sidecar, |v| v["architecture"]["channels"] = 0.into());
    let err = checkpoint::load(&sidecar, Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::Meta(MetaError::Architecture { .. })), "{err}");

    // The sidecar claims another architecture than the weights have (checksum still right).
    fs::write(&sidecar, &original).unwrap();
    edit_sidecar(&sidecar, |v| v["architecture"]["channels"] = 16.into());
    let err = checkpoint::load(&sidecar, Device::Cpu).unwrap_err();
    match &err {
        CheckpointError::Meta(MetaError::ShapeMismatch {
            name,
            found,
            expected,
            ..
        }) => {
            assert!(
                found.contains(&8) && expected.contains(&16),
                "{name} {found:?} {expected:?}"
            );
        }
        other => panic!("expected a shape mismatch, got {other}"),
    }
    fs::write(&sidecar, &original).unwrap();
    edit_sidecar(&sidecar, |v| v["architecture"]["blocks"] = 3.into());
    let err = checkpoint::load(&sidecar, Device::Cpu).unwrap_err();
    assert!(
        matches!(err, CheckpointError::Meta(MetaError::MissingTensor { ref name, .. }) if name.starts_with("block2.")),
        "{err}"
    );
    fs::write(&sidecar, &original).unwrap();
    edit_sidecar(&sidecar, |v| v["architecture"]["blocks"] = 1.into());
    let err = checkpoint::load(&sidecar, Device::Cpu).unwrap_err();
    assert!(
        matches!(err, CheckpointError::Meta(MetaError::UnexpectedTensor { ref name, .. }) if name.starts_with("block1.")),
        "{err}"
    );
    fs::write(&sidecar, &original).unwrap();
    edit_sidecar(&sidecar, |v| {
        v["architecture"]["moves_left_head"] = true.into()
    });
    let err = checkpoint::load(&sidecar, Device::Cpu).unwrap_err();
    assert!(
        matches!(err, CheckpointError::Meta(MetaError::MissingTensor { ref name, .. }) if name.starts_with("moves_left.")),
        "{err}"
    );
}

#[test]
fn damaged_weights() {
    let (_dir, sidecar, _) = saved(false);
    let weights = sidecar.with_extension("safetensors");
    let original = fs::read(&weights).unwrap();
    // Truncated.
    fs::write(&weights, &original[..original.len() - 100]).unwrap();
    let err = checkpoint::load(&sidecar, Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::Meta(MetaError::WeightsSize { .. })), "{err}");
    // Same size, one byte flipped in the data.
    let mut flipped = original.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    fs::write(&weights, &flipped).unwrap();
    let err = checkpoint::load(&sidecar, Device::Cpu).unwrap_err();
    assert!(
        matches!(err, CheckpointError::Meta(MetaError::WeightsChecksum { .. })),
        "{err}"
    );
    // Without a sidecar (bare weights), a truncated or garbage file is still a clean error.
    let mut net = Net::new(&common::tiny_config(false), Device::Cpu, 0).unwrap();
    for bytes in [
        &original[..original.len() / 3],
        &original[..5],
        b"not safetensors at all",
    ] {
        fs::write(&weights, bytes).unwrap();
        let err = checkpoint::load_weights(&mut net, &weights).unwrap_err();
        assert!(matches!(err, CheckpointError::Meta(MetaError::BadWeights { .. })), "{err}");
    }
    fs::write(&weights, &original).unwrap();
    checkpoint::load_weights(&mut net, &weights).unwrap();
    // Weights of another architecture do not load into this net.
    let mut bigger = Net::new(
        &draughts_nn::NetConfig {
            channels: 12,
            ..common::tiny_config(false)
        },
        Device::Cpu,
        0,
    )
    .unwrap();
    let err = checkpoint::load_weights(&mut bigger, &weights).unwrap_err();
    assert!(
        matches!(err, CheckpointError::Meta(MetaError::ShapeMismatch { .. })),
        "{err}"
    );
}

#[test]
fn invalid_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let net = Net::new(&common::tiny_config(false), Device::Cpu, 0).unwrap();
    for name in ["", "../up", "a b", ".hidden"] {
        let err = checkpoint::save(&net, dir.path(), &info(name, 1)).unwrap_err();
        assert!(matches!(err, CheckpointError::Meta(MetaError::InvalidName { .. })), "{err}");
    }
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}
