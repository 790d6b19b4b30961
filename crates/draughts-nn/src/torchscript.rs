//! TorchScript: a network traced into a file that PyTorch (`torch.jit.load`), libtorch and the
//! ONNX converter (`scripts/onnx`) load without this project's code.
//!
//! The traced module takes one float32 tensor `[B, 800]` (the [`crate::encoding`] of `B`
//! positions, any `B`) and returns one float32 tensor `[B, 2503]`: columns `0..2500` the policy
//! logits (indexed by [`crate::policy::move_index`], not masked), `2500..2503` the win/draw/loss
//! logits from the side to move's point of view, and a last column `2503` with the moves-left
//! output when the net has that head (`[B, 2504]`). Batch norms are in inference mode; the
//! weights are constants of the file (it is for inference, not for further training).

use std::path::{Path, PathBuf};

use tch::{CModule, Device, Kind, Tensor};

use crate::encoding::INPUT_SIZE;
use crate::net::{Net, NetError};

/// File name ending of a model's TorchScript file: `ID.torchscript.pt`.
pub const TORCHSCRIPT_EXTENSION: &str = "torchscript.pt";

/// Where the TorchScript file of model `id` goes in `dir`.
pub fn torchscript_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.{TORCHSCRIPT_EXTENSION}"))
}

/// The forward pass as the traced module gives it: policy, win/draw/loss (and moves left)
/// concatenated along the columns.
pub fn joined_forward(net: &Net, xs: &Tensor) -> Result<Tensor, NetError> {
    let out = net.forward(xs)?;
    let mut parts = vec![out.policy, out.wdl];
    parts.extend(out.moves_left);
    Ok(Tensor::f_cat(&parts, 1)?)
}

/// Traces `net` (on its device) with an example batch of 4 positions and writes it to `path`
/// (through a temporary name and a rename). The traced constants are the variables' own
/// tensors, so they are written while the variables are frozen (a constant must not require a
/// gradient, or the file does not load) and unfrozen after.
pub fn save(net: &mut Net, path: &Path) -> Result<(), NetError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    net.var_store_mut().freeze();
    let written = trace(net, 4).and_then(|m| Ok(m.save(&tmp)?));
    net.var_store_mut().unfreeze();
    written?;
    std::fs::rename(&tmp, path).map_err(|e| NetError::Torch(tch::TchError::Io(e)))?;
    Ok(())
}

fn trace(net: &Net, batch: i64) -> Result<CModule, NetError> {
    let _guard = tch::no_grad_guard();
    // Any values trace the same graph (there is no data-dependent branch); 0/1 like the encoding.
    let example = Tensor::f_rand([batch, INPUT_SIZE as i64], (Kind::Float, net.device()))?.f_round()?;
    let mut failure = None;
    let module = CModule::create_by_tracing("DraughtsNet", "forward", &[example], &mut |inputs| {
        match joined_forward(net, &inputs[0]) {
            Ok(t) => vec![t],
            Err(e) => {
                failure = Some(e);
                vec![inputs[0].shallow_clone()]
            }
        }
    })?;
    match failure {
        Some(e) => Err(e),
        None => Ok(module),
    }
}

/// Loads a TorchScript file for inference on `device`.
pub fn load(path: &Path, device: Device) -> Result<CModule, NetError> {
    let mut m = CModule::load_on_device(path, device)?;
    m.set_eval();
    Ok(m)
}

/// The largest absolute difference between `module`'s outputs and `net`'s on `xs`.
pub fn max_difference(module: &CModule, net: &Net, xs: &Tensor) -> Result<f64, NetError> {
    let _guard = tch::no_grad_guard();
    let expected = joined_forward(net, xs)?;
    let got = module.forward_ts(&[xs])?;
    if got.size() != expected.size() {
        return Ok(f64::INFINITY);
    }
    Ok((got - expected).f_abs()?.f_max()?.f_double_value(&[])?)
}
