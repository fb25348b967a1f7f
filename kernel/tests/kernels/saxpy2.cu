// saxpy2: the thesis kernel (seed 004, Fig. 5.1) with an unused dynamic shared-memory pad.
// Launch: grid = ceil(n/256), block = 256, dynamic shared memory 0 (or any, to cap occupancy).
// Arguments in order: n, a (compute intensity: loop trip count), x, y.
// Mangled name: _Z6saxpy2iiPfS_
__global__ void saxpy2(int n, int a, float *x, float *y)
{
    extern __shared__ float pad[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0;
        for (int k = 0; k < a; k++)
            s += x[i];
        y[i] += s;
    }
}
