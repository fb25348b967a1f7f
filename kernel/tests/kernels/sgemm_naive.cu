// sgemm_naive: C = A*B, square N x N, row-major, one thread per element of C.
// Launch: grid = (N/16, N/16), block = (16, 16) (tests: N = 256).
// Arguments in order: N, A, B, C.
__global__ void sgemm_naive(int N, const float *A, const float *B, float *C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < N && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < N; k++)
            acc += A[row * N + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
