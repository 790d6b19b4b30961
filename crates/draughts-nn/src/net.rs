//! The networks, both kinds behind one [`Net`] (the kind is [`NetConfig::kind`]).
//!
//! **ResNet**: a residual tower of 3x3 convolutions with a policy head (2500 logits), a
//! win/draw/loss head and an optional moves-left head.
//!
//! ```text
//! input [B, 8, 10, 10]
//!   conv3x3(8 -> C) + BN + ReLU                              "input"
//!   blocks x { conv3x3 + BN + ReLU + conv3x3 + BN, + skip, ReLU }   "block{i}"
//!   policy:     conv1x1(C -> P) + BN + ReLU, flatten, linear(100 P -> 2500)     "policy"
//!   value:      conv1x1(C -> 2) + BN + ReLU, flatten, linear(200 -> H) + ReLU   "value"
//!                 -> linear(H -> 3)  win/draw/loss logits, side to move's view
//!                 -> linear(H -> 1)  moves left (optional head)                 "moves_left"
//! ```
//!
//! **Sparse**: the network `draughts-nnue` evaluates natively (its module `network` draws the
//! layout). Here it reads the same `[B, 800]` encoding: the four piece planes on the 50 dark
//! squares are exactly the piece-square features of the side to move (a fixed gather), the other
//! side's features are the same values permuted ([`draughts_nnue::features::mirror_feature`]),
//! and the first layer is a dense `Linear(200 -> A)` applied to both (a sum of rows, which the
//! native code updates incrementally). Counter and repetition planes are not inputs of this kind.
//!
//! The variable names (`input.conv.weight`, `block0.bn1.running_mean`, `ft.weight`, ...) are
//! the keys of the safetensors checkpoints: renaming a layer breaks every saved checkpoint.
//!
//! Batch norm behaves differently in training (batch statistics, running averages updated) and
//! in inference (running averages): [`Net::forward_t`] takes the mode, [`Net::forward`] is
//! inference. The masked softmax over legal moves is done outside the net
//! ([`crate::policy::masked_softmax`], [`masked_log_softmax`]).

use tch::nn;
use tch::{Device, Kind, Tensor};

use draughts_core::Square;
use draughts_model::arch::MAX_PIECES;
use draughts_nnue::features::{mirror_feature, BLOCKS, BLOCK_LAYOUT, CONFIGS, FEATURES, PATTERN_FEATURES, SQUARES};

use crate::encoding::{square_cell, BOARD_SIDE, INPUT_SIZE, PLANES, PLANE_SIZE};
use crate::policy::POLICY_SIZE;

/// Channels of the value head's 1x1 convolution.
const VALUE_CHANNELS: i64 = 2;

pub use draughts_model::{ArchError, NetConfig, NetKind};

/// What can go wrong building or running a [`Net`].
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// A [`NetConfig`] field out of range.
    #[error(transparent)]
    InvalidConfig(#[from] ArchError),
    /// The requested device is not there (no CUDA, or no such CUDA device).
    #[error("device {0:?} is not available (cuda available: {cuda}, devices: {count})", cuda = tch::Cuda::is_available(), count = tch::Cuda::device_count())]
    DeviceUnavailable(Device),
    /// An input tensor that is not `[B, 800]` or `[B, 8, 10, 10]` floats.
    #[error("network input has shape {shape:?} and kind {kind:?}, expected [B, {INPUT_SIZE}] or [B, {PLANES}, 10, 10] floats")]
    InputShape {
        /// The shape given.
        shape: Vec<i64>,
        /// The element kind given.
        kind: Kind,
    },
    /// libtorch reported an error.
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
}

/// Checks that `device` can be used, without touching it when it cannot (tch panics on an
/// unavailable CUDA device).
pub fn check_device(device: Device) -> Result<(), NetError> {
    match device {
        Device::Cpu => Ok(()),
        Device::Cuda(i) if tch::Cuda::is_available() && (i as i64) < tch::Cuda::device_count() => {
            Ok(())
        }
        other => Err(NetError::DeviceUnavailable(other)),
    }
}

/// The three outputs of a forward pass.
#[derive(Debug)]
pub struct NetOutput {
    /// Policy logits `[B, 2500]`, indexed by [`crate::policy::move_index`]; not masked.
    pub policy: Tensor,
    /// Win/draw/loss logits `[B, 3]`, from the side to move's point of view.
    pub wdl: Tensor,
    /// Moves left `[B, 1]` (unconstrained regression output; the trainer picks the scale), when
    /// the net has that head.
    pub moves_left: Option<Tensor>,
}

#[derive(Debug)]
struct ConvBn {
    conv: nn::Conv2D,
    bn: nn::BatchNorm,
}

impl ConvBn {
    fn new(p: nn::Path<'_>, c_in: i64, c_out: i64, kernel: i64, bn_gamma: f64) -> ConvBn {
        let cfg = nn::ConvConfig {
            padding: kernel / 2,
            bias: false,
            ..Default::default()
        };
        let bn_cfg = nn::BatchNormConfig {
            ws_init: nn::Init::Const(bn_gamma),
            ..Default::default()
        };
        ConvBn {
            conv: nn::conv2d(&p / "conv", c_in, c_out, kernel, cfg),
            bn: nn::batch_norm2d(&p / "bn", c_out, bn_cfg),
        }
    }

    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        xs.apply(&self.conv).apply_t(&self.bn, train)
    }
}

#[derive(Debug)]
struct ResBlock {
    conv1: nn::Conv2D,
    bn1: nn::BatchNorm,
    conv2: nn::Conv2D,
    bn2: nn::BatchNorm,
}

impl ResBlock {
    fn new(p: nn::Path<'_>, c: i64) -> ResBlock {
        let cfg = nn::ConvConfig {
            padding: 1,
            bias: false,
            ..Default::default()
        };
        let one = nn::BatchNormConfig {
            ws_init: nn::Init::Const(1.0),
            ..Default::default()
        };
        // The second batch norm starts at zero scale, so every block starts as the identity
        // (Goyal et al. 2017): a deep tower trains from the start like a shallow one.
        let zero = nn::BatchNormConfig {
            ws_init: nn::Init::Const(0.0),
            ..Default::default()
        };
        ResBlock {
            conv1: nn::conv2d(&p / "conv1", c, c, 3, cfg),
            bn1: nn::batch_norm2d(&p / "bn1", c, one),
            conv2: nn::conv2d(&p / "conv2", c, c, 3, cfg),
            bn2: nn::batch_norm2d(&p / "bn2", c, zero),
        }
    }

    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        let ys = xs.apply(&self.conv1).apply_t(&self.bn1, train).relu();
        let ys = ys.apply(&self.conv2).apply_t(&self.bn2, train);
        (ys + xs).relu()
    }
}

/// The network and the variables it owns.
///
/// `Net` is `Send` but not `Sync` (libtorch tensors): one thread owns it, see
/// [`crate::inference`].
#[derive(Debug)]
pub struct Net {
    vs: nn::VarStore,
    config: NetConfig,
    body: Body,
}

#[derive(Debug)]
enum Body {
    Resnet(Box<Resnet>),
    Sparse(Sparse),
}

#[derive(Debug)]
struct Resnet {
    input: ConvBn,
    blocks: Vec<ResBlock>,
    policy_conv: ConvBn,
    policy_fc: nn::Linear,
    value_conv: ConvBn,
    value_fc1: nn::Linear,
    value_fc2: nn::Linear,
    moves_left_fc: Option<nn::Linear>,
}

#[derive(Debug)]
struct Sparse {
    /// Indices into the `[B, 800]` encoding of the side to move's 200 features, and of the
    /// other side's (on the CPU; moved to the input's device when used).
    gather_us: Tensor,
    gather_them: Tensor,
    ft: nn::Linear,
    /// Block patterns (`NetConfig::patterns`): the table `pt.weight` `[104976, P]` (one row per
    /// block and configuration, zeros at first; `P` = `NetConfig::pattern_outputs`, the first
    /// `P` of the `A` accumulator outputs), the `[50, 16]` matrix that turns a point of
    /// view's square states (0 empty, 1 own, 2 opponent) into each block's configuration, and
    /// each block's first row (`b * 6561`).
    patterns: Option<(Tensor, Tensor, Tensor)>,
    hidden: Vec<nn::Linear>,
    wdl: nn::Linear,
    moves_left: Option<nn::Linear>,
    policy: nn::Linear,
    /// Half the accumulator when the first dense layer reads pairwise products, else 0.
    pairwise_half: i64,
    /// Phase buckets: each dense layer and head holds this many stacks' outputs one after the
    /// other (`[buckets * outputs, inputs]`), and a position takes its bucket's.
    buckets: i64,
}

impl Net {
    /// A freshly initialised net on `device`. The initial weights come from libtorch's global
    /// generator, which this seeds with `seed` (`tch::manual_seed`): build nets from one thread
    /// when the weights must be reproducible.
    pub fn new(config: &NetConfig, device: Device, seed: u64) -> Result<Net, NetError> {
        config.validate()?;
        check_device(device)?;
        tch::manual_seed(seed as i64);
        Net::build(config, device)
    }

    /// A net whose initial weights come from libtorch's generator as it stands (not reseeded):
    /// for nets whose weights are loaded right after, so loading leaves the generator alone.
    pub(crate) fn unseeded(config: &NetConfig, device: Device) -> Result<Net, NetError> {
        config.validate()?;
        check_device(device)?;
        Net::build(config, device)
    }

    fn build(config: &NetConfig, device: Device) -> Result<Net, NetError> {
        let vs = nn::VarStore::new(device);
        let root = vs.root();
        let body = match config.kind {
            NetKind::Resnet => Body::Resnet(Box::new(Resnet::new(&root, config))),
            NetKind::Sparse => Body::Sparse(Sparse::new(&root, config)?),
        };
        Ok(Net { vs, config: config.clone(), body })
    }

    /// The architecture.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// The device the variables live on.
    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// Moves every variable to `device`.
    pub fn set_device(&mut self, device: Device) -> Result<(), NetError> {
        check_device(device)?;
        self.vs.set_device(device);
        Ok(())
    }

    /// The variables (for an optimizer, or to save them).
    pub fn var_store(&self) -> &nn::VarStore {
        &self.vs
    }

    /// The variables, mutably (to load weights into them).
    pub fn var_store_mut(&mut self) -> &mut nn::VarStore {
        &mut self.vs
    }

    /// Number of trainable parameters.
    pub fn parameter_count(&self) -> usize {
        self.vs
            .trainable_variables()
            .iter()
            .map(|t| t.numel())
            .sum()
    }

    /// Forward pass in inference mode (batch norm uses its running averages). Call it under
    /// `tch::no_grad` unless you want a graph.
    pub fn forward(&self, xs: &Tensor) -> Result<NetOutput, NetError> {
        self.forward_t(xs, false)
    }

    /// Forward pass; `train` selects batch statistics (and updates the running averages) in the
    /// batch norms. `xs` is `[B, 800]` or `[B, 8, 10, 10]` floats on the net's device, encoded by
    /// [`crate::encoding`].
    pub fn forward_t(&self, xs: &Tensor, train: bool) -> Result<NetOutput, NetError> {
        let shape = xs.size();
        let kind = xs.kind();
        let side = BOARD_SIDE as i64;
        let ok_shape = match shape.as_slice() {
            [_, n] => *n == INPUT_SIZE as i64,
            [_, p, h, w] => *p == PLANES as i64 && *h == side && *w == side,
            _ => false,
        };
        if !ok_shape || kind != Kind::Float {
            return Err(NetError::InputShape { shape, kind });
        }
        match &self.body {
            Body::Resnet(r) => r.forward_t(xs, train),
            Body::Sparse(sp) => sp.forward(xs),
        }
    }

    /// Keeps a sparse net's weights inside what its quantised form (`draughts_nnue`,
    /// `Precision::Int8`) holds well: first-layer weights and biases within
    /// ±[`FT_WEIGHT_LIMIT`] and pattern weights within ±[`PATTERN_WEIGHT_LIMIT`] (so no 16-bit
    /// accumulator entry can overflow: 50 squares x 4 + 16 blocks x 2 + 4 < 32767 / 127),
    /// hidden-layer weights within ±[`HIDDEN_WEIGHT_LIMIT`]
    /// (each output's 8-bit scale is then at least Stockfish's 64). The trainer calls it after
    /// every step; a ResNet is left alone.
    pub fn clamp_to_quantisable(&mut self) -> Result<(), NetError> {
        let Body::Sparse(sp) = &mut self.body else {
            return Ok(());
        };
        tch::no_grad(|| -> Result<(), NetError> {
            let _ = sp.ft.ws.f_clamp_(-FT_WEIGHT_LIMIT, FT_WEIGHT_LIMIT)?;
            if let Some((table, _, _)) = &mut sp.patterns {
                let _ = table.f_clamp_(-PATTERN_WEIGHT_LIMIT, PATTERN_WEIGHT_LIMIT)?;
            }
            if let Some(b) = &mut sp.ft.bs {
                let _ = b.f_clamp_(-FT_WEIGHT_LIMIT, FT_WEIGHT_LIMIT)?;
            }
            for layer in &mut sp.hidden {
                let _ = layer.ws.f_clamp_(-HIDDEN_WEIGHT_LIMIT, HIDDEN_WEIGHT_LIMIT)?;
            }
            Ok(())
        })
    }
}

impl Net {
    /// Whether [`Net::widened`] can turn a net of `from` into one of `to`: both sparse, the same
    /// hidden layers and heads, `to` at least as wide an accumulator, and the same phase buckets
    /// or buckets added to a net without them. `None` when it can, or why not.
    pub fn widening_refused(from: &NetConfig, to: &NetConfig) -> Option<String> {
        if from.kind != NetKind::Sparse || to.kind != NetKind::Sparse {
            return Some("only a sparse network can be widened".into());
        }
        if from.hidden != to.hidden || from.moves_left_head != to.moves_left_head {
            return Some("only the accumulator can grow: the hidden layers and heads must be the same".into());
        }
        if (from.pairwise || to.pairwise) && (from.pairwise != to.pairwise || from.accumulator != to.accumulator) {
            // A copied output would pair with another output than its original's partner.
            return Some("a network with pairwise products cannot be widened".into());
        }
        if to.accumulator < from.accumulator {
            return Some(format!("the accumulator cannot shrink ({} to {})", from.accumulator, to.accumulator));
        }
        if from.patterns && !to.patterns {
            return Some("block patterns cannot be removed from a network".into());
        }
        if from.patterns && (from.pattern_outputs() < from.accumulator || to.pattern_outputs() < to.accumulator) {
            // Copies of outputs the patterns feed would need pattern columns a narrow table lacks:
            // a net whose patterns feed only some outputs grows by copies of the others.
            let grows_beside = from.pattern_outputs() < from.accumulator && from.pattern_outputs() == to.pattern_outputs();
            if !grows_beside && (from.accumulator != to.accumulator || from.pattern_outputs() != to.pattern_outputs()) {
                return Some(format!(
                    "a network with block patterns cannot change their width or, when they feed only some outputs, its accumulator ({} of {} to {} of {})",
                    from.pattern_outputs(),
                    from.accumulator,
                    to.pattern_outputs(),
                    to.accumulator
                ));
            }
        }
        if from.buckets != to.buckets && from.buckets != 1 {
            return Some(format!(
                "phase buckets can only be added to a network without them ({} to {})",
                from.buckets, to.buckets
            ));
        }
        None
    }

    /// This sparse net with its accumulator widened to `to.accumulator` and its phase buckets
    /// made `to.buckets`, computing the same function. Widening (Net2WiderNet, Chen et al. 2016):
    /// each new first-layer output is a copy of an old one (chosen in turn), and every layer that
    /// reads the accumulator (the first dense layer and the policy head) splits each old output's
    /// weights between it and its copies in seeded random shares that sum to one. The copies see
    /// the same inputs, so the outputs are unchanged; the unequal shares give them unequal
    /// gradients, so training pulls them apart. Buckets: every bucket starts as a copy of the
    /// one stack of dense layers and heads (training then tells the phases apart). Block
    /// patterns added to a net without them start at zero. Gives the variables to a new net on
    /// the same device; `self` is unchanged.
    pub fn widened(&self, to: &NetConfig, seed: u64) -> Result<Net, String> {
        if let Some(why) = Net::widening_refused(&self.config, to) {
            return Err(why);
        }
        let (a, wide) = (self.config.accumulator, to.accumulator);
        let copies = (to.buckets / self.config.buckets) as i64;
        // The old output each new one copies (in turn; when patterns feed only the first
        // outputs, one of the others, so the patterns' table keeps its columns), and each one's
        // share of its original's weights.
        let first = if self.config.patterns && self.config.pattern_outputs() < a { self.config.pattern_outputs() } else { 0 };
        let source: Vec<i64> = (0..wide).map(|i| if i < a { i } else { first + (i - a) % (a - first) } as i64).collect();
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
        let mut raw: Vec<f64> = (0..wide).map(|_| rand::Rng::gen_range(&mut rng, 0.5..1.5)).collect();
        let mut totals = vec![0.0f64; a];
        for (r, &j) in raw.iter().zip(&source) {
            totals[j as usize] += r;
        }
        for (r, &j) in raw.iter_mut().zip(&source) {
            *r /= totals[j as usize];
        }
        let share: Vec<f32> = raw.iter().map(|&x| x as f32).collect();
        let fail = |e: tch::TchError| e.to_string();
        let net = Net::unseeded(to, self.device()).map_err(|e| e.to_string())?;
        let old = self.vs.variables();
        let device = self.device();
        tch::no_grad(|| -> Result<(), String> {
            let rows = Tensor::f_from_slice(&source).map_err(fail)?.f_to_device(device).map_err(fail)?;
            // Columns of a layer that reads [us (wide), them (wide)]: the old [us (a), them (a)].
            let cols: Vec<i64> = source.iter().copied().chain(source.iter().map(|&j| a as i64 + j)).collect();
            let cols = Tensor::f_from_slice(&cols).map_err(fail)?.f_to_device(device).map_err(fail)?;
            let shares: Vec<f32> = share.iter().chain(share.iter()).copied().collect();
            let shares = Tensor::f_from_slice(&shares).map_err(fail)?.f_to_device(device).map_err(fail)?.f_unsqueeze(0).map_err(fail)?;
            let wider = |src: &Tensor| -> Result<Tensor, String> {
                if wide == a {
                    return Ok(src.shallow_clone());
                }
                src.f_index_select(1, &cols).map_err(fail)?.f_mul(&shares).map_err(fail)
            };
            // A dense layer's or head's rows, once per bucket.
            let tiled = |src: Tensor| -> Result<Tensor, String> {
                let times: Vec<i64> = std::iter::once(copies).chain(std::iter::repeat_n(1, src.dim() - 1)).collect();
                src.f_repeat(&times).map_err(fail)
            };
            for (name, mut var) in net.vs.variables() {
                let Some(src) = old.get(&name) else {
                    if name == "pt.weight" {
                        // Patterns added: their table stays zero, adding nothing.
                        continue;
                    }
                    return Err(format!("the narrow net has no variable {name}"));
                };
                let value = match name.as_str() {
                    "ft.weight" | "ft.bias" => src.f_index_select(0, &rows).map_err(fail)?,
                    // One row per pattern feature, one column per accumulator output they feed
                    // (the first ones, which copy themselves when the patterns are narrow).
                    "pt.weight" => src.f_index_select(1, &rows.f_narrow(0, 0, to.pattern_outputs() as i64).map_err(fail)?).map_err(fail)?,
                    "policy.weight" => wider(src)?,
                    "policy.bias" => src.shallow_clone(),
                    "l0.weight" => tiled(wider(src)?)?,
                    _ => tiled(src.shallow_clone())?,
                };
                if value.size() != var.size() {
                    return Err(format!("{name}: widened to {:?}, the wide net has {:?}", value.size(), var.size()));
                }
                var.f_copy_(&value).map_err(fail)?;
            }
            Ok(())
        })?;
        Ok(net)
    }
}

/// Largest first-layer weight or bias of a sparse net in training (see
/// [`Net::clamp_to_quantisable`]).
pub const FT_WEIGHT_LIMIT: f64 = 4.0;
/// Largest block-pattern weight of a sparse net in training (see [`Net::clamp_to_quantisable`]).
pub const PATTERN_WEIGHT_LIMIT: f64 = 2.0;
/// Largest hidden-layer weight of a sparse net in training: 127 / 64.
pub const HIDDEN_WEIGHT_LIMIT: f64 = 127.0 / 64.0;

impl Resnet {
    fn new(root: &nn::Path<'_>, config: &NetConfig) -> Resnet {
        let c = config.channels as i64;
        let pc = config.policy_channels as i64;
        let hidden = config.value_hidden as i64;
        let cells = PLANE_SIZE as i64;
        let input = ConvBn::new(root / "input", PLANES as i64, c, 3, 1.0);
        let blocks = (0..config.blocks).map(|i| ResBlock::new(root / format!("block{i}"), c)).collect();
        let policy_conv = ConvBn::new(root / "policy", c, pc, 1, 1.0);
        let policy_fc = nn::linear(root / "policy" / "fc", pc * cells, POLICY_SIZE as i64, Default::default());
        let value_conv = ConvBn::new(root / "value", c, VALUE_CHANNELS, 1, 1.0);
        let value_fc1 = nn::linear(root / "value" / "fc1", VALUE_CHANNELS * cells, hidden, Default::default());
        let value_fc2 = nn::linear(root / "value" / "fc2", hidden, 3, Default::default());
        let moves_left_fc =
            config.moves_left_head.then(|| nn::linear(root / "moves_left" / "fc", hidden, 1, Default::default()));
        Resnet { input, blocks, policy_conv, policy_fc, value_conv, value_fc1, value_fc2, moves_left_fc }
    }

    fn forward_t(&self, xs: &Tensor, train: bool) -> Result<NetOutput, NetError> {
        let side = BOARD_SIDE as i64;
        // -1, not the batch size read here: a traced forward (TorchScript) keeps any batch.
        let xs = xs.f_reshape([-1, PLANES as i64, side, side])?;
        let mut trunk = self.input.forward_t(&xs, train).relu();
        for block in &self.blocks {
            trunk = block.forward_t(&trunk, train);
        }
        let policy = self.policy_conv.forward_t(&trunk, train).relu().flatten(1, -1).apply(&self.policy_fc);
        let hidden =
            self.value_conv.forward_t(&trunk, train).relu().flatten(1, -1).apply(&self.value_fc1).relu();
        let wdl = hidden.apply(&self.value_fc2);
        let moves_left = self.moves_left_fc.as_ref().map(|fc| hidden.apply(fc));
        Ok(NetOutput { policy, wdl, moves_left })
    }
}

/// The input index (into one encoded position) of each of the side to move's features.
pub fn sparse_feature_indices() -> [i64; FEATURES] {
    let mut out = [0i64; FEATURES];
    for (f, slot) in out.iter_mut().enumerate() {
        let (kind, index) = (f / SQUARES, f % SQUARES);
        // Invariant: index < 50, so the square exists.
        let sq = Square::new(index as u8 + 1).expect("a square 1..=50");
        *slot = (kind * PLANE_SIZE + square_cell(sq)) as i64;
    }
    out
}

impl Sparse {
    fn new(root: &nn::Path<'_>, config: &NetConfig) -> Result<Sparse, NetError> {
        let a = config.accumulator as i64;
        let us = sparse_feature_indices();
        let them: Vec<i64> = (0..FEATURES).map(|f| us[mirror_feature(f)]).collect();
        let linear = |name: &str, i: i64, o: i64| nn::linear(root / name, i, o, Default::default());
        let ft = linear("ft", FEATURES as i64, a);
        let patterns = if config.patterns {
            let table = (root / "pt").zeros("weight", &[PATTERN_FEATURES as i64, config.pattern_outputs() as i64]);
            // powers[sq, b] = 3^i when square sq is block b's i-th square.
            let mut powers = vec![0.0f32; SQUARES * BLOCKS];
            for (b, squares) in BLOCK_LAYOUT.iter().enumerate() {
                for (i, &sq) in squares.iter().enumerate() {
                    powers[sq as usize * BLOCKS + b] = 3f32.powi(i as i32);
                }
            }
            let offsets: Vec<i64> = (0..BLOCKS).map(|b| (b * CONFIGS) as i64).collect();
            Some((table, Tensor::f_from_slice(&powers)?.f_view([SQUARES as i64, BLOCKS as i64])?, Tensor::f_from_slice(&offsets)?))
        } else {
            None
        };
        let mut hidden = Vec::new();
        let mut inputs = config.first_dense_inputs() as i64;
        let k = config.buckets as i64;
        for (i, &h) in config.hidden.iter().enumerate() {
            hidden.push(linear(&format!("l{i}"), inputs, k * h as i64));
            inputs = h as i64;
        }
        Ok(Sparse {
            gather_us: Tensor::f_from_slice(&us)?,
            gather_them: Tensor::f_from_slice(&them)?,
            ft,
            patterns,
            hidden,
            wdl: linear("wdl", inputs, k * 3),
            moves_left: config.moves_left_head.then(|| linear("moves_left", inputs, k)),
            policy: linear("policy", 2 * a, POLICY_SIZE as i64),
            pairwise_half: if config.pairwise { a / 2 } else { 0 },
            buckets: k,
        })
    }

    /// The accumulator of one point of view from its 200 piece-square features `[B, 200]`: the
    /// first layer, plus each block's pattern row with patterns.
    fn first_layer(&self, view: &Tensor) -> Result<Tensor, NetError> {
        let acc = view.apply(&self.ft);
        let Some((table, powers, offsets)) = &self.patterns else {
            return Ok(acc);
        };
        // Square states: own man or king 1, opponent's 2 (kinds 0-1 and 2-3 of the features).
        let kinds = view.f_view([-1, 4, SQUARES as i64])?;
        let own = kinds.f_slice(1, Some(0), Some(2), 1)?.f_sum_dim_intlist(1, false, Kind::Float)?;
        let opp = kinds.f_slice(1, Some(2), Some(4), 1)?.f_sum_dim_intlist(1, false, Kind::Float)?;
        let states = own.f_add(&opp.f_mul_scalar(2.0)?)?;
        // Each block's configuration (exact in f32: at most 6560), then its row of the table.
        // The clamp keeps an input that is no position (two pieces on a square: the random
        // example TorchScript is traced with) inside the table.
        let configs =
            states.f_mm(&powers.f_to_device(view.device())?)?.f_round()?.f_clamp(0.0, (CONFIGS - 1) as f64)?.f_to_kind(Kind::Int64)?;
        let rows = configs.f_add(&offsets.f_to_device(view.device())?)?.f_view([-1])?;
        let p = table.size()[1];
        let picked = table.f_index_select(0, &rows)?.f_view([-1, BLOCKS as i64, p])?;
        let mut sum = picked.f_sum_dim_intlist(1, false, Kind::Float)?;
        let a = acc.size()[1];
        if p < a {
            // Narrow patterns feed the first `p` outputs: zeros for the others.
            sum = sum.f_constant_pad_nd([0, a - p])?;
        }
        Ok(acc.f_add(&sum)?)
    }

    fn forward(&self, xs: &Tensor) -> Result<NetOutput, NetError> {
        let xs = xs.f_reshape([-1, INPUT_SIZE as i64])?;
        let device = xs.device();
        let us = xs.f_index_select(1, &self.gather_us.f_to_device(device)?)?;
        let them = xs.f_index_select(1, &self.gather_them.f_to_device(device)?)?;
        let h0 = Tensor::f_cat(&[self.first_layer(&us)?, self.first_layer(&them)?], 1)?.f_clamp(0.0, 1.0)?;
        let mut h = if self.pairwise_half > 0 {
            // Each point of view's first half times its second half: [us.lo us.hi them.lo them.hi]
            // -> [us.lo * us.hi, them.lo * them.hi].
            let half = self.pairwise_half;
            let quarters = h0.f_reshape([-1, 4, half])?;
            let lo = quarters.f_slice(1, Some(0), Some(4), 2)?;
            let hi = quarters.f_slice(1, Some(1), Some(4), 2)?;
            lo.f_mul(&hi)?.f_reshape([-1, 2 * half])?
        } else {
            h0.shallow_clone()
        };
        // Each position's phase bucket, from its number of pieces (every piece is one active
        // feature of a point of view): `NetConfig::bucket_of`.
        let bucket = if self.buckets > 1 {
            let pieces = us.f_sum_dim_intlist(1, false, Kind::Float)?.f_round()?.f_to_kind(Kind::Int64)?;
            let b = pieces.f_sub_scalar(1)?.f_clamp_min(0)?.f_mul_scalar(self.buckets)?;
            Some(b.f_floor_divide_scalar(MAX_PIECES as i64)?.f_clamp_max(self.buckets - 1)?)
        } else {
            None
        };
        // A layer's outputs for each position's bucket.
        let pick = |out: Tensor| -> Result<Tensor, NetError> {
            let Some(bucket) = &bucket else {
                return Ok(out);
            };
            let per = out.size()[1] / self.buckets;
            let index = bucket.f_view([-1, 1, 1])?.f_expand([-1, 1, per], false)?;
            Ok(out.f_view([-1, self.buckets, per])?.f_gather(1, &index, false)?.f_squeeze_dim(1)?)
        };
        for layer in &self.hidden {
            h = pick(h.apply(layer))?.f_clamp(0.0, 1.0)?;
        }
        Ok(NetOutput {
            policy: h0.apply(&self.policy),
            wdl: pick(h.apply(&self.wdl))?,
            moves_left: self.moves_left.as_ref().map(|m| pick(h.apply(m))).transpose()?,
        })
    }
}

/// Log-softmax of policy logits `[B, 2500]` over the legal moves given by `mask` (`[B, 2500]`
/// bool, true on the legal indices): `-inf` off the mask, and each row's exponentials sum to 1
/// over the mask. For the training loss; a row whose mask is empty comes out all NaN.
pub fn masked_log_softmax(logits: &Tensor, mask: &Tensor) -> Result<Tensor, NetError> {
    let masked = logits.f_masked_fill(&mask.f_logical_not()?, f64::NEG_INFINITY)?;
    Ok(masked.f_log_softmax(-1, Kind::Float)?)
}
