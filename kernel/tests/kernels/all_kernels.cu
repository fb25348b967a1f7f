// all_kernels: every test kernel in one translation unit, so one cubin holds them all.
// See each included file for its intended launch and arguments.
#include "saxpy2.cu"
#include "strided.cu"
#include "daxpy_loop.cu"
#include "sfu_loop.cu"
#include "sgemm_naive.cu"
#include "sgemm_tiled.cu"
#include "stencil5.cu"
