// stencil5: 2D 5-point stencil on an N x M grid (N rows, M columns, row-major);
// interior points get the weighted sum, boundary points are copied.
// Launch: grid = (ceil(M/16), ceil(N/16)), block = (16, 16) (tests: N = M = 512).
// Arguments in order: N, M, in, out.
__global__ void stencil5(int N, int M, const float *in, float *out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;   // column
    int y = blockIdx.y * blockDim.y + threadIdx.y;   // row
    if (x >= M || y >= N)
        return;
    int idx = y * M + x;
    if (x == 0 || y == 0 || x == M - 1 || y == N - 1) {
        out[idx] = in[idx];
        return;
    }
    out[idx] = 0.5f * in[idx]
             + 0.125f * (in[idx - 1] + in[idx + 1] + in[idx - M] + in[idx + M]);
}
