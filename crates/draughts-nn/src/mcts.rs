//! The search's [`Evaluator`] seam, implemented by [`NetEvaluator`] and [`InferenceHandle`].
//!
//! The search's [`EvalRequest`] already carries what the net reads (position, counters,
//! repetitions, legal moves in policy order), so it implements [`NetInput`] directly and no copy
//! is made on the way in. Errors come out as [`EvalError`] with the [`InferenceError`] as source.

use draughts_core::{Counters, Move, Position};
use draughts_mcts::{EvalError, EvalRequest, Evaluation, Evaluator};

use crate::inference::{InferenceError, InferenceHandle, NetEvaluation, NetEvaluator, NetInput};

impl NetInput for EvalRequest {
    fn position(&self) -> &Position {
        &self.position
    }
    fn counters(&self) -> Counters {
        self.counters
    }
    fn repetitions(&self) -> u32 {
        self.repetitions
    }
    fn moves(&self) -> &[Move] {
        &self.moves
    }
}

impl From<NetEvaluation> for Evaluation {
    fn from(e: NetEvaluation) -> Evaluation {
        Evaluation {
            policy: e.policy,
            wdl: e.wdl,
            moves_left: e.moves_left,
        }
    }
}

fn to_eval_error(e: InferenceError) -> EvalError {
    EvalError::with_source("neural network evaluation failed", e)
}

impl Evaluator for NetEvaluator {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        let evals = NetEvaluator::evaluate(self, batch).map_err(to_eval_error)?;
        Ok(evals.into_iter().map(Evaluation::from).collect())
    }
}

impl Evaluator for InferenceHandle {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        let evals = InferenceHandle::evaluate(self, batch).map_err(to_eval_error)?;
        Ok(evals.into_iter().map(Evaluation::from).collect())
    }
}
