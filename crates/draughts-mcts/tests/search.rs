//! Search behaviour: forced wins, determinism, terminal handling, tree reuse, batching.

mod common;

use common::*;
use draughts_core::{Counters, Game, Rules};
use draughts_mcts::{
    Algorithm, Budget, EvalError, EvalRequest, Evaluation, Evaluator, ExactEndgame, ExactPolicy, Material,
    MctsConfig, Search, SearchError, SearchKind, SearchOutcome, Solved, Step, Uniform,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn config(algorithm: Algorithm) -> MctsConfig {
    MctsConfig { algorithm, ..MctsConfig::default() }
}

/// King-and-man endgames in which White wins within 5 plies and exactly one White move wins
/// within 9 plies (found by a random scan with the exact solver; the test re-checks the 5-ply win
/// and the uniqueness within 7 plies).
const FORCED_WINS: [&str; 6] = [
    "W:W45,K50:B32",
    "W:WK32,39:B45",
    "W:W13,K39:B38",
    "W:W37,K38:B39",
    "W:WK8,17:B36",
    "W:WK3,49:B36,39",
];

#[test]
fn finds_the_only_winning_move() {
    // PUCT gets exact values and a uniform policy: it must find the win from the values alone.
    // Gumbel's interior selection follows the improved policy and, by design, explores unvisited
    // moves only through their prior, so with a uniform prior it can settle on a draw below the
    // root; it gets a policy that leans half-way toward the winning moves, and Gumbel noise on.
    // With the noise the root ranking is g + logits + sigma(Q): the values must outweigh both.
    let exact = |policy| ExactEndgame::new(Rules::FMJD).with_max_plies(5).with_policy(policy);
    let runs = [
        (Algorithm::Puct, 200, exact(ExactPolicy::Uniform)),
        (Algorithm::Gumbel, 64, exact(ExactPolicy::Blend(0.5))),
    ];
    let deeper = ExactEndgame::new(Rules::FMJD).with_max_plies(7);
    for fen in FORCED_WINS {
        let g = game(fen);
        let (value, children) = runs[0].2.solve(g.position(), Counters::default()).unwrap();
        assert_eq!(value, Solved::Win, "{fen}");
        let winners: Vec<_> = children.iter().filter(|(_, v)| *v == Solved::Win).map(|(m, _)| *m).collect();
        let (_, deep) = deeper.solve(g.position(), Counters::default()).unwrap();
        let deep_winners: Vec<_> = deep.iter().filter(|(_, v)| *v == Solved::Win).map(|(m, _)| *m).collect();
        assert_eq!(winners.len(), 1, "{fen}: {winners:?}");
        assert_eq!(deep_winners, winners, "{fen}: the other moves do not win within 7 plies either");
        assert!(children.len() >= 4, "{fen}");
        for (algorithm, sims, evaluator) in &runs {
            for seed in 0..2 {
                let cfg = MctsConfig { seed, gumbel_m: 32, ..config(*algorithm) };
                let mut s = Search::new(g.clone(), cfg).unwrap();
                let out = s.search(evaluator, Budget::full(*sims)).unwrap();
                check_outcome(&s, &out);
                assert_eq!(out.best, winners[0], "{fen} {algorithm:?} seed {seed}: {:?}", out.children);
                // Averages below the root include exploration of non-winning moves, so the winning
                // move's Q is below 1; it must still stand above every other move's.
                let q = |mv| out.children.iter().find(|c| c.mv == mv).and_then(|c| c.q).unwrap_or(-1.0);
                let q_win = q(winners[0]);
                assert!(q_win > 0.0, "{fen} {algorithm:?}: {q_win}");
                assert!(children.iter().all(|(m, _)| *m == winners[0] || q(*m) < q_win), "{fen} {algorithm:?}");
                assert!(out.root_value > 0.0, "{fen} {algorithm:?}: {}", out.root_value);
            }
        }
    }
}

#[test]
fn exact_policy_alone_finds_the_win_with_few_simulations() {
    let exact = ExactEndgame::new(Rules::FMJD).with_max_plies(5);
    for fen in FORCED_WINS {
        let g = game(fen);
        let (_, children) = exact.solve(g.position(), Counters::default()).unwrap();
        let winner = children.iter().find(|(_, v)| *v == Solved::Win).unwrap().0;
        for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
            let mut s = Search::new(g.clone(), config(algorithm)).unwrap();
            let out = s.search(&exact, Budget::full(8)).unwrap();
            assert_eq!(out.best, winner, "{fen} {algorithm:?}");
            assert!(out.root_wdl[0] > 0.9, "{fen} {algorithm:?}: {:?}", out.root_wdl);
        }
    }
}

#[test]
fn fixed_seed_gives_identical_searches_and_seeds_differ() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let run = |seed: u64| {
            let mut s = Search::new(Game::new(Rules::FMJD), MctsConfig { seed, simulations: 64, ..config(algorithm) }).unwrap();
            let mut outs = Vec::new();
            for _ in 0..3 {
                let out = s.search(&Uniform, s.config().full_budget()).unwrap();
                s.advance(out.best).unwrap();
                outs.push(out);
            }
            outs
        };
        let a = run(11);
        assert_eq!(a, run(11), "{algorithm:?}");
        let distinct: std::collections::HashSet<String> =
            (0..6).map(|seed| format!("{:?}", run(seed)[0].children)).collect();
        assert!(distinct.len() >= 3, "{algorithm:?}: noise had no effect across seeds");
    }
}

#[test]
fn fast_puct_search_has_no_noise() {
    let run = |seed| {
        let mut s = Search::new(Game::new(Rules::FMJD), MctsConfig { seed, ..config(Algorithm::Puct) }).unwrap();
        let out = s.search(&Material::default(), s.config().fast_budget()).unwrap();
        assert_eq!(out.kind, SearchKind::Fast);
        assert_eq!(out.simulations, 8);
        out
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn terminal_positions_are_never_evaluated() {
    // (1) Every White move draws by the 5-move rule: only the root is evaluated.
    let g = Game::with_counters(pos("W:WK50:BK1,3"), Counters { endgame: 9, ..Counters::default() }, Rules::FMJD);
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let rec = Recording::new(Uniform);
        let mut s = Search::new(g.clone(), config(algorithm)).unwrap();
        let out = s.search(&rec, Budget::full(40)).unwrap();
        check_outcome(&s, &out);
        assert_eq!(rec.requests(), 1, "{algorithm:?}");
        assert_eq!(out.simulations, 40);
        assert_eq!(out.visits, 41);
        assert!(out.children.iter().all(|c| c.q == Some(0.0) || c.visits == 0));
    }
    // (2) Black to move can repeat the position a third time with 7-1 (a draw) and has other
    // moves; the repeated position must never reach the evaluator.
    let mut g = game("W:WK50:BK1,3");
    for t in ["50-44", "1-7", "44-50", "7-1", "50-44", "1-7", "44-50"] {
        let mv = g.position().parse_pdn_move(t).unwrap();
        g.play(mv).unwrap();
    }
    let draw = hub(&g, "7-1");
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let rec = Recording::new(Material::default());
        let mut s = Search::new(g.clone(), config(algorithm)).unwrap();
        let out = s.search(&rec, Budget::full(64)).unwrap();
        check_outcome(&s, &out);
        let c = out.children.iter().find(|c| c.mv == draw).unwrap();
        assert!(c.visits > 0, "{algorithm:?}");
        assert_eq!(c.q, Some(0.0), "{algorithm:?}: the repetition is an exact draw");
    }
    // (3) A capture that takes the last piece: the child is a loss for Black, never evaluated.
    let rec = Recording::new(Uniform);
    let mut s = Search::new(game("W:W28:B23"), config(Algorithm::Puct)).unwrap();
    let out = s.search(&rec, Budget::full(10)).unwrap();
    assert_eq!(rec.requests(), 1);
    // The first simulation finds the game end: the root is a proven win, its value exact, and
    // the search stops there.
    assert_eq!(out.root_value, 1.0, "a proven win");
    assert_eq!(out.root_wdl, [1.0, 0.0, 0.0]);
    assert_eq!(out.simulations, 1);
    // (4) A game that is over cannot be searched.
    let mut s = Search::new(game("B:W50:B45"), config(Algorithm::Gumbel)).unwrap();
    assert!(matches!(s.search(&Uniform, Budget::full(8)), Err(SearchError::GameOver(_))));
}

#[test]
fn policy_targets_cover_legal_moves_and_sum_to_one() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        for seed in 0..6 {
            let g = random_game(&mut rng, 10 + seed as usize * 7);
            if g.outcome().is_some() {
                continue;
            }
            let mut s = Search::new(g, MctsConfig { seed, ..config(algorithm) }).unwrap();
            let out = s.search(&Material::default(), Budget::full(48)).unwrap();
            check_outcome(&s, &out);
            assert_eq!(out.simulations, 48);
        }
    }
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let mut s = Search::new(Game::new(Rules::FMJD), MctsConfig { simulations: 100, ..config(algorithm) }).unwrap();
        let out = s.search(&Material::default(), s.config().full_budget()).unwrap();
        let kept = out.children.iter().find(|c| c.mv == out.best).unwrap().visits;
        assert!(kept > 1, "{algorithm:?}");
        let before = s.tree_nodes();
        s.advance(out.best).unwrap();
        assert_eq!(s.root_visits(), kept, "{algorithm:?}");
        assert!(s.tree_nodes() < before);
        let next = s.search(&Material::default(), Budget::full(30)).unwrap();
        check_outcome(&s, &next);
        assert_eq!(next.visits, kept + 30);
        assert_eq!(next.simulations, 30);
        // Without reuse the tree starts afresh.
        let mut s = Search::new(Game::new(Rules::FMJD), MctsConfig { reuse_tree: false, ..config(algorithm) }).unwrap();
        let out = s.search(&Material::default(), Budget::full(50)).unwrap();
        s.advance(out.best).unwrap();
        assert_eq!(s.root_visits(), 0);
        assert_eq!(s.tree_nodes(), 1);
    }
}

fn random_game(rng: &mut ChaCha8Rng, plies: usize) -> Game {
    let mut g = Game::new(Rules::FMJD);
    for _ in 0..plies {
        let moves = g.legal_moves();
        if moves.is_empty() || g.outcome().is_some() {
            break;
        }
        g.play_unchecked(moves[rng.gen_range(0..moves.len())]);
    }
    g
}

/// Plays `moves_each` moves in every game, searching with `step`/`provide` for all games at once
/// and one evaluator call per round.
fn drive_together<E: Evaluator>(searches: &mut [Search], ev: &E, budget: Budget, moves_each: usize) -> Vec<Vec<SearchOutcome>> {
    let mut outs = vec![Vec::new(); searches.len()];
    for _ in 0..moves_each {
        let live: Vec<usize> = (0..searches.len()).filter(|&i| searches[i].game().outcome().is_none()).collect();
        for &i in &live {
            searches[i].start(budget).unwrap();
        }
        loop {
            let mut requests = Vec::new();
            let mut owners = Vec::new();
            for &i in &live {
                while let Step::Eval { ticket, request } = searches[i].step() {
                    requests.push(request);
                    owners.push((i, ticket));
                }
            }
            if requests.is_empty() {
                break;
            }
            let evals = ev.evaluate(&requests).unwrap();
            for ((i, ticket), e) in owners.into_iter().zip(evals) {
                searches[i].provide(ticket, e).unwrap();
            }
        }
        for &i in &live {
            let out = searches[i].outcome().unwrap();
            searches[i].advance(out.best).unwrap();
            outs[i].push(out);
        }
    }
    outs
}

#[test]
fn batched_driving_matches_searching_alone() {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let games: Vec<Game> = (0..16).map(|i| random_game(&mut rng, 4 + i)).collect();
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        for max_in_flight in [1, 4] {
            let cfg = |seed| MctsConfig { seed, max_in_flight, simulations: 24, ..config(algorithm) };
            let budget = Budget::full(24);
            let rec = Recording::new(Material::default());
            let mut together: Vec<Search> =
                games.iter().enumerate().map(|(i, g)| Search::new(g.clone(), cfg(i as u64)).unwrap()).collect();
            let batched = drive_together(&mut together, &rec, budget, 3);
            let biggest = rec.batches.borrow().iter().copied().max().unwrap();
            assert!(biggest >= 16, "{algorithm:?}: batches of at most {biggest}");
            for (i, g) in games.iter().enumerate() {
                let mut alone = Search::new(g.clone(), cfg(i as u64)).unwrap();
                let mut outs = Vec::new();
                for _ in 0..3 {
                    if alone.game().outcome().is_some() {
                        break;
                    }
                    let out = alone.search(&Material::default(), budget).unwrap();
                    check_outcome(&alone, &out);
                    alone.advance(out.best).unwrap();
                    outs.push(out);
                }
                assert_eq!(outs, batched[i], "{algorithm:?} in flight {max_in_flight}, game {i}");
            }
        }
    }
}

#[test]
fn search_many_matches_searching_alone() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let games: Vec<Game> = (0..8).map(|i| random_game(&mut rng, 6 + i)).filter(|g| g.outcome().is_none()).collect();
    let cfg = |seed| MctsConfig { seed, ..config(Algorithm::Gumbel) };
    // Playout-cap randomisation: every other game gets the fast budget.
    let budgets: Vec<Budget> = (0..games.len()).map(|i| if i % 2 == 0 { Budget::full(32) } else { Budget::fast(8) }).collect();
    let mut many: Vec<Search> = games.iter().enumerate().map(|(i, g)| Search::new(g.clone(), cfg(i as u64)).unwrap()).collect();
    let rec = Recording::new(Material::default());
    let outs = draughts_mcts::search_many(&mut many, &budgets, &rec).unwrap();
    assert_eq!(rec.batches.borrow()[0], games.len(), "all roots in the first batch");
    for (i, g) in games.iter().enumerate() {
        let mut alone = Search::new(g.clone(), cfg(i as u64)).unwrap();
        let out = alone.search(&Material::default(), budgets[i]).unwrap();
        assert_eq!(out, outs[i], "game {i}");
        assert_eq!(out.kind, budgets[i].kind);
    }
    assert!(matches!(draughts_mcts::search_many(&mut many, &[], &rec), Err(SearchError::NoBudget)));
}

#[test]
fn searches_are_send() {
    fn send<T: Send>() {}
    send::<Search>();
    send::<SearchOutcome>();
    send::<ExactEndgame>();
}

#[test]
fn virtual_loss_spreads_leaves_of_one_search() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let rec = Recording::new(Material::default());
        let mut s = Search::new(Game::new(Rules::FMJD), MctsConfig { max_in_flight: 8, ..config(algorithm) }).unwrap();
        let out = s.search(&rec, Budget::full(64)).unwrap();
        check_outcome(&s, &out);
        assert_eq!(out.simulations, 64);
        let batches = rec.batches.borrow();
        assert!(batches.iter().any(|&b| b >= 4), "{algorithm:?}: {batches:?}");
        assert!(batches.iter().all(|&b| b <= 8), "{algorithm:?}: {batches:?}");
        assert_eq!(batches.iter().sum::<usize>(), 65, "the root and 64 leaves, each evaluated once");
    }
}

struct Broken(usize);

impl Evaluator for Broken {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        match self.0 {
            0 => Ok(vec![]),
            1 => Ok(batch.iter().map(|r| Evaluation { policy: vec![1.0; r.moves.len() + 1], ..Evaluation::uniform_draw(0) }).collect()),
            2 => Ok(batch.iter().map(|r| Evaluation { wdl: [f32::NAN, 0.0, 0.0], ..Evaluation::uniform_draw(r.moves.len()) }).collect()),
            _ => Err(EvalError::new("inference thread is gone")),
        }
    }
}

#[test]
fn bad_evaluators_give_errors_not_panics() {
    for k in 0..4 {
        let mut s = Search::new(Game::new(Rules::FMJD), config(Algorithm::Gumbel)).unwrap();
        let e = s.search(&Broken(k), Budget::full(8)).unwrap_err();
        let text = e.to_string();
        match k {
            0 => assert!(text.contains("0 evaluations for 1"), "{text}"),
            1 => assert!(text.contains("10 entries for 9 legal moves") && text.contains("W:W31-50:B1-20"), "{text}"),
            2 => assert!(text.contains("NaN"), "{text}"),
            _ => assert!(text.contains("inference thread is gone"), "{text}"),
        }
        // The search is usable afterwards.
        assert_eq!(s.in_flight(), 0);
        let out = s.search(&Uniform, Budget::full(8)).unwrap();
        check_outcome(&s, &out);
    }
}

#[test]
fn tickets_and_moves_are_checked() {
    let mut s = Search::new(Game::new(Rules::FMJD), config(Algorithm::Puct)).unwrap();
    s.start(Budget::full(4)).unwrap();
    let Step::Eval { ticket, request } = s.step() else { panic!("root request expected") };
    assert!(matches!(s.step(), Step::Wait));
    assert!(matches!(s.start(Budget::full(4)), Err(SearchError::Busy(1))));
    let mv = request.moves[0];
    assert!(matches!(s.advance(mv), Err(SearchError::Busy(1))));
    let eval = Uniform.evaluate(std::slice::from_ref(&request)).unwrap().remove(0);
    s.provide(ticket, eval.clone()).unwrap();
    assert!(matches!(s.provide(ticket, eval), Err(SearchError::UnknownTicket(_))));
    while let Step::Eval { ticket, request } = s.step() {
        let e = Uniform.evaluate(&[request]).unwrap().remove(0);
        s.provide(ticket, e).unwrap();
    }
    assert!(matches!(s.step(), Step::Done));
    let black_move = game("B:W31-50:B1-20").legal_moves()[0];
    assert!(matches!(s.advance(black_move), Err(SearchError::IllegalMove { .. })));
    assert!(s.set_gumbel_noise(vec![0.0; 3]).is_err());
    let fresh = Search::new(Game::new(Rules::FMJD), config(Algorithm::Puct)).unwrap();
    assert!(matches!(fresh.outcome(), Err(SearchError::NotSearched)));
}

#[test]
fn temperature_sampling_is_seeded_and_follows_the_target() {
    let mut s = Search::new(Game::new(Rules::FMJD), MctsConfig { simulations: 90, ..config(Algorithm::Puct) }).unwrap();
    let out = s.search(&Material::default(), s.config().full_budget()).unwrap();
    let mut r1 = ChaCha8Rng::seed_from_u64(1);
    let mut r2 = ChaCha8Rng::seed_from_u64(1);
    let a: Vec<_> = (0..50).map(|_| out.pick_move(1.0, &mut r1)).collect();
    let b: Vec<_> = (0..50).map(|_| out.pick_move(1.0, &mut r2)).collect();
    assert_eq!(a, b);
    assert_eq!(out.pick_move(0.0, &mut r1), out.best);
    // At temperature 1 the frequencies follow the visit distribution.
    let n = 4000;
    let mut counts = std::collections::HashMap::new();
    for _ in 0..n {
        *counts.entry(out.pick_move(1.0, &mut r1)).or_insert(0) += 1;
    }
    for (mv, p) in &out.policy_target {
        let f = *counts.get(mv).unwrap_or(&0) as f32 / n as f32;
        assert!((f - p).abs() < 0.03, "{mv}: {f} vs {p}");
    }
}

/// Proven results travel up the tree (MCTS-Solver): a forced win found deep in the tree is
/// played, a proven loss is avoided while another move exists, and an all-lost root is a proven
/// loss.
#[test]
fn proven_wins_and_losses_propagate() {
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        // White to move: 32-27 forces 22x31 (Black's only man must take), then 36x27 takes
        // Black's last piece. A uniform evaluator knows nothing; only the proof finds a win,
        // and the move played must be a proven one (its completed value exactly 1).
        let mut s = Search::new(game("W:W32,36,47:B22"), config(algorithm)).unwrap();
        let out = s.search(&Uniform, Budget::full(400)).unwrap();
        check_outcome(&s, &out);
        let played = out.children.iter().find(|c| c.mv == out.best).unwrap();
        assert_eq!(played.q, Some(1.0), "{algorithm:?}: {:?}", out.children);
        let win = hub(s.game(), "32-27");
        assert_eq!(out.root_value, 1.0, "{algorithm:?}");
        assert!(out.simulations < 400, "{algorithm:?}: a proven root stops the search");
        // From Black's side after 32-27: its only move is forced and loses: a proven loss.
        let mut g = s.game().clone();
        g.play(win).unwrap();
        let mut s = Search::new(g, config(algorithm)).unwrap();
        let out = s.search(&Uniform, Budget::full(50)).unwrap();
        assert_eq!(out.root_value, -1.0, "{algorithm:?}");
        assert_eq!(out.root_wdl, [0.0, 0.0, 1.0]);
    }
}
