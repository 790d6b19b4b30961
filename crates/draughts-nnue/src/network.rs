//! The sparse network: its layers, loading from a checkpoint, and evaluation.
//!
//! # Architecture (kind `sparse`)
//!
//! ```text
//! features(white) [200]  features(black) [200]        piece-square, see crate::features
//!        |                      |                       (+ 104,976 block patterns, "pt")
//!      ft: Linear(200 -> A), shared          "ft"          accumulator, one per point of view
//!        |                      |
//!   h0 = clamp([acc(side to move), acc(other side)], 0, 1)     2A values
//!        |                                 \
//!   (pairwise: [us[..A/2] * us[A/2..], them[..A/2] * them[A/2..]], A values)
//!        |                                   \
//!   l0: Linear(2A or A -> H0), clamp(0, 1)   policy: Linear(2A -> 2500)   "policy"
//!   l1: Linear(H0 -> H1), clamp(0, 1)        (only the legal moves' rows are computed)
//!   ...                                     "l0", "l1", ...
//!   wdl: Linear(H_last -> 3)                "wdl"          win/draw/loss logits, side to move
//!   moves_left: Linear(H_last -> 1)         "moves_left"   (optional head)
//! ```
//!
//! Names in quotes are the safetensors keys (`NAME.weight` `[out, in]`, `NAME.bias` `[out]`,
//! PyTorch's layout), the same the trainer in `draughts-nn` gives its variables. A network with
//! block patterns (`NetConfig::patterns`) has one more tensor, `pt.weight` `[104976, P]`: one row
//! per pattern feature (an embedding table, no bias), added to the accumulator's first `P`
//! outputs like `ft`'s columns (`P` = `NetConfig::pattern_outputs`: `A`, or the narrower
//! `pattern_width`, whose rows take fewer bytes to read). Natively the accumulator keeps the
//! piece squares' part and the blocks' configurations; an evaluation adds the 16 rows of each
//! point of view (see [`Network::update`]).
//!
//! # Numbers
//! The accumulator is kept in fixed point (`i32`, first-layer weights times [`crate::Q`] =
//! 2^16, rounded), so an accumulator updated move by move is bit-identical to one computed from
//! scratch, whatever the path. Everything after it is `f32`. Against the `f32` libtorch forward
//! the difference is the rounding of the first-layer weights (at most 2^-17 each) plus float
//! rounding; the tests bound it on real positions.
//!
//! That is [`Precision::Float`], the reference. Every network is also quantised at load
//! ([`Precision::Int8`]: 16-bit accumulator, byte activations, 8-bit dense weights; see
//! `crate::quant` for the scheme): an accumulator made with [`Network::new_accumulator_with`]
//! in that precision is refreshed, updated and evaluated with the integer kernels. The
//! alpha-beta engine uses it; MCTS and the comparisons with libtorch use the float network.

use std::path::{Path, PathBuf};

use draughts_core::{Color, Move, Position};
use draughts_model::{read_meta, read_tensors, read_weights, resolve_model, sidecar_of, CheckpointMeta, MetaError, NetConfig, NetKind, ResolveError};

use crate::accumulator::{Accumulator, Precision};
use crate::features::{block_configs, for_each_active, pattern_rows, FeatureSet, PieceDeltas, BLOCKS, FEATURES, MAX_ACTIVE, PATTERN_FEATURES};
use crate::kernels::{Aligned, Kernels, Simd, Q};
use crate::policy::{move_index, softmax_moves, POLICY_SIZE};
use crate::quant::{FloatLayers, FloatStack, Quantised};

/// Why a network could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The sidecar or the weights file is missing, damaged or not of this program.
    #[error(transparent)]
    Meta(#[from] MetaError),
    /// The path names no checkpoint.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// The checkpoint is a network of another kind.
    #[error("{}: a {kind} network; only sparse networks run natively (a ResNet needs libtorch)", .path.display())]
    NotSparse {
        /// The sidecar.
        path: PathBuf,
        /// Its kind.
        kind: &'static str,
    },
    /// First-layer weights so large that the fixed-point accumulator could overflow.
    #[error("{}: first-layer output {output} can reach {bound:.0} in magnitude; the fixed-point accumulator holds at most 30000", .path.display())]
    TooLarge {
        /// The weights file.
        path: PathBuf,
        /// The accumulator entry.
        output: usize,
        /// Its largest possible magnitude.
        bound: f64,
    },
}

/// One dense layer. With a multiple of 8 outputs the weights are stored input-major
/// (`w[j * outputs + k]`: input `j`, output `k`) for the blocked affine kernel; a narrow layer
/// (the win/draw/loss and moves-left heads) keeps PyTorch's output-major layout and is one dot
/// product per output.
#[derive(Clone, Debug, PartialEq)]
struct Dense {
    inputs: usize,
    outputs: usize,
    w: Aligned<f32>,
    b: Aligned<f32>,
}

/// One phase bucket's dense layers and heads (a network without buckets has one).
#[derive(Clone, Debug, PartialEq)]
struct Stack {
    hidden: Vec<Dense>,
    wdl: Dense,
    moves_left: Option<Dense>,
}

/// What one evaluation gives.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Output {
    /// Win/draw/loss logits from the side to move's point of view.
    pub wdl_logits: [f32; 3],
    /// The moves-left head's output, when the net has one.
    pub moves_left: Option<f32>,
}

impl Output {
    /// Win, draw and loss probabilities (softmax of the logits).
    pub fn wdl(&self) -> [f32; 3] {
        let z = self.wdl_logits;
        let m = z[0].max(z[1]).max(z[2]);
        let e = [(z[0] - m).exp(), (z[1] - m).exp(), (z[2] - m).exp()];
        let s = e[0] + e[1] + e[2];
        [e[0] / s, e[1] / s, e[2] / s]
    }

    /// `win - loss`, in [-1, 1].
    pub fn value(&self) -> f32 {
        let w = self.wdl();
        w[0] - w[2]
    }
}

/// Buffers an evaluation works in (so that evaluating allocates nothing). One per thread.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    h0: Aligned<f32>,
    /// The pairwise products (a network with `pairwise`).
    p: Aligned<f32>,
    p8: Aligned<u8>,
    a: Aligned<f32>,
    b: Aligned<f32>,
    /// The quantised network's clipped accumulator and layer outputs.
    h8: Aligned<u8>,
    a8: Aligned<u8>,
    b8: Aligned<u8>,
    /// The precision of the last evaluation (`h0` or `h8` holds its first layer).
    last: Precision,
    /// One point of view's first `pattern_width` values with the blocks' rows added.
    pat: Aligned<i32>,
    pat16: Aligned<i16>,
    indices: Vec<u16>,
    acc: Option<Accumulator>,
}

/// A loaded sparse network, ready to evaluate. Immutable: share it between threads (`Arc`).
#[derive(Clone, Debug)]
pub struct Network {
    model_id: String,
    checksum: String,
    arch: NetConfig,
    /// The inputs it reads.
    features: FeatureSet,
    /// Accumulator width for one point of view.
    width: usize,
    /// First layer in fixed point, feature-major: row `f` (a piece-square feature) is
    /// `ft_w[f * width..][..width]`.
    ft_w: Aligned<i32>,
    /// How many accumulator outputs (the first ones) the block patterns feed (0 without them).
    pattern_width: usize,
    /// The block patterns in fixed point: row `f - FEATURES` of `pattern_width` values for
    /// pattern feature `f`.
    pt_w: Aligned<i32>,
    ft_b: Aligned<i32>,
    /// The dense layers and heads of each phase bucket (`NetConfig::bucket_of`).
    stacks: Vec<Stack>,
    /// Policy weights as stored (`[2500, 2A]`, one row per logit) and biases.
    policy_w: Aligned<f32>,
    policy_b: Vec<f32>,
    /// The quantised layers, or why the network could not be quantised.
    quant: Result<Quantised, String>,
    kernels: Kernels,
}

impl PartialEq for Network {
    /// Two networks are equal when they come from the same weights file (model id and checksum).
    fn eq(&self, other: &Network) -> bool {
        self.model_id == other.model_id && self.checksum == other.checksum
    }
}

impl Eq for Network {}

/// The tensors of a sparse architecture, with their shapes (PyTorch layout), in file order. With
/// phase buckets each dense layer and head holds every bucket's outputs, bucket 0's first.
pub fn tensor_shapes(arch: &NetConfig) -> Vec<(String, Vec<usize>)> {
    let (a, k) = (arch.accumulator, arch.buckets);
    let mut v = vec![("ft.weight".to_owned(), vec![a, FEATURES]), ("ft.bias".to_owned(), vec![a])];
    if arch.patterns {
        v.push(("pt.weight".to_owned(), vec![PATTERN_FEATURES, arch.pattern_outputs()]));
    }
    let mut inputs = arch.first_dense_inputs();
    for (i, &h) in arch.hidden.iter().enumerate() {
        v.push((format!("l{i}.weight"), vec![k * h, inputs]));
        v.push((format!("l{i}.bias"), vec![k * h]));
        inputs = h;
    }
    v.push(("wdl.weight".to_owned(), vec![k * 3, inputs]));
    v.push(("wdl.bias".to_owned(), vec![k * 3]));
    if arch.moves_left_head {
        v.push(("moves_left.weight".to_owned(), vec![k, inputs]));
        v.push(("moves_left.bias".to_owned(), vec![k]));
    }
    v.push(("policy.weight".to_owned(), vec![POLICY_SIZE, 2 * a]));
    v.push(("policy.bias".to_owned(), vec![POLICY_SIZE]));
    v
}

impl Network {
    /// Loads a checkpoint. `path` is its sidecar (`ID.json`) or weights (`ID.safetensors`), or
    /// a model or run directory (its newest checkpoint; see [`draughts_model::resolve_model`]).
    /// Checks the sidecar, the weights' size and checksum, every tensor's name, shape, type and
    /// values. Uses the fastest kernels the CPU has.
    pub fn load(path: &Path) -> Result<Network, LoadError> {
        Network::load_with_warnings(path, &mut |_| {})
    }

    /// [`Network::load`], handing the warnings about skipped sidecars in a directory to `warn`.
    pub fn load_with_warnings(path: &Path, warn: &mut dyn FnMut(String)) -> Result<Network, LoadError> {
        let sidecar = sidecar_of(&resolve_model(path, warn)?);
        let meta = read_meta(&sidecar)?;
        if meta.architecture.kind != NetKind::Sparse {
            return Err(LoadError::NotSparse { path: sidecar, kind: meta.architecture.kind.name() });
        }
        let (weights, bytes) = read_weights(&sidecar, &meta)?;
        Network::from_safetensors(&meta, &bytes, &weights)
    }

    /// Builds the network of `meta` from the bytes of its weights file (`path` names it in
    /// errors).
    pub fn from_safetensors(meta: &CheckpointMeta, bytes: &[u8], path: &Path) -> Result<Network, LoadError> {
        let arch = &meta.architecture;
        let mut tensors = read_tensors(bytes, path, &tensor_shapes(arch))?;
        let mut take = |name: &str| tensors.remove(name).unwrap_or_default();
        let a = arch.accumulator;

        // First layer: [A, 200] (and the patterns' [104976, P], zeros past output P) -> one
        // [A, features] matrix in PyTorch's layout, then feature-major fixed point (the piece
        // squares, and the patterns apart: P values a row), with an overflow bound.
        let features = FeatureSet { patterns: arch.patterns };
        let n = features.len();
        let w = {
            let piece_squares = take("ft.weight");
            if arch.patterns {
                let patterns = take("pt.weight");
                let mut all = vec![0.0f32; a * n];
                for k in 0..a {
                    all[k * n..k * n + FEATURES].copy_from_slice(&piece_squares[k * FEATURES..(k + 1) * FEATURES]);
                }
                for (j, row) in patterns.chunks_exact(arch.pattern_outputs()).enumerate() {
                    for (k, &x) in row.iter().enumerate() {
                        all[k * n + FEATURES + j] = x;
                    }
                }
                all
            } else {
                piece_squares
            }
        };
        let b = take("ft.bias");
        let groups = features.exclusive_groups();
        for k in 0..a {
            // At most one feature of each group is on (one piece a square, one configuration a block).
            let mut bound = b[k].abs() as f64;
            for group in &groups {
                bound += group.iter().map(|&j| w[k * n + j].abs() as f64).fold(0.0, f64::max);
            }
            if bound > 30_000.0 {
                return Err(LoadError::TooLarge { path: path.to_path_buf(), output: k, bound });
            }
        }
        let fixed = |x: f32| (x as f64 * Q as f64).round() as i32;
        let mut ft_w = Aligned::zeros(FEATURES * a);
        for k in 0..a {
            for f in 0..FEATURES {
                ft_w[f * a + k] = fixed(w[k * n + f]);
            }
        }
        let p = arch.pattern_outputs();
        let mut pt_w = Aligned::zeros(if arch.patterns { PATTERN_FEATURES * p } else { 0 });
        for k in 0..p {
            for j in 0..PATTERN_FEATURES {
                pt_w[j * p + k] = fixed(w[k * n + FEATURES + j]);
            }
        }
        let ft_b = Aligned::from_slice(&b.iter().map(|&x| fixed(x)).collect::<Vec<i32>>());

        // Bucket `bucket`'s rows of a layer in PyTorch's layout (all buckets' in the file).
        let full: Vec<(Vec<f32>, Vec<f32>)> = (0..arch.hidden.len())
            .map(|i| format!("l{i}"))
            .chain(["wdl".to_owned()])
            .chain(arch.moves_left_head.then(|| "moves_left".to_owned()))
            .map(|name| (take(&format!("{name}.weight")), take(&format!("{name}.bias"))))
            .collect();
        let rows_of = |layer: usize, bucket: usize, inputs: usize, outputs: usize| {
            let (w, b) = &full[layer];
            (&w[bucket * outputs * inputs..(bucket + 1) * outputs * inputs], &b[bucket * outputs..(bucket + 1) * outputs])
        };
        let dense = |(w, b): (&[f32], &[f32]), inputs: usize, outputs: usize| {
            let mut t = w.to_vec();
            if outputs % 8 == 0 {
                for k in 0..outputs {
                    for j in 0..inputs {
                        t[j * outputs + k] = w[k * inputs + j];
                    }
                }
            }
            Dense { inputs, outputs, w: Aligned::from_slice(&t), b: Aligned::from_slice(b) }
        };
        let depth = arch.hidden.len();
        let mut stacks = Vec::new();
        let mut float_stacks = Vec::new();
        for bucket in 0..arch.buckets {
            let mut hidden = Vec::new();
            let mut float = FloatStack { hidden: Vec::new(), wdl: (&[], &[]), moves_left: None };
            let mut inputs = arch.first_dense_inputs();
            for (i, &h) in arch.hidden.iter().enumerate() {
                let rows = rows_of(i, bucket, inputs, h);
                hidden.push(dense(rows, inputs, h));
                float.hidden.push((rows.0, rows.1, h));
                inputs = h;
            }
            float.wdl = rows_of(depth, bucket, inputs, 3);
            float.moves_left = arch.moves_left_head.then(|| rows_of(depth + 1, bucket, inputs, 1));
            let wdl = dense(float.wdl, inputs, 3);
            let moves_left = float.moves_left.map(|rows| dense(rows, inputs, 1));
            stacks.push(Stack { hidden, wdl, moves_left });
            float_stacks.push(float);
        }
        // The quantised layers, from the float tensors in PyTorch's layout.
        let (policy_w, policy_b) = (take("policy.weight"), take("policy.bias"));
        let layers = FloatLayers {
            width: a,
            features,
            pattern_width: p,
            pairwise: arch.pairwise,
            ft_w: &w,
            ft_b: &b,
            stacks: float_stacks,
            policy: (&policy_w, &policy_b),
        };
        let quant = Quantised::new(&layers);
        Ok(Network {
            model_id: meta.model_id.clone(),
            checksum: meta.weights.fnv1a64.clone(),
            arch: arch.clone(),
            features,
            width: a,
            ft_w,
            pattern_width: p,
            pt_w,
            ft_b,
            stacks,
            policy_w: Aligned::from_slice(&policy_w),
            policy_b,
            quant,
            kernels: Kernels::detect(Simd::Auto),
        })
    }

    /// The same network with other kernels (the scalar reference, for tests and benchmarks).
    pub fn with_simd(mut self, simd: Simd) -> Network {
        self.kernels = Kernels::detect(simd);
        self
    }

    /// The kernels in use: `avx2+fma` or `scalar`.
    pub fn kernels(&self) -> &'static str {
        self.kernels.name
    }

    /// The checkpoint's model id.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The architecture.
    pub fn architecture(&self) -> &NetConfig {
        &self.arch
    }

    /// Parameters (weights and biases of every layer).
    pub fn parameter_count(&self) -> usize {
        let dense = |d: &Dense| d.w.len() + d.b.len();
        self.ft_w.len()
            + self.pt_w.len()
            + self.ft_b.len()
            + self
                .stacks
                .iter()
                .map(|s| s.hidden.iter().map(dense).sum::<usize>() + dense(&s.wdl) + s.moves_left.as_ref().map_or(0, dense))
                .sum::<usize>()
            + self.policy_w.len()
            + self.policy_b.len()
    }

    /// A [`Precision::Float`] accumulator of the right size (zeros: call [`Network::refresh`]
    /// before use).
    pub fn new_accumulator(&self) -> Accumulator {
        Accumulator::zeros(self.width, Precision::Float)
    }

    /// An accumulator in `precision`, or in [`Precision::Float`] when the network could not be
    /// quantised ([`Network::quantisation`] says why). Refreshing, updating and evaluating it
    /// use its precision.
    pub fn new_accumulator_with(&self, precision: Precision) -> Accumulator {
        Accumulator::zeros(self.width, self.supported(precision))
    }

    /// `precision`, or [`Precision::Float`] when the network cannot run in it.
    pub fn supported(&self, precision: Precision) -> Precision {
        match precision {
            Precision::Int8 if self.quant.is_ok() => Precision::Int8,
            _ => Precision::Float,
        }
    }

    /// `Ok` when the network runs quantised ([`Precision::Int8`]), or why it cannot (its first
    /// layer's outputs could overflow a 16-bit accumulator).
    pub fn quantisation(&self) -> Result<(), &str> {
        self.quant.as_ref().map(|_| ()).map_err(String::as_str)
    }

    /// The quantised layers of an `Int8` accumulator (which only [`Network::new_accumulator_with`]
    /// makes, and only when they exist).
    fn quantised(&self) -> &Quantised {
        self.quant.as_ref().expect("int8 accumulators exist only for quantised networks")
    }

    /// Computes `acc` for `pos` from scratch, in the accumulator's precision: the piece squares'
    /// rows, and the blocks' configurations (whose rows are added at evaluation, see
    /// [`Network::update`]).
    pub fn refresh(&self, pos: &Position, acc: &mut Accumulator) {
        let a = self.width;
        let precision = self.supported(acc.precision());
        acc.resize(a, precision);
        acc.set_pieces(pos.occupied().count() as usize);
        acc.set_configs(if self.features.patterns { block_configs(pos) } else { [0; BLOCKS] });
        let mut active = [0u32; MAX_ACTIVE];
        for (p, color) in [Color::White, Color::Black].into_iter().enumerate() {
            let mut n = 0;
            for_each_active(pos, color, |f| {
                if n < MAX_ACTIVE {
                    active[n] = f as u32;
                    n += 1;
                }
            });
            let squares = &active[..n];
            match precision {
                Precision::Float => {
                    let half = &mut acc.values_mut()[p * a..(p + 1) * a];
                    (self.kernels.update)(half, &self.ft_b, &self.ft_w, squares, &[]);
                }
                Precision::Int8 => {
                    let q = self.quantised();
                    let half = &mut acc.narrow_values_mut()[p * a..(p + 1) * a];
                    (self.kernels.update16)(half, &q.ft_b, &q.ft_w, squares, &[]);
                }
            }
        }
    }

    /// Sets `child` to the accumulator of `before.play(mv)`, given `parent`, the accumulator of
    /// `before` (`child` takes its precision): one pass over each half, adding and subtracting
    /// the few piece-square rows the move changes. With block patterns the accumulator holds
    /// the piece squares' part and the blocks' configurations, which the move's digits turn into
    /// the child's; the blocks' rows are added when the accumulator is evaluated (16 rows a point
    /// of view, from the configurations), not move by move: in a search an evaluation follows
    /// about 2.6 updates (the nodes between it and the nearest up-to-date ancestor), each of which
    /// changed about 12 rows a point of view.
    pub fn update(&self, parent: &Accumulator, before: &Position, mv: &Move, child: &mut Accumulator) {
        let a = self.width;
        let precision = parent.precision();
        child.resize(a, precision);
        // Black's features are White's mirrored.
        let mut deltas = PieceDeltas::default();
        let mut configs = *parent.configs();
        self.features.move_deltas_from(&mut configs, before, mv, &mut deltas);
        child.set_configs(configs);
        child.set_pieces(parent.pieces() - deltas.captured());
        for p in 0..2 {
            let (added, removed) = deltas.pov(p);
            match precision {
                Precision::Float => {
                    let src = &parent.values()[p * a..(p + 1) * a];
                    let dst = &mut child.values_mut()[p * a..(p + 1) * a];
                    (self.kernels.update)(dst, src, &self.ft_w, added, removed);
                }
                Precision::Int8 => {
                    let q = self.quantised();
                    let src = &parent.narrow_values()[p * a..(p + 1) * a];
                    let dst = &mut child.narrow_values_mut()[p * a..(p + 1) * a];
                    (self.kernels.update16)(dst, src, &q.ft_w, added, removed);
                }
            }
        }
    }

    /// Turns the accumulator of `before` into that of `before.play(mv)`.
    pub fn update_in_place(&self, acc: &mut Accumulator, before: &Position, mv: &Move) {
        let parent = acc.clone();
        self.update(&parent, before, mv, acc);
    }

    /// Fills `scratch.h0`, the clipped accumulator with `side`'s point of view first.
    fn first_layer(&self, acc: &Accumulator, side: Color, scratch: &mut Scratch) {
        let a = self.width;
        scratch.h0.resize(2 * a);
        let v = acc.values();
        let (us, them) = match side {
            Color::White => (&v[..a], &v[a..2 * a]),
            Color::Black => (&v[a..2 * a], &v[..a]),
        };
        let (h_us, h_them) = scratch.h0.split_at_mut(a);
        let w = self.pattern_width;
        if w == 0 {
            (self.kernels.crelu)(us, h_us);
            (self.kernels.crelu)(them, h_them);
            return;
        }
        // The blocks' rows on the first `w` values (see `Network::update`).
        scratch.pat.resize(w);
        for (values, h, pov) in [(us, h_us, side), (them, h_them, !side)] {
            let rows = pattern_rows(acc.configs(), pov);
            (self.kernels.update)(&mut scratch.pat, &values[..w], &self.pt_w, &rows, &[]);
            (self.kernels.crelu)(&scratch.pat, &mut h[..w]);
            (self.kernels.crelu)(&values[w..], &mut h[w..]);
        }
    }

    /// The first dense layer's input: `h0` (filled by [`Network::first_layer`]) itself, or, with
    /// pairwise products, those products written to `p`.
    fn dense_input<'s>(&self, h0: &'s [f32], p: &'s mut Aligned<f32>) -> &'s [f32] {
        if !self.arch.pairwise {
            return h0;
        }
        let (a, half) = (self.width, self.width / 2);
        p.resize(a);
        for (view, out) in p.chunks_exact_mut(half).enumerate() {
            // Each output of the view's first half times its partner in the second half.
            let (lo, hi) = h0[view * a..(view + 1) * a].split_at(half);
            for ((o, &x), &y) in out.iter_mut().zip(lo).zip(hi) {
                *o = x * y;
            }
        }
        p
    }

    /// How many of the first dense layer's inputs are 0 and how many 1 (clipped) for this
    /// accumulator: the layer skips the zeros. For benchmarks and diagnostics.
    pub fn activity(&self, acc: &Accumulator, side: Color, scratch: &mut Scratch) -> (usize, usize, usize) {
        self.first_layer(acc, side, scratch);
        let Scratch { h0, p, .. } = scratch;
        let h = self.dense_input(h0, p);
        (h.iter().filter(|&&x| x == 0.0).count(), h.iter().filter(|&&x| x == 1.0).count(), h.len())
    }

    /// Which of the first dense layer's inputs are non-zero (diagnostics).
    pub fn nonzero_inputs(&self, acc: &Accumulator, side: Color, scratch: &mut Scratch) -> Vec<bool> {
        self.first_layer(acc, side, scratch);
        let Scratch { h0, p, .. } = scratch;
        self.dense_input(h0, p).iter().map(|&x| x != 0.0).collect()
    }

    /// Evaluates the position whose accumulator is `acc`, `side` to move, in the accumulator's
    /// precision.
    pub fn evaluate(&self, acc: &Accumulator, side: Color, scratch: &mut Scratch) -> Output {
        if acc.precision() == Precision::Int8 {
            return self.evaluate_int8(acc, side, scratch);
        }
        scratch.last = Precision::Float;
        self.first_layer(acc, side, scratch);
        let Scratch { h0, p, a, b, .. } = scratch;
        let mut input = self.dense_input(h0, p);
        let stack = &self.stacks[self.arch.bucket_of(acc.pieces())];
        for layer in &stack.hidden {
            a.resize(layer.outputs);
            self.apply(layer, input, a, true);
            std::mem::swap(a, b);
            input = &b[..];
        }
        let mut z = [0.0f32; 3];
        self.apply(&stack.wdl, input, &mut z, false);
        let moves_left = stack.moves_left.as_ref().map(|m| {
            let mut o = [0.0f32; 1];
            self.apply(m, input, &mut o, false);
            o[0]
        });
        Output { wdl_logits: z, moves_left }
    }

    /// [`Network::evaluate`] of an `Int8` accumulator.
    fn evaluate_int8(&self, acc: &Accumulator, side: Color, scratch: &mut Scratch) -> Output {
        let q = self.quantised();
        let (a, pw) = (self.width, q.padded_width);
        let v = acc.narrow_values();
        let (us, them) = match side {
            Color::White => (&v[..a], &v[a..2 * a]),
            Color::Black => (&v[a..2 * a], &v[..a]),
        };
        let Scratch { h8, p8, a8, b8, last, pat16, .. } = scratch;
        *last = Precision::Int8;
        if h8.len() != 2 * pw {
            // Fresh zeros: the padding between the two halves stays 0.
            *h8 = Aligned::zeros(2 * pw);
        }
        let w = self.pattern_width;
        if w == 0 {
            (self.kernels.crelu8)(us, &mut h8[..a], q.shift);
            (self.kernels.crelu8)(them, &mut h8[pw..pw + a], q.shift);
        } else {
            // The blocks' rows on the first `w` values (see `Network::update`).
            pat16.resize(w);
            for (values, at, pov) in [(us, 0, side), (them, pw, !side)] {
                let rows = pattern_rows(acc.configs(), pov);
                (self.kernels.update16)(pat16, &values[..w], &q.pt_w, &rows, &[]);
                (self.kernels.crelu8)(pat16, &mut h8[at..at + w], q.shift);
                (self.kernels.crelu8)(&values[w..], &mut h8[at + w..at + a], q.shift);
            }
        }
        let mut input: &[u8] = &h8[..];
        if self.arch.pairwise {
            let half = a / 2;
            p8.resize(a);
            let (p_us, p_them) = p8.split_at_mut(half);
            pairwise8(&h8[..a], p_us);
            pairwise8(&h8[pw..pw + a], p_them);
            input = &p8[..];
        }
        let stack = &q.stacks[self.arch.bucket_of(acc.pieces())];
        for layer in &stack.hidden {
            a8.resize(layer.outputs);
            (self.kernels.dense8)(input, &layer.w, &layer.b, &layer.scale, a8);
            std::mem::swap(a8, b8);
            input = &b8[..];
        }
        let mut z = [0.0f32; 3];
        stack.wdl.apply(self.kernels.dot8, input, &mut z);
        let moves_left = stack.moves_left.as_ref().map(|m| {
            let mut o = [0.0f32; 1];
            m.apply(self.kernels.dot8, input, &mut o);
            o[0]
        });
        Output { wdl_logits: z, moves_left }
    }

    /// `out = clip?(b + W x)` for one layer, in the layout the layer is stored in.
    #[inline]
    fn apply(&self, layer: &Dense, x: &[f32], out: &mut [f32], clip: bool) {
        if layer.outputs % 8 == 0 {
            (self.kernels.affine)(x, &layer.w, &layer.b, out, clip);
        } else {
            for (k, o) in out.iter_mut().enumerate() {
                let v = layer.b[k] + (self.kernels.dot)(&layer.w[k * layer.inputs..(k + 1) * layer.inputs], x);
                *o = if clip { v.clamp(0.0, 1.0) } else { v };
            }
        }
    }

    /// The policy over `moves` (legal moves of `side` in the position last evaluated with this
    /// `scratch`), written to `out` in the same order and summing to 1. Only the logits of these
    /// moves are computed: one dot product of length 2A each, in the precision of that
    /// evaluation (quantised: the clipped accumulator's bytes against 8-bit rows).
    pub fn policy(&self, side: Color, moves: &[Move], scratch: &mut Scratch, out: &mut Vec<f32>) {
        let width = 2 * self.width;
        let Scratch { h0, h8, indices, last, .. } = scratch;
        indices.clear();
        indices.extend(moves.iter().map(|m| move_index(side, m) as u16));
        if *last == Precision::Int8 {
            let q = self.quantised();
            let logit = |k: usize| Some(q.policy.logit(self.kernels.dot8i8, h8, indices[k] as usize));
            softmax_moves(logit, indices, out);
            return;
        }
        let logit = |k: usize| {
            let i = indices[k] as usize;
            Some(self.policy_b[i] + (self.kernels.dot)(&self.policy_w[i * width..(i + 1) * width], h0))
        };
        softmax_moves(logit, indices, out);
    }

    /// Evaluates `pos` from scratch: the output and the policy over `moves` (its legal moves)
    /// in `policy`.
    pub fn evaluate_position(&self, pos: &Position, moves: &[Move], scratch: &mut Scratch, policy: &mut Vec<f32>) -> Output {
        self.evaluate_position_with(Precision::Float, pos, moves, scratch, policy)
    }

    /// [`Network::evaluate_position`] in `precision` (when the network supports it).
    pub fn evaluate_position_with(
        &self,
        precision: Precision,
        pos: &Position,
        moves: &[Move],
        scratch: &mut Scratch,
        policy: &mut Vec<f32>,
    ) -> Output {
        let mut acc = scratch.acc.take().unwrap_or_else(|| self.new_accumulator_with(precision));
        acc.resize(self.width, self.supported(precision));
        self.refresh(pos, &mut acc);
        let out = self.evaluate(&acc, pos.side_to_move(), scratch);
        scratch.acc = Some(acc);
        self.policy(pos.side_to_move(), moves, scratch, policy);
        out
    }
}

/// The pairwise products of one point of view's bytes (`x`, its clipped accumulator of width
/// `2 out.len()` in 0..=127 for 0..=1): `out[j] = x[j] x[j + half] >> 7`, a byte in 0..=126 that
/// stands for `out[j] / 127 x 128 / 127` (the first dense layer's weights carry the 128 / 127;
/// see `crate::quant`). Plain integer code that the compiler vectorises, the same integers on
/// every CPU.
#[inline]
fn pairwise8(x: &[u8], out: &mut [u8]) {
    let (lo, hi) = x.split_at(out.len());
    for ((o, &a), &b) in out.iter_mut().zip(lo).zip(hi) {
        *o = ((a as u16 * b as u16) >> 7) as u8;
    }
}
