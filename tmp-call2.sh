export OUT=${OUT:-/tmp/out}
CONV_VARIANTS=f16:nhwc NCU_DETAIL_N=32 NCU_DETAIL_LAYER='res2*_branch2c' NCU_KERNEL='MmaTile<.int.128, .int.128, .*RowsLoader.*ConvEpi' bench/speed-check.sh tests conv ncu-source 2>&1 | tail -120
