#!/usr/bin/env bash
# Puts into .carry/rapids/ (git-ignored) what scripts/gpu-preload-rapids.sh needs on the GPU
# machine, which has no network: RAPIDS's own RMM Python package (the wheels rmm-cu13 and
# librmm-cu13, default 26.10.0, CPython 3.12, manylinux x86_64) with every Requires-Dist
# dependency of theirs, followed recursively ('extra' lines skipped), that the GPU machine's
# Python (/opt/torch/.venv) does not already have (ON_GPU below, from the device notes'
# KINDS.md package list), one version of each; and RMM's own Python tests
# (python/rmm/rmm/tests) of the matching release from a git mirror of rapidsai/rmm, in
# .carry/rapids/rmm-tests/. Run it here, with network, from anywhere in the checkout:
#
#   scripts/carry-rapids-wheels.sh <rmm-git-dir> [TAG]
#
# <rmm-git-dir>: a rapidsai/rmm mirror's git directory (e.g. /work/.mirror/rapidsai+rmm/repo).
# TAG: which tag's tests to take; default v<major>.<minor>.00 of the wheels' version if the
# mirror has it, else the newest tag that sorts at or before it (sort -V). The tag used is
# written to .carry/rapids/rmm-tests/TAG and MANIFEST.txt.
# env: RMM_VERSION (default 26.10.0); PIP_PYTHON (the Python whose pip downloads: default a
# python3.12 if one runs, else python3).
# librmm-cu13 links the CUDA runtime statically (no libcudart or nvidia-* wheel is needed);
# cuda-bindings, numpy, pytest, numba-cuda, cuda-core (RMM's test needs) are on the machine.
# Last lines: MANIFEST.txt (what was kept, with sizes) and the folder's size.
set -euo pipefail
cd "$(dirname "$0")/.."
git_dir="${1:?usage: carry-rapids-wheels.sh <rmm-git-dir> [TAG]}"
tag="${2:-}"
version="${RMM_VERSION:-26.10.0}"
out=.carry/rapids
dl="$(mktemp -d /tmp/rapids-wheels-XXXXXX)"
trap 'rm -rf "$dl"' EXIT

if [ -z "${PIP_PYTHON:-}" ]; then
  PIP_PYTHON=python3
  python3.12 -c 'import pip' 2>/dev/null && PIP_PYTHON=python3.12
fi
echo "carry-rapids-wheels: rmm $version, downloading with $("$PIP_PYTHON" --version) ($PIP_PYTHON)"

# The GPU image's Python packages (KINDS.md, "Python packages already there"; names as pip
# normalizes them). Carry one of these only for another version.
ON_GPU="absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs
botorch build certifi charset-normalizer chex click cloudpickle cmake colorama contourpy
coverage cuda-bindings cuda-core cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax
e3nn einops equinox etils execnet filelock flatbuffers flax fonttools formulaic frozenlist fsspec
gpytorch grpcio h11 h5py hf-xet httpcore httpx huggingface-hub humanize hypothesis idna imageio
iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib
kiwisolver lazy-loader lightning lightning-utilities linear-operator lineax llvmlite lxml markdown
markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict
multipledispatch mypy-extensions nanobind narwhals networkx ninja numba numba-cuda numpy numpyro
nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13
nvidia-cufft nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13
nvidia-ml-py nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir
onnxruntime onnxscript opencv-python-headless optax opt-einsum opt-einsum-fx optimistix
orbax-checkpoint packaging pandas pathspec patsy peft pillow pip pluggy portalocker
prometheus-client propcache protobuf psutil pyarrow pybind11 py-cpuinfo pygments pyparsing
pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock pytest-timeout
pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu safetensors
scikit-build-core scikit-image scikit-learn scipy seaborn sentencepiece sentence-transformers
setuptools shellingham simplejson six sortedcontainers statsmodels sympy tabulate tensorboard
tensorboard-data-server tensorstore threadpoolctl tifffile tiktoken timm tokenizers toolz torch
torchaudio torchdiffeq torch-geometric torchmetrics torchvision tqdm transformers treescope
triton typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig werkzeug wheel wrapt
xarray xxhash yarl zipp"

rm -rf "$out" && mkdir -p "$out"

# Breadth-first over Requires-Dist: one `pip download --no-deps` per package not on the
# machine; markers evaluated for CPython 3.12 on Linux x86_64 with no extra.
ON_GPU="$ON_GPU" DL="$dl" OUT="$out" VERSION="$version" "$PIP_PYTHON" - <<'PY'
import glob, os, re, subprocess, sys, zipfile
try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name

on_gpu = {canonicalize_name(n) for n in os.environ["ON_GPU"].split()}
dl, out, version = os.environ["DL"], os.environ["OUT"], os.environ["VERSION"]
env = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
       "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
       "implementation_name": "cpython", "platform_python_implementation": "CPython",
       "extra": ""}
# pip matches manylinux_2_N exactly: name the ones wheels use (glibc 2.39 on the machine).
platforms = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64",
             "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64",
             "manylinux_2_31_x86_64", "manylinux_2_34_x86_64", "manylinux_2_35_x86_64",
             "linux_x86_64"]

def download(req):
    before = set(os.listdir(dl))
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
           "--no-deps", "--only-binary=:all:", "--python-version", "3.12",
           "--implementation", "cp", "--abi", "cp312", "-d", dl]
    for p in platforms:
        cmd += ["--platform", p]
    subprocess.run(cmd + [req], check=True)
    new = set(os.listdir(dl)) - before
    if len(new) != 1:
        sys.exit(f"carry-rapids-wheels: pip download {req} gave {sorted(new)}")
    return os.path.join(dl, new.pop())

queue = [f"rmm-cu13=={version}", f"librmm-cu13=={version}"]
kept, dropped, wheel_of = [], [], {}
while queue:
    req = Requirement(queue.pop(0))
    name = canonicalize_name(req.name)
    if req.marker is not None and not req.marker.evaluate(env):
        continue
    if name in on_gpu:
        dropped.append(f"{req} (on the GPU machine)")
        continue
    if name in wheel_of:  # one version of each: the first one pip chose must satisfy all
        v = wheel_of[name][1]
        if req.specifier and not req.specifier.contains(v, prereleases=True):
            sys.exit(f"carry-rapids-wheels: {name} {v} does not satisfy {req}")
        continue
    spec = f"{req.name}{req.specifier}"
    path = download(spec)
    v = os.path.basename(path).split("-")[1]
    wheel_of[name] = (path, v)
    kept.append(os.path.basename(path))
    with zipfile.ZipFile(path) as z:
        meta = next(n for n in z.namelist() if re.match(r"[^/]+\.dist-info/METADATA$", n))
        for line in z.read(meta).decode().splitlines():
            if line.startswith("Requires-Dist:"):
                dep = line.split(":", 1)[1].strip()
                if re.search(r"\bextra\s*==", dep):
                    continue
                queue.append(dep)
for path, _ in wheel_of.values():
    os.replace(path, os.path.join(out, os.path.basename(path)))
with open(os.path.join(out, "MANIFEST.txt"), "w") as f:
    f.write("kept:\n")
    for k in kept:
        f.write(f"  {k}  {os.path.getsize(os.path.join(out, k)) / 2**20:.1f} MiB\n")
    f.write("not carried:\n")
    for d in sorted(set(dropped)):
        f.write(f"  {d}\n")
PY

# RMM's own Python tests, from the tag that matches the wheels (or the newest before it).
want="v$(echo "$version" | cut -d. -f1-2).00"
if [ -z "$tag" ]; then
  if git --git-dir="$git_dir" rev-parse -q --verify "refs/tags/$want" >/dev/null; then
    tag="$want"
  else
    tag="$( (git --git-dir="$git_dir" tag --list 'v[0-9]*'; echo "$want") | sort -V |
      sed -n "/^$want\$/q;p" | tail -1)"
    echo "carry-rapids-wheels: no tag $want in $git_dir; taking the newest before it: $tag"
  fi
fi
git --git-dir="$git_dir" cat-file -e "$tag:python/rmm/rmm/tests/conftest.py" \
  || { echo "carry-rapids-wheels: $tag has no python/rmm/rmm/tests" >&2; exit 1; }
mkdir -p "$out/rmm-tests"
git --git-dir="$git_dir" archive "$tag" python/rmm/rmm/tests | tar -x -C "$out/rmm-tests" --strip-components=4
echo "$tag $(git --git-dir="$git_dir" rev-parse "$tag^{commit}")" >"$out/rmm-tests/TAG"

for need in rmm_cu13 librmm_cu13 rapids_logger; do
  ls "$out"/"$need"-*.whl >/dev/null 2>&1 || { echo "carry-rapids-wheels: no $need wheel in $out" >&2; exit 1; }
done
{
  echo "rmm $version for CPython 3.12, manylinux x86_64 ($(date -u +%Y-%m-%d)); tests: $(cat "$out/rmm-tests/TAG")"
  cat "$out/MANIFEST.txt"
} >"$out/MANIFEST.txt.new" && mv "$out/MANIFEST.txt.new" "$out/MANIFEST.txt"
cat "$out/MANIFEST.txt"
du -sh "$out"
