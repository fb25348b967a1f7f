// hetsim_heldout: runs the held-out test kernels of kernel/tests/kernels with the launches
// their headers give (and a few larger ones), to time them with CUDA events and to profile
// them with Nsight Compute. Together with their SASS this is a test set for
// `hetsim kernel analyze` and the kernel-time models: per-warp instructions, L1 sectors and
// DRAM bytes per launch, and the time of each launch.
//
//   hetsim_heldout [--quick] list            the launches, as CSV
//   hetsim_heldout [--quick] time            heldout_times.csv on stdout
//   hetsim_heldout [--quick] ncu MANIFEST    each launch once, for ncu; the launches go to MANIFEST
//
// The kernel sources are included unchanged, so the mangled names and, for the same nvcc,
// the SASS are those of kernel/tests/sass. Their saxpy2.cu is the compiler-unrolled saxpy2
// (12 registers at sm_90), not the bench's own saxpy2.cu: the two never share a binary.
//
// Build: nvcc -O3 -arch=sm_XY -o hetsim_heldout heldout.cu

#include "common.cuh"

// Paths relative to this file, so the build works from any directory. (A bare "saxpy2.cu"
// would find bench/gpu/saxpy2.cu first.)
#include "../../kernel/tests/kernels/saxpy2.cu"
#include "../../kernel/tests/kernels/strided.cu"
#include "../../kernel/tests/kernels/daxpy_loop.cu"
#include "../../kernel/tests/kernels/sfu_loop.cu"
#include "../../kernel/tests/kernels/sgemm_naive.cu"
#include "../../kernel/tests/kernels/sgemm_tiled.cu"
#include "../../kernel/tests/kernels/stencil5.cu"

static bool g_quick = false;

enum Kind { SAXPY2, STRIDED, DAXPY, SFU, SGEMM_NAIVE, SGEMM_TILED, STENCIL5 };

// p0, p1: the kernel's two integer arguments (n and a, n and stride, N, or N and M).
// `quick`: part of the --quick smoke run. The first launch of each kernel is the one the
// golden values in kernel/tests/sass/README.md are for.
struct Case {
    Kind kind;
    int p0, p1;
    bool quick;
};

static const Case CASES[] = {
    {SAXPY2, 1 << 20, 8, true},     {SAXPY2, 1 << 20, 0, false},    {SAXPY2, 1 << 20, 1, false},
    {SAXPY2, 1 << 20, 4, false},    {SAXPY2, 1 << 20, 7, false},    {SAXPY2, 1 << 20, 16, false},
    {SAXPY2, 1 << 20, 32, false},   {SAXPY2, 1 << 20, 128, true},   {SAXPY2, 1 << 20, 1024, false},
    {SAXPY2, 1 << 24, 8, false},    {SAXPY2, 1 << 24, 128, false},
    {STRIDED, 1 << 20, 1, true},    {STRIDED, 1 << 20, 2, false},   {STRIDED, 1 << 20, 4, false},
    {STRIDED, 1 << 20, 8, false},   {STRIDED, 1 << 20, 32, true},   {STRIDED, 1 << 22, 1, false},
    {STRIDED, 1 << 22, 4, false},   {STRIDED, 1 << 22, 32, false},
    {DAXPY, 1 << 20, 8, true},      {DAXPY, 1 << 20, 1, false},     {DAXPY, 1 << 20, 32, false},
    {DAXPY, 1 << 20, 128, false},   {DAXPY, 1 << 24, 8, false},
    {SFU, 1 << 20, 8, true},        {SFU, 1 << 20, 1, false},       {SFU, 1 << 20, 32, false},
    {SFU, 1 << 24, 8, false},
    {SGEMM_NAIVE, 256, 0, true},    {SGEMM_NAIVE, 512, 0, false},   {SGEMM_NAIVE, 1024, 0, false},
    {SGEMM_NAIVE, 2048, 0, false},
    {SGEMM_TILED, 256, 0, true},    {SGEMM_TILED, 512, 0, false},   {SGEMM_TILED, 1024, 0, false},
    {SGEMM_TILED, 2048, 0, false},
    {STENCIL5, 512, 512, true},     {STENCIL5, 1000, 1000, false},  {STENCIL5, 256, 1024, false},
    {STENCIL5, 4096, 4096, false},
};

struct Launch {
    std::string kernel, source, launch, args;
    dim3 grid, block;
    size_t bytes; // device memory the case needs
};

static std::string dims(dim3 d)
{
    return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

static Launch describe(const Case &c)
{
    Launch l;
    std::string n = std::to_string(c.p0), p = std::to_string(c.p1);
    unsigned g1 = (unsigned)((c.p0 + 255) / 256);
    switch (c.kind) {
    case SAXPY2:
        l = {"saxpy2", "saxpy2.cu", "n=" + n + "_a=" + p, n + ";" + p + ";_;_", dim3(g1), dim3(256),
             2 * (size_t)c.p0 * sizeof(float)};
        break;
    case STRIDED:
        l = {"strided_copy", "strided.cu", "n=" + n + "_stride=" + p, n + ";" + p + ";_;_",
             dim3(g1), dim3(256), ((size_t)c.p0 * c.p1 + c.p0) * sizeof(float)};
        break;
    case DAXPY:
        l = {"daxpy_loop", "daxpy_loop.cu", "n=" + n + "_a=" + p, n + ";" + p + ";_;_", dim3(g1),
             dim3(256), 2 * (size_t)c.p0 * sizeof(double)};
        break;
    case SFU:
        l = {"sfu_loop", "sfu_loop.cu", "n=" + n + "_a=" + p, n + ";" + p + ";_;_", dim3(g1),
             dim3(256), 2 * (size_t)c.p0 * sizeof(float)};
        break;
    case SGEMM_NAIVE:
    case SGEMM_TILED:
        l = {c.kind == SGEMM_NAIVE ? "sgemm_naive" : "sgemm_tiled<16>",
             c.kind == SGEMM_NAIVE ? "sgemm_naive.cu" : "sgemm_tiled.cu", "N=" + n,
             n + ";_;_;_", dim3(c.p0 / 16, c.p0 / 16), dim3(16, 16),
             3 * (size_t)c.p0 * c.p0 * sizeof(float)};
        break;
    case STENCIL5:
        l = {"stencil5", "stencil5.cu", "N=" + n + "_M=" + p, n + ";" + p + ";_;_",
             dim3((c.p1 + 15) / 16, (c.p0 + 15) / 16), dim3(16, 16),
             2 * (size_t)c.p0 * c.p1 * sizeof(float)};
        break;
    }
    return l;
}

// The buffers of one case, filled with 1.0 plus small offsets (never zero, like the
// reference runs; sfu_loop and daxpy_loop stay finite for these trip counts).
struct Buffers {
    void *a = nullptr, *b = nullptr, *c = nullptr;
    static void *filled(size_t count, bool dbl)
    {
        return device_filled(count, dbl, [](size_t i) { return 1.0 + (i % 1024) * 1e-6; });
    }
    explicit Buffers(const Case &k)
    {
        size_t n = (size_t)k.p0;
        switch (k.kind) {
        case SAXPY2:
        case SFU:
            a = filled(n, false);
            b = filled(n, false);
            break;
        case STRIDED:
            a = filled(n * k.p1, false);
            b = filled(n, false);
            break;
        case DAXPY:
            a = filled(n, true);
            b = filled(n, true);
            break;
        case SGEMM_NAIVE:
        case SGEMM_TILED:
            a = filled(n * n, false);
            b = filled(n * n, false);
            c = filled(n * n, false);
            break;
        case STENCIL5:
            a = filled(n * k.p1, false);
            b = filled(n * k.p1, false);
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

static void launch(const Case &c, const Launch &l, const Buffers &b)
{
    switch (c.kind) {
    case SAXPY2:
        saxpy2<<<l.grid, l.block>>>(c.p0, c.p1, (float *)b.a, (float *)b.b);
        break;
    case STRIDED:
        strided_copy<<<l.grid, l.block>>>(c.p0, c.p1, (const float *)b.a, (float *)b.b);
        break;
    case DAXPY:
        daxpy_loop<<<l.grid, l.block>>>(c.p0, c.p1, (const double *)b.a, (double *)b.b);
        break;
    case SFU:
        sfu_loop<<<l.grid, l.block>>>(c.p0, c.p1, (const float *)b.a, (float *)b.b);
        break;
    case SGEMM_NAIVE:
        sgemm_naive<<<l.grid, l.block>>>(c.p0, (const float *)b.a, (const float *)b.b,
                                         (float *)b.c);
        break;
    case SGEMM_TILED:
        sgemm_tiled<16><<<l.grid, l.block>>>(c.p0, (const float *)b.a, (const float *)b.b,
                                             (float *)b.c);
        break;
    case STENCIL5:
        stencil5<<<l.grid, l.block>>>(c.p0, c.p1, (const float *)b.a, (float *)b.b);
        break;
    }
}

static const char *HEADER = "kernel,launch,args,grid,block,dynamic_smem,source";

static void print_ids(FILE *f, const Launch &l)
{
    fprintf(f, "%s,%s,%s,%s,%s,0,%s", l.kernel.c_str(), l.launch.c_str(), l.args.c_str(),
            dims(l.grid).c_str(), dims(l.block).c_str(), l.source.c_str());
}

// The cases this run covers: --quick's subset, and none that would not fit in memory.
static std::vector<Case> selected(bool need_gpu)
{
    size_t free_b = (size_t)-1, total_b = 0;
    if (need_gpu)
        CK(cudaMemGetInfo(&free_b, &total_b));
    std::vector<Case> out;
    for (const Case &c : CASES) {
        if (g_quick && !c.quick)
            continue;
        Launch l = describe(c);
        if (l.bytes > free_b / 10 * 9) {
            fprintf(stderr, "heldout: skipping %s %s: needs %zu B, %zu B free\n",
                    l.kernel.c_str(), l.launch.c_str(), l.bytes, free_b);
            continue;
        }
        out.push_back(c);
    }
    return out;
}

static int cmd_list()
{
    printf("%s\n", HEADER);
    for (const Case &c : selected(false)) {
        print_ids(stdout, describe(c));
        printf("\n");
    }
    return 0;
}

static int cmd_time()
{
    int reps = g_quick ? 5 : 20;
    printf("%s,reps,mean_seconds,median_seconds,min_seconds\n", HEADER);
    for (const Case &c : selected(true)) {
        Launch l = describe(c);
        Buffers b(c);
        Stats s = warm_then_time(reps, [&] { launch(c, l, b); });
        print_ids(stdout, l);
        printf(",%d,%.9e,%.9e,%.9e\n", reps, s.mean, s.median, s.min);
        fflush(stdout);
    }
    return 0;
}

static int cmd_ncu(const char *manifest)
{
    FILE *f = written(manifest);
    fprintf(f, "%s\n", HEADER);
    // One launch per case and no warm-up: ncu profiles every launch of these kernels and
    // replays each one itself, with the caches flushed before each pass.
    for (const Case &c : selected(true)) {
        Launch l = describe(c);
        Buffers b(c);
        launch(c, l, b);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        print_ids(f, l);
        fprintf(f, "\n");
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    int i = 1;
    if (i < argc && strcmp(argv[i], "--quick") == 0) {
        g_quick = true;
        i++;
    }
    if (i < argc && strcmp(argv[i], "list") == 0)
        return cmd_list();
    if (i < argc && strcmp(argv[i], "time") == 0) {
        CK(cudaSetDevice(0));
        return cmd_time();
    }
    if (i + 1 < argc && strcmp(argv[i], "ncu") == 0) {
        CK(cudaSetDevice(0));
        return cmd_ncu(argv[i + 1]);
    }
    fprintf(stderr, "usage: hetsim_heldout [--quick] list | time | ncu MANIFEST\n");
    return 1;
}
