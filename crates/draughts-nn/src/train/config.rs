//! Training hyperparameters.

use serde::{Deserialize, Serialize};

use super::TrainError;

/// The optimizer.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// Stochastic gradient descent with (optionally Nesterov) momentum, PyTorch's formulation
    /// (no dampening): `buf = momentum * buf + g`, `w -= lr * buf` (`g + momentum * buf` with
    /// Nesterov).
    Sgd,
    /// Adam with bias correction (Kingma and Ba 2015); with `weight_decay > 0` it is AdamW
    /// (decay decoupled from the gradient, Loshchilov and Hutter 2019).
    Adam,
}

/// How the learning rate changes with the step.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LrSchedule {
    /// `lr` throughout.
    Constant,
    /// `lr * lr_gamma^k`, where `k` is the number of `lr_milestones` at or below the step.
    Step,
    /// Half a cosine from `lr` down to `lr_floor` over `lr_cosine_steps` steps (counted after
    /// the warm-up), then `lr_floor`.
    Cosine,
}

/// Training parameters. Every field has a default (`TrainConfig::default()`); a config file names
/// only what it changes, and unknown keys are errors.
///
/// # The replay window
/// The trainer samples from the newest `N` positions of the run, where
///
/// ```text
/// N = clamp(window_min + window_growth * (seen - window_min), window_min, window_max)
/// ```
///
/// and `seen` is the number of positions the trainer has loaded since the run began. The window
/// holds all data until `window_min` positions exist, then grows by `window_growth` positions per
/// new position (KataGo grows its window sub-linearly for the same reason: early data is played
/// by weak nets and should leave the window quickly, while a large late window decorrelates the
/// data), up to `window_max`.
///
/// # Steps per cycle
/// Every new position adds `reuse` samples to a budget; a training cycle takes
/// `floor(budget / batch_size)` steps and keeps the remainder. So over a run each position is
/// sampled `reuse` times on average (KataGo's "samples per new position", lc0's "sample ratio").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// Positions per training step. Default 256.
    pub batch_size: usize,
    /// `"sgd"` (default) or `"adam"`.
    pub optimizer: OptimizerKind,
    /// Base learning rate. Default 0.02 (suits SGD with momentum 0.9; Adam wants about 1e-3).
    pub lr: f64,
    /// SGD momentum. Default 0.9.
    pub momentum: f64,
    /// Nesterov momentum for SGD. Default false.
    pub nesterov: bool,
    /// Adam's first-moment decay. Default 0.9.
    pub adam_beta1: f64,
    /// Adam's second-moment decay. Default 0.999.
    pub adam_beta2: f64,
    /// Adam's denominator epsilon. Default 1e-8.
    pub adam_eps: f64,
    /// Weight decay of the convolution and linear weights (every trainable tensor of 2 or more
    /// dimensions; biases and batch-norm parameters are not decayed). With SGD it is an L2 term
    /// added to the gradient (`g += weight_decay * w`, as PyTorch's SGD does; its loss
    /// `weight_decay / 2 * |w|^2` is reported as `reg`). With Adam it is decoupled (AdamW:
    /// `w -= lr * weight_decay * w`). Default 1e-4.
    pub weight_decay: f64,
    /// `"constant"` (default), `"step"` or `"cosine"`.
    pub lr_schedule: LrSchedule,
    /// Steps at which the `step` schedule multiplies the rate by `lr_gamma`, ascending. Default
    /// empty.
    pub lr_milestones: Vec<u64>,
    /// Factor of the `step` schedule. Default 0.1.
    pub lr_gamma: f64,
    /// Length of the `cosine` decay in steps (after the warm-up). Default 100000.
    pub lr_cosine_steps: u64,
    /// Learning rate at the end of the `cosine` decay. Default 0.0.
    pub lr_floor: f64,
    /// Steps of linear warm-up: step `s < warmup_steps` uses `(s + 1) / warmup_steps` of the
    /// scheduled rate. Default 0 (none).
    pub warmup_steps: u64,
    /// Weight of the policy cross-entropy in the total loss. Default 1.0.
    pub policy_loss_weight: f64,
    /// Weight of the win/draw/loss cross-entropy in the total loss. Default 1.0.
    pub value_loss_weight: f64,
    /// The win/draw/loss target: `(1 - root_value_mix) * game result + root_value_mix * the
    /// search's root estimate`, in 0..=1. Default 0.0 (the game result only).
    pub root_value_mix: f64,
    /// Train the value (win/draw/loss) only on quiet positions, those without a capture
    /// pending: the only positions an alpha-beta search asks its evaluation about (a sparse
    /// network as the engine's evaluation). The policy still trains on every position. Default
    /// false.
    pub value_quiet_only: bool,
    /// Weight of the moves-left loss (used only when the net has that head). Default 0.1.
    pub moves_left_weight: f64,
    /// The moves-left head predicts `moves_left / moves_left_scale` (plies); its loss is the
    /// Huber loss (delta 1) in those units. Default 100.0.
    pub moves_left_scale: f64,
    /// Smallest replay window, in positions. Default 100000.
    pub window_min: u64,
    /// Largest replay window, in positions. Default 1000000.
    pub window_max: u64,
    /// Window positions added per position seen beyond `window_min` (see the type docs), in
    /// 0..=1. Default 0.5.
    pub window_growth: f64,
    /// Training samples per new position (see the type docs). Default 4.0.
    pub reuse: f64,
    /// Games directories of other runs (their `games/`, only read) whose positions enter the
    /// window when a training session opens, before the run's own new games, and count as seen
    /// (so the window grows to hold them). A directory's shards are named by their full path in
    /// the resume state: a restart reads them from there, and a shard added to that directory
    /// since enters at the next start. Default empty.
    pub extra_games: Vec<std::path::PathBuf>,
    /// Training samples per position of `extra_games` (0: they fill the window and are sampled
    /// only by the steps that the run's own positions pay for; `reuse`: trained on as if played
    /// here). Default 0.0.
    pub extra_reuse: f64,
    /// Batches built ahead of the training step on a second thread (0: build each batch on the
    /// training thread, between steps). Default 1.
    pub prefetch: usize,
    /// Seed of the sampling generator. Default 0.
    pub seed: u64,
}

impl Default for TrainConfig {
    fn default() -> TrainConfig {
        TrainConfig {
            batch_size: 256,
            optimizer: OptimizerKind::Sgd,
            lr: 0.02,
            momentum: 0.9,
            nesterov: false,
            adam_beta1: 0.9,
            adam_beta2: 0.999,
            adam_eps: 1e-8,
            weight_decay: 1e-4,
            lr_schedule: LrSchedule::Constant,
            lr_milestones: Vec::new(),
            lr_gamma: 0.1,
            lr_cosine_steps: 100_000,
            lr_floor: 0.0,
            warmup_steps: 0,
            policy_loss_weight: 1.0,
            value_loss_weight: 1.0,
            root_value_mix: 0.0,
            value_quiet_only: false,
            moves_left_weight: 0.1,
            moves_left_scale: 100.0,
            window_min: 100_000,
            window_max: 1_000_000,
            window_growth: 0.5,
            reuse: 4.0,
            extra_games: Vec::new(),
            extra_reuse: 0.0,
            prefetch: 1,
            seed: 0,
        }
    }
}

impl TrainConfig {
    /// Checks every field, naming the first one that is out of range.
    pub fn validate(&self) -> Result<(), TrainError> {
        let bad = |field: &'static str, message: String| Err(TrainError::Config { field, message });
        let finite_in = |field: &'static str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && (lo..=hi).contains(&v) {
                Ok(())
            } else {
                bad(field, format!("is {v}, must be in {lo}..={hi}"))
            }
        };
        if !(1..=65_536).contains(&self.batch_size) {
            return bad(
                "batch_size",
                format!("is {}, must be in 1..=65536", self.batch_size),
            );
        }
        finite_in("lr", self.lr, 0.0, 10.0)?;
        finite_in("momentum", self.momentum, 0.0, 0.999_999)?;
        finite_in("adam_beta1", self.adam_beta1, 0.0, 0.999_999)?;
        finite_in("adam_beta2", self.adam_beta2, 0.0, 0.999_999_999)?;
        if !(self.adam_eps.is_finite() && self.adam_eps > 0.0 && self.adam_eps <= 1.0) {
            return bad(
                "adam_eps",
                format!("is {}, must be in (0, 1]", self.adam_eps),
            );
        }
        finite_in("weight_decay", self.weight_decay, 0.0, 1.0)?;
        if self.lr_milestones.windows(2).any(|w| w[0] >= w[1]) {
            return bad(
                "lr_milestones",
                format!("{:?} must be strictly ascending", self.lr_milestones),
            );
        }
        finite_in("lr_gamma", self.lr_gamma, 0.0, 1.0)?;
        if self.lr_schedule == LrSchedule::Cosine && self.lr_cosine_steps == 0 {
            return bad("lr_cosine_steps", "is 0, must be at least 1".to_owned());
        }
        finite_in("lr_floor", self.lr_floor, 0.0, self.lr.max(0.0))?;
        finite_in("policy_loss_weight", self.policy_loss_weight, 0.0, 1e6)?;
        finite_in("value_loss_weight", self.value_loss_weight, 0.0, 1e6)?;
        finite_in("root_value_mix", self.root_value_mix, 0.0, 1.0)?;
        finite_in("moves_left_weight", self.moves_left_weight, 0.0, 1e6)?;
        if !(self.moves_left_scale.is_finite() && self.moves_left_scale > 0.0) {
            return bad(
                "moves_left_scale",
                format!("is {}, must be positive", self.moves_left_scale),
            );
        }
        if self.window_min == 0 {
            return bad("window_min", "is 0, must be at least 1".to_owned());
        }
        if self.window_max < self.window_min {
            return bad(
                "window_max",
                format!(
                    "is {}, below window_min = {}",
                    self.window_max, self.window_min
                ),
            );
        }
        finite_in("window_growth", self.window_growth, 0.0, 1.0)?;
        finite_in("reuse", self.reuse, 0.0, 1e6)?;
        finite_in("extra_reuse", self.extra_reuse, 0.0, 1e6)?;
        if self.prefetch > 64 {
            return bad(
                "prefetch",
                format!("is {}, must be in 0..=64", self.prefetch),
            );
        }
        Ok(())
    }

    /// The learning rate at `step` (0-based: the rate the step with this index uses).
    pub fn lr_at(&self, step: u64) -> f64 {
        let warm = self.warmup_steps;
        let after = step.saturating_sub(warm);
        let scheduled = match self.lr_schedule {
            LrSchedule::Constant => self.lr,
            LrSchedule::Step => {
                let k = self.lr_milestones.iter().filter(|&&m| m <= step).count();
                self.lr * self.lr_gamma.powi(k as i32)
            }
            LrSchedule::Cosine => {
                let total = self.lr_cosine_steps.max(1);
                let t = (after.min(total)) as f64 / total as f64;
                let cos = 0.5 * (1.0 + (std::f64::consts::PI * t).cos());
                self.lr_floor + (self.lr - self.lr_floor) * cos
            }
        };
        if step < warm {
            scheduled * (step + 1) as f64 / warm as f64
        } else {
            scheduled
        }
    }

    /// The window size `N` after `seen` positions (see the type docs).
    pub fn window_size(&self, seen: u64) -> u64 {
        let min = self.window_min;
        let max = self.window_max.max(min);
        let grown = min as f64 + self.window_growth * seen.saturating_sub(min) as f64;
        // `grown` is finite and at least `min`: the cast saturates at u64::MAX.
        (grown.floor() as u64).clamp(min, max)
    }

    /// A hash of the fields that shape the optimizer state and the sampling (written in
    /// `trainer.json` to tell runs apart); FNV-1a over the config's JSON.
    pub fn hash(&self) -> u64 {
        // Serialising plain data with string keys cannot fail.
        let json = serde_json::to_vec(self).expect("TrainConfig serialises");
        crate::checkpoint::fnv1a64(&json)
    }
}
