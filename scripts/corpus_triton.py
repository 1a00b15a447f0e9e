"""Compiles the Triton kernels of corpus sources for one target (run by
scripts/corpus.py inside the Triton venv).

Each source file defines `CORPUS`, a list of dicts:
  name        output name (unique within the file)
  fn          the @triton.jit function
  signature   {argument: Triton type string}, constexpr arguments as "constexpr"
  constexprs  {argument: value}
  options     optional compile options (num_warps, num_stages, ...)
  targets     optional tuple of targets the entry is built for (default: all)
  attrs       optional argument attributes; by default every pointer and integer
              argument is marked divisible by 16, as Triton's launcher specialises
              aligned tensors and sizes (pass {} for the unspecialised code)

Usage: corpus_triton.py TARGET OUTDIR SOURCE.py...
Writes OUTDIR/<source stem>-<name>.hsaco, with the launch facts the code
object does not carry (Triton's LDS is dynamic: `shared` bytes must be passed
at launch) in <source stem>-<name>.meta.json, and prints one JSON line per source:
{"source": PATH, "outputs": [NAME, ...]}.
"""

import importlib.util
import json
import pathlib
import sys
import warnings


def load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(f"corpus_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def default_attrs(signature: dict) -> dict:
    """tt.divisibility=16 on pointer and integer arguments (what runtime
    specialisation gives aligned buffers and sizes), so that memory accesses
    vectorise."""
    return {
        (i,): [["tt.divisibility", 16]]
        for i, ty in enumerate(signature.values())
        if ty.startswith("*") or ty in ("i32", "i64")
    }


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    target, outdir, sources = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3:]
    warnings.simplefilter("ignore")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    # RDNA (GFX10+) kernels run in 32-lane waves under Triton.
    gpu = GPUTarget("hip", target, 64 if target.startswith("gfx9") else 32)
    for src in map(pathlib.Path, sources):
        outputs = []
        for entry in load(src).CORPUS:
            if target not in entry.get("targets", (target,)):
                continue
            name = f"{src.stem}-{entry['name']}"
            try:
                kernel = triton.compile(
                    ASTSource(
                        fn=entry["fn"],
                        signature=entry["signature"],
                        constexprs=entry.get("constexprs", {}),
                        attrs=entry.get("attrs", default_attrs(entry["signature"])),
                    ),
                    target=gpu,
                    options=entry.get("options"),
                )
            except Exception as exc:  # report which entry failed, then stop
                print(f"corpus_triton: {src}: {entry['name']} for {target}: {exc}", file=sys.stderr)
                return 1
            meta = {"name": kernel.metadata.name, "shared": kernel.metadata.shared,
                    "num_warps": kernel.metadata.num_warps}
            (outdir / f"{name}.meta.json").write_text(json.dumps(meta))
            tmp = outdir / f"{name}.hsaco.tmp"
            tmp.write_bytes(kernel.asm["hsaco"])
            tmp.replace(outdir / f"{name}.hsaco")
            outputs.append(name)
        print(json.dumps({"source": str(src), "outputs": outputs}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
