// hetsim_families: times the kernel families that the GPU-model issue scores, on whatever
// GPU it runs on, and writes them as a benchmark set's CSV (docs/BENCHMARK-SETS.md):
//
//   hetsim_families time            kernel,params,reps,median_seconds,min_seconds on stdout
//   hetsim_families ncu MANIFEST    each launch of the project's own families once, for ncu;
//                                   the launches, in order, go to MANIFEST
//   hetsim_families powered         the launches a power phase is measured for: one line
//                                   each, `family,params`
//   hetsim_families load I SECONDS  launch I of `powered` back to back for SECONDS, so
//                                   that nvidia-smi samples the board power of its steady state
//
// Two groups of launches:
// - the kit's (examples/validation/data/h100/kit): its very kernels.cu and its 51 launches,
//   timed the same way (one warm-up, 10 timed launches, saxpy2_l2 20, each between its own
//   event pair; the median is the figure), so the kit can be scored on another GPU;
// - the project's own kernels of the families the issue keeps back: a 5-point stencil and a
//   naive SGEMM (reuse through L1/L2), SGEMMs tiled 16 x 16 and 32 x 32 in shared memory
//   (barriers), a block reduction (a barrier per tree level) and a tile transpose through
//   shared memory with and without bank conflicts. Their sizes keep every launch well above
//   the ≈ 18 µs floor of an isolated event-timed launch.
//
// Build: nvcc -O3 -arch=sm_XY -o hetsim_families families.cu

#include "common.cuh"

#include "../../examples/validation/data/h100/kit/kernels.cu"
#include "../../kernel/tests/kernels/sgemm_naive.cu"
#include "../../kernel/tests/kernels/sgemm_tiled.cu"
#include "../../kernel/tests/kernels/stencil5.cu"
#include "families_kernels.cu"

enum Kind {
    STRIDED,
    DAXPY2,
    SFU_LOOP,
    SAXPY2_L2,
    STENCIL5,
    SGEMM_NAIVE,
    SGEMM_TILED16,
    SGEMM_TILED32,
    BLOCK_SUM,
    TRANSPOSE_CONFLICTED,
    TRANSPOSE_PADDED,
};

// One launch: the family, its size (n, or N and M) and the kernel's other integer arguments.
struct Case {
    Kind kind;
    long n, m;     // 1D: n elements; 2D: N rows, M columns
    int p, q;      // strided: stride, intensity; daxpy2/sfu/saxpy2: intensity; block size
    int block;     // 1D kernels: threads per block
};

static std::vector<Case> kit_cases()
{
    std::vector<Case> c;
    for (int stride : {1, 2, 4, 8, 16, 32})
        for (int a : {1, 64, 512})
            c.push_back({STRIDED, 1L << 24, 0, stride, a, 256});
    for (int a : {1, 8, 64, 256, 1024})
        for (int b : {128, 256})
            c.push_back({DAXPY2, 1L << 26, 0, a, 0, b});
    for (int a : {1, 8, 64, 256, 1024})
        c.push_back({SFU_LOOP, 1L << 26, 0, a, 0, 256});
    for (long n : {1L << 14, 1L << 16, 1L << 18, 1L << 20, 1L << 21, 1L << 22, 1L << 23, 1L << 24,
                   1L << 25})
        for (int a : {1, 32})
            c.push_back({SAXPY2_L2, n, 0, a, 0, 256});
    return c;
}

static std::vector<Case> own_cases()
{
    std::vector<Case> c;
    for (long n : {4096L, 8192L, 16384L})
        c.push_back({STENCIL5, n, n, 0, 0, 0});
    c.push_back({STENCIL5, 8192, 32768, 0, 0, 0});
    c.push_back({STENCIL5, 32768, 8192, 0, 0, 0});
    for (long n : {1024L, 2048L, 4096L}) {
        c.push_back({SGEMM_NAIVE, n, n, 0, 0, 0});
        c.push_back({SGEMM_TILED16, n, n, 0, 0, 0});
        c.push_back({SGEMM_TILED32, n, n, 0, 0, 0});
    }
    for (long n : {1L << 24, 1L << 26})
        for (int b : {64, 256, 1024})
            c.push_back({BLOCK_SUM, n, 0, 0, 0, b});
    for (long n : {4096L, 8192L, 16384L}) {
        c.push_back({TRANSPOSE_CONFLICTED, n, n, 0, 0, 0});
        c.push_back({TRANSPOSE_PADDED, n, n, 0, 0, 0});
    }
    return c;
}

static const char *family(Kind k)
{
    switch (k) {
    case STRIDED: return "strided";
    case DAXPY2: return "daxpy2";
    case SFU_LOOP: return "sfu_loop";
    case SAXPY2_L2: return "saxpy2_l2";
    case STENCIL5: return "stencil5";
    case SGEMM_NAIVE: return "sgemm_naive";
    case SGEMM_TILED16: return "sgemm_tiled16";
    case SGEMM_TILED32: return "sgemm_tiled32";
    case BLOCK_SUM: return "block_sum";
    case TRANSPOSE_CONFLICTED: return "transpose_conflicted";
    case TRANSPOSE_PADDED: return "transpose_padded";
    }
    return "?";
}

// The kernel's name as ncu shows it (ncu-convert checks each profiled launch against it).
static const char *function(Kind k)
{
    switch (k) {
    case SAXPY2_L2: return "saxpy2";
    case SGEMM_TILED16: return "sgemm_tiled<16>";
    case SGEMM_TILED32: return "sgemm_tiled<32>";
    default: return family(k);
    }
}

static dim3 block_of(const Case &c)
{
    switch (c.kind) {
    case STENCIL5:
    case SGEMM_NAIVE:
    case SGEMM_TILED16: return dim3(16, 16);
    case SGEMM_TILED32: return dim3(32, 32);
    case TRANSPOSE_CONFLICTED:
    case TRANSPOSE_PADDED: return dim3(32, 8);
    default: return dim3(c.block);
    }
}

static dim3 grid_of(const Case &c)
{
    dim3 b = block_of(c);
    switch (c.kind) {
    case STENCIL5: return dim3((unsigned)((c.m + 15) / 16), (unsigned)((c.n + 15) / 16));
    case SGEMM_NAIVE:
    case SGEMM_TILED16:
    case SGEMM_TILED32: return dim3((unsigned)(c.n / b.x), (unsigned)(c.n / b.y));
    case TRANSPOSE_CONFLICTED:
    case TRANSPOSE_PADDED: return dim3((unsigned)(c.n / 32), (unsigned)(c.n / 32));
    default: return dim3((unsigned)((c.n + c.block - 1) / c.block));
    }
}

// The row's `params`: each kernel argument the application passes to kernel_params, and for
// the 2D families the launch's grid and block (gx, gy, bx, by).
static std::string params(const Case &c)
{
    auto s = [](long v) { return std::to_string(v); };
    switch (c.kind) {
    case STRIDED:
        return "n=" + s(c.n) + ";stride=" + s(c.p) + ";intensity=" + s(c.q) + ";block=" + s(c.block);
    case DAXPY2:
    case SFU_LOOP:
    case SAXPY2_L2: return "n=" + s(c.n) + ";intensity=" + s(c.p) + ";block=" + s(c.block);
    case BLOCK_SUM: return "n=" + s(c.n) + ";block=" + s(c.block);
    default: {
        dim3 g = grid_of(c), b = block_of(c);
        std::string size = c.kind == STENCIL5 ? "N=" + s(c.n) + ";M=" + s(c.m) : "N=" + s(c.n);
        return size + ";gx=" + s(g.x) + ";gy=" + s(g.y) + ";bx=" + s(b.x) + ";by=" + s(b.y);
    }
    }
}

// The case's buffers, filled as the kit fills them: x = 1.0 plus (i & 7) / 8 (sfu_loop: 0.1
// plus), y = 0.5 plus. Doubles for daxpy2.
struct Buffers {
    void *a = nullptr, *b = nullptr, *c = nullptr;

    static void *filled(size_t count, bool dbl, double base)
    {
        return device_filled(count, dbl, [=](size_t i) { return base + (double)(i & 7) / 8; });
    }

    explicit Buffers(const Case &k)
    {
        size_t n = (size_t)k.n;
        switch (k.kind) {
        case STRIDED:
            a = filled(n * k.p, false, 1.0);
            b = filled(n, false, 0.5);
            break;
        case DAXPY2:
            a = filled(n, true, 1.0);
            b = filled(n, true, 0.5);
            break;
        case SFU_LOOP:
            a = filled(n, false, 0.1);
            b = filled(n, false, 0.5);
            break;
        case SAXPY2_L2:
            a = filled(n, false, 1.0);
            b = filled(n, false, 0.5);
            break;
        case STENCIL5:
        case TRANSPOSE_CONFLICTED:
        case TRANSPOSE_PADDED:
            a = filled(n * k.m, false, 1.0);
            b = filled(n * k.m, false, 0.5);
            break;
        case SGEMM_NAIVE:
        case SGEMM_TILED16:
        case SGEMM_TILED32:
            a = filled(n * n, false, 1.0);
            b = filled(n * n, false, 1.0);
            c = filled(n * n, false, 0.5);
            break;
        case BLOCK_SUM:
            a = filled(n, false, 1.0);
            b = filled((n + k.block - 1) / k.block, false, 0.5);
            break;
        }
    }

    ~Buffers()
    {
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
    }
};

static void launch(const Case &c, const Buffers &b)
{
    dim3 g = grid_of(c), t = block_of(c);
    int n = (int)c.n;
    float *x = (float *)b.a, *y = (float *)b.b, *z = (float *)b.c;
    switch (c.kind) {
    case STRIDED: strided<<<g, t>>>(n, c.p, c.q, x, y); break;
    case DAXPY2: daxpy2<<<g, t>>>(n, c.p, (const double *)b.a, (double *)b.b); break;
    case SFU_LOOP: sfu_loop<<<g, t>>>(n, c.p, x, y); break;
    case SAXPY2_L2: saxpy2<<<g, t>>>(n, c.p, x, y); break;
    case STENCIL5: stencil5<<<g, t>>>(n, (int)c.m, x, y); break;
    case SGEMM_NAIVE: sgemm_naive<<<g, t>>>(n, x, y, z); break;
    case SGEMM_TILED16: sgemm_tiled<16><<<g, t>>>(n, x, y, z); break;
    case SGEMM_TILED32: sgemm_tiled<32><<<g, t>>>(n, x, y, z); break;
    case BLOCK_SUM: block_sum<<<g, t>>>(n, x, y); break;
    case TRANSPOSE_CONFLICTED: transpose_conflicted<<<g, t>>>(n, x, y); break;
    case TRANSPOSE_PADDED: transpose_padded<<<g, t>>>(n, x, y); break;
    }
}

// The largest launch of each family and limiter: the phases of families_power.csv, from
// which power per limiter is fitted across kernels and judged on families left out.
static std::vector<Case> powered_cases()
{
    return {
        {STRIDED, 1L << 24, 0, 1, 1, 256},       {STRIDED, 1L << 24, 0, 32, 1, 256},
        {DAXPY2, 1L << 26, 0, 1024, 0, 256},     {SFU_LOOP, 1L << 26, 0, 1024, 0, 256},
        {SAXPY2_L2, 1L << 21, 0, 1, 0, 256},     {SAXPY2_L2, 1L << 25, 0, 32, 0, 256},
        {STENCIL5, 16384, 16384, 0, 0, 0},       {SGEMM_NAIVE, 4096, 4096, 0, 0, 0},
        {SGEMM_TILED16, 4096, 4096, 0, 0, 0},    {SGEMM_TILED32, 4096, 4096, 0, 0, 0},
        {BLOCK_SUM, 1L << 26, 0, 0, 0, 256},     {TRANSPOSE_CONFLICTED, 16384, 16384, 0, 0, 0},
        {TRANSPOSE_PADDED, 16384, 16384, 0, 0, 0},
    };
}

static int cmd_powered()
{
    for (const Case &c : powered_cases())
        printf("%s,%s\n", family(c.kind), params(c).c_str());
    return 0;
}

// Launches case I back to back for `seconds`, in batches of 32 queued launches (so the GPU
// never waits for the host) with a synchronize between batches; prints the count to stderr.
static int cmd_load(int index, double seconds)
{
    std::vector<Case> cases = powered_cases();
    if (index < 0 || index >= (int)cases.size())
        die("load: no such launch (hetsim_families powered lists them)");
    const Case &c = cases[index];
    Buffers b(c);
    auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    long launches = 0;
    while (elapsed() < seconds) {
        for (int k = 0; k < 32; k++)
            launch(c, b);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        launches += 32;
    }
    fprintf(stderr, "load %s %s: %ld launches in %.1f s\n", family(c.kind), params(c).c_str(),
            launches, elapsed());
    return 0;
}

static int cmd_time()
{
    printf("kernel,params,reps,median_seconds,min_seconds\n");
    std::vector<Case> all = kit_cases();
    for (const Case &c : own_cases())
        all.push_back(c);
    for (const Case &c : all) {
        int reps = c.kind == SAXPY2_L2 ? 20 : 10;
        Buffers b(c);
        Stats s = warm_then_time(reps, [&] { launch(c, b); });
        printf("%s,%s,%d,%.9e,%.9e\n", family(c.kind), params(c).c_str(), reps, s.median, s.min);
        fflush(stdout);
    }
    return 0;
}

static int cmd_ncu(const char *manifest)
{
    FILE *f = written(manifest);
    fprintf(f, "family,kernel,params\n");
    // One launch per case, no warm-up: ncu replays each one with the caches flushed.
    for (const Case &c : own_cases()) {
        Buffers b(c);
        launch(c, b);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        fprintf(f, "%s,%s,%s\n", family(c.kind), function(c.kind), params(c).c_str());
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "time") == 0) {
        CK(cudaSetDevice(0));
        return cmd_time();
    }
    if (argc >= 3 && strcmp(argv[1], "ncu") == 0) {
        CK(cudaSetDevice(0));
        return cmd_ncu(argv[2]);
    }
    if (argc >= 2 && strcmp(argv[1], "powered") == 0)
        return cmd_powered();
    if (argc >= 4 && strcmp(argv[1], "load") == 0) {
        CK(cudaSetDevice(0));
        return cmd_load(atoi(argv[2]), atof(argv[3]));
    }
    fprintf(stderr, "usage: hetsim_families time | ncu MANIFEST | powered | load I SECONDS\n");
    return 1;
}
