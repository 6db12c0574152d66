set -x
export OUT=${OUT:-/tmp/out}
CONV_VARIANTS=f16:nhwc NETS="resnet50 resnet50:32" NET_VARIANTS=f16nhwc bench/speed-check.sh tests conv nets 2>&1 | tail -40
python3 tmp-k64.py $OUT/conv_r50_f16.csv $OUT/conv_r50_f16.log
