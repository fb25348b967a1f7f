// sfu_loop: a loop of fast-math intrinsics (__expf, __sinf -> MUFU.EX2 / MUFU.SIN), a times.
// Launch: grid = ceil(n/256), block = 256 (tests: n = 2^20, a = 8).
// Arguments in order: n, a, x, y.
__global__ void sfu_loop(int n, int a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        for (int k = 0; k < a; k++)
            v = __sinf(__expf(v));
        y[i] = v;
    }
}
