"""Run a Python script or module with TF32 matrix products on CUDA, optionally with tensors on the GPU by default.

    python bench/tf32.py [--default-cuda] SCRIPT.py [ARGS...]
    python bench/tf32.py [--default-cuda] -m MODULE [ARGS...]

The multilingual benchmark (bench/multilingual.py) trains the package and the independent loop on one GPU. Both must
do their arithmetic the same way, so both run under this wrapper: float32 weights, matrix products in TF32
(`torch.set_float32_matmul_precision("high")`), no autocast. `--default-cuda` makes CUDA the default device, which
runs `bench/reference_loop.py` on the GPU without changing a line of it (it creates every tensor and module without
naming a device). The wrapper imports nothing from annotated_transformer.
"""
import runpy
import sys

import torch


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--default-cuda"]:
        args = args[1:]
        torch.set_default_device("cuda")
    if not args:
        raise SystemExit(__doc__.split("\n\n")[1])
    torch.set_float32_matmul_precision("high")  # TF32 for float32 matrix products on CUDA (no effect on a CPU)
    torch.backends.cudnn.allow_tf32 = True
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
