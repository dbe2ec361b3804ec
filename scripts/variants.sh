#!/usr/bin/env bash
# Where the sampler's time goes: builds the bench once as it is and once per
# variant in scripts/variants/ (each a patch to a shader, for measurement
# only: wrong results; or to a plan choice, such as no_decode_heads), then
# runs them alternated, ROUNDS times, and prints each run's gpu/floor (for
# skin_chain its whole chain over its sampling, for compressed its time
# over the uncompressed library's).
# docs/PERFORMANCE.md ("Where the time goes on the CPU adapters") quotes
# these variants.
#
#   scripts/variants.sh [ROUNDS] [WORKLOADS] [VARIANT...]
#   scripts/variants.sh 3 crowd_rot no_search fetch_only bucket_texel first_step nlerp
#   scripts/variants.sh 3 skin_chain no_global_store no_joint_store
#   scripts/variants.sh 3 compressed no_decode_heads
#   scripts/variants.sh 2 crowd_rot                    # every variant
#
# The builds happen in a detached worktree of HEAD under target/variants
# (its own target directory: the first build takes a few minutes, each
# variant then rebuilds only the crate), so the working tree is not touched.
# A patch that no longer applies to HEAD is reported and skipped. Alternate
# builds in one session only: this machine's sharing moves every ratio
# from one session to the next (see docs/PERFORMANCE.md). `git worktree remove --force
# target/variants/tree` removes the worktree.
set -euo pipefail

rounds=${1:-3}
workloads=${2:-crowd_rot}
shift $(($# < 2 ? $# : 2))
root=$(git rev-parse --show-toplevel)
cd "$root"
if [ $# -gt 0 ]; then
    variants=("$@")
else
    variants=()
    for p in scripts/variants/*.patch; do
        variants+=("$(basename "$p" .patch)")
    done
fi

work=$root/target/variants/tree
bins=$root/target/variants/bin
mkdir -p "$bins"
if [ ! -d "$work" ]; then
    git worktree add --detach "$work" HEAD >/dev/null
fi
git -C "$work" reset --quiet --hard "$(git rev-parse HEAD)"

build() { # NAME: build the bench in the worktree as it stands, keep it as bin/NAME
    (cd "$work" && CARGO_TARGET_DIR="$work/target" cargo build --quiet --release --example bench)
    cp "$work/target/release/examples/bench" "$bins/$1"
}

echo "variants: building as_is at $(git rev-parse --short HEAD)" >&2
build as_is
built=(as_is)
for v in "${variants[@]}"; do
    patch=$root/scripts/variants/$v.patch
    if [ ! -f "$patch" ]; then
        echo "variants: no such variant: $v (scripts/variants/$v.patch)" >&2
        exit 2
    fi
    if ! git -C "$work" apply --check "$patch" 2>/dev/null; then
        echo "variants: $v.patch does not apply to HEAD any more; skipped" >&2
        continue
    fi
    echo "variants: building $v" >&2
    git -C "$work" apply "$patch"
    build "$v"
    git -C "$work" checkout --quiet -- .
    built+=("$v")
done

printf '%-14s' variant
IFS=, read -r -a names <<<"$workloads"
for w in "${names[@]}"; do printf ' %18s' "$w"; done
echo
for r in $(seq "$rounds"); do
    for b in "${built[@]}"; do
        out=$("$bins/$b" --json --only "$workloads" 2>/dev/null || true)
        printf '%-14s' "$b"
        for w in "${names[@]}"; do
            line=$(grep "\"workload\": \"$w\"" <<<"$out" || true)
            key=gpu_over_floor
            base=floor_ms
            if [ "$w" = skin_chain ]; then key=chain_over_sampling; fi
            case "$w" in compressed*) key=gpu_over_uncompressed; base=uncompressed_ms ;; esac
            ratio=$(sed -n "s/.*\"$key\": \([0-9.]*\).*/\1/p" <<<"$line")
            floor=$(sed -n "s/.*\"$base\": \([0-9.]*\).*/\1/p" <<<"$line")
            printf ' %8.2f (%6.2f ms)' "${ratio:-0}" "${floor:-0}"
        done
        echo
    done
done
echo "(gpu/floor per run, skin_chain's chain/sampling, compressed's gpu/uncompressed, the floor's (compressed: the uncompressed sampler's) ms beside each: runs whose floor is far above the others' ran while the host took time from this machine)" >&2
