// hetsim_gpu_bench: measures one GPU the way ../shared/measurements/h100 was measured and
// prints each file's CSV, with the same columns, on stdout. run.sh calls it once per file.
//
//   hetsim_gpu_bench [--quick] props|clock|latency|launch|transfers|copies|sweep|occupancy|occtable
//   hetsim_gpu_bench [--quick] ncu-saxpy2 MANIFEST.csv   (the launches for ncu; CSV goes to MANIFEST)
//   hetsim_gpu_bench load compute|memory SECONDS        (back-to-back saxpy2 for the power phases)
//   hetsim_gpu_bench ncu-convert RAW.csv MANIFEST.csv METRIC,METRIC,...   (no GPU needed)
//
// It uses CUDA device 0: run.sh selects the GPU with CUDA_VISIBLE_DEVICES.
// --quick cuts sizes and repetitions for a smoke run; its numbers are not for calibration.
//
// Build: nvcc -O3 -arch=sm_XY -o hetsim_gpu_bench hetsim_gpu_bench.cu

#include "common.cuh"
#include "saxpy2.cu"

#include <cmath>
#include <unistd.h>

static bool g_quick = false;

// =======================================================================================
// Kernels
// =======================================================================================

__global__ void empty_kernel() {}

// Every thread spins until its own clock64() has advanced `target` cycles; the largest
// count seen is kept. Cycles over the launch's event time give the SM clock under load.
__global__ void spin_kernel(long long target, unsigned long long *max_cycles)
{
    long long t0 = clock64(), t;
    do {
        t = clock64() - t0;
    } while (t < target);
    atomicMax(max_cycles, (unsigned long long)t);
}

// ---- dependent arithmetic chains (one thread) ------------------------------------------
// Each step is one PTX instruction whose input is the previous step's output. Inline PTX,
// because the compiler would otherwise fold an integer chain (x + c + c ... = x + k*c).
// 64 outer iterations x 256 unrolled steps = 16384 steps, as in the reference file; the
// outer loop's few instructions per 256 steps are the only overhead in the figure.
#define CHAIN_STEPS_INNER 256

#define DEFINE_CHAIN(NAME, T, CONSTR, STEP)                                           \
    __global__ void NAME(int outer, T b, T c, T *out, long long *cycles)              \
    {                                                                                 \
        T x = *out;                                                                   \
        long long t0 = clock64();                                                     \
        for (int o = 0; o < outer; o++) {                                             \
            _Pragma("unroll") for (int k = 0; k < CHAIN_STEPS_INNER; k++)             \
                asm volatile(STEP : "+" CONSTR(x) : CONSTR(b), CONSTR(c));            \
        }                                                                             \
        long long t1 = clock64();                                                     \
        *out = x;                                                                     \
        *cycles = t1 - t0;                                                            \
    }

// %2 (c) is unused by the two-operand forms; passing it keeps one macro for all.
// Read the SASS (run.sh writes it) before trusting a row. With nvcc 13.0 for sm_90:
// fadd, ffma, imad, dadd and ex2 give one FADD/FFMA/IMAD/DADD/MUFU.EX2 per step, but ptxas
// folds each pair of the iadd chain's adds into one IMAD or LEA (x + 2b), so iadd_s32 is
// half an IMAD/LEA latency per step. The reference file's 2.07 against imad's 4.07 shows
// the same folding there; the row is kept as it is so that GPUs compare.
DEFINE_CHAIN(chain_fadd, float, "f", "add.f32 %0, %0, %1;")
DEFINE_CHAIN(chain_ffma, float, "f", "fma.rn.f32 %0, %0, %1, %2;")
DEFINE_CHAIN(chain_iadd, int, "r", "add.s32 %0, %0, %1;")
DEFINE_CHAIN(chain_imad, int, "r", "mad.lo.s32 %0, %0, %1, %2;")
DEFINE_CHAIN(chain_dadd, double, "d", "add.f64 %0, %0, %1;")
DEFINE_CHAIN(chain_ex2, float, "f", "ex2.approx.ftz.f32 %0, %0;")

// ---- pointer chases (one thread) -------------------------------------------------------
// Each slot of the buffer holds the address of the next slot, so a step is one load whose
// address is the previous load's value, with no address arithmetic in between.
__device__ __forceinline__ unsigned long long load_ca(unsigned long long p)
{
    unsigned long long v;
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned long long load_cg(unsigned long long p)
{
    unsigned long long v;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// `warm` untimed steps first: they fill the cache level being measured (L1, L2) or, for
// DRAM, just warm the code path and the first TLB entries; then `steps` timed steps.
template <bool BYPASS_L1>
__global__ void chase_global(unsigned long long start, int warm, int steps,
                             unsigned long long *out, long long *cycles)
{
    unsigned long long p = start;
    for (int i = 0; i < warm; i++)
        p = BYPASS_L1 ? load_cg(p) : load_ca(p);
    long long t0 = clock64();
    for (int i = 0; i < steps; i++)
        p = BYPASS_L1 ? load_cg(p) : load_ca(p);
    long long t1 = clock64();
    *out = p;
    *cycles = t1 - t0;
}

// Writes the chain: slot i (at base + i*stride) holds the address of slot next[i].
__global__ void fill_chain(char *base, const unsigned *next, long long n, long long stride)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        *(unsigned long long *)(base + i * stride) =
            (unsigned long long)(base + (long long)next[i] * stride);
}

// Shared memory: slots hold 32-bit shared-window addresses, so LDS takes its own result.
// The array is static, not `extern __shared__`: with nvcc 13 for sm_90, one kernel using
// the module's extern shared array gave every kernel of the module, saxpy2 included,
// 1 KiB of static shared memory, which would shift saxpy2's occupancy.
#define SHARED_CHAIN_BYTES 32768
__global__ void chase_shared(int stride, int steps, unsigned *out, long long *cycles)
{
    __shared__ unsigned smem_chain[SHARED_CHAIN_BYTES / 4];
    unsigned base = (unsigned)__cvta_generic_to_shared(smem_chain);
    int n = SHARED_CHAIN_BYTES / stride;
    for (int i = 0; i < n; i++)
        smem_chain[i * stride / 4] = base + ((i + 1) % n) * stride;
    __syncthreads();
    unsigned a = base;
    for (int i = 0; i < n; i++)
        asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a) : : "memory");
    long long t0 = clock64();
    for (int i = 0; i < steps; i++)
        asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a) : : "memory");
    long long t1 = clock64();
    *out = a;
    *cycles = t1 - t0;
}

// ---- kernels of chosen register counts, for the occupancy table -------------------------
// They are never launched: only their register count matters to
// cudaOccupancyMaxActiveBlocksPerMultiprocessor. REGS_LIVE(R) accumulators stay live over
// a loop; each also keeps its 64-bit address for the final store, so the kernel wants about
// 3 registers per accumulator. __maxnreg__(R) caps the allocation at R (ptxas spills the
// rest), which gives R exactly. ptxas will not cap below 24, so the lightest kernel is
// uncapped. Without __maxnreg__ (nvcc before 12.4) a third as many accumulators give
// counts near R instead; occtable.csv reports the count each kernel really has.
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 4))
#define REG_CAP(R) __maxnreg__(R)
#define REGS_LIVE(R) (R)
#else
#define REG_CAP(R)
#define REGS_LIVE(R) ((R) / 3)
#endif

#define REGS_BODY(L)                                                                  \
    float acc[L];                                                                     \
    _Pragma("unroll") for (int k = 0; k < L; k++) acc[k] = io[threadIdx.x + k * blockDim.x]; \
    for (int it = 0; it < n; it++) {                                                  \
        _Pragma("unroll") for (int k = 0; k < L; k++) acc[k] = acc[k] * acc[(k + 1) % L] + 1.0f; \
    }                                                                                 \
    _Pragma("unroll") for (int k = 0; k < L; k++) io[threadIdx.x + k * blockDim.x] = acc[k];

template <int R> __global__ void REG_CAP(R) regs_capped(int n, float *io) { REGS_BODY(REGS_LIVE(R)) }
template <int L> __global__ void regs_light(int n, float *io) { REGS_BODY(L) }

// =======================================================================================
// Helpers
// =======================================================================================

static int attr(cudaDeviceAttr a)
{
    int v = 0;
    CK(cudaDeviceGetAttribute(&v, a, 0));
    return v;
}

// x is 1.0 plus small offsets and y is non-zero, as in the reference runs.
struct SaxpyBuffers {
    int n = 0;
    float *x = nullptr, *y = nullptr;
    explicit SaxpyBuffers(int n_) : n(n_)
    {
        std::vector<float> hx(n), hy(n);
        for (int i = 0; i < n; i++) {
            hx[i] = 1.0f + (i % 1024) * 1e-6f;
            hy[i] = 0.5f + (i % 977) * 1e-6f;
        }
        CK(cudaMalloc(&x, n * sizeof(float)));
        CK(cudaMalloc(&y, n * sizeof(float)));
        CK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    }
    ~SaxpyBuffers()
    {
        cudaFree(x);
        cudaFree(y);
    }
};

static void launch_saxpy2(const SaxpyBuffers &b, int a, int block, int smem,
                          cudaStream_t s = 0)
{
    int grid = (b.n + block - 1) / block;
    saxpy2<<<grid, block, smem, s>>>(b.n, a, b.x, b.y);
}

static void print_stats_tail(int reps, const Stats &s)
{
    printf("%d,%.9e,%.9e,%.9e\n", reps, s.mean, s.median, s.min);
}

// =======================================================================================
// props.csv
// =======================================================================================

static int cmd_props()
{
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, saxpy2));
    int drv = 0, rt = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));

    printf("key,value\n");
    printf("name,%s\n", p.name);
    printf("compute_capability,%d.%d\n", attr(cudaDevAttrComputeCapabilityMajor),
           attr(cudaDevAttrComputeCapabilityMinor));
    printf("sms,%d\n", attr(cudaDevAttrMultiProcessorCount));
    // Attributes rather than cudaDeviceProp fields: CUDA 13 dropped clockRate and
    // memoryClockRate from the struct.
    printf("sm_clock_khz_max,%d\n", attr(cudaDevAttrClockRate));
    printf("mem_clock_khz_max,%d\n", attr(cudaDevAttrMemoryClockRate));
    printf("mem_bus_width_bits,%d\n", attr(cudaDevAttrGlobalMemoryBusWidth));
    printf("l2_bytes,%d\n", attr(cudaDevAttrL2CacheSize));
    printf("global_mem_bytes,%zu\n", p.totalGlobalMem);
    printf("smem_per_sm_bytes,%d\n", attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
    printf("smem_per_block_bytes,%d\n", attr(cudaDevAttrMaxSharedMemoryPerBlock));
    printf("smem_per_block_optin_bytes,%d\n", attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
    printf("reserved_smem_per_block_bytes,%d\n", attr(cudaDevAttrReservedSharedMemoryPerBlock));
    printf("regs_per_sm,%d\n", attr(cudaDevAttrMaxRegistersPerMultiprocessor));
    printf("regs_per_block,%d\n", attr(cudaDevAttrMaxRegistersPerBlock));
    printf("max_threads_per_sm,%d\n", attr(cudaDevAttrMaxThreadsPerMultiProcessor));
    printf("max_blocks_per_sm,%d\n", attr(cudaDevAttrMaxBlocksPerMultiprocessor));
    printf("max_threads_per_block,%d\n", attr(cudaDevAttrMaxThreadsPerBlock));
    printf("warp_size,%d\n", attr(cudaDevAttrWarpSize));
    printf("async_engines,%d\n", attr(cudaDevAttrAsyncEngineCount));
    printf("pci_bus_id,%d\n", attr(cudaDevAttrPciBusId));
    printf("driver_version,%d\n", drv);
    printf("runtime_version,%d\n", rt);
    printf("saxpy2_registers,%d\n", fa.numRegs);
    printf("saxpy2_ptx_version,%d\n", fa.ptxVersion);
    printf("saxpy2_binary_version,%d\n", fa.binaryVersion);
    return 0;
}

// =======================================================================================
// clock.csv: blocks,threads,cycles,seconds,mhz
// =======================================================================================

static int cmd_clock()
{
    int sms = attr(cudaDevAttrMultiProcessorCount);
    long long target = g_quick ? 100000000LL : 400000000LL; // 0.2 s at 2 GHz
    int trials = g_quick ? 1 : 3;
    const int threads = 256;
    unsigned long long *d_max;
    CK(cudaMalloc(&d_max, sizeof(*d_max)));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));

    // One block per SM, then four: the clock must not depend on how full the SMs are.
    int configs[2] = {sms, 4 * sms};
    for (int c : configs) { // warm-up per configuration (short: it only wakes the clocks)
        CK(cudaMemset(d_max, 0, sizeof(*d_max)));
        spin_kernel<<<c, threads>>>(target / 10, d_max);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
    }
    printf("blocks,threads,cycles,seconds,mhz\n");
    for (int t = 0; t < trials; t++) {
        for (int c : configs) {
            CK(cudaMemset(d_max, 0, sizeof(*d_max)));
            CK(cudaEventRecord(a));
            spin_kernel<<<c, threads>>>(target, d_max);
            CK_LAUNCH();
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            unsigned long long cycles = 0;
            CK(cudaMemcpy(&cycles, d_max, sizeof(cycles), cudaMemcpyDeviceToHost));
            double s = event_seconds(a, b);
            printf("%d,%d,%llu,%.9e,%.3f\n", c, threads, cycles, s, cycles / s / 1e6);
            fflush(stdout);
        }
    }
    CK(cudaFree(d_max));
    return 0;
}

// =======================================================================================
// latency.csv: what,footprint_bytes,stride_bytes,steps,cycles,cycles_per_step
// =======================================================================================

template <class T, class K>
static long long run_chain(K kernel, T b, T c, int steps)
{
    T *d_out;
    long long *d_cycles;
    CK(cudaMalloc(&d_out, sizeof(T)));
    CK(cudaMalloc(&d_cycles, sizeof(long long)));
    T one = (T)1;
    CK(cudaMemcpy(d_out, &one, sizeof(T), cudaMemcpyHostToDevice));
    int outer = steps / CHAIN_STEPS_INNER;
    long long cycles = 0;
    for (int rep = 0; rep < 2; rep++) { // the first run is the warm-up
        kernel<<<1, 1>>>(outer, b, c, d_out, d_cycles);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
    }
    CK(cudaMemcpy(&cycles, d_cycles, sizeof(cycles), cudaMemcpyDeviceToHost));
    CK(cudaFree(d_out));
    CK(cudaFree(d_cycles));
    return cycles;
}

static void print_latency(const char *what, size_t footprint, size_t stride, int steps,
                          long long cycles)
{
    printf("%s,%zu,%zu,%d,%lld,%.3f\n", what, footprint, stride, steps, cycles,
           (double)cycles / steps);
    fflush(stdout);
}

// A small fixed-seed generator: the same chain on every host and compiler (<random> also
// trips old nvcc with new g++ headers).
static unsigned long long splitmix64(unsigned long long &state)
{
    unsigned long long z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// Builds a chain of footprint/stride slots (sequential or one random cycle, Sattolo's
// algorithm) and times `steps` dependent loads after `warm` untimed ones.
static long long run_chase(size_t footprint, size_t stride, bool random, bool bypass_l1,
                          int warm, int steps)
{
    long long n = (long long)(footprint / stride);
    std::vector<unsigned> next(n);
    for (long long i = 0; i < n; i++)
        next[i] = (unsigned)((i + 1) % n);
    if (random) {
        std::vector<unsigned> order(n);
        for (long long i = 0; i < n; i++)
            order[i] = (unsigned)i;
        unsigned long long seed = 12345;
        for (long long i = n - 1; i > 0; i--) {
            long long j = (long long)(splitmix64(seed) % (unsigned long long)i); // j < i: one cycle
            std::swap(order[i], order[j]);
        }
        for (long long i = 0; i < n; i++)
            next[order[i]] = order[(i + 1) % n];
    }
    char *buf;
    unsigned *d_next;
    unsigned long long *d_out;
    long long *d_cycles;
    CK(cudaMalloc(&buf, footprint));
    CK(cudaMalloc(&d_next, n * sizeof(unsigned)));
    CK(cudaMalloc(&d_out, sizeof(*d_out)));
    CK(cudaMalloc(&d_cycles, sizeof(*d_cycles)));
    CK(cudaMemcpy(d_next, next.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    fill_chain<<<(unsigned)((n + 255) / 256), 256>>>(buf, d_next, n, (long long)stride);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    unsigned long long start = (unsigned long long)buf;
    long long cycles = 0;
    for (int rep = 0; rep < 2; rep++) { // the first run is the warm-up
        if (bypass_l1)
            chase_global<true><<<1, 1>>>(start, warm, steps, d_out, d_cycles);
        else
            chase_global<false><<<1, 1>>>(start, warm, steps, d_out, d_cycles);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
    }
    CK(cudaMemcpy(&cycles, d_cycles, sizeof(cycles), cudaMemcpyDeviceToHost));
    CK(cudaFree(buf));
    CK(cudaFree(d_next));
    CK(cudaFree(d_out));
    CK(cudaFree(d_cycles));
    return cycles;
}

static size_t pow2_floor(size_t v)
{
    size_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

static int cmd_latency()
{
    const int arith = 16384;
    printf("what,footprint_bytes,stride_bytes,steps,cycles,cycles_per_step\n");
    print_latency("fadd_f32", 0, 0, arith, run_chain<float>(chain_fadd, 1.0f, 0.5f, arith));
    print_latency("ffma_f32", 0, 0, arith, run_chain<float>(chain_ffma, 0.999f, 0.5f, arith));
    print_latency("iadd_s32", 0, 0, arith, run_chain<int>(chain_iadd, 3, 1, arith));
    print_latency("imad_s32", 0, 0, arith, run_chain<int>(chain_imad, 3, 1, arith));
    print_latency("dadd_f64", 0, 0, arith, run_chain<double>(chain_dadd, 1.0, 0.5, arith));
    print_latency("mufu_ex2", 0, 0, arith, run_chain<float>(chain_ex2, 0.f, 0.f, arith));

    // L1: 16 KiB fits any L1; 4096 steps go round its 128 slots 32 times.
    {
        size_t fp = 16384, st = 128;
        print_latency("global_l1_hit", fp, st, 4096,
                      run_chase(fp, st, false, false, (int)(fp / st), 4096));
    }
    // L2 (L1 bypassed with ld.global.cg): the reference used 4 and 16 MiB on a 50 MiB L2.
    // On a smaller L2 the footprints shrink to a quarter and a half of it, so they still hit.
    size_t l2 = (size_t)attr(cudaDevAttrL2CacheSize);
    size_t l2_fp[2] = {pow2_floor(std::min<size_t>(4u << 20, l2 / 4)),
                       pow2_floor(std::min<size_t>(16u << 20, l2 / 2))};
    for (size_t fp : l2_fp) {
        size_t st = 128;
        int warm = (int)(fp / st); // one full lap loads every line into L2
        print_latency("global_l2_hit", fp, st, 8192, run_chase(fp, st, false, true, warm, 8192));
    }
    // DRAM: footprints far beyond L2; the 8192 timed steps follow 1024 warm-up steps and
    // touch lines the warm-up did not.
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    size_t big = g_quick ? (256u << 20) : (1u << 30);
    while (big > (64u << 20) && big > free_b / 2)
        big /= 2;
    if (big < ((size_t)1 << 30))
        fprintf(stderr, "latency: DRAM footprint %zu B instead of 1 GiB%s\n", big,
                g_quick ? " (--quick)" : " (free memory)");
    print_latency("global_dram_seq", big, 4224, 8192, run_chase(big, 4224, false, true, 1024, 8192));
    print_latency("global_dram_random", big, 128, 8192, run_chase(big, 128, true, true, 1024, 8192));
    size_t mid = std::min<size_t>(big, 256u << 20);
    print_latency("global_dram_random", mid, 128, 8192, run_chase(mid, 128, true, true, 1024, 8192));

    // Shared memory: 32 KiB of 4-byte slots, one lap of warm-up.
    {
        int fp = SHARED_CHAIN_BYTES, st = 4, steps = 8192;
        unsigned *d_out;
        long long *d_cycles, cycles = 0;
        CK(cudaMalloc(&d_out, sizeof(*d_out)));
        CK(cudaMalloc(&d_cycles, sizeof(*d_cycles)));
        for (int rep = 0; rep < 2; rep++) {
            chase_shared<<<1, 1>>>(st, steps, d_out, d_cycles);
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
        }
        CK(cudaMemcpy(&cycles, d_cycles, sizeof(cycles), cudaMemcpyDeviceToHost));
        print_latency("shared", fp, st, steps, cycles);
        CK(cudaFree(d_out));
        CK(cudaFree(d_cycles));
    }
    return 0;
}

// =======================================================================================
// launch.csv: grid,block,launches,mode,seconds_per_launch
// =======================================================================================

static int cmd_launch()
{
    const int launches = 100;
    const int blocks[] = {1, 32, 64, 128, 256, 512, 1024};
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    printf("grid,block,launches,mode,seconds_per_launch\n");
    for (int block : blocks) {
        for (int grid = 1; grid <= 65536; grid *= 2) {
            for (int sync = 0; sync < 2; sync++) {
                empty_kernel<<<grid, block>>>(); // warm-up
                CK_LAUNCH();
                CK(cudaDeviceSynchronize());
                // Async: launches queue back to back, so the time is the GPU's per-launch
                // cost. Synchronized: the host waits for each, adding the round trip.
                CK(cudaEventRecord(a));
                for (int i = 0; i < launches; i++) {
                    empty_kernel<<<grid, block>>>();
                    if (sync)
                        CK(cudaDeviceSynchronize());
                }
                CK_LAUNCH();
                CK(cudaEventRecord(b));
                CK(cudaEventSynchronize(b));
                printf("%d,%d,%d,%s,%.9e\n", grid, block, launches,
                       sync ? "synchronized" : "async", event_seconds(a, b) / launches);
            }
        }
        fflush(stdout);
    }
    return 0;
}

// =======================================================================================
// transfers.csv: direction,memory,bytes,reps,trial,mean_seconds
// =======================================================================================

static std::vector<size_t> transfer_sizes(size_t max_bytes)
{
    // 0, then 4 B ... 1 MiB in powers of two, then 1.5x and 2x steps up to 4 GiB.
    std::vector<size_t> v{0};
    for (size_t s = 4; s <= (1u << 20); s *= 2)
        v.push_back(s);
    for (size_t s = (size_t)1 << 20; s < ((size_t)4 << 30); s *= 2) {
        v.push_back(s + s / 2);
        v.push_back(2 * s);
    }
    std::vector<size_t> out;
    for (size_t s : v)
        if (s <= max_bytes)
            out.push_back(s);
    return out;
}

// As many copies as move about 4 GB (a whole second or so), at least 5 and at most 1000.
static int transfer_reps(size_t bytes)
{
    double budget = g_quick ? 2e8 : 4e9;
    int lo = g_quick ? 3 : 5, hi = g_quick ? 100 : 1000;
    if (bytes == 0)
        return hi;
    double r = std::floor(budget / (double)bytes);
    return (int)std::max<double>(lo, std::min<double>(hi, r));
}

static int cmd_transfers()
{
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    size_t host_ram = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGE_SIZE);
    size_t max_bytes = g_quick ? ((size_t)64 << 20) : ((size_t)4 << 30);
    // Leave room on the device, and never take more than a quarter of host RAM (the
    // pageable and the pinned buffer are never held at once).
    while (max_bytes > ((size_t)1 << 20) &&
           (max_bytes > free_b - std::min(free_b, (size_t)512 << 20) || max_bytes > host_ram / 4))
        max_bytes /= 2;
    int trials = g_quick ? 1 : 3;

    char *dev;
    CK(cudaMalloc(&dev, std::max<size_t>(max_bytes, 4)));
    CK(cudaMemset(dev, 0x3c, std::max<size_t>(max_bytes, 4)));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));

    printf("direction,memory,bytes,reps,trial,mean_seconds\n");
    for (int pinned = 0; pinned < 2; pinned++) {
        size_t cap = max_bytes;
        char *host = nullptr;
        if (pinned) {
            // Pinning gigabytes can fail where malloc did not; try smaller until it works.
            while (cudaMallocHost(&host, cap) != cudaSuccess) {
                cudaGetLastError();
                host = nullptr;
                if (cap <= ((size_t)1 << 20))
                    die("cudaMallocHost failed even for 1 MiB");
                cap /= 2;
            }
        } else {
            host = (char *)malloc(cap);
            if (!host)
                die("malloc failed for the pageable buffer");
        }
        memset(host, 0x5a, cap); // touch every page so none is faulted in during a copy
        if (cap < ((size_t)4 << 30))
            fprintf(stderr, "transfers: %s sizes up to %zu B only%s\n",
                    pinned ? "pinned" : "pageable", cap, g_quick ? " (--quick)" : "");
        for (int dir = 0; dir < 2; dir++) {
            for (size_t bytes : transfer_sizes(cap)) {
                int reps = transfer_reps(bytes);
                auto copy = [&]() {
                    if (dir == 0)
                        CK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
                    else
                        CK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
                };
                copy(); // warm-up
                CK(cudaDeviceSynchronize());
                for (int t = 0; t < trials; t++) {
                    // One event pair around `reps` copies: a single small copy is shorter
                    // than the events' resolution.
                    CK(cudaEventRecord(a));
                    for (int r = 0; r < reps; r++)
                        copy();
                    CK(cudaEventRecord(b));
                    CK(cudaEventSynchronize(b));
                    printf("%s,%s,%zu,%d,%d,%.9e\n", dir == 0 ? "HostToDevice" : "DeviceToHost",
                           pinned ? "pinned" : "pageable", bytes, reps, t,
                           event_seconds(a, b) / reps);
                }
                fflush(stdout);
            }
        }
        if (pinned)
            CK(cudaFreeHost(host));
        else
            free(host);
    }
    CK(cudaFree(dev));
    return 0;
}

// =======================================================================================
// copies_concurrent.csv: case,bytes_each,reps,seconds
// =======================================================================================

static int cmd_copies()
{
    size_t bytes = g_quick ? ((size_t)64 << 20) : ((size_t)256 << 20);
    int reps = g_quick ? 4 : 10;
    // Two independent buffer pairs, one per stream, so the streams share nothing.
    char *h[2], *d[2];
    for (int i = 0; i < 2; i++) {
        CK(cudaMallocHost(&h[i], bytes));
        memset(h[i], 0x5a, bytes);
        CK(cudaMalloc(&d[i], bytes));
        CK(cudaMemset(d[i], 0x3c, bytes));
    }
    cudaStream_t s[2];
    for (int i = 0; i < 2; i++)
        CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    cudaEvent_t start, mid, stop;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&mid));
    CK(cudaEventCreate(&stop));

    // dir per stream: 0 = HtD, 1 = DtH, -1 = stream unused.
    struct Case {
        const char *name;
        int dir0, dir1;
    } cases[] = {{"htd_alone", 0, -1},
                 {"dth_alone", 1, -1},
                 {"htd_with_dth", 0, 1},
                 {"htd_with_htd", 0, 0},
                 {"dth_with_dth", 1, 1}};

    // Both streams start at `start` and `stop` waits for both, so the time is the span of
    // all 2 x reps (or reps) copies.
    auto run = [&](const Case &c, int n) {
        CK(cudaEventRecord(start, s[0]));
        CK(cudaStreamWaitEvent(s[1], start, 0));
        for (int r = 0; r < n; r++) {
            int dirs[2] = {c.dir0, c.dir1};
            for (int i = 0; i < 2; i++) {
                if (dirs[i] == 0)
                    CK(cudaMemcpyAsync(d[i], h[i], bytes, cudaMemcpyHostToDevice, s[i]));
                else if (dirs[i] == 1)
                    CK(cudaMemcpyAsync(h[i], d[i], bytes, cudaMemcpyDeviceToHost, s[i]));
            }
        }
        CK(cudaEventRecord(mid, s[1]));
        CK(cudaStreamWaitEvent(s[0], mid, 0));
        CK(cudaEventRecord(stop, s[0]));
        CK(cudaEventSynchronize(stop));
        return event_seconds(start, stop);
    };

    printf("case,bytes_each,reps,seconds\n");
    for (const Case &c : cases) {
        run(c, 1); // warm-up
        printf("%s,%zu,%d,%.9e\n", c.name, bytes, reps, run(c, reps));
        fflush(stdout);
    }
    for (int i = 0; i < 2; i++) {
        CK(cudaStreamDestroy(s[i]));
        CK(cudaFreeHost(h[i]));
        CK(cudaFree(d[i]));
    }
    return 0;
}

// =======================================================================================
// sweep.csv: n,intensity,block,grid,reps,mean_seconds,median_seconds,min_seconds
// =======================================================================================

static int cmd_sweep()
{
    int n = g_quick ? (1 << 24) : (1 << 26);
    int reps = g_quick ? 3 : 10;
    SaxpyBuffers buf(n);
    const int blocks[] = {16, 32, 64, 128, 256, 512, 1024};
    printf("n,intensity,block,grid,reps,mean_seconds,median_seconds,min_seconds\n");
    for (int block : blocks) {
        for (int a = 1; a <= 4096; a *= 2) {
            launch_saxpy2(buf, a, block, 0); // warm-up
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
            Stats s = stats_of(time_each(reps, [&] { launch_saxpy2(buf, a, block, 0); }));
            printf("%d,%d,%d,%d,", n, a, block, (n + block - 1) / block);
            print_stats_tail(reps, s);
        }
        fflush(stdout);
    }
    return 0;
}

// =======================================================================================
// occupancy_block256.csv:
//   n,intensity,block,dynamic_smem,blocks_per_sm,warps_per_sm,reps,mean_seconds,median_seconds,min_seconds
// =======================================================================================

// The carveout at maximum shared memory and the opt-in limit at its maximum, so that the
// dynamic shared memory alone decides how many blocks fit (thesis 6.2).
template <class K>
static void max_shared_carveout(K kernel)
{
    int optin = attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kernel));
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            optin - (int)fa.sharedSizeBytes));
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                            cudaSharedmemCarveoutMaxShared));
}

static int cmd_occupancy()
{
    int n = g_quick ? (1 << 24) : (1 << 26);
    int reps = g_quick ? 3 : 5;
    const int block = 256;
    max_shared_carveout(saxpy2);
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, saxpy2));
    if (fa.sharedSizeBytes != 0) // the reference saxpy2 has none; the rows would not compare
        fprintf(stderr, "occupancy: WARNING: saxpy2 has %zu B of static shared memory\n",
                fa.sharedSizeBytes);
    int smem_sm = attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
    int reserved = attr(cudaDevAttrReservedSharedMemoryPerBlock);
    int optin = attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    int kmax = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&kmax, saxpy2, block, 0));

    // For k blocks per SM: the most dynamic shared memory with which k still fit, less one
    // 128-byte allocation unit for rounding: smem_per_sm / k - reserved - 128.
    std::vector<int> smems{0};
    for (int k = kmax; k >= 1; k--) {
        int s = smem_sm / k - reserved - 128;
        smems.push_back(std::max(0, std::min(s, optin)));
    }
    SaxpyBuffers buf(n);
    const int intensities[] = {1, 8, 32, 128, 1024};
    printf("n,intensity,block,dynamic_smem,blocks_per_sm,warps_per_sm,reps,mean_seconds,"
           "median_seconds,min_seconds\n");
    for (int a : intensities) {
        for (int smem : smems) {
            int bps = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, saxpy2, block, smem));
            launch_saxpy2(buf, a, block, smem); // warm-up
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
            Stats s = stats_of(time_each(reps, [&] { launch_saxpy2(buf, a, block, smem); }));
            printf("%d,%d,%d,%d,%d,%d,", n, a, block, smem, bps, bps * block / 32);
            print_stats_tail(reps, s);
        }
        fflush(stdout);
    }
    return 0;
}

// =======================================================================================
// occtable.csv: registers_per_thread,threads_per_block,dynamic_smem,active_blocks_per_sm,active_warps_per_sm
// =======================================================================================

struct OccKernel {
    const void *fn;
    int regs, max_threads;
};

template <class K>
static OccKernel occ_kernel(K kernel)
{
    max_shared_carveout(kernel);
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kernel));
    return {(const void *)kernel, fa.numRegs, fa.maxThreadsPerBlock};
}

static int cmd_occtable()
{
    std::vector<OccKernel> ks{
        occ_kernel(regs_light<3>),      occ_kernel(regs_capped<32>),
        occ_kernel(regs_capped<40>),    occ_kernel(regs_capped<48>),
        occ_kernel(regs_capped<64>),    occ_kernel(regs_capped<72>),
        occ_kernel(regs_capped<80>),    occ_kernel(regs_capped<106>),
        occ_kernel(regs_capped<128>),   occ_kernel(regs_capped<152>),
        occ_kernel(regs_capped<168>),   occ_kernel(regs_capped<206>),
        occ_kernel(regs_capped<246>)};
    std::sort(ks.begin(), ks.end(), [](const OccKernel &a, const OccKernel &b) {
        return a.regs < b.regs;
    });
    const int threads[] = {32, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 896, 1024};
    int optin = attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    // The reference list, whose last entry is the H100's opt-in maximum; on another GPU
    // the sizes above its maximum are left out and its own maximum is the last.
    std::vector<int> smems;
    for (int s : {0, 1000, 4096, 10000, 16384, 32768, 40000, 49152, 65536, 100000, 150000,
                  200000})
        if (s < optin)
            smems.push_back(s);
    smems.push_back(optin);

    printf("registers_per_thread,threads_per_block,dynamic_smem,active_blocks_per_sm,"
           "active_warps_per_sm\n");
    for (const OccKernel &k : ks) {
        for (int t : threads) {
            if (t > k.max_threads)
                continue; // the runtime refuses such a launch; the reference omits the rows
            for (int s : smems) {
                int blocks = 0;
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k.fn, t, s));
                printf("%d,%d,%d,%d,%d\n", k.regs, t, s, blocks, blocks * ((t + 31) / 32));
            }
        }
    }
    return 0;
}

// =======================================================================================
// ncu-saxpy2: the launches profiled for ncu_saxpy2.csv; their parameters go to MANIFEST.
// =======================================================================================

static int cmd_ncu_saxpy2(const char *manifest)
{
    const int n = 1 << 24;
    struct L {
        int a, block;
    } ls[] = {{1, 256}, {8, 256}, {32, 256}, {128, 256}, {1024, 256}, {128, 32}, {128, 1024},
              {128, 16}};
    int count = g_quick ? 2 : (int)(sizeof(ls) / sizeof(ls[0]));
    FILE *f = written(manifest);
    fprintf(f, "n,intensity,block_size,grid_size\n");
    SaxpyBuffers buf(n);
    // No warm-up: ncu would profile it too. ncu replays each launch with caches flushed.
    for (int i = 0; i < count; i++) {
        launch_saxpy2(buf, ls[i].a, ls[i].block, 0);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        fprintf(f, "%d,%d,%d,%d\n", n, ls[i].a, ls[i].block, (n + ls[i].block - 1) / ls[i].block);
    }
    fclose(f);
    return 0;
}

// =======================================================================================
// load: saxpy2 n = 2^26, block 256, back to back for SECONDS (power phases). Intensity
// 4096 is compute-bound, intensity 1 memory-bound.
// =======================================================================================

static int cmd_load(const char *kind, double seconds)
{
    int a;
    if (strcmp(kind, "compute") == 0)
        a = 4096;
    else if (strcmp(kind, "memory") == 0)
        a = 1;
    else
        die("load takes compute or memory");
    SaxpyBuffers buf(1 << 26);
    // Keep up to 16 launches queued: enough that the GPU never idles, few enough that the
    // load stops within a few kernel times of the deadline.
    const int depth = 16;
    cudaEvent_t ev[depth];
    for (int i = 0; i < depth; i++)
        CK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
    double t_end = wall_now() + seconds;
    long long launches = 0;
    while (wall_now() < t_end) {
        int slot = (int)(launches % depth);
        if (launches >= depth)
            CK(cudaEventSynchronize(ev[slot]));
        launch_saxpy2(buf, a, 256, 0);
        CK_LAUNCH();
        CK(cudaEventRecord(ev[slot]));
        launches++;
    }
    CK(cudaDeviceSynchronize());
    fprintf(stderr, "load %s: %lld launches in %.1f s\n", kind, launches, seconds);
    return 0;
}

// =======================================================================================

static int usage()
{
    fprintf(stderr,
            "usage: hetsim_gpu_bench [--quick] COMMAND\n"
            "  props | clock | latency | launch | transfers | copies | sweep | occupancy | occtable\n"
            "      print that CSV file on stdout\n"
            "  ncu-saxpy2 MANIFEST    the 8 saxpy2 launches for ncu; writes their parameters\n"
            "  load compute|memory SECONDS\n"
            "  ncu-convert RAW MANIFEST METRICS    join ncu --csv --page raw output with a manifest\n");
    return 1;
}

int main(int argc, char **argv)
{
    int i = 1;
    if (i < argc && strcmp(argv[i], "--quick") == 0) {
        g_quick = true;
        i++;
    }
    if (i >= argc)
        return usage();
    std::string cmd = argv[i++];
    int rest = argc - i;
    char **args = argv + i;

    if (cmd == "ncu-convert")
        return rest == 3 ? ncu_convert(args[0], args[1], args[2]) : usage();

    CK(cudaSetDevice(0));
    if (cmd == "props")
        return cmd_props();
    if (cmd == "clock")
        return cmd_clock();
    if (cmd == "latency")
        return cmd_latency();
    if (cmd == "launch")
        return cmd_launch();
    if (cmd == "transfers")
        return cmd_transfers();
    if (cmd == "copies")
        return cmd_copies();
    if (cmd == "sweep")
        return cmd_sweep();
    if (cmd == "occupancy")
        return cmd_occupancy();
    if (cmd == "occtable")
        return cmd_occtable();
    if (cmd == "ncu-saxpy2")
        return rest == 1 ? cmd_ncu_saxpy2(args[0]) : usage();
    if (cmd == "load")
        return rest == 2 ? cmd_load(args[0], atof(args[1])) : usage();
    return usage();
}
