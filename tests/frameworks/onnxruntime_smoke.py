#!/usr/bin/env python3
"""ONNX Runtime's ROCm build (onnxruntime-rocm) on the emulated GPU.

  rocjitsu --config configs/gfx942_cdna3_kmd.json -- python3 tests/frameworks/onnxruntime_smoke.py
  rocjitsu --config configs/gfx950_cdna4_kmd.json -- python3 tests/frameworks/onnxruntime_smoke.py --expect-no-kernels

Two models built with onnx's own helpers (an MLP: MatMul, Add, Relu, Gemm,
Softmax; a small CNN: Conv, BatchNormalization, Relu, MaxPool, Conv,
GlobalAveragePool, Flatten, Gemm), each run on the ROCm execution provider
with CPU fallback disabled (so every node runs on the GPU, or the session
fails) and compared with the CPU execution provider's output.

--expect-no-kernels: the GPU is one onnxruntime-rocm carries no kernels for
(gfx950: its fat binary holds gfx908/90a/942/1030/1100/1101/1200/1201
code objects). Each model then runs in a child process with HIP's error
log on (AMD_LOG_LEVEL=1), which must report the missing code objects
("No compatible code objects found for: gfx950"). HIP 7.2.4 then crashes
in hipLaunchKernel instead of returning hipErrorNoBinaryForGpu (ROCm's own
bug, rocm-systems issue 2484: the same happens with any HIP program built
for another GPU): if the child dies, the faulting frame must be in
libamdhip64, never in the emulator, and the emulator must report no fault.

MIOpen: Debian's build ships none of MIOpen's assembly kernels (its
0002-remove-assembly-code-integration patch), yet its implicit-GEMM
solvers for gfx942 ask for them and fail the convolution search; the CNN
runs with MIOPEN_DEBUG_GCN_ASM_KERNELS=0 (MIOpen's own switch for a
system without them), set by this script.
"""

import argparse
import os
import subprocess
import sys
import time
import traceback

os.environ.setdefault("MIOPEN_DEBUG_GCN_ASM_KERNELS", "0")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
import onnxruntime as ort  # noqa: E402

RNG = np.random.default_rng(20261205)


def init(name, shape, scale=0.2):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def mlp():
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h1"]),
        helper.make_node("Add", ["h1", "b1"], ["h1b"]),
        helper.make_node("Relu", ["h1b"], ["a1"]),
        helper.make_node("Gemm", ["a1", "w2", "b2"], ["h2"], transB=1),
        helper.make_node("Relu", ["h2"], ["a2"]),
        helper.make_node("MatMul", ["a2", "w3"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["y"], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 10])],
        [init("w1", (64, 128)), init("b1", (128, )), init("w2", (96, 128)), init("b2", (96, )), init("w3", (96, 10))])
    x = RNG.standard_normal((32, 64)).astype(np.float32)
    return graph, {"x": x}


def cnn():
    nodes = [
        helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["n1"], epsilon=1e-5),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2w", "c2b"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fcw", "fcb"], ["y"], transB=1),
    ]
    var = numpy_helper.from_array((RNG.random(8) + 0.5).astype(np.float32), "bn_v")
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])], [
            init("c1w", (8, 3, 3, 3)),
            init("c1b", (8, )),
            init("bn_s", (8, ), 1.0),
            init("bn_b", (8, )),
            init("bn_m", (8, )), var,
            init("c2w", (16, 8, 3, 3)),
            init("c2b", (16, )),
            init("fcw", (5, 16)),
            init("fcb", (5, ))
        ])
    x = RNG.standard_normal((2, 3, 16, 16)).astype(np.float32)
    return graph, {"x": x}


MODELS = {"mlp": mlp, "cnn": cnn}


def session(model_bytes, providers, no_fallback):
    so = ort.SessionOptions()
    if no_fallback:
        so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    return ort.InferenceSession(model_bytes, so, providers=providers)


def model_bytes(build):
    graph, feeds = build()
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString(), feeds


def run_model(name, build):
    data, feeds = model_bytes(build)
    want = session(data, ["CPUExecutionProvider"], False).run(None, feeds)[0]
    sess = session(data, ["ROCMExecutionProvider"], True)
    if sess.get_providers()[0] != "ROCMExecutionProvider":
        raise AssertionError(f"{name}: providers {sess.get_providers()}")
    got = sess.run(None, feeds)[0]
    if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        raise AssertionError(f"{name}: max difference from the CPU provider {np.abs(got - want).max()}")


# What the ROCm libraries print when they have nothing for the GPU: HIP for
# a fat binary without its code object, rocBLAS for a missing Tensile library.
NO_KERNELS = ("No compatible code objects found for: gfx950", "for GPU arch : gfx950")


def refused_without_kernels(name):
    """Runs the model on the ROCm provider in a child process and checks how
    it fails (see --expect-no-kernels)."""
    env = dict(os.environ, AMD_LOG_LEVEL="1")
    p = subprocess.run([sys.executable, "-X", "faulthandler", __file__, "--child", name], env=env,
                       capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    if p.returncode == 0:
        raise AssertionError(f"{name}: ran on a GPU it has no kernels for:\n{out[-2000:]}")
    said = [m for m in NO_KERNELS if m in out]
    if not said:
        raise AssertionError(f"{name}: no library said it lacks gfx950 kernels:\n{out[-3000:]}")
    if "rocjitsu: GPU node-" in out:
        raise AssertionError(f"{name}: the emulator reported a GPU fault:\n{out[-3000:]}")
    how = f"exit status {p.returncode}"
    if p.returncode < 0:
        sig = -p.returncode
        how = f"signal {sig}"
        if sig != 6:
            # faulthandler's C stack: the first frame after the signal
            # handler (python, then libc) is where the fault happened.
            frames = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("Binary file")]
            at = next((f for f in frames[2:] if "libc.so" not in f), "")
            if "libamdhip64" not in at:
                raise AssertionError(f"{name}: signal {sig} outside HIP ({at}):\n{out[-3000:]}")
            how += " in libamdhip64 (HIP's own crash after its message)"
    print(f"  {name}: refused: {said[0]!r}; {how}")


def child(name):
    data, feeds = model_bytes(MODELS[name])
    session(data, ["ROCMExecutionProvider"], True).run(None, feeds)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--expect-no-kernels", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("-k", dest="filter", default="")
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return 0
    print(f"onnxruntime {ort.__version__}, providers {ort.get_available_providers()}")
    passed = failed = 0
    for name, build in MODELS.items():
        if args.filter not in name:
            continue
        t0 = time.monotonic()
        try:
            if args.expect_no_kernels:
                refused_without_kernels(name)
            else:
                run_model(name, build)
        except Exception as e:  # noqa: BLE001 (every failure is reported and counted)
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            traceback.print_exc(file=sys.stderr)
        else:
            passed += 1
            print(f"PASS {name} ({time.monotonic() - t0:.1f} s)")
        sys.stdout.flush()
    print(f"onnxruntime: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
