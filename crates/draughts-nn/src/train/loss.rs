//! The training loss.
//!
//! - policy: cross-entropy `-sum_i target_i * log p_i` of the target against the log-softmax of
//!   the logits over the legal-move mask (logits off the mask are `-inf` before the softmax, so
//!   illegal moves get probability exactly 0), averaged over the rows that train the policy;
//! - wdl: cross-entropy of the (soft) win/draw/loss target against the log-softmax of the value
//!   logits, averaged over the rows that train the value (every row, or the quiet ones);
//! - moves left (nets with that head): Huber loss (delta 1) between the head's output and the
//!   scaled moves-left target, averaged over the batch;
//! - total: `policy_loss_weight * policy + value_loss_weight * wdl + moves_left_weight *
//!   moves_left`. Weight decay is applied by the optimizer (see [`super::TrainConfig`]), not
//!   through this graph; its value is reported separately.

use tch::{Kind, Reduction, Tensor};

use crate::net::{masked_log_softmax, NetOutput};

use super::batch::BatchTensors;
use super::TrainConfig;

/// The loss terms of one batch, as scalar tensors (the total carries the graph).
#[derive(Debug)]
pub struct LossTerms {
    /// The weighted sum that is minimised.
    pub total: Tensor,
    /// Policy cross-entropy.
    pub policy: Tensor,
    /// Win/draw/loss cross-entropy.
    pub wdl: Tensor,
    /// Moves-left Huber loss, when the net has the head.
    pub moves_left: Option<Tensor>,
}

/// Log-probabilities of the policy over the legal-move mask: `-inf` off the mask would make
/// `0 * -inf = NaN` in the cross-entropy, so off-mask entries are returned as 0 instead (their
/// probability, `exp` of the masked log-softmax, is exactly 0; use [`masked_log_softmax`] for
/// that). `logits` is `[B, 2500]`, `mask` `[B, 2500]` bool.
pub fn masked_log_probs(logits: &Tensor, mask: &Tensor) -> Result<Tensor, tch::TchError> {
    let logp = masked_log_softmax(logits, mask).map_err(|e| match e {
        crate::net::NetError::Torch(t) => t,
        other => tch::TchError::Torch(other.to_string()),
    })?;
    logp.f_masked_fill(&mask.f_logical_not()?, 0.0)
}

/// The loss of `out` against `batch` under `config`'s weights.
pub fn compute(
    out: &NetOutput,
    batch: &BatchTensors,
    config: &TrainConfig,
) -> Result<LossTerms, tch::TchError> {
    let logp = masked_log_probs(&out.policy, &batch.mask)?;
    let per_row = logp
        .f_mul(&batch.policy)?
        .f_sum_dim_intlist(-1, false, Kind::Float)?
        .f_neg()?;
    // Rows without a policy target have weight 0 and an all-zero target.
    let rows = batch.policy_rows.max(1) as f64;
    let policy = per_row
        .f_mul(&batch.policy_weight)?
        .f_sum(Kind::Float)?
        .f_div_scalar(rows)?;

    // Averaged over the rows that train the value (all of them unless `value_quiet_only`).
    let wdl = out
        .wdl
        .f_log_softmax(-1, Kind::Float)?
        .f_mul(&batch.wdl)?
        .f_sum_dim_intlist(-1, false, Kind::Float)?
        .f_neg()?
        .f_mul(&batch.value_weight)?
        .f_sum(Kind::Float)?
        .f_div_scalar(batch.value_rows.max(1) as f64)?;

    let mut total = policy
        .f_mul_scalar(config.policy_loss_weight)?
        .f_add(&wdl.f_mul_scalar(config.value_loss_weight)?)?;
    let moves_left = match &out.moves_left {
        Some(pred) => {
            let pred = pred.f_reshape([-1])?;
            let l = pred.f_huber_loss(&batch.moves_left, Reduction::Mean, 1.0)?;
            if config.moves_left_weight > 0.0 {
                total = total.f_add(&l.f_mul_scalar(config.moves_left_weight)?)?;
            }
            Some(l)
        }
        None => None,
    };
    Ok(LossTerms {
        total,
        policy,
        wdl,
        moves_left,
    })
}
