// saxpy2: the thesis kernel (seed 004, Fig. 5.1) as ../shared/measurements timed it.
//
// - `pad[]` is never read: it only lets a launch's dynamic shared memory cap the occupancy.
// - x[i] is read once into a register and the loop is kept rolled. With nvcc 13.0
//   -O3 -arch=sm_90 this gives, instruction for instruction, the reference listing
//   saxpy2_sm90.sass (8 registers, loop body UIADD3/FADD/ISETP/BRA, 26 + 4a instructions
//   per warp). The copy in kernel/tests/kernels/saxpy2.cu is unrolled by the compiler
//   (12 registers) and is profiled separately as a held-out kernel.
//
// Launch: grid = n / block, any block size, dynamic shared memory 0 or more.
// Arguments in order: n, a (compute intensity: loop trip count), x, y.
// Mangled name: _Z6saxpy2iiPfS_
__global__ void saxpy2(int n, int a, float *x, float *y)
{
    extern __shared__ float pad[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float xi = x[i];
        float s = 0;
#pragma unroll 1
        for (int k = 0; k < a; k++)
            s += xi;
        y[i] += s;
    }
}
