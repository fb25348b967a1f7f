// common.cuh: error checking, statistics, CSV helpers and the ncu-CSV reader shared by
// hetsim_gpu_bench.cu and heldout.cu. Host code only; no kernels here.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Every CUDA call is checked: a silently failed launch would write plausible-looking times.
#define CK(call)                                                                      \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,      \
                    cudaGetErrorString(err_));                                        \
            exit(2);                                                                  \
        }                                                                             \
    } while (0)

// A launch error only shows on the next call; check right after each launch.
#define CK_LAUNCH() CK(cudaGetLastError())

static inline void die(const char *msg)
{
    fprintf(stderr, "error: %s\n", msg);
    exit(2);
}

// The file at `path`, open for writing, or the program's end with a message.
static inline FILE *written(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot write the manifest");
    return f;
}

struct Stats {
    double mean, median, min;
};

// A device buffer of `count` doubles (`dbl`) or floats, element i set to value(i).
template <class V>
static inline void *device_filled(size_t count, bool dbl, V value)
{
    void *d = nullptr;
    CK(cudaMalloc(&d, count * (dbl ? 8 : 4)));
    if (dbl) {
        std::vector<double> h(count);
        for (size_t i = 0; i < count; i++)
            h[i] = value(i);
        CK(cudaMemcpy(d, h.data(), count * 8, cudaMemcpyHostToDevice));
    } else {
        std::vector<float> h(count);
        for (size_t i = 0; i < count; i++)
            h[i] = (float)value(i);
        CK(cudaMemcpy(d, h.data(), count * 4, cudaMemcpyHostToDevice));
    }
    return d;
}

static inline Stats stats_of(std::vector<double> v)
{
    Stats s{0, 0, 0};
    if (v.empty())
        return s;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v)
        sum += x;
    s.mean = sum / v.size();
    size_t m = v.size() / 2;
    s.median = v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
    s.min = v.front();
    return s;
}

// Times `reps` launches, each between its own pair of events. The launches are queued
// back to back and read after one synchronize, so the host's submission time is not in
// the figures (the GPU never waits for the next launch). `launch` enqueues one kernel.
template <class F>
static inline std::vector<double> time_each(int reps, F launch, cudaStream_t stream = 0)
{
    std::vector<cudaEvent_t> start(reps), stop(reps);
    for (int r = 0; r < reps; r++) {
        CK(cudaEventCreate(&start[r]));
        CK(cudaEventCreate(&stop[r]));
    }
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(start[r], stream));
        launch();
        CK_LAUNCH();
        CK(cudaEventRecord(stop[r], stream));
    }
    CK(cudaStreamSynchronize(stream));
    std::vector<double> seconds(reps);
    for (int r = 0; r < reps; r++) {
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, start[r], stop[r]));
        seconds[r] = ms * 1e-3;
        CK(cudaEventDestroy(start[r]));
        CK(cudaEventDestroy(stop[r]));
    }
    return seconds;
}

// One warm-up launch, then `reps` launches timed as time_each does: their statistics.
template <class F>
static inline Stats warm_then_time(int reps, F launch)
{
    launch();
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    return stats_of(time_each(reps, launch));
}

// Elapsed seconds between two events already recorded and completed.
static inline double event_seconds(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1e-3;
}

static inline double wall_now()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// ---------------------------------------------------------------------------------------
// CSV reading, for the manifests we write and for `ncu --csv --page raw` output. ncu quotes
// every field and never puts a newline inside one, so a line-based reader is enough.

static inline std::vector<std::string> csv_split(const std::string &line)
{
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); i++) {
        char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                cur += '"';
                i++;
            } else if (c == '"') {
                quoted = false;
            } else {
                cur += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(cur);
            cur.clear();
        } else if (c != '\r' && c != '\n') {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

static inline std::vector<std::string> read_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "error: cannot read %s\n", path);
        exit(2);
    }
    std::vector<std::string> lines;
    std::string cur;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (c == '\n') {
            lines.push_back(cur);
            cur.clear();
        } else {
            cur += (char)c;
        }
    }
    if (!cur.empty())
        lines.push_back(cur);
    fclose(f);
    return lines;
}

static inline int column_of(const std::vector<std::string> &header, const std::string &name)
{
    for (size_t i = 0; i < header.size(); i++)
        if (header[i] == name)
            return (int)i;
    return -1;
}

// ncu may print a number with thousands separators ("15,728,640") depending on version and
// locale; the CSV we write must hold plain numbers like the reference files.
static inline std::string plain_number(const std::string &v)
{
    std::string out;
    for (char c : v)
        if (c != ',' && c != ' ')
            out += c;
    return out;
}

// "(256, 1, 1)" -> "256x1x1"; "256" -> "256x1x1".
static inline std::string dims_xyz(const std::string &v)
{
    std::vector<long> d;
    long cur = -1;
    for (char c : v) {
        if (c >= '0' && c <= '9') {
            cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
        } else if (cur >= 0) {
            d.push_back(cur);
            cur = -1;
        }
    }
    if (cur >= 0)
        d.push_back(cur);
    while (d.size() < 3)
        d.push_back(1);
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// Joins an `ncu --csv --page raw --print-units base` report with the manifest the profiled
// program wrote (one row per launch, same order) and prints manifest columns followed by
// the metric columns in `metrics` order. Checks that the launch count and every launch's
// grid and block agree, so a stray or missing kernel cannot shift the rows silently.
static inline int ncu_convert(const char *raw_path, const char *manifest_path, const char *metrics_arg)
{
    std::vector<std::string> metrics;
    {
        std::string cur;
        for (const char *p = metrics_arg;; p++) {
            if (*p == ',' || *p == 0) {
                if (!cur.empty())
                    metrics.push_back(cur);
                cur.clear();
                if (*p == 0)
                    break;
            } else {
                cur += *p;
            }
        }
    }

    std::vector<std::string> raw = read_lines(raw_path);
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    for (const std::string &line : raw) {
        if (line.rfind("\"ID\"", 0) == 0) {
            header = csv_split(line);
            continue;
        }
        if (header.empty() || line.empty() || line[0] != '"')
            continue; // ==PROF== messages and anything before the table
        std::vector<std::string> f = csv_split(line);
        if (f.empty() || f[0].empty())
            continue; // the units row has an empty ID
        rows.push_back(f);
    }
    if (header.empty()) {
        fprintf(stderr, "error: %s holds no ncu raw CSV table (no \"ID\" header)\n", raw_path);
        return 2;
    }
    std::vector<int> mcol;
    for (const std::string &m : metrics) {
        int c = column_of(header, m);
        if (c < 0) {
            fprintf(stderr, "error: metric %s is not in %s\n", m.c_str(), raw_path);
            return 2;
        }
        mcol.push_back(c);
    }
    int grid_col = column_of(header, "Grid Size");
    int block_col = column_of(header, "Block Size");
    int name_col = column_of(header, "Kernel Name");

    std::vector<std::string> man = read_lines(manifest_path);
    if (man.empty()) {
        fprintf(stderr, "error: empty manifest %s\n", manifest_path);
        return 2;
    }
    std::vector<std::string> mhead = csv_split(man[0]);
    std::vector<std::vector<std::string>> mrows;
    for (size_t i = 1; i < man.size(); i++)
        if (!man[i].empty())
            mrows.push_back(csv_split(man[i]));
    if (mrows.size() != rows.size()) {
        fprintf(stderr, "error: %zu launches in the manifest %s but %zu profiled in %s\n",
                mrows.size(), manifest_path, rows.size(), raw_path);
        return 2;
    }
    // The manifest names its launch geometry either as 1-D grid_size/block_size or as
    // XxYxZ grid/block.
    int mg = column_of(mhead, "grid_size"), mb = column_of(mhead, "block_size");
    if (mg < 0)
        mg = column_of(mhead, "grid");
    if (mb < 0)
        mb = column_of(mhead, "block");
    int mk = column_of(mhead, "kernel");

    for (size_t i = 0; i < mhead.size(); i++)
        printf("%s%s", i ? "," : "", mhead[i].c_str());
    for (const std::string &m : metrics)
        printf(",%s", m.c_str());
    printf("\n");
    for (size_t r = 0; r < rows.size(); r++) {
        const std::vector<std::string> &f = rows[r];
        const std::vector<std::string> &m = mrows[r];
        if (grid_col >= 0 && mg >= 0 && dims_xyz(f[grid_col]) != dims_xyz(m[mg])) {
            fprintf(stderr, "error: launch %zu: ncu grid %s, manifest grid %s\n", r,
                    f[grid_col].c_str(), m[mg].c_str());
            return 2;
        }
        if (block_col >= 0 && mb >= 0 && dims_xyz(f[block_col]) != dims_xyz(m[mb])) {
            fprintf(stderr, "error: launch %zu: ncu block %s, manifest block %s\n", r,
                    f[block_col].c_str(), m[mb].c_str());
            return 2;
        }
        if (name_col >= 0 && mk >= 0) {
            std::string base = m[mk].substr(0, m[mk].find('<'));
            if (f[name_col].find(base) == std::string::npos) {
                fprintf(stderr, "error: launch %zu: ncu kernel %s, manifest kernel %s\n", r,
                        f[name_col].c_str(), m[mk].c_str());
                return 2;
            }
        }
        for (size_t i = 0; i < m.size(); i++)
            printf("%s%s", i ? "," : "", m[i].c_str());
        for (int c : mcol)
            printf(",%s", plain_number(f[c]).c_str());
        printf("\n");
    }
    return 0;
}
