//! The native sparse network as an [`Evaluator`]: no libtorch and no inference thread; each
//! position is evaluated from scratch on the caller's thread (a few microseconds).

use std::cell::RefCell;
use std::sync::Arc;

use draughts_nnue::{Network, Scratch};

use crate::evaluator::{EvalError, EvalRequest, Evaluation, Evaluator};

/// Evaluates with a [`Network`] (`draughts-nnue`). Cheap to create: share the network between
/// evaluators (one per thread) with an `Arc`.
#[derive(Debug)]
pub struct NnueEvaluator {
    net: Arc<Network>,
    scratch: RefCell<Scratch>,
}

impl NnueEvaluator {
    /// An evaluator of `net`.
    pub fn new(net: Arc<Network>) -> NnueEvaluator {
        NnueEvaluator { net, scratch: RefCell::new(Scratch::default()) }
    }

    /// The network.
    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }
}

impl Clone for NnueEvaluator {
    fn clone(&self) -> NnueEvaluator {
        NnueEvaluator::new(self.net.clone())
    }
}

impl Evaluator for NnueEvaluator {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        let mut scratch = self.scratch.try_borrow_mut().map_err(|_| EvalError::new("evaluator used re-entrantly"))?;
        Ok(batch
            .iter()
            .map(|r| {
                let mut policy = Vec::with_capacity(r.moves.len());
                let out = self.net.evaluate_position(&r.position, &r.moves, &mut scratch, &mut policy);
                Evaluation { policy, wdl: out.wdl(), moves_left: out.moves_left }
            })
            .collect())
    }
}
