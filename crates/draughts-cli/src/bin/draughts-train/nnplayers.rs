//! The libtorch side of the network players: ResNet evaluators, installed into the library's
//! players (`draughts_cli::nnplayers`, re-exported here) when this binary starts.

use std::cell::Cell;
use std::path::Path;

use draughts_mcts::{EvalError, EvalRequest, Evaluation, Evaluator};
use draughts_nn::tch::Device;
use draughts_nn::{DeviceChoice, InferenceConfig, InferenceServer, NetEvaluator};

pub use draughts_cli::nnplayers::*;

/// ResNet evaluation through libtorch on the CPU, one libtorch thread per player.
#[derive(Debug, Default)]
pub struct Torch;

struct Shared(InferenceServer);

impl Server for Shared {
    fn handle(&self) -> Box<dyn Evaluator + Send> {
        Box::new(self.0.handle())
    }
}

impl ResnetBackend for Torch {
    fn evaluator(&self, model: &Path) -> Result<Loaded, String> {
        let (net, meta) = crate::models::load_model(model, Device::Cpu).map_err(|e| format!("{e:#}"))?;
        Ok((Box::new(OneThread(NetEvaluator::new(net, 256))), meta.model_id))
    }

    fn server(&self, model: &Path) -> Result<Started, String> {
        let (net, meta) = draughts_nn::checkpoint::load(model, Device::Cpu).map_err(|e| e.to_string())?;
        let config = InferenceConfig { device: DeviceChoice::Cpu, torch_threads: 1, max_batch: 256, max_wait_us: 0, mixed_precision: false };
        let server = InferenceServer::spawn(net, &config).map_err(|e| e.to_string())?;
        Ok((Box::new(Shared(server)), meta.model_id))
    }
}

thread_local! {
    static ONE_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Evaluates on the calling thread with one libtorch thread (libtorch's thread count is per
/// calling thread; players run on their own threads, several at once).
struct OneThread<E>(E);

impl<E: Evaluator> Evaluator for OneThread<E> {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        if !ONE_THREAD.with(|c| c.replace(true)) {
            draughts_nn::tch::set_num_threads(1);
        }
        self.0.evaluate(batch)
    }
}
