//! Training batches: records -> input planes and dense targets.
//!
//! For each record:
//! - the input is [`crate::encoding::encode`] of the position, its counters and its repetition
//!   count (the same encoding as at inference time);
//! - the policy target is dense over the [`POLICY_SIZE`] indices of [`crate::policy`]: entry
//!   weights / 65535, moves that share (from, to) added up, renormalised so that it sums to 1
//!   (the shard format already makes the weights sum to 65535);
//! - the mask is true on the policy target's moves and on every legal move of the position under
//!   the shard's rules (generated with `draughts_core`);
//! - the win/draw/loss target is `(1 - mix) * one_hot(result) + mix * root_wdl`, with value
//!   weight 1, or 0 for a position with a capture pending under `value_quiet_only`;
//! - the moves-left target is `moves_left / moves_left_scale`;
//! - the policy weight is 1 for records with [`RecordFlags::FULL_SEARCH`] and a non-empty
//!   policy, else 0: fast-search records (playout-cap randomisation) train the value heads only,
//!   as in KataGo.
//!
//! # No symmetry augmentation
//! International draughts has no board symmetry to exploit. The 180-degree turn is already used
//! by the encoding (every position is seen from the side to move). A left-right mirror maps dark
//! squares to light squares on a 10x10 board (square 1 is the second cell of the top row, its
//! mirror the ninth, which is light), so it is not a map of the board onto itself; the
//! diagonal reflection (transpose) swaps the direction of play, so men would move sideways.
//! Neither produces a legal draughts position, so every sample is used as it is.

use draughts_core::{Color, Rules, Square};
use draughts_selfplay::{RecordFlags, TrainingRecord, POLICY_SCALE};
use tch::{Device, Tensor};

use crate::encoding::{encode, relative_square, EncodeInput, INPUT_SIZE};
use crate::policy::POLICY_SIZE;

/// The policy index of the move `from -> to` for `side` to move (see [`crate::policy`]).
#[inline]
pub fn key_index(side: Color, from: Square, to: Square) -> usize {
    relative_square(side, from).index() * 50 + relative_square(side, to).index()
}

/// What batch building needs from the training config.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TargetParams {
    /// Weight of the search's root estimate in the win/draw/loss target (0..=1).
    pub root_value_mix: f32,
    /// Plies per unit of the moves-left target.
    pub moves_left_scale: f32,
    /// Value targets only for quiet positions.
    pub value_quiet_only: bool,
}

impl TargetParams {
    /// The parameters of `config`.
    pub fn of(config: &super::TrainConfig) -> TargetParams {
        TargetParams {
            root_value_mix: config.root_value_mix as f32,
            moves_left_scale: config.moves_left_scale as f32,
            value_quiet_only: config.value_quiet_only,
        }
    }
}

/// A batch on the host: flat row-major buffers, reused from batch to batch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Batch {
    /// Rows in the batch.
    pub size: usize,
    /// Encoded inputs, `size * INPUT_SIZE`.
    pub inputs: Vec<f32>,
    /// Dense policy targets, `size * POLICY_SIZE`; each row with policy weight 1 sums to 1, the
    /// others are 0.
    pub policy: Vec<f32>,
    /// Legal-move masks, `size * POLICY_SIZE`.
    pub mask: Vec<bool>,
    /// 1 for rows that train the policy, 0 for the others; `size`.
    pub policy_weight: Vec<f32>,
    /// Win/draw/loss targets, `size * 3`.
    pub wdl: Vec<f32>,
    /// 1 for rows that train the value, 0 for the others (positions with a capture pending,
    /// under `value_quiet_only`); `size`.
    pub value_weight: Vec<f32>,
    /// Moves-left targets (scaled), `size`.
    pub moves_left: Vec<f32>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Empties the batch, keeping its buffers.
    pub fn clear(&mut self) {
        self.size = 0;
        self.inputs.clear();
        self.policy.clear();
        self.mask.clear();
        self.policy_weight.clear();
        self.wdl.clear();
        self.value_weight.clear();
        self.moves_left.clear();
    }

    /// Rows that train the policy.
    pub fn policy_rows(&self) -> usize {
        self.policy_weight.iter().filter(|&&w| w > 0.0).count()
    }

    /// Appends one record, played under `rules`.
    pub fn push(&mut self, record: &TrainingRecord, rules: &Rules, params: &TargetParams) {
        let pos = &record.position;
        let side = pos.side_to_move();

        let start = self.inputs.len();
        self.inputs.resize(start + INPUT_SIZE, 0.0);
        let slot: &mut [f32; INPUT_SIZE] = (&mut self.inputs[start..])
            .try_into()
            .expect("the slice was just resized to INPUT_SIZE"); // invariant: exact length
        encode(
            &EncodeInput {
                position: pos,
                counters: record.counters,
                repetitions: u32::from(record.repetitions).max(1),
            },
            slot,
        );

        let start = self.policy.len();
        self.policy.resize(start + POLICY_SIZE, 0.0);
        self.mask.resize(start + POLICY_SIZE, false);
        let policy = &mut self.policy[start..];
        let mask = &mut self.mask[start..];
        for mv in pos.legal_moves_with(rules).iter() {
            mask[key_index(side, mv.from(), mv.to())] = true;
        }
        let total: u32 = record.policy.iter().map(|e| u32::from(e.weight)).sum();
        let trains_policy = record.flags.contains(RecordFlags::FULL_SEARCH) && total > 0;
        // The format makes the weights sum to POLICY_SCALE; dividing by the actual sum keeps the
        // target a distribution even for a record that does not.
        let scale = if total > 0 { total } else { POLICY_SCALE };
        for e in &record.policy {
            let i = key_index(side, e.mv.from, e.mv.to);
            mask[i] = true;
            if trains_policy {
                policy[i] += f32::from(e.weight) / scale as f32;
            }
        }
        if !mask.iter().any(|&m| m) {
            // No legal move and no target (a terminal position should not be recorded, but a
            // row of -inf logits would make the loss NaN): open the mask; the row's policy
            // weight is 0, so it adds nothing to the loss.
            mask.fill(true);
        }
        self.policy_weight
            .push(if trains_policy { 1.0 } else { 0.0 });

        let result = record.result.one_hot();
        let mix = params.root_value_mix;
        let root = clean_wdl(record.root_wdl).unwrap_or(result);
        for k in 0..3 {
            self.wdl.push((1.0 - mix) * result[k] + mix * root[k]);
        }
        let trains_value = !params.value_quiet_only || !pos.has_capture();
        self.value_weight.push(if trains_value { 1.0 } else { 0.0 });
        self.moves_left
            .push(f32::from(record.moves_left) / params.moves_left_scale);
        self.size += 1;
    }

    /// Copies the batch into tensors on `device`.
    pub fn to_tensors(&self, device: Device) -> Result<BatchTensors, tch::TchError> {
        let b = self.size as i64;
        let t = |data: &[f32], shape: &[i64]| -> Result<Tensor, tch::TchError> {
            Tensor::f_from_slice(data)?
                .f_reshape(shape)?
                .f_to_device(device)
        };
        Ok(BatchTensors {
            size: self.size,
            policy_rows: self.policy_rows(),
            inputs: t(&self.inputs, &[b, INPUT_SIZE as i64])?,
            policy: t(&self.policy, &[b, POLICY_SIZE as i64])?,
            mask: Tensor::f_from_slice(&self.mask)?
                .f_reshape([b, POLICY_SIZE as i64])?
                .f_to_device(device)?,
            policy_weight: t(&self.policy_weight, &[b])?,
            wdl: t(&self.wdl, &[b, 3])?,
            value_rows: self.value_weight.iter().filter(|&&w| w > 0.0).count(),
            value_weight: t(&self.value_weight, &[b])?,
            moves_left: t(&self.moves_left, &[b])?,
        })
    }
}

/// A root estimate that is a usable distribution (finite, non-negative, positive sum),
/// normalised; `None` otherwise.
fn clean_wdl(w: [f32; 3]) -> Option<[f32; 3]> {
    if w.iter().any(|x| !x.is_finite() || *x < 0.0) {
        return None;
    }
    let sum: f32 = w.iter().sum();
    (sum > 0.0).then(|| w.map(|x| x / sum))
}

/// A batch as tensors on the training device (shapes as in [`Batch`]; the mask is `Bool`).
#[derive(Debug)]
pub struct BatchTensors {
    /// Rows.
    pub size: usize,
    /// Rows with policy weight 1.
    pub policy_rows: usize,
    /// `[B, 800]` floats.
    pub inputs: Tensor,
    /// `[B, 2500]` floats.
    pub policy: Tensor,
    /// `[B, 2500]` bools.
    pub mask: Tensor,
    /// `[B]` floats.
    pub policy_weight: Tensor,
    /// `[B, 3]` floats.
    pub wdl: Tensor,
    /// `[B]` floats: 1 for rows that train the value.
    pub value_weight: Tensor,
    /// Rows with value weight 1.
    pub value_rows: usize,
    /// `[B]` floats.
    pub moves_left: Tensor,
}
