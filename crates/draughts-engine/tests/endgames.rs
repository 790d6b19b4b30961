//! Endgame databases inside the search: root moves that keep the value, probes in the tree, and
//! no probe where FMJD's lone-king rules can decide.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use draughts_core::{Color, Game, Position, Rules};
use draughts_egtb::{build, Material, Tablebase, Wdl};
use draughts_engine::{Endgames, Engine, EngineConfig, Limits, SearchResult, MATE_BOUND, TB_WIN};

/// Every table of up to three pieces, solved once for all tests.
fn endgames() -> Endgames {
    static TB: OnceLock<Arc<Tablebase>> = OnceLock::new();
    let tb = TB.get_or_init(|| Arc::new(build::solve_all(3)));
    Endgames::new(tb.clone())
}

fn search(game: &Game, depth: u32, egtb: Option<Endgames>) -> SearchResult {
    let mut engine = Engine::new(EngineConfig { tt_mib: 4, egtb, ..EngineConfig::default() }).unwrap();
    engine.search(game, &Limits::depth(depth), &AtomicBool::new(false), &mut |_| {})
}

#[test]
fn the_root_keeps_only_the_moves_that_keep_the_win() {
    // Black to move wins only by 28-5: White's king on 46 must then step along the long diagonal
    // into a capture. Every other move draws or loses. (Under FMJD the 5-move rule counts in a
    // king against a king, so no probe; these rules have no lone-king counter.)
    let game = Game::from_position(Position::from_fen("B:WK46:BK28").unwrap(), Rules::NO_CAPTURE_25);
    let eg = endgames();
    assert_eq!(eg.pieces(), 3);
    let tb = eg.tablebase();
    let pos = *game.position();
    let winning: Vec<String> = pos.legal_moves().iter().filter(|m| tb.probe(&pos.play(m)).unwrap() == Wdl::Loss).map(|m| m.to_string()).collect();
    assert_eq!(winning, ["28-5"]);
    for depth in [1, 2, 6] {
        let r = search(&game, depth, Some(eg.clone()));
        assert_eq!(r.best.unwrap().to_string(), "28-5", "depth {depth}");
        assert!(r.tbhits >= 1);
    }
}

#[test]
fn a_capture_into_the_databases_scores_their_value() {
    // White's only move is 32x21 (taking 27), leaving three men: a database position.
    let pos = Position::from_fen("W:W32,33:B18,27").unwrap();
    let moves = pos.legal_moves();
    assert_eq!(moves.len(), 1);
    let after = pos.play(&moves[0]);
    let eg = endgames();
    let v = eg.tablebase().probe(&after).unwrap().flip();
    let want = match v {
        Wdl::Win => TB_WIN - 1,
        Wdl::Draw => 0,
        Wdl::Loss => -TB_WIN + 1,
    };
    let game = Game::from_position(pos, Rules::FMJD);
    let r = search(&game, 1, Some(eg));
    assert_eq!(r.score, want, "database value {v:?}");
    assert!(r.tbhits >= 1);
    // Without the databases the same search scores by evaluation.
    let r = search(&game, 1, None);
    assert_eq!(r.tbhits, 0);
    assert!(r.score.abs() < TB_WIN - 200);
}

#[test]
fn database_wins_are_found_from_more_pieces() {
    // Four pieces (beyond the three-piece tables): searching forward, the engine meets database
    // positions and scores a database win between the evaluations and the mates.
    let eg = endgames();
    let tb = eg.tablebase();
    // A white man on 21 and one on 33 against a black man: find a won one in the database.
    let pos = Position::from_fen("W:W21,33:B18").unwrap();
    assert_eq!(tb.probe(&pos).unwrap(), Wdl::Win, "the test's database position");
    let r = search(&Game::from_position(pos, Rules::FMJD), 8, Some(eg));
    assert!(r.score >= TB_WIN - 100 || r.score >= MATE_BOUND, "score {}", r.score);
}

#[test]
fn no_probe_where_the_lone_king_rules_can_decide() {
    // Two kings against a lone king that the database says White wins (a trap on the long
    // diagonal): under FMJD the 5-move rule counts here, so the search never probes; under rules
    // without it, the root takes the database's value.
    let eg = endgames();
    let tb = eg.tablebase();
    let m: Material = "0201".parse().unwrap();
    let table = tb.table(m).unwrap();
    let ix = table.indexer();
    let pos = (0..ix.size())
        .filter_map(|i| ix.position(i))
        .find(|p| !p.has_capture() && tb.probe(p).unwrap() == Wdl::Win && p.side_to_move() == Color::White)
        .expect("a quiet win of two kings against one");
    let fmjd = search(&Game::from_position(pos, Rules::FMJD), 4, Some(eg.clone()));
    assert_eq!(fmjd.tbhits, 0, "{pos}");
    let other = search(&Game::from_position(pos, Rules::NO_CAPTURE_25), 4, Some(eg));
    assert!(other.tbhits >= 1, "{pos}");
}

#[test]
fn every_forced_result_the_search_finds_agrees_with_the_databases() {
    // Seeded random positions of up to three pieces, searched without the databases and without
    // draw rules (the databases know only the move rules): a mate the search proves must be the
    // databases' win or loss, and a database draw is never proved won or lost.
    let eg = endgames();
    let tb = eg.tablebase();
    let rules = Rules { draw: draughts_core::DrawRules::NONE, ..Rules::FMJD };
    let mut seed = 0x5EED_u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        seed >> 33
    };
    let mut proved = 0;
    for m in Material::all_up_to(3) {
        let table = tb.table(m).unwrap();
        let ix = table.indexer();
        let mut n = 0;
        while n < 25 {
            let Some(pos) = ix.position(next() % ix.size()) else { continue };
            n += 1;
            let r = search(&Game::from_position(pos, rules), 7, None);
            let v = tb.probe(&pos).unwrap();
            if let Some(d) = draughts_engine::mate_distance(r.score) {
                proved += 1;
                assert_eq!(v, if d >= 0 { Wdl::Win } else { Wdl::Loss }, "{pos}: search {d}, database {v}");
            }
        }
    }
    assert!(proved >= 100, "only {proved} forced results found");
}
