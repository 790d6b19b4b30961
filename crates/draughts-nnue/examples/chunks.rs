//! How many blocks of four first-layer outputs are all zero (the quantised first dense layer
//! skips those), in the float order, sorted by how often each output is zero, and grouped
//! greedily: `cargo run --release -p draughts-nnue --example chunks` (shipped model).
use draughts_core::Position;
use draughts_nnue::{Network, Scratch};
fn main() {
    let net = Network::load("models/sparse-2h".as_ref()).expect("model");
    let mut scratch = Scratch::default();
    let mut acc = net.new_accumulator();
    let mut rows: Vec<Vec<bool>> = Vec::new();
    let mut state = 3u64;
    for _ in 0..300 {
        let mut pos = Position::start();
        for _ in 0..80 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            pos = pos.play(&moves[(state >> 33) as usize % moves.len()]);
            net.refresh(&pos, &mut acc);
            rows.push(net.nonzero_inputs(&acc, pos.side_to_move(), &mut scratch));
        }
    }
    let n = rows[0].len();
    let rate: Vec<f64> = (0..n).map(|j| rows.iter().filter(|r| r[j]).count() as f64 / rows.len() as f64).collect();
    let count = |order: &[usize]| -> f64 {
        rows.iter().map(|r| order.chunks(4).filter(|c| c.iter().any(|&j| r[j])).count()).sum::<usize>() as f64 / rows.len() as f64
    };
    let ident: Vec<usize> = (0..n).collect();
    // sort within each half (us: 0..128, them: 128..256)
    let mut sorted = Vec::new();
    for h in 0..2 {
        let mut v: Vec<usize> = (h * n / 2..(h + 1) * n / 2).collect();
        v.sort_by(|&a, &b| rate[a].partial_cmp(&rate[b]).unwrap());
        sorted.extend(v);
    }
    // Greedy: each chunk starts with the neuron most often zero, then adds the one that keeps
    // the chunk all-zero most often.
    let mut greedy = Vec::new();
    for h in 0..2 {
        let mut left: Vec<usize> = (h * n / 2..(h + 1) * n / 2).collect();
        while !left.is_empty() {
            left.sort_by(|&a, &b| rate[a].partial_cmp(&rate[b]).unwrap());
            let mut chunk = vec![left.remove(0)];
            while chunk.len() < 4 && !left.is_empty() {
                let (bi, _) = left
                    .iter()
                    .enumerate()
                    .map(|(i, &j)| (i, rows.iter().filter(|r| chunk.iter().all(|&c| !r[c]) && !r[j]).count()))
                    .max_by_key(|x| x.1)
                    .unwrap();
                chunk.push(left.remove(bi));
            }
            greedy.extend(chunk);
        }
    }
    println!("greedy {:.1}", count(&greedy));
    let nz: f64 = rows.iter().map(|r| r.iter().filter(|&&b| b).count()).sum::<usize>() as f64 / rows.len() as f64;
    let mut rs = rate.clone();
    rs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("nonzero inputs {nz:.1} of {n}; nonzero chunks identity {:.1}, sorted by rate {:.1} of {}", count(&ident), count(&sorted), n / 4);
    println!("rates deciles: {:?}", (0..=10).map(|i| (rs[(i * (n - 1)) / 10] * 100.0).round()).collect::<Vec<_>>());
}
