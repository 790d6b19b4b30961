//! Running the net for search: a synchronous evaluator, and an inference thread that owns the
//! net and serves batches to many callers.
//!
//! Both go through the same code: encode the requests into one input buffer, one
//! forward pass under `tch::no_grad` per `max_batch` positions, then for each request the masked
//! softmax of the policy logits over its legal moves ([`crate::policy::masked_softmax`], aligned
//! with the request's move order) and the softmax of the win/draw/loss logits.
//!
//! - [`NetEvaluator`] owns a [`Net`] and evaluates on the caller's thread (`&self`, through a
//!   `RefCell`). For single-threaded use and tests.
//! - [`InferenceServer`] moves the net onto its own thread (tch tensors are `Send` but not
//!   `Sync`, so exactly one thread may use them) and hands out [`InferenceHandle`]s: cheap,
//!   cloneable, `Send + Sync`. A caller sends its batch over a channel and blocks on the answer;
//!   the thread gathers batches from all callers until it has `max_batch` positions or
//!   `max_wait_us` has passed since the first one, and runs them as one forward pass.
//!
//! Requests are anything that implements [`NetInput`]: [`NetRequest`] here, and the search's
//! [`draughts_mcts::EvalRequest`]; both evaluators also implement [`draughts_mcts::Evaluator`].

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use draughts_core::{Counters, Move, Position};
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

use crate::encoding::{self, EncodeInput, INPUT_SIZE};
use crate::net::{Net, NetError};
use crate::policy::{self, POLICY_SIZE};

/// What the net needs to know about one position to evaluate it.
pub trait NetInput {
    /// The position (either side to move).
    fn position(&self) -> &Position;
    /// The game's draw-rule counters in this position.
    fn counters(&self) -> Counters;
    /// Occurrences of this position so far, this one included (1 the first time).
    fn repetitions(&self) -> u32;
    /// The legal moves; the policy follows this order.
    fn moves(&self) -> &[Move];
}

/// A request built from borrowed moves, for callers without a request type of their own.
#[derive(Copy, Clone, Debug)]
pub struct NetRequest<'a> {
    /// The position.
    pub position: Position,
    /// Its draw-rule counters.
    pub counters: Counters,
    /// Occurrences so far, this one included.
    pub repetitions: u32,
    /// The legal moves, in the order the policy should follow.
    pub moves: &'a [Move],
}

impl NetInput for NetRequest<'_> {
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
        self.moves
    }
}

/// The net's answer for one request.
#[derive(Clone, Debug, PartialEq)]
pub struct NetEvaluation {
    /// Probabilities over the request's moves, in its order; they sum to 1 (moves sharing a
    /// policy index split its probability, see [`crate::policy`]).
    pub policy: Vec<f32>,
    /// Win, draw, loss probabilities for the side to move.
    pub wdl: [f32; 3],
    /// The moves-left head's output, when the net has one.
    pub moves_left: Option<f32>,
}

/// Why an evaluation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InferenceError {
    /// The inference thread has stopped (the server was shut down or dropped).
    #[error("the inference thread has stopped")]
    Closed,
    /// The forward pass failed (libtorch error or panic); the message says why. The thread
    /// keeps serving later requests.
    #[error("forward pass failed: {0}")]
    Forward(String),
    /// An inference config value out of range.
    #[error("inference config: `{field}` is {value}, must be in {min}..={max}")]
    InvalidConfig {
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
    },
    /// The device asked for is not available.
    #[error("{0}")]
    Device(String),
    /// The thread could not be started.
    #[error("cannot start the inference thread: {0}")]
    Spawn(String),
}

impl From<NetError> for InferenceError {
    fn from(e: NetError) -> InferenceError {
        match e {
            NetError::DeviceUnavailable(_) => InferenceError::Device(e.to_string()),
            e => InferenceError::Forward(e.to_string()),
        }
    }
}

/// Which device runs the net.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceChoice {
    /// The CPU.
    Cpu,
    /// The first CUDA device; an error if there is none.
    Cuda,
    /// CUDA if libtorch sees a device, else the CPU.
    #[default]
    Auto,
}

impl DeviceChoice {
    /// The tch device this choice means on this machine.
    pub fn resolve(self) -> Result<Device, InferenceError> {
        match self {
            DeviceChoice::Cpu => Ok(Device::Cpu),
            DeviceChoice::Cuda => {
                crate::net::check_device(Device::Cuda(0))?;
                Ok(Device::Cuda(0))
            }
            DeviceChoice::Auto => Ok(Device::cuda_if_available()),
        }
    }
}

/// Settings of inference. In config files every key is optional; unknown keys are errors.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InferenceConfig {
    /// `"cpu"`, `"cuda"` or `"auto"` (default).
    pub device: DeviceChoice,
    /// libtorch intra-op threads (`tch::set_num_threads`), 1..=256. Default 1: on a small CPU,
    /// several single-threaded workers beat one multi-threaded one.
    pub torch_threads: usize,
    /// Most positions in one forward pass, 1..=65536. Default 128.
    pub max_batch: usize,
    /// How long the inference thread waits for more requests after the first one of a batch,
    /// in microseconds (0..=1000000). Default 1000.
    pub max_wait_us: u64,
    /// Run the forward passes of self-play in mixed precision (CUDA autocast: convolutions and
    /// matrix products in float16, outputs back in float32) when the device is CUDA; on the CPU
    /// it changes nothing. Training stays in float32 (TF32 on recent GPUs): tch exposes no
    /// gradient scaler. Default false.
    pub mixed_precision: bool,
}

impl Default for InferenceConfig {
    fn default() -> InferenceConfig {
        InferenceConfig {
            device: DeviceChoice::Auto,
            torch_threads: 1,
            max_batch: 128,
            max_wait_us: 1000,
            mixed_precision: false,
        }
    }
}

impl InferenceConfig {
    /// Checks every field's range.
    pub fn validate(&self) -> Result<(), InferenceError> {
        let check = |field, value: u64, min, max| {
            if (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(InferenceError::InvalidConfig {
                    field,
                    value,
                    min,
                    max,
                })
            }
        };
        check("torch_threads", self.torch_threads as u64, 1, 256)?;
        check("max_batch", self.max_batch as u64, 1, 65_536)?;
        check("max_wait_us", self.max_wait_us, 0, 1_000_000)?;
        Ok(())
    }
}

/// One request, owned (it travels over a channel): the encoder's inputs and the policy indices
/// of the legal moves.
#[derive(Clone, Debug)]
struct Item {
    position: Position,
    counters: Counters,
    repetitions: u32,
    indices: Vec<u16>,
}

impl Item {
    fn new<R: NetInput + ?Sized>(r: &R) -> Item {
        let position = *r.position();
        let mut indices = Vec::with_capacity(r.moves().len());
        policy::move_indices(position.side_to_move(), r.moves(), &mut indices);
        Item {
            position,
            counters: r.counters(),
            repetitions: r.repetitions(),
            indices,
        }
    }
}

/// The net plus reusable buffers; turns items into evaluations.
#[derive(Debug)]
struct Runner {
    net: Net,
    max_batch: usize,
    /// Forward passes under CUDA autocast.
    autocast: bool,
    input: Vec<f32>,
    logits: Vec<f32>,
    wdl: Vec<f32>,
    moves_left: Vec<f32>,
}

impl Runner {
    fn new(net: Net, max_batch: usize, autocast: bool) -> Runner {
        Runner {
            net,
            max_batch: max_batch.max(1),
            autocast,
            input: Vec::new(),
            logits: Vec::new(),
            wdl: Vec::new(),
            moves_left: Vec::new(),
        }
    }

    fn run(&mut self, items: &[&Item]) -> Result<Vec<NetEvaluation>, InferenceError> {
        let mut out = Vec::with_capacity(items.len());
        for chunk in items.chunks(self.max_batch) {
            self.run_chunk(chunk, &mut out)?;
        }
        Ok(out)
    }

    fn run_chunk(
        &mut self,
        chunk: &[&Item],
        out: &mut Vec<NetEvaluation>,
    ) -> Result<(), InferenceError> {
        let n = chunk.len();
        encoding::encode_batch(
            chunk.iter().map(|it| EncodeInput {
                position: &it.position,
                counters: it.counters,
                repetitions: it.repetitions,
            }),
            &mut self.input,
        );
        self.logits.resize(n * POLICY_SIZE, 0.0);
        self.wdl.resize(n * 3, 0.0);
        self.moves_left.resize(n, 0.0);
        let (net, input, autocast) = (&self.net, &self.input, self.autocast);
        let (logits, wdl, moves_left) = (&mut self.logits, &mut self.wdl, &mut self.moves_left);
        // tch reports many errors by panicking; keep the thread alive and report them instead.
        let has_moves_left = catch_unwind(AssertUnwindSafe(|| {
            tch::no_grad(|| -> Result<bool, NetError> {
                let xs = Tensor::f_from_slice(input.as_slice())?
                    .f_reshape([n as i64, INPUT_SIZE as i64])?
                    .f_to_device(net.device())?;
                let y = if autocast { tch::autocast(true, || net.forward(&xs))? } else { net.forward(&xs)? };
                y.policy.f_to_kind(Kind::Float)?.f_copy_data(logits, n * POLICY_SIZE)?;
                y.wdl.f_softmax(-1, Kind::Float)?.f_copy_data(wdl, n * 3)?;
                if let Some(ml) = &y.moves_left {
                    ml.f_to_kind(Kind::Float)?.f_copy_data(moves_left, n)?;
                }
                Ok(y.moves_left.is_some())
            })
        }))
        .map_err(|panic| InferenceError::Forward(panic_message(panic.as_ref())))??;
        for (k, item) in chunk.iter().enumerate() {
            let mut probs = Vec::with_capacity(item.indices.len());
            policy::masked_softmax(
                &self.logits[k * POLICY_SIZE..(k + 1) * POLICY_SIZE],
                &item.indices,
                &mut probs,
            );
            let w = &self.wdl[k * 3..k * 3 + 3];
            out.push(NetEvaluation {
                policy: probs,
                wdl: [w[0], w[1], w[2]],
                moves_left: has_moves_left.then(|| self.moves_left[k]),
            });
        }
        Ok(())
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

/// Evaluates on the caller's thread. Owns the net; `evaluate` takes `&self` (the buffers sit in a
/// `RefCell`), so the evaluator is `Send` but not `Sync`.
#[derive(Debug)]
pub struct NetEvaluator {
    runner: RefCell<Runner>,
}

impl NetEvaluator {
    /// An evaluator that runs at most `max_batch` positions per forward pass (larger batches are
    /// split).
    pub fn new(net: Net, max_batch: usize) -> NetEvaluator {
        NetEvaluator {
            runner: RefCell::new(Runner::new(net, max_batch, false)),
        }
    }

    /// One evaluation per request, in order.
    pub fn evaluate<R: NetInput>(
        &self,
        requests: &[R],
    ) -> Result<Vec<NetEvaluation>, InferenceError> {
        let items: Vec<Item> = requests.iter().map(Item::new).collect();
        let refs: Vec<&Item> = items.iter().collect();
        // `run` does not call back into this evaluator, so the borrow is never held twice.
        self.runner.borrow_mut().run(&refs)
    }

    /// The net back.
    pub fn into_net(self) -> Net {
        self.runner.into_inner().net
    }
}

/// A batch from one caller, and where to send the answer.
struct Job {
    items: Vec<Item>,
    reply: Sender<Result<Vec<NetEvaluation>, InferenceError>>,
}

enum Message {
    Evaluate(Job),
    Shutdown,
}

/// Counters of the inference thread's work.
#[derive(Debug, Default)]
struct Counts {
    forward_calls: AtomicU64,
    positions: AtomicU64,
}

/// What the inference thread has done so far.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct InferenceStats {
    /// Batches run (gathered requests, each one or more forward passes).
    pub batches: u64,
    /// Positions evaluated.
    pub positions: u64,
}

/// A cloneable, `Send + Sync` handle to the inference thread. Evaluation blocks the calling
/// thread until its batch has been run.
#[derive(Clone, Debug)]
pub struct InferenceHandle {
    tx: Sender<Message>,
}

impl InferenceHandle {
    /// One evaluation per request, in order.
    pub fn evaluate<R: NetInput>(
        &self,
        requests: &[R],
    ) -> Result<Vec<NetEvaluation>, InferenceError> {
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let items = requests.iter().map(Item::new).collect();
        let (reply, answer) = mpsc::channel();
        self.tx
            .send(Message::Evaluate(Job { items, reply }))
            .map_err(|_| InferenceError::Closed)?;
        answer.recv().map_err(|_| InferenceError::Closed)?
    }
}

/// Owns the inference thread. Dropping it (or [`InferenceServer::shutdown`]) stops the thread
/// after the batch in progress; later evaluations through its handles fail with
/// [`InferenceError::Closed`].
#[derive(Debug)]
pub struct InferenceServer {
    tx: Sender<Message>,
    thread: Option<JoinHandle<()>>,
    device: Device,
    counts: Arc<Counts>,
}

impl InferenceServer {
    /// Moves `net` to the configured device, sets libtorch's thread count and starts the thread.
    pub fn spawn(
        mut net: Net,
        config: &InferenceConfig,
    ) -> Result<InferenceServer, InferenceError> {
        config.validate()?;
        let device = config.device.resolve()?;
        net.set_device(device)?;
        let threads = config.torch_threads as i32;
        // New threads inherit the value last set, and the thread sets it again for itself.
        tch::set_num_threads(threads);
        let (tx, rx) = mpsc::channel();
        let counts = Arc::new(Counts::default());
        let runner = Runner::new(net, config.max_batch, config.mixed_precision && device.is_cuda());
        let max_wait = Duration::from_micros(config.max_wait_us);
        let thread_counts = Arc::clone(&counts);
        let thread = std::thread::Builder::new()
            .name("draughts-inference".to_owned())
            .spawn(move || {
                tch::set_num_threads(threads);
                serve(rx, runner, max_wait, &thread_counts)
            })
            .map_err(|e| InferenceError::Spawn(e.to_string()))?;
        Ok(InferenceServer {
            tx,
            thread: Some(thread),
            device,
            counts,
        })
    }

    /// A new handle to the thread.
    pub fn handle(&self) -> InferenceHandle {
        InferenceHandle {
            tx: self.tx.clone(),
        }
    }

    /// The device the net runs on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Work done so far.
    pub fn stats(&self) -> InferenceStats {
        InferenceStats {
            batches: self.counts.forward_calls.load(Ordering::Relaxed),
            positions: self.counts.positions.load(Ordering::Relaxed),
        }
    }

    /// Stops the thread after the batch in progress and waits for it.
    pub fn shutdown(mut self) -> InferenceStats {
        self.stop();
        self.stats()
    }

    fn stop(&mut self) {
        let _ = self.tx.send(Message::Shutdown);
        if let Some(thread) = self.thread.take() {
            // The thread catches forward-pass panics itself; a join error has nothing to report.
            let _ = thread.join();
        }
    }
}

impl Drop for InferenceServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(rx: Receiver<Message>, mut runner: Runner, max_wait: Duration, counts: &Counts) {
    // `no_grad` is thread-local: this thread never builds a graph.
    let _no_grad = tch::no_grad_guard();
    let max_batch = runner.max_batch;
    let mut pending: Vec<Job> = Vec::new();
    let mut stopping = false;
    while !stopping {
        match rx.recv() {
            Ok(Message::Evaluate(job)) => pending.push(job),
            Ok(Message::Shutdown) | Err(_) => break,
        }
        let mut n = pending[0].items.len();
        let deadline = Instant::now() + max_wait;
        while n < max_batch {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Message::Evaluate(job)) => {
                    n += job.items.len();
                    pending.push(job);
                }
                Ok(Message::Shutdown) | Err(RecvTimeoutError::Disconnected) => {
                    stopping = true;
                    break;
                }
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
        let items: Vec<&Item> = pending.iter().flat_map(|job| &job.items).collect();
        let result = runner.run(&items);
        counts.forward_calls.fetch_add(1, Ordering::Relaxed);
        counts
            .positions
            .fetch_add(items.len() as u64, Ordering::Relaxed);
        drop(items);
        match result {
            Ok(evals) => {
                let mut evals = evals.into_iter();
                for job in pending.drain(..) {
                    let mine: Vec<NetEvaluation> = evals.by_ref().take(job.items.len()).collect();
                    // A caller that gave up waiting is no error.
                    let _ = job.reply.send(Ok(mine));
                }
            }
            Err(e) => {
                for job in pending.drain(..) {
                    let _ = job.reply.send(Err(e.clone()));
                }
            }
        }
    }
}
