//! The published perft counts and FMJD rule positions in `tests/data/` (sources in each file's
//! header), run against the move generator.

use std::collections::BTreeSet;

use draughts_core::{perft, Position, Rules};

struct PerftRow {
    name: String,
    fen: String,
    depth: u32,
    nodes: u64,
}

fn perft_rows() -> Vec<PerftRow> {
    let text = include_str!("data/perft.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 4, "bad perft row: {l}");
            PerftRow {
                name: cols[0].to_owned(),
                fen: cols[1].to_owned(),
                depth: cols[2].parse().unwrap(),
                nodes: cols[3].parse().unwrap(),
            }
        })
        .collect()
}

/// Rows up to this many leaves run in the normal test suite; deeper ones are `--ignored`.
const SUITE_LIMIT: u64 = 10_000_000;

fn run_rows(keep: impl Fn(&PerftRow) -> bool) {
    let rows: Vec<PerftRow> = perft_rows().into_iter().filter(keep).collect();
    assert!(!rows.is_empty());
    let mut failures = Vec::new();
    for row in &rows {
        let pos = Position::from_fen(&row.fen).unwrap();
        let got = perft::perft_parallel(&pos, row.depth);
        if got != row.nodes {
            failures.push(format!("{} depth {}: expected {}, got {}", row.name, row.depth, row.nodes, got));
        }
    }
    assert!(failures.is_empty(), "perft mismatches:\n{}", failures.join("\n"));
}

#[test]
fn perft_published_counts() {
    run_rows(|r| r.nodes <= SUITE_LIMIT);
}

#[test]
#[ignore = "deep perft: billions of leaves; run with --ignored --release"]
fn perft_published_counts_deep() {
    run_rows(|r| r.nodes > SUITE_LIMIT);
}

#[test]
fn perft_single_and_parallel_agree() {
    for row in perft_rows().iter().filter(|r| r.nodes <= 200_000) {
        let pos = Position::from_fen(&row.fen).unwrap();
        assert_eq!(perft::perft(&pos, row.depth), row.nodes, "{} {}", row.name, row.depth);
        let divided: u64 = perft::divide(&pos, row.depth).iter().map(|(_, n)| n).sum();
        assert_eq!(divided, row.nodes);
    }
}

#[test]
fn fmjd_rule_positions_exact_move_sets() {
    let text = include_str!("data/rules.tsv");
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 3, "bad rules row: {line}");
        let (name, fen, expected) = (cols[0], cols[1], cols[2]);
        let pos = Position::from_fen(fen).unwrap();
        let expected: BTreeSet<String> = expected.split_whitespace().map(str::to_owned).collect();
        let moves = pos.legal_moves();
        let got: BTreeSet<String> = moves.iter().map(|m| m.to_hub()).collect();
        assert_eq!(got.len(), moves.len(), "{name}: a move was generated twice");
        if got != expected {
            failures.push(format!("{name} ({fen}):\n  expected {expected:?}\n  got      {got:?}"));
        }
        // Each move resolves back from its own Hub and PDN text.
        for mv in &moves {
            assert_eq!(pos.parse_hub_move(&mv.to_hub()).as_ref(), Ok(mv), "{name}");
            let pdn = pos.to_pdn(mv, &Rules::FMJD);
            assert_eq!(pos.parse_pdn_move(&pdn).as_ref(), Ok(mv), "{name}: {pdn}");
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, 22, "every row of rules.tsv is checked");
}
