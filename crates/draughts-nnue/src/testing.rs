//! Helpers for tests and benchmarks: sparse networks with seeded random weights, written as real
//! checkpoints (safetensors + sidecar) so that they go through the same loader as trained ones.

use std::path::{Path, PathBuf};

use draughts_model::{fnv1a64, model_id, rfc3339_utc, sidecar_path, CheckpointMeta, NetConfig, WeightsInfo};
use draughts_model::{CHECKPOINT_FORMAT, ENCODING_VERSION};

use crate::network::tensor_shapes;

/// A named tensor: name, shape, values (row-major).
pub type NamedTensor = (String, Vec<usize>, Vec<f32>);

/// Seeded random weights for `arch`: uniform in `±scale / sqrt(fan_in)` (biases included).
pub fn random_tensors(arch: &NetConfig, seed: u64, scale: f32) -> Vec<NamedTensor> {
    let mut s = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    };
    tensor_shapes(arch)
        .into_iter()
        .map(|(name, shape)| {
            let fan_in = if shape.len() == 2 { shape[1] } else { 16 } as f32;
            let n: usize = shape.iter().product();
            let values = (0..n).map(|_| next() * scale / fan_in.sqrt()).collect();
            (name, shape, values)
        })
        .collect()
}

/// The bytes of a safetensors file holding `tensors` as `f32`, sorted by name.
pub fn safetensors_bytes(tensors: &[NamedTensor]) -> Vec<u8> {
    let mut sorted: Vec<&NamedTensor> = tensors.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut header = String::from("{");
    let mut offset = 0usize;
    for (i, (name, shape, values)) in sorted.iter().enumerate() {
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        let end = offset + values.len() * 4;
        if i > 0 {
            header.push(',');
        }
        header.push_str(&format!(
            "\"{name}\":{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[{offset},{end}]}}",
            dims.join(",")
        ));
        offset = end;
    }
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut out = Vec::with_capacity(8 + header.len() + offset);
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for (_, _, values) in sorted {
        for v in values {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// Writes `tensors` as checkpoint `name` at `step` in `dir` (created if needed) and returns the
/// sidecar's path.
pub fn write_checkpoint(dir: &Path, name: &str, step: u64, arch: &NetConfig, tensors: &[NamedTensor]) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create the checkpoint directory");
    let id = model_id(name, step);
    let bytes = safetensors_bytes(tensors);
    let file = format!("{id}.safetensors");
    std::fs::write(dir.join(&file), &bytes).expect("write the weights");
    let meta = CheckpointMeta {
        format: CHECKPOINT_FORMAT,
        model_id: id.clone(),
        name: name.to_owned(),
        step,
        architecture: arch.clone(),
        encoding_version: ENCODING_VERSION,
        rules: "fmjd".to_owned(),
        seed: 0,
        parent: None,
        created_unix_s: 0,
        created: rfc3339_utc(0),
        tch_version: "none".to_owned(),
        libtorch_version: "none".to_owned(),
        weights: WeightsInfo { file, bytes: bytes.len() as u64, fnv1a64: format!("{:016x}", fnv1a64(&bytes)) },
        sidecar_fnv1a64: None,
    };
    let sidecar = sidecar_path(dir, &id);
    std::fs::write(&sidecar, draughts_model::sidecar::to_json(&meta)).expect("write the sidecar");
    sidecar
}

