//! Named switches of the search's techniques, so that each one can be played against the engine
//! without it ([`SearchOptions::set`] takes `name=value` from the command line, the arena's
//! player specs and Hub's `set-param`).
//!
//! A technique is on by default only where a match showed that it gains; the figures behind each
//! default are in ARCHITECTURE.md ("Search options"). Every option keeps a search without a time
//! limit deterministic.

use std::fmt;

/// The search's optional techniques.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SearchOptions {
    /// `full_time`: at a fixed time per move, go on starting iterations until the move time is
    /// spent (an unfinished iteration's move is played when it beat the previous best). Off: no
    /// iteration starts after 60% of the move time.
    pub full_time: bool,
    /// `qs_threat`: at a quiet horizon node where the opponent threatens a capture, search every
    /// move one ply (then captures only) instead of taking the static evaluation. Once per line.
    pub qs_threat: bool,
    /// `qs_promotions`: at a quiet horizon node, after the static evaluation (stand-pat), also
    /// search the moves that promote a man.
    pub qs_promotions: bool,
    /// `qs_exchanges`: at a quiet horizon node with no king on the board, after the stand-pat,
    /// also search the moves that give the opponent a capture (exchanges and sacrifices), as
    /// Scan's quiescence does.
    pub qs_exchanges: bool,
    /// `single_reply`: a node with one legal move (often a forced capture) is searched one ply
    /// deeper.
    pub single_reply: bool,
    /// `probcut`: at a non-PV node of depth >= 3, a search at 40% of the depth against
    /// `beta + probcut_margin x depth` that fails high cuts the node (draughts' zugzwangs make
    /// null move unsafe; this stands in for it). Off inside that reduced search.
    pub probcut: bool,
    /// `probcut_margin`: centi-men per ply of depth added to beta by `probcut`.
    pub probcut_margin: i32,
    /// `drawish`: the static score is shrunk in material that often draws (by 8 when the side
    /// ahead has at most three pieces against a king, by 2 with kings on both sides, as many of
    /// them, and men within one), as Scan does.
    pub drawish: bool,
    /// `time_policy`: with a game clock, more time when the best move changes or the score
    /// falls between iterations, less for an easy move (the same best move for six iterations);
    /// see `TimePlan::soft_after`. No effect at a fixed time per move.
    pub time_policy: bool,
    /// `lmr_early`: late-move reductions from depth 2 (instead of 3), and two plies at non-PV
    /// nodes from the fourth move (instead of the ninth at depth 5).
    pub lmr_early: bool,
    /// `lmr_history`: at a non-PV node, a late quiet move that is reduced at all is reduced one
    /// ply more when its history is negative (it failed to cut off more often than it cut).
    pub lmr_history: bool,
    /// `lmr_cut`: a late quiet move that is reduced at all is reduced one ply more at an expected
    /// cut node (a non-PV node reached by a reduced search, or the first move of an expected
    /// all node), as Stockfish reduces `cutNode`s more.
    pub lmr_cut: bool,
    /// `iir_cut`: with `iir`, an expected cut node without a move from the table is searched two
    /// plies shallower instead of one (Stockfish reduces such nodes more).
    pub iir_cut: bool,
    /// `singular_negative`: with `singular`, when the test finds another move within its margin
    /// and the table's score reaches beta (or the node is an expected cut node), the table's
    /// move is searched one ply shallower (Stockfish's negative extension).
    pub singular_negative: bool,
    /// `improving`: with `lmp`, a node whose static score is not above the one of the node two
    /// plies up (the same side to move) searches half as many quiet moves before pruning the
    /// rest (Stockfish's `improving`). The static score is computed at quiet non-PV nodes of
    /// depth 1 to [`SearchOptions::LMP_DEPTH`] for it; without one two plies up, the node counts
    /// as improving (the `lmp` of before).
    pub improving: bool,
    /// `lmr_log`: a reduced late move is reduced by `ln(depth) x ln(move number) / 2` plies,
    /// rounded (at least one; one less at PV nodes), as chess engines do, instead of one ply (two
    /// from the ninth move at non-PV nodes of depth 5 and more): deeper nodes and later moves
    /// lose more. The same moves are reduced.
    pub lmr_log: bool,
    /// `iir`: internal iterative reduction. A node of depth >= [`SearchOptions::IIR_DEPTH`]
    /// whose transposition-table entry names no move is searched one ply shallower (its move
    /// order is a guess; the next iteration, with the entry this one leaves, searches it fully).
    pub iir: bool,
    /// `cont_history`: continuation history. Quiet moves are also ordered by how often they cut
    /// off after the opponent's last move landed on the same square (a table by side, that
    /// square and the move's from and to squares, updated beside the history), the two added.
    pub cont_history: bool,
    /// `corr_history`: correction history. The static score of a quiet node is corrected by
    /// what searches below such nodes found it to miss, averaged by the side to move and the
    /// configuration of each colour's men (two tables, as chess engines correct by pawn
    /// structure): wherever a quiet node of depth >= 1 ends with a score its bound trusts, the
    /// difference from its static score is blended into both entries.
    pub corr_history: bool,
    /// `lmp`: late-move (move-count) pruning. At a non-PV node of depth 1 to
    /// [`SearchOptions::LMP_DEPTH`] with no capture to make and none threatened, the quiet moves
    /// after the first `lmp_moves + depth x depth` (killers, promotions and moves that give the
    /// opponent a capture excepted) are not searched.
    pub lmp: bool,
    /// `lmp_moves`: the moves a node of depth 0 would keep with `lmp`; a node of depth `d` keeps
    /// `lmp_moves + d x d`.
    pub lmp_moves: i32,
    /// `singular`: at a PV node of depth >= 6 whose table entry (a lower bound or exact, at
    /// most 3 plies shallower) names a move, the other moves are searched at half the depth
    /// against `entry score - 2 x depth`; when none reaches it, the entry's move is singular and
    /// is searched one ply deeper (Scan 3.1, Stockfish).
    pub singular: bool,
    /// `singular_all`: with `singular`, non-PV nodes test their table move too (from depth
    /// `singular_all_depth`), and a test whose other moves still reach beta cuts the node
    /// (Stockfish's multi-cut).
    pub singular_all: bool,
    /// `singular_margin`: centi-men per ply of depth by which `singular` asks the other moves to
    /// stay below the table move's score.
    pub singular_margin: i32,
    /// `singular_all_depth`: the least depth of a non-PV node's singular test (`singular_all`).
    pub singular_all_depth: i32,
    /// `lmr_moves`: late-move reductions start with this move (counted from 0, in search order).
    pub lmr_moves: i32,
    /// `lmr_nonpv_moves`: at non-PV nodes, late-move reductions start with this move instead
    /// (counted from 0; Scan 2.0 reduces there from the second move, 1); 0: `lmr_moves` at
    /// every node.
    pub lmr_nonpv_moves: i32,
    /// `aspiration`: the half-width, in centi-men, of an iteration's first window around the
    /// previous iteration's score (doubled at each fail).
    pub aspiration: i32,
    /// `rfp`: reverse futility pruning. At a non-PV node of depth 1 to [`SearchOptions::RFP_DEPTH`]
    /// with no capture to make and none threatened, whose static score clears beta by
    /// `rfp_margin x depth`, the static score is returned without a search (the static
    /// null-move pruning of chess engines).
    pub rfp: bool,
    /// `rfp_margin`: centi-men per ply of depth that `rfp` asks the static score to clear beta by.
    pub rfp_margin: i32,
    /// `futility`: futility pruning of moves. At a non-PV node of depth 1 to
    /// [`SearchOptions::FUTILITY_DEPTH`] with no capture to make and none threatened, whose
    /// static score plus `futility_margin x depth` does not reach alpha, the quiet moves after the
    /// first (killers, promotions and moves that give the opponent a capture excepted) are not
    /// searched; the node is then worth at least that sum.
    pub futility: bool,
    /// `futility_margin`: centi-men per ply of depth that `futility` adds to the static score.
    pub futility_margin: i32,
    /// `lazy_eval`: at a quiet horizon node whose material alone (a man 100, a king 300) is
    /// beyond the window by `lazy_margin`, the bound is returned without the static evaluation
    /// (the node still loses when it has no move). Not where `drawish` would shrink the score,
    /// nor below alpha when `qs_promotions` or `qs_exchanges` would search quiet moves.
    pub lazy_eval: bool,
    /// `lazy_margin`: centi-men by which `lazy_eval` asks the material to clear the window.
    pub lazy_margin: i32,
    /// `quantised`: a learned evaluation runs its quantised network (16-bit accumulator, 8-bit
    /// dense layers; `draughts_nnue::Precision::Int8`) instead of the float one. No effect on
    /// the hand-made evaluation, nor on a network that cannot be quantised.
    pub quantised: bool,
    /// `policy_order`: at a node with quiet moves and depth >= `policy_depth`, the moves after
    /// the table's move, promotions and killers are ordered by the network's policy (the
    /// probability it gives each move) instead of their history. No effect with the hand-made
    /// evaluation (it has no policy).
    pub policy_order: bool,
    /// `policy_depth`: the least depth at which `policy_order` asks for the policy.
    pub policy_depth: i32,
    /// `threads`: search threads sharing the transposition table (Lazy SMP; 1 to
    /// [`SearchOptions::MAX_THREADS`]). With more than one the search is no longer reproducible
    /// at a node limit (threads race for the table), and a node limit counts every thread's nodes.
    pub threads: u16,
}

impl Default for SearchOptions {
    /// [`SearchOptions::DEFAULT`].
    fn default() -> SearchOptions {
        SearchOptions::DEFAULT
    }
}

/// An option name or value [`SearchOptions::set`] does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// No option has this name.
    #[error("unknown search option `{0}` (known: {known})", known = SearchOptions::NAMES.join(", "))]
    Unknown(String),
    /// The value does not fit the option.
    #[error("search option `{name}`: `{value}` is not {expected}")]
    BadValue {
        /// The option.
        name: &'static str,
        /// The value given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
}

impl SearchOptions {
    /// The search as it was before these options existed: every technique off.
    pub const BASELINE: SearchOptions = SearchOptions {
        full_time: false,
        qs_threat: false,
        qs_promotions: false,
        qs_exchanges: false,
        single_reply: false,
        probcut: false,
        probcut_margin: 10,
        lmr_early: false,
        lmr_history: false,
        lmr_cut: false,
        iir_cut: false,
        singular_negative: false,
        improving: false,
        lmr_log: false,
        iir: false,
        cont_history: false,
        corr_history: false,
        lmp: false,
        lmp_moves: 3,
        time_policy: false,
        drawish: false,
        singular: false,
        singular_all: false,
        singular_margin: 2,
        singular_all_depth: SearchOptions::SINGULAR_ALL_DEPTH,
        lmr_moves: 3,
        lmr_nonpv_moves: 0,
        aspiration: 25,
        rfp: false,
        rfp_margin: 50,
        futility: false,
        futility_margin: 60,
        lazy_eval: false,
        lazy_margin: 200,
        quantised: false,
        policy_order: false,
        policy_depth: 4,
        threads: 1,
    };

    /// The engine's defaults: the techniques that gained in matches (ARCHITECTURE.md, "Search
    /// options").
    pub const DEFAULT: SearchOptions =
        SearchOptions { probcut: true, single_reply: false, singular: true, iir: true, quantised: true, ..SearchOptions::BASELINE };

    /// The engine's defaults when a network evaluates: [`SearchOptions::DEFAULT`] with
    /// `singular_all` and `lmp` on as well. With networks the pair gained at every budget it was
    /// measured at (10,000 and 100,000 nodes a move, 100 ms); `lmp` lost with the hand-made
    /// evaluation, whose defaults keep both off (ARCHITECTURE.md, "Search options").
    pub const NETWORK: SearchOptions = SearchOptions { singular_all: true, lmp: true, ..SearchOptions::DEFAULT };

    /// The defaults for an evaluation: [`SearchOptions::NETWORK`] when a network evaluates
    /// (`network`), [`SearchOptions::DEFAULT`] for the hand-made evaluation.
    pub const fn defaults(network: bool) -> SearchOptions {
        if network {
            SearchOptions::NETWORK
        } else {
            SearchOptions::DEFAULT
        }
    }

    /// The least depth of a non-PV node's singular test (`singular_all`) by default.
    pub const SINGULAR_ALL_DEPTH: i32 = 8;

    /// The deepest node `rfp` prunes.
    pub const RFP_DEPTH: i32 = 3;

    /// The deepest node `futility` prunes at.
    pub const FUTILITY_DEPTH: i32 = 2;

    /// The least depth `iir` reduces.
    pub const IIR_DEPTH: i32 = 4;

    /// The deepest node `lmp` prunes.
    pub const LMP_DEPTH: i32 = 3;

    /// The largest `lmp_moves`.
    pub const MAX_LMP_MOVES: i32 = 64;

    /// The largest `policy_depth`.
    pub const MAX_POLICY_DEPTH: i32 = 64;

    /// The most threads a search takes.
    pub const MAX_THREADS: u16 = 256;

    /// The values numeric option `name` takes, least and greatest (what [`SearchOptions::set`]
    /// accepts); `None` for a switch or an unknown name.
    pub fn range(name: &str) -> Option<(i32, i32)> {
        Some(match name {
            "probcut_margin" | "rfp_margin" | "futility_margin" | "lazy_margin" | "singular_margin" => (0, 1000),
            "aspiration" => (1, 1000),
            "lmp_moves" | "lmr_moves" => (1, SearchOptions::MAX_LMP_MOVES),
            "lmr_nonpv_moves" => (0, SearchOptions::MAX_LMP_MOVES),
            "policy_depth" | "singular_all_depth" => (1, SearchOptions::MAX_POLICY_DEPTH),
            "threads" => (1, SearchOptions::MAX_THREADS as i32),
            _ => return None,
        })
    }

    /// The names [`SearchOptions::set`] takes.
    pub const NAMES: [&'static str; 38] = [
        "full_time",
        "qs_threat",
        "qs_promotions",
        "qs_exchanges",
        "single_reply",
        "probcut",
        "probcut_margin",
        "lmr_early",
        "lmr_history",
        "lmr_cut",
        "lmr_log",
        "iir",
        "iir_cut",
        "cont_history",
        "corr_history",
        "lmp",
        "lmp_moves",
        "time_policy",
        "drawish",
        "singular",
        "singular_all",
        "singular_negative",
        "improving",
        "singular_margin",
        "singular_all_depth",
        "lmr_moves",
        "lmr_nonpv_moves",
        "aspiration",
        "rfp",
        "rfp_margin",
        "futility",
        "futility_margin",
        "lazy_eval",
        "lazy_margin",
        "quantised",
        "policy_order",
        "policy_depth",
        "threads",
    ];

    /// Sets option `name` from text: `on`/`off` (or `true`/`false`, `1`/`0`) for switches, a
    /// number for `probcut_margin`, `rfp_margin`, `futility_margin`, `lazy_margin`, `singular_margin`, `aspiration`,
    /// `lmp_moves`, `lmr_moves`, `lmr_nonpv_moves`, `singular_all_depth`, `policy_depth` and
    /// `threads`.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), OptionError> {
        let name = name.trim();
        let value = value.trim();
        let Some(&known) = SearchOptions::NAMES.iter().find(|n| **n == name) else {
            return Err(OptionError::Unknown(name.to_owned()));
        };
        let switch = || match value.to_ascii_lowercase().as_str() {
            "on" | "true" | "1" | "yes" => Ok(true),
            "off" | "false" | "0" | "no" => Ok(false),
            _ => Err(OptionError::BadValue { name: known, value: value.to_owned(), expected: "on or off" }),
        };
        let centi_men = || {
            value
                .parse::<i32>()
                .ok()
                .filter(|m| (0..=1000).contains(m))
                .ok_or(OptionError::BadValue { name: known, value: value.to_owned(), expected: "a number of centi-men from 0 to 1000" })
        };
        // A whole number from `least` to `max`.
        let whole = |least: i32, max: i32, expected: &'static str| {
            value
                .parse::<i32>()
                .ok()
                .filter(|n| (least..=max).contains(n))
                .ok_or(OptionError::BadValue { name: known, value: value.to_owned(), expected })
        };
        let count = |max: i32, expected: &'static str| whole(1, max, expected);
        match known {
            "full_time" => self.full_time = switch()?,
            "qs_threat" => self.qs_threat = switch()?,
            "qs_promotions" => self.qs_promotions = switch()?,
            "qs_exchanges" => self.qs_exchanges = switch()?,
            "single_reply" => self.single_reply = switch()?,
            "probcut" => self.probcut = switch()?,
            "lmr_early" => self.lmr_early = switch()?,
            "lmr_history" => self.lmr_history = switch()?,
            "lmr_cut" => self.lmr_cut = switch()?,
            "lmr_log" => self.lmr_log = switch()?,
            "iir" => self.iir = switch()?,
            "iir_cut" => self.iir_cut = switch()?,
            "cont_history" => self.cont_history = switch()?,
            "corr_history" => self.corr_history = switch()?,
            "lmp" => self.lmp = switch()?,
            "lmp_moves" => self.lmp_moves = count(SearchOptions::MAX_LMP_MOVES, "a number of moves from 1 to 64")?,
            "policy_order" => self.policy_order = switch()?,
            "policy_depth" => self.policy_depth = count(SearchOptions::MAX_POLICY_DEPTH, "a depth from 1 to 64")?,
            "time_policy" => self.time_policy = switch()?,
            "drawish" => self.drawish = switch()?,
            "singular" => self.singular = switch()?,
            "singular_all" => self.singular_all = switch()?,
            "singular_negative" => self.singular_negative = switch()?,
            "improving" => self.improving = switch()?,
            "singular_margin" => self.singular_margin = centi_men()?,
            "singular_all_depth" => self.singular_all_depth = count(SearchOptions::MAX_POLICY_DEPTH, "a depth from 1 to 64")?,
            "lmr_moves" => self.lmr_moves = count(SearchOptions::MAX_LMP_MOVES, "a number of moves from 1 to 64")?,
            "lmr_nonpv_moves" => self.lmr_nonpv_moves = whole(0, SearchOptions::MAX_LMP_MOVES, "a number of moves from 0 to 64")?,
            "aspiration" => self.aspiration = count(1000, "a number of centi-men from 1 to 1000")?,
            "rfp" => self.rfp = switch()?,
            "futility" => self.futility = switch()?,
            "quantised" => self.quantised = switch()?,
            "rfp_margin" => self.rfp_margin = centi_men()?,
            "futility_margin" => self.futility_margin = centi_men()?,
            "lazy_eval" => self.lazy_eval = switch()?,
            "lazy_margin" => self.lazy_margin = centi_men()?,
            "probcut_margin" => self.probcut_margin = centi_men()?,
            "threads" => {
                self.threads = value
                    .parse::<u16>()
                    .ok()
                    .filter(|t| (1..=SearchOptions::MAX_THREADS).contains(t))
                    .ok_or(OptionError::BadValue { name: known, value: value.to_owned(), expected: "a number of threads from 1 to 256" })?
            }
            _ => unreachable!("every name in NAMES is matched"),
        }
        Ok(())
    }

    /// The value of option `name` as [`SearchOptions::set`] takes it.
    pub fn get(&self, name: &str) -> Option<String> {
        let s = |b: bool| if b { "on" } else { "off" }.to_owned();
        Some(match name {
            "full_time" => s(self.full_time),
            "qs_threat" => s(self.qs_threat),
            "qs_promotions" => s(self.qs_promotions),
            "qs_exchanges" => s(self.qs_exchanges),
            "single_reply" => s(self.single_reply),
            "probcut" => s(self.probcut),
            "lmr_early" => s(self.lmr_early),
            "lmr_history" => s(self.lmr_history),
            "lmr_cut" => s(self.lmr_cut),
            "lmr_log" => s(self.lmr_log),
            "iir" => s(self.iir),
            "iir_cut" => s(self.iir_cut),
            "cont_history" => s(self.cont_history),
            "corr_history" => s(self.corr_history),
            "lmp" => s(self.lmp),
            "lmp_moves" => self.lmp_moves.to_string(),
            "policy_order" => s(self.policy_order),
            "policy_depth" => self.policy_depth.to_string(),
            "time_policy" => s(self.time_policy),
            "drawish" => s(self.drawish),
            "singular" => s(self.singular),
            "singular_all" => s(self.singular_all),
            "singular_negative" => s(self.singular_negative),
            "improving" => s(self.improving),
            "singular_margin" => self.singular_margin.to_string(),
            "singular_all_depth" => self.singular_all_depth.to_string(),
            "lmr_moves" => self.lmr_moves.to_string(),
            "lmr_nonpv_moves" => self.lmr_nonpv_moves.to_string(),
            "aspiration" => self.aspiration.to_string(),
            "rfp" => s(self.rfp),
            "futility" => s(self.futility),
            "rfp_margin" => self.rfp_margin.to_string(),
            "futility_margin" => self.futility_margin.to_string(),
            "lazy_eval" => s(self.lazy_eval),
            "lazy_margin" => self.lazy_margin.to_string(),
            "quantised" => s(self.quantised),
            "probcut_margin" => self.probcut_margin.to_string(),
            "threads" => self.threads.to_string(),
            _ => return None,
        })
    }

    /// Sets options from `name=value` pairs separated by commas or blanks (`"qs_threat=on probcut=off"`).
    pub fn parse_list(&mut self, text: &str) -> Result<(), OptionError> {
        for item in text.split([',', ' ']).filter(|s| !s.trim().is_empty()) {
            let (name, value) = item.split_once('=').unwrap_or((item, "on"));
            self.set(name, value)?;
        }
        Ok(())
    }
}

impl fmt::Display for SearchOptions {
    /// Every option as `name=value`, separated by commas.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in SearchOptions::NAMES.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(f, "{sep}{name}={}", self.get(name).unwrap_or_default())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_and_display_agree() {
        let mut o = SearchOptions::BASELINE;
        for name in SearchOptions::NAMES {
            let v = o.get(name).unwrap();
            o.set(name, &v).unwrap();
        }
        assert_eq!(o, SearchOptions::BASELINE);
        o.parse_list("qs_threat=on, probcut probcut_margin=25 threads=3").unwrap();
        assert!(o.qs_threat && o.probcut && o.probcut_margin == 25 && o.threads == 3);
        let mut p = SearchOptions::BASELINE;
        p.parse_list(&o.to_string()).unwrap();
        assert_eq!(p, o);
    }

    #[test]
    fn ranges_are_what_set_accepts() {
        for name in SearchOptions::NAMES {
            let mut o = SearchOptions::BASELINE;
            match SearchOptions::range(name) {
                Some((lo, hi)) => {
                    for ok in [lo, hi] {
                        assert!(o.set(name, &ok.to_string()).is_ok(), "{name}={ok}");
                    }
                    for bad in [lo - 1, hi + 1] {
                        assert!(o.set(name, &bad.to_string()).is_err(), "{name}={bad}");
                    }
                }
                None => assert!(o.set(name, "on").is_ok(), "{name} is a switch"),
            }
        }
    }

    #[test]
    fn a_network_has_its_own_defaults() {
        assert_eq!(SearchOptions::defaults(false), SearchOptions::DEFAULT);
        let n = SearchOptions::defaults(true);
        assert_eq!(n, SearchOptions::NETWORK);
        assert!(n.singular_all && n.lmp && !SearchOptions::DEFAULT.singular_all && !SearchOptions::DEFAULT.lmp);
        // Only those two differ.
        let differing: Vec<_> = SearchOptions::NAMES.iter().filter(|name| n.get(name) != SearchOptions::DEFAULT.get(name)).collect();
        assert_eq!(differing, [&"lmp", &"singular_all"]);
    }

    #[test]
    fn bad_names_and_values_are_named() {
        let mut o = SearchOptions::default();
        let e = o.set("nullmove", "on").unwrap_err().to_string();
        assert!(e.contains("nullmove") && e.contains("qs_threat"), "{e}");
        let e = o.set("probcut", "maybe").unwrap_err().to_string();
        assert!(e.contains("probcut") && e.contains("maybe"), "{e}");
        let e = o.set("probcut_margin", "-3").unwrap_err().to_string();
        assert!(e.contains("-3"), "{e}");
        for bad in ["0", "257", "two"] {
            let e = o.set("threads", bad).unwrap_err().to_string();
            assert!(e.contains("threads") && e.contains(bad), "{e}");
        }
        assert_eq!(o, SearchOptions::default());
    }
}
