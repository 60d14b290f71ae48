#!/usr/bin/env bash
# Runs every benchmark program in build/bench/ (built by `make bench`),
# collects their JSON lines into build/bench/results.jsonl and prints a
# summary table. BENCH_QUICK=1 passes each program smaller arguments (a
# smoke run of a few minutes in all, not figures to quote).
#
#   bench/run_all.sh [PROGRAM...]        default: every program in build/bench
#
# Per program: stdout in build/bench/logs/NAME.out, stderr (its tables) in
# NAME.err and on this terminal. results.jsonl also gets one "run_all"
# record per program (arguments, exit status, wall seconds, load average)
# and one for the machine. Exit status 1 when any program failed (the
# others still run), 2 when there is nothing to run.
set -u
cd "$(dirname "$0")/.." || exit 2

BIN=build/bench
LOGS=$BIN/logs
RESULTS=$BIN/results.jsonl
QUICK=${BENCH_QUICK:-0}
[ "$QUICK" = 0 ] || QUICK=1

# Arguments of the quick runs; the full runs take each program's defaults,
# with the additions of full_args.
quick_args() {
    case "$1" in
    queue) echo "--sizes 1e3,1e4 --reps 1 --seconds 0.2" ;;
    events) echo "--tets 1e4 --events 1e6 --levels 0,16" ;;
    contact) echo "--set bodies.sphere.mesh.subdivisions=2 --set bodies.plate.mesh.rings=8 --repeat 1 --speed 100 --end 2e-4 --speed 1000 --end 5e-5" ;;
    sync_timing) echo "0.1" ;;
    contact_sweep) echo "--n 4 --samples 50" ;;
    sphere_plate) echo "--set time.end=1e-4 --set bodies.sphere.mesh.subdivisions=2 --set bodies.plate.mesh.rings=8" ;;
    graded) echo "--steps 300 --repeat 1" ;;
    xdmf) echo "--frames 100,1000 --rewrite-max 100" ;;
    order4) echo "--quick" ;;
    async_order4) echo "--quick" ;;
    pmodel) echo "bar --tets 1e4 --events 2e5 --windows 256 --verify 256" ;;
    mpimodel) echo "bar --tets 3000 --verify" ;;
    barrier) echo "--rounds 20000" ;;
    output) echo "--repeat 1 --rates 1,10 --scene sphere-plate --set time.end=1e-4 --scene bar --set time.end=0.5" ;;
    *) echo "" ;;
    esac
}

full_args() {
    case "$1" in
    events) echo "--levels 0,16" ;;
    pmodel) echo "bar --tets 1e5 --events 2e6 --windows 1024,4096,16384 --barrier-ns 500,6600 --sync-ns 200,550 --verify 4096" ;;
    mpimodel) echo "bar --tets 1e6 --steps 16 --ranks 8,16,32,64" ;;
    *) echo "" ;;
    esac
}

if [ $# -gt 0 ]; then
    programs=("$@")
else
    programs=()
    for f in "$BIN"/*; do
        if [ -f "$f" ] && [ -x "$f" ]; then programs+=("$(basename "$f")"); fi
    done
fi
if [ ${#programs[@]} -eq 0 ]; then
    echo "run_all: no benchmark programs in $BIN (run make bench)" >&2
    exit 2
fi

mkdir -p "$LOGS"
tmp=$(mktemp "$BIN/results.XXXXXX") || exit 2
trap 'rm -f "$tmp"' EXIT

json_str() { # a JSON string literal (no control characters expected)
    local s=${1//\\/\\\\}
    printf '"%s"' "${s//\"/\\\"}"
}
loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null; }

model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo true || echo false)
printf '{"bench": "run_all", "machine": {"nproc": %s, "model": %s, "loadavg": %s}, "date": %s, "commit": %s, "dirty": %s, "quick": %s}\n' \
    "$(nproc)" "$(json_str "$model")" "$(json_str "$(loadavg)")" "$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" \
    "$(json_str "$commit")" "$dirty" "$([ "$QUICK" = 1 ] && echo true || echo false)" >>"$tmp"

failed=()
for p in "${programs[@]}"; do
    exe=$BIN/$p
    if [ ! -x "$exe" ]; then
        echo "run_all: $exe: no such program" >&2
        failed+=("$p")
        continue
    fi
    args=$(full_args "$p")
    [ "$QUICK" = 1 ] && args=$(quick_args "$p")
    echo "== $p $args" >&2
    load0=$(loadavg)
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086  # the argument lists are meant to split
    "$exe" $args 2>&1 >"$LOGS/$p.out" | tee "$LOGS/$p.err" >&2
    rc=${PIPESTATUS[0]}
    t1=$(date +%s.%N)
    grep '^{' "$LOGS/$p.out" >>"$tmp"
    n=$(grep -c '^{' "$LOGS/$p.out")
    printf '{"bench": "run_all", "program": %s, "args": %s, "status": %d, "wall_s": %.2f, "json_lines": %d, "loadavg_start": %s, "loadavg_end": %s}\n' \
        "$(json_str "$p")" "$(json_str "$args")" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$n" \
        "$(json_str "$load0")" "$(json_str "$(loadavg)")" >>"$tmp"
    if [ "$rc" -ne 0 ]; then
        echo "run_all: $p failed (exit status $rc); see $LOGS/$p.err" >&2
        failed+=("$p")
    fi
done
mv "$tmp" "$RESULTS"
trap - EXIT

summary_py='
import json, sys
# Per program: key parameters, then figures (key, label, format).
SPEC = {
    "queue": (["queue", "n", "spread", "clocks"],
              [("cpu_ns_per_op_median", "CPU ns/event", "%.1f"), ("ns_per_op_median", "wall ns/event", "%.1f"),
               ("bytes_per_entry", "B/entry", "%.0f")]),
    "events": (["tets", "reorder", "levels_per_octave"],
               [("events_per_cpu_s", "events/CPU s", "%.3g"), ("cpu_ns_per_event", "CPU ns/event", "%.1f"),
                ("sim_per_cpu_s", "simulated s/CPU s", "%.3g"), ("energy_rel_change", "dE/E", "%.1e")]),
    "contact": (["speed", "end_time", "vertices"],
                [("events_per_cpu_s", "events/CPU s", "%.3g"), ("cpu_s", "CPU s", "%.2f"),
                 ("manager_fraction", "in manager", "%.2f")]),
    "graded": (["mesh", "ratio", "rule", "levels_per_octave"],
               [("ideal_speedup", "ideal", "%.2f"), ("speedup_cpu", "speed-up CPU", "%.2f"),
                ("efficiency_cpu", "measured/ideal", "%.2f"), ("sync_ns_per_event", "sync ns/event", "%.0f"),
                ("avi_ns_per_event", "AVI ns/event", "%.0f"), ("avi_energy_rel_change", "AVI dE/E", "%.1e")]),
    "order4": (["model", "integrator", "h_omega", "summary"],
               [("max_position_error", "error", "%.3e"), ("cpu_s", "CPU s", "%.3g"),
                ("cpu_ns_per_step", "ns/step", "%.0f"), ("crossover_error", "equal cost at error", "%.3g"),
                ("crossover_cpu_s", "CPU s", "%.3g")]),
    "output": (["scene", "mode", "rate_factor"],
               [("cpu_s", "CPU s", "%.3f"), ("overhead_cpu", "overhead CPU", "%+.3f"),
                ("overhead_wall", "overhead wall", "%+.3f"), ("observers_cpu_frac", "in observers", "%.3f")]),
}
FIGURE_WORDS = ("per_s", "ns_per", "speedup", "ratio", "overhead", "frac", "_s")

def fmt(v, f="%.4g"):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f % v
    return str(v)

rows, bad = [], 0
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        bad += 1
        continue
    b = r.get("bench", "?")
    if b == "run_all":
        if "program" in r:
            rows.append(("run_all", r["program"], "status %d, %.1f s wall, %d JSON lines%s" % (
                r["status"], r["wall_s"], r["json_lines"], ", args: " + r["args"] if r["args"] else "")))
        else:
            m = r["machine"]
            rows.append(("run_all", "machine", "%s CPUs, %s, load %s, %s%s" % (
                m["nproc"], m["model"], m["loadavg"], r["commit"], ", quick" if r["quick"] else "")))
        continue
    if b in SPEC:
        params, figs = SPEC[b]
        figs = [(k, lab, f) for k, lab, f in figs if k in r]
    else:
        params = [k for k, v in r.items() if k != "bench" and isinstance(v, (str, bool))][:4]
        figs = [(k, k, "%.4g") for k, v in r.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool) and any(w in k for w in FIGURE_WORDS)][:6]
    p = ", ".join("%s=%s" % (k, fmt(r[k])) for k in params if k in r)
    f = ", ".join("%s %s" % (lab, fmt(r[k], fm)) for k, lab, fm in figs)
    rows.append((b, p, f))
w0 = max(len(r[0]) for r in rows)
w1 = max(len(r[1]) for r in rows)
print("%-*s  %-*s  %s" % (w0, "bench", w1, "parameters", "figures"))
for b, p, f in rows:
    print("%-*s  %-*s  %s" % (w0, b, w1, p, f))
if bad:
    print("run_all: %d lines of %s are not JSON" % (bad, sys.argv[1]), file=sys.stderr)
    sys.exit(1)
'

echo >&2
echo "Results: $RESULTS" >&2
if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 -c "$summary_py" "$RESULTS" || failed+=("summary")
else
    # Without Python: the bench name and its figure-like numbers.
    awk '{ b = $0; sub(/^\{"bench": "/, "", b); sub(/".*/, "", b); s = "";
           n = split($0, f, /, "/);
           for (i = 2; i <= n; i++) if (f[i] ~ /(per_s|ns_per|speedup|overhead|frac)/) s = s " " f[i];
           printf "%-10s%s\n", b, s }' "$RESULTS"
fi
for p in "${programs[@]}"; do
    [ -s "$LOGS/$p.out" ] && ! grep -q '^{' "$LOGS/$p.out" && echo "($p prints no JSON; its output: $LOGS/$p.out)"
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "run_all: failed: ${failed[*]}" >&2
    exit 1
fi
exit 0
