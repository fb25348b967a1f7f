// strided_copy: y[i] = x[i*stride] for i < n (gather with a constant stride).
// Launch: grid = ceil(n/256), block = 256 (tests: n = 2^20, stride 1, 2, 4, 32).
// Arguments in order: n, stride, x (n*stride floats), y (n floats).
__global__ void strided_copy(int n, int stride, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i * stride];
}
