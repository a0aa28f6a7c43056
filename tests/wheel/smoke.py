"""Smoke test of an installed zarrkit wheel: run with the Python of a fresh venv that holds the
wheel and NumPy and nothing else (scripts/check_wheel makes one), from any directory.

    python smoke.py --no-gpu [--cuda-built yes|no] [--cuda-hidden]
    python smoke.py --gpu          # on a GPU machine with CuPy installed (the wheel may be
                                   # installed with pip --target and found on PYTHONPATH)

It imports zarrkit, writes arrays with every codec library the wheel carries, reads them back
into NumPy, checks that those libraries were loaded from the wheel's own copies (zarrkit.libs)
and runs the `zarrkit` console script (--help, info, export). --no-gpu: this machine has no GPU,
so asking for one must fail with zarrkit's typed error, and no CUDA library may be loaded;
--cuda-built says whether the wheel has the CUDA kernels (the error says which case it is);
--cuda-hidden: the CUDA libraries were made unfindable first, which this checks too. --gpu:
reads into GPU memory with zarrkit.config.enable_gpu() and compares with the NumPy read.
Prints one line per check; exits non-zero on the first failure.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CODEC_LIBRARIES = ["blosc", "zstd", "lz4", "deflate", "zip", "curl", "pugixml"]


def ok(what: str) -> None:
    print(f"smoke: ok: {what}", flush=True)


def check(condition: bool, what: str) -> None:
    if not condition:
        print(f"smoke: FAILED: {what}", file=sys.stderr, flush=True)
        sys.exit(1)
    ok(what)


def mapped_libraries() -> list[str]:
    """The files mapped into this process (shared libraries and the extension)."""
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/"):
                paths.add(parts[5].strip())
    return sorted(paths)


def write_and_read(zarrkit, root: Path) -> dict[str, np.ndarray]:
    """Arrays through every codec library: v3 and v2, chunked unevenly, read back whole and
    in part."""
    rng = np.random.default_rng(0)
    data = {
        "f4": rng.standard_normal((60, 70)).astype("f4"),
        "i2": rng.integers(-1000, 1000, (60, 70)).astype("i2"),
    }
    cases = [
        ("v3_zstd", 3, "f4", None),  # zarr-python's default: zstd
        ("v3_blosc", 3, "i2", [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}]),
        ("v3_gzip", 3, "f4", [{"name": "gzip", "configuration": {"level": 3}}]),
        ("v2_blosc", 2, "f4", {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 1}),
        ("v2_zlib", 2, "i2", {"id": "zlib", "level": 1}),
        ("v2_lz4", 2, "i2", {"id": "lz4", "acceleration": 1}),
        ("v2_bz2", 2, "f4", {"id": "bz2", "level": 1}),
        ("v2_lzma", 2, "i2", {"id": "lzma", "preset": 1}),
    ]
    written = {}
    for name, zarr_format, key, compressors in cases:
        kwargs = {} if compressors is None else {"compressors": compressors}
        a = zarrkit.create_array(str(root / f"{name}.zarr"), shape=data[key].shape, chunks=(16, 25),
                                 dtype=key, zarr_format=zarr_format, **kwargs)
        a[...] = data[key]
        back = zarrkit.open_array(str(root / f"{name}.zarr"), mode="r")
        check(np.array_equal(back[...], data[key]) and np.array_equal(back[5:50:3, ::-7], data[key][5:50:3, ::-7]),
              f"{name}: written and read back with NumPy")
        written[name] = data[key]
    return written


def check_libraries_from_wheel(zarrkit) -> None:
    package = Path(zarrkit.__file__).resolve().parent
    grafted = package.parent / "zarrkit.libs"
    check(grafted.is_dir(), f"the wheel's libraries are installed at {grafted}")
    mapped = mapped_libraries()
    for name in CODEC_LIBRARIES:
        pattern = re.compile(rf"/lib{name}[-.][^/]*$")
        hits = [p for p in mapped if pattern.search(p)]
        inside = [p for p in hits if Path(p).parent == grafted]
        check(bool(inside) and len(inside) == len(hits),
              f"lib{name} is loaded from zarrkit.libs only ({', '.join(Path(p).name for p in hits) or 'not loaded'})")


def check_no_gpu(zarrkit, cuda_built: str | None, cuda_hidden: bool) -> None:
    if cuda_hidden:
        findable = []
        for name in ["libcuda.so.1", "libcuda.so", "libcudart.so", "libcudart.so.12", "libcudart.so.13"]:
            try:
                ctypes.CDLL(name)
                findable.append(name)
            except OSError:
                pass
        check(not findable, f"no CUDA library can be loaded here (found: {findable or 'none'})")
    check(not zarrkit.config.gpu_available(), "gpu_available() is False")
    try:
        with zarrkit.config.enable_gpu():
            pass
    except zarrkit.errors.UnsupportedError as e:
        message = str(e)
        print(f"smoke: enable_gpu() says: {message}")
        if cuda_built == "yes":
            check("no GPU can be used" in message, "the CUDA kernels are built in; the runtime found no usable GPU")
        elif cuda_built == "no":
            check("without the CUDA toolkit" in message, "the wheel has no CUDA kernels, as built")
    else:
        check(False, "enable_gpu() raised UnsupportedError without a GPU")
    cuda_mapped = [p for p in mapped_libraries() if re.search(r"/lib(cuda|cudart|nvcomp|cufile)[-.]", p)]
    check(not cuda_mapped, f"no CUDA library was loaded ({cuda_mapped or 'none'})")


def check_gpu(zarrkit, root: Path, written: dict[str, np.ndarray]) -> None:
    import cupy

    check(zarrkit.config.gpu_available(), "gpu_available() is True")
    for name, expected in written.items():
        a = zarrkit.open_array(str(root / f"{name}.zarr"), mode="r")
        with zarrkit.config.enable_gpu():
            x = a[...]
            part = a[5:50:3, ::-7]
        check(isinstance(x, cupy.ndarray) and np.array_equal(cupy.asnumpy(x), expected)
              and np.array_equal(cupy.asnumpy(part), expected[5:50:3, ::-7]),
              f"{name}: read into CuPy, equal to the NumPy read")


def check_cli(zarrkit, root: Path, written: dict[str, np.ndarray]) -> None:
    import _zarrkit_cli

    cli = shutil.which("zarrkit")
    check(cli is not None, f"the zarrkit console script is on PATH ({cli})")
    executable = _zarrkit_cli.executable()
    check(executable is not None and Path(executable).resolve() == Path(zarrkit.__file__).resolve().parent / "bin" / "zarrkit",
          f"it runs the executable of the installed package ({executable})")

    def run(*args: str) -> subprocess.CompletedProcess:
        proc = subprocess.run([cli, *args], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            print(proc.stdout, proc.stderr, file=sys.stderr)
        check(proc.returncode == 0, f"zarrkit {' '.join(args)} exits 0")
        return proc

    help_text = run("--help").stdout
    check(all(c in help_text for c in ["info", "export", "import", "cp"]), "zarrkit --help lists the commands")
    info = run("info", str(root / "v3_zstd.zarr")).stdout
    print(info.rstrip())
    check("60" in info and "70" in info and "zstd" in info, "zarrkit info shows the shape and the codec")
    check("blosc" in run("info", str(root / "v2_blosc.zarr")).stdout, "zarrkit info reads v2 (blosc)")
    out = root / "exported.npy"
    run("export", str(root / "v2_lzma.zarr"), str(out), "--select", "::2, 3:")
    check(np.array_equal(np.load(out), written["v2_lzma"][::2, 3:]), "zarrkit export wrote the selection as .npy")
    bad = subprocess.run([cli, "info", str(root / "absent.zarr")], capture_output=True, text=True, timeout=60)
    check(bad.returncode == 1 and bad.stderr.startswith("zarrkit: error: "), "zarrkit reports a missing array as one error line")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--no-gpu", action="store_true", help="this machine has no GPU")
    mode.add_argument("--gpu", action="store_true", help="read into GPU memory (needs CuPy and a GPU)")
    parser.add_argument("--cuda-built", choices=["yes", "no"], help="whether the wheel has the CUDA kernels")
    parser.add_argument("--cuda-hidden", action="store_true", help="the CUDA libraries were made unfindable")
    args = parser.parse_args()

    import zarrkit

    # A repaired wheel's install has zarrkit.libs beside the package; a source tree does not.
    package = Path(zarrkit.__file__).resolve().parent
    check((package.parent / "zarrkit.libs").is_dir() and not (package.parent.parent / "pyproject.toml").exists(),
          f"zarrkit is imported from an installed wheel ({package})")
    with tempfile.TemporaryDirectory(prefix="zarrkit-smoke-") as tmp:
        root = Path(tmp)
        written = write_and_read(zarrkit, root)
        check_libraries_from_wheel(zarrkit)
        if args.no_gpu:
            check_no_gpu(zarrkit, args.cuda_built, args.cuda_hidden)
        else:
            check_gpu(zarrkit, root, written)
        check_cli(zarrkit, root, written)
    print("smoke: all checks passed")


if __name__ == "__main__":
    main()
