// saxpy2_unroll1: saxpy2 with "#pragma unroll 1" on the loop (kernel name unchanged).
// Its sm_90 loop body is the 4-instruction one of shared/measurements/h100/saxpy2_sm90.sass.
// Launch: grid = ceil(n/256), block = 256, dynamic shared memory 0 (or any, to cap occupancy).
// Arguments in order: n, a (compute intensity: loop trip count), x, y.
// Mangled name: _Z6saxpy2iiPfS_
__global__ void saxpy2(int n, int a, float *x, float *y)
{
    extern __shared__ float pad[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0;
        #pragma unroll 1
        for (int k = 0; k < a; k++)
            s += x[i];
        y[i] += s;
    }
}
