//! Network shapes, modes, errors, and the masked softmax on tensors.

mod common;

use draughts_nn::encoding::{encode_batch, EncodeInput, INPUT_SIZE};
use draughts_nn::net::masked_log_softmax;
use draughts_nn::policy::{masked_softmax, move_index, POLICY_SIZE};
use draughts_nn::{Net, NetConfig, NetError, NetEvaluator, NetRequest};
use tch::{Device, Kind, Tensor};

fn input(n: usize, seed: u64) -> (Vec<draughts_nn::bench::SampleState>, Tensor) {
    let states = common::mixed_states(n / 2, n - n / 2, seed);
    let mut buf = Vec::new();
    encode_batch(
        states.iter().map(|s| EncodeInput {
            position: &s.position,
            counters: s.counters,
            repetitions: s.repetitions,
        }),
        &mut buf,
    );
    let xs = Tensor::from_slice(&buf).reshape([n as i64, INPUT_SIZE as i64]);
    (states, xs)
}

#[test]
fn output_shapes() {
    tch::set_num_threads(1);
    for moves_left in [false, true] {
        let net = Net::new(&common::tiny_config(moves_left), Device::Cpu, 1).unwrap();
        let (_, xs) = input(5, 1);
        let out = tch::no_grad(|| net.forward(&xs)).unwrap();
        assert_eq!(out.policy.size(), vec![5, POLICY_SIZE as i64]);
        assert_eq!(out.wdl.size(), vec![5, 3]);
        assert_eq!(
            out.moves_left.as_ref().map(|t| t.size()),
            moves_left.then(|| vec![5, 1])
        );
        // The 4-d form gives the same answer.
        let out4 = tch::no_grad(|| net.forward(&xs.reshape([5, 8, 10, 10]))).unwrap();
        assert!(out4.policy.equal(&out.policy));
        // Inference of one position does not depend on the rest of the batch.
        let one = tch::no_grad(|| net.forward(&xs.narrow(0, 2, 1))).unwrap();
        let diff = f64::try_from((one.wdl - out.wdl.narrow(0, 2, 1)).abs().max()).unwrap();
        assert!(diff < 1e-5, "{diff}");
    }
    let default = Net::new(&NetConfig::default(), Device::Cpu, 1).unwrap();
    assert_eq!(default.config().short_name(), "4x32");
    assert!(default.parameter_count() > 100_000);
}

#[test]
fn train_mode_updates_batch_norm_statistics_and_eval_does_not() {
    tch::set_num_threads(1);
    let net = Net::new(&common::tiny_config(false), Device::Cpu, 2).unwrap();
    let mean = |net: &Net| net.var_store().variables()["input.bn.running_mean"].copy();
    let (_, xs) = input(16, 2);
    let before = mean(&net);
    tch::no_grad(|| net.forward(&xs)).unwrap();
    assert!(
        mean(&net).equal(&before),
        "eval mode changed the running mean"
    );
    let eval_out = tch::no_grad(|| net.forward(&xs)).unwrap();
    let train_out = net.forward_t(&xs, true).unwrap();
    assert!(
        !mean(&net).equal(&before),
        "train mode left the running mean alone"
    );
    // Train mode normalises with batch statistics: other outputs than eval mode.
    assert!(!train_out.wdl.allclose(&eval_out.wdl, 1e-6, 1e-6, false));
    // And it builds a graph: a loss can be backpropagated to the weights.
    let loss = train_out.wdl.log_softmax(-1, Kind::Float).mean(Kind::Float);
    loss.backward();
    let grad = net.var_store().variables()["value.fc2.weight"].grad();
    assert!(grad.defined() && f64::try_from(grad.abs().sum(Kind::Float)).unwrap() > 0.0);
}

#[test]
fn bad_input_and_config_are_errors() {
    let net = Net::new(&common::tiny_config(false), Device::Cpu, 3).unwrap();
    for bad in [
        Tensor::zeros([2, 799], (Kind::Float, Device::Cpu)),
        Tensor::zeros([2, 7, 10, 10], (Kind::Float, Device::Cpu)),
        Tensor::zeros([800], (Kind::Float, Device::Cpu)),
        Tensor::zeros([2, 800], (Kind::Double, Device::Cpu)),
    ] {
        let err = net.forward(&bad).unwrap_err();
        assert!(matches!(err, NetError::InputShape { .. }), "{err}");
        assert!(err.to_string().contains("expected [B, 800]"), "{err}");
    }
    let bad = NetConfig {
        channels: 0,
        ..NetConfig::default()
    };
    let err = Net::new(&bad, Device::Cpu, 0).unwrap_err();
    assert!(err.to_string().contains("`channels` is 0"), "{err}");
    if !tch::Cuda::is_available() {
        let err = Net::new(&NetConfig::default(), Device::Cuda(0), 0).unwrap_err();
        assert!(matches!(err, NetError::DeviceUnavailable(_)), "{err}");
    }
}

#[test]
fn config_from_toml() {
    let c: NetConfig = toml::from_str("blocks = 6\nchannels = 64").unwrap();
    assert_eq!(
        c,
        NetConfig {
            blocks: 6,
            channels: 64,
            ..NetConfig::default()
        }
    );
    let err = toml::from_str::<NetConfig>("blocks = 6\nchanels = 64").unwrap_err();
    assert!(err.to_string().contains("chanels"), "{err}");
}

#[test]
fn masked_softmax_is_a_distribution_over_legal_moves() {
    tch::set_num_threads(1);
    let net = Net::new(&common::tiny_config(false), Device::Cpu, 4).unwrap();
    let n = 24;
    let (states, xs) = input(n, 4);
    let logits = tch::no_grad(|| net.forward(&xs)).unwrap().policy;
    let mut mask = vec![false; n * POLICY_SIZE];
    let mut all_indices = Vec::new();
    for (k, s) in states.iter().enumerate() {
        let side = s.position.side_to_move();
        let idx: Vec<u16> = s
            .position
            .legal_moves()
            .iter()
            .map(|m| move_index(side, m) as u16)
            .collect();
        for &i in &idx {
            mask[k * POLICY_SIZE + i as usize] = true;
        }
        all_indices.push(idx);
    }
    let mask_t = Tensor::from_slice(&mask).reshape([n as i64, POLICY_SIZE as i64]);
    let probs = masked_log_softmax(&logits, &mask_t).unwrap().exp();
    let probs: Vec<f32> = Vec::try_from(probs.reshape([-1])).unwrap();
    let logits: Vec<f32> = Vec::try_from(logits.reshape([-1])).unwrap();
    let mut per_move = Vec::new();
    for (k, idx) in all_indices.iter().enumerate() {
        let row = &probs[k * POLICY_SIZE..(k + 1) * POLICY_SIZE];
        let total: f32 = row.iter().sum();
        assert!((total - 1.0).abs() < 1e-5, "row {k}: {total}");
        for (i, &p) in row.iter().enumerate() {
            if !mask[k * POLICY_SIZE + i] {
                assert_eq!(p, 0.0, "row {k} index {i} is not legal");
            } else {
                assert!(p > 0.0);
            }
        }
        // The per-move softmax agrees with the tensor one (moves sharing an index split it).
        masked_softmax(
            &logits[k * POLICY_SIZE..(k + 1) * POLICY_SIZE],
            idx,
            &mut per_move,
        );
        for (j, &i) in idx.iter().enumerate() {
            let share = idx.iter().filter(|&&x| x == i).count() as f32;
            assert!((per_move[j] * share - row[i as usize]).abs() < 1e-5);
        }
    }
}

#[test]
fn evaluator_returns_distributions() {
    tch::set_num_threads(1);
    let net = Net::new(&common::tiny_config(true), Device::Cpu, 5).unwrap();
    let evaluator = NetEvaluator::new(net, 7);
    let states = common::mixed_states(20, 10, 9);
    let moves: Vec<_> = states.iter().map(|s| s.position.legal_moves()).collect();
    let requests: Vec<NetRequest<'_>> = states
        .iter()
        .zip(&moves)
        .map(|(s, m)| NetRequest {
            position: s.position,
            counters: s.counters,
            repetitions: s.repetitions,
            moves: m,
        })
        .collect();
    let evals = evaluator.evaluate(&requests).unwrap();
    assert_eq!(evals.len(), requests.len());
    for (e, r) in evals.iter().zip(&requests) {
        assert_eq!(e.policy.len(), r.moves.len());
        assert!((e.policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!((e.wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(e.wdl.iter().all(|&p| p > 0.0));
        assert!(e.moves_left.is_some_and(f32::is_finite));
    }
    // Split into batches of 7 or run one at a time: the same answers.
    let single: Vec<_> = requests
        .iter()
        .map(|r| evaluator.evaluate(&[*r]).unwrap().remove(0))
        .collect();
    for (a, b) in evals.iter().zip(&single) {
        for (x, y) in a
            .policy
            .iter()
            .zip(&b.policy)
            .chain(a.wdl.iter().zip(&b.wdl))
        {
            assert!((x - y).abs() < 1e-5);
        }
    }
    assert!(evaluator
        .evaluate::<NetRequest<'_>>(&[])
        .unwrap()
        .is_empty());
}
