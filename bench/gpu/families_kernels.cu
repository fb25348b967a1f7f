// The project's own kernels of the families the GPU-model issue keeps back (shared-memory
// tiling, block barriers, data reuse), beside kernel/tests/kernels' sgemm_naive, stencil5
// and sgemm_tiled. Timed by families.cu; every launch is described in its CSV.

// sgemm_tiled with 32 x 32 tiles: block (32, 32), 1024 threads, 8 KiB of shared memory.
template __global__ void sgemm_tiled<32>(int, const float *, const float *, float *);

// block_sum: each block sums blockDim.x elements through a shared-memory tree, one
// __syncthreads() per level (log2(blockDim.x) + 1 barriers), and writes one partial sum.
// Launch: grid = ceil(n / block), block = 64 … 1024 (a power of two).
// Arguments in order: n, x (n floats), partial (one float per block).
__global__ void block_sum(int n, const float *x, float *partial)
{
    __shared__ float s[1024];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h)
            s[threadIdx.x] += s[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s[0];
}

// A 32 x 32 tile transposed through shared memory; PAD = 0 makes the column reads of the
// tile 32-way bank conflicts, PAD = 1 makes them conflict-free.
template <int PAD>
__device__ __forceinline__ void transpose_tile(int N, const float *in, float *out)
{
    __shared__ float t[32][32 + PAD];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        t[threadIdx.y + j][threadIdx.x] = in[(y + j) * N + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        out[(y + j) * N + x] = t[threadIdx.x][threadIdx.y + j];
}

// transpose_conflicted / transpose_padded: out = in^T, N x N, N % 32 == 0.
// Launch: grid = (N / 32, N / 32), block = (32, 8). Arguments in order: N, in, out.
__global__ void transpose_conflicted(int N, const float *in, float *out)
{
    transpose_tile<0>(N, in, out);
}

__global__ void transpose_padded(int N, const float *in, float *out)
{
    transpose_tile<1>(N, in, out);
}
