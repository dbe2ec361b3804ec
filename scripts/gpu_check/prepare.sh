#!/usr/bin/env bash
# Builds, here, everything scripts/gpu_check/run.sh runs on a machine with a
# real GPU (issue 15, item 5), into .gpu/ (ignored by git): the bench and the
# `sample` demo, the test binaries of the GPU paths (release, stripped), and
# the Vulkan and EGL loaders as Debian packages, since that machine has no
# Rust toolchain, no package registry and, bare, no loader. Then run there,
# as one call of the device tool:
#
#   carry: [".gpu"]   command: bash scripts/gpu_check/run.sh   timeout_s: 420
#
# and copy what comes back (gpu.txt, bench.json, bench_per_instance.json,
# bench_plans.json, sample.txt, tests.log, gl.txt) into docs/PERFORMANCE.md's "On a GPU" section with the
# GPU's name and the commit (`.gpu/commit`).
#
#   scripts/gpu_check/prepare.sh   # a few minutes on 2 cores (the release
#                                  # builds, then xz)
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
out=$root/.gpu
rm -rf "$out"
mkdir -p "$out/bin" "$out/debs"
commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD || commit="$commit-dirty"
echo "$commit" > "$out/commit"

# The GPU paths' tests: the library's own (sampler plans, skin strategies,
# mixer, hostile instances: src/tests), crowd, readback, device limits, the
# render checks.
tests=(crowd animator readback_ring device_limits skin_render material_render)
cargo build --quiet --release --example bench --example sample
args=()
for t in "${tests[@]}"; do args+=(--test "$t"); done
cargo test --quiet --release --no-run --lib "${args[@]}" --message-format=json \
  | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m.get("profile", {}).get("test"):
        kind = m.get("target", {}).get("kind", [])
        if "test" in kind:
            print(m["target"]["name"], m["executable"])
        elif "lib" in kind:
            print("lib", m["executable"])
' | while read -r name exe; do
    cp "$exe" "$out/bin/test_$name"
done
found=$(find "$out/bin" -name 'test_*' | wc -l)
if [ "$found" -ne $(( ${#tests[@]} + 1 )) ]; then
  echo "gpu_check: built $found of the $(( ${#tests[@]} + 1 )) test binaries (lib ${tests[*]})" >&2
  exit 1
fi
cp target/release/examples/bench target/release/examples/sample "$out/bin/"
strip "$out"/bin/*

# The loaders, as the device tool's README says (amd64 packages, unpacked
# there with dpkg -x).
lists=/tmp/gpu_check_apt
mkdir -p "$lists/partial"
o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$lists"
# shellcheck disable=SC2086
apt-get $o update >/dev/null
# shellcheck disable=SC2086
(cd "$out/debs" && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null)

ls -la "$out/bin"
# About 85 MiB as they are (wgpu and naga in each), about 14 compressed.
tar -C "$out" -cf - bin | xz -T0 -6 > "$out/bin.tar.xz"
rm -rf "$out/bin"
du -sh "$out"
size=$(du -sm "$out" | cut -f1)
if [ "$size" -gt 60 ]; then
  echo "gpu_check: .gpu is ${size} MiB, over what the device tool carries (64 MiB with the tree)" >&2
  exit 1
fi
echo "gpu_check: ready at $(cat "$out/commit"); run scripts/gpu_check/run.sh there with carry [\".gpu\"]"
