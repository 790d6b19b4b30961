//! The reader against a hand-written sample file and hand-written broken inputs.

use std::io::{self, BufRead, BufReader, Read};
use std::ops::ControlFlow;

use draughts_core::{Color, MoveError, Position, Rules};
use draughts_pdn::{
    check, GameResult, Nag, PdnError, PdnErrorKind, PdnGame, RawReader, Reader, Skip, Visitor,
};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sample.pdn");

fn hub(game: &PdnGame) -> Vec<String> {
    game.moves.iter().map(|m| m.to_hub()).collect()
}

fn read_all(text: &str) -> Vec<Result<PdnGame, PdnError>> {
    Reader::new(text.as_bytes()).collect()
}

/// Opens the sample through a tiny buffer, so tokens straddle buffer refills.
fn sample_reader(capacity: usize) -> Reader<BufReader<std::fs::File>> {
    let file = std::fs::File::open(SAMPLE).expect("sample file");
    Reader::new(BufReader::with_capacity(capacity, file))
}

#[test]
fn sample_file_games_and_moves() {
    for capacity in [1, 7, 8192] {
        let games: Vec<_> = sample_reader(capacity).collect();
        assert_eq!(games.len(), 11, "capacity {capacity}");

        // Game 4 has the illegal move, on line 38; it is reported and skipped.
        let err = games[3].as_ref().expect_err("game 4 is bad");
        assert_eq!((err.game, err.line), (4, 38));
        match &err.kind {
            PdnErrorKind::Move { number, side, error: MoveError::Illegal { text, legal, .. } } => {
                assert_eq!((*number, *side), (2, Color::White));
                assert_eq!(text, "33-29");
                assert_eq!(legal, "28x19");
            }
            other => panic!("wrong error: {other:?}"),
        }

        let ok: Vec<&PdnGame> = games.iter().filter_map(|g| g.as_ref().ok()).collect();
        let numbers: Vec<usize> = ok.iter().map(|g| g.number).collect();
        assert_eq!(numbers, [1, 2, 3, 5, 6, 7, 8, 9, 10, 11]);

        let expected: [&[&str]; 10] = [
            &["32-28", "19-23", "28x19x23", "14x23x19", "37-32", "10-14", "41-37", "5-10"],
            &["19-23", "28x19x23", "5x41x19x32", "46x1x12x41"],
            // 47x38x24x13x36 names the capture that takes 19, not the one that takes 14.
            &["47x36x19x29x31x42", "14-20"],
            &["32-28", "19-23", "28x19x23", "14x23x19", "37-32", "10-14"],
            &["34-29", "17-21"],
            &["33-28", "18-23", "39-33", "12-18"],
            &["31-27", "16-21"],
            &["32-28", "19-23"],
            &["32-28", "19-23", "28x19x23", "14x23x19"],
            &["32-27"],
        ];
        for (game, moves) in ok.iter().zip(expected) {
            assert_eq!(hub(game), moves, "game {}", game.number);
        }
        let results: Vec<GameResult> = ok.iter().map(|g| g.result).collect();
        use GameResult::*;
        assert_eq!(
            results,
            // Game 10 has no result token: its Result tag counts.
            [WhiteWins, WhiteWins, Draw, WhiteWins, BlackWins, Draw, BothLose, Unknown, WhiteWins, BlackWins]
        );

        let g1 = ok[0];
        assert_eq!(g1.event(), Some("Sample \"quoted\" event"));
        assert_eq!(g1.site(), Some("Back\\slash"));
        assert_eq!((g1.white(), g1.black(), g1.round()), (Some("Alice"), Some("Bob"), Some("1")));
        assert_eq!(g1.tags.len(), 8);
        assert_eq!(g1.start, Position::start());

        let g2 = ok[1];
        assert_eq!(g2.start, Position::from_fen("B:W28,32,K46:B12,19,K5").unwrap());
        assert_eq!(g2.start.side_to_move(), Color::Black);
        assert_eq!(ok[2].start, Position::from_fen("W:WK47:B14,19,29,31,42").unwrap());
        assert_eq!(ok[5].black(), Some("Émile Ngoua"));
        assert_eq!(ok[6].round(), Some("3"));
        assert_eq!(ok[8].tag("result"), Some("2-0"));
        assert_eq!(ok[9].tag("Result"), None);
    }
}

#[test]
fn check_summarises_the_sample() {
    let file = std::fs::File::open(SAMPLE).unwrap();
    let s = check(BufReader::new(file), &Rules::FMJD);
    assert_eq!((s.games_read, s.games_ok, s.games_failed, s.moves), (11, 10, 1, 35));
    assert!(!s.is_ok());
    assert_eq!(s.errors.len(), 1);
    assert_eq!(s.errors[0].game, 4);
    assert_eq!(s.to_string(), "11 games read, 10 ok, 1 failed, 35 moves");
}

#[test]
fn error_message_names_game_move_side_and_line() {
    let text = "\
[Event \"one\"]\n\n1. 32-28 *\n\n\
[Event \"two\"]\n\n1. 33-28 *\n\n\
[Event \"three\"]\n[FEN \"W:W28,32,33:B12,19,23\"]\n\n\
17. 32-27 22x31 18. 33-29 *\n\n\
[Event \"four\"]\n\n1. 31-26 *\n";
    let games = read_all(text);
    assert_eq!(games.len(), 4);
    let err = games[2].as_ref().unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("game 3, move 17 (black), line 12: `22x31` is not a legal move in B:"), "{msg}");
    assert!(msg.contains("legal:"), "{msg}");
    assert!(matches!(err.kind, PdnErrorKind::Move { number: 17, side: Color::Black, .. }));
    assert_eq!(games[3].as_ref().unwrap().event(), Some("four"));
    // The source chain reaches the core's MoveError.
    let source = std::error::Error::source(err).and_then(std::error::Error::source).unwrap();
    assert!(source.downcast_ref::<MoveError>().is_some());
}

#[test]
fn ambiguous_and_unparsable_moves() {
    let text = "[FEN \"W:WK47:B14,19,29,31,42\"]\n1. 47x36 *\n\n1. 32-28 abc *\n\n1. 32-28 19-23 *\n";
    let games = read_all(text);
    assert_eq!(games.len(), 3);
    let e = games[0].as_ref().unwrap_err();
    assert!(matches!(&e.kind, PdnErrorKind::Move { error: MoveError::Ambiguous { .. }, number: 1, .. }), "{e}");
    assert!(e.to_string().contains("47x38x24x13x36"), "{e}");
    let e = games[1].as_ref().unwrap_err();
    assert!(matches!(&e.kind, PdnErrorKind::Move { error: MoveError::Syntax { .. }, side: Color::Black, .. }), "{e}");
    assert_eq!((e.game, e.line), (2, 4));
    assert_eq!(hub(games[2].as_ref().unwrap()), ["32-28", "19-23"]);
}

#[test]
fn game_type_and_fen_errors_skip_only_their_game() {
    let text = "\
[Event \"checkers\"]\n[GameType \"21\"]\n[Site \"x\"]\n\n1. 11-15 23-19 *\n\n\
[Event \"bad fen\"]\n[SetUp \"1\"]\n[FEN \"W:W31,52:B1\"]\n\n1. 31-26 *\n\n\
[Event \"fine\"]\n\n1. 32-28 2-0\n";
    let games = read_all(text);
    assert_eq!(games.len(), 3);
    let e = games[0].as_ref().unwrap_err();
    assert!(matches!(&e.kind, PdnErrorKind::GameType(t) if t == "21"), "{e}");
    assert_eq!((e.game, e.line), (1, 2));
    assert!(e.to_string().contains("`21` is not international draughts"), "{e}");
    let e = games[1].as_ref().unwrap_err();
    assert!(matches!(&e.kind, PdnErrorKind::Fen(f) if f.column == 7), "{e}");
    assert_eq!((e.game, e.line), (2, 9));
    let g = games[2].as_ref().unwrap();
    assert_eq!((g.number, g.event()), (3, Some("fine")));
}

#[test]
fn malformed_tags() {
    let cases: &[(&str, &str)] = &[
        ("[Event \"unterminated]\n[Site \"x\"]\n\n1. 32-28 *\n", "no closing"),
        ("[Event unquoted]\n\n1. 32-28 *\n", "expected a value in double quotes"),
        ("[\"no name\"]\n\n1. 32-28 *\n", "expected a tag name"),
        ("[Event \"x\" junk]\n\n1. 32-28 *\n", "expected `]`"),
    ];
    for (bad, needle) in cases {
        let text = format!("{bad}\n[Event \"next\"]\n\n1. 31-26 *\n");
        let games = read_all(&text);
        assert_eq!(games.len(), 2, "{bad}");
        let e = games[0].as_ref().unwrap_err();
        assert_eq!((e.game, e.line), (1, 1), "{bad}");
        assert!(e.to_string().contains(needle), "{bad}: {e}");
        let next = games[1].as_ref().unwrap();
        assert_eq!((next.number, next.event(), hub(next)), (2, Some("next"), vec!["31-26".to_owned()]), "{bad}");
    }
    // A game with only (bad) tags, then a blank line and the next game.
    let games = read_all("[Event \"x]\n[Site \"y\"]\n\n[Event \"z\"]\n1. 32-28 *\n");
    assert_eq!(games.len(), 2);
    assert_eq!(games[1].as_ref().unwrap().event(), Some("z"));
}

#[test]
fn unterminated_comments() {
    // At the end of the input.
    let games = read_all("1. 32-28 {never closed\n19-23 *\n");
    assert_eq!(games.len(), 1);
    let e = games[0].as_ref().unwrap_err();
    assert!(matches!(e.kind, PdnErrorKind::UnterminatedComment));
    assert_eq!((e.game, e.line), (1, 1));
    // Before the next game's tags: that game survives.
    let games = read_all("[Event \"a\"]\n1. 32-28 {never closed\n19-23 *\n\n[Event \"b\"]\n1. 33-28 *\n");
    assert_eq!(games.len(), 2);
    assert_eq!(games[0].as_ref().unwrap_err().line, 2);
    assert_eq!(games[1].as_ref().unwrap().event(), Some("b"));
    // Brackets that do not look like a tag stay inside the comment.
    let games = read_all("1. 32-28 {see\n[%eval 0.3]\n[1]} 19-23 *\n");
    assert_eq!(hub(games[0].as_ref().unwrap()), ["32-28", "19-23"]);
}

#[test]
fn long_token_encodings_bom_and_line_endings() {
    let long = format!("1. 32-28 {} *\n\n1. 31-26 *\n", "9".repeat(10_000));
    let games = read_all(&long);
    assert!(matches!(games[0].as_ref().unwrap_err().kind, PdnErrorKind::TokenTooLong(_)));
    assert_eq!(hub(games[1].as_ref().unwrap()), ["31-26"]);

    let mut latin1 = b"\xef\xbb\xbf[White \"Ren".to_vec();
    latin1.extend_from_slice(b"\xe9\"]\r\n\r\n1. 32-28 {caf\xe9} 19-23 2-0\r\n");
    let games: Vec<_> = Reader::new(&latin1[..]).collect();
    assert_eq!(games.len(), 1);
    let g = games[0].as_ref().unwrap();
    assert_eq!((g.white(), g.moves.len(), g.result), (Some("René"), 2, GameResult::WhiteWins));
}

#[test]
fn empty_and_comment_only_inputs() {
    assert!(read_all("").is_empty());
    assert!(read_all("\n\n  \n").is_empty());
    assert!(read_all("{just a comment}\n; and another\n").is_empty());
    let g = read_all("[Event \"tags only\"]\n");
    assert_eq!(g.len(), 1);
    let g = g[0].as_ref().unwrap();
    assert_eq!((g.moves.len(), g.result), (0, GameResult::Unknown));
}

/// Fails with an I/O error after handing out `left` bytes.
struct Failing<'a> {
    data: &'a [u8],
    left: usize,
}

impl Read for Failing<'_> {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        unreachable!("the reader uses BufRead")
    }
}

impl BufRead for Failing<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.left == 0 {
            return Err(io::Error::other("disk on fire"));
        }
        let n = self.data.len().min(self.left).min(4);
        Ok(&self.data[..n])
    }
    fn consume(&mut self, n: usize) {
        self.data = &self.data[n..];
        self.left -= n;
    }
}

#[test]
fn io_error_is_typed_and_final() {
    let text = b"1. 32-28 19-23 *\n\n[Event \"second\"]\n\n1. 33-28 *\n";
    let mut reader = Reader::new(Failing { data: text, left: 30 });
    assert_eq!(reader.next_game().unwrap().unwrap().moves.len(), 2);
    let e = reader.next_game().unwrap().unwrap_err();
    assert!(matches!(e.kind, PdnErrorKind::Io(_)));
    assert_eq!(e.game, 2);
    assert!(e.to_string().contains("disk on fire"), "{e}");
    assert!(reader.next_game().is_none());
}

/// Records every call, as text.
#[derive(Default)]
struct Recorder {
    log: Vec<String>,
    descend: bool,
    stop_at_tag: Option<&'static str>,
}

impl Visitor for Recorder {
    type Output = Vec<String>;

    fn begin_game(&mut self, number: usize, line: usize) {
        self.log = vec![format!("begin {number}@{line}")];
    }
    fn tag(&mut self, name: &str, value: &str, _: usize) -> ControlFlow<Vec<String>> {
        self.log.push(format!("tag {name}={value}"));
        if self.stop_at_tag == Some(name) {
            return ControlFlow::Break(vec!["stopped".into()]);
        }
        ControlFlow::Continue(())
    }
    fn begin_movetext(&mut self, line: usize) -> ControlFlow<Vec<String>> {
        self.log.push(format!("movetext@{line}"));
        ControlFlow::Continue(())
    }
    fn move_number(&mut self, n: u32, black: bool, _: usize) -> ControlFlow<Vec<String>> {
        self.log.push(format!("{n}{}", if black { "..." } else { "." }));
        ControlFlow::Continue(())
    }
    fn move_text(&mut self, text: &str, _: usize) -> ControlFlow<Vec<String>> {
        self.log.push(text.to_owned());
        ControlFlow::Continue(())
    }
    fn nag(&mut self, nag: Nag, _: usize) -> ControlFlow<Vec<String>> {
        self.log.push(format!("${}", nag.0));
        ControlFlow::Continue(())
    }
    fn comment(&mut self, text: &str, line: usize) -> ControlFlow<Vec<String>> {
        self.log.push(format!("{{{text}}}@{line}"));
        ControlFlow::Continue(())
    }
    fn begin_variation(&mut self, _: usize) -> ControlFlow<Vec<String>, Skip> {
        self.log.push("(".into());
        ControlFlow::Continue(Skip(!self.descend))
    }
    fn end_variation(&mut self, _: usize) -> ControlFlow<Vec<String>> {
        self.log.push(")".into());
        ControlFlow::Continue(())
    }
    fn result(&mut self, result: GameResult, _: usize) -> ControlFlow<Vec<String>> {
        self.log.push(format!("result {result}"));
        ControlFlow::Continue(())
    }
    fn end_game(&mut self) -> Vec<String> {
        std::mem::take(&mut self.log)
    }
}

#[test]
fn raw_visitor_sees_tokens_in_order() {
    let text = "{pre}\n[White \"W\"]\n1. 32-28! $3 (1. 33-28 (1. 34-29) {in}) 19-23?! ; end\n2.28x19 ... 1/2-1/2";
    let mut v = Recorder { descend: true, ..Recorder::default() };
    let mut raw = RawReader::new(text.as_bytes());
    let log = raw.read_game(&mut v).unwrap().unwrap();
    let want = "begin 1@2 {pre}@1 tag White=W movetext@3 1. 32-28 $1 $3 ( 1. 33-28 ( 1. 34-29 ) {in}@3 ) \
                19-23 $6 { end}@3 2. 28x19 result 1-1";
    assert_eq!(log.join(" "), want);
    assert!(raw.read_game(&mut v).is_none());

    // Skipped variations are not seen at all.
    let mut v = Recorder::default();
    let log = RawReader::new(text.as_bytes()).read_game(&mut v).unwrap().unwrap();
    assert!(log.join(" ").contains("$3 ( 19-23"), "{log:?}");

    // A visitor that stops early gets the rest of its game skipped.
    let two = "[Event \"a\"]\n[Site \"b\"]\n1. 32-28 (1. 33-28 2-0) *\n[Event \"c\"]\n1. 31-26 *\n";
    let mut v = Recorder { stop_at_tag: Some("Event"), ..Recorder::default() };
    let mut raw = RawReader::new(two.as_bytes());
    assert_eq!(raw.read_game(&mut v).unwrap().unwrap(), ["stopped"]);
    assert_eq!(raw.read_game(&mut v).unwrap().unwrap(), ["stopped"]);
    assert_eq!(raw.games(), 2);
    assert!(raw.read_game(&mut v).is_none());
}

/// The same game text `left` times over, produced on demand: input that never exists whole.
struct Cycle {
    text: &'static [u8],
    at: usize,
    left: usize,
}

impl Read for Cycle {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        unreachable!("the reader uses BufRead")
    }
}

impl BufRead for Cycle {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        Ok(if self.left == 0 { &[] } else { &self.text[self.at..] })
    }
    fn consume(&mut self, n: usize) {
        self.at += n;
        if self.at == self.text.len() {
            self.at = 0;
            self.left -= 1;
        }
    }
}

#[test]
fn streams_game_by_game() {
    let text = b"[Event \"e\"]\n\n1. 32-28 19-23 2. 28x19 14x23 {c} 3. 37-32 (3. 33-28) 1-1\n\n";
    let mut reader = Reader::new(Cycle { text, at: 0, left: 3000 });
    let mut n = 0;
    while let Some(game) = reader.next_game() {
        let game = game.unwrap();
        n += 1;
        assert_eq!((game.number, game.moves.len()), (n, 5));
    }
    assert_eq!(n, 3000);
    assert_eq!(reader.line(), 4 * 3000 + 1);
}

#[test]
fn huge_comment_is_cut_not_fatal() {
    let text = format!("1. 32-28 {{{}}} 19-23 *\n", "z".repeat(draughts_pdn::MAX_COMMENT + 1000));
    #[derive(Default)]
    struct Longest(usize);
    impl Visitor for Longest {
        type Output = usize;
        fn comment(&mut self, text: &str, _: usize) -> ControlFlow<usize> {
            self.0 = self.0.max(text.len());
            ControlFlow::Continue(())
        }
        fn end_game(&mut self) -> usize {
            self.0
        }
    }
    let got = RawReader::new(text.as_bytes()).read_game(&mut Longest::default()).unwrap().unwrap();
    assert_eq!(got, draughts_pdn::MAX_COMMENT);
    assert_eq!(hub(read_all(&text)[0].as_ref().unwrap()), ["32-28", "19-23"]);
}

#[test]
fn results_inside_variations_do_not_end_the_game() {
    let games = read_all("1. 32-28 (1. 33-28 2-0 (1. 31-27 *)) 19-23 0-2\n");
    assert_eq!(games.len(), 1);
    let g = games[0].as_ref().unwrap();
    assert_eq!((hub(g), g.result), (vec!["32-28".to_owned(), "19-23".to_owned()], GameResult::BlackWins));
}
