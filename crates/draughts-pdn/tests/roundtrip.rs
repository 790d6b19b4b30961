//! Random legal games survive write -> read unchanged.

use std::io::BufReader;

use draughts_core::{Game, Position, Rules};
use draughts_pdn::{GameResult, PdnGame, Reader, Writer, SEVEN_TAG_ROSTER};
use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Start positions: the standard start, Black to move, kings with ambiguous captures, and a
/// crowded middle game.
const STARTS: [&str; 5] = [
    "W:W31-50:B1-20",
    "B:W28,32,K46:B12,19,K5",
    "W:WK47:B14,19,29,31,42",
    "W:WK1,K46,28,33,38:BK5,K50,12,19,24",
    "B:W25-27,30-40,K10:B11-20,K45",
];

/// Plays random legal moves from `start` until the game ends or `max_plies`.
fn random_game(seed: u64, start: Position, rules: Rules, max_plies: usize) -> Game {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::from_position(start, rules);
    while game.outcome().is_none() && game.ply() < max_plies {
        let moves = game.legal_moves();
        let mv = *moves.choose(&mut rng).expect("a game that is not over has a move");
        game.play_unchecked(mv);
    }
    game
}

fn tag_value() -> impl Strategy<Value = String> {
    // Any text without control characters (a tag is one line), quotes and backslashes included.
    prop_oneof!["\\PC{0,24}", "[\"\\\\ a-z]{0,8}"]
}

fn extra_tag_name() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9_]{0,12}".prop_filter("not a tag the writer generates", |n| {
        !SEVEN_TAG_ROSTER.iter().chain(&["GameType", "SetUp", "FEN"]).any(|r| r.eq_ignore_ascii_case(n))
    })
}

#[derive(Debug, Clone)]
struct Spec {
    seed: u64,
    start: usize,
    plies: usize,
    result: usize,
    roster: Vec<String>,
    extra: Vec<(String, String)>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<u64>(),
        0..STARTS.len(),
        0usize..160,
        0..GameResult::ALL.len(),
        proptest::collection::vec(tag_value(), 6),
        proptest::collection::vec((extra_tag_name(), tag_value()), 0..4),
    )
        .prop_map(|(seed, start, plies, result, roster, extra)| Spec { seed, start, plies, result, roster, extra })
}

/// The game a spec describes, with its tags in the order the writer writes them, so a round
/// trip must give back exactly the same tag list.
fn build(spec: &Spec, rules: Rules) -> PdnGame {
    let start = Position::from_fen(STARTS[spec.start]).unwrap();
    let game = random_game(spec.seed, start, rules, spec.plies);
    let mut pdn = PdnGame::from_game(&game);
    if game.outcome().is_none() {
        pdn.result = GameResult::ALL[spec.result];
    }
    for (name, value) in ["Event", "Site", "Date", "Round", "White", "Black"].iter().zip(&spec.roster) {
        pdn.tags.push((name.to_string(), value.clone()));
    }
    pdn.tags.push(("Result".into(), pdn.result.to_pdn().into()));
    pdn.tags.push(("GameType".into(), "20".into()));
    if start != Position::start() {
        pdn.tags.push(("SetUp".into(), "1".into()));
        pdn.tags.push(("FEN".into(), start.to_fen()));
    }
    let mut seen: Vec<String> = Vec::new();
    for (name, value) in &spec.extra {
        if !seen.iter().any(|s| s.eq_ignore_ascii_case(name)) {
            seen.push(name.clone());
            pdn.tags.push((name.clone(), value.clone()));
        }
    }
    pdn
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn write_then_read_is_identity(
        specs in proptest::collection::vec(spec(), 1..4),
        rules_index in 0..Rules::PRESETS.len(),
        capacity in 1usize..64,
    ) {
        let rules = Rules::PRESETS[rules_index].1;
        let games: Vec<PdnGame> = specs.iter().map(|s| build(s, rules)).collect();
        let mut writer = Writer::new(Vec::new()).with_rules(rules);
        for g in &games {
            writer.write_game(g).unwrap();
        }
        let text = writer.into_inner();
        let reader = Reader::with_rules(BufReader::with_capacity(capacity, &text[..]), rules);
        let back: Vec<PdnGame> = reader.map(|g| g.unwrap()).collect();
        prop_assert_eq!(back.len(), games.len());
        for (i, (a, b)) in games.iter().zip(&back).enumerate() {
            prop_assert_eq!(b.number, i + 1);
            prop_assert_eq!(a.start, b.start);
            prop_assert_eq!(&a.moves, &b.moves);
            prop_assert_eq!(a.result, b.result);
            prop_assert_eq!(&a.tags, &b.tags);
        }
        // Writing what was read gives the same text.
        let mut again = Writer::new(Vec::new()).with_rules(rules);
        for g in &back {
            again.write_game(g).unwrap();
        }
        prop_assert_eq!(again.into_inner(), text);
    }
}
