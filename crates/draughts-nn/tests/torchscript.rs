//! The TorchScript file of a network: traced, saved, loaded back, and the same outputs as the
//! network for real positions at batch sizes other than the traced one.

mod common;

use draughts_nn::encoding::{encode_batch, EncodeInput, INPUT_SIZE};
use draughts_nn::{torchscript, NetConfig, POLICY_SIZE};
use tch::{Device, Tensor};

fn positions(n: usize, seed: u64) -> Tensor {
    let states = common::mixed_states(n / 2, n - n / 2, seed);
    let mut buf = Vec::new();
    encode_batch(
        states.iter().map(|s| EncodeInput { position: &s.position, counters: s.counters, repetitions: s.repetitions }),
        &mut buf,
    );
    Tensor::from_slice(&buf).reshape([n as i64, INPUT_SIZE as i64])
}

#[test]
fn a_reloaded_torchscript_file_gives_the_networks_outputs() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let configs: [(&str, NetConfig); 5] = [
        ("resnet", common::tiny_config(false)),
        ("resnet-ml", common::tiny_config(true)),
        ("sparse", common::tiny_sparse_config(false)),
        ("sparse-ml", common::tiny_sparse_config(true)),
        ("sparse-patterns", NetConfig { patterns: true, buckets: 2, ..common::tiny_sparse_config(false) }),
    ];
    for (i, (name, config)) in configs.iter().enumerate() {
        let mut net = common::perturbed_net(config, 10 + i as u64);
        let path = torchscript::torchscript_path(dir.path(), name);
        torchscript::save(&mut net, &path).unwrap();
        let module = torchscript::load(&path, Device::Cpu).unwrap();
        let columns = POLICY_SIZE as i64 + 3 + i64::from(config.moves_left_head);
        for batch in [1, 7, 33] {
            let xs = positions(batch, batch as u64);
            let out = tch::no_grad(|| module.forward_ts(&[&xs])).unwrap();
            assert_eq!(out.size(), vec![batch as i64, columns], "{name}");
            let diff = torchscript::max_difference(&module, &net, &xs).unwrap();
            assert!(diff < 1e-5, "{name}, batch {batch}: differs by {diff}");
        }
        // Another network's weights give other outputs: the comparison can fail.
        let other = common::perturbed_net(config, 99);
        let diff = torchscript::max_difference(&module, &other, &positions(7, 1)).unwrap();
        assert!(diff > 1e-3, "{name}: {diff}");
    }
}
