//! Measures reading and writing speed on random legal games.
//!
//! `cargo run --release -p draughts-pdn --example read_speed -- [GAMES] [SEED]`
//! (defaults: 20000 games, seed 1). Writes the games to memory, reads them back through a
//! 64 KiB `BufReader`, checks every game came back, and prints the rates.

use std::io::BufReader;
use std::time::Instant;

use draughts_core::{Game, Rules};
use std::ops::ControlFlow;

use draughts_pdn::{check, PdnGame, RawReader, Reader, Visitor, Writer};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(20_000, |a| a.parse().expect("GAMES is a number"));
    let seed: u64 = args.next().map_or(1, |a| a.parse().expect("SEED is a number"));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);

    let t = Instant::now();
    let mut games = Vec::with_capacity(n);
    for _ in 0..n {
        let mut game = Game::new(Rules::FMJD);
        while game.outcome().is_none() && game.ply() < 200 {
            let mv = *game.legal_moves().choose(&mut rng).expect("not over");
            game.play_unchecked(mv);
        }
        games.push(PdnGame::from_game(&game));
    }
    let moves: usize = games.iter().map(|g| g.moves.len()).sum();
    println!("generated {n} games, {moves} moves (seed {seed}) in {:.2?}", t.elapsed());

    let t = Instant::now();
    let mut w = Writer::new(Vec::new());
    for g in &games {
        w.write_game(g).expect("legal games");
    }
    let text = w.into_inner();
    let dt = t.elapsed().as_secs_f64();
    println!("write: {:.1} MB, {:.0} games/s, {:.0} moves/s", text.len() as f64 / 1e6, n as f64 / dt, moves as f64 / dt);

    let t = Instant::now();
    let mut read = 0;
    for (g, want) in Reader::new(BufReader::with_capacity(64 * 1024, &text[..])).zip(&games) {
        assert_eq!(g.expect("reads back").moves, want.moves);
        read += 1;
    }
    assert_eq!(read, n);
    let dt = t.elapsed().as_secs_f64();
    println!(
        "read:  {:.0} games/s, {:.0} moves/s, {:.1} MB/s",
        n as f64 / dt,
        moves as f64 / dt,
        text.len() as f64 / 1e6 / dt
    );

    // Tokens only, moves not resolved.
    struct CountMoves(usize);
    impl Visitor for CountMoves {
        type Output = ();
        fn move_text(&mut self, _: &str, _: usize) -> ControlFlow<()> {
            self.0 += 1;
            ControlFlow::Continue(())
        }
        fn end_game(&mut self) {}
    }
    let t = Instant::now();
    let mut raw = RawReader::new(BufReader::with_capacity(64 * 1024, &text[..]));
    let mut counter = CountMoves(0);
    while let Some(game) = raw.read_game(&mut counter) {
        game.expect("well-formed");
    }
    assert_eq!(counter.0, moves);
    let dt = t.elapsed().as_secs_f64();
    println!("raw:   {:.0} games/s, {:.1} MB/s (tokens only)", n as f64 / dt, text.len() as f64 / 1e6 / dt);

    let t = Instant::now();
    let summary = check(&text[..], &Rules::FMJD);
    println!("check: {summary} in {:.2?}", t.elapsed());
}
