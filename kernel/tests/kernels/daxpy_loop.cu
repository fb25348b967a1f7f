// daxpy_loop: double-precision analogue of saxpy2: a dependent DFMA chain of length a.
// Launch: grid = ceil(n/256), block = 256 (tests: n = 2^20, a = 8).
// Arguments in order: n, a, x, y.
__global__ void daxpy_loop(int n, int a, const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double s = 0.0;
        for (int k = 0; k < a; k++)
            s = s * x[i] + 1.0;
        y[i] += s;
    }
}
