export OUT=${OUT:-/tmp/out}
export PATH=/usr/local/cuda/bin:$PATH
args="-G Ninja -DCMAKE_BUILD_TYPE=Release -DJET_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DJET_BUILD_SAMPLES=OFF -DJET_TEST_NUMPY=OFF -DJET_BUILD_TRAINING=ON -DJET_FLATBUFFERS_ROOT=$PWD/.deb/flatbuffers -DCMAKE_PREFIX_PATH=$PWD/.deb/doctest/usr"
cmake -S . -B build-a $args "-DCMAKE_CUDA_FLAGS=-DTMP_NO_SHARED_ROWS -DTMP_NO_SWIZZLE" > /dev/null 2>&1
cmake -S . -B build-c $args "-DCMAKE_CUDA_FLAGS=-DTMP_NO_SWIZZLE" > /dev/null 2>&1
cmake -S . -B build-gpu $args > /dev/null 2>&1
t0=$(date +%s)
(cmake --build build-gpu -j16 --target jet_test_conv jet_test_gemm jet_runtime_test_engine jet_bench_conv > $OUT/build-b.log 2>&1; echo "build b rc $?") &
(sleep 5; cmake --build build-a -j8 --target jet_bench_conv > $OUT/build-a.log 2>&1; echo "build a rc $?") &
(sleep 10; cmake --build build-c -j8 --target jet_bench_conv > $OUT/build-c.log 2>&1; echo "build c rc $?") &
wait
echo "builds $(( $(date +%s) - t0 )) s"
grep -m3 -E "error" $OUT/build-*.log
SKIP_BUILD=1 CONV_VARIANTS=f16:nhwc bench/speed-check.sh tests 2>&1 | tail -8
for v in a c gpu; do
  build-$v/bench/jet_bench_conv --sets resnet50 --dtypes f16 --layouts nhwc --tactics --runs 5 --csv $OUT/conv_$v.csv > $OUT/conv_$v.log 2>&1
  echo "== $v"; grep -E '^(geomean ours|network)' $OUT/conv_$v.log
done
python3 tmp-ab.py $OUT/conv_a.csv $OUT/conv_gpu.csv $OUT/conv_gpu.log
python3 tmp-ab.py $OUT/conv_c.csv $OUT/conv_gpu.csv $OUT/conv_gpu.log | head -3
