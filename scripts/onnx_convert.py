#!/usr/bin/env python3
"""Turn a model directory's TorchScript file (written by `draughts export`) into ONNX, then check
the ONNX file under onnxruntime against the TorchScript file under PyTorch. Run by scripts/onnx,
which installs PyTorch, onnx and onnxruntime in a virtual environment first:

    onnx_convert.py DIR [--torchscript FILE] [--out FILE] [--opset N] [--batch N] [--seed N]
                        [--tolerance X] [--verbose]
    onnx_convert.py --self-test [--keep] # two stand-in nets (ResNet, sparse) end to end
    onnx_convert.py --make-cuda-stubs    # install step of scripts/onnx (see there)

The TorchScript file takes one float32 input [B, 800] (the position encoding) and returns one
float32 tensor [B, 2503]: policy logits in columns 0..2500, win/draw/loss logits in 2500..2503,
and a moves-left column at 2503 when the net has that head ([B, 2504]). The ONNX file has the same
contract, a dynamic batch axis, input `positions` and output `outputs`; it is written next to the
TorchScript file as NAME-sSTEP.onnx unless --out says otherwise, under a temporary name first and
renamed only once the check passed (a failed one is kept as FILE.rejected, to look at).

The check feeds both the same seeded inputs: a batch of --batch (64) random 0/1 positions, one
position (batch 1) and seven position-like ones (0/1 pieces, fractional counter planes), the last
two proving the dynamic batch axis, and prints the largest absolute difference per output group.
Exit status: 0 when every difference is within --tolerance (1e-4, absolute, on logits); 1 when
one is not, or the export fails; 2 for bad input (no such directory, no TorchScript file, a file
that is not TorchScript or does not follow the contract above).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
import zipfile
from pathlib import Path

NAME = "onnx"
INPUT_SIZE = 800  # 8 planes of 10x10 (encoding version 1)
POLICY_SIZE = 2500
WDL = 3
DEFAULT_OPSET = 17
DEFAULT_BATCH = 64
DEFAULT_SEED = 20240601
DEFAULT_TOLERANCE = 1e-4
TS_SUFFIX = ".torchscript.pt"
VERBOSE = False


class BadInput(Exception):
    """Exit 2: the directory or the file given cannot be used."""


class CheckFailed(Exception):
    """Exit 1: the export failed, or the ONNX file does not agree with the TorchScript file."""


def say(*parts):
    print(f"{NAME}:", *parts, flush=True)


def brief(e):
    """One line of an exception from torch (whose messages carry C++ and TorchScript traces)."""
    lines = [l.strip() for l in str(e).strip().splitlines() if l.strip()]
    if not lines:
        return type(e).__name__
    if "TorchScript interpreter" in lines[0] or "Traceback" in lines[0]:
        return lines[-1]
    return lines[0]


# ---------------------------------------------------------------------------------------------
# Finding the files
# ---------------------------------------------------------------------------------------------
def read_sidecar(path):
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise BadInput(f"cannot read the sidecar {path}: {e}")
    if not isinstance(data, dict):
        raise BadInput(f"{path} is not a sidecar (not a JSON object)")
    return data


def find_model(directory, torchscript=None):
    """(TorchScript path, sidecar dict or None, sidecar path or None) for a model directory."""
    d = Path(directory) if directory is not None else None
    if torchscript is None:
        if not d.exists():
            raise BadInput(f"no such directory: {d}")
        if not d.is_dir():
            raise BadInput(f"{d} is not a directory (give the model directory)")
        found = sorted(p for p in d.iterdir() if p.name.endswith(TS_SUFFIX) and p.is_file())
        if not found:
            raise BadInput(f"no TorchScript file (*{TS_SUFFIX}) in {d}: write one with "
                           "`draughts export`, or name one with --torchscript FILE")
        if len(found) == 1:
            ts = found[0]
        else:
            ids = set()
            for side in sorted(d.glob("*.json")):
                try:
                    mid = json.loads(side.read_text()).get("model_id")
                except (OSError, ValueError, AttributeError):
                    continue
                if isinstance(mid, str):
                    ids.add(mid)
            match = [p for p in found if p.name[: -len(TS_SUFFIX)] in ids]
            if len(match) != 1:
                names = ", ".join(p.name for p in found)
                raise BadInput(f"{len(found)} TorchScript files in {d} ({names}) and "
                               f"{'none' if not match else 'more than one'} matches a sidecar's "
                               "model_id: name one with --torchscript FILE")
            ts = match[0]
    else:
        ts = Path(torchscript)
        if d is not None and not ts.is_absolute() and not ts.exists() and (d / ts).exists():
            ts = d / ts
        if not ts.exists():
            raise BadInput(f"no such file: {ts}")
        if not ts.is_file():
            raise BadInput(f"{ts} is not a file")
    stem = ts.name[: -len(TS_SUFFIX)] if ts.name.endswith(TS_SUFFIX) else ts.stem
    side = ts.with_name(stem + ".json")
    sidecar = read_sidecar(side) if side.is_file() else None
    if sidecar is None:
        say(f"warning: no sidecar {side.name} next to {ts.name}; the ONNX file gets no model "
            "metadata and the head layout is read from the output width")
    elif sidecar.get("model_id") not in (None, stem):
        say(f"warning: {side.name} says model_id {sidecar.get('model_id')!r}, the file is {ts.name}")
    return ts, sidecar, (side if sidecar is not None else None)


def default_out(ts):
    name = ts.name[: -len(TS_SUFFIX)] if ts.name.endswith(TS_SUFFIX) else ts.stem
    return ts.with_name(name + ".onnx")


# ---------------------------------------------------------------------------------------------
# Loading, exporting, checking
# ---------------------------------------------------------------------------------------------
def load_torchscript(ts):
    import torch

    if not zipfile.is_zipfile(ts):
        raise BadInput(f"{ts} is not a TorchScript file (not a zip archive; "
                       "TorchScript files are written by torch.jit.save / tch CModule::save)")
    try:
        module = torch.jit.load(str(ts), map_location="cpu")
    except Exception as e:  # torch raises RuntimeError with a long C++ trace
        raise BadInput(f"{ts} is not a TorchScript file torch.jit.load can read: {brief(e)}")
    module.eval()
    if not hasattr(module, "forward"):
        raise BadInput(f"{ts} has no forward method")
    return module


def positions(rng, batch, kind):
    """Inputs for the check: "binary" = random 0/1 everywhere; "positions" = 0/1 pieces on
    the four piece planes and one fraction per counter plane (what encoded positions look like)."""
    import numpy as np

    if kind == "binary":
        return (rng.random((batch, INPUT_SIZE)) < 0.5).astype(np.float32)
    x = (rng.random((batch, INPUT_SIZE)) < 0.2).astype(np.float32)
    planes = x.reshape(batch, 8, 100)
    planes[:, 4:, :] = rng.random((batch, 4, 1)).astype(np.float32)  # constant planes
    return planes.reshape(batch, INPUT_SIZE)


def run_torchscript(module, x, what):
    import torch

    try:
        with torch.no_grad():
            y = module(torch.from_numpy(x))
    except Exception as e:
        first = brief(e)
        hint = ""
        if x.shape[0] != 4:
            hint = (" (a trace that reads the batch size, e.g. reshape([batch, ...]) with batch "
                    "from size(), keeps the batch size it was traced with: reshape with -1 keeps "
                    "the batch axis dynamic)")
        raise BadInput(f"the TorchScript file fails on {what} [{x.shape[0]}, {INPUT_SIZE}]: "
                       f"{first}{hint}")
    if isinstance(y, (tuple, list)):
        raise BadInput(f"the TorchScript file returns {len(y)} values, expected one tensor")
    if not isinstance(y, torch.Tensor):
        raise BadInput(f"the TorchScript file returns {type(y).__name__}, expected a tensor")
    if y.dtype != torch.float32:
        raise BadInput(f"the TorchScript file returns {str(y.dtype).replace('torch.', '')}, "
                       "expected float32")
    return y.detach().numpy()


def check_layout(y, batch, sidecar):
    """Number of columns past the policy and wdl ones (0 or 1), checked against the sidecar."""
    width = POLICY_SIZE + WDL
    if y.ndim != 2 or y.shape[0] != batch or y.shape[1] not in (width, width + 1):
        raise BadInput(f"the TorchScript file returns shape {list(y.shape)} for a batch of "
                       f"{batch}, expected [{batch}, {width}] or [{batch}, {width + 1}]")
    extra = y.shape[1] - width
    if sidecar is not None:
        head = (sidecar.get("architecture") or {}).get("moves_left_head")
        if isinstance(head, bool) and head != bool(extra):
            raise BadInput(f"the sidecar says moves_left_head {str(head).lower()} but the "
                           f"TorchScript file returns {y.shape[1]} columns")
    return extra


QUIET_WARNINGS = (
    "legacy TorchScript-based ONNX export",
    "The feature will be removed",
    "no signature found for",
)


class QuietStdout:
    """Sends file descriptor 1 to a scratch file: on failure the exporter writes its whole graph
    there from C++ (torch._C._jit_onnx_log), which print() redirection would not catch."""

    def __enter__(self):
        sys.stdout.flush()
        self.saved = os.dup(1)
        self.scratch = tempfile.TemporaryFile()
        os.dup2(self.scratch.fileno(), 1)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)
        self.scratch.close()
        return False


def export(module, example, path, opset):
    import contextlib
    import torch

    quiet = contextlib.nullcontext() if VERBOSE else QuietStdout()
    with warnings.catch_warnings(record=True) as caught, quiet:
        warnings.simplefilter("always")
        try:
            # The torch.export-based exporter (dynamo=True, the default since 2.9) refuses
            # ScriptModules; the TorchScript-based one takes them as they are.
            torch.onnx.export(
                module, (torch.from_numpy(example),), str(path),
                dynamo=False,
                opset_version=opset,
                input_names=["positions"],
                output_names=["outputs"],
                dynamic_axes={"positions": {0: "batch"}, "outputs": {0: "batch"}},
                do_constant_folding=True,
            )
        except Exception as e:
            if VERBOSE:
                traceback.print_exc()
            text = " ".join(str(e).split())
            if len(text) > 700:
                text = text[:700] + " ... (--verbose prints it all)"
            raise CheckFailed(f"torch.onnx.export failed: {type(e).__name__}: {text}")
    for w in caught:
        text = str(w.message)
        if not any(q in text for q in QUIET_WARNINGS):
            say(f"exporter warning: {text.splitlines()[0] if text else w.category.__name__}")


def annotate(path, sidecar, extra, ts):
    """Checks the exported graph's interface and writes the model's identity into the ONNX
    metadata (metadata_props), so a file that travels alone still says what it is."""
    import onnx

    model = onnx.load(str(path))
    graph = model.graph
    ins = [i.name for i in graph.input if i.name not in {t.name for t in graph.initializer}]
    outs = [o.name for o in graph.output]
    if ins != ["positions"] or outs != ["outputs"]:
        raise CheckFailed(f"the exported graph has inputs {ins} and outputs {outs}, expected "
                          "['positions'] and ['outputs']")
    dims = graph.input[0].type.tensor_type.shape.dim
    if len(dims) != 2 or not dims[0].dim_param or dims[1].dim_value != INPUT_SIZE:
        shape = [d.dim_param or d.dim_value for d in dims]
        raise CheckFailed(f"the exported input has shape {shape}, expected [batch, {INPUT_SIZE}]")
    layout = f"policy logits 0..{POLICY_SIZE}, win/draw/loss logits {POLICY_SIZE}..{POLICY_SIZE + WDL}"
    if extra:
        layout += f", moves left {POLICY_SIZE + WDL}"
    props = {
        "draughts.outputs": layout,
        "draughts.input": f"float32 [batch, {INPUT_SIZE}]: 8 planes of 10x10 (draughts-nn encoding)",
        "draughts.source": ts.name,
    }
    if sidecar is not None:
        for key in ("model_id", "encoding_version", "rules", "step", "name"):
            if key in sidecar:
                props[f"draughts.{key}"] = str(sidecar[key])
        if "architecture" in sidecar:
            props["draughts.architecture"] = json.dumps(sidecar["architecture"], sort_keys=True)
    del model.metadata_props[:]
    for k, v in props.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    model.doc_string = f"International draughts net ({props.get('draughts.model_id', ts.name)}): {layout}"
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return model


def groups(extra):
    g = [("policy", 0, POLICY_SIZE), ("wdl", POLICY_SIZE, POLICY_SIZE + WDL)]
    if extra:
        g.append(("moves-left", POLICY_SIZE + WDL, POLICY_SIZE + WDL + 1))
    return g


def fmt(x):
    return f"{x:.2e}"


def convert(directory, torchscript=None, out=None, opset=DEFAULT_OPSET, batch=DEFAULT_BATCH,
            seed=DEFAULT_SEED, tolerance=DEFAULT_TOLERANCE):
    """The whole job; returns the ONNX path and the largest difference per group. Raises
    BadInput or CheckFailed."""
    import numpy as np

    ts, sidecar, _ = find_model(directory, torchscript)
    out = Path(out) if out is not None else default_out(ts)
    if out.exists() and out.is_dir():
        raise BadInput(f"--out {out} is a directory")
    if not out.parent.is_dir():
        raise BadInput(f"--out {out}: no such directory {out.parent}")
    if batch < 1:
        raise BadInput("--batch must be at least 1")

    t0 = time.time()
    import torch
    import onnx
    import onnxruntime as ort

    module = load_torchscript(ts)
    desc = ""
    if sidecar is not None:
        arch = sidecar.get("architecture") or {}
        desc = (f" (model {sidecar.get('model_id', '?')}, {arch.get('kind', '?')}, "
                f"encoding {sidecar.get('encoding_version', '?')})")
    say(f"TorchScript {ts}{desc}")
    say(f"torch {torch.__version__}, onnx {onnx.__version__}, onnxruntime {ort.__version__}, "
        f"opset {opset}, seed {seed}")

    rng = np.random.default_rng(seed)
    cases = [
        (f"{batch} random 0/1 positions", positions(rng, batch, "binary")),
        ("1 random 0/1 position", positions(rng, 1, "binary")),
        ("7 position-like inputs", positions(rng, 7, "positions")),
    ]
    refs = []
    for what, x in cases:
        refs.append(run_torchscript(module, x, what))
    extra = check_layout(refs[0], cases[0][1].shape[0], sidecar)
    for (what, x), y in zip(cases[1:], refs[1:]):
        if y.shape != (x.shape[0], refs[0].shape[1]):
            raise BadInput(f"the TorchScript file returns shape {list(y.shape)} on {what}")

    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    try:
        example = positions(np.random.default_rng(seed + 1), 4, "binary")
        export(module, example, tmp, opset)
        annotate(tmp, sidecar, extra, ts)
        size = tmp.stat().st_size
        say(f"exported {size / 1e6:.2f} MB with the TorchScript-based exporter in "
            f"{time.time() - t0:.1f} s; checking it under onnxruntime")

        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        try:
            session = ort.InferenceSession(str(tmp), opts, providers=["CPUExecutionProvider"])
        except Exception as e:
            raise CheckFailed(f"onnxruntime cannot load the exported file: {e}")
        worst = {name: 0.0 for name, _, _ in groups(extra)}
        scale = {name: 0.0 for name, _, _ in groups(extra)}
        for (what, x), ref in zip(cases, refs):
            try:
                [got] = session.run(["outputs"], {"positions": x})
            except Exception as e:
                raise CheckFailed(f"onnxruntime fails on {what}: {brief(e)}")
            if got.shape != ref.shape:
                raise CheckFailed(f"onnxruntime returns shape {list(got.shape)} on {what}, "
                                  f"TorchScript {list(ref.shape)}")
            parts = []
            for name, a, b in groups(extra):
                d = float(np.max(np.abs(got[:, a:b].astype(np.float64) - ref[:, a:b])))
                if not np.isfinite(d):
                    d = float("inf")
                worst[name] = max(worst[name], d)
                scale[name] = max(scale[name], float(np.max(np.abs(ref[:, a:b]))))
                parts.append(f"{name} {fmt(d)}")
            print(f"  {what:<28} max |onnx - torchscript|: {', '.join(parts)}", flush=True)
        print("  largest |logit| seen:       " +
              ", ".join(f"{n} {scale[n]:.3g}" for n in scale), flush=True)
        bad = [n for n, d in worst.items() if not d <= tolerance]
        summary = ", ".join(f"{n} {fmt(d)}" for n, d in worst.items())
        if bad:
            rejected = out.with_name(out.name + ".rejected")
            os.replace(tmp, rejected)
            kept = f"; {out} was left as it was" if out.exists() else ""
            raise CheckFailed(f"MISMATCH: max |difference| {summary}; over the tolerance "
                              f"{tolerance:g} in {', '.join(bad)} (the new file is kept as "
                              f"{rejected}{kept})")
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    say(f"OK: max |difference| {summary} (tolerance {tolerance:g} absolute); wrote {out}")
    return out, worst


# ---------------------------------------------------------------------------------------------
# Self-test: stand-ins for both kinds, built like draughts-nn's nets and traced with constant
# weights (as tch's CModule::create_by_tracing does), then converted and checked.
# ---------------------------------------------------------------------------------------------
def standin_modules(moves_left_resnet=False, moves_left_sparse=True, fixed_batch=None):
    import torch
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(7)

    def rand(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g) * scale).requires_grad_(False)

    def bn(c):
        return {"w": 1.0 + rand(c, scale=0.1), "b": rand(c, scale=0.1),
                "m": rand(c, scale=0.1), "v": 0.5 + torch.rand(c, generator=g)}

    def conv_bn(x, w, p, pad):
        x = F.conv2d(x, w, None, padding=pad)
        return F.batch_norm(x, p["m"], p["v"], p["w"], p["b"], training=False, eps=1e-5)

    class ResNet(torch.nn.Module):
        """input conv3x3+BN+ReLU, 2 residual blocks, policy conv1x1+BN+ReLU+linear, value
        conv1x1+BN+ReLU+linear+ReLU -> wdl (and moves left): draughts-nn's ResNet, small."""

        def __init__(self, c=16, pc=4, hidden=32, moves_left=False):
            super().__init__()
            # Plain attributes, not parameters: the trace turns them into constants.
            self.t = {
                "in_w": rand(c, 8, 3, 3, scale=0.2), "in_bn": bn(c),
                "blocks": [(rand(c, c, 3, 3, scale=0.1), bn(c), rand(c, c, 3, 3, scale=0.1), bn(c))
                           for _ in range(2)],
                "p_w": rand(pc, c, 1, 1, scale=0.3), "p_bn": bn(pc),
                "p_fc": (rand(POLICY_SIZE, pc * 100, scale=0.1), rand(POLICY_SIZE, scale=0.1)),
                "v_w": rand(2, c, 1, 1, scale=0.3), "v_bn": bn(2),
                "v_fc1": (rand(hidden, 200, scale=0.1), rand(hidden, scale=0.1)),
                "v_fc2": (rand(3, hidden, scale=0.3), rand(3, scale=0.1)),
                "ml": (rand(1, hidden, scale=0.3), rand(1)) if moves_left else None,
            }

        def forward(self, xs):
            t = self.t
            x = xs.reshape(fixed_batch or -1, 8, 10, 10)
            x = torch.relu(conv_bn(x, t["in_w"], t["in_bn"], 1))
            for w1, b1, w2, b2 in t["blocks"]:
                y = torch.relu(conv_bn(x, w1, b1, 1))
                x = torch.relu(conv_bn(y, w2, b2, 1) + x)
            p = torch.relu(conv_bn(x, t["p_w"], t["p_bn"], 0)).flatten(1)
            policy = F.linear(p, *t["p_fc"])
            h = torch.relu(conv_bn(x, t["v_w"], t["v_bn"], 0)).flatten(1)
            h = torch.relu(F.linear(h, *t["v_fc1"]))
            out = [policy, F.linear(h, *t["v_fc2"])]
            if t["ml"] is not None:
                out.append(F.linear(h, *t["ml"]))
            return torch.cat(out, 1)

    class Sparse(torch.nn.Module):
        """index_select gathers of both sides' 200 features, a shared Linear(200 -> A), clamp,
        clamped hidden layers -> wdl (and moves left), policy from the accumulator."""

        def __init__(self, a=32, hidden=(16, 16), moves_left=True):
            super().__init__()
            us = torch.randperm(INPUT_SIZE // 2, generator=g)[:200].sort().values
            them = us[torch.randperm(200, generator=g)]
            layers, n = [], 2 * a
            for h in hidden:
                layers.append((rand(h, n, scale=0.3), rand(h, scale=0.1)))
                n = h
            self.t = {
                "us": us, "them": them,
                "ft": (rand(a, 200, scale=0.2), rand(a, scale=0.1) + 0.3),
                "hidden": layers,
                "wdl": (rand(3, n, scale=0.5), rand(3, scale=0.1)),
                "ml": (rand(1, n, scale=0.5), rand(1)) if moves_left else None,
                "policy": (rand(POLICY_SIZE, 2 * a, scale=0.3), rand(POLICY_SIZE, scale=0.1)),
            }

        def forward(self, xs):
            t = self.t
            x = xs.reshape(fixed_batch or -1, INPUT_SIZE)
            us = x.index_select(1, t["us"])
            them = x.index_select(1, t["them"])
            h0 = torch.cat([F.linear(us, *t["ft"]), F.linear(them, *t["ft"])], 1).clamp(0.0, 1.0)
            h = h0
            for w, b in t["hidden"]:
                h = F.linear(h, w, b).clamp(0.0, 1.0)
            out = [F.linear(h0, *t["policy"]), F.linear(h, *t["wdl"])]
            if t["ml"] is not None:
                out.append(F.linear(h, *t["ml"]))
            return torch.cat(out, 1)

    return {"resnet": (ResNet(moves_left=moves_left_resnet), moves_left_resnet),
            "sparse": (Sparse(moves_left=moves_left_sparse), moves_left_sparse)}


def write_standin(directory, kind, module, moves_left, model_id="x-s00000001"):
    import torch

    directory.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(module, torch.rand(4, INPUT_SIZE), check_trace=False)
    traced.save(str(directory / f"{model_id}{TS_SUFFIX}"))
    sidecar = {"format": 1, "model_id": model_id, "name": model_id.split("-s")[0],
               "architecture": {"kind": kind, "moves_left_head": moves_left},
               "encoding_version": 1}
    (directory / f"{model_id}.json").write_text(json.dumps(sidecar, indent=2) + "\n")
    (directory / "README.md").write_text(f"# {model_id}\n\nA stand-in {kind} net of the self-test.\n")


def expect_bad(what, fn, needle):
    try:
        fn()
    except BadInput as e:
        if needle not in str(e):
            raise CheckFailed(f"self-test: {what}: rejected, but with {e!r} (wanted {needle!r})")
        print(f"  rejected as it should: {what}: {e}", flush=True)
        return
    raise CheckFailed(f"self-test: {what} was not rejected")


def self_test(args):
    import torch

    torch.manual_seed(0)
    root = Path(tempfile.mkdtemp(prefix="draughts-onnx-selftest."))
    try:
        results = []
        for kind, (module, ml) in standin_modules().items():
            d = root / kind
            write_standin(d, kind, module, ml)
            say(f"self-test: {kind} stand-in ({'with' if ml else 'no'} moves-left head), traced "
                f"at batch 4 into {d}")
            out, worst = convert(d, opset=args.opset, batch=args.batch, seed=args.seed,
                                 tolerance=args.tolerance)
            if not out.is_file():
                raise CheckFailed(f"self-test: {out} was not written")
            left = [p.name for p in d.iterdir() if ".tmp-" in p.name]
            if left:
                raise CheckFailed(f"self-test: temporary files left behind: {left}")
            results.append((kind, worst))

        say("self-test: bad input")
        expect_bad("no such directory", lambda: convert(root / "nope"), "no such directory")
        empty = root / "empty"
        empty.mkdir()
        expect_bad("no TorchScript file", lambda: convert(empty), "no TorchScript file")
        junk = root / "junk"
        junk.mkdir()
        (junk / f"x-s00000001{TS_SUFFIX}").write_bytes(b"not a zip archive\n")
        expect_bad("not a zip archive", lambda: convert(junk), "not a TorchScript file")
        (junk / f"x-s00000001{TS_SUFFIX}").unlink()
        with zipfile.ZipFile(junk / f"x-s00000001{TS_SUFFIX}", "w") as z:
            z.writestr("archive/data.pkl", b"junk")
        expect_bad("a zip archive that is not TorchScript", lambda: convert(junk),
                   "not a TorchScript file")
        two = root / "two"
        shutil.copytree(root / "sparse", two)
        shutil.copy(two / f"x-s00000001{TS_SUFFIX}", two / f"x-s00000002{TS_SUFFIX}")
        (two / "x-s00000001.json").unlink()
        expect_bad("two TorchScript files, no sidecar to choose", lambda: convert(two),
                   "--torchscript FILE")
        shutil.copy(root / "sparse" / "x-s00000001.json", two)
        convert(two, seed=args.seed, tolerance=args.tolerance)  # the sidecar picks one
        say("self-test: picked the TorchScript file the sidecar names among two")
        fixed = root / "fixed"
        module, ml = standin_modules(fixed_batch=4)["resnet"]
        write_standin(fixed, "resnet", module, ml)
        expect_bad("a trace with its batch size fixed", lambda: convert(fixed), "batch")
        mislabeled = root / "mislabeled"
        shutil.copytree(root / "resnet", mislabeled)
        side = mislabeled / "x-s00000001.json"
        data = json.loads(side.read_text())
        data["architecture"]["moves_left_head"] = True
        side.write_text(json.dumps(data))
        expect_bad("sidecar and output width disagree", lambda: convert(mislabeled),
                   "moves_left_head")

        say("self-test: OK: " + "; ".join(
            f"{k}: " + ", ".join(f"{n} {fmt(d)}" for n, d in w.items()) for k, w in results)
            + f" (tolerance {args.tolerance:g})")
    finally:
        if args.keep:
            say(f"self-test: kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


# ---------------------------------------------------------------------------------------------
# Install step: stub libraries for the CUDA libraries the PyPI torch wheel links against
# ---------------------------------------------------------------------------------------------
STUB_LIST = "DRAUGHTS_CUDA_STUBS.txt"


def make_cuda_stubs(_args):
    """PyPI's Linux torch wheel is a CUDA build: torch/_C loads libtorch_cuda.so, which links
    cuBLAS, cuDNN, cuFFT, cuSPARSE(Lt), cuRAND, cuFile, NCCL and NVSHMEM (about 2 GB of wheels)
    even when nothing runs on a GPU. For a CPU-only environment this builds, for each of those
    libraries that cannot be found, a small stand-in with the same file name, the same symbol
    versions and every symbol torch needs from it (each one aborts with a message if called), into
    torch/lib (on torch's library path). Nothing on the CPU path calls them; cudart and cupti are
    the real ones (tiny wheels) since libtorch_cpu.so uses them. Needs cc, readelf and ldd."""
    import importlib.util

    spec = importlib.util.find_spec("torch")  # finds torch without importing it
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{NAME}: torch is not installed in this environment")
    torch_dir = Path(list(spec.submodule_search_locations)[0]).resolve()
    lib = torch_dir / "lib"
    for tool in ("cc", "readelf", "ldd"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{NAME}: {tool} is needed to build the CUDA stubs")
    exts = sorted(torch_dir.glob("_C.*.so"))
    if len(exts) != 1:
        raise SystemExit(f"{NAME}: expected one torch/_C.*.so, found {len(exts)}")

    def out(*cmd):
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

    # Old stubs would hide what is missing: remove them first.
    listed = lib / STUB_LIST
    if listed.exists():
        for name in listed.read_text().split():
            (lib / name).unlink(missing_ok=True)
        listed.unlink()

    resolved, missing = [str(exts[0])], []
    for line in out("ldd", str(exts[0])).splitlines():
        m = re.match(r"\s*(\S+) => not found", line)
        if m:
            if m.group(1) not in missing:
                missing.append(m.group(1))
            continue
        m = re.match(r"\s*\S+ => (/.*?) \(0x", line)
        if m:
            resolved.append(m.group(1))
    if not missing:
        print(f"{NAME}: torch finds all its libraries; no stubs needed")
        return 0

    site = str(torch_dir.parent)
    defined, needed, version_file = set(), {}, {}
    for obj in resolved:
        ours = os.path.realpath(obj).startswith(site + os.sep)
        for line in out("readelf", "-W", "--dyn-syms", obj).splitlines():
            f = line.split()
            if len(f) < 8 or not re.fullmatch(r"\d+:", f[0]):
                continue
            typ, bind, ndx, name = f[3], f[4], f[6], f[7]
            base, _, ver = name.partition("@")
            ver = ver.lstrip("@")
            if ndx != "UND":
                defined.add(base)
            elif ours and bind != "WEAK" and base:
                needed[(base, ver)] = typ
        if ours:
            current = None
            for line in out("readelf", "-W", "-V", obj).splitlines():
                m = re.search(r"File: (\S+)", line)
                if m:
                    current = m.group(1)
                    continue
                m = re.search(r"Name: (\S+)\s+Flags", line)
                if m and current:
                    version_file[m.group(1)] = current
    needed = {k: t for k, t in needed.items() if k[0] not in defined}
    unversioned = sorted((b, t) for (b, v), t in needed.items() if not v)
    made = []
    with tempfile.TemporaryDirectory() as tmp:
        for soname in missing:
            versions = sorted(v for v, f in version_file.items() if f == soname)
            syms = sorted((b, v, t) for (b, v), t in needed.items() if v in versions)
            c = ["#include <stdio.h>", "#include <stdlib.h>",
                 "static void fail(const char *name) {",
                 f'  fprintf(stderr, "{NAME}: %s of {soname} called: this torch environment '
                 'is CPU only (CUDA libraries replaced by stubs, see scripts/onnx)\\n", name);',
                 "  abort();", "}"]
            for i, (b, t) in enumerate([(b, t) for b, _, t in syms] + unversioned):
                if t == "OBJECT":
                    c.append(f'char s{i}[256] __asm__("{b}") = {{0}};')
                elif t == "TLS":
                    c.append(f'__thread char s{i}[64] __asm__("{b}");')
                else:
                    c.append(f'void s{i}(void) __asm__("{b}");')
                    c.append(f'void s{i}(void) {{ fail("{b}"); }}')
            src, vmap = Path(tmp, soname + ".c"), Path(tmp, soname + ".map")
            src.write_text("\n".join(c) + "\n")
            nodes = []
            for v in versions:
                names = " ".join(f"{b};" for b, vv, _ in syms if vv == v)
                nodes.append(f"{v} {{ {'global: ' + names if names else ''} }};")
            vmap.write_text("\n".join(nodes) + "\n")
            cmd = ["cc", "-shared", "-fPIC", "-O1", "-o", str(Path(tmp, soname)), str(src),
                   f"-Wl,-soname,{soname}"]
            if versions:
                cmd.append(f"-Wl,--version-script={vmap}")
            subprocess.run(cmd, check=True)
            shutil.move(str(Path(tmp, soname)), str(lib / soname))
            made.append(soname)
            print(f"{NAME}: stub {soname}: {len(syms) + len(unversioned)} symbols"
                  + (f", versions {', '.join(versions)}" if versions else ""))
    listed.write_text("\n".join(made) + "\n")
    left = [l for l in out("ldd", str(exts[0])).splitlines() if "not found" in l]
    if left:
        raise SystemExit(f"{NAME}: still missing after the stubs: {left}")
    return 0


# ---------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(
        prog="scripts/onnx", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?", help="the model directory (holds NAME-sSTEP.torchscript.pt)")
    ap.add_argument("--torchscript", metavar="FILE",
                    help="the TorchScript file, when the directory holds more than one")
    ap.add_argument("--out", metavar="FILE", help="the ONNX file (default: NAME-sSTEP.onnx next to it)")
    ap.add_argument("--opset", type=int, default=DEFAULT_OPSET, metavar="N",
                    help=f"ONNX opset (default {DEFAULT_OPSET})")
    ap.add_argument("--batch", type=int, default=DEFAULT_BATCH, metavar="N",
                    help=f"positions in the main check batch (default {DEFAULT_BATCH})")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="N",
                    help=f"seed of the check inputs (default {DEFAULT_SEED})")
    ap.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE, metavar="X",
                    help=f"largest absolute difference allowed on any output (default {DEFAULT_TOLERANCE:g})")
    ap.add_argument("--self-test", action="store_true",
                    help="convert and check two stand-in nets (ResNet, sparse), and bad input")
    ap.add_argument("--keep", action="store_true", help="with --self-test: keep its directory")
    ap.add_argument("--verbose", action="store_true", help="print whole tracebacks when the export fails")
    ap.add_argument("--make-cuda-stubs", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    global VERBOSE
    VERBOSE = args.verbose

    if args.make_cuda_stubs:
        return make_cuda_stubs(args)
    try:
        if args.self_test:
            if args.dir or args.torchscript or args.out:
                raise BadInput("--self-test takes no directory, --torchscript or --out")
            return self_test(args)
        if args.dir is None and args.torchscript is None:
            ap.error("give the model directory (or --torchscript FILE)")
        if args.opset < 7:
            raise BadInput("--opset must be at least 7")
        convert(args.dir, args.torchscript, args.out, args.opset, args.batch, args.seed,
                args.tolerance)
        return 0
    except BadInput as e:
        print(f"{NAME}: error: {e}", file=sys.stderr)
        return 2
    except CheckFailed as e:
        print(f"{NAME}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
