#!/usr/bin/env bash
# run.sh OUTDIR [--quick]
#
# Measures the GPU the way examples/validation/data/h100 was measured and writes the same
# files, with the same columns, into OUTDIR (see README.md here). Needs the CUDA toolkit
# (nvcc, with a host C++ compiler, and cuobjdump) and the NVIDIA driver (nvidia-smi);
# Nsight Compute (ncu) is optional, and without it the ncu_*.csv files are skipped.
#
# Environment:
#   HETSIM_GPU=N     the GPU to measure, as nvidia-smi numbers them (default 0)
#   NVCC, NCU, CUOBJDUMP   tool paths, when they are not on PATH or in /usr/local/cuda/bin
#   NCU="sudo -E /path/to/ncu"   a command with arguments works too (performance counters
#                    are often restricted to administrators)
#   ARCH=sm_XY       override the architecture (default: the GPU's compute capability)
#   NVCC_FLAGS       extra nvcc flags (for example -ccbin g++-12)
#   SKIP_NCU=1       skip the Nsight Compute part
#   STEPS="a.csv b.csv"   write only these files (props.csv is always written); the others
#                    are listed as skipped
#
# Exit status: 0 when every file was written, 1 when a step failed (the others still run),
# 2 when the tools are missing or the GPU cannot be used at all.
set -uo pipefail

usage() {
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-2}"
}

OUT=""
QUICK=""
for arg in "$@"; do
    case "$arg" in
    --quick) QUICK="--quick" ;;
    -h | --help) usage 0 ;;
    -*) echo "error: unknown option $arg" >&2; usage ;;
    *)
        if [ -n "$OUT" ]; then
            echo "error: one OUTDIR only" >&2
            usage
        fi
        OUT=$arg
        ;;
    esac
done
[ -n "$OUT" ] || usage

HERE=$(cd "$(dirname "$0")" && pwd)
KERNELS="$HERE/../../kernel/tests/kernels"
GPU=${HETSIM_GPU:-0}
T_START=$SECONDS

fatal() {
    echo "error: $*" >&2
    exit 2
}

# ---- tools -------------------------------------------------------------------------------

# find_tool NAME: $2 if set, else NAME on PATH, else next to nvcc, else /usr/local/cuda/bin.
find_tool() {
    local name=$1 given=${2:-}
    if [ -n "$given" ]; then
        echo "$given"
        return
    fi
    if command -v "$name" >/dev/null 2>&1; then
        command -v "$name"
        return
    fi
    local dir
    for dir in "${NVCC_DIR:-}" /usr/local/cuda/bin; do
        if [ -n "$dir" ] && [ -x "$dir/$name" ]; then
            echo "$dir/$name"
            return
        fi
    done
}

NVCC=$(find_tool nvcc "${NVCC:-}")
[ -n "$NVCC" ] || fatal "nvcc not found. Install the CUDA toolkit, or set NVCC=/path/to/nvcc."
[ -x "$NVCC" ] || fatal "NVCC=$NVCC is not an executable."
NVCC_DIR=$(dirname "$NVCC")
CUOBJDUMP=$(find_tool cuobjdump "${CUOBJDUMP:-}")
command -v nvidia-smi >/dev/null 2>&1 ||
    fatal "nvidia-smi not found: the NVIDIA driver is not installed, or not on PATH."
nvidia-smi -i "$GPU" --query-gpu=name --format=csv,noheader >/dev/null 2>&1 ||
    fatal "nvidia-smi cannot see GPU $GPU (HETSIM_GPU). nvidia-smi -L lists the GPUs."

NCU_CMD=()
if [ "${SKIP_NCU:-0}" != "1" ]; then
    if [ -n "${NCU:-}" ]; then
        read -r -a NCU_CMD <<<"$NCU"
    else
        ncu_path=$(find_tool ncu "")
        if [ -z "$ncu_path" ]; then
            for cand in /opt/nvidia/nsight-compute/*/ncu; do
                [ -x "$cand" ] && ncu_path=$cand
            done
        fi
        [ -n "$ncu_path" ] && NCU_CMD=("$ncu_path")
    fi
fi

mkdir -p "$OUT/build" || fatal "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
BUILD="$OUT/build"
# Everything printed from here on also goes to run.log.
exec > >(tee -a "$OUT/run.log") 2>&1

log() { printf '%s\n' "$*"; }
loud() {
    printf '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n'
    printf '!!! %s\n' "$@"
    printf '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n'
}

FAILED=()
SKIPPED=()

log "hetsim GPU kit: GPU $GPU, output $OUT ${QUICK:+(quick smoke run: not for calibration)}"
if [ -n "$QUICK" ]; then
    log "expected time: about 2 minutes"
else
    log "expected time: about 10 to 15 minutes (transfers up to 4 GiB take the longest)"
fi

# The GPU should be otherwise idle: other work changes every timing.
others=$(nvidia-smi -i "$GPU" --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -c '[0-9]' || true)
if [ "${others:-0}" != "0" ]; then
    loud "$others other process(es) are using GPU $GPU: the timings will be disturbed."
fi

# Select the GPU for the CUDA programs by the same number nvidia-smi uses.
export CUDA_DEVICE_ORDER=PCI_BUS_ID
export CUDA_VISIBLE_DEVICES=$GPU

# ---- build -------------------------------------------------------------------------------

CC=$(nvidia-smi -i "$GPU" --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' \r')
if [ -n "${ARCH:-}" ]; then
    ARCH_FLAG="-arch=$ARCH"
    SM=${ARCH#sm_}
elif [[ "$CC" =~ ^[0-9]+\.[0-9]+$ ]]; then
    SM=${CC/./}
    ARCH_FLAG="-arch=sm_$SM"
else
    # Older drivers cannot report compute_cap; nvcc can ask the GPU itself.
    ARCH_FLAG="-arch=native"
    SM=""
fi
EXTRA=()
[ -n "${NVCC_FLAGS:-}" ] && read -r -a EXTRA <<<"$NVCC_FLAGS"

BENCH="$BUILD/hetsim_gpu_bench"
HELDOUT="$BUILD/hetsim_heldout"
FAMILIES="$BUILD/hetsim_families"

# wanted FILE: whether this run writes FILE (STEPS unset: every file).
wanted() { [ -z "${STEPS:-}" ] || [[ " $STEPS " == *" $1 "* ]]; }
log "== build: $NVCC -O3 $ARCH_FLAG ${NVCC_FLAGS:-}"
"$NVCC" --version | tail -n 2
if ! "$NVCC" -O3 "$ARCH_FLAG" ${EXTRA[@]+"${EXTRA[@]}"} -o "$BENCH" "$HERE/hetsim_gpu_bench.cu"; then
    fatal "nvcc failed to build hetsim_gpu_bench (is a supported host compiler installed? NVCC_FLAGS=-ccbin ... picks one)"
fi
HAVE_HELDOUT=0
if ! wanted heldout_times.csv && ! wanted ncu_heldout.csv; then
    SKIPPED+=("heldout (STEPS)")
elif [ -f "$KERNELS/saxpy2.cu" ]; then
    if "$NVCC" -O3 "$ARCH_FLAG" ${EXTRA[@]+"${EXTRA[@]}"} -o "$HELDOUT" "$HERE/heldout.cu"; then
        HAVE_HELDOUT=1
    else
        FAILED+=("build hetsim_heldout")
        loud "nvcc failed to build hetsim_heldout: no held-out files."
    fi
else
    SKIPPED+=("heldout (no $KERNELS)")
    loud "kernel/tests/kernels is not next to this kit: no held-out files."
fi
HAVE_FAMILIES=0
if ! wanted families.csv && ! wanted ncu_families.csv && ! wanted families_power.csv; then
    SKIPPED+=("families (STEPS)")
elif "$NVCC" -O3 "$ARCH_FLAG" ${EXTRA[@]+"${EXTRA[@]}"} -o "$FAMILIES" "$HERE/families.cu"; then
    HAVE_FAMILIES=1
else
    FAILED+=("build hetsim_families")
    loud "nvcc failed to build hetsim_families: no families files."
fi

# ---- one step per file ----------------------------------------------------------------

# step FILE CMD...: runs CMD with stdout into OUT/FILE (via a temporary, so a failed step
# leaves no half-written file that looks complete).
step() {
    local file=$1
    shift
    if [ "$file" != props.csv ] && ! wanted "$file"; then
        SKIPPED+=("$file (STEPS)")
        return
    fi
    local t0=$SECONDS
    log "== $file"
    if "$@" >"$OUT/$file.tmp"; then
        mv "$OUT/$file.tmp" "$OUT/$file"
        log "   $file: $(($(wc -l <"$OUT/$file") - 1)) rows, $((SECONDS - t0)) s"
    else
        log "!! $file FAILED after $((SECONDS - t0)) s"
        rm -f "$OUT/$file.tmp"
        FAILED+=("$file")
    fi
}

step nvidia_smi.csv nvidia-smi -i "$GPU" --format=csv \
    --query-gpu=name,pci.bus_id,driver_version,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks.current.sm,clocks.max.sm,clocks.current.memory,clocks.max.memory,power.draw,power.limit,temperature.gpu

step props.csv "$BENCH" $QUICK props
if [ ! -f "$OUT/props.csv" ]; then
    fatal "the first CUDA program failed (see above). A driver older than the toolkit
       (nvidia-smi shows the CUDA version the driver supports) is the usual cause."
fi
if [ -z "$SM" ]; then
    SM=$(awk -F, '$1 == "compute_capability" { sub(/\./, "", $2); print $2 }' "$OUT/props.csv")
fi

# ---- power: nvidia-smi samples every 100 ms, one sampler per phase ------------------------

PHASE_S=3
[ -n "$QUICK" ] && PHASE_S=1.5

# power_phase PHASE KERNEL CMD...: samples board power while CMD runs; prints one CSV row.
# (These two functions run through `step`, which shellcheck cannot follow.)
# shellcheck disable=SC2317
power_phase() {
    local phase=$1 kernel=$2
    shift 2
    local samples="$BUILD/power_$phase.txt"
    # Line-buffered where stdbuf exists: the sampler is stopped with a signal, and samples
    # still in a stdio buffer would be lost.
    local buf=()
    command -v stdbuf >/dev/null 2>&1 && buf=(stdbuf -oL)
    ${buf[@]+"${buf[@]}"} nvidia-smi -i "$GPU" --query-gpu=power.draw --format=csv,noheader,nounits \
        -lms 100 >"$samples" &
    local sampler=$!
    local rc=0
    "$@" >&2 || rc=$?
    kill "$sampler" 2>/dev/null
    wait "$sampler" 2>/dev/null
    # Lines that are not numbers ("[N/A]", "[Not Supported]") are not samples.
    # STEADY_FROM=f keeps the samples after the first fraction f of the phase: a load that
    # first fills gigabytes of buffers leaves the GPU idle meanwhile.
    awk -v phase="$phase" -v kernel="$kernel" -v from="${STEADY_FROM:-0}" '
        $1 + 0 == $1 && $1 != "" { all[++total] = $1 }
        END { for (i = int(total * from) + 1; i <= total; i++) {
                  n++; s += all[i]; if (n == 1 || all[i] < lo) lo = all[i]; if (n == 1 || all[i] > hi) hi = all[i] }
              if (n) printf "%s,%s,%d,%.1f,%.1f,%.1f\n", phase, kernel, n, s / n, lo, hi
              else   printf "%s,%s,0,nan,nan,nan\n", phase, kernel }' "$samples"
    return "$rc"
}

# shellcheck disable=SC2317
power_csv() {
    echo "phase,kernel,samples,mean_watts,min_watts,max_watts"
    power_phase idle1 none sleep "$PHASE_S" &&
        power_phase compute "saxpy2 n=2^26 intensity=4096 block=256 back to back" \
            "$BENCH" load compute "$PHASE_S" &&
        power_phase memory "saxpy2 n=2^26 intensity=1 block=256 back to back" \
            "$BENCH" load memory "$PHASE_S" &&
        power_phase idle2 none sleep "$PHASE_S"
}
step power.csv power_csv

# The steady board power of the largest launch of each kernel family (families.cu `powered`),
# between two idle phases: power per limiter is fitted across these kernels. Each load runs
# twice the phase after filling its buffers, and only the second half of its samples counts.
# shellcheck disable=SC2317
families_power_csv() {
    echo "phase,kernel,samples,mean_watts,min_watts,max_watts"
    power_phase idle1 none sleep "$PHASE_S" || return
    local launches i
    mapfile -t launches < <("$FAMILIES" powered)
    for i in "${!launches[@]}"; do
        STEADY_FROM=0.5 power_phase "${launches[$i]%%,*}" "${launches[$i]#*,}" \
            "$FAMILIES" load "$i" "$(awk -v s="$PHASE_S" 'BEGIN { print 2 * s }')" || return
    done
    power_phase idle2 none sleep "$PHASE_S"
}
if [ "$HAVE_FAMILIES" = 1 ]; then
    step families_power.csv families_power_csv
fi
if [ -f "$OUT/power.csv" ] && grep -q ',0,nan,nan,nan$' "$OUT/power.csv"; then
    loud "nvidia-smi reported no power.draw samples on this GPU: power.csv holds nan."
fi

# ---- timings ------------------------------------------------------------------------------

step clock.csv "$BENCH" $QUICK clock
step latency.csv "$BENCH" $QUICK latency
step launch.csv "$BENCH" $QUICK launch
step sweep.csv "$BENCH" $QUICK sweep
step occupancy_block256.csv "$BENCH" $QUICK occupancy
step occtable.csv "$BENCH" $QUICK occtable
step transfers.csv "$BENCH" $QUICK transfers
step copies_concurrent.csv "$BENCH" $QUICK copies
if [ "$HAVE_HELDOUT" = 1 ]; then
    step heldout_times.csv "$HELDOUT" $QUICK time
fi
if [ "$HAVE_FAMILIES" = 1 ]; then
    step families.csv "$FAMILIES" time
fi

# ---- SASS ---------------------------------------------------------------------------------

if [ -n "$CUOBJDUMP" ]; then
    # sass_file FILE ARGS...: cuobjdump ARGS into OUT/FILE, leaving no file if it fails.
    sass_file() {
        local file=$1
        shift
        if ! "$CUOBJDUMP" "$@" >"$OUT/$file" || [ ! -s "$OUT/$file" ]; then
            rm -f "$OUT/$file"
            FAILED+=("$file")
            return 1
        fi
    }
    if sass_file "hetsim_gpu_bench_sm$SM.sass" -sass "$BENCH"; then
        # saxpy2's own listing, as in the reference folder: from its "Function :" line to
        # the dotted line that ends it.
        awk '/Function : _Z6saxpy2iiPfS_$/ { p = 1 } p { print } p && /\.\.\.\.\.\.\.\.\.\./ { exit }' \
            "$OUT/hetsim_gpu_bench_sm$SM.sass" >"$OUT/saxpy2_sm$SM.sass"
        if [ ! -s "$OUT/saxpy2_sm$SM.sass" ]; then
            rm -f "$OUT/saxpy2_sm$SM.sass"
            FAILED+=("saxpy2_sm$SM.sass")
        fi
    fi
    if [ "$HAVE_HELDOUT" = 1 ]; then
        sass_file "heldout_sm$SM.sass" -sass "$HELDOUT" &&
            sass_file "heldout_res_usage_sm$SM.txt" -res-usage "$HELDOUT"
    fi
    if [ "$HAVE_FAMILIES" = 1 ]; then
        sass_file "families_sm$SM.sass" -sass "$FAMILIES"
    fi
else
    SKIPPED+=("SASS (no cuobjdump)")
    loud "cuobjdump not found (set CUOBJDUMP=...): no .sass files written."
fi

# ---- Nsight Compute -----------------------------------------------------------------------

METRICS=smsp__inst_executed.sum,smsp__inst_issued.sum,sm__warps_launched.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,sm__warps_active.avg.per_cycle_active,smsp__thread_inst_executed.sum
L1_METRICS=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
# The reuse and shared-memory counters the families are judged on: L1 hits of global loads,
# the L2's hit rate, shared-memory wavefronts and bank conflicts.
REUSE_METRICS=l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,lts__t_sector_hit_rate.pct,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum

# ncu_file OUTFILE MANIFEST KERNEL_REGEX METRICS PROGRAM ARGS...: profiles every launch of
# the matching kernels, then joins ncu's table with the manifest the program wrote.
# --clock-control none: the clocks stay as they are for the event timings (ncu would
# otherwise lock them to base).
ncu_file() {
    local file=$1 manifest=$2 regex=$3 metrics=$4
    shift 4
    if ! wanted "$file"; then
        SKIPPED+=("$file (STEPS)")
        return
    fi
    local raw="$BUILD/${file%.csv}_raw.csv" t0=$SECONDS
    log "== $file (ncu)"
    if ! "${NCU_CMD[@]}" --csv --page raw --print-units base --clock-control none \
        --metrics "$metrics" --kernel-name-base function -k "regex:$regex" "$@" >"$raw" 2>"$BUILD/${file%.csv}_ncu.log"; then
        tail -n 20 "$BUILD/${file%.csv}_ncu.log"
        if grep -q 'ERR_NVGPUCTRPERM' "$BUILD/${file%.csv}_ncu.log" "$raw" 2>/dev/null; then
            loud "ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM)." \
                "Run with NCU=\"sudo -E $(command -v "${NCU_CMD[0]}" || echo "${NCU_CMD[0]}")\", or allow" \
                "non-admin profiling (NVreg_RestrictProfilingToAdminUsers=0) and reboot."
        fi
        log "!! $file FAILED (ncu)"
        FAILED+=("$file")
        return
    fi
    if "$BENCH" ncu-convert "$raw" "$manifest" "$metrics" >"$OUT/$file.tmp"; then
        mv "$OUT/$file.tmp" "$OUT/$file"
        log "   $file: $(($(wc -l <"$OUT/$file") - 1)) rows, $((SECONDS - t0)) s"
    else
        rm -f "$OUT/$file.tmp"
        log "!! $file FAILED (conversion of $raw)"
        FAILED+=("$file")
    fi
}

if [ "${#NCU_CMD[@]}" -eq 0 ]; then
    if [ "${SKIP_NCU:-0}" = "1" ]; then
        SKIPPED+=("ncu_saxpy2.csv ncu_heldout.csv (SKIP_NCU=1)")
    else
        SKIPPED+=("ncu_saxpy2.csv ncu_heldout.csv (no ncu)")
        loud "Nsight Compute (ncu) not found: ncu_saxpy2.csv and ncu_heldout.csv are NOT written." \
            "Install Nsight Compute, or set NCU=/path/to/ncu, and run again."
    fi
else
    log "ncu: $("${NCU_CMD[@]}" --version 2>/dev/null | tail -n 1)"
    ncu_file ncu_saxpy2.csv "$BUILD/ncu_saxpy2_manifest.csv" '^saxpy2' "$METRICS" \
        "$BENCH" $QUICK ncu-saxpy2 "$BUILD/ncu_saxpy2_manifest.csv"
    if [ "$HAVE_HELDOUT" = 1 ]; then
        ncu_file ncu_heldout.csv "$BUILD/ncu_heldout_manifest.csv" \
            '^(saxpy2|strided_copy|daxpy_loop|sfu_loop|sgemm_naive|sgemm_tiled|stencil5)' \
            "$METRICS,$L1_METRICS" "$HELDOUT" $QUICK ncu "$BUILD/ncu_heldout_manifest.csv"
    fi
    if [ "$HAVE_FAMILIES" = 1 ]; then
        ncu_file ncu_families.csv "$BUILD/ncu_families_manifest.csv" \
            '^(stencil5|sgemm|block_sum|transpose)' \
            "$METRICS,$L1_METRICS,$REUSE_METRICS" "$FAMILIES" ncu "$BUILD/ncu_families_manifest.csv"
    fi
fi

# ---- metadata -----------------------------------------------------------------------------

prop() { awk -F, -v k="$1" '$1 == k { print $2 }' "$OUT/props.csv"; }
smi() { nvidia-smi -i "$GPU" --query-gpu="$1" --format=csv,noheader 2>/dev/null | head -n1; }
ELAPSED=$((SECONDS - T_START))
DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
NVCC_VER=$("$NVCC" --version | grep -o 'release [^,]*, V[0-9.]*' | head -n1)
NCU_VER=""
[ "${#NCU_CMD[@]}" -gt 0 ] && NCU_VER=$("${NCU_CMD[@]}" --version 2>/dev/null | tail -n 1)
COMMIT=$(git -C "$HERE" rev-parse HEAD 2>/dev/null || true)
if [ -n "$COMMIT" ] && [ -n "$(git -C "$HERE" status --porcelain -- . 2>/dev/null)" ]; then
    COMMIT="$COMMIT (bench/gpu modified)"
fi
CPU=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)

{
    echo "key,value"
    echo "date_utc,$DATE"
    echo "mode,$([ -n "$QUICK" ] && echo quick || echo full)"
    echo "gpu_index,$GPU"
    echo "gpu_name,$(prop name)"
    echo "compute_capability,$(prop compute_capability)"
    echo "driver,$(smi driver_version)"
    echo "cuda_driver_api,$(prop driver_version)"
    echo "cuda_runtime,$(prop runtime_version)"
    echo "nvcc,${NVCC_VER//,/}"
    echo "arch_flag,$ARCH_FLAG"
    echo "ncu,${NCU_VER//,/}"
    echo "os,$(uname -sr)"
    echo "cpu,${CPU//,/}"
    echo "kit_commit,$COMMIT"
    echo "seconds,$ELAPSED"
} >"$OUT/metadata.csv"

{
    echo "# GPU measurements: $(prop name)"
    echo
    echo "Measured on $DATE with hetsim's bench/gpu kit ($([ -n "$QUICK" ] && echo "--quick smoke run: NOT for calibration" || echo "full run"))"
    echo "on GPU $GPU: $(prop name), compute capability $(prop compute_capability), $(prop sms) SMs,"
    echo "driver $(smi driver_version), CUDA runtime $(prop runtime_version), built with nvcc $NVCC_VER $ARCH_FLAG."
    echo "PCIe: $(smi pcie.link.gen.current) (max $(smi pcie.link.gen.max)), x$(smi pcie.link.width.current)."
    echo "Clocks left as found; see clock.csv and nvidia_smi.csv. Times are CUDA events."
    echo
    echo "Columns and methods are those of examples/validation/data (see bench/gpu/README.md in the"
    echo "hetsim repository). Read it with: hetsim calibrate gpu $(basename "$OUT")"
    echo
    echo "| file | rows |"
    echo "|---|---|"
    for f in "$OUT"/*.csv "$OUT"/*.sass; do
        [ -f "$f" ] || continue
        echo "| $(basename "$f") | $(($(wc -l <"$f") - 1)) |"
    done
    echo
    if [ "${#SKIPPED[@]}" -gt 0 ]; then
        echo "Skipped: ${SKIPPED[*]}."
    fi
    if [ "${#FAILED[@]}" -gt 0 ]; then
        echo "FAILED: ${FAILED[*]} (see run.log)."
    fi
    echo "Took $ELAPSED s. build/ holds the binaries, raw ncu output and power samples."
} >"$OUT/README.md"

log ""
log "wrote $OUT ($ELAPSED s)"
if [ "${#SKIPPED[@]}" -gt 0 ]; then
    loud "skipped: ${SKIPPED[*]}"
fi
if [ "${#FAILED[@]}" -gt 0 ]; then
    loud "FAILED: ${FAILED[*]}" "see $OUT/run.log"
    exit 1
fi
log "all files written"
exit 0
