//! Network architectures: the `[net]` section of a config file and the `architecture` of a
//! checkpoint sidecar.
//!
//! Two kinds ([`NetKind`]):
//!
//! - `resnet` (the default, and what every sidecar without a `kind` is): a residual tower of 3x3
//!   convolutions over the encoded planes, a policy head of 2500 logits, a win/draw/loss head.
//!   Keys: `blocks`, `channels`, `policy_channels`, `value_hidden`, `moves_left_head`.
//! - `sparse`: piece-square features from each side's point of view, one shared first layer whose
//!   output (the accumulator) is updated incrementally move by move, small clipped-ReLU dense
//!   layers, a win/draw/loss output and a policy computed from the accumulator. Keys:
//!   `accumulator` (width of the first layer, per point of view), `hidden` (the dense layers'
//!   widths), `moves_left_head`, `pairwise` (the first dense layer reads the products of each
//!   point of view's two accumulator halves: half the inputs), `buckets` (phase buckets: that many
//!   stacks of dense layers and heads, one chosen by the number of pieces on the board),
//!   `patterns` (the first layer also reads 16 block patterns of 4 x 4 squares: Scan's local
//!   patterns as 104,976 more features, one active per block), `pattern_width` (how many of the
//!   accumulator's outputs the patterns feed: 0 for all of them, or the first 16, 32, ...: a
//!   narrower pattern table is a smaller, faster update). See `draughts-nnue` for the exact
//!   layout.
//!
//! A key of the other kind is an error (`blocks` under `kind = "sparse"` would silently mean
//! nothing), and a sidecar names only the keys of its kind.

use serde::{Deserialize, Serialize};

/// Which network.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetKind {
    /// The residual convolutional network, evaluated through libtorch.
    #[default]
    Resnet,
    /// The sparse, incrementally updated network, evaluated natively.
    Sparse,
}

impl NetKind {
    /// The name as config files write it.
    pub fn name(self) -> &'static str {
        match self {
            NetKind::Resnet => "resnet",
            NetKind::Sparse => "sparse",
        }
    }
}

/// The architecture of a network of either kind. Fields of the other kind keep their defaults
/// and are not written to files.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RawNetConfig", into = "RawNetConfig")]
pub struct NetConfig {
    /// Which network.
    pub kind: NetKind,
    /// ResNet: residual blocks in the tower (0..=64).
    pub blocks: usize,
    /// ResNet: channels of the tower's convolutions (1..=1024).
    pub channels: usize,
    /// ResNet: channels of the policy head's 1x1 convolution before the linear layer to 2500
    /// logits (1..=64).
    pub policy_channels: usize,
    /// ResNet: width of the value head's hidden layer (1..=4096).
    pub value_hidden: usize,
    /// Whether the net has a moves-left head (both kinds).
    pub moves_left_head: bool,
    /// Sparse: width of the first layer's output for one point of view (8..=2048, a multiple of
    /// 8); the dense layers see both points of view, twice this.
    pub accumulator: usize,
    /// Sparse: widths of the clipped-ReLU dense layers after the accumulator (1 to 4 layers,
    /// each 1..=1024).
    pub hidden: Vec<usize>,
    /// Sparse: the first dense layer reads, for each point of view, the products of the clipped
    /// accumulator's first half with its second half (Stockfish's pairwise multiplication):
    /// `accumulator` inputs instead of twice that, and sparser ones. The policy head still reads
    /// the clipped accumulator.
    pub pairwise: bool,
    /// Sparse: phase buckets (1..=8): the dense layers and heads come in this many stacks, and a
    /// position is evaluated by the stack of its number of pieces ([`NetConfig::bucket_of`]);
    /// the accumulator and the policy are shared. 1: one stack (every network before them).
    pub buckets: usize,
    /// Sparse: the first layer also reads the configuration of each of 16 overlapping blocks of
    /// 4 x 4 squares (3^8 each: empty, own piece, opponent's piece on its 8 dark squares), one
    /// feature per block and configuration (`draughts_nnue::features`). A network without them
    /// starts a run with them at zero (the same outputs).
    pub patterns: bool,
    /// Sparse, with `patterns`: the patterns feed only the first this many accumulator outputs
    /// (a multiple of 16, at most `accumulator`, and at most half of it with `pairwise`), a
    /// table of `104976 x pattern_width` in place of `104976 x accumulator`: fewer bytes to
    /// read per evaluation. 0: every output (every network before it).
    pub pattern_width: usize,
}

/// Most pieces on a board (20 a side at the start).
pub const MAX_PIECES: usize = 40;

/// Default ResNet: 4 blocks x 32 channels, the CPU default.
const RESNET: (usize, usize, usize, usize) = (4, 32, 4, 64);
/// Default sparse sizes.
const SPARSE_ACCUMULATOR: usize = 128;
const SPARSE_HIDDEN: [usize; 2] = [32, 32];

impl Default for NetConfig {
    /// A 4x32 ResNet.
    fn default() -> NetConfig {
        NetConfig {
            kind: NetKind::Resnet,
            blocks: RESNET.0,
            channels: RESNET.1,
            policy_channels: RESNET.2,
            value_hidden: RESNET.3,
            moves_left_head: false,
            accumulator: SPARSE_ACCUMULATOR,
            hidden: SPARSE_HIDDEN.to_vec(),
            pairwise: false,
            buckets: 1,
            patterns: false,
            pattern_width: 0,
        }
    }
}

/// A field of a [`NetConfig`] out of range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("network config: `{field}` is {value}, must be {rule}")]
pub struct ArchError {
    /// The field's name (`hidden[1]` for an entry of a list).
    pub field: String,
    /// Its value.
    pub value: usize,
    /// What it must be.
    pub rule: String,
}

impl NetConfig {
    /// The default sparse network (accumulator 128, dense layers 32 and 32).
    pub fn sparse() -> NetConfig {
        NetConfig { kind: NetKind::Sparse, ..NetConfig::default() }
    }

    /// Checks every field of this kind, naming the first one out of range.
    pub fn validate(&self) -> Result<(), ArchError> {
        let check = |field: &str, value: usize, lo: usize, hi: usize| {
            if (lo..=hi).contains(&value) {
                Ok(())
            } else {
                Err(ArchError { field: field.to_owned(), value, rule: format!("in {lo}..={hi}") })
            }
        };
        match self.kind {
            NetKind::Resnet => {
                check("blocks", self.blocks, 0, 64)?;
                check("channels", self.channels, 1, 1024)?;
                check("policy_channels", self.policy_channels, 1, 64)?;
                check("value_hidden", self.value_hidden, 1, 4096)?;
            }
            NetKind::Sparse => {
                check("accumulator", self.accumulator, 8, 2048)?;
                if self.accumulator % 8 != 0 {
                    return Err(ArchError {
                        field: "accumulator".into(),
                        value: self.accumulator,
                        rule: "a multiple of 8".into(),
                    });
                }
                check("hidden (number of layers)", self.hidden.len(), 1, 4)?;
                for (i, &h) in self.hidden.iter().enumerate() {
                    check(&format!("hidden[{i}]"), h, 1, 1024)?;
                }
                check("buckets", self.buckets, 1, 8)?;
                if self.pattern_width != 0 {
                    let rule = |rule: &str| Err(ArchError { field: "pattern_width".into(), value: self.pattern_width, rule: rule.into() });
                    if !self.patterns {
                        return rule("0 without block patterns (`patterns = true`)");
                    }
                    let most = if self.pairwise { self.accumulator / 2 } else { self.accumulator };
                    if self.pattern_width % 16 != 0 || self.pattern_width > most {
                        return rule(&format!("0 or a multiple of 16 up to {most} (the accumulator{})", if self.pairwise { "'s first half, with pairwise products" } else { "" }));
                    }
                }
            }
        }
        Ok(())
    }

    /// How many accumulator outputs (the first ones) the block patterns feed: `pattern_width`,
    /// or the whole accumulator when it is 0; 0 without patterns.
    pub fn pattern_outputs(&self) -> usize {
        match (self.patterns, self.pattern_width) {
            (false, _) => 0,
            (true, 0) => self.accumulator,
            (true, p) => p,
        }
    }

    /// Inputs of a sparse net's first dense layer: both points of view's clipped accumulators
    /// (twice `accumulator`), or their pairwise products (`accumulator`).
    pub fn first_dense_inputs(&self) -> usize {
        if self.pairwise {
            self.accumulator
        } else {
            2 * self.accumulator
        }
    }

    /// The phase bucket of a position with `pieces` pieces on the board (both sides): the range
    /// 1..=40 cut into `buckets` equal parts, the fewest pieces in bucket 0 (with 4 buckets:
    /// 1-10, 11-20, 21-30, 31-40 pieces). The trainer computes the same from the encoding.
    pub fn bucket_of(&self, pieces: usize) -> usize {
        (pieces.saturating_sub(1) * self.buckets / MAX_PIECES).min(self.buckets.max(1) - 1)
    }

    /// A short name: `4x32` or `6x64-ml` for a ResNet (blocks x channels, `-ml` with a
    /// moves-left head), `sparse-128-32-32` for a sparse net (accumulator, dense layers;
    /// `sparse-128p-32-32` with pairwise products, `sparse-128-32-32-b4` with 4 phase buckets,
    /// `sparse-128-32-32-pat` with block patterns, `sparse-128-32-32-pat32` with patterns that
    /// feed 32 outputs).
    pub fn short_name(&self) -> String {
        let ml = if self.moves_left_head { "-ml" } else { "" };
        match self.kind {
            NetKind::Resnet => format!("{}x{}{ml}", self.blocks, self.channels),
            NetKind::Sparse => {
                let hidden: Vec<String> = self.hidden.iter().map(|h| h.to_string()).collect();
                let p = if self.pairwise { "p" } else { "" };
                let b = if self.buckets > 1 { format!("-b{}", self.buckets) } else { String::new() };
                let pat = match (self.patterns, self.pattern_width) {
                    (false, _) => String::new(),
                    (true, 0) => "-pat".into(),
                    (true, w) => format!("-pat{w}"),
                };
                format!("sparse-{}{p}-{}{b}{pat}{ml}", self.accumulator, hidden.join("-"))
            }
        }
    }
}

/// The file form: every key optional, unknown keys refused; only the keys of the kind are
/// accepted and written.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<NetKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blocks: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    channels: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    policy_channels: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value_hidden: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    moves_left_head: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    accumulator: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hidden: Option<Vec<usize>>,
    /// Written only when true, so the sidecars of networks without it read as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pairwise: Option<bool>,
    /// Written only when more than 1, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    buckets: Option<usize>,
    /// Written only when true, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    patterns: Option<bool>,
    /// Written only when not 0, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pattern_width: Option<usize>,
}

impl TryFrom<RawNetConfig> for NetConfig {
    type Error = String;

    fn try_from(raw: RawNetConfig) -> Result<NetConfig, String> {
        let kind = raw.kind.unwrap_or_default();
        let (resnet_keys, sparse_keys): ([(&str, bool); 4], [(&str, bool); 6]) = (
            [
                ("blocks", raw.blocks.is_some()),
                ("channels", raw.channels.is_some()),
                ("policy_channels", raw.policy_channels.is_some()),
                ("value_hidden", raw.value_hidden.is_some()),
            ],
            [
                ("accumulator", raw.accumulator.is_some()),
                ("hidden", raw.hidden.is_some()),
                ("pairwise", raw.pairwise.is_some()),
                ("buckets", raw.buckets.is_some()),
                ("patterns", raw.patterns.is_some()),
                ("pattern_width", raw.pattern_width.is_some()),
            ],
        );
        let foreign: &[(&str, bool)] = match kind {
            NetKind::Resnet => &sparse_keys,
            NetKind::Sparse => &resnet_keys,
        };
        if let Some((key, _)) = foreign.iter().find(|(_, set)| *set) {
            let other = match kind {
                NetKind::Resnet => NetKind::Sparse,
                NetKind::Sparse => NetKind::Resnet,
            };
            return Err(format!(
                "`{key}` is a key of the {} kind, but the kind is {} (set `kind = \"{}\"` or remove `{key}`)",
                other.name(),
                kind.name(),
                other.name()
            ));
        }
        let d = NetConfig::default();
        Ok(NetConfig {
            kind,
            blocks: raw.blocks.unwrap_or(d.blocks),
            channels: raw.channels.unwrap_or(d.channels),
            policy_channels: raw.policy_channels.unwrap_or(d.policy_channels),
            value_hidden: raw.value_hidden.unwrap_or(d.value_hidden),
            moves_left_head: raw.moves_left_head.unwrap_or(d.moves_left_head),
            accumulator: raw.accumulator.unwrap_or(d.accumulator),
            hidden: raw.hidden.unwrap_or(d.hidden),
            pairwise: raw.pairwise.unwrap_or(d.pairwise),
            buckets: raw.buckets.unwrap_or(d.buckets),
            patterns: raw.patterns.unwrap_or(d.patterns),
            pattern_width: raw.pattern_width.unwrap_or(d.pattern_width),
        })
    }
}

impl From<NetConfig> for RawNetConfig {
    fn from(c: NetConfig) -> RawNetConfig {
        let mut raw = RawNetConfig { kind: Some(c.kind), moves_left_head: Some(c.moves_left_head), ..RawNetConfig::default() };
        match c.kind {
            NetKind::Resnet => {
                raw.blocks = Some(c.blocks);
                raw.channels = Some(c.channels);
                raw.policy_channels = Some(c.policy_channels);
                raw.value_hidden = Some(c.value_hidden);
            }
            NetKind::Sparse => {
                raw.accumulator = Some(c.accumulator);
                raw.hidden = Some(c.hidden);
                raw.pairwise = c.pairwise.then_some(true);
                raw.buckets = (c.buckets > 1).then_some(c.buckets);
                raw.patterns = c.patterns.then_some(true);
                raw.pattern_width = (c.pattern_width != 0).then_some(c.pattern_width);
            }
        }
        raw
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_sidecars_are_resnets() {
        let c: NetConfig = serde_json::from_str(
            r#"{"blocks": 4, "channels": 32, "policy_channels": 4, "value_hidden": 64, "moves_left_head": false}"#,
        )
        .unwrap();
        assert_eq!(c, NetConfig::default());
        assert_eq!(c.short_name(), "4x32");
    }

    #[test]
    fn each_kind_writes_and_reads_its_own_keys() {
        for c in [
            NetConfig::default(),
            NetConfig { blocks: 6, channels: 64, moves_left_head: true, ..NetConfig::default() },
            NetConfig::sparse(),
            NetConfig { accumulator: 256, hidden: vec![16], ..NetConfig::sparse() },
            NetConfig { pairwise: true, ..NetConfig::sparse() },
            NetConfig { buckets: 4, ..NetConfig::sparse() },
            NetConfig { patterns: true, ..NetConfig::sparse() },
            NetConfig { patterns: true, pattern_width: 32, ..NetConfig::sparse() },
        ] {
            let json = serde_json::to_value(&c).unwrap();
            let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
            match c.kind {
                NetKind::Resnet => assert!(!keys.iter().any(|k| *k == "accumulator" || *k == "hidden"), "{keys:?}"),
                NetKind::Sparse => assert!(!keys.iter().any(|k| *k == "blocks" || *k == "channels"), "{keys:?}"),
            }
            assert_eq!(serde_json::from_value::<NetConfig>(json).unwrap(), c);
            let toml_text = toml::to_string(&c).unwrap();
            assert_eq!(toml::from_str::<NetConfig>(&toml_text).unwrap(), c, "{toml_text}");
        }
        assert_eq!(NetConfig::sparse().short_name(), "sparse-128-32-32");
        assert_eq!(NetConfig { pairwise: true, ..NetConfig::sparse() }.short_name(), "sparse-128p-32-32");
        // A net without pairwise products does not name the key, so older sidecars read the same.
        assert!(serde_json::to_value(NetConfig::sparse()).unwrap().get("pairwise").is_none());
        assert!(serde_json::to_value(NetConfig::sparse()).unwrap().get("buckets").is_none());
        assert!(serde_json::to_value(NetConfig::sparse()).unwrap().get("patterns").is_none());
        assert_eq!(NetConfig { patterns: true, buckets: 2, ..NetConfig::sparse() }.short_name(), "sparse-128-32-32-b2-pat");
        assert_eq!(NetConfig { buckets: 4, ..NetConfig::sparse() }.short_name(), "sparse-128-32-32-b4");
        assert!(serde_json::to_value(NetConfig { patterns: true, ..NetConfig::sparse() }).unwrap().get("pattern_width").is_none());
        let narrow = NetConfig { patterns: true, pattern_width: 32, ..NetConfig::sparse() };
        assert_eq!(narrow.short_name(), "sparse-128-32-32-pat32");
        assert_eq!(serde_json::to_value(&narrow).unwrap()["pattern_width"], 32);
        assert_eq!((narrow.pattern_outputs(), NetConfig { patterns: true, ..narrow.clone() }.pattern_outputs()), (32, 32));
        assert_eq!(NetConfig { pattern_width: 0, ..narrow.clone() }.pattern_outputs(), 128);
        assert_eq!(NetConfig::sparse().pattern_outputs(), 0);
        assert_eq!(NetConfig { pairwise: true, ..NetConfig::sparse() }.first_dense_inputs(), 128);
        assert_eq!(NetConfig::sparse().first_dense_inputs(), 256);
    }

    #[test]
    fn keys_of_the_other_kind_are_refused() {
        let e = toml::from_str::<NetConfig>("kind = \"sparse\"\nblocks = 4\n").unwrap_err().to_string();
        assert!(e.contains("`blocks` is a key of the resnet kind"), "{e}");
        let e = toml::from_str::<NetConfig>("accumulator = 64\n").unwrap_err().to_string();
        assert!(e.contains("`accumulator` is a key of the sparse kind"), "{e}");
        let e = toml::from_str::<NetConfig>("pairwise = true\n").unwrap_err().to_string();
        assert!(e.contains("`pairwise` is a key of the sparse kind"), "{e}");
        let e = toml::from_str::<NetConfig>("patterns = true\n").unwrap_err().to_string();
        assert!(e.contains("`patterns` is a key of the sparse kind"), "{e}");
        let e = toml::from_str::<NetConfig>("buckets = 2\n").unwrap_err().to_string();
        assert!(e.contains("`buckets` is a key of the sparse kind"), "{e}");
        let e = toml::from_str::<NetConfig>("kind = \"dense\"\n").unwrap_err().to_string();
        assert!(e.contains("dense"), "{e}");
        let e = toml::from_str::<NetConfig>("kind = \"sparse\"\nlayers = 3\n").unwrap_err().to_string();
        assert!(e.contains("layers"), "{e}");
    }

    #[test]
    fn validation_names_the_field() {
        let bad = [
            (NetConfig { channels: 0, ..NetConfig::default() }, "channels"),
            (NetConfig { accumulator: 100, ..NetConfig::sparse() }, "accumulator"),
            (NetConfig { accumulator: 0, ..NetConfig::sparse() }, "accumulator"),
            (NetConfig { hidden: vec![], ..NetConfig::sparse() }, "hidden (number of layers)"),
            (NetConfig { hidden: vec![8, 0], ..NetConfig::sparse() }, "hidden[1]"),
            (NetConfig { buckets: 0, ..NetConfig::sparse() }, "buckets"),
            (NetConfig { buckets: 9, ..NetConfig::sparse() }, "buckets"),
            (NetConfig { pattern_width: 32, ..NetConfig::sparse() }, "pattern_width"),
            (NetConfig { patterns: true, pattern_width: 24, ..NetConfig::sparse() }, "pattern_width"),
            (NetConfig { patterns: true, pattern_width: 144, ..NetConfig::sparse() }, "pattern_width"),
            (NetConfig { patterns: true, pairwise: true, pattern_width: 80, ..NetConfig::sparse() }, "pattern_width"),
        ];
        for (c, field) in bad {
            assert_eq!(c.validate().unwrap_err().field, field);
        }
        // The other kind's fields are not checked.
        assert!(NetConfig { channels: 0, ..NetConfig::sparse() }.validate().is_ok());
        assert!(NetConfig::sparse().validate().is_ok() && NetConfig::default().validate().is_ok());
        assert!(NetConfig { patterns: true, pairwise: true, pattern_width: 64, ..NetConfig::sparse() }.validate().is_ok());
        assert!(NetConfig { patterns: true, pattern_width: 128, ..NetConfig::sparse() }.validate().is_ok());
    }

    #[test]
    fn buckets_cut_the_piece_counts_into_equal_ranges() {
        let four = NetConfig { buckets: 4, ..NetConfig::sparse() };
        let of = |pieces| four.bucket_of(pieces);
        assert_eq!([of(1), of(10), of(11), of(20), of(21), of(30), of(31), of(40)], [0, 0, 1, 1, 2, 2, 3, 3]);
        // Out of range counts stay in the end buckets; one bucket is always bucket 0.
        assert_eq!((of(0), of(60)), (0, 3));
        assert!((0..=40).all(|p| NetConfig::sparse().bucket_of(p) == 0));
        let three = NetConfig { buckets: 3, ..NetConfig::sparse() };
        let counts = (1..=40).fold([0; 3], |mut c, p| {
            c[three.bucket_of(p)] += 1;
            c
        });
        assert_eq!(counts, [14, 13, 13]);
    }
}
