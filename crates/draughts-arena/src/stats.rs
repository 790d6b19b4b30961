//! Match statistics: scores, Elo differences with 95% intervals (pentanomial over game pairs and
//! trinomial over single games), likelihood of superiority, the GSPRT used for gating, and
//! maximum-likelihood ratings for tournaments.
//!
//! Conventions. A game scores 1, 1/2 or 0 for the first player ("A"). A game pair (the same
//! opening played twice with colours swapped) scores 0, 1/2, 1, 3/2 or 2 points; the pentanomial
//! model works with the pair score divided by two, so that every sample lies in [0, 1] and its
//! mean is comparable with a per-game score. Elo is the logistic Elo of the chess world:
//! a score `s` means an Elo difference of `-400 log10(1/s - 1)`.
//!
//! Sources: Michel Van den Bergh, "Pentanomial statistics" and "A simple approximation of the
//! GSPRT for various score-based models" (notes behind fishtest, `server/fishtest/stats/` in
//! github.com/official-stockfish/fishtest); R. Coulom, "Bayesian Elo Rating" (bayeselo) for the
//! rating model; D. R. Hunter, "MM algorithms for generalized Bradley-Terry models", Annals of
//! Statistics 32(1), 2004, for the fitting iteration.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The two-sided 95% quantile of the standard normal distribution, `Phi^-1(0.975)`.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The Elo difference that an expected score `s` (0..1) stands for:
/// `elo = -400 log10(1/s - 1)` (logistic model). `s = 0` and `s = 1` give minus and plus
/// infinity; a score outside [0, 1] gives NaN.
pub fn elo_from_score(s: f64) -> f64 {
    if !(0.0..=1.0).contains(&s) {
        return f64::NAN;
    }
    -400.0 * (1.0 / s - 1.0).log10()
}

/// The expected score of an Elo difference: `s = 1 / (1 + 10^(-elo/400))`, the inverse of
/// [`elo_from_score`].
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The error function `erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt`, to about 1e-15
/// absolute, exactly odd.
///
/// Series with positive terms (Abramowitz and Stegun, *Handbook of Mathematical Functions*,
/// 7.1.6): `erf(z) = 2/sqrt(pi) exp(-z^2) sum_n 2^n z^(2n+1) / (1 * 3 * ... * (2n+1))`, which
/// has no cancellation; for `|z| >= 6`, `1 - erf(z) < 3e-17` and the result is +-1.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let z = x.abs();
    if z >= 6.0 {
        return x.signum();
    }
    let mut term = z;
    let mut sum = z;
    let mut n = 0.0;
    while term > sum * 1e-17 {
        n += 1.0;
        term *= 2.0 * z * z / (2.0 * n + 1.0);
        sum += term;
    }
    let r = (2.0 / std::f64::consts::PI.sqrt() * (-z * z).exp() * sum).min(1.0);
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// The standard normal distribution function `Phi(x) = (1 + erf(x / sqrt 2)) / 2`.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2))
}

/// A score estimate with its 95% interval, in score and in Elo.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Number of samples: games (trinomial) or game pairs (pentanomial).
    pub samples: u64,
    /// Mean score per sample, in [0, 1] (a pair's score is halved).
    #[serde(with = "nullable_f64")]
    pub score: f64,
    /// Variance of one sample around the mean (population variance, the maximum-likelihood
    /// estimate).
    #[serde(with = "nullable_f64")]
    pub variance: f64,
    /// Standard error of the mean, `sqrt(variance / samples)`.
    #[serde(with = "nullable_f64")]
    pub std_error: f64,
    /// Lower end of the 95% interval on the score, `score - Z95 * std_error`, clamped to [0, 1].
    #[serde(with = "nullable_f64")]
    pub score_low: f64,
    /// Upper end of the 95% interval on the score, clamped to [0, 1].
    #[serde(with = "nullable_f64")]
    pub score_high: f64,
    /// The Elo difference of `score`.
    #[serde(with = "nullable_f64")]
    pub elo: f64,
    /// The Elo difference of `score_low`.
    #[serde(with = "nullable_f64")]
    pub elo_low: f64,
    /// The Elo difference of `score_high`.
    #[serde(with = "nullable_f64")]
    pub elo_high: f64,
    /// Likelihood of superiority: the probability that the first player is the stronger one,
    /// see the function that made the estimate.
    pub los: f64,
}

impl Estimate {
    /// The estimate from `samples` samples with mean `mean` and per-sample variance `variance`:
    /// normal approximation, interval `mean +- Z95 sqrt(variance / samples)` mapped through
    /// [`elo_from_score`], and `los = Phi((mean - 1/2) / std_error)`.
    ///
    /// With no sample everything is NaN except `los = 1/2`. With zero variance (every sample
    /// equal) the interval is the point and `los` is 0, 1/2 or 1.
    pub fn from_moments(samples: u64, mean: f64, variance: f64) -> Estimate {
        if samples == 0 {
            return Estimate {
                samples,
                score: f64::NAN,
                variance: f64::NAN,
                std_error: f64::NAN,
                score_low: f64::NAN,
                score_high: f64::NAN,
                elo: f64::NAN,
                elo_low: f64::NAN,
                elo_high: f64::NAN,
                los: 0.5,
            };
        }
        let std_error = (variance / samples as f64).sqrt();
        let score_low = (mean - Z95 * std_error).clamp(0.0, 1.0);
        let score_high = (mean + Z95 * std_error).clamp(0.0, 1.0);
        let los = if std_error > 0.0 {
            normal_cdf((mean - 0.5) / std_error)
        } else if mean > 0.5 {
            1.0
        } else if mean < 0.5 {
            0.0
        } else {
            0.5
        };
        Estimate {
            samples,
            score: mean,
            variance,
            std_error,
            score_low,
            score_high,
            elo: elo_from_score(mean),
            elo_low: elo_from_score(score_low),
            elo_high: elo_from_score(score_high),
            los,
        }
    }
}

/// Wins, draws and losses of the first player over single games (the trinomial model).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Wdl {
    /// Games the first player won.
    pub wins: u64,
    /// Drawn games.
    pub draws: u64,
    /// Games the first player lost.
    pub losses: u64,
}

impl Wdl {
    /// Games in total.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// The first player's points: `W + D/2`.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }

    /// Score, interval and Elo treating games as independent samples with values 1, 1/2, 0:
    /// `s = (W + D/2) / N`, `var = (W (1-s)^2 + D (1/2-s)^2 + L s^2) / N`, interval
    /// `s +- Z95 sqrt(var / N)`. This ignores that the two games of a pair share an opening;
    /// use [`Pentanomial::estimate`] for paired games. The `los` is the normal-approximation
    /// analogue `Phi((s - 1/2) / se)`; the classical formula is [`Wdl::los`].
    pub fn estimate(&self) -> Estimate {
        let n = self.games();
        if n == 0 {
            return Estimate::from_moments(0, f64::NAN, f64::NAN);
        }
        let nf = n as f64;
        let s = self.points() / nf;
        let var = (self.wins as f64 * (1.0 - s).powi(2)
            + self.draws as f64 * (0.5 - s).powi(2)
            + self.losses as f64 * s.powi(2))
            / nf;
        Estimate::from_moments(n, s, var)
    }

    /// The classical likelihood of superiority from wins and losses only (draws carry no
    /// information): `LOS = Phi((W - L) / sqrt(W + L))`, 1/2 when `W + L = 0`. (Normal
    /// approximation to the binomial test on decisive games; see the Chess Programming Wiki,
    /// "Match Statistics".)
    pub fn los(&self) -> f64 {
        let decisive = self.wins + self.losses;
        if decisive == 0 {
            return 0.5;
        }
        normal_cdf((self.wins as f64 - self.losses as f64) / (decisive as f64).sqrt())
    }
}

/// The score of a game pair for the first player: 0, 1/2, 1, 3/2 or 2 points, kept as half
/// points 0..=4.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PairScore(u8);

impl PairScore {
    /// The pair score worth `half_points` half points (0..=4); `None` above 4.
    pub const fn from_half_points(half_points: u8) -> Option<PairScore> {
        if half_points <= 4 {
            Some(PairScore(half_points))
        } else {
            None
        }
    }

    /// The pair score from the first player's half points in each game (0, 1 or 2 each); `None`
    /// if either is above 2.
    pub const fn from_games(first: u8, second: u8) -> Option<PairScore> {
        if first <= 2 && second <= 2 {
            Some(PairScore(first + second))
        } else {
            None
        }
    }

    /// Half points, 0..=4: the index into [`Pentanomial::counts`].
    pub const fn half_points(self) -> u8 {
        self.0
    }

    /// Points, 0 to 2.
    pub fn points(self) -> f64 {
        f64::from(self.0) / 2.0
    }

    /// The pair's sample value in the pentanomial model: points / 2, in [0, 1].
    pub fn normalized(self) -> f64 {
        f64::from(self.0) / 4.0
    }
}

/// Counts of game pairs by the first player's pair score: `counts[k]` pairs scored `k/2` points
/// (k = 0..=4, so 0, 1/2, 1, 3/2, 2 points).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Pentanomial {
    /// Pairs per score, worst first.
    pub counts: [u64; 5],
}

impl Pentanomial {
    /// Counts one more pair.
    pub fn add(&mut self, pair: PairScore) {
        self.counts[pair.half_points() as usize] += 1;
    }

    /// Number of pairs.
    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Mean and per-pair variance of the normalized pair score `x_k = k/4` over counts `n_k`:
    /// `mean = sum n_k x_k / N`, `var = sum n_k (x_k - mean)^2 / N` (Van den Bergh,
    /// "Pentanomial statistics"). `None` with no pair.
    pub fn moments(&self) -> Option<(f64, f64)> {
        moments(&self.counts.map(|c| c as f64))
    }

    /// Score, 95% interval and Elo over game pairs: `s = mean`, `se = sqrt(var / N)`, interval
    /// `s +- Z95 se` mapped through [`elo_from_score`]; `los = Phi((s - 1/2) / se)`, the
    /// pentanomial analogue of the likelihood of superiority (the classical
    /// `Phi((W-L)/sqrt(W+L))` is [`Wdl::los`]).
    ///
    /// Pairing removes the variance that an unbalanced opening adds (it favours one colour in
    /// both games of its pair), so this interval is narrower than the trinomial one and still
    /// honest.
    pub fn estimate(&self) -> Estimate {
        match self.moments() {
            Some((mean, var)) => Estimate::from_moments(self.pairs(), mean, var),
            None => Estimate::from_moments(0, f64::NAN, f64::NAN),
        }
    }
}

/// Mean and population variance of the values `k/4` weighted by `counts[k]`.
fn moments(counts: &[f64; 5]) -> Option<(f64, f64)> {
    let n: f64 = counts.iter().sum();
    if n <= 0.0 {
        return None;
    }
    let x = |k: usize| k as f64 / 4.0;
    let mean = counts.iter().enumerate().map(|(k, c)| c * x(k)).sum::<f64>() / n;
    let var = counts.iter().enumerate().map(|(k, c)| c * (x(k) - mean).powi(2)).sum::<f64>() / n;
    Some((mean, var))
}

/// The GSPRT settings: H0 "the first player is `elo0` stronger", H1 "it is `elo1` stronger",
/// false-positive rate `alpha`, false-negative rate `beta`.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtConfig {
    /// Elo difference of the null hypothesis (logistic Elo).
    pub elo0: f64,
    /// Elo difference of the alternative hypothesis; greater than `elo0`.
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    pub beta: f64,
    /// No decision before this many pairs: the variance in the LLR is estimated from the
    /// sample, and from a handful of pairs it is unreliable (a single lost pair alone would
    /// give an LLR below the lower bound).
    #[serde(default = "default_min_pairs")]
    pub min_pairs: u64,
}

fn default_min_pairs() -> u64 {
    SprtConfig::DEFAULT_MIN_PAIRS
}

impl SprtConfig {
    /// The default of [`SprtConfig::min_pairs`]: 10 pairs (20 games).
    pub const DEFAULT_MIN_PAIRS: u64 = 10;
}

impl Default for SprtConfig {
    /// The common gating test: H0 = 0 Elo, H1 = +10 Elo, alpha = beta = 0.05, from 10 pairs.
    fn default() -> SprtConfig {
        SprtConfig { elo0: 0.0, elo1: 10.0, alpha: 0.05, beta: 0.05, min_pairs: SprtConfig::DEFAULT_MIN_PAIRS }
    }
}

/// Bad SPRT settings.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum SprtError {
    /// `elo0 >= elo1` or a bound that is not finite.
    #[error("SPRT bounds must satisfy elo0 < elo1 (got elo0 = {elo0}, elo1 = {elo1})")]
    Bounds {
        /// The given elo0.
        elo0: f64,
        /// The given elo1.
        elo1: f64,
    },
    /// An error rate outside (0, 1/2).
    #[error("SPRT {name} must be strictly between 0 and 0.5 (got {value})")]
    Rate {
        /// `alpha` or `beta`.
        name: &'static str,
        /// The given value.
        value: f64,
    },
}

/// Where an SPRT stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SprtStatus {
    /// Neither bound reached: play on.
    Continue,
    /// The LLR fell to the lower bound: H0 accepted (the first player is not `elo1` stronger).
    AcceptH0,
    /// The LLR rose to the upper bound: H1 accepted (the first player is stronger).
    AcceptH1,
}

impl SprtStatus {
    /// Whether the test has stopped.
    pub fn is_decided(self) -> bool {
        self != SprtStatus::Continue
    }
}

/// A sequential probability ratio test on the pentanomial model, fed one game pair at a time
/// (the generalized SPRT of fishtest).
///
/// Log-likelihood ratio (Van den Bergh, "A simple approximation of the GSPRT for various
/// score-based models"): with `s0`, `s1` the expected scores of `elo0`, `elo1`
/// ([`score_from_elo`]), `mean` and `var` the per-pair moments of the normalized pair scores and
/// `N` the number of pairs,
///
/// `LLR = N (s1 - s0) (2 mean - s0 - s1) / (2 var)`.
///
/// As fishtest's `stat_util.regularize`, empty pentanomial cells are counted as 1e-3 pairs
/// before the moments are taken, so that the variance is never zero (a run of identical pairs
/// still moves the LLR). From `min_pairs` pairs on, the test stops (Wald) when `LLR <= ln(beta / (1 - alpha))` (accept H0)
/// or `LLR >= ln((1 - beta) / alpha)` (accept H1); after that, further pairs are still counted
/// but the decision stays.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sprt {
    config: SprtConfig,
    counts: Pentanomial,
    decision: Option<(SprtStatus, u64)>,
}

/// Counts below this are replaced by it in the SPRT (fishtest's `regularize`).
const REGULARIZE: f64 = 1e-3;

impl Sprt {
    /// A test with no pair yet.
    pub fn new(config: SprtConfig) -> Result<Sprt, SprtError> {
        let SprtConfig { elo0, elo1, alpha, beta, .. } = config;
        if !(elo0.is_finite() && elo1.is_finite() && elo0 < elo1) {
            return Err(SprtError::Bounds { elo0, elo1 });
        }
        for (name, value) in [("alpha", alpha), ("beta", beta)] {
            if !(value > 0.0 && value < 0.5) {
                return Err(SprtError::Rate { name, value });
            }
        }
        Ok(Sprt { config, counts: Pentanomial::default(), decision: None })
    }

    /// The settings.
    pub fn config(&self) -> &SprtConfig {
        &self.config
    }

    /// The pairs counted so far.
    pub fn pentanomial(&self) -> &Pentanomial {
        &self.counts
    }

    /// Counts one game pair and returns the status (decided tests stay decided).
    pub fn add_pair(&mut self, pair: PairScore) -> SprtStatus {
        self.counts.add(pair);
        if self.decision.is_none() && self.counts.pairs() >= self.config.min_pairs {
            let llr = self.llr();
            let (lower, upper) = self.bounds();
            if llr <= lower {
                self.decision = Some((SprtStatus::AcceptH0, self.counts.pairs()));
            } else if llr >= upper {
                self.decision = Some((SprtStatus::AcceptH1, self.counts.pairs()));
            }
        }
        self.status()
    }

    /// The status: decided at the first pair whose LLR crossed a bound.
    pub fn status(&self) -> SprtStatus {
        self.decision.map_or(SprtStatus::Continue, |(s, _)| s)
    }

    /// The number of pairs at which the test was decided.
    pub fn decided_after(&self) -> Option<u64> {
        self.decision.map(|(_, n)| n)
    }

    /// `(ln(beta / (1 - alpha)), ln((1 - beta) / alpha))`: the lower and upper LLR bounds.
    pub fn bounds(&self) -> (f64, f64) {
        let SprtConfig { alpha, beta, .. } = self.config;
        ((beta / (1.0 - alpha)).ln(), ((1.0 - beta) / alpha).ln())
    }

    /// The log-likelihood ratio of the pairs counted so far (0 with no pair).
    pub fn llr(&self) -> f64 {
        llr_pentanomial(&self.counts, self.config.elo0, self.config.elo1)
    }
}

/// The GSPRT log-likelihood ratio of H1 (`elo1`) against H0 (`elo0`) for pentanomial counts, see
/// [`Sprt`]: `N (s1 - s0) (2 mean - s0 - s1) / (2 var)` on regularized counts; 0 with no pair.
pub fn llr_pentanomial(counts: &Pentanomial, elo0: f64, elo1: f64) -> f64 {
    if counts.pairs() == 0 {
        return 0.0;
    }
    let reg = counts.counts.map(|c| if c == 0 { REGULARIZE } else { c as f64 });
    let n: f64 = reg.iter().sum();
    let Some((mean, var)) = moments(&reg) else { return 0.0 };
    let (s0, s1) = (score_from_elo(elo0), score_from_elo(elo1));
    n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
}

/// Serialises a float as a JSON number, or `null` when it is not finite (JSON has no infinity);
/// reads `null` back as NaN.
pub(crate) mod nullable_f64 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
        if value.is_finite() {
            s.serialize_f64(*value)
        } else {
            s.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

/// The results between two players of a tournament, from the first one's point of view.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PairTally {
    /// Index of the first player.
    pub a: usize,
    /// Index of the second player.
    pub b: usize,
    /// The first player's wins, draws and losses against the second.
    pub wdl: Wdl,
}

/// Settings of [`fit_ratings`].
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingOptions {
    /// Index of the player whose rating is fixed.
    pub anchor: usize,
    /// The anchor's rating (for example 0, or the known Elo of `alphabeta:depth=4`).
    pub anchor_elo: f64,
    /// Virtual draws added to every pair of players that met (a prior, as bayeselo's
    /// `prior`). 0 gives the plain maximum-likelihood ratings, which are infinite when a player
    /// won or lost every game; any positive value keeps them finite.
    pub virtual_draws: f64,
    /// Iteration cap of the MM algorithm.
    pub max_iterations: u32,
    /// Stop when no rating moved by more than this many Elo in one iteration.
    pub tolerance_elo: f64,
}

impl Default for RatingOptions {
    fn default() -> RatingOptions {
        RatingOptions { anchor: 0, anchor_elo: 0.0, virtual_draws: 0.0, max_iterations: 100_000, tolerance_elo: 1e-9 }
    }
}

/// One player's fitted rating.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// Rating in logistic Elo, relative to the anchor.
    pub elo: f64,
    /// Standard error of `elo - anchor_elo` (0 for the anchor).
    pub std_error: f64,
    /// `elo - Z95 * std_error`.
    pub low: f64,
    /// `elo + Z95 * std_error`.
    pub high: f64,
    /// Games played (virtual draws not counted).
    pub games: u64,
    /// Points scored (virtual draws not counted).
    pub points: f64,
}

/// Ratings of every player of a tournament.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingFit {
    /// One rating per player, in the players' order.
    pub ratings: Vec<Rating>,
    /// MM iterations used.
    pub iterations: u32,
    /// Whether the iteration met the tolerance before the cap.
    pub converged: bool,
    /// The dispersion factor applied to the covariance (see [`fit_ratings`]).
    pub dispersion: f64,
}

/// Why ratings could not be fitted.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RatingError {
    /// Fewer than two players, or an anchor that is not a player.
    #[error("cannot rate {players} player(s) anchored at player {anchor}")]
    Setup {
        /// Number of players.
        players: usize,
        /// The anchor index given.
        anchor: usize,
    },
    /// A result names a player that does not exist, or a player against itself.
    #[error("result between players {a} and {b} does not fit {players} players")]
    BadPair {
        /// First index.
        a: usize,
        /// Second index.
        b: usize,
        /// Number of players.
        players: usize,
    },
    /// The maximum-likelihood ratings are not finite: some group of players scored every
    /// point, or no point, against everyone outside it (or never met them).
    #[error(
        "no finite maximum-likelihood ratings: players {group:?} never scored against, or never lost to, the others \
         (add virtual draws for finite ratings)"
    )]
    Separated {
        /// Indices of the players on one side of the split.
        group: Vec<usize>,
    },
}

/// Maximum-likelihood ratings of `players` players from pairwise results.
///
/// Model: Bradley-Terry with logistic Elo, `P(i beats j) = 1 / (1 + 10^((R_j - R_i) / 400))`,
/// a draw counted as half a win and half a loss (as in the Elo system; Coulom's bayeselo with
/// `drawelo = 0` and no colour advantage). With `S_i` the points of player `i`, `n_ij` the games
/// between `i` and `j` and `g_i = 10^(R_i / 400)`, the likelihood is maximised by Hunter's MM
/// iteration (Hunter 2004, eq. 3)
///
/// `g_i <- S_i / sum_j n_ij / (g_i + g_j)`,
///
/// renormalised every step; the fixed point satisfies `S_i = sum_j n_ij p_ij` for every `i`. The
/// ratings are then shifted so that the anchor has `anchor_elo`.
///
/// Intervals: with `t = R ln 10 / 400`, the Fisher information is `I_ii = sum_j n_ij p_ij p_ji`,
/// `I_ij = -n_ij p_ij p_ji`; removing the anchor's row and column and inverting gives the
/// covariance of the ratings relative to the anchor. Draws make a game less variable than the
/// Bernoulli model assumes, so the covariance is multiplied by the moment estimate of the
/// dispersion, `phi = sum_games (x - p)^2 / sum_games p (1 - p)` over the real games (1 for
/// win/loss results that fit the model exactly, below 1 with many draws, above 1 when results
/// contradict the model; quasi-likelihood, McCullagh and Nelder, *Generalized Linear Models*,
/// 2nd ed., ch. 9). For two players this reproduces the delta-method interval of
/// [`Wdl::estimate`]. Interval: `R +- Z95 se`.
pub fn fit_ratings(players: usize, results: &[PairTally], options: &RatingOptions) -> Result<RatingFit, RatingError> {
    if players < 2 || options.anchor >= players {
        return Err(RatingError::Setup { players, anchor: options.anchor });
    }
    // Games and points per ordered pair, virtual draws included.
    let mut n = vec![vec![0.0f64; players]; players];
    let mut score = vec![vec![0.0f64; players]; players];
    let mut games = vec![0u64; players];
    let mut points = vec![0.0f64; players];
    for r in results {
        if r.a >= players || r.b >= players || r.a == r.b {
            return Err(RatingError::BadPair { a: r.a, b: r.b, players });
        }
        let (g, pa) = (r.wdl.games(), r.wdl.points());
        if g == 0 {
            continue;
        }
        n[r.a][r.b] += g as f64;
        n[r.b][r.a] += g as f64;
        score[r.a][r.b] += pa;
        score[r.b][r.a] += g as f64 - pa;
        games[r.a] += g;
        games[r.b] += g;
        points[r.a] += pa;
        points[r.b] += g as f64 - pa;
    }
    if options.virtual_draws > 0.0 {
        for i in 0..players {
            for j in 0..players {
                if i != j && n[i][j] > 0.0 {
                    n[i][j] += options.virtual_draws;
                    score[i][j] += options.virtual_draws / 2.0;
                }
            }
        }
    }
    // A finite maximum exists iff the graph "i scored against j" is strongly connected (Hunter
    // 2004, assumption 1).
    for forward in [true, false] {
        let mut seen = vec![false; players];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for j in 0..players {
                let edge = if forward { score[i][j] > 0.0 } else { score[j][i] > 0.0 };
                if !seen[j] && edge {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        if seen.iter().any(|s| !s) {
            let group = (0..players).filter(|&i| !seen[i]).collect();
            return Err(RatingError::Separated { group });
        }
    }

    let total: Vec<f64> = (0..players).map(|i| score[i].iter().sum()).collect();
    let mut g = vec![1.0f64; players];
    let mut iterations = 0;
    let mut converged = false;
    while iterations < options.max_iterations {
        iterations += 1;
        let mut next: Vec<f64> = (0..players)
            .map(|i| {
                let denom: f64 = (0..players).filter(|&j| j != i && n[i][j] > 0.0).map(|j| n[i][j] / (g[i] + g[j])).sum();
                total[i] / denom
            })
            .collect();
        // Renormalise to geometric mean 1 so the numbers stay in range.
        let log_mean = next.iter().map(|x| x.ln()).sum::<f64>() / players as f64;
        next.iter_mut().for_each(|x| *x /= log_mean.exp());
        let moved = g.iter().zip(&next).map(|(a, b)| (400.0 * (b / a).log10()).abs()).fold(0.0, f64::max);
        g = next;
        if moved <= options.tolerance_elo {
            converged = true;
            break;
        }
    }
    let elo_raw: Vec<f64> = g.iter().map(|x| 400.0 * x.log10()).collect();
    let shift = options.anchor_elo - elo_raw[options.anchor];
    let elo: Vec<f64> = elo_raw.iter().map(|r| r + shift).collect();

    let p = |i: usize, j: usize| score_from_elo(elo[i] - elo[j]);
    // Dispersion from the real games only.
    let (mut resid, mut model) = (0.0, 0.0);
    for r in results {
        let pa = p(r.a, r.b);
        let w = &r.wdl;
        resid += w.wins as f64 * (1.0 - pa).powi(2) + w.draws as f64 * (0.5 - pa).powi(2) + w.losses as f64 * pa.powi(2);
        model += w.games() as f64 * pa * (1.0 - pa);
    }
    let dispersion = if model > 0.0 { resid / model } else { 1.0 };

    // Information matrix without the anchor.
    let others: Vec<usize> = (0..players).filter(|&i| i != options.anchor).collect();
    let m = others.len();
    let mut info = vec![vec![0.0f64; m]; m];
    for (a, &i) in others.iter().enumerate() {
        for (j, &games) in n[i].iter().enumerate() {
            if j != i && games > 0.0 {
                let w = games * p(i, j) * p(j, i);
                info[a][a] += w;
                if let Some(b) = others.iter().position(|&o| o == j) {
                    info[a][b] -= w;
                }
            }
        }
    }
    let cov = invert(info);
    let scale = 400.0 / std::f64::consts::LN_10;
    let ratings = (0..players)
        .map(|i| {
            let std_error = match others.iter().position(|&o| o == i) {
                None => 0.0,
                Some(a) => match &cov {
                    Some(c) => (dispersion * c[a][a]).max(0.0).sqrt() * scale,
                    None => f64::INFINITY,
                },
            };
            Rating {
                elo: elo[i],
                std_error,
                low: elo[i] - Z95 * std_error,
                high: elo[i] + Z95 * std_error,
                games: games[i],
                points: points[i],
            }
        })
        .collect();
    Ok(RatingFit { ratings, iterations, converged, dispersion })
}

/// Inverse of a symmetric positive-definite matrix by Gauss-Jordan elimination with partial
/// pivoting; `None` if it is singular.
fn invert(mut a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut inv: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect()).collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        inv.swap(col, pivot);
        let d = a[col][col];
        for k in 0..n {
            a[col][k] /= d;
            inv[col][k] /= d;
        }
        for row in 0..n {
            if row != col {
                let f = a[row][col];
                if f != 0.0 {
                    for k in 0..n {
                        a[row][k] -= f * a[col][k];
                        inv[row][k] -= f * inv[col][k];
                    }
                }
            }
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn elo_and_score_are_inverse() {
        // 0.75 -> -400 log10(1/3) = 400 * 0.47712125472 = 190.848501888.
        assert!(close(elo_from_score(0.75), 190.848_501_888, 1e-6));
        assert_eq!(elo_from_score(0.5), 0.0);
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
        assert_eq!(elo_from_score(0.0), f64::NEG_INFINITY);
        assert!(elo_from_score(1.5).is_nan());
        for e in [-500.0, -35.5, 0.0, 12.0, 400.0] {
            assert!(close(elo_from_score(score_from_elo(e)), e, 1e-9), "{e}");
        }
        // 400 Elo -> 10 : 1 odds -> 10/11.
        assert!(close(score_from_elo(400.0), 10.0 / 11.0, 1e-15));
    }

    #[test]
    fn normal_cdf_values() {
        // Tabulated (A&S table 26.1, 15 digits): Phi(1) = 0.841344746068543,
        // Phi(2) = 0.977249868051821, Phi(-3) = 0.001349898031630; Phi(Z95) = 0.975.
        assert_eq!(normal_cdf(0.0), 0.5);
        assert!(close(normal_cdf(1.0), 0.841_344_746_068_543, 1e-14));
        assert!(close(normal_cdf(2.0), 0.977_249_868_051_821, 1e-14));
        assert!(close(normal_cdf(-3.0), 0.001_349_898_031_630, 1e-14));
        assert!(close(normal_cdf(Z95), 0.975, 1e-14));
        assert!(close(normal_cdf(-1.3) + normal_cdf(1.3), 1.0, 1e-15));
        assert_eq!(normal_cdf(-40.0), 0.0);
        assert_eq!(normal_cdf(40.0), 1.0);
    }

    #[test]
    fn trinomial_by_hand() {
        // W = 6, D = 8, L = 2, N = 16: s = (6 + 4) / 16 = 0.625.
        // var = (6 * 0.375^2 + 8 * 0.125^2 + 2 * 0.625^2) / 16
        //     = (6 * 0.140625 + 8 * 0.015625 + 2 * 0.390625) / 16
        //     = (0.84375 + 0.125 + 0.78125) / 16 = 1.75 / 16 = 0.109375.
        // se = sqrt(0.109375 / 16) = sqrt(0.0068359375) = 0.0826797...
        // Elo = -400 log10(1/0.625 - 1) = -400 log10(0.6) = 88.7395...
        let wdl = Wdl { wins: 6, draws: 8, losses: 2 };
        let e = wdl.estimate();
        assert_eq!(e.samples, 16);
        assert!(close(e.score, 0.625, 1e-15));
        assert!(close(e.variance, 0.109_375, 1e-15));
        assert!(close(e.std_error, 0.006_835_937_5f64.sqrt(), 1e-15));
        assert!(close(e.elo, 88.739_499_846, 1e-6));
        let low = 0.625 - Z95 * 0.006_835_937_5f64.sqrt();
        assert!(close(e.score_low, low, 1e-12));
        assert!(close(e.elo_low, -400.0 * (1.0 / low - 1.0).log10(), 1e-9));
        // Classical LOS: Phi((6 - 2) / sqrt 8) = Phi(1.41421356) = 0.921350396.
        assert!(close(wdl.los(), 0.921_350_396, 1e-7));
    }

    #[test]
    fn pentanomial_by_hand() {
        // 10 pairs: 1 x 0, 2 x 1/2, 3 x 1, 3 x 3/2, 1 x 2 points; normalized 0, .25, .5, .75, 1.
        // mean = (0 + 2*.25 + 3*.5 + 3*.75 + 1) / 10 = (0.5 + 1.5 + 2.25 + 1) / 10 = 0.525.
        // deviations -0.525, -0.275, -0.025, 0.225, 0.475; squares 0.275625, 0.075625,
        // 0.000625, 0.050625, 0.225625; weighted sum 0.275625 + 0.15125 + 0.001875 + 0.151875
        // + 0.225625 = 0.80625; var = 0.080625; se = sqrt(0.0080625) = 0.0897914250...
        // Elo = -400 log10(1/0.525 - 1) = -400 log10(0.904761905) = 17.38628...
        // interval: 0.525 +- 1.959964 * 0.089791425 = [0.349012, 0.700988]
        //   -> Elo [-400 log10(1/0.349012 - 1), -400 log10(1/0.700988 - 1)] = [-108.29, +148.01].
        let p = Pentanomial { counts: [1, 2, 3, 3, 1] };
        let e = p.estimate();
        assert_eq!(e.samples, 10);
        assert!(close(e.score, 0.525, 1e-15));
        assert!(close(e.variance, 0.080_625, 1e-15));
        assert!(close(e.std_error, 0.089_791_425_0, 1e-10));
        assert!(close(e.elo, 17.386_28, 1e-4), "{}", e.elo);
        assert!(close(e.score_low, 0.349_012_04, 1e-7), "{}", e.score_low);
        assert!(close(e.score_high, 0.700_987_96, 1e-7), "{}", e.score_high);
        assert!(close(e.elo_low, -108.293, 1e-3), "{}", e.elo_low);
        assert!(close(e.elo_high, 148.009, 1e-3), "{}", e.elo_high);
        // LOS = Phi(0.025 / 0.0897914) = Phi(0.278424) = 0.609656.
        assert!(close(e.los, 0.609_656, 1e-5), "{}", e.los);
    }

    #[test]
    fn symmetric_cases_have_los_one_half() {
        let p = Pentanomial { counts: [2, 3, 10, 3, 2] };
        assert!(close(p.estimate().los, 0.5, 1e-12));
        assert_eq!(p.estimate().elo, 0.0);
        let w = Wdl { wins: 7, draws: 3, losses: 7 };
        assert!(close(w.los(), 0.5, 1e-12));
        assert!(close(w.estimate().los, 0.5, 1e-12));
        assert_eq!(Wdl::default().los(), 0.5);
        assert!(Pentanomial::default().estimate().elo.is_nan());
    }

    #[test]
    fn zero_variance_and_extremes() {
        // Every pair a 2-0 sweep: score 1, infinite Elo, point interval, LOS 1.
        let e = Pentanomial { counts: [0, 0, 0, 0, 5] }.estimate();
        assert_eq!((e.score, e.variance, e.los), (1.0, 0.0, 1.0));
        assert_eq!(e.elo, f64::INFINITY);
        let e = Pentanomial { counts: [0, 0, 4, 0, 0] }.estimate();
        assert_eq!((e.score, e.elo, e.elo_low, e.elo_high, e.los), (0.5, 0.0, 0.0, 0.0, 0.5));
    }

    #[test]
    fn pair_scores() {
        assert_eq!(PairScore::from_games(2, 1).map(PairScore::points), Some(1.5));
        assert_eq!(PairScore::from_games(3, 0), None);
        assert_eq!(PairScore::from_half_points(5), None);
        assert_eq!(PairScore::from_half_points(4).map(PairScore::normalized), Some(1.0));
    }

    #[test]
    fn sprt_llr_by_hand() {
        // elo0 = 0, elo1 = 10: s0 = 0.5, s1 = 1 / (1 + 10^(-0.025)) = 0.514387184...
        // Counts [1, 2, 3, 3, 1] (no empty cell, so no regularization): N = 10, mean = 0.525,
        // var = 0.080625 (see pentanomial_by_hand).
        // LLR = 10 * (0.5143872 - 0.5) * (1.05 - 0.5 - 0.5143872) / (2 * 0.080625)
        //     = 10 * 0.0143872 * 0.0356128 / 0.16125 = 0.0317748...
        let s1 = 1.0 / (1.0 + 10f64.powf(-0.025));
        assert!(close(s1, 0.514_387_184, 1e-9));
        let by_hand = 10.0 * (s1 - 0.5) * (1.05 - 0.5 - s1) / (2.0 * 0.080_625);
        assert!(close(by_hand, 0.031_774_8, 1e-7), "{by_hand}");
        let mut sprt = Sprt::new(SprtConfig::default()).unwrap();
        for (k, &n) in [1u8, 2, 3, 3, 1].iter().enumerate() {
            for _ in 0..n {
                sprt.add_pair(PairScore::from_half_points(k as u8).unwrap());
            }
        }
        assert!(close(sprt.llr(), by_hand, 1e-12), "{}", sprt.llr());
        // Bounds for alpha = beta = 0.05: ln(0.05 / 0.95) = -2.944439, ln(0.95 / 0.05) = 2.944439.
        let (lo, hi) = sprt.bounds();
        assert!(close(lo, -2.944_439, 1e-6) && close(hi, 2.944_439, 1e-6));
        assert_eq!(sprt.status(), SprtStatus::Continue);
    }

    #[test]
    fn sprt_stops_and_stays_decided() {
        // A clearly stronger player: mostly 1.5 and 2-point pairs.
        let mut sprt = Sprt::new(SprtConfig { elo1: 20.0, ..SprtConfig::default() }).unwrap();
        let pattern = [3u8, 4, 2, 3, 3, 4, 1, 3];
        let mut n = 0;
        while !sprt.status().is_decided() && n < 10_000 {
            sprt.add_pair(PairScore::from_half_points(pattern[n % pattern.len()]).unwrap());
            n += 1;
        }
        assert_eq!(sprt.status(), SprtStatus::AcceptH1);
        assert_eq!(sprt.decided_after(), Some(n as u64));
        // Losses afterwards do not undo the decision.
        for _ in 0..50 {
            sprt.add_pair(PairScore::from_half_points(0).unwrap());
        }
        assert_eq!(sprt.status(), SprtStatus::AcceptH1);
        // A clearly weaker one is rejected.
        let mut sprt = Sprt::new(SprtConfig::default()).unwrap();
        let mut n = 0;
        while !sprt.status().is_decided() && n < 10_000 {
            sprt.add_pair(PairScore::from_half_points([1u8, 2, 0, 1, 2][n % 5]).unwrap());
            n += 1;
        }
        assert_eq!(sprt.status(), SprtStatus::AcceptH0);
        // Identical sweeps still move the LLR thanks to the regularization.
        let mut sprt = Sprt::new(SprtConfig::default()).unwrap();
        let sweep = PairScore::from_half_points(4).unwrap();
        let first = {
            sprt.add_pair(sweep);
            sprt.llr()
        };
        assert!(first.is_finite() && first > 0.0, "{first}");
        assert_eq!(sprt.status(), SprtStatus::Continue, "no decision from one pair");
        for _ in 0..200 {
            sprt.add_pair(sweep);
        }
        assert_eq!(sprt.status(), SprtStatus::AcceptH1);
    }

    #[test]
    fn sprt_rejects_bad_settings() {
        let bad = |elo0, elo1, alpha, beta| {
            Sprt::new(SprtConfig { elo0, elo1, alpha, beta, min_pairs: 0 }).unwrap_err().to_string()
        };
        assert!(bad(5.0, 5.0, 0.05, 0.05).contains("elo0 < elo1"));
        assert!(bad(0.0, f64::NAN, 0.05, 0.05).contains("elo0 < elo1"));
        assert!(bad(0.0, 5.0, 0.0, 0.05).contains("alpha"));
        assert!(bad(0.0, 5.0, 0.05, 0.7).contains("beta"));
    }
}

#[cfg(test)]
mod rating_tests {
    use super::*;

    fn tally(a: usize, b: usize, wins: u64, draws: u64, losses: u64) -> PairTally {
        PairTally { a, b, wdl: Wdl { wins, draws, losses } }
    }

    #[test]
    fn three_players_consistent_results() {
        // A-B: A wins 4 of 6; B-C: B wins 4 of 6; A-C: A wins 4 of 5. These are exactly the
        // expected scores of g_A : g_B : g_C = 4 : 2 : 1 (p_AB = 4/6, p_BC = 2/3, p_AC = 4/5), so
        // the likelihood equations S_i = sum_j n_ij p_ij hold there:
        //   A: 4 + 4 = 6*2/3 + 5*4/5 = 8;  B: 2 + 4 = 6*1/3 + 6*2/3 = 6;  C: 2 + 1 = 6*1/3 + 5*1/5 = 3.
        // Anchored at C = 0: R_B = 400 log10 2 = 120.411998, R_A = 400 log10 4 = 240.823997.
        // Information (t units), A and B: I_AA = 6*(2/9) + 5*(4/25) = 4/3 + 4/5 = 32/15,
        // I_BB = 6*(2/9) + 6*(2/9) = 8/3, I_AB = -4/3; det = 256/45 - 16/9 = 176/45;
        // var t_A = (8/3)/(176/45) = 15/22, var t_B = (32/15)/(176/45) = 6/11.
        // Dispersion: per pair sum (x-p)^2 = n p (1-p) when p is the observed frequency, so 1.
        // se_A = sqrt(15/22) * 400 / ln 10 = 0.8257228 * 173.7177928 = 143.44275...
        // se_B = sqrt(6/11) * 173.7177928 = 0.7385489 * 173.7177928 = 128.29909...
        let results = [tally(0, 1, 4, 0, 2), tally(1, 2, 4, 0, 2), tally(0, 2, 4, 0, 1)];
        let fit = fit_ratings(3, &results, &RatingOptions { anchor: 2, ..RatingOptions::default() }).unwrap();
        assert!(fit.converged);
        let r = &fit.ratings;
        assert!((r[0].elo - 240.823_997).abs() < 1e-5, "{}", r[0].elo);
        assert!((r[1].elo - 120.411_998).abs() < 1e-5, "{}", r[1].elo);
        assert_eq!((r[2].elo, r[2].std_error), (0.0, 0.0));
        assert!((fit.dispersion - 1.0).abs() < 1e-9, "{}", fit.dispersion);
        let scale = 400.0 / std::f64::consts::LN_10;
        assert!((r[0].std_error - (15.0f64 / 22.0).sqrt() * scale).abs() < 1e-6, "{}", r[0].std_error);
        assert!((r[1].std_error - (6.0f64 / 11.0).sqrt() * scale).abs() < 1e-6, "{}", r[1].std_error);
        assert!((r[0].std_error - 143.442_75).abs() < 1e-4);
        assert!((r[0].low - (r[0].elo - Z95 * r[0].std_error)).abs() < 1e-12);
        assert_eq!((r[0].games, r[0].points), (11, 8.0));
        // Re-anchoring at A = 1000 shifts everything.
        let fit = fit_ratings(3, &results, &RatingOptions { anchor: 0, anchor_elo: 1000.0, ..RatingOptions::default() })
            .unwrap();
        assert!((fit.ratings[2].elo - (1000.0 - 240.823_997)).abs() < 1e-5);
        assert_eq!(fit.ratings[0].std_error, 0.0);
    }

    #[test]
    fn two_players_match_the_delta_method() {
        // W = 3, D = 4, L = 1 over 8 games: s = 5/8, R_A - R_B = -400 log10(0.6) = 88.739500.
        // n p (1-p) = 8 * 0.625 * 0.375 = 1.875; residuals 3*0.375^2 + 4*0.125^2 + 1*0.625^2 = 0.875;
        // phi = 0.875 / 1.875 = 0.466667; var t = phi / 1.875 = 0.248889; se = 0.498888 * 173.717793
        // = 86.66566..., the same as the delta method on the trinomial score:
        // sqrt(0.109375 / 8) * 173.717793 / (0.625 * 0.375) = 86.66566.
        let fit = fit_ratings(2, &[tally(0, 1, 3, 4, 1)], &RatingOptions { anchor: 1, ..RatingOptions::default() }).unwrap();
        let a = fit.ratings[0];
        assert!((a.elo - 88.739_500).abs() < 1e-5, "{}", a.elo);
        assert!((fit.dispersion - 0.875 / 1.875).abs() < 1e-9);
        assert!((a.std_error - 86.665_66).abs() < 1e-4, "{}", a.std_error);
    }

    #[test]
    fn separated_players_need_a_prior() {
        // C lost every game: no finite maximum.
        let results = [tally(0, 1, 2, 2, 2), tally(0, 2, 3, 0, 0), tally(1, 2, 3, 0, 0)];
        let err = fit_ratings(3, &results, &RatingOptions::default()).unwrap_err();
        assert_eq!(err, RatingError::Separated { group: vec![2] });
        assert!(err.to_string().contains("virtual draws"));
        // With one virtual draw per pair C is finite and last.
        let opts = RatingOptions { virtual_draws: 1.0, ..RatingOptions::default() };
        let fit = fit_ratings(3, &results, &opts).unwrap();
        assert!(fit.ratings[2].elo < fit.ratings[1].elo && fit.ratings[2].elo.is_finite());
        assert_eq!(fit.ratings[2].games, 6);
        // Bad input.
        assert!(matches!(fit_ratings(1, &[], &RatingOptions::default()), Err(RatingError::Setup { .. })));
        assert!(matches!(fit_ratings(2, &[tally(0, 0, 1, 0, 0)], &RatingOptions::default()), Err(RatingError::BadPair { .. })));
        assert!(matches!(fit_ratings(2, &[tally(0, 5, 1, 0, 0)], &RatingOptions::default()), Err(RatingError::BadPair { .. })));
        // A player with no game at all is separated.
        assert!(matches!(fit_ratings(3, &[tally(0, 1, 1, 1, 1)], &RatingOptions::default()), Err(RatingError::Separated { .. })));
    }
}
