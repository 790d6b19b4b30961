//! The policy output: one logit per (from, to) pair of squares, 50 x 50 = 2500, seen from the
//! side to move. Both network kinds share it; the definitions live in `draughts-nnue` (which
//! evaluates the sparse kind without libtorch) and are re-exported here.

pub use draughts_nnue::policy::*;
