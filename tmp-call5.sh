export OUT=${OUT:-/tmp/out}
export PATH=/usr/local/cuda/bin:$PATH
timeout 560 python3 bench/networks/run.py build-gpu $OUT/networks-f16.md --dtypes f16 > $OUT/networks-f16.log 2>&1; tail -8 $OUT/networks-f16.log
