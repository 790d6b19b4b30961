//! The writer: exact output for hand-checked games, wrapping, escaping and refusals.

use draughts_core::{Game, Position, Rules};
use draughts_pdn::{game_to_string, write_game, GameResult, PdnGame, Reader, WriteError, Writer};

const SAMPLE: &str = include_str!("data/sample.pdn");

fn sample_games() -> Vec<PdnGame> {
    Reader::new(SAMPLE.as_bytes()).filter_map(Result::ok).collect()
}

#[test]
fn golden_output() {
    let games = sample_games();
    let first = game_to_string(&games[0]).unwrap();
    assert_eq!(
        first,
        "[Event \"Sample \\\"quoted\\\" event\"]\n\
         [Site \"Back\\\\slash\"]\n\
         [Date \"2024.01.01\"]\n\
         [Round \"1\"]\n\
         [White \"Alice\"]\n\
         [Black \"Bob\"]\n\
         [Result \"2-0\"]\n\
         [GameType \"20\"]\n\
         \n\
         1. 32-28 19-23 2. 28x19 14x23 3. 37-32 10-14 4. 41-37 5-10 2-0\n\
         \n"
    );
    // Black to move at the start: `1...`, and the set-up tags.
    let second = game_to_string(&games[1]).unwrap();
    assert!(
        second.ends_with(
            "[Black \"Dave\"]\n[Result \"2-0\"]\n[GameType \"20\"]\n[SetUp \"1\"]\n[FEN \"B:W28,32,K46:BK5,12,19\"]\n\n\
             1... 19-23 2. 28x19 5x41 3. 46x1 2-0\n\n"
        ),
        "{second}"
    );
    // The ambiguous capture keeps its landing path; the draw is written the draughts way.
    let third = game_to_string(&games[2]).unwrap();
    assert!(third.contains("[Date \"?\"]\n"), "{third}");
    assert!(third.ends_with("\n\n1. 47x38x24x13x36 14-20 1-1\n\n"), "{third}");
    // The other results.
    let tokens: Vec<String> = games
        .iter()
        .map(|g| game_to_string(g).unwrap().trim_end().rsplit(' ').next().unwrap().to_owned())
        .collect();
    assert_eq!(tokens, ["2-0", "2-0", "1-1", "2-0", "0-2", "1-1", "0-0", "*", "2-0", "0-2"]);
}

#[test]
fn everything_written_reads_back() {
    let games = sample_games();
    let mut out = Vec::new();
    {
        let mut w = Writer::new(&mut out);
        for g in &games {
            w.write_game(g).unwrap();
        }
    }
    let back: Vec<PdnGame> = Reader::new(&out[..]).map(Result::unwrap).collect();
    assert_eq!(back.len(), games.len());
    for (a, b) in games.iter().zip(&back) {
        assert_eq!((a.start, &a.moves, a.result), (b.start, &b.moves, b.result));
        for name in ["Event", "White", "Black"] {
            assert_eq!(a.tag(name).unwrap_or("?"), b.tag(name).unwrap(), "{name}");
        }
    }
}

#[test]
fn long_games_wrap_at_80_columns() {
    // A deterministic long game: always the first legal move.
    let mut game = Game::new(Rules::FMJD);
    while game.outcome().is_none() && game.ply() < 300 {
        let mv = game.legal_moves()[0];
        game.play(mv).unwrap();
    }
    assert!(game.ply() > 40, "{}", game.ply());
    let pdn = PdnGame::from_game(&game);
    let text = game_to_string(&pdn).unwrap();
    let movetext: Vec<&str> = text.lines().skip_while(|l| !l.is_empty()).filter(|l| !l.is_empty()).collect();
    assert!(movetext.len() > 3, "{text}");
    for line in &movetext {
        assert!(line.len() <= 80, "{line:?}");
        // A move number is never separated from its move.
        assert!(!line.ends_with('.'), "{line:?}");
    }
    // Lines are filled: each line plus the next unit would pass 80.
    for pair in movetext.windows(2) {
        let next = pair[1].split(' ').take(2).collect::<Vec<_>>().join(" ");
        let unit = if next.ends_with('.') || next.contains(". ") { next } else { pair[1].split(' ').next().unwrap().to_owned() };
        assert!(pair[0].len() + 1 + unit.len() > 80, "{pair:?}");
    }
    let back = Reader::new(text.as_bytes()).next().unwrap().unwrap();
    assert_eq!(back.moves, pdn.moves);
    assert_eq!(back.result, pdn.result);
    assert_eq!(pdn.result, game.outcome().map_or(GameResult::Unknown, GameResult::from));
}

#[test]
fn tags_are_escaped_and_checked() {
    let mut g = PdnGame::default();
    g.set_tag("White", "Quote \" back \\ new\nline");
    g.set_tag("Annotator", "X");
    g.set_tag("FEN", "ignored: the start position decides");
    let text = game_to_string(&g).unwrap();
    assert!(text.contains("[White \"Quote \\\" back \\\\ new line\"]\n"), "{text}");
    assert!(text.contains("[GameType \"20\"]\n[Annotator \"X\"]\n\n*\n\n"), "{text}");
    assert!(!text.contains("FEN"), "{text}");
    let back = Reader::new(text.as_bytes()).next().unwrap().unwrap();
    assert_eq!(back.white(), Some("Quote \" back \\ new line"));

    g.set_tag("Bad Name", "x");
    let mut out = Vec::new();
    let e = write_game(&mut out, &g).unwrap_err();
    assert!(matches!(&e, WriteError::BadTag { name, .. } if name == "Bad Name"), "{e}");
    assert!(out.is_empty());
}

#[test]
fn illegal_moves_are_refused_before_writing() {
    let start = Position::start();
    let other = Position::from_fen("W:W28:B23").unwrap();
    let mut g = PdnGame::new(start);
    g.moves.push(start.legal_moves()[0]);
    g.moves.push(other.legal_moves()[0]);
    let mut out = Vec::new();
    let e = write_game(&mut out, &g).unwrap_err();
    assert!(matches!(&e, WriteError::Replay(r) if r.ply == 1), "{e}");
    assert!(e.to_string().contains("ply 1: 28x19x23 is not a legal move in B:"), "{e}");
    assert!(out.is_empty());
    assert!(g.replay(&Rules::FMJD).is_err());
}
