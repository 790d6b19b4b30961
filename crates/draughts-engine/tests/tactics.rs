//! Combinations ("coups"): sacrifices that force the opponent's captures and end in a capture of
//! more pieces. Each line was checked by hand; the first test replays it and checks the claims
//! (the defender's replies are forced, the material won), so a typo in a position cannot
//! slip through. Then the engine must find the first move at a fixed depth, for both colours
//! (every position is also tried turned 180 degrees with the colours swapped).

use std::sync::atomic::AtomicBool;

use draughts_core::{Color, Game, Move, Position, Rules};
use draughts_engine::{Engine, EngineConfig, Limits, SearchOptions, MATE_BOUND};

struct Shot {
    /// What happens, in words.
    idea: &'static str,
    fen: &'static str,
    /// The combination in Hub notation (captures list every piece taken, so nothing is
    /// ambiguous), attacker first. The defender's moves in it are forced, or else every other
    /// choice loses as well (the test checks this by search).
    line: &'static [&'static str],
    /// Material won at the end of the line, in men (a king counts three).
    gain: i32,
    /// The depth at which the engine must find the first move.
    depth: u32,
}

const SHOTS: &[Shot] = &[
    Shot {
        // Built by hand: 28-23 vacates 28, so 19 must take into it; 33 then jumps 28, 18 and 9
        // and crowns on 4.
        idea: "one for three, crowning",
        fen: "W:W28,29,33,39,40,45:B1,2,6,9,18,19",
        line: &["28-23", "19x28x23", "33x4x9x18x28"],
        gain: 4,
        depth: 3,
    },
    Shot {
        // Built by hand: two sacrifices pull Black's man from 18 to 29 and then to 40, where 45
        // jumps it and runs on over 30, 20 and 10 to crown on 5.
        idea: "two for four, crowning",
        fen: "W:W28,39,40,45,46,47:B1,2,10,18,20,30",
        line: &["28-23", "18x29x23", "40-34", "29x40x34", "45x5x10x20x30x40"],
        gain: 4,
        depth: 5,
    },
    Shot {
        // From an engine game, checked by hand: the same theme in a full middle game. Black may
        // also take 19x28 at the first move; the search sees that this loses as well.
        idea: "two for four in the middle game",
        fen: "W:W27,28,32,36-40,45-48:B7-13,16,18-20,30",
        line: &["28-23", "18x29x23", "40-34", "29x40x34", "45x5x10x20x30x40"],
        gain: 4,
        depth: 7,
    },
    Shot {
        // From an engine game, checked by hand: White lets Black crown on 47, decoys the new
        // king to 20 with 29-24, and 25 takes the king and three men, crowning on 1.
        idea: "let the opponent crown, then take the king",
        fen: "W:W15,25,29,30,37,39,43,44,46:B3,5,7,9,11,16,18,19,27",
        line: &["37-31", "27x36x31", "46-41", "36x47x41", "29-24", "47x20x24", "25x1x7x18x19x20"],
        gain: 3,
        depth: 9,
    },
    Shot {
        // From an engine game, checked by hand: the same decoy; the king taken on 29 by 34,
        // which runs over 19 and 10 to crown on 5.
        idea: "crown-and-capture decoy",
        fen: "W:W28,33,34,36,40,44,45,47:B4,8,10,15,19,24,25,27",
        line: &["36-31", "27x36x31", "47-41", "36x47x41", "44-39", "47x29x33", "34x5x10x19x29"],
        gain: 2,
        depth: 9,
    },
    Shot {
        // From an engine game, checked by hand. Black to move: 24-29 and 13-18 bring White's
        // man to 12, 21-26 makes it take 17 and land on 21, and 16 jumps 21, 31 and 41 to crown.
        idea: "three sacrifices, three back and a king (Black)",
        fen: "B:W25,31,34,40,41,43-45,49:B3,5,8,10,13,16,17,21,24",
        line: &["24-29", "34x23x29", "13-18", "23x12x18", "21-26", "12x21x17", "16x47x21x31x41"],
        gain: 2,
        depth: 9,
    },
    Shot {
        // From an engine game, checked by hand. Black to move: three men given to steer White's
        // man 32 to 23, then 19 jumps 23, 33 and 43 and crowns on 48.
        idea: "three sacrifices and a crowning capture (Black)",
        fen: "B:W30,32-36,40,41,43,45,46,49,50:B1-3,9-15,19,21,24",
        line: &["21-27", "32x21x27", "12-17", "21x12x17", "13-18", "12x23x18", "19x48x23x33x43"],
        gain: 2,
        depth: 9,
    },
    Shot {
        // From an engine game, checked by hand. Black to move: after the exchange on 29 and 30
        // and 13-19, White's man lands on 13, and 9 takes five: 13, 23, 33, 43 and 44.
        idea: "five-piece capture (Black)",
        fen: "B:W24,30,33-36,39,41-44,47:B4,7,9,11-14,16,22,23,25,27",
        line: &["23-29", "34x23x29", "25x34x30", "39x30x34", "13-19", "24x13x19", "9x40x13x23x33x43x44"],
        gain: 3,
        depth: 9,
    },
    Shot {
        // From an engine game, checked by hand. Black to move: three sacrifices pull White's
        // man to 22 and open 32 and 42; 17 takes three and crowns on 48.
        idea: "three sacrifices, crowning on 48 (Black)",
        fen: "B:W26,32,33,35,36,38,39,42,45-47,50:B1,3,5-7,11-14,17,21,24",
        line: &["24-30", "35x24x30", "13-19", "24x13x19", "12-18", "13x22x18", "17x48x22x32x42"],
        gain: 2,
        depth: 9,
    },
];

fn material(pos: &Position, c: Color) -> i32 {
    (pos.men(c).count() + 3 * pos.kings(c).count()) as i32
}

fn balance(pos: &Position, c: Color) -> i32 {
    material(pos, c) - material(pos, !c)
}

fn parse(pos: &Position, text: &str) -> Move {
    pos.parse_hub_move(text).unwrap_or_else(|e| panic!("{e}"))
}

fn best(pos: Position, depth: u32) -> (Option<Move>, i32) {
    let mut engine = Engine::new(EngineConfig { tt_mib: 4, ..EngineConfig::default() }).unwrap();
    let game = Game::from_position(pos, Rules::FMJD);
    let r = engine.search(&game, &Limits::depth(depth), &AtomicBool::new(false), &mut |_| {});
    (r.best, r.score)
}

#[test]
fn lines_are_forced_and_win_material() {
    assert!(SHOTS.len() >= 6);
    for shot in SHOTS {
        let start = Position::from_fen(shot.fen).unwrap();
        assert!(!start.has_capture(), "{}: the shot must start with a quiet move", shot.idea);
        let first = parse(&start, shot.line[0]);
        assert!(start.play(&first).has_capture(), "{}: the first move must offer a capture", shot.idea);
        let us = start.side_to_move();
        let mut pos = start;
        for (ply, text) in shot.line.iter().enumerate() {
            let mv = parse(&pos, text);
            if pos.side_to_move() != us {
                // The defender's move is forced, or every other choice loses too.
                for other in pos.legal_moves().into_iter().filter(|m| *m != mv) {
                    let depth = shot.depth.saturating_sub(ply as u32 + 1).max(1);
                    let (_, score) = best(pos.play(&other), depth);
                    assert!(score >= 150, "{}: the defence {other} holds ({score})", shot.idea);
                }
            }
            pos = pos.play(&mv);
        }
        let gain = balance(&pos, us) - balance(&start, us);
        assert!(gain >= shot.gain, "{}: won {gain} men, expected {}", shot.idea, shot.gain);
    }
}

#[test]
fn engine_finds_the_combinations() {
    for shot in SHOTS {
        let pos = Position::from_fen(shot.fen).unwrap();
        let want = parse(&pos, shot.line[0]);
        let (got, score) = best(pos, shot.depth);
        assert_eq!(got, Some(want), "{} ({}) at depth {}", shot.idea, shot.fen, shot.depth);
        assert!(score >= 150, "{}: score {score}", shot.idea);
    }
}

#[test]
fn engine_finds_the_combinations_with_colours_swapped() {
    for shot in SHOTS {
        let pos = Position::from_fen(shot.fen).unwrap();
        let want = parse(&pos, shot.line[0]).flipped();
        let flipped = pos.flipped();
        assert!(flipped.legal_moves().contains(&want));
        let (got, score) = best(flipped, shot.depth);
        assert_eq!(got, Some(want), "{} flipped ({})", shot.idea, flipped.to_fen());
        assert!(score >= 150, "{} flipped: score {score}", shot.idea);
    }
}

/// Each search option alone, and all of them, as `SearchOptions`.
fn option_sets() -> Vec<(String, SearchOptions)> {
    let names = ["full_time", "qs_threat", "qs_promotions", "single_reply", "probcut", "lmr_early", "lmr_history", "lmr_cut", "lmr_log", "iir", "iir_cut", "cont_history", "corr_history", "lmp", "improving", "drawish", "singular", "singular_negative", "rfp", "futility", "lazy_eval", "qs_exchanges", "policy_order"];
    let mut sets: Vec<(String, SearchOptions)> = names
        .iter()
        .map(|name| {
            let mut o = SearchOptions::BASELINE;
            o.set(name, "on").unwrap();
            (name.to_string(), o)
        })
        .collect();
    let mut nonpv = SearchOptions::BASELINE;
    nonpv.set("lmr_nonpv_moves", "1").unwrap();
    sets.push(("lmr_nonpv_moves=1".into(), nonpv));
    // `improving` acts only with `lmp`.
    let mut improving = SearchOptions::BASELINE;
    improving.parse_list("lmp improving").unwrap();
    sets.push(("lmp improving".into(), improving));
    let mut all = SearchOptions::BASELINE;
    all.parse_list("full_time qs_threat qs_promotions single_reply probcut lmr_early lmr_history lmr_cut lmr_log iir iir_cut cont_history corr_history lmp improving drawish singular singular_all singular_negative rfp futility lazy_eval qs_exchanges policy_order lmr_nonpv_moves=1").unwrap();
    sets.push(("all".into(), all));
    sets
}

#[test]
fn every_search_option_finds_the_combinations_and_is_deterministic() {
    for (name, options) in option_sets() {
        for shot in SHOTS {
            let pos = Position::from_fen(shot.fen).unwrap();
            let want = parse(&pos, shot.line[0]);
            let search = |limits: &Limits| {
                let mut engine = Engine::new(EngineConfig { tt_mib: 4, options, ..EngineConfig::default() }).unwrap();
                engine.search(&Game::from_position(pos, Rules::FMJD), limits, &AtomicBool::new(false), &mut |_| {})
            };
            // Reductions and ProbCut may need a ply more than the plain search.
            let r = search(&Limits::depth(shot.depth + 2));
            assert!(r.score >= 150, "{name}: {}: score {}", shot.idea, r.score);
            // The shot's move, or another that wins as much: the plain search, one ply deeper
            // than the shot needs, agrees that the opponent is lost after it.
            let got = r.best.unwrap();
            if got != want {
                let (_, reply) = best(pos.play(&got), shot.depth + 1);
                assert!(reply <= -150, "{name}: {} ({}): {got} instead of {want}, and it does not win ({reply})", shot.idea, shot.fen);
            }
            let (a, b) = (search(&Limits::nodes(20_000)), search(&Limits::nodes(20_000)));
            assert_eq!((a.best, a.score, a.nodes, &a.pv), (b.best, b.score, b.nodes, &b.pv), "{name}: {}", shot.idea);
        }
    }
}

#[test]
fn threads_find_the_combinations() {
    // More threads than this machine may have cores: the helpers race for the table, and the
    // main thread's result must still be the shot (or another winning move).
    for threads in [2, 4] {
        for shot in SHOTS {
            let pos = Position::from_fen(shot.fen).unwrap();
            let want = parse(&pos, shot.line[0]);
            let options = SearchOptions { threads, ..SearchOptions::default() };
            let mut engine = Engine::new(EngineConfig { tt_mib: 4, options, ..EngineConfig::default() }).unwrap();
            let game = Game::from_position(pos, Rules::FMJD);
            let r = engine.search(&game, &Limits::depth(shot.depth + 2), &AtomicBool::new(false), &mut |_| {});
            assert!(r.score >= 150, "{threads} threads: {}: score {}", shot.idea, r.score);
            assert_eq!(r.depth, shot.depth + 2, "{threads} threads: {}", shot.idea);
            let got = r.best.unwrap();
            if got != want {
                let (_, reply) = best(pos.play(&got), shot.depth + 1);
                assert!(reply <= -150, "{threads} threads: {}: {got} instead of {want}, and it does not win ({reply})", shot.idea);
            }
        }
    }
}

#[test]
fn a_shallow_search_misses_the_two_move_combination() {
    // The second shot needs two sacrifices: at depth 1 the engine cannot see it. This keeps
    // the depths above honest (a search that found everything at depth 1 would hide bugs).
    let pos = Position::from_fen(SHOTS[1].fen).unwrap();
    let (got, _) = best(pos, 1);
    assert_ne!(got, Some(parse(&pos, SHOTS[1].line[0])));
}

/// Plays the engine against itself from `fen` and returns the game.
fn self_play(fen: &str, depth: u32, max_plies: usize) -> Game {
    let mut engine = Engine::new(EngineConfig { tt_mib: 4, ..EngineConfig::default() }).unwrap();
    let mut game = Game::from_position(Position::from_fen(fen).unwrap(), Rules::FMJD);
    while game.outcome().is_none() && game.ply() < max_plies {
        let r = engine.search(&game, &Limits::depth(depth), &AtomicBool::new(false), &mut |_| {});
        game.play(r.best.expect("a move while the game is on")).unwrap();
    }
    game
}

#[test]
fn king_runs_down_a_man() {
    // The king catches the man before it crowns, from either side of the board.
    for fen in ["W:WK46:B17", "W:WK50:B21", "B:WK46:B16"] {
        let game = self_play(fen, 8, 20);
        let outcome = game.outcome().unwrap_or_else(|| panic!("{fen}: no result after {} plies", game.ply()));
        assert_eq!(outcome.white_score(), 1.0, "{fen}: {outcome}");
    }
}

#[test]
fn a_won_king_ending_is_scored_as_a_win() {
    let pos = Position::from_fen("W:WK46:B17").unwrap();
    let (got, score) = best(pos, 10);
    assert!(got.is_some());
    assert!(score >= MATE_BOUND, "score {score}");
}
