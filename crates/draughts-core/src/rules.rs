//! Rule variants as data.

use std::fmt;
use std::str::FromStr;

/// The rules a game is played under: the FMJD rules by default, with the knobs that other systems
/// (game sites, older programs) differ on.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// A man that reaches the far row during a capture is crowned at once and continues capturing
    /// as a king. FMJD: `false` (a man is crowned only when its move ends on the far row).
    pub promote_during_capture: bool,
    /// Which draw rules apply.
    pub draw: DrawRules,
}

/// Draw rules. Plies are half-moves: "25 moves each" is 50 plies.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct DrawRules {
    /// The same position with the same side to move for the n-th time. FMJD: 3.
    pub repetition: Option<u8>,
    /// Plies with no capture and no man move (only kings moved). FMJD: 50 (25 moves each).
    pub no_progress_plies: Option<u16>,
    /// Plies with no capture.
    pub no_capture_plies: Option<u16>,
    /// Plies played with one lone king against three pieces including at least one king.
    /// FMJD: 32 (16 moves each).
    pub three_vs_one_plies: Option<u16>,
    /// Plies played with one lone king against at most two pieces including at least one king.
    /// FMJD: 10 (5 moves each).
    pub two_vs_one_plies: Option<u16>,
}

impl DrawRules {
    /// No draw rule at all (games end only when a side cannot move).
    pub const NONE: DrawRules = DrawRules {
        repetition: None,
        no_progress_plies: None,
        no_capture_plies: None,
        three_vs_one_plies: None,
        two_vs_one_plies: None,
    };
}

impl Rules {
    /// The FMJD rules: threefold repetition, 25 moves each of only king moves without capture,
    /// the 16-move rule and the 5-move rule.
    pub const FMJD: Rules = Rules {
        promote_during_capture: false,
        draw: DrawRules {
            repetition: Some(3),
            no_progress_plies: Some(50),
            no_capture_plies: None,
            three_vs_one_plies: Some(32),
            two_vs_one_plies: Some(10),
        },
    };

    /// FMJD captures; the only draw rule: 25 moves each (50 plies) without a capture.
    pub const NO_CAPTURE_25: Rules = Rules {
        promote_during_capture: false,
        draw: DrawRules { no_capture_plies: Some(50), ..DrawRules::NONE },
    };

    /// A man crowned during a capture goes on as a king; the only draw rule: 50 plies without a
    /// capture or a man move.
    pub const PROMOTE_IN_CAPTURE: Rules = Rules {
        promote_during_capture: true,
        draw: DrawRules { no_progress_plies: Some(50), ..DrawRules::NONE },
    };

    /// The named presets, default first.
    pub const PRESETS: [(&'static str, Rules); 3] = [
        ("fmjd", Rules::FMJD),
        ("no-capture-25", Rules::NO_CAPTURE_25),
        ("promote-in-capture", Rules::PROMOTE_IN_CAPTURE),
    ];

    /// The preset called `name`.
    pub fn from_name(name: &str) -> Result<Rules, UnknownRules> {
        Rules::PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, r)| *r)
            .ok_or_else(|| UnknownRules(name.to_owned()))
    }

    /// The preset name of these rules, if they are a preset.
    pub fn name(&self) -> Option<&'static str> {
        Rules::PRESETS.iter().find(|(_, r)| r == self).map(|(n, _)| *n)
    }
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::FMJD
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "custom({self:?})"),
        }
    }
}

/// A rules name that is not a preset.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown rules `{0}` (known: fmjd, no-capture-25, promote-in-capture)")]
pub struct UnknownRules(pub String);

impl FromStr for Rules {
    type Err = UnknownRules;
    fn from_str(s: &str) -> Result<Rules, UnknownRules> {
        Rules::from_name(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_by_name() {
        for (name, rules) in Rules::PRESETS {
            assert_eq!(Rules::from_name(name), Ok(rules));
            assert_eq!(rules.name(), Some(name));
            assert_eq!(rules.to_string(), name);
        }
        assert_eq!(Rules::default(), Rules::FMJD);
        let err = Rules::from_name("russian").unwrap_err();
        assert!(err.to_string().contains("russian"));
    }
}
