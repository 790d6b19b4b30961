//! Matches: game pairs over a set of openings, played in parallel, written as PDN, summed up
//! with pentanomial statistics.
//!
//! Determinism. Pair `p` uses opening `order[p mod n]`, where `order` is the openings shuffled
//! with the match seed (or kept in file order); in the pair's first game player A has White,
//! in the second Black. Game `k` (0-based over the match) gives its players the seeds
//! `mix_seed(seed, 2k)` (White) and `mix_seed(seed, 2k + 1)` (Black). Workers take pairs from
//! a shared counter, but results are handed to the progress callback, written to PDN and
//! counted strictly in game order. So with players that depend only on their seeds (random,
//! fixed-depth or fixed-node engines) the records, the PDN and the statistics are the same for
//! any number of workers and any scheduling; only time-limited players vary.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use draughts_core::{Color, Rules};
use draughts_pdn::{GameResult, PdnGame, WriteError, Writer};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::openings::{self, Opening, OpeningErrorKind};
use crate::player::{mix_seed, Player};
use crate::referee::{Forfeit, GameRecord, Referee, Termination, TimeControl};
use crate::spec::BuildError;
use crate::stats::{nullable_f64, Estimate, PairScore, Pentanomial, Wdl};

/// Something that builds a fresh player: one per worker, and again after a player crashed.
pub type Maker<'a> = dyn Fn() -> Result<Box<dyn Player>, BuildError> + Sync + 'a;

/// Settings of a match.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Games in total; even (every opening is played twice, colours swapped).
    pub games: usize,
    /// Games played at the same time (worker threads), at least 1.
    pub concurrency: usize,
    /// The seed of every random choice: opening order and the players' per-game seeds.
    pub seed: u64,
    /// Rules every game is played and adjudicated under.
    pub rules: Rules,
    /// The openings; pairs cycle through them.
    pub openings: Vec<Opening>,
    /// Shuffle the openings with the seed (otherwise pairs take them in order).
    pub shuffle_openings: bool,
    /// Safety cap on plies per game (a draw, reason "ply limit").
    pub max_plies: usize,
    /// Time limits.
    pub time: TimeControl,
    /// The PDN `Event` tag.
    pub event: String,
    /// Where to write every game as PDN (through `PATH.partial`, renamed at the end).
    pub pdn: Option<PathBuf>,
}

impl Default for MatchConfig {
    fn default() -> MatchConfig {
        MatchConfig {
            games: 2,
            concurrency: 1,
            seed: 0,
            rules: Rules::FMJD,
            openings: openings::builtin(),
            shuffle_openings: true,
            max_plies: 600,
            time: TimeControl::NONE,
            event: "draughts arena".to_owned(),
            pdn: None,
        }
    }
}

/// Why a match could not run (or could not write its output).
#[derive(Debug, Error)]
pub enum MatchError {
    /// Bad settings.
    #[error("match settings: {0}")]
    Config(String),
    /// An opening that does not suit the match rules.
    #[error("opening {index} (`{label}`): {kind}")]
    Opening {
        /// Its index.
        index: usize,
        /// Its label.
        label: String,
        /// What is wrong.
        kind: OpeningErrorKind,
    },
    /// A player could not be built at the start.
    #[error("player {which}: {source}")]
    Build {
        /// `A` or `B` (or the tournament player's name).
        which: String,
        /// Why.
        source: BuildError,
    },
    /// The PDN output failed.
    #[error("PDN output `{path}`: {source}")]
    Pdn {
        /// The file.
        path: PathBuf,
        /// Why.
        source: WriteError,
    },
}

/// One game of a match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchGame {
    /// 0-based game number over the match.
    pub index: usize,
    /// 0-based pair number.
    pub pair: usize,
    /// Whether player A had White.
    pub a_white: bool,
    /// The game.
    pub record: GameRecord,
}

impl MatchGame {
    /// Player A's colour.
    pub fn a_color(&self) -> Color {
        if self.a_white {
            Color::White
        } else {
            Color::Black
        }
    }

    /// Player A's half points: 2 win, 1 draw, 0 loss.
    pub fn a_half_points(&self) -> u8 {
        self.record.half_points(self.a_color())
    }

    /// The game as PDN: seven-tag roster (`Round` is `pair.game`, both 1-based), the
    /// opening's position as `FEN`, and the custom tags `Termination` (the reason in words) and
    /// `Opening` (the opening's index).
    pub fn to_pdn(&self, event: &str) -> PdnGame {
        self.to_pdn_with_round(event, &format!("{}.{}", self.pair + 1, self.index % 2 + 1))
    }

    fn to_pdn_with_round(&self, event: &str, round: &str) -> PdnGame {
        let r = &self.record;
        let mut game = PdnGame::new(r.start);
        game.moves = r.moves.clone();
        game.result = r.result;
        for (name, value) in [
            ("Event", event.to_owned()),
            ("Round", round.to_owned()),
            ("White", r.white.clone()),
            ("Black", r.black.clone()),
            ("Result", r.result.to_pdn().to_owned()),
            ("Termination", r.termination.to_string()),
            ("Opening", r.opening.to_string()),
        ] {
            game.set_tag(name, value);
        }
        game
    }
}

/// A PDN file written while a match runs: games go to `PATH.partial` (flushed after each, so
/// the file can be read at any time), which is renamed to `PATH` by [`PdnFile::finish`].
#[derive(Debug)]
pub struct PdnFile {
    path: PathBuf,
    partial: PathBuf,
    writer: Writer<BufWriter<File>>,
}

impl PdnFile {
    /// Creates `PATH.partial` (truncating it) for games played under `rules`.
    pub fn create(path: &Path, rules: Rules) -> Result<PdnFile, MatchError> {
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let file = File::create(&partial)
            .map_err(|e| MatchError::Pdn { path: partial.clone(), source: WriteError::Io(e) })?;
        Ok(PdnFile { path: path.to_owned(), partial, writer: Writer::new(BufWriter::new(file)).with_rules(rules) })
    }

    /// Appends one game and flushes.
    pub fn write(&mut self, game: &PdnGame) -> Result<(), MatchError> {
        let err = |source| MatchError::Pdn { path: self.partial.clone(), source };
        self.writer.write_game(game).map_err(err)?;
        self.writer.get_mut().flush().map_err(|e| err(WriteError::Io(e)))
    }

    /// Flushes, syncs and renames the partial file to its final name.
    pub fn finish(mut self) -> Result<PathBuf, MatchError> {
        let err = |path: &Path, e| MatchError::Pdn { path: path.to_owned(), source: WriteError::Io(e) };
        self.writer.get_mut().flush().map_err(|e| err(&self.partial, e))?;
        self.writer.get_mut().get_ref().sync_all().map_err(|e| err(&self.partial, e))?;
        std::fs::rename(&self.partial, &self.path).map_err(|e| err(&self.path, e))?;
        Ok(self.path)
    }
}

/// The summary of a match from player A's point of view. Serialises to JSON; non-finite
/// numbers (the Elo of a 100% score) are written as `null`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MatchResult {
    /// Player A's name.
    pub a: String,
    /// Player B's name.
    pub b: String,
    /// Games counted.
    pub games: u64,
    /// A's wins.
    pub wins_a: u64,
    /// Draws.
    pub draws: u64,
    /// A's losses.
    pub losses_a: u64,
    /// A's score, `(W + D/2) / games` (`null` in JSON with no game).
    #[serde(with = "nullable_f64")]
    pub score_a: f64,
    /// Elo difference A - B (pentanomial; trinomial if no pair is complete).
    #[serde(with = "nullable_f64")]
    pub elo: f64,
    /// Lower end of the 95% interval.
    #[serde(with = "nullable_f64")]
    pub elo_low: f64,
    /// Upper end of the 95% interval.
    #[serde(with = "nullable_f64")]
    pub elo_high: f64,
    /// Likelihood of superiority of A: `Phi((s - 1/2) / se)` over pairs (see
    /// [`Pentanomial::estimate`]).
    pub los: f64,
    /// Complete game pairs.
    pub pairs: u64,
    /// Pairs by A's pair score 0, 1/2, 1, 3/2, 2.
    pub pentanomial: [u64; 5],
    /// The pentanomial estimate in full.
    pub paired: Option<Estimate>,
    /// The trinomial estimate (games as independent samples), for comparison.
    pub unpaired: Option<Estimate>,
    /// Games won by White and by Black (colour balance of the openings).
    pub white_wins: u64,
    /// Games won by Black.
    pub black_wins: u64,
    /// Games by how they ended ([`Termination::kind`]).
    pub terminations: BTreeMap<String, u64>,
    /// Games A lost by forfeit (illegal move, crash, time, protocol).
    pub forfeits_a: u64,
    /// Games B lost by forfeit.
    pub forfeits_b: u64,
    /// Mean plies per game played by the players.
    pub mean_plies: f64,
    /// The match seed.
    pub seed: u64,
    /// The rules, by preset name.
    pub rules: String,
    /// Whether the progress callback stopped the match before all games were played.
    pub stopped: bool,
    /// Every game, in order (not serialised; the PDN holds them).
    #[serde(skip)]
    pub records: Vec<MatchGame>,
}

impl MatchResult {
    /// Player A's wins, draws and losses.
    pub fn wdl(&self) -> Wdl {
        Wdl { wins: self.wins_a, draws: self.draws, losses: self.losses_a }
    }

    /// The one-line summary `+W =D -L  score 61.3%  Elo +80 [+41, +121]`.
    pub fn progress_line(&self) -> String {
        format!(
            "+{} ={} -{}  score {}  Elo {} [{}, {}]",
            self.wins_a,
            self.draws,
            self.losses_a,
            if self.games == 0 { "-".to_owned() } else { format!("{:.1}%", 100.0 * self.score_a) },
            format_elo(self.elo),
            format_elo(self.elo_low),
            format_elo(self.elo_high)
        )
    }
}

/// An Elo difference with its sign and no decimals; `+inf`, `-inf`; `-` when unknown.
pub fn format_elo(elo: f64) -> String {
    if elo.is_nan() {
        "-".to_owned()
    } else if elo.is_infinite() {
        if elo > 0.0 { "+inf" } else { "-inf" }.to_owned()
    } else {
        let r = elo.round();
        // Avoid "-0".
        format!("{:+}", if r == 0.0 { 0.0 } else { r })
    }
}

/// Counts games as they are delivered in order.
#[derive(Debug, Default)]
struct Tally {
    result: MatchResult,
    plies: u64,
    pent: Pentanomial,
    open_pair: Option<u8>,
}

impl Tally {
    /// Counts a game; returns the pair score when it completes a pair.
    fn add(&mut self, g: &MatchGame) -> Option<PairScore> {
        let r = &mut self.result;
        r.games += 1;
        match g.a_half_points() {
            2 => r.wins_a += 1,
            1 => r.draws += 1,
            _ => r.losses_a += 1,
        }
        match g.record.result {
            GameResult::WhiteWins => r.white_wins += 1,
            GameResult::BlackWins => r.black_wins += 1,
            _ => {}
        }
        *r.terminations.entry(g.record.termination.kind().to_owned()).or_default() += 1;
        if let Termination::Forfeit { loser, .. } = g.record.termination {
            if loser == g.a_color() {
                r.forfeits_a += 1;
            } else {
                r.forfeits_b += 1;
            }
        }
        self.plies += g.record.plies as u64;
        let pair = match self.open_pair.take() {
            None => {
                self.open_pair = Some(g.a_half_points());
                None
            }
            Some(first) => {
                let p = PairScore::from_games(first, g.a_half_points());
                if let Some(p) = p {
                    self.pent.add(p);
                }
                p
            }
        };
        self.refresh();
        pair
    }

    fn refresh(&mut self) {
        let r = &mut self.result;
        let wdl = Wdl { wins: r.wins_a, draws: r.draws, losses: r.losses_a };
        r.score_a = if r.games == 0 { f64::NAN } else { wdl.points() / r.games as f64 };
        r.pairs = self.pent.pairs();
        r.pentanomial = self.pent.counts;
        r.mean_plies = if r.games == 0 { 0.0 } else { self.plies as f64 / r.games as f64 };
        let unpaired = (r.games > 0).then(|| wdl.estimate());
        let paired = (r.pairs > 0).then(|| self.pent.estimate());
        r.unpaired = unpaired;
        r.paired = paired;
        let main = paired.or(unpaired).unwrap_or_else(|| Estimate::from_moments(0, f64::NAN, f64::NAN));
        r.elo = main.elo;
        r.elo_low = main.elo_low;
        r.elo_high = main.elo_high;
        r.los = main.los;
    }
}

/// What the progress callback sees after each game (in game order).
#[derive(Debug)]
pub struct Progress<'a> {
    /// The game just counted.
    pub game: &'a MatchGame,
    /// Games counted so far.
    pub games_done: usize,
    /// Games in the match.
    pub games_total: usize,
    /// The pair score, when this game completed a pair (feed it to an [`crate::Sprt`]).
    pub pair: Option<PairScore>,
    /// The statistics so far (`records` empty).
    pub summary: &'a MatchResult,
}

/// Plays a match between the players `make_a` and `make_b` build, see the [module
/// documentation](self). After each game (in game order) `progress` is called; returning
/// `ControlFlow::Break(())` stops the match: games in flight are finished and dropped, and the
/// result holds the games counted so far (`stopped` is set). Every game goes to
/// `config.pdn` if set.
pub fn run_match<A, B, F>(config: &MatchConfig, make_a: &A, make_b: &B, progress: F) -> Result<MatchResult, MatchError>
where
    A: Fn() -> Result<Box<dyn Player>, BuildError> + Sync,
    B: Fn() -> Result<Box<dyn Player>, BuildError> + Sync,
    F: FnMut(&Progress<'_>) -> ControlFlow<()>,
{
    let mut pdn = match &config.pdn {
        Some(path) => Some(PdnFile::create(path, config.rules)?),
        None => None,
    };
    let result = run_match_into(config, make_a, make_b, pdn.as_mut(), None, progress)?;
    if let Some(file) = pdn {
        file.finish()?;
    }
    Ok(result)
}

/// [`run_match`] writing to an open [`PdnFile`] (left open), with an optional `Round` prefix;
/// `config.pdn` is ignored.
pub fn run_match_into<F>(
    config: &MatchConfig,
    make_a: &Maker<'_>,
    make_b: &Maker<'_>,
    mut pdn: Option<&mut PdnFile>,
    round_prefix: Option<&str>,
    mut progress: F,
) -> Result<MatchResult, MatchError>
where
    F: FnMut(&Progress<'_>) -> ControlFlow<()>,
{
    if config.games % 2 != 0 {
        return Err(MatchError::Config(format!(
            "games must be even (each opening is played twice with colours swapped), got {}",
            config.games
        )));
    }
    if config.concurrency == 0 {
        return Err(MatchError::Config("concurrency must be at least 1".to_owned()));
    }
    if config.openings.is_empty() {
        return Err(MatchError::Config("no openings".to_owned()));
    }
    for o in &config.openings {
        openings::check_live(o, &config.rules).map_err(|kind| MatchError::Opening {
            index: o.index,
            label: o.label.clone(),
            kind,
        })?;
    }
    // Build each player once here: a spec that cannot be built fails the match now, and the
    // names are known before any game.
    let name_a = make_a().map_err(|source| MatchError::Build { which: "A".to_owned(), source })?.name();
    let name_b = make_b().map_err(|source| MatchError::Build { which: "B".to_owned(), source })?.name();

    let mut order: Vec<usize> = (0..config.openings.len()).collect();
    if config.shuffle_openings {
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(mix_seed(config.seed, u64::MAX)));
    }
    let referee = Referee { rules: config.rules, max_plies: config.max_plies, time: config.time };
    let pairs = config.games / 2;
    let workers = config.concurrency.min(pairs.max(1));

    let mut tally = Tally::default();
    tally.result.a = name_a.clone();
    tally.result.b = name_b.clone();
    tally.result.seed = config.seed;
    tally.result.rules = config.rules.to_string();
    tally.refresh();
    let mut records = Vec::with_capacity(config.games);
    let mut failure = None;
    let mut stopped = false;

    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<MatchGame>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let job = Job {
                make: [make_a, make_b],
                names: [&name_a, &name_b],
                referee: &referee,
                config,
                order: &order,
                next: &next,
                stop: &stop,
                pairs,
            };
            scope.spawn(move || job.run(&tx));
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut expected = 0;
        for game in rx {
            pending.insert(game.index, game);
            if stop.load(Ordering::Relaxed) {
                continue; // drain the channel so workers never block
            }
            while let Some(game) = pending.remove(&expected) {
                expected += 1;
                if let Some(file) = pdn.as_deref_mut() {
                    let round = match round_prefix {
                        Some(p) => format!("{p}.{}.{}", game.pair + 1, game.index % 2 + 1),
                        None => format!("{}.{}", game.pair + 1, game.index % 2 + 1),
                    };
                    if let Err(e) = file.write(&game.to_pdn_with_round(&config.event, &round)) {
                        failure = Some(e);
                        stop.store(true, Ordering::Relaxed);
                        break;
                    }
                }
                let pair = tally.add(&game);
                let flow = progress(&Progress {
                    game: &game,
                    games_done: expected,
                    games_total: config.games,
                    pair,
                    summary: &tally.result,
                });
                records.push(game);
                if flow.is_break() {
                    stopped = expected < config.games;
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    let mut result = tally.result;
    result.stopped = stopped;
    result.records = records;
    Ok(result)
}

/// What one worker needs.
struct Job<'a, 'm> {
    make: [&'a Maker<'m>; 2],
    names: [&'a String; 2],
    referee: &'a Referee,
    config: &'a MatchConfig,
    order: &'a [usize],
    next: &'a AtomicUsize,
    stop: &'a AtomicBool,
    pairs: usize,
}

impl Job<'_, '_> {
    fn run(&self, tx: &mpsc::Sender<MatchGame>) {
        // This worker's players, A and B, built on first use and rebuilt after a crash.
        let mut players: [Option<Box<dyn Player>>; 2] = [None, None];
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            let pair = self.next.fetch_add(1, Ordering::Relaxed);
            if pair >= self.pairs {
                return;
            }
            let opening = &self.config.openings[self.order[pair % self.order.len()]];
            for second in [false, true] {
                if self.stop.load(Ordering::Relaxed) {
                    return;
                }
                let index = 2 * pair + usize::from(second);
                let a_white = !second;
                let seeds = [mix_seed(self.config.seed, 2 * index as u64), mix_seed(self.config.seed, 2 * index as u64 + 1)];
                let record = self.play(&mut players, a_white, opening, seeds);
                if let Termination::Forfeit { loser, reason } = &record.termination {
                    if reason.breaks_player() {
                        let a_lost = (*loser == Color::White) == a_white;
                        players[usize::from(!a_lost)] = None;
                    }
                }
                if tx.send(MatchGame { index, pair, a_white, record }).is_err() {
                    return;
                }
            }
        }
    }

    /// One game; a player that cannot be built forfeits it.
    fn play(&self, players: &mut [Option<Box<dyn Player>>; 2], a_white: bool, opening: &Opening, seeds: [u64; 2]) -> GameRecord {
        for (side, slot) in players.iter_mut().enumerate() {
            if slot.is_none() {
                match (self.make[side])() {
                    Ok(p) => *slot = Some(p),
                    Err(e) => {
                        // Player `side` (0 = A) forfeits before the first move.
                        let a_lost = side == 0;
                        let loser = if a_lost == a_white { Color::White } else { Color::Black };
                        let (white, black) =
                            if a_white { (self.names[0], self.names[1]) } else { (self.names[1], self.names[0]) };
                        let game = opening.game(self.referee.rules);
                        let termination = Termination::Forfeit {
                            loser,
                            reason: Forfeit::Crashed { detail: format!("could not be built: {e}") },
                        };
                        return GameRecord {
                            white: white.clone(),
                            black: black.clone(),
                            opening: opening.index,
                            start: opening.start,
                            moves: game.moves().collect(),
                            opening_plies: game.ply(),
                            result: termination.result(),
                            termination,
                            plies: 0,
                            time_used: Default::default(),
                        };
                    }
                }
            }
        }
        let [a, b] = players;
        // Both were built just above.
        let (a, b) = (a.as_deref_mut().expect("built"), b.as_deref_mut().expect("built"));
        if a_white {
            self.referee.play(a, b, opening, seeds)
        } else {
            self.referee.play(b, a, opening, seeds)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_formatting() {
        assert_eq!(format_elo(80.4), "+80");
        assert_eq!(format_elo(-0.3), "+0");
        assert_eq!(format_elo(-41.6), "-42");
        assert_eq!(format_elo(f64::INFINITY), "+inf");
        assert_eq!(format_elo(f64::NAN), "-");
    }

    #[test]
    fn progress_line_format() {
        let r = MatchResult {
            wins_a: 5,
            draws: 3,
            losses_a: 2,
            games: 10,
            score_a: 0.65,
            elo: 107.5,
            elo_low: 12.2,
            elo_high: 220.0,
            ..MatchResult::default()
        };
        assert_eq!(r.progress_line(), "+5 =3 -2  score 65.0%  Elo +108 [+12, +220]");
    }
}
