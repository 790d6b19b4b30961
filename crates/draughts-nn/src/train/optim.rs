//! SGD with momentum and Adam(W), written out here because tch's optimizers cannot save their
//! state, and an exact resume needs it.
//!
//! The optimizer works on the trainable variables of a [`Net`] (those that require a gradient;
//! batch-norm running statistics are not), sorted by name. Its state is one or two tensors per
//! variable, named `momentum.<var>` (SGD) or `adam_m.<var>` and `adam_v.<var>` (Adam), plus the
//! count of steps taken; [`Optimizer::state`] hands them out for saving and
//! [`Optimizer::load_state`] checks and copies them back.
//!
//! Updates follow PyTorch's `torch.optim.SGD` (no dampening) and `torch.optim.AdamW`; see
//! [`super::OptimizerKind`] and [`super::TrainConfig::weight_decay`]. A variable whose gradient
//! is undefined (a head the loss did not use) is left alone, state included, as PyTorch does.
//!
//! The block-pattern table of a sparse net (`pt.weight`, 104,976 rows) is updated lazily with
//! Adam (TensorFlow's LazyAdam): only the rows a batch reached (a non-zero gradient) take the
//! step, moments and weight decay included; the others keep their values and moments. A batch
//! reaches at most 16 rows a position of the table's 104,976, and a dense update of all of
//! them made training several times slower.

use std::collections::HashMap;

use tch::{Kind, Tensor};

use super::{OptimizerKind, TrainConfig};
use crate::net::Net;

#[derive(Debug)]
struct Param {
    name: String,
    var: Tensor,
    decay: bool,
    /// Adam updates only the rows with a gradient (an embedding table).
    lazy_rows: bool,
    /// SGD: the momentum buffer. Adam: the first moment.
    first: Tensor,
    /// Adam: the second moment.
    second: Option<Tensor>,
}

/// The optimizer and its state.
#[derive(Debug)]
pub struct Optimizer {
    kind: OptimizerKind,
    params: Vec<Param>,
    steps: u64,
}

/// Why saved state does not fit the optimizer.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A state tensor is missing.
    #[error("tensor `{0}` is missing")]
    Missing(String),
    /// A tensor that is not part of this optimizer's state.
    #[error("unexpected tensor `{0}` (another optimizer or another architecture)")]
    Unexpected(String),
    /// A tensor whose shape is not its variable's.
    #[error("tensor `{name}` has shape {found:?}, its variable has {expected:?}")]
    Shape {
        /// The tensor.
        name: String,
        /// Its shape in the file.
        found: Vec<i64>,
        /// The variable's shape.
        expected: Vec<i64>,
    },
    /// libtorch failed while copying.
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
}

impl Optimizer {
    /// A fresh optimizer (zero state) over the trainable variables of `net`.
    pub fn new(net: &Net, kind: OptimizerKind) -> Result<Optimizer, tch::TchError> {
        let mut vars: Vec<(String, Tensor)> = net
            .var_store()
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        let params = vars
            .into_iter()
            .map(|(name, var)| {
                let zeros = || var.f_zeros_like().and_then(|t| t.f_detach());
                Ok(Param {
                    decay: var.dim() >= 2,
                    lazy_rows: name == "pt.weight",
                    first: zeros()?,
                    second: match kind {
                        OptimizerKind::Sgd => None,
                        OptimizerKind::Adam => Some(zeros()?),
                    },
                    name,
                    var,
                })
            })
            .collect::<Result<_, tch::TchError>>()?;
        Ok(Optimizer {
            kind,
            params,
            steps: 0,
        })
    }

    /// The kind of optimizer.
    pub fn kind(&self) -> OptimizerKind {
        self.kind
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Sets the step count (restored state).
    pub(crate) fn set_steps(&mut self, steps: u64) {
        self.steps = steps;
    }

    /// Number of trainable variables.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether the net has no trainable variable.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// Zeroes the gradients of every variable.
    pub fn zero_grad(&mut self) {
        for p in &mut self.params {
            p.var.zero_grad();
        }
    }

    /// `weight_decay / 2 * |w|^2` over the decayed variables: the L2 loss whose gradient SGD
    /// adds (for Adam the decay is decoupled and this is reported for comparison only).
    pub fn l2_penalty(&self, weight_decay: f64) -> Result<f64, tch::TchError> {
        if weight_decay == 0.0 {
            return Ok(0.0);
        }
        tch::no_grad(|| {
            let mut sum = 0.0;
            for p in self.params.iter().filter(|p| p.decay) {
                let flat = p.var.f_reshape([-1])?;
                sum += f64::try_from(flat.f_dot(&flat)?)?;
            }
            Ok(0.5 * weight_decay * sum)
        })
    }

    /// One update with learning rate `lr`, from the gradients now in the variables.
    ///
    /// Written with in-place ops and 0-dim scalar tensors (`addcmul_`, `addcdiv_`, `lerp_`) so
    /// that an update makes at most one temporary per variable: the policy head's weights alone
    /// are a million floats, and every temporary of that size is a fresh `mmap`.
    pub fn step(&mut self, lr: f64, config: &TrainConfig) -> Result<(), tch::TchError> {
        let t = self.steps + 1;
        let wd = config.weight_decay;
        tch::no_grad(|| {
            for p in &mut self.params {
                let grad = p.var.f_grad()?;
                if !grad.defined() {
                    continue;
                }
                let decay = p.decay && wd > 0.0;
                let device = p.var.device();
                let scalar = |x: f64| Tensor::f_scalar_tensor(x, (Kind::Float, device));
                match self.kind {
                    OptimizerKind::Sgd => {
                        // g = grad + wd * w;  buf = mu * buf + g;
                        // w -= lr * buf  (Nesterov: w -= lr * (g + mu * buf)).
                        let mu = config.momentum;
                        let buf = &mut p.first;
                        let _ = buf.f_mul_scalar_(mu)?;
                        let _ = buf.f_add_(&grad)?;
                        if decay {
                            let _ = buf.f_addcmul_(&p.var, &scalar(wd)?)?;
                        }
                        if config.nesterov {
                            // lr * (g + mu * buf) = lr * wd * w + lr * grad + lr * mu * buf.
                            if decay {
                                let _ = p.var.f_mul_scalar_(1.0 - lr * wd)?;
                            }
                            let _ = p.var.f_addcmul_(&grad, &scalar(-lr)?)?;
                            let _ = p.var.f_addcmul_(buf, &scalar(-lr * mu)?)?;
                        } else {
                            let _ = p.var.f_addcmul_(buf, &scalar(-lr)?)?;
                        }
                    }
                    OptimizerKind::Adam => {
                        let Some(v) = p.second.as_mut() else {
                            // Invariant: Adam params are built with a second moment.
                            continue;
                        };
                        if !p.lazy_rows {
                            adam(&mut p.first, v, &mut p.var, &grad, lr, decay, t, config)?;
                            continue;
                        }
                        let rows = grad.f_ne(0.0)?.f_any_dim(1, false)?.f_nonzero()?.f_view([-1])?;
                        if rows.size()[0] == 0 {
                            continue;
                        }
                        let pick = |x: &Tensor| x.f_index_select(0, &rows);
                        let (mut m, mut v_rows, mut w) = (pick(&p.first)?, pick(v)?, pick(&p.var)?);
                        adam(&mut m, &mut v_rows, &mut w, &pick(&grad)?, lr, decay, t, config)?;
                        let _ = p.first.f_index_copy_(0, &rows, &m)?;
                        let _ = v.f_index_copy_(0, &rows, &v_rows)?;
                        let _ = p.var.f_index_copy_(0, &rows, &w)?;
                    }
                }
            }
            Ok::<(), tch::TchError>(())
        })?;
        self.steps = t;
        Ok(())
    }

    /// The state tensors, named, sorted by name (on the variables' device).
    pub fn state(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::with_capacity(self.params.len() * 2);
        for p in &self.params {
            match self.kind {
                OptimizerKind::Sgd => {
                    out.push((format!("momentum.{}", p.name), p.first.shallow_clone()));
                }
                OptimizerKind::Adam => {
                    out.push((format!("adam_m.{}", p.name), p.first.shallow_clone()));
                    if let Some(v) = &p.second {
                        out.push((format!("adam_v.{}", p.name), v.shallow_clone()));
                    }
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Replaces the state with `tensors` (name -> CPU tensor), after checking that every state
    /// tensor is there with its variable's shape and that there is nothing else. On error the
    /// state is untouched.
    pub fn load_state(&mut self, mut tensors: HashMap<String, Tensor>) -> Result<(), StateError> {
        let expected: Vec<(String, Vec<i64>)> = self
            .state()
            .into_iter()
            .map(|(n, t)| (n, t.size()))
            .collect();
        let mut sources = HashMap::with_capacity(expected.len());
        for (name, shape) in expected {
            let Some(t) = tensors.remove(&name) else {
                return Err(StateError::Missing(name));
            };
            if t.size() != shape {
                return Err(StateError::Shape {
                    name,
                    found: t.size(),
                    expected: shape,
                });
            }
            sources.insert(name, t);
        }
        if let Some(name) = tensors.into_keys().min() {
            return Err(StateError::Unexpected(name));
        }
        let state = self.state();
        tch::no_grad(|| {
            for (name, mut dst) in state {
                // Every name of `state()` was checked into `sources` above.
                if let Some(src) = sources.get(&name) {
                    dst.f_copy_(&src.f_to_kind(Kind::Float)?)?;
                }
            }
            Ok::<(), tch::TchError>(())
        })?;
        Ok(())
    }
}

/// One AdamW update of `w` (first moment `m`, second moment `v`) from the gradient `g`, in
/// place: PyTorch's `torch.optim.AdamW` at step `t`.
#[allow(clippy::too_many_arguments)]
fn adam(m: &mut Tensor, v: &mut Tensor, w: &mut Tensor, g: &Tensor, lr: f64, decay: bool, t: u64, config: &TrainConfig) -> Result<(), tch::TchError> {
    let (b1, b2) = (config.adam_beta1, config.adam_beta2);
    // m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2.
    let _ = m.f_lerp_(g, 1.0 - b1)?;
    let _ = v.f_mul_scalar_(b2)?;
    let _ = v.f_addcmul_(g, &g.f_mul_scalar(1.0 - b2)?)?;
    if lr == 0.0 {
        return Ok(());
    }
    let bc1 = 1.0 - b1.powf(t as f64);
    let bc2 = 1.0 - b2.powf(t as f64);
    if decay {
        let _ = w.f_mul_scalar_(1.0 - lr * config.weight_decay)?;
    }
    // w -= lr / bc1 * m / (sqrt(v / bc2) + eps), as w += m / d with
    // d = -(bc1 / lr) * (sqrt(v) / sqrt(bc2) + eps).
    let k = -bc1 / lr;
    let mut d = v.f_sqrt()?;
    let _ = d.f_mul_scalar_(k / bc2.sqrt())?;
    let _ = d.f_add_scalar_(k * config.adam_eps)?;
    let _ = w.f_addcdiv_(m, &d)?;
    Ok(())
}
