//! Round-robin tournaments with maximum-likelihood ratings.

use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};

use crate::runner::{run_match_into, MatchConfig, MatchError, MatchResult, Maker, PdnFile, Progress};
use crate::stats::{fit_ratings, PairTally, RatingFit, RatingOptions};

/// A tournament player: its name in the table and how to build it.
pub struct Entrant<'a> {
    /// Name in the table (and in errors).
    pub name: String,
    /// Builds a fresh instance.
    pub make: &'a Maker<'a>,
}

impl std::fmt::Debug for Entrant<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entrant").field("name", &self.name).finish_non_exhaustive()
    }
}

/// One pairing's match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pairing {
    /// Index of the first player (player A of the match).
    pub a: usize,
    /// Index of the second player.
    pub b: usize,
    /// The match.
    pub result: MatchResult,
}

/// The outcome of a tournament.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentResult {
    /// Player names, in the order given.
    pub players: Vec<String>,
    /// Every pairing's match, in schedule order (0-1, 0-2, ..., 1-2, ...).
    pub pairings: Vec<Pairing>,
    /// The fitted ratings, if the results allow them.
    pub ratings: Option<RatingFit>,
    /// Why there are no ratings (for example a player lost every game and no virtual draws
    /// were given).
    pub rating_error: Option<String>,
    /// Whether the progress callback stopped the tournament early.
    pub stopped: bool,
}

impl TournamentResult {
    /// The ratings table as lines `rank name elo [low, high] points/games`, best first.
    pub fn table(&self) -> Vec<String> {
        let Some(fit) = &self.ratings else { return Vec::new() };
        let mut order: Vec<usize> = (0..self.players.len()).collect();
        order.sort_by(|&x, &y| fit.ratings[y].elo.total_cmp(&fit.ratings[x].elo));
        let width = self.players.iter().map(String::len).max().unwrap_or(0);
        order
            .iter()
            .enumerate()
            .map(|(rank, &i)| {
                let r = &fit.ratings[i];
                format!(
                    "{:>2}. {:<width$}  {:>6.0}  [{:>6.0}, {:>6.0}]  {}/{}",
                    rank + 1,
                    self.players[i],
                    r.elo,
                    r.low,
                    r.high,
                    r.points,
                    r.games
                )
            })
            .collect()
    }
}

/// Plays a round robin: every pair of players meets in one match of `config.games` games
/// (same openings, seed and rules for every pairing; player A of a pairing is the one listed
/// first), then fits ratings anchored as `rating` says. All games go to one PDN file
/// (`config.pdn`) whose `Round` tag is `pairing.pair.game`. `progress` gets the pairing's
/// player indices and the match progress; `Break` stops the whole tournament (ratings are
/// fitted from the games played).
pub fn run_tournament<F>(
    players: &[Entrant<'_>],
    config: &MatchConfig,
    rating: &RatingOptions,
    mut progress: F,
) -> Result<TournamentResult, MatchError>
where
    F: FnMut(usize, usize, &Progress<'_>) -> ControlFlow<()>,
{
    if players.len() < 2 {
        return Err(MatchError::Config(format!("a tournament needs at least two players, got {}", players.len())));
    }
    if rating.anchor >= players.len() {
        return Err(MatchError::Config(format!("anchor {} is not one of the {} players", rating.anchor, players.len())));
    }
    let mut pdn = match &config.pdn {
        Some(path) => Some(PdnFile::create(path, config.rules)?),
        None => None,
    };
    let mut pairings = Vec::new();
    let mut stopped = false;
    let mut number = 0;
    'all: for a in 0..players.len() {
        for b in a + 1..players.len() {
            number += 1;
            let prefix = number.to_string();
            let mut halt = false;
            let result = run_match_into(config, players[a].make, players[b].make, pdn.as_mut(), Some(&prefix), |p| {
                let flow = progress(a, b, p);
                halt |= flow.is_break();
                flow
            })
            .map_err(|e| match e {
                MatchError::Build { which, source } => {
                    let name = if which == "A" { &players[a].name } else { &players[b].name };
                    MatchError::Build { which: name.clone(), source }
                }
                other => other,
            })?;
            pairings.push(Pairing { a, b, result });
            if halt {
                stopped = true;
                break 'all;
            }
        }
    }
    if let Some(file) = pdn {
        file.finish()?;
    }
    let tallies: Vec<PairTally> = pairings.iter().map(|p| PairTally { a: p.a, b: p.b, wdl: p.result.wdl() }).collect();
    let (ratings, rating_error) = match fit_ratings(players.len(), &tallies, rating) {
        Ok(fit) => (Some(fit), None),
        Err(e) => (None, Some(e.to_string())),
    };
    Ok(TournamentResult {
        players: players.iter().map(|p| p.name.clone()).collect(),
        pairings,
        ratings,
        rating_error,
        stopped,
    })
}
