//! Reading a checkpoint's tensors: the safetensors file checked against the names and shapes an
//! architecture needs, for both the libtorch trainer and the native inference.

use std::collections::BTreeMap;
use std::path::Path;

use crate::MetaError;

/// The tensors of a safetensors file (`bytes`, read from `path`), checked against `expected`
/// (name and shape of every tensor the architecture has): each is there with that shape, is
/// `f32` and holds only finite values, and the file has no other tensor. Everything is checked
/// before anything is returned.
pub fn read_tensors(
    bytes: &[u8],
    path: &Path,
    expected: &[(String, Vec<usize>)],
) -> Result<BTreeMap<String, Vec<f32>>, MetaError> {
    let path = || path.to_path_buf();
    let file = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| MetaError::BadWeights { path: path(), message: e.to_string() })?;
    let mut tensors = BTreeMap::new();
    for (name, shape) in expected {
        let view = file.tensor(name).map_err(|_| MetaError::MissingTensor { path: path(), name: name.clone() })?;
        if view.shape() != shape.as_slice() {
            return Err(MetaError::ShapeMismatch {
                path: path(),
                name: name.clone(),
                found: view.shape().to_vec(),
                expected: shape.clone(),
            });
        }
        if view.dtype() != safetensors::Dtype::F32 {
            return Err(MetaError::WrongDtype { path: path(), name: name.clone(), found: format!("{:?}", view.dtype()) });
        }
        let values: Vec<f32> =
            view.data().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        if values.iter().any(|v| !v.is_finite()) {
            return Err(MetaError::NonFinite { path: path(), name: name.clone() });
        }
        tensors.insert(name.clone(), values);
    }
    if let Some(extra) = file.names().into_iter().filter(|n| !tensors.contains_key(*n)).min() {
        return Err(MetaError::UnexpectedTensor { path: path(), name: extra.clone() });
    }
    Ok(tensors)
}
