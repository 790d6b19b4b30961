//! The quantised network ([`crate::Precision::Int8`]), built from the float weights at load.
//!
//! # Quantisation
//! - First layer: weights and biases times `127 << shift` in `i16`, so the accumulator is 16 bits.
//!   `shift` (0 to 6) is the largest for which no accumulator entry can overflow, from the same
//!   bound as the float check (each square holds at most one piece); a network whose entries
//!   could pass 32767 even at `shift` 0 is not quantised (the float network still runs).
//! - Activations: the clipped accumulator `clamp(acc, 0, 127 << shift) >> shift` (rounded) is a
//!   byte in 0..=127 that stands for `byte / 127`. With pairwise products, the first dense layer
//!   reads `x y >> 7` of each pair of such bytes, which stands for `x y / 127^2` times 127 / 128:
//!   that layer's float weights are multiplied by 128 / 127 before they are quantised.
//! - Dense layers: each output `k` has its own scale `s_k = min(127 / max_j |w_kj|, 1024)`;
//!   weights are `round(w s_k)` in `i8`, the bias `round(b 127 s_k)` in `i32`, the sum of byte
//!   times weight in `i32`, and the output byte is `clamp(round(sum / s_k), 0, 127)`. A scale per
//!   output (instead of Stockfish's one scale of 64 per layer) keeps the precision of rows whose
//!   weights are small, and takes any trained weights without retraining.
//! - Heads (win/draw/loss, moves left): `i16` weights with a scale per output, the sum in `i32`,
//!   the logit `sum / (127 s_k)` in `f32`.
//!
//! The kernels have an AVX2 and a scalar version that give the same integers (tested), so the
//! quantised network's output does not depend on the CPU.

use draughts_core::{Color, Position};

use crate::features::FeatureSet;
use crate::kernels::Aligned;

/// Largest scale of a dense output (a row of tiny weights gains nothing past it).
const MAX_ROW_SCALE: f32 = 1024.0;

/// One quantised dense layer with its clipped ReLU. Inputs are a multiple of 4 and outputs of 8
/// (padding has zero weights and scale 0, so padded outputs are 0).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Dense8 {
    pub outputs: usize,
    /// Blocks of four inputs: `w[((j / 4) * outputs + k) * 4 + j % 4]`.
    pub w: Aligned<i8>,
    pub b: Aligned<i32>,
    pub scale: Aligned<f32>,
}

/// One quantised head: `i16` rows, a scale per output.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Head {
    inputs: usize,
    w: Vec<i16>,
    b: Vec<i32>,
    /// `1 / (127 s_k)`.
    unscale: Vec<f32>,
}

impl Head {
    /// The head's outputs (logits) for the bytes `x` (its padded inputs).
    #[inline]
    pub fn apply(&self, dot8: fn(&[u8], &[i16]) -> i32, x: &[u8], out: &mut [f32]) {
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.output(dot8, x, k);
        }
    }

    /// Output `k` alone (the policy computes only the logits of the legal moves).
    #[inline]
    pub fn output(&self, dot8: fn(&[u8], &[i16]) -> i32, x: &[u8], k: usize) -> f32 {
        let sum = dot8(&x[..self.inputs], &self.w[k * self.inputs..(k + 1) * self.inputs]);
        (self.b[k] + sum) as f32 * self.unscale[k]
    }

    /// Quantises the float head `(w, b)` (PyTorch layout, `[outputs, input_of.len()]`) whose
    /// input `j` is byte `input_of[j]` of `inputs`.
    fn new((w, b): (&[f32], &[f32]), input_of: &[usize], inputs: usize, name: &str) -> Result<Head, String> {
        let real_inputs = input_of.len();
        let outputs = b.len();
        let mut qw = vec![0i16; outputs * inputs];
        let mut qb = Vec::new();
        let mut unscale = Vec::new();
        // The sum (at most inputs x 127 x top) stays below 2^30 in magnitude.
        let top = (i16::MAX as f32).min(i16::MAX as f32 * 256.0 / inputs as f32);
        for k in 0..outputs {
            let row = &w[k * real_inputs..(k + 1) * real_inputs];
            let s = row_scale(row, top);
            for (j, &x) in row.iter().enumerate() {
                qw[k * inputs + input_of[j]] = (x * s).round().clamp(-top, top) as i16;
            }
            qb.push(bias(b[k], 127.0 * s, name, k)?);
            unscale.push(1.0 / (127.0 * s));
        }
        Ok(Head { inputs, w: qw, b: qb, unscale })
    }
}

/// The quantised policy: a row of 8-bit weights per logit (a scale per row), read only for the
/// legal moves. Bytes, not the heads' 16 bits: a row is 256 bytes (4 cache lines) and the table
/// of 2,500 rows fits a core's L2 cache, where 16-bit rows did not and waited on memory.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Policy8 {
    inputs: usize,
    w: Aligned<i8>,
    b: Vec<i32>,
    /// `1 / (127 s_k)`.
    unscale: Vec<f32>,
}

impl Policy8 {
    /// Quantises the float policy `(w, b)` (`[logits, input_of.len()]`) whose input `j` is byte
    /// `input_of[j]` of `inputs`.
    fn new((w, b): (&[f32], &[f32]), input_of: &[usize], inputs: usize) -> Result<Policy8, String> {
        let real_inputs = input_of.len();
        let mut qw = Aligned::zeros(b.len() * inputs);
        let mut qb = Vec::with_capacity(b.len());
        let mut unscale = Vec::with_capacity(b.len());
        for (k, &bk) in b.iter().enumerate() {
            let row = &w[k * real_inputs..(k + 1) * real_inputs];
            let s = row_scale(row, 127.0);
            for (j, &x) in row.iter().enumerate() {
                qw[k * inputs + input_of[j]] = (x * s).round().clamp(-127.0, 127.0) as i8;
            }
            qb.push(bias(bk, 127.0 * s, "policy", k)?);
            unscale.push(1.0 / (127.0 * s));
        }
        Ok(Policy8 { inputs, w: qw, b: qb, unscale })
    }

    /// Logit `k` for the bytes `x` (the clipped accumulator, padded).
    #[inline]
    pub fn logit(&self, dot8i8: fn(&[u8], &[i8]) -> i32, x: &[u8], k: usize) -> f32 {
        let sum = dot8i8(&x[..self.inputs], &self.w[k * self.inputs..(k + 1) * self.inputs]);
        (self.b[k] + sum) as f32 * self.unscale[k]
    }
}

/// The quantised layers of a network.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Quantised {
    /// The accumulator's scale is `127 << shift`.
    pub shift: u32,
    /// Accumulator width rounded up to a multiple of 4: each point of view's bytes start at a
    /// multiple of it.
    pub padded_width: usize,
    /// Where each first-layer output (the float network's order) sits in the quantised
    /// accumulator: outputs that are often zero come first (see [`zero_first_order`]).
    pub position_of: Vec<usize>,
    /// Feature-major, as the float table: the piece squares' rows (`width` values each).
    pub ft_w: Aligned<i16>,
    /// The block patterns' rows (`pattern_width` values each, the first outputs: the order
    /// keeps the outputs the patterns feed first).
    pub pt_w: Aligned<i16>,
    pub ft_b: Aligned<i16>,
    /// The dense layers and heads of each phase bucket.
    pub stacks: Vec<Stack8>,
    /// The policy: [`crate::policy::POLICY_SIZE`] rows over the clipped accumulator's bytes
    /// (ours at 0.., theirs at `padded_width`.., as the first dense layer without pairwise
    /// products reads them), one row read per legal move.
    pub policy: Policy8,
}

/// One phase bucket's quantised dense layers and heads.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Stack8 {
    pub hidden: Vec<Dense8>,
    pub wdl: Head,
    pub moves_left: Option<Head>,
}

/// The float layers a [`Quantised`] is built from (PyTorch layout: `[out, in]` row-major).
pub(crate) struct FloatLayers<'a> {
    pub width: usize,
    /// The inputs: `ft_w` has `features.len()` columns.
    pub features: FeatureSet,
    /// How many outputs (the first ones) the block patterns feed; their columns are zero past it.
    pub pattern_width: usize,
    /// The first dense layer reads pairwise products (see `NetConfig::pairwise`).
    pub pairwise: bool,
    pub ft_w: &'a [f32],
    pub ft_b: &'a [f32],
    /// Each phase bucket's dense layers and heads.
    pub stacks: Vec<FloatStack<'a>>,
    /// The policy's weights (`[POLICY_SIZE, 2 width]`) and biases.
    pub policy: (&'a [f32], &'a [f32]),
}

/// One phase bucket's float layers.
pub(crate) struct FloatStack<'a> {
    /// `(weights, biases, outputs)` of each hidden layer.
    pub hidden: Vec<(&'a [f32], &'a [f32], usize)>,
    pub wdl: (&'a [f32], &'a [f32]),
    pub moves_left: Option<(&'a [f32], &'a [f32])>,
}

fn round_up(n: usize, m: usize) -> usize {
    n.div_ceil(m) * m
}

impl Quantised {
    /// Quantises `f`, or says why it cannot be.
    pub fn new(f: &FloatLayers) -> Result<Quantised, String> {
        let (a, n) = (f.width, f.features.len());
        // Each output's largest weight magnitude in each group of features of which at most
        // one is on (rounding keeps the order, so its rounded value is the largest rounded one).
        let groups = f.features.exclusive_groups();
        let largest: Vec<Vec<f32>> =
            (0..a).map(|k| groups.iter().map(|g| g.iter().map(|&j| f.ft_w[k * n + j].abs()).fold(0.0, f32::max)).collect()).collect();
        // The largest first-layer output magnitude at each shift, on the rounded integers.
        let ft_at = |shift: u32| {
            let scale = (127i64 << shift) as f64;
            let q = |x: f32| (x as f64 * scale).round() as i64;
            let mut worst = (0usize, 0i64);
            for k in 0..a {
                let mut bound = q(f.ft_b[k]).abs();
                for &x in &largest[k] {
                    bound += q(x);
                }
                if bound > worst.1 {
                    worst = (k, bound);
                }
            }
            worst
        };
        let Some(shift) = (0..=6u32).rev().find(|&s| ft_at(s).1 <= i16::MAX as i64) else {
            let (k, bound) = ft_at(0);
            return Err(format!(
                "first-layer output {k} can reach {:.1} in magnitude; the 16-bit accumulator holds at most {:.1}",
                bound as f64 / 127.0,
                i16::MAX as f64 / 127.0
            ));
        };
        let scale = (127i32 << shift) as f32;
        let q16 = |x: f32| (x * scale).round() as i16;
        let order = zero_first_order(f);
        let mut position_of = vec![0; a];
        for (p, &k) in order.iter().enumerate() {
            position_of[k] = p;
        }
        let (pieces, pw) = (crate::features::FEATURES, f.pattern_width);
        let mut ft_w = Aligned::zeros(pieces * a);
        let mut pt_w = Aligned::zeros((n - pieces) * pw);
        let mut ft_b = Aligned::zeros(a);
        for k in 0..a {
            for j in 0..pieces {
                ft_w[j * a + position_of[k]] = q16(f.ft_w[k * n + j]);
            }
            if k < pw {
                debug_assert!(position_of[k] < pw);
                for j in pieces..n {
                    pt_w[(j - pieces) * pw + position_of[k]] = q16(f.ft_w[k * n + j]);
                }
            }
            ft_b[position_of[k]] = q16(f.ft_b[k]);
        }

        // Inputs of the first dense layer: our bytes at 0..a, theirs at padded_width.., each
        // half in the accumulator's order; with pairwise products, our products at 0..a / 2 and
        // theirs at a / 2..a, in the order of their pairs' first outputs.
        let padded_width = round_up(a, 4);
        let half = a / 2;
        let (first_input_of, first_inputs, first_gain): (Vec<usize>, usize, f32) = if f.pairwise {
            let ours = position_of[..half].iter().copied();
            (ours.clone().chain(ours.map(|p| half + p)).collect(), a, 128.0 / 127.0)
        } else {
            (position_of.iter().copied().chain(position_of.iter().map(|&p| padded_width + p)).collect(), 2 * padded_width, 1.0)
        };
        let mut stacks = Vec::new();
        for stack in &f.stacks {
            let (mut input_of, mut inputs) = (first_input_of.clone(), first_inputs);
            let mut hidden = Vec::new();
            for (i, &(w, b, outputs)) in stack.hidden.iter().enumerate() {
                let real_inputs = input_of.len();
                let padded = round_up(outputs, 8);
                let mut qw = Aligned::zeros(inputs * padded);
                let mut qb = Aligned::zeros(padded);
                let mut qs = Aligned::zeros(padded);
                let gain = if i == 0 { first_gain } else { 1.0 };
                for k in 0..outputs {
                    let row: Vec<f32> = w[k * real_inputs..(k + 1) * real_inputs].iter().map(|&x| x * gain).collect();
                    let s = row_scale(&row, 127.0);
                    for (j, &x) in row.iter().enumerate() {
                        let jj = input_of[j];
                        qw[((jj / 4) * padded + k) * 4 + jj % 4] = (x * s).round().clamp(-127.0, 127.0) as i8;
                    }
                    qb[k] = bias(b[k], 127.0 * s, &format!("l{i}"), k)?;
                    qs[k] = 1.0 / s;
                }
                hidden.push(Dense8 { outputs: padded, w: qw, b: qb, scale: qs });
                input_of = (0..outputs).collect();
                inputs = padded;
            }
            let wdl = Head::new(stack.wdl, &input_of, inputs, "wdl")?;
            let moves_left = stack.moves_left.map(|m| Head::new(m, &input_of, inputs, "moves_left")).transpose()?;
            stacks.push(Stack8 { hidden, wdl, moves_left });
        }
        // The policy reads the clipped accumulator itself, with or without pairwise products.
        let bytes_of: Vec<usize> = position_of.iter().copied().chain(position_of.iter().map(|&p| padded_width + p)).collect();
        let policy = Policy8::new(f.policy, &bytes_of, 2 * padded_width)?;
        Ok(Quantised { shift, padded_width, position_of, ft_w, pt_w, ft_b, stacks, policy })
    }
}

/// The first-layer outputs ordered from the most often zero (after the clipped ReLU) to the
/// least, measured on positions of seeded random games (the same every time, so the order and
/// the engine stay deterministic). The first dense layer skips blocks of four inputs that are
/// all zero; grouping the outputs that are often zero makes more such blocks (on the shipped
/// network, about 45 non-zero blocks of 64 instead of 53). Integer sums do not depend on the
/// order: the network's outputs are the same bit for bit. With pairwise products the pairs are
/// ordered (by how often their product is zero) and each output of the second half stays half
/// the width after its partner. Outputs that narrow block patterns feed (the first
/// `pattern_width`) are ordered among themselves, so they stay the first.
fn zero_first_order(f: &FloatLayers) -> Vec<usize> {
    let a = f.width;
    let half = a / 2;
    let mut zeros = vec![0u32; a];
    let mut state = 0x5EED_u64;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let mut acc = vec![0.0f32; a];
    for _ in 0..12 {
        let mut pos = Position::start();
        for ply in 0..100 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos = pos.play(&moves[next() % moves.len()]);
            if ply % 2 == 1 {
                continue;
            }
            for color in [Color::White, Color::Black] {
                acc.copy_from_slice(&f.ft_b[..a]);
                f.features.for_each_active(&pos, color, |j| {
                    for (k, v) in acc.iter_mut().enumerate() {
                        *v += f.ft_w[k * f.features.len() + j];
                    }
                });
                if f.pairwise {
                    for (k, z) in zeros[..half].iter_mut().enumerate() {
                        *z += (acc[k] <= 0.0 || acc[k + half] <= 0.0) as u32;
                    }
                } else {
                    for (z, &v) in zeros.iter_mut().zip(&acc) {
                        *z += (v <= 0.0) as u32;
                    }
                }
            }
        }
    }
    let ordered = if f.pairwise { half } else { a };
    let mut order: Vec<usize> = (0..ordered).collect();
    // Stable: ties keep the float network's order.
    let split = if f.pattern_width > 0 { f.pattern_width.min(ordered) } else { 0 };
    let (patterned, rest) = order.split_at_mut(split);
    patterned.sort_by_key(|&k| std::cmp::Reverse(zeros[k]));
    rest.sort_by_key(|&k| std::cmp::Reverse(zeros[k]));
    if f.pairwise {
        let partners: Vec<usize> = order.iter().map(|&k| k + half).collect();
        order.extend(partners);
    }
    order
}

/// The scale that maps the row's largest weight onto `top` (at most [`MAX_ROW_SCALE`] times
/// `top / 127`).
fn row_scale(row: &[f32], top: f32) -> f32 {
    let max = row.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let cap = MAX_ROW_SCALE * top / 127.0;
    if max > 0.0 {
        (top / max).min(cap)
    } else {
        cap
    }
}

fn bias(b: f32, scale: f32, layer: &str, k: usize) -> Result<i32, String> {
    let v = (b as f64 * scale as f64).round();
    if v.abs() > (1u64 << 30) as f64 {
        return Err(format!("{layer} bias {k} ({b}) is too large for a quantised sum"));
    }
    Ok(v as i32)
}
