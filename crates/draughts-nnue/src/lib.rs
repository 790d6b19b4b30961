//! Native inference of the sparse draughts network, with no libtorch: the fast learned
//! evaluation of the alpha-beta engine and an MCTS evaluator that needs no inference thread.
//!
//! The network (kind `sparse` in a checkpoint's architecture) sees piece-square features from
//! each side's point of view ([`features`]). Its first layer's output, the [`Accumulator`], is
//! updated when a move is made (a quiet move changes two features per point of view, a capture
//! one more per piece taken) instead of being recomputed; small clipped-ReLU dense layers give a
//! win/draw/loss estimate, and a policy over the legal moves is read from the accumulator
//! ([`policy`], the same 2500-logit layout as the ResNet's). The layout is in [`network`].
//!
//! ```no_run
//! use draughts_core::Position;
//! use draughts_nnue::{Network, Scratch};
//!
//! let net = Network::load("models/sparse-2h".as_ref())?;
//! let mut scratch = Scratch::default();
//! let pos = Position::start();
//! let mut acc = net.new_accumulator();
//! net.refresh(&pos, &mut acc);
//! let moves = pos.legal_moves();
//! let after = pos.play(&moves[0]);
//! let mut next = net.new_accumulator();
//! net.update(&acc, &pos, &moves[0], &mut next); // incremental: equal to a refresh of `after`
//! let out = net.evaluate(&next, after.side_to_move(), &mut scratch);
//! println!("win/draw/loss {:?}", out.wdl());
//! # Ok::<(), draughts_nnue::LoadError>(())
//! ```
//!
//! Hot loops ([`kernels`](crate::Simd)) have a scalar version and an AVX2+FMA version chosen at
//! run time, so the binary keeps its x86-64-v2 baseline and still uses AVX2 where it exists.
//! This crate depends on the rules core and the model-file format only.

pub mod accumulator;
pub mod features;
mod kernels;
pub mod network;
pub mod policy;
mod quant;
pub mod testing;

pub use accumulator::{Accumulator, Precision};
pub use kernels::{Simd, Q};
pub use network::{tensor_shapes, LoadError, Network, Output, Scratch};
pub use policy::POLICY_SIZE;
