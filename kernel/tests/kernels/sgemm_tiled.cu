// sgemm_tiled<TILE>: C = A*B, square N x N, row-major, shared-memory tiles of TILE x TILE.
// Requires N % TILE == 0. Instantiated for TILE = 16:
//   demangled name: void sgemm_tiled<16>(int, float const*, float const*, float*)
// Launch: grid = (N/16, N/16), block = (16, 16) (tests: N = 256).
// Arguments in order: N, A, B, C.
template <int TILE>
__global__ void sgemm_tiled(int N, const float *A, const float *B, float *C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < N / TILE; t++) {
        As[ty][tx] = A[row * N + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * N + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * N + col] = acc;
}

template __global__ void sgemm_tiled<16>(int, const float *, const float *, float *);
