//! The Gumbel root against numbers computed by hand.
//!
//! Root: `W:W47,48:B1,2,3`, White to move with four quiet moves a0..a3 = 47-41, 47-42, 48-42,
//! 48-43 (names fixed by Hub text below, whatever order the generator lists them in). Black then
//! has six moves, so no line of these searches goes deeper than two plies and no two root moves
//! lead to the same position.
//!
//! A scripted evaluator returns, for the root, priors p = [.4, .3, .2, .1] and value .1; for
//! every position under root move a_i, the value q_i = [.2, -.4, 0, .6] from White's point of view
//! (so -q_i when Black is to move) with a uniform policy. Every visit of a_i therefore backs up
//! exactly q_i: Q(a_i) = q_i however the visits fall.
//!
//! Injected Gumbel noise g = [0, .5, 1, -.3]; c_visit = 50, c_scale = 0.1 (a smaller scale than the
//! default keeps the improved policy away from one-hot, so every entry is tested);
//! sigma(q) = (50 + max N) * 0.1 * (q + 1) / 2.
//!
//! logits = ln p = [-0.916291, -1.203973, -1.609438, -2.302585]
//! g + logits   = [-0.916291, -0.703973, -0.609438, -2.602585]  -> Gumbel-top-k order a2, a1, a0, a3

mod common;

use std::collections::HashMap;

use common::*;
use draughts_core::Position;
use draughts_mcts::{
    Algorithm, Budget, EvalError, EvalRequest, Evaluation, Evaluator, MctsConfig, Search, SearchOutcome,
};

const ROOT: &str = "W:W47,48:B1,2,3";
const MOVES: [&str; 4] = ["47-41", "47-42", "48-42", "48-43"];
const PRIORS: [f32; 4] = [0.4, 0.3, 0.2, 0.1];
const Q: [f32; 4] = [0.2, -0.4, 0.0, 0.6];
const NOISE: [f32; 4] = [0.0, 0.5, 1.0, -0.3];
const ROOT_VALUE: f32 = 0.1;

struct Scripted {
    root: Position,
    root_policy: Vec<f32>,
    values: HashMap<Position, f32>,
}

impl Scripted {
    fn new() -> Scripted {
        let g = game(ROOT);
        let legal = g.legal_moves();
        assert_eq!(legal.len(), 4);
        let root = *g.position();
        let mut root_policy = vec![0.0; 4];
        let mut values = HashMap::new();
        for (i, text) in MOVES.iter().enumerate() {
            let mv = hub(&g, text);
            let at = legal.iter().position(|m| *m == mv).unwrap();
            root_policy[at] = PRIORS[i];
            let child = root.play(&mv);
            assert!(values.insert(child, -Q[i]).is_none());
            let replies = child.legal_moves();
            assert_eq!(replies.len(), 6);
            for r in &replies {
                assert!(values.insert(child.play(r), Q[i]).is_none(), "transposition under {text}");
            }
        }
        Scripted { root, root_policy, values }
    }
}

impl Evaluator for Scripted {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        batch
            .iter()
            .map(|r| {
                let (policy, v) = if r.position == self.root {
                    (self.root_policy.clone(), ROOT_VALUE)
                } else {
                    let v = *self.values.get(&r.position).ok_or_else(|| EvalError::new(format!("unscripted {}", r.position)))?;
                    (vec![1.0 / r.moves.len() as f32; r.moves.len()], v)
                };
                Ok(Evaluation { policy, wdl: Evaluation::wdl_from_value(v), moves_left: None })
            })
            .collect()
    }
}

/// Runs the scripted search and returns the outcome plus, per named move a0..a3, its visits and
/// its improved-policy entry.
fn run(m: u32, n: u32) -> (SearchOutcome, String, [u32; 4], [f32; 4]) {
    let g = game(ROOT);
    let legal = g.legal_moves();
    let config = MctsConfig {
        algorithm: Algorithm::Gumbel,
        gumbel_m: m,
        c_visit: 50.0,
        c_scale: 0.1,
        ..MctsConfig::default()
    };
    let mut search = Search::new(g.clone(), config).unwrap();
    let mut noise = vec![0.0; 4];
    for (i, text) in MOVES.iter().enumerate() {
        noise[legal.iter().position(|m| *m == hub(&g, text)).unwrap()] = NOISE[i];
    }
    search.set_gumbel_noise(noise).unwrap();
    let out = search.search(&Scripted::new(), Budget::full(n)).unwrap();
    check_outcome(&search, &out);
    let mut visits = [0; 4];
    let mut pi = [0.0; 4];
    for (i, text) in MOVES.iter().enumerate() {
        let mv = hub(&g, text);
        let c = out.children.iter().find(|c| c.mv == mv).unwrap();
        visits[i] = c.visits;
        if c.visits > 0 {
            assert!((c.q.unwrap() - Q[i]).abs() < 1e-6, "Q of {text}");
        }
        pi[i] = out.policy_target.iter().find(|(m, _)| *m == mv).unwrap().1;
    }
    let best = out.best.to_hub();
    (out, best, visits, pi)
}

fn assert_close(got: [f32; 4], want: [f32; 4]) {
    for i in 0..4 {
        assert!((got[i] - want[i]).abs() < 1e-5, "entry {i}: got {got:?}, want {want:?}");
    }
}

#[test]
fn m4_n16_two_phases() {
    // Phase 1: floor(16 / (ceil(log2 4) * 4)) = 2 visits each, 8 simulations.
    // Halving with max N = 2: sigma = 52 * .1 * (q + 1) / 2 = 2.6 (q + 1) = [3.12, 1.56, 2.6, 4.16]
    //   g + logits + sigma = [2.203709, 0.856027, 1.990562, 1.557415] -> keep a0, a2
    //   (a3 has the best Q but its prior and noise are too low).
    // Phase 2: floor(16 / (2 * 2)) = 4 visits each, 8 simulations. Visits: [6, 2, 6, 2].
    // Final, max N = 6: sigma = 2.8 (q + 1) = [3.36, 1.68, 2.8, 4.48];
    //   survivors a0: 2.443709, a2: 2.190562 -> a0.
    // Improved policy: softmax(logits + sigma) = softmax([2.443709, 0.476027, 1.190562, 2.177415])
    //   = [0.456288, 0.063780, 0.130318, 0.349614].
    let (out, best, visits, pi) = run(4, 16);
    assert_eq!(visits, [6, 2, 6, 2]);
    assert_eq!(best, "47-41");
    assert_close(pi, [0.456288, 0.063780, 0.130318, 0.349614]);
    assert_eq!(out.simulations, 16);
    assert_eq!(out.visits, 17);
}

#[test]
fn m4_n8_budget_shorter_than_log_m_times_m() {
    // Phase 1: max(1, floor(8 / 8)) = 1 visit each. Halving with max N = 1:
    //   sigma = 5.1 (q + 1) / 2 -> scores [2.143709, 0.826027, 1.940562, 1.477415]: keep a0, a2.
    // Phase 2: floor(8 / 4) = 2 visits each. Visits: [3, 1, 3, 1].
    // Final, max N = 3: sigma = 5.3 (q + 1) / 2; a0: 2.263709 > a2: 2.040562 -> a0.
    // Improved policy = softmax(logits + sigma) = [0.461076, 0.070519, 0.135696, 0.332709].
    let (_, best, visits, pi) = run(4, 8);
    assert_eq!(visits, [3, 1, 3, 1]);
    assert_eq!(best, "47-41");
    assert_close(pi, [0.461076, 0.070519, 0.135696, 0.332709]);
}

#[test]
fn m2_n8_completes_unvisited_actions_with_v_mix() {
    // m = 2: Gumbel-top-2 by g + logits = a2, a1. ceil(log2 2) = 1 phase of floor(8 / 2) = 4
    // visits each. Visits: [0, 4, 4, 0].
    // v_mix (eq. 33) = (v_root + sum N * sum_visited(p q) / sum_visited(p)) / (1 + sum N)
    //   = (0.1 + 8 * (.3 * -.4 + .2 * 0) / (.3 + .2)) / 9 = (0.1 - 1.92) / 9 = -0.202222
    // Completed Q = [-0.202222, -0.4, 0, -0.202222]; max N = 4: sigma = 2.7 (q + 1).
    // Final among the survivors a2, a1: a2: -0.609438 + 2.7 = 2.090562 > a1: 0.916027 -> a2
    //   (a0 would score 1.237709 but was not considered).
    // Improved policy = softmax([1.237709, 0.416027, 1.090562, -0.148585])
    //   = [0.391718, 0.172235, 0.338118, 0.097929].
    let (_, best, visits, pi) = run(2, 8);
    assert_eq!(visits, [0, 4, 4, 0]);
    assert_eq!(best, "48-42");
    assert_close(pi, [0.391718, 0.172235, 0.338118, 0.097929]);
}
