#!/usr/bin/env bash
# Regenerates kernel/tests/sass/*.sass from the .cu files here. Needs the PyPI CUDA wheels
# described in kernel/tests/sass/README.md; set CU13 / DIS / CU118 to where they were installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../sass
CU13=${CU13:-/tmp/cuda/n130/nvidia/cu13/bin}          # nvcc 13.0.88 + cuobjdump 13.2.51
DIS=${DIS:-/tmp/cuda/dis132/nvidia/cu13/bin}          # nvdisasm 13.2.51 (cuobjdump calls it)
CU118=${CU118:-/tmp/cu118tk/bin}                      # CUDA 11.8.89 toolkit (see README)
export PATH=$DIS:$PATH
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$here"

# 1. every kernel on its own, sm_90
for f in saxpy2 saxpy2_unroll1 strided daxpy_loop sfu_loop sgemm_naive sgemm_tiled stencil5 nested_loop all_kernels; do
    "$CU13/nvcc" -O3 -arch=sm_90 -cubin -o "$tmp/$f.cubin" "$f.cu"
    "$CU13/cuobjdump" -sass "$tmp/$f.cubin" > "$out/${f}_sm90.sass"
done
{ echo "# cuobjdump -res-usage all_kernels.cubin (sm_90)"; "$CU13/cuobjdump" -res-usage "$tmp/all_kernels.cubin"
  echo; echo "# cuobjdump -res-usage saxpy2_unroll1.cubin (sm_90)"; "$CU13/cuobjdump" -res-usage "$tmp/saxpy2_unroll1.cubin"; } > "$out/res_usage_sm90.txt"

# 2. all_kernels for the archs nvcc 13 still compiles
for a in 75 80 86 89; do
    "$CU13/nvcc" -O3 -arch=sm_$a -cubin -o "$tmp/all_$a.cubin" all_kernels.cu
    "$CU13/cuobjdump" -sass "$tmp/all_$a.cubin" > "$out/all_kernels_sm$a.sass"
done

# 3. sm_52 / sm_61 / sm_70: CUDA 13 dropped them (its nvdisasm refuses them too), so CUDA 11.8.
for a in 52 61 70; do
    "$CU118/nvcc" -O3 -arch=sm_$a -cubin -allow-unsupported-compiler -o "$tmp/all_$a.cubin" all_kernels.cu
    PATH=$CU118:$PATH "$CU118/cuobjdump" -sass "$tmp/all_$a.cubin" > "$out/all_kernels_sm$a.sass"
done

# 4. a two-arch fatbinary, as it sits in an executable
"$CU13/nvcc" -O3 -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
    -o "$tmp/all.fatbin" all_kernels.cu
"$CU13/cuobjdump" -sass "$tmp/all.fatbin" > "$out/all_kernels_fatbin.sass"
