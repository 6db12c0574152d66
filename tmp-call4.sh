export OUT=${OUT:-/tmp/out}
export PATH=/usr/local/cuda/bin:$PATH
args="-G Ninja -DCMAKE_BUILD_TYPE=Release -DJET_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DJET_BUILD_SAMPLES=OFF -DJET_TEST_NUMPY=OFF -DJET_BUILD_TRAINING=ON -DJET_FLATBUFFERS_ROOT=$PWD/.deb/flatbuffers -DCMAKE_PREFIX_PATH=$PWD/.deb/doctest/usr"
cmake -S . -B build-a $args "-DCMAKE_CUDA_FLAGS=-DTMP_LATE_EROWS" > /dev/null 2>&1
cmake -S . -B build-gpu $args > /dev/null 2>&1
t0=$(date +%s)
(cmake --build build-gpu -j16 --target jet_test_conv jet_test_gemm jet_runtime_test_engine jet_bench_conv jet-bench jet-make-model jet_bench_cuda_ops > $OUT/build-b.log 2>&1; echo "build b rc $?") &
(sleep 5; cmake --build build-a -j8 --target jet_bench_conv > $OUT/build-a.log 2>&1; echo "build a rc $?") &
wait
echo "builds $(( $(date +%s) - t0 )) s"
grep -m3 -E "error" $OUT/build-*.log
SKIP_BUILD=1 bench/speed-check.sh tests 2>&1 | tail -8
for v in a gpu; do
  build-$v/bench/jet_bench_conv --sets resnet50 --dtypes f16 --layouts nhwc --tactics --runs 5 --csv $OUT/conv_$v.csv > $OUT/conv_$v.log 2>&1
  echo "== $v"; grep -E '^(geomean ours|network)' $OUT/conv_$v.log
done
python3 tmp-ab.py $OUT/conv_a.csv $OUT/conv_gpu.csv $OUT/conv_gpu.log | head -3
build-gpu/bench/jet_bench_cuda_ops > $OUT/cuda_ops.txt 2>&1; grep -E "^summary|2048x1000" $OUT/cuda_ops.txt | head -8

