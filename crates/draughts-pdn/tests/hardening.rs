//! Real-world PDN: what the reader accepts (with which warnings), and the broken games it still
//! reports, with game and line. One example of each kind, in tests/data/accepted.pdn and
//! tests/data/rejected.pdn, and encodings built here byte by byte.

use std::io::BufReader;

use draughts_core::{Color, MoveError, Position, Rules};
use draughts_pdn::{check, PdnError, PdnErrorKind, PdnGame, PdnWarning, PdnWarningKind, Reader};

const ACCEPTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/accepted.pdn");
const REJECTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/rejected.pdn");

fn read_file(path: &str, capacity: usize) -> Vec<Result<PdnGame, PdnError>> {
    let file = std::fs::File::open(path).expect("test data");
    Reader::new(BufReader::with_capacity(capacity, file)).collect()
}

fn read_bytes(bytes: &[u8]) -> Vec<Result<PdnGame, PdnError>> {
    Reader::new(bytes).collect()
}

fn hub(game: &PdnGame) -> Vec<String> {
    game.moves.iter().map(|m| m.to_hub()).collect()
}

fn warning(game: usize, line: usize, kind: PdnWarningKind) -> PdnWarning {
    PdnWarning { game, line, kind }
}

#[test]
fn accepted_games_and_their_warnings() {
    use PdnWarningKind::*;
    // A tiny buffer too, so that padded squares and look-ahead straddle refills.
    for capacity in [1, 5, 8192] {
        let games = read_file(ACCEPTED, capacity);
        let games: Vec<&PdnGame> = games.iter().map(|g| g.as_ref().expect("every game is accepted")).collect();
        assert_eq!(games.len(), 13, "capacity {capacity}");
        for (i, g) in games.iter().enumerate() {
            assert_eq!(g.number, i + 1);
            // Every game the reader hands out replays from its start.
            g.replay(&Rules::FMJD).unwrap();
        }
        let moves: Vec<Vec<String>> = games.iter().map(|g| hub(g)).collect();

        // 1: `29x20x 9`, `1- 7`, ` 9- 3`: no warning, padding is a way of writing.
        assert_eq!(moves[0], ["29x9x14x24", "1-7", "9-3"]);
        assert_eq!(games[0].warnings, []);

        // 2: `28-19` is the capture 28x19, `37x32` the quiet move 37-32.
        assert_eq!(moves[1], ["32-28", "19-23", "28x19x23", "14x23x19", "37-32"]);
        let wrong = |number, text: &str, read_as: &str| {
            warning(2, 11, WrongSeparator { number, side: Color::White, text: text.into(), read_as: read_as.into() })
        };
        assert_eq!(games[1].warnings, [wrong(2, "28-19", "28x19"), wrong(3, "37x32", "37-32")]);
        assert_eq!(
            games[1].warnings[0].to_string(),
            "game 2, line 11: move 2 (white): `28-19` is written as a quiet move; read as 28x19, the only legal move it fits"
        );

        // 3: PlayOK's game type.
        assert_eq!(moves[2], ["32-28", "19-23"]);
        assert_eq!(games[2].warnings, [warning(3, 14, GameTypeVariant("20,W,10,10,N1,0".into()))]);
        assert_eq!(games[2].tag("GameType"), Some("20,W,10,10,N1,0"));

        // 4: a set-up before the first move is the start position.
        let setup = Position::from_fen("W:W28,32:B19").unwrap();
        assert_eq!((games[3].start, moves[3].len(), games[3].warnings.len()), (setup, 2, 0));

        // 5: a set-up after moves, elsewhere: the game is read from it, the moves before dropped.
        assert_eq!((games[4].start, &moves[4]), (setup, &moves[3]));
        assert_eq!(games[4].warnings, [warning(5, 24, SetUpMidGame { dropped: 2 })]);

        // 6: a set-up at the position the moves reach changes nothing.
        assert_eq!((games[5].start, games[5].warnings.len()), (Position::start(), 0));
        assert_eq!(moves[5], ["32-28", "19-23"]);

        // 7: `?` as the side to move: the first move is Black's.
        assert_eq!(games[6].start, Position::from_fen("B:W28:B23").unwrap());
        assert_eq!(moves[6], ["23x32x28"]);
        let fen = "?:W28:B23".to_owned();
        let reason = "as the first move is theirs";
        assert_eq!(games[6].warnings, [warning(7, 32, UnknownSideToMove { fen, side: Color::Black, reason })]);

        // 8: `47x36` has two paths; only the one that leaves 14 lets Black play 14-20.
        assert_eq!(moves[7], ["47x36x19x29x31x42", "14-20"]);
        let chosen = "47x38x24x13x36".to_owned();
        let others = vec!["47x38x20x9x36".to_owned()];
        let text = "47x36".to_owned();
        let resolved = AmbiguityResolved { number: 1, side: Color::White, text, chosen, others };
        assert_eq!(games[7].warnings, [warning(8, 39, resolved)]);

        // 9: a `)` with no `(`; 10: its result glued to the next game's first tag.
        assert_eq!(moves[8].len(), 5);
        assert_eq!(games[8].warnings, [warning(9, 43, StrayClose)]);
        assert_eq!((games[9].event(), moves[9].len()), (Some("10: glued to the previous game"), 1));
        assert_eq!(games[9].warnings, [warning(10, 43, GluedToPrevious("Event".into()))]);

        // 11 and 12: two tag sections without moves are two games (the second has no blank line
        // before the next game's tags), not one game with both sets of tags.
        assert_eq!((games[10].site(), games[10].tags.len()), (Some("a"), 2));
        assert_eq!(games[10].warnings, [warning(11, 47, NoMoveText)]);
        assert_eq!((games[11].site(), games[11].tags.len()), (Some("b"), 2));
        assert_eq!(games[11].warnings, [warning(12, 50, NoMoveText)]);
        assert_eq!((games[12].event(), games[12].warnings.len()), (Some("13: moves"), 0));
        assert_eq!(moves[12], ["34-29"]);
    }
}

#[test]
fn check_counts_warnings_without_failing() {
    let file = std::fs::File::open(ACCEPTED).unwrap();
    let s = check(BufReader::new(file), &Rules::FMJD);
    assert_eq!((s.games_read, s.games_ok, s.games_failed, s.moves, s.warning_count), (13, 13, 0, 26, 10));
    assert!(s.is_ok());
    assert_eq!(s.warnings.len(), 10);
    let places: Vec<(usize, usize)> = s.warnings.iter().map(|w| (w.game, w.line)).collect();
    assert_eq!(places, [(2, 11), (2, 11), (3, 14), (5, 24), (7, 32), (8, 39), (9, 43), (10, 43), (11, 47), (12, 50)]);
    assert_eq!(s.to_string(), "13 games read, 13 ok, 0 failed, 26 moves, 10 warnings");
}

#[test]
fn rejected_games_name_game_and_line() {
    for capacity in [1, 8192] {
        let games = read_file(REJECTED, capacity);
        assert_eq!(games.len(), 14, "capacity {capacity}");
        let good: Vec<usize> = games.iter().filter_map(|g| g.as_ref().ok()).map(|g| g.number).collect();
        assert_eq!(good, [2, 14]);
        let err = |n: usize| games[n - 1].as_ref().expect_err("a broken game");
        for (i, g) in games.iter().enumerate() {
            if let Err(e) = g {
                assert_eq!(e.game, i + 1);
            }
        }

        // 1: a FEN split over two lines.
        let e = err(1);
        assert!(matches!(&e.kind, PdnErrorKind::UnterminatedTag(name) if name == "FEN"), "{e}");
        assert_eq!(e.to_string(), "game 1, line 6: tag `FEN`: the value has no closing `\"` on its line");

        // 3: a result glued to the next game's move text.
        let e = err(3);
        assert!(matches!(&e.kind, PdnErrorKind::GluedResult { text, result } if text == "2-01." && result == "2-0"), "{e}");
        assert!(e.to_string().starts_with("game 3, line 17: `2-01.` is not a move: it looks like the result `2-0`"), "{e}");

        // 4: a garbled path (`28x19x` then the next move; `14x23` is not a padded square).
        let e = err(4);
        let PdnErrorKind::Move { number: 2, side: Color::White, error: MoveError::Syntax { text, .. } } = &e.kind else {
            panic!("wrong error: {e}");
        };
        assert_eq!(text, "28x19x");
        assert!(e.to_string().starts_with("game 4, move 2 (white), line 21: `28x19x` is not a move"), "{e}");

        // 5: a `(` never closed: reported where it opens.
        let e = err(5);
        assert!(matches!(e.kind, PdnErrorKind::UnclosedVariation { end: 28 }), "{e}");
        assert!(e.to_string().starts_with("game 5, line 25: the variation opened here with `(` is still open"), "{e}");

        // 6 and 7: a short capture that both paths, or no path, let the game go on from.
        for (n, line) in [(6, 31), (7, 36)] {
            let e = err(n);
            let PdnErrorKind::Move { number: 1, error: MoveError::Ambiguous { candidates, .. }, .. } = &e.kind else {
                panic!("wrong error: {e}");
            };
            assert_eq!(candidates, &["47x38x24x13x36", "47x38x20x9x36"]);
            let want = format!("game {n}, move 1 (white), line {line}: `47x36` is ambiguous in W:WK47:B14,19,29,31,42: \
                                it could be 47x38x24x13x36 or 47x38x20x9x36");
            assert_eq!(e.to_string(), want);
        }

        // 8: a move that does not replay, in a game whose game type is unusual: the error says so.
        let e = err(8);
        let PdnErrorKind::GameTypeMove { game_type, number: 2, side: Color::White, error: MoveError::Illegal { .. } } = &e.kind
        else {
            panic!("wrong error: {e}");
        };
        assert_eq!(&**game_type, "20,W,10,10,N1,0");
        assert!(e.to_string().starts_with("game 8, move 2 (white), line 41: `33-29` is not a legal move"), "{e}");
        assert!(e.to_string().contains("(the game type is `20,W,10,10,N1,0`"), "{e}");

        // 9: game type 20 on another board.
        let e = err(9);
        assert!(matches!(&e.kind, PdnErrorKind::GameType(t) if t == "20,W,8,8,N2,0"), "{e}");
        assert_eq!((e.game, e.line), (9, 44));

        // 10 and 11: errors about the board's contents point at the item, not at column 1.
        let e = err(10);
        assert!(matches!(&e.kind, PdnErrorKind::Fen(f) if f.column == 16), "{e}");
        assert_eq!(e.to_string(), "game 10, line 49: bad FEN `W:W31-50:B1-20,44`: square 44 holds two pieces at column 16");
        let e = err(11);
        assert!(matches!(&e.kind, PdnErrorKind::Fen(f) if f.column == 7), "{e}");
        assert!(e.to_string().starts_with("game 11, line 54: bad FEN `W:W31,3:B20`: white man on square 3"), "{e}");

        // 12: `?` as the side to move and a first move that fits neither side.
        let e = err(12);
        assert!(matches!(&e.kind, PdnErrorKind::Move { number: 1, side: Color::White, error: MoveError::Illegal { .. } }), "{e}");
        assert_eq!((e.game, e.line), (12, 61));

        // 13: a set-up in the move text that is not `/FEN "..."/`.
        let e = err(13);
        assert!(matches!(&e.kind, PdnErrorKind::BadSetUp(_)), "{e}");
        assert_eq!(e.to_string(), "game 13, line 65: set-up in the move text: expected the FEN in double quotes after `/FEN`");
    }
}

#[test]
fn padding_is_only_a_one_digit_square() {
    // Several blanks, and a tab, before the padded square; a suffix annotation after it.
    let games = read_bytes(b"[FEN \"W:W29,45:B1,14,24\"]\n1. 29x20x  9!\t1-\t7 *\n");
    assert_eq!(hub(games[0].as_ref().unwrap()), ["29x9x14x24", "1-7"]);
    // `1- 1` never becomes the result 1-1, nor `32-  12.` a move.
    let games = read_bytes(b"1. 32-28 1- 1 *\n");
    let e = games[0].as_ref().unwrap_err();
    assert!(matches!(&e.kind, PdnErrorKind::Move { error: MoveError::Syntax { text, .. }, .. } if text == "1-"), "{e}");
    let games = read_bytes(b"1. 32- 12. 19-23 *\n");
    let e = games[0].as_ref().unwrap_err();
    assert!(matches!(&e.kind, PdnErrorKind::Move { error: MoveError::Syntax { text, .. }, .. } if text == "32-"), "{e}");
    // A blank before the separator is not padding.
    let games = read_bytes(b"1. 32 -28 *\n");
    assert!(games[0].is_err());
}

#[test]
fn ambiguity_resolved_the_other_way_and_twice() {
    // The other path of the accepted file's game 8.
    let text = "[FEN \"W:WK47:B14,19,29,31,42\"]\n1. 47x36 19-24 *\n";
    let g = read_bytes(text.as_bytes()).remove(0).unwrap();
    assert_eq!(hub(&g), ["47x36x14x29x31x42", "19-24"]);
    assert!(matches!(&g.warnings[..], [PdnWarning { kind: PdnWarningKind::AmbiguityResolved { chosen, .. }, .. }]
        if chosen == "47x38x20x9x36"));

    // Both paths of `41x21` allow 22-27; only one allows `21x3`, which has two paths again, and
    // only one of those allows 30-34.
    let text = "[FEN \"W:WK41:B9,17,18,22,24,28,30,44\"]\n1. 41x21 22-27 2. 21x3 30-34 *\n";
    let g = read_bytes(text.as_bytes()).remove(0).unwrap();
    assert_eq!(hub(&g), ["41x21x17x18x28", "22-27", "21x3x9x24x27", "30-34"]);
    let chosen: Vec<(u32, &str, &str)> = g
        .warnings
        .iter()
        .map(|w| match &w.kind {
            PdnWarningKind::AmbiguityResolved { number, text, chosen, .. } => (*number, text.as_str(), chosen.as_str()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(chosen, [(1, "41x21", "41x23x12x21"), (2, "21x3", "21x38x20x3")]);
    g.replay(&Rules::FMJD).unwrap();
    // Without the last move the second capture stays ambiguous: the game is an error (the
    // first ambiguity is the one reported).
    let text = "[FEN \"W:WK41:B9,17,18,22,24,28,30,44\"]\n1. 41x21 22-27 2. 21x3 *\n";
    let e = read_bytes(text.as_bytes()).remove(0).unwrap_err();
    assert!(matches!(&e.kind, PdnErrorKind::Move { number: 1, error: MoveError::Ambiguous { .. }, .. }), "{e}");
}

#[test]
fn utf16_is_decoded() {
    let text = "[White \"Émile\"]\r\n\r\n1. 32-28 {café} 19-23 2-0\r\n\r\n[White \"b\"]\r\n1. 32-27 *\r\n";
    let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let with_bom = |bom: [u8; 2], body: &[u8]| [&bom[..], body].concat();
    for bytes in [with_bom([0xff, 0xfe], &le), with_bom([0xfe, 0xff], &be), le.clone(), be.clone()] {
        let games = read_bytes(&bytes);
        assert_eq!(games.len(), 2);
        let g = games[0].as_ref().unwrap();
        assert_eq!((g.white(), hub(g).len(), g.warnings.len()), (Some("Émile"), 2, 0));
        assert_eq!(hub(games[1].as_ref().unwrap()), ["32-27"]);
    }
    // Lines are counted in the decoded text.
    let broken: Vec<u8> = "[White \"a\"]\n\n1. 32-29 *\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let e = read_bytes(&with_bom([0xff, 0xfe], &broken)).pop().unwrap().unwrap_err();
    assert_eq!((e.game, e.line), (1, 3));
}

#[test]
fn nul_bytes_are_reported_as_such() {
    let games = read_bytes(b"1. 32-28 19-23 *\n\n[Event \"x\"]\n1. 32-28\0 19-23 *\n\n1. 31-26 *\n");
    assert_eq!(games.len(), 3);
    let e = games[1].as_ref().unwrap_err();
    assert!(matches!(e.kind, PdnErrorKind::NulByte { offset: 38 }), "{e}");
    assert_eq!(e.to_string(), "game 2, line 4: NUL byte (byte 38 of the input): is this a binary file?");
    assert_eq!(hub(games[2].as_ref().unwrap()), ["31-26"]);
    // In a tag value and in a comment.
    for text in [&b"[Event \"a\0b\"]\n1. 32-28 *\n"[..], b"1. 32-28 {a\0b} *\n"] {
        let e = read_bytes(text).remove(0).unwrap_err();
        assert!(matches!(e.kind, PdnErrorKind::NulByte { .. }), "{e}");
        assert_eq!((e.game, e.line), (1, 1));
    }
}

#[test]
fn legacy_encodings_in_names_and_comments() {
    // Windows-1252 (Latin-1 plus curly quotes, the euro...) mixed with UTF-8 in one value; the
    // moves stay strict.
    let mut text = b"\xef\xbb\xbf% a comment line right after the byte-order mark\n[White \"Sijbr\xe2nds \x93Ton\x94\"]\n".to_vec();
    text.extend_from_slice(b"[Black \"\xc3\x89mile\"]\n1. 32-28 {\xc3\xa9t\xe9 \x80} 19-23 *\n\x1a");
    let games = read_bytes(&text);
    assert_eq!(games.len(), 1);
    let g = games[0].as_ref().unwrap();
    assert_eq!((g.white(), g.black()), (Some("Sijbrânds \u{201c}Ton\u{201d}"), Some("Émile")));
    assert_eq!((hub(g).len(), g.warnings.len()), (2, 0));
    let e = read_bytes(b"1. 32-28 19\xe9-23 *\n").remove(0).unwrap_err();
    assert!(matches!(e.kind, PdnErrorKind::Move { error: MoveError::Syntax { .. }, .. }), "{e}");
}

#[test]
fn glued_tag_after_a_failed_game_starts_the_next_game() {
    // The bad game has no result token: skipping it stops at the tag glued to its last move.
    let games = read_bytes(b"[Event \"a\"]\n1. 32-29 19-23 14x23[Event \"b\"]\n1. 33-28 *\n");
    assert_eq!(games.len(), 2);
    assert_eq!((games[0].as_ref().unwrap_err().game, games[0].as_ref().unwrap_err().line), (1, 2));
    let g = games[1].as_ref().unwrap();
    assert_eq!((g.event(), hub(g).len()), (Some("b"), 1));
    assert_eq!(g.warnings, [warning(2, 2, PdnWarningKind::GluedToPrevious("Event".into()))]);
}

#[test]
fn side_to_move_unknown_without_moves() {
    let g = read_bytes(b"[FEN \"?:W28:B23\"]\n*\n").remove(0).unwrap();
    assert_eq!(g.start.side_to_move(), Color::White);
    let fen = "?:W28:B23".to_owned();
    let kind = PdnWarningKind::UnknownSideToMove { fen, side: Color::White, reason: "as no move tells" };
    assert_eq!(g.warnings, [warning(1, 1, kind)]);
}
