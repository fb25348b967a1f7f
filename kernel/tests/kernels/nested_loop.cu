// nested_loop: an inner loop of m trips in an outer loop whose counter doubles (plus one)
// up to n, so the outer loop is not affine and is never skipped. With m = 1 the inner loop's
// header is visited once per outer trip, and the outer counter, outside the inner loop's
// body, decides alone when the outer loop ends (the emulator's loop skipping must not follow
// the inner loop there).
// Launch: grid = 4, block = 64 (tests: n = 2^20, m = 1 and 40).
// Arguments in order: n, m, x, y.
__global__ void nested_loop(int n, int m, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
#pragma unroll 1
    for (int r = 1; r < n; r = 2 * r + 1) {
#pragma unroll 1
        for (int k = 0; k < m; k++)
            s = s * 0.5f + x[i + k * 32];
        y[i] = s;
    }
}
