// face_detect: BlazeFace on a photo, the whole pipeline a robot runs per frame.
//
//   face_detect MODEL.jet IMAGE [--device cpu|cuda] [--out annotated.png] [--runs N]
//               [--min-score S] [--json]
//
// 1. Load the image (stb_image) and the engine (jet::Engine::load).
// 2. Preprocess on the engine's device with jet::image_preprocess: letterbox to 128x128,
//    bilinear, RGB scaled to [-1, 1], written straight into the model's input tensor.
// 3. Run the context (a CUDA graph replay on CUDA).
// 4. Read the 4 outputs, decode the 896 anchors, weighted NMS, map back through the letterbox
//    transform (samples/common/blazeface.h).
// 5. Print the faces and the latency per stage (median of --runs timed runs after a warm-up),
//    and write the image with the boxes and key points drawn.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if JET_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "blazeface.h"
#include "command_line.h"
#include "image_io.h"
#include "jet/dnn.h"
#include "jet/runtime.h"
#include "model_io.h"

using namespace jet;

namespace {

const char* kUsage =
    "usage: face_detect MODEL.jet IMAGE [--device cpu|cuda] [--out annotated.png] [--runs N]\n"
    "                   [--min-score S] [--json]\n"
    "  MODEL.jet   BlazeFace front (128x128) converted with jet-convert\n"
    "  IMAGE       a PNG, JPEG or BMP photo\n"
    "  --device    cpu or cuda (default: cuda when this build has it, else cpu)\n"
    "  --out       write the photo with the faces drawn (PNG; JPEG for .jpg)\n"
    "  --runs      timed runs after one warm-up (default 20); latency is their median\n"
    "  --min-score detection threshold (default 0.75, MediaPipe's)\n"
    "  --json      print the detections and latencies as one JSON object\n";

int fail(const std::string& message) {
  std::fprintf(stderr, "face_detect: %s\n", message.c_str());
  return 1;
}

int fail(const Status& st) { return fail(st.to_string()); }

struct Args {
  std::string model, image, out;
  Backend backend = built_with_cuda() ? Backend::CUDA : Backend::CPU;
  int runs = 20;
  float min_score = 0.75f;
  bool json = false;
};

bool parse_args(int argc, char** argv, Args* a, std::string* error) {
  samples::CommandLine cl;
  if (!samples::parse_command_line(argc, argv, kUsage, {"--out", "--runs", "--min-score"}, {"--json"}, &cl, error))
    return false;
  a->backend = cl.backend;
  if (const std::string* v = cl.find("--out")) a->out = *v;
  if (!cl.whole_number("--runs", 1, 100000, &a->runs, error)) return false;
  if (const std::string* v = cl.find("--min-score")) {
    char* end = nullptr;
    const float s = std::strtof(v->c_str(), &end);
    if (v->empty() || *end != '\0' || !(s >= 0.f && s <= 1.f))
      return *error = "--min-score must be a number from 0 to 1, not '" + *v + "'", false;
    a->min_score = s;
  }
  a->json = cl.find("--json") != nullptr;
  if (cl.positional.size() != 2) return *error = "expected MODEL.jet and IMAGE", false;
  a->model = cl.positional[0];
  a->image = cl.positional[1];
  return true;
}

// The four outputs by shape: scores [1, 512, 1], [1, 384, 1]; regressors [1, 512, 16],
// [1, 384, 16] (names differ between exports).
Status find_outputs(const Engine& engine, int scores[2], int boxes[2]) {
  scores[0] = scores[1] = boxes[0] = boxes[1] = -1;
  for (int i = 0; i < engine.num_outputs(); ++i) {
    const TensorInfo& t = engine.tensor(engine.output(i));
    int64_t n = 1;
    for (int64_t d : t.dims) n *= d;
    const int64_t last = t.dims.empty() ? 0 : t.dims.back();
    for (int layer = 0; layer < 2; ++layer) {
      if (n == blazeface::kLayerAnchors[layer] && last == 1) scores[layer] = engine.output(i);
      if (n == blazeface::kLayerAnchors[layer] * blazeface::kValuesPerAnchor &&
          last == blazeface::kValuesPerAnchor)
        boxes[layer] = engine.output(i);
    }
  }
  for (int layer = 0; layer < 2; ++layer)
    if (scores[layer] < 0 || boxes[layer] < 0)
      return Status(StatusCode::BAD_PARAM,
                    "the model's outputs are not BlazeFace front's (scores [1, 512, 1] and "
                    "[1, 384, 1], regressors [1, 512, 16] and [1, 384, 16])");
  return Status();
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  std::string error;
  if (!parse_args(argc, argv, &args, &error)) {
    std::fprintf(stderr, "face_detect: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  std::shared_ptr<Engine> engine;
  Status st = samples::load_model(args.model, args.backend, &engine);
  if (!st.ok()) return fail(st);
  samples::Image image;
  if (!samples::load_image(args.image, 3, &image, &error)) return fail(error);
  if (engine->num_inputs() != 1) return fail(args.model + ": BlazeFace has one input");
  const int input = engine->input(0);
  TensorDesc input_desc;
  st = samples::image_input_desc(engine->tensor(input), &input_desc);
  if (!st.ok()) return fail(st);
  if (input_desc.dim(1) != 3 || input_desc.dim(2) != blazeface::kInputSize ||
      input_desc.dim(3) != blazeface::kInputSize)
    return fail(args.model + ": the input must be a 128x128 RGB image (BlazeFace front)");
  int score_out[2], box_out[2];
  st = find_outputs(*engine, score_out, box_out);
  if (!st.ok()) return fail(args.model + ": " + st.message());

  std::unique_ptr<ExecutionContext> ctx;
  st = engine->create_context(&ctx);
  if (!st.ok()) return fail(st);

  cudaStream_t stream = nullptr;
  Handle handle = Handle::cpu();
#if JET_HAVE_CUDA
  if (args.backend == Backend::CUDA) {
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
      return fail("cannot create a CUDA stream");
    st = Handle::cuda(engine->device(), stream, &handle);
    if (!st.ok()) return fail(st);
  }
#endif

  // BlazeFace's input: the photo letterboxed to 128x128 (black borders), RGB in [-1, 1].
  ImagePreprocessDesc pre;
  pre.fit = ImageFit::LETTERBOX;
  pre.resize = ImageResize::BILINEAR;
  for (int c = 0; c < 3; ++c) {
    pre.scale[c] = 2.f / 255.f;
    pre.offset[c] = -1.f;
  }
  pre.pad_value = 0.f;

  blazeface::Options bf;
  bf.min_score = args.min_score;
  blazeface::Postprocess post(bf);
  std::vector<blazeface::Detection> faces;
  std::vector<float> scores[2], boxes[2];
  samples::ImageBuffer source;
  ImageTransform transform;

  // One pass: upload, preprocess, inference, postprocess; each stage timed to completion.
  std::vector<double> t_upload, t_pre, t_infer, t_post, t_total;
  for (int run = 0; run <= args.runs; ++run) {  // run 0 is the warm-up
    const Clock::time_point start = Clock::now();
    st = source.upload(args.backend, image, stream);
    if (st.ok()) st = samples::synchronize(args.backend, stream);
    if (!st.ok()) return fail(st);
    const double upload = ms_since(start);

    Clock::time_point t = Clock::now();
    st = image_preprocess(handle, pre, source.desc(), source.data(), 1.f, 0.f, input_desc,
                          ctx->tensor_data(input), &transform);
    if (!st.ok()) return fail(st);
    st = samples::synchronize(args.backend, stream);
    if (!st.ok()) return fail(st);
    const double preprocess = ms_since(t);

    t = Clock::now();
#if JET_HAVE_CUDA
    // After the warm-up run, replay the pass as a CUDA graph (as a camera loop would).
    if (args.backend == Backend::CUDA && run == 1 && !ctx->has_graph()) {
      const Status cap = ctx->capture(stream);
      if (!cap.ok() && !args.json)
        std::printf("note: running without a CUDA graph: %s\n", cap.to_string().c_str());
    }
#endif
    st = ctx->run(stream);
    if (!st.ok()) return fail(st);
    st = samples::synchronize(args.backend, stream);
    if (!st.ok()) return fail(st);
    const double inference = ms_since(t);

    t = Clock::now();
    for (int layer = 0; layer < 2; ++layer) {
      st = samples::read_tensor(*ctx, score_out[layer], &scores[layer]);
      if (st.ok()) st = samples::read_tensor(*ctx, box_out[layer], &boxes[layer]);
      if (!st.ok()) return fail(st);
    }
    blazeface::RawOutputs raw;
    for (int layer = 0; layer < 2; ++layer) {
      raw.scores[layer] = scores[layer].data();
      raw.boxes[layer] = boxes[layer].data();
    }
    post.run(raw, transform, &faces);
    const double postprocess = ms_since(t);
    if (run > 0) {
      t_upload.push_back(upload);
      t_pre.push_back(preprocess);
      t_infer.push_back(inference);
      t_post.push_back(postprocess);
      t_total.push_back(ms_since(start));
    }
  }

  const char* device = args.backend == Backend::CUDA ? "cuda" : "cpu";
  // The weights' precision (jet-convert --precision): f16 when any constant is f16.
  const char* weights = "f32";
  for (int i = 0; i < engine->num_tensors(); ++i)
    if (engine->tensor(i).role == TensorRole::CONSTANT && engine->tensor(i).dtype == DType::F16) weights = "f16";
  if (args.json) {
    std::printf("{\"device\": \"%s\", \"image\": {\"width\": %d, \"height\": %d}, \"faces\": [",
                device, image.width, image.height);
    for (size_t i = 0; i < faces.size(); ++i) {
      const blazeface::Detection& f = faces[i];
      std::printf("%s{\"box\": [%.3f, %.3f, %.3f, %.3f], \"score\": %.5f, \"keypoints\": [", i ? ", " : "",
                  f.xmin, f.ymin, f.xmax, f.ymax, f.score);
      for (int k = 0; k < blazeface::kKeypoints; ++k)
        std::printf("%s[%.3f, %.3f]", k ? ", " : "", f.keypoints[k][0], f.keypoints[k][1]);
      std::printf("]}");
    }
    std::printf("], \"candidates\": %d, \"runs\": %d, \"median_ms\": {\"upload\": %.4f, "
                "\"preprocess\": %.4f, \"inference\": %.4f, \"postprocess\": %.4f, \"total\": %.4f}}\n",
                post.candidate_count(), args.runs, median(t_upload), median(t_pre), median(t_infer),
                median(t_post), median(t_total));
  } else {
    std::printf("face_detect: %s on %s (%dx%d), device %s, %s weights\n", args.model.c_str(),
                args.image.c_str(), image.width, image.height, device, weights);
    std::printf("%zu face%s (%d anchors above %.2f before weighted NMS):\n", faces.size(),
                faces.size() == 1 ? "" : "s", post.candidate_count(), static_cast<double>(args.min_score));
    for (size_t i = 0; i < faces.size(); ++i) {
      const blazeface::Detection& f = faces[i];
      std::printf("  face %zu: box x %.1f..%.1f, y %.1f..%.1f (%.0f x %.0f px), score %.3f\n", i + 1,
                  f.xmin, f.xmax, f.ymin, f.ymax, f.xmax - f.xmin, f.ymax - f.ymin, f.score);
      std::printf("          eyes (%.0f, %.0f) (%.0f, %.0f), nose (%.0f, %.0f), mouth (%.0f, %.0f)\n",
                  f.keypoints[0][0], f.keypoints[0][1], f.keypoints[1][0], f.keypoints[1][1],
                  f.keypoints[2][0], f.keypoints[2][1], f.keypoints[3][0], f.keypoints[3][1]);
    }
    std::printf("latency, median of %d runs after a warm-up (ms): upload %.3f, preprocess %.3f, "
                "inference %.3f, postprocess %.3f, total %.3f\n",
                args.runs, median(t_upload), median(t_pre), median(t_infer), median(t_post),
                median(t_total));
  }

  if (!args.out.empty()) {
    samples::Image annotated = image;
    const uint8_t green[3] = {40, 255, 40}, red[3] = {255, 40, 40};
    const int thickness = std::max(2, std::min(image.width, image.height) / 200);
    for (const blazeface::Detection& f : faces) {
      samples::draw_box(&annotated, f.xmin, f.ymin, f.xmax, f.ymax, green, thickness);
      for (int k = 0; k < blazeface::kKeypoints; ++k)
        samples::draw_dot(&annotated, f.keypoints[k][0], f.keypoints[k][1], thickness, red);
    }
    if (!samples::write_image(args.out, annotated, &error)) return fail(error);
    if (!args.json) std::printf("wrote %s\n", args.out.c_str());
  }
#if JET_HAVE_CUDA
  if (stream) cudaStreamDestroy(stream);
#endif
  return 0;
}
