//! Draw rules inside the search, and finished games.

use std::sync::atomic::AtomicBool;

use draughts_core::{Counters, DrawRules, Game, Position, Rules};
use draughts_engine::{Engine, EngineConfig, Limits, SearchResult, MATE};

fn search(game: &Game, depth: u32) -> SearchResult {
    let mut engine = Engine::new(EngineConfig { tt_mib: 4, ..EngineConfig::default() }).unwrap();
    engine.search(game, &Limits::depth(depth), &AtomicBool::new(false), &mut |_| {})
}

fn play(game: &mut Game, moves: &str) {
    for text in moves.split_whitespace() {
        let mv = game.position().parse_pdn_move(text).unwrap_or_else(|e| panic!("{e}"));
        game.play(mv).unwrap();
    }
}

/// A locked board: every man is blocked for ever and no capture can ever arise; the only moves
/// are two white kings shuffling between 41, 46 and 47 and two black kings between 4, 5 and 10.
/// White has an extra king (on 50, immobile), so the evaluation likes White, but the game can
/// only end by a draw rule.
const LOCKED: &str = "W:W26-40,K41,42-45,K47,48,49,K50:B1-3,K4,K5,6-9,11-25";

#[test]
fn forced_repetition_scores_zero() {
    let pos = Position::from_fen(LOCKED).unwrap();
    let r = search(&Game::from_position(pos, Rules::FMJD), 12);
    assert_eq!(r.best.map(|m| m.to_string()), Some("41-46".to_owned()));
    assert_eq!(r.score, 0);
    // Without any draw rule the same search sees only the extra king.
    let no_draws = Rules { draw: DrawRules::NONE, ..Rules::FMJD };
    let r = search(&Game::from_position(pos, no_draws), 12);
    assert!(r.score > 150, "score {}", r.score);
    // Without repetition, the 25-move rule ends it: seen from a counter near its limit.
    let no_progress_only = Rules::PROMOTE_IN_CAPTURE;
    let counters = Counters { no_progress: 44, ..Counters::default() };
    let r = search(&Game::with_counters(pos, counters, no_progress_only), 8);
    assert_eq!(r.score, 0);
    let r = search(&Game::with_counters(pos, Counters::default(), no_progress_only), 8);
    assert!(r.score > 150, "score {}", r.score);
}

/// White: a king and six men against a king and a man. The kings shuffle 50-44 / 1-7.
const WINNING: &str = "W:WK50,36-38,41-43:BK1,3";

#[test]
fn the_losing_side_takes_a_threefold_repetition() {
    let mut game = Game::from_position(Position::from_fen(WINNING).unwrap(), Rules::FMJD);
    // The start position occurs for the second time after four plies; after 44-50 Black can
    // make it three with 7-1.
    play(&mut game, "50-44 1-7 44-50 7-1 50-44 1-7 44-50");
    assert_eq!(game.repetition_count(), 2);
    let r = search(&game, 6);
    assert_eq!(r.best.map(|m| m.to_string()), Some("7-1".to_owned()));
    assert_eq!(r.score, 0);
    // Without the earlier moves, Black is simply lost.
    let fresh = Game::from_position(*game.position(), Rules::FMJD);
    assert!(search(&fresh, 6).score < -150);
}

#[test]
fn the_winning_side_avoids_the_repetition() {
    let mut game = Game::from_position(Position::from_fen(WINNING).unwrap(), Rules::FMJD);
    play(&mut game, "50-44 1-7 44-50 7-1 50-44 1-7");
    let r = search(&game, 6);
    let best = r.best.unwrap();
    assert_ne!(best.to_string(), "44-50", "walks into the threefold repetition");
    assert!(r.score > 150, "score {}", r.score);
    // 44-50 would indeed draw: Black answers 7-1.
    play(&mut game, "44-50");
    assert_eq!(search(&game, 6).score, 0);
}

#[test]
fn the_winning_side_avoids_the_no_progress_draw() {
    // 48 plies of king moves only: one more king move each and the 25-move rule draws. White
    // must move a man.
    let pos = Position::from_fen(WINNING).unwrap();
    let counters = Counters { no_progress: 48, ..Counters::default() };
    let game = Game::with_counters(pos, counters, Rules::FMJD);
    let r = search(&game, 6);
    let best = r.best.unwrap();
    assert!(best.is_irreversible(), "{best} lets the 25-move rule draw");
    assert!(r.score > 150, "score {}", r.score);
    // A king move would indeed draw: Black answers with a king move and the counter runs out.
    let mut after = game.clone();
    play(&mut after, "50-44");
    assert_eq!(after.counters().no_progress, 49);
    let reply = search(&after, 6);
    assert_eq!(reply.score, 0);
    assert!(reply.best.unwrap().is_king_move());
}

#[test]
fn finished_games_have_no_move() {
    // No legal move: Black's man on 45 is blocked by White's man on 50.
    let lost = Game::from_position(Position::from_fen("B:W50:B45").unwrap(), Rules::FMJD);
    let r = search(&lost, 4);
    assert_eq!((r.best, r.score, r.nodes), (None, -MATE, 0));
    // No pieces at all.
    let empty = Game::from_position(Position::from_fen("B:W28:B").unwrap(), Rules::FMJD);
    assert_eq!(search(&empty, 4).best, None);
    // Drawn by repetition.
    let mut drawn = Game::from_position(Position::from_fen("W:WK50:BK1").unwrap(), Rules::FMJD);
    play(&mut drawn, "50-44 1-7 44-50 7-1 50-44 1-7 44-50 7-1");
    assert!(drawn.outcome().is_some());
    let r = search(&drawn, 4);
    assert_eq!((r.best, r.score), (None, 0));
}

#[test]
fn a_side_without_moves_after_the_search_starts_is_lost() {
    // Black's men on 36 and 45 are blocked by White's men on 41, 47 and 50 and can capture
    // nothing. Moving the man on 30 keeps them blocked, and Black, with no legal move, loses.
    let pos = Position::from_fen("W:W41,46,47,50,30:B36,45").unwrap();
    let game = Game::from_position(pos, Rules::FMJD);
    let r = search(&game, 3);
    assert_eq!(r.score, MATE - 1, "{:?}", r);
}
