//! Helpers shared by the integration tests.
#![allow(dead_code)]

use draughts_core::{Bitboard, Color, Counters, Position, Square};
use draughts_nn::bench::{sample_states, SampleState};
use draughts_nn::{Net, NetConfig};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tch::Device;

/// A net small enough for debug-mode tests.
pub fn tiny_config(moves_left_head: bool) -> NetConfig {
    NetConfig {
        blocks: 2,
        channels: 8,
        policy_channels: 2,
        value_hidden: 16,
        moves_left_head,
        ..NetConfig::default()
    }
}

/// A sparse net small enough for debug-mode tests.
pub fn tiny_sparse_config(moves_left_head: bool) -> NetConfig {
    NetConfig { accumulator: 16, hidden: vec![8, 8], moves_left_head, ..NetConfig::sparse() }
}

/// A tiny net whose every variable (batch-norm statistics included) has been moved away from its
/// initial value by seeded noise, so that a variable that fails to load changes the outputs.
pub fn perturbed_net(config: &NetConfig, seed: u64) -> Net {
    let net = Net::new(config, Device::Cpu, seed).unwrap();
    tch::no_grad(|| {
        for (name, mut var) in net.var_store().variables() {
            let noise = var.randn_like() * 0.3;
            if name.ends_with("running_var") {
                // Keep variances positive.
                var.copy_(&(noise.abs() + 0.5));
            } else {
                let _ = var.g_add_(&noise);
            }
        }
    });
    net
}

/// States from random games (openings to endings) plus random king-heavy positions.
pub fn mixed_states(games: usize, kings: usize, seed: u64) -> Vec<SampleState> {
    let mut states = sample_states(games, seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xabcd);
    for _ in 0..kings {
        states.push(SampleState {
            position: king_heavy_position(&mut rng),
            counters: Counters {
                no_progress: rng.gen_range(0..60),
                no_capture: rng.gen_range(0..60),
                endgame: rng.gen_range(0..40),
            },
            repetitions: rng.gen_range(1..=3),
        });
    }
    states
}

/// A random legal-looking position with 1 to 4 kings and 0 to 5 men per side, either side to
/// move (no man on its own promotion row).
pub fn king_heavy_position(rng: &mut ChaCha8Rng) -> Position {
    loop {
        let mut squares: Vec<Square> = Square::all().collect();
        squares.shuffle(rng);
        let mut take = |n: usize, forbidden: &dyn Fn(Square) -> bool| {
            let mut set = Bitboard::EMPTY;
            let mut i = 0;
            while set.count() < n as u32 && i < squares.len() {
                if !forbidden(squares[i]) {
                    set = set.with(squares.remove(i));
                } else {
                    i += 1;
                }
            }
            set
        };
        let none = |_: Square| false;
        let wk = take(rng.gen_range(1..=4), &none);
        let bk = take(rng.gen_range(1..=4), &none);
        let wm = take(rng.gen_range(0..=5), &|s: Square| s.number() <= 5);
        let bm = take(rng.gen_range(0..=5), &|s: Square| s.number() >= 46);
        let side = if rng.gen() {
            Color::White
        } else {
            Color::Black
        };
        if let Ok(p) = Position::from_pieces(wm, wk, bm, bk, side) {
            if p.count_legal_moves() > 0 {
                return p;
            }
        }
    }
}
