//! Raw speed of the net, and seeded sample positions for benchmarks and tests.

use std::time::Instant;

use draughts_core::{Counters, Game, Position, Rules};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tch::{Device, Tensor};

use crate::encoding::{self, EncodeInput, INPUT_SIZE};
use crate::net::{Net, NetError};

/// Seed of the positions [`bench_forward`] feeds the net (their content hardly affects speed).
pub const BENCH_SEED: u64 = 0x5eed_d4a7;

/// A game state as the net sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SampleState {
    /// The position.
    pub position: Position,
    /// Its draw-rule counters.
    pub counters: Counters,
    /// Occurrences so far, this one included.
    pub repetitions: u32,
}

/// `count` states from random legal games (FMJD rules) played from the start position with a
/// ChaCha8 generator seeded by `seed`: each game goes on until it ends or a random length of up
/// to 150 plies, and every state along the way is kept, so the sample covers openings, middle
/// games and endings with kings.
pub fn sample_states(count: usize, seed: u64) -> Vec<SampleState> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let mut game = Game::new(Rules::FMJD);
        let length = rng.gen_range(1..=150);
        while out.len() < count && game.ply() < length && game.outcome().is_none() {
            out.push(SampleState {
                position: *game.position(),
                counters: game.counters(),
                repetitions: game.repetition_count(),
            });
            let moves = game.legal_moves();
            // A game with no outcome has a legal move.
            let Some(&mv) = moves.choose(&mut rng) else {
                break;
            };
            game.play_unchecked(mv);
        }
    }
    out
}

/// Positions per second of batched forward passes of `net` in inference mode (under
/// `tch::no_grad`), batch size `batch`, timed over `iters` passes (or 5 seconds, whichever
/// comes first, but at least 3 passes) after 3 untimed warm-up
/// passes. The input is `batch` states from [`sample_states`] with [`BENCH_SEED`], encoded once.
/// libtorch's thread count is whatever the calling thread has set.
pub fn bench_forward(net: &Net, batch: usize, iters: usize) -> Result<f64, NetError> {
    bench_forward_mixed(net, batch, iters, false)
}

/// [`bench_forward`], with the passes under CUDA autocast when `autocast` (mixed precision, as
/// the inference thread runs them with `[inference] mixed_precision`).
pub fn bench_forward_mixed(net: &Net, batch: usize, iters: usize, autocast: bool) -> Result<f64, NetError> {
    let batch = batch.max(1);
    let states = sample_states(batch, BENCH_SEED);
    let mut input = Vec::with_capacity(batch * INPUT_SIZE);
    encoding::encode_batch(
        states.iter().map(|s| EncodeInput {
            position: &s.position,
            counters: s.counters,
            repetitions: s.repetitions,
        }),
        &mut input,
    );
    let device = net.device();
    let xs = Tensor::f_from_slice(input.as_slice())?
        .f_reshape([batch as i64, INPUT_SIZE as i64])?
        .f_to_device(device)?;
    let sync = || {
        if let Device::Cuda(i) = device {
            tch::Cuda::synchronize(i as i64);
        }
    };
    let forward = || if autocast { tch::autocast(true, || net.forward(&xs)) } else { net.forward(&xs) };
    tch::no_grad(|| {
        for _ in 0..3 {
            forward()?;
        }
        sync();
        let start = Instant::now();
        let mut done = 0;
        // At most `iters` passes and, past 3, at most 5 seconds (a big net on a CPU).
        while done < iters && (done < 3 || start.elapsed().as_secs_f64() < 5.0) {
            forward()?;
            done += 1;
        }
        sync();
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        Ok((batch * done) as f64 / secs)
    })
}
