//! libtorch builds, links and runs: tensors, safetensors round trip, CUDA query.

use anyhow::Result;
use tch::nn::{self, Module};
use tch::{Device, Kind, Tensor};

#[test]
fn tensor_computation() -> Result<()> {
    assert_eq!(draughts_nn::libtorch_smoke()?, 52.0);

    let x = Tensor::arange(6, (Kind::Float, Device::Cpu)).reshape([2, 3]);
    let y = (&x * 2.0 + 1.0)
        .relu()
        .sum_dim_intlist(1, false, Kind::Float);
    // rows [0,1,2] and [3,4,5] -> [1,3,5] and [7,9,11]
    assert_eq!(Vec::<f32>::try_from(&y)?, vec![9.0, 27.0]);
    let s = x
        .softmax(-1, Kind::Float)
        .sum_dim_intlist(1, false, Kind::Float);
    for v in Vec::<f32>::try_from(&s)? {
        assert!((v - 1.0).abs() < 1e-6);
    }
    Ok(())
}

fn linear_store() -> (nn::VarStore, nn::Linear) {
    let vs = nn::VarStore::new(Device::Cpu);
    let layer = nn::linear(vs.root() / "fc", 4, 3, Default::default());
    (vs, layer)
}

#[test]
fn varstore_safetensors_round_trip() -> Result<()> {
    tch::manual_seed(1);
    let (vs, layer) = linear_store();
    let (mut fresh_vs, fresh_layer) = linear_store();
    let input = Tensor::randn([5, 4], (Kind::Float, Device::Cpu));
    let expected = layer.forward(&input);
    assert!(
        !fresh_layer.forward(&input).equal(&expected),
        "fresh layer should differ"
    );

    let dir = tempfile::tempdir()?;
    let path = dir.path().join("linear.safetensors");
    vs.save(&path)?;
    assert!(std::fs::metadata(&path)?.len() > 0);
    // A safetensors file starts with a little-endian u64 header length, then a JSON header.
    let bytes = std::fs::read(&path)?;
    assert_eq!(bytes[8], b'{');

    fresh_vs.load(&path)?;
    assert!(fresh_layer.forward(&input).equal(&expected));
    assert_eq!(fresh_vs.variables().len(), 2);
    Ok(())
}

#[test]
fn cuda_query_does_not_crash() {
    let available = draughts_nn::cuda_available();
    let devices = tch::Cuda::device_count();
    let cudnn = tch::Cuda::cudnn_is_available();
    println!(
        "libtorch lib: {}; cuda available: {available}; devices: {devices}; cudnn: {cudnn}",
        draughts_nn::LIBTORCH_LIB
    );
    // The CPU install from scripts/setup has no libtorch_cuda.so, and without it (or when rustc's
    // --as-needed drops it) libtorch cannot see CUDA even on a GPU machine.
    let cuda_build = std::path::Path::new(draughts_nn::LIBTORCH_LIB)
        .join("libtorch_cuda.so")
        .exists();
    if !cuda_build {
        assert!(!available);
        assert_eq!(devices, 0);
    }
}
