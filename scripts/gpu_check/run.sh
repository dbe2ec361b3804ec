#!/usr/bin/env bash
# Runs, on a machine with a real GPU, what scripts/gpu_check/prepare.sh
# built into .gpu/, and writes the results under $OUT (or ./gpu_check_out
# when OUT is unset, e.g. a dry run on the CPU adapter here):
#
#   gpu.txt                  the GPU and driver (nvidia-smi), the commit
#   bench.json               bench --json, every workload, Auto's choices
#                            (the reference sampler plan and the per-node
#                            skin pass on a GPU)
#   bench_per_instance.json  skin_chain and blend_chain with the per-instance
#                            skin pass (the CPU adapters' choice), and the
#                            staged one, for comparison
#   bench_plans.json         the crowd, morph and long_keys workloads with the
#                            CPU-adapter and clip-blocks sampler plans
#   sample.txt               the `sample` demo (built-in animation): its
#                            max_abs_err against the CPU twin
#   tests.log                the GPU paths' tests on Vulkan, an adapter required
#   gl.txt                   the demo on WGPU_BACKEND=gl (EGL), which failed
#                            on such a machine before
#
# Every step runs under its own time limit and a failing step does not stop
# the others; the exit status is that of the tests.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-$PWD/gpu_check_out}
mkdir -p "$out"
bin=.gpu/bin
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
if [ ! -d "$bin" ]; then
  tar -C .gpu -xJf .gpu/bin.tar.xz 2>/dev/null \
    || python3 -c 'import lzma, tarfile; tarfile.open(fileobj=lzma.open(".gpu/bin.tar.xz")).extractall(".gpu")'
fi

# On the device machine (bare): the loaders, and NVIDIA's driver files.
if command -v nvidia-smi >/dev/null && ! ldconfig -p | grep -q libvulkan.so.1; then
  for f in .gpu/debs/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi

{
  echo "commit $(tr -d '\n' < .gpu/commit 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || echo "no nvidia-smi"
} > "$out/gpu.txt"

WGPU_BACKEND=vulkan timeout 150 "$bin/bench" --json > "$out/bench.json" 2> "$out/bench.err"
echo "bench rc=$?" >> "$out/gpu.txt"
cat "$out/bench.err" >> "$out/gpu.txt"
# Labels each JSON line of a forced run with what was forced.
label() { sed "s/^{/{\"forced\": \"$1\", /"; }
for s in per-instance staged; do
  { WGPU_BACKEND=vulkan timeout 60 "$bin/bench" --json --only skin_chain,blend --skin-strategy "$s" \
    2>> "$out/bench.err" | label "skin $s"; } >> "$out/bench_per_instance.json"
done
# The tuned sampler plans, which Auto keeps to the CPU adapters until a GPU
# has measured them.
for p in grouped clip-blocks; do
  { WGPU_BACKEND=vulkan timeout 60 "$bin/bench" --json --only crowd,morph,long --plan "$p" \
    2>> "$out/bench.err" | label "plan $p"; } >> "$out/bench_plans.json"
done
rm -f "$out/bench.err"

WGPU_BACKEND=vulkan timeout 60 "$bin/sample" > "$out/sample.txt" 2>&1
echo "sample rc=$?" >> "$out/sample.txt"
grep -E "max_abs_err|rc=" "$out/sample.txt" >> "$out/gpu.txt"

rc=0
for t in "$bin"/test_*; do
  echo "== $(basename "$t")" >> "$out/tests.log"
  if ! WGPU_BACKEND=vulkan KEYFRAME_GPU_REQUIRE_ADAPTER=1 timeout 120 "$t" --test-threads 4 >> "$out/tests.log" 2>&1; then
    echo "FAILED: $(basename "$t")" >> "$out/tests.log"
    rc=1
  fi
done
grep -E "^test result|^FAILED|SKIP" "$out/tests.log" >> "$out/gpu.txt"

WGPU_BACKEND=gl timeout 60 "$bin/sample" > "$out/gl.txt" 2>&1
echo "gl rc=$?" >> "$out/gl.txt"
grep -E "max_abs_err|rc=" "$out/gl.txt" | sed 's/^/gl: /' >> "$out/gpu.txt"
exit $rc
