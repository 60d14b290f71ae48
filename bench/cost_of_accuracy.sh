#!/usr/bin/env bash
# The cost of accuracy: each feature's share of the default sphere-plate
# run's CPU, for this checkout (HEAD), for 51f796f (the main before the
# issue 29 round) and, for the ratio, the default run of dfbd5e1 (the main
# before the issue 20-28 accuracy work), side by side in one run.
#
#   bench/cost_of_accuracy.sh [ROUNDS [--set KEY=VALUE ...]]
#   e.g. bench/cost_of_accuracy.sh 3 --set time.end=1e-3
#
# ROUNDS (default 3) rounds, each running every configuration once, the
# commits alternating within each configuration so that they see the same
# machine (on a shared VM speed drifts by tens of percent over minutes).
# Extra --set options go to every run. Configurations:
#   default   avi run sphere-plate
#   nosync    --set output.synchronized_every=1000000: rows every 1 us, the
#             synchronized energy (issue 29's observable) at the first and
#             last row only (its share = default - nosync)
#   energy    --set output.energy_every=2e-5 (100 rows, every one
#             synchronized: the rows' own share = nosync - energy; at
#             dfbd5e1, which had no synchronized pair, default - energy)
#   hinge     energy plus --set materials.steel.bending=hinge (the bending
#             model's share = energy - hinge)
#   hingerows default plus --set materials.steel.bending=hinge (the bending
#             model at the default rows: default - hingerows, whose rows
#             take every potential's energy)
#   friction  --set contact.friction=0.3 (its cost = friction - default)
#   onset1    energy, HEAD built with -DAVI_BENCH_ONSET_RESOLUTION=1.0: layer
#             steps without the quarter-step onset rule (share = energy -
#             onset1; on energy, not default, so that the observable's rows
#             do not drown it)
#   norefine  energy, HEAD built with -DAVI_BENCH_NO_REFINE=1: no refined
#             elastic clocks in contact (share = energy - norefine)
# onset1 and norefine are physically invalid builds in general (the rules
# bound the energy error, src/contact/contact_manager.c, src/core/refine.h): they
# exist only to price a feature and have no runtime switch. They and the
# old commits are built from copies under build/compare/ (old commits with
# `git worktree`, the variants from this checkout's tracked files).
# CPU = user + sys of /usr/bin/time; events from `avi info`. Prints one
# JSON line per run, then medians as JSON lines and a markdown table.
set -euo pipefail
rounds=${1:-3}
[ $# -gt 0 ] && shift
case $rounds in '' | *[!0-9]*) sed -n '2,32p' "$0" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] || { echo "$0: ROUNDS must be at least 1" >&2; exit 2; }
extra=("$@")
cd "$(dirname "$0")/.."
root=$PWD
old=dfbd5e1 prev=51f796f
work=$(mktemp -d "${TMPDIR:-/tmp}/cost_of_accuracy.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Binaries: old commits in git worktrees, HEAD with make, HEAD variants in
# copies of this checkout (tracked files, uncommitted edits included).
git worktree prune
mkdir -p "$root/build/compare"
for c in $old $prev; do
  [ -d "$root/build/compare/$c" ] || git worktree add --detach "$root/build/compare/$c" "$c" >&2
  make -s -C "$root/build/compare/$c" build/avi >&2
done
make -s build/avi >&2
variant() { # NAME CPPFLAGS
  local dir=$root/build/compare/HEAD-$1
  mkdir -p "$dir"
  # The checkout's files only: a source removed since the last copy must go (its build/ stays).
  find "$dir" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
  git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$dir"
  make -s -C "$dir" CPPFLAGS="$2" build/avi >&2
}
variant onset1 -DAVI_BENCH_ONSET_RESOLUTION=1.0
variant norefine -DAVI_BENCH_NO_REFINE=1
declare -A bin=([$old]=$root/build/compare/$old/build/avi [$prev]=$root/build/compare/$prev/build/avi
                [HEAD]=$root/build/avi [HEAD-onset1]=$root/build/compare/HEAD-onset1/build/avi
                [HEAD-norefine]=$root/build/compare/HEAD-norefine/build/avi)

E=(--set output.energy_every=2e-5)
H=(--set output.energy_every=2e-5 --set materials.steel.bending=hinge)
N=(--set output.synchronized_every=1000000)
HR=(--set materials.steel.bending=hinge)
F=(--set contact.friction=0.3)
# One run: COMMIT CONFIG BINARY-KEY ARGS...; a JSON line on stdout.
one() {
  local commit=$1 config=$2 key=$3
  shift 3
  local out=$work/run.h5
  rm -f "$out" "$work/time"
  if ! /usr/bin/time -f '%U %S' -o "$work/time" "${bin[$key]}" run sphere-plate -o "$out" --quiet "$@" "${extra[@]}" >/dev/null 2>"$work/err"; then
    echo "$0: $commit $config failed:" >&2; cat "$work/err" >&2; exit 1
  fi
  "${bin[$key]}" info "$out" 2>&1 | /usr/bin/python3 -c '
import json, re, sys
commit, config, rnd, (user, sys_) = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
line = next((l for l in sys.stdin if l.startswith("events:")), "")
m = re.match(r"events:\s+(\d+)\s*\((.*)\)", line)
kinds = {k: int(n) for k, n in re.findall(r"(\w+) (\d+)", m.group(2))} if m else {}
print(json.dumps({"round": rnd, "commit": commit, "config": config, "cpu_s": round(float(user) + float(sys_), 2),
                  "events": int(m.group(1)) if m else None, "events_by_kind": kinds}), flush=True)
' "$commit" "$config" "$r" "$(tail -n 1 "$work/time")"
}

echo "{\"load\": \"$(uptime | sed 's/.*load/load/')\", \"when\": \"start\", \"extra\": \"${extra[*]}\"}"
for ((r = 1; r <= rounds; r++)); do
  one $old default $old
  one $prev default $prev
  one HEAD default HEAD
  one HEAD nosync HEAD "${N[@]}"
  one $old energy $old "${E[@]}"
  one $prev energy $prev "${E[@]}"
  one HEAD energy HEAD "${E[@]}"
  one $prev hinge $prev "${H[@]}"
  one HEAD hinge HEAD "${H[@]}"
  one HEAD hingerows HEAD "${HR[@]}"
  one $prev friction $prev "${F[@]}"
  one HEAD friction HEAD "${F[@]}"
  one HEAD onset1 HEAD-onset1 "${E[@]}"
  one HEAD norefine HEAD-norefine "${E[@]}"
done | tee "$work/runs.jsonl"
echo "{\"load\": \"$(uptime | sed 's/.*load/load/')\", \"when\": \"end\"}"

/usr/bin/python3 - "$work/runs.jsonl" "$old" "$prev" <<'PY'
import json, statistics, sys
path, old, prev = sys.argv[1:]
runs = [json.loads(l) for l in open(path)]
med = {}
for key in {(r["commit"], r["config"]) for r in runs}:
    rs = [r for r in runs if (r["commit"], r["config"]) == key]
    med[key] = {"cpu_s": statistics.median(r["cpu_s"] for r in rs),
                "events": statistics.median(r["events"] for r in rs) if all(r["events"] is not None for r in rs) else None,
                "contact_events": statistics.median(r["events_by_kind"].get("contact", 0) for r in rs), "n": len(rs)}
for (c, cfg), m in sorted(med.items()):
    print(json.dumps({"median": True, "commit": c, "config": cfg, **m}))
# Share of the default's CPU: (config whose difference prices the feature).
shares = [("synchronized energy (the observable)", "default", "nosync", "valid"),
          ("rows every 1 us (energies, momenta, writing)", "nosync", "energy", "valid"),
          ("all rows, the observable included", "default", "energy", "valid"),
          ("bending model (midedge over hinge)", "energy", "hinge", "valid"),
          ("bending model at the default rows", "default", "hingerows", "valid"),
          ("layer rule (quarter onset step)", "energy", "onset1", "onset1 invalid"),
          ("refinement (refined clocks)", "energy", "norefine", "norefine invalid"),
          ("friction 0.3 (added)", "friction", "default", "valid")]
def cell(c, a, b):
    if (c, a) not in med or (c, b) not in med: return "n/a", None
    d = med[(c, a)]["cpu_s"] - med[(c, b)]["cpu_s"]
    f = d / med[(c, "default")]["cpu_s"]
    return f"{d:+.2f} s ({f:+.0%})", f
for name, a, b, valid in shares:
    for c in ("HEAD", prev):
        _, f = cell(c, a, b)
        print(json.dumps({"share": name, "commit": c, "fraction_of_default": None if f is None else round(f, 4)}))
def cfgrow(cfg):
    out = []
    for c in ("HEAD", prev):
        m = med.get((c, cfg))
        out += [f"{m['cpu_s']:.2f}", f"{m['events'] / 1e6:.2f} M ({m['contact_events'] / 1e6:.2f} M)"] if m else ["n/a", "n/a"]
    return out
print()
print(f"| configuration | HEAD CPU s | HEAD events (contact) | {prev} CPU s | {prev} events (contact) |")
print("|---|---|---|---|---|")
for cfg in ("default", "nosync", "energy", "hinge", "hingerows", "friction", "onset1", "norefine"):
    print(f"| {cfg} | " + " | ".join(cfgrow(cfg)) + " |")
for cfg in ("default", "energy"):
    m = med[(old, cfg)]
    print(f"| {cfg} at {old} | {m['cpu_s']:.2f} | {m['events'] / 1e6:.2f} M ({m['contact_events'] / 1e6:.2f} M) | | |")
m = med[(old, "default")]
print()
print(f"| feature | HEAD: CPU (share of default) | {prev}: CPU (share of default) | configurations |")
print("|---|---|---|---|")
for name, a, b, valid in shares:
    print(f"| {name} | {cell('HEAD', a, b)[0]} | {cell(prev, a, b)[0]} | {a} - {b}; {valid} |")
r = (m["cpu_s"] - med[(old, "energy")]["cpu_s"]) / m["cpu_s"]
print(f"| rows every 1 us at {old} (no synchronized pair) | {m['cpu_s'] - med[(old, 'energy')]['cpu_s']:+.2f} s ({r:+.0%}) | | default - energy at {old} |")
print(f"| midedge over hinge at the default rows | {med[('HEAD', 'default')]['cpu_s'] / med[('HEAD', 'hingerows')]['cpu_s']:.2f}x | | default / hingerows |")
d = m["cpu_s"]
print(f"| default over {old}'s default | {med[('HEAD', 'default')]['cpu_s'] / d:.2f}x | {med[(prev, 'default')]['cpu_s'] / d:.2f}x | |")
PY
