// The camera loop end to end: BlazeFace (tests/networks' converted model) on a directory of real
// photos (skimage's), warm-up frames, then 50 frames with this thread's heap allocations counted
// (tests/common/alloc_counter.cpp, compiled into this executable): exactly 0. Every frame's
// detections are those of the same steps done one at a time on that frame (image_preprocess, run,
// blazeface::Postprocess): bit for bit on the CPU; on CUDA (skipped, saying so, without a GPU)
// the confident faces agree with the CPU's (IoU >= 0.9, score within 0.02), no device memory is
// allocated and the pipeline is a CUDA graph replay, with uploaded and with mapped frames.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "blazeface.h"
#include "camera_loop.h"
#include "common/alloc_counter.h"
#include "device_memory.h"
#include "model_io.h"

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

using namespace jet;
using namespace jet::camera;

namespace {

constexpr int kWarmup = 5;
constexpr int kFrames = 50;
constexpr size_t kMaxFaces = 16;

// What one frame's callback saw, copied into preallocated storage (the callback runs while the
// counter is armed: it must not allocate either).
struct Seen {
  FrameSize size;
  size_t count = 0;
  blazeface::Detection faces[kMaxFaces];
};

std::shared_ptr<Engine> load(Backend backend) {
  LoadOptions options;
  options.backend = backend;
  std::shared_ptr<Engine> engine;
  const Status st = Engine::load(JET_CAMERA_TEST_MODEL, options, &engine);
  INFO(st.to_string());
  REQUIRE(st.ok());
  return engine;
}

// The plain pipeline, one step after another on the CPU, for the first `frames` frames of a
// fresh source over the same directory.
std::vector<std::vector<blazeface::Detection>> plain_pipeline(int frames) {
  std::shared_ptr<Engine> engine = load(Backend::CPU);
  std::unique_ptr<ExecutionContext> ctx;
  REQUIRE(engine->create_context(&ctx).ok());
  TensorDesc input;
  REQUIRE(samples::image_input_desc(engine->tensor(engine->input(0)), &input).ok());
  blazeface::RawOutputs raw;
  for (int i = 0; i < engine->num_outputs(); ++i) {
    const TensorInfo& t = engine->tensor(engine->output(i));
    const float* data = static_cast<const float*>(ctx->tensor_data(engine->output(i)));
    const int64_t anchors = t.dims.size() == 3 ? t.dims[1] : 0;
    const int layer = anchors == 512 ? 0 : anchors == 384 ? 1 : -1;
    REQUIRE(layer >= 0);
    (t.dims[2] == 1 ? raw.scores[layer] : raw.boxes[layer]) = data;
  }
  ImagePreprocessDesc pre;
  for (int c = 0; c < 3; ++c) {
    pre.scale[c] = 2.f / 255.f;
    pre.offset[c] = -1.f;
  }
  blazeface::Postprocess post;
  std::unique_ptr<FrameSource> source;
  REQUIRE(open_frame_source(JET_CAMERA_TEST_IMAGES, &source).ok());
  std::vector<uint8_t> frame(static_cast<size_t>(source->max_width()) * source->max_height() * 3);
  std::vector<std::vector<blazeface::Detection>> out;
  for (int n = 0; n < frames; ++n) {
    FrameSize size;
    REQUIRE(source->read(frame.data(), frame.size(), &size).ok());
    ImageDesc image;
    image.width = size.width;
    image.height = size.height;
    image.row_bytes = size.width * 3;
    ImageTransform transform;
    REQUIRE(image_preprocess(Handle::cpu(), pre, image, frame.data(), 1.f, 0.f, input,
                             ctx->tensor_data(engine->input(0)), &transform).ok());
    REQUIRE(ctx->run().ok());
    std::vector<blazeface::Detection> faces;
    post.run(raw, transform, &faces);
    out.push_back(faces);
  }
  return out;
}

// Warm-up, then kFrames frames with the allocation counter armed. Returns the count.
long run_counted(CameraLoop& loop, std::vector<Seen>* seen) {
  seen->assign(kWarmup + kFrames, Seen());
  Seen* slots = seen->data();
  const FrameCallback record = [slots](const FrameResult& r) {
    Seen& s = slots[r.index];
    s.size = r.size;
    s.count = std::min(r.detection_count, kMaxFaces);
    std::copy(r.detections, r.detections + s.count, s.faces);
  };
  REQUIRE(loop.run(kWarmup, record).ok());
  Status st;
  test::arm_alloc_counter();
  st = loop.run(kFrames, record);
  const long count = test::disarm_alloc_counter();
  INFO(st.to_string());
  REQUIRE(st.ok());
  CHECK(loop.frames_done() == static_cast<uint64_t>(kWarmup + kFrames));
  return count;
}

bool counting() {
  if (test::alloc_counting_available()) return true;
  MESSAGE("allocation counting skipped: a sanitizer owns malloc in this build");
  return false;
}

}  // namespace

TEST_CASE("CPU: 50 frames of photos allocate nothing and detect what the plain pipeline detects") {
  const std::vector<std::vector<blazeface::Detection>> expect = plain_pipeline(kWarmup + kFrames);
  std::shared_ptr<Engine> engine = load(Backend::CPU);
  std::unique_ptr<FrameSource> source;
  REQUIRE(open_frame_source(JET_CAMERA_TEST_IMAGES, &source).ok());
  std::unique_ptr<CameraLoop> loop;
  REQUIRE(CameraLoop::create(engine, source.get(), LoopOptions(), &loop).ok());
  CHECK(loop->cuda_graph_status().code() == StatusCode::NOT_SUPPORTED);

  std::vector<Seen> seen;
  const long allocations = run_counted(*loop, &seen);
  if (counting()) CHECK(allocations == 0);

  size_t faces = 0;
  for (int n = 0; n < kWarmup + kFrames; ++n) {
    CAPTURE(n);
    const Seen& s = seen[static_cast<size_t>(n)];
    REQUIRE(s.count == expect[static_cast<size_t>(n)].size());
    for (size_t i = 0; i < s.count; ++i) {
      const blazeface::Detection& a = s.faces[i];
      const blazeface::Detection& b = expect[static_cast<size_t>(n)][i];
      CHECK(a.score == b.score);
      CHECK(a.xmin == b.xmin);
      CHECK(a.ymin == b.ymin);
      CHECK(a.xmax == b.xmax);
      CHECK(a.ymax == b.ymax);
      CHECK(std::memcmp(a.keypoints, b.keypoints, sizeof a.keypoints) == 0);
    }
    faces += s.count;
  }
  CHECK(faces > 0);  // the photos hold faces: a loop that never detects one says nothing

  // Every stage was timed for every counted frame (the warm-up's times are kept too).
  for (Stage stage : {Stage::CAPTURE, Stage::PREPROCESS, Stage::INFERENCE, Stage::POSTPROCESS, Stage::END_TO_END}) {
    CAPTURE(stage_name(stage));
    const StageSummary sum = loop->times().summary(stage);
    CHECK(sum.count == static_cast<size_t>(kWarmup + kFrames));
    CHECK(sum.p50 >= 0);
    CHECK(sum.p99 >= sum.p50);
  }
  CHECK(loop->times().summary(Stage::UPLOAD).count == 0);
  CHECK(loop->times().summary(Stage::FRAME_INTERVAL).count == static_cast<size_t>(kWarmup + kFrames - 1));

  // stop() ends the next run() at once.
  loop->stop();
  REQUIRE(loop->run(0, nullptr).ok());
  CHECK(loop->frames_done() == static_cast<uint64_t>(kWarmup + kFrames));
}

TEST_CASE("the loop refuses a missing engine or source, and a model that is not BlazeFace") {
  std::shared_ptr<Engine> engine = load(Backend::CPU);
  std::unique_ptr<FrameSource> source;
  REQUIRE(open_frame_source("synthetic:64x48", &source).ok());
  std::unique_ptr<CameraLoop> loop;
  CHECK(CameraLoop::create(nullptr, source.get(), LoopOptions(), &loop).code() == StatusCode::BAD_PARAM);
  Status st = CameraLoop::create(engine, nullptr, LoopOptions(), &loop);
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(st.message().find("frame source") != std::string::npos);
  CHECK(loop == nullptr);
  // The Fashion-MNIST classifier that tests/networks converts beside BlazeFace, when it is there.
  std::string other = JET_CAMERA_TEST_MODEL;
  const size_t at = other.rfind("blazeface/model.jet");
  std::shared_ptr<Engine> classifier;
  LoadOptions cpu;
  cpu.backend = Backend::CPU;
  if (at == std::string::npos ||
      !Engine::load(other.replace(at, std::string::npos, "fashion_mnist/model.jet"), cpu, &classifier).ok()) {
    MESSAGE("wrong-model check skipped: no tests/networks Fashion-MNIST model beside " JET_CAMERA_TEST_MODEL);
    return;
  }
  st = CameraLoop::create(classifier, source.get(), LoopOptions(), &loop);
  INFO(st.to_string());
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(st.message().find("not a BlazeFace") != std::string::npos);
  CHECK(loop == nullptr);
}

TEST_CASE("CUDA: 50 frames allocate nothing, host or device, replay a CUDA graph, and agree with the CPU") {
#if defined(JET_HAVE_CUDA)
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    MESSAGE("CUDA camera loop test skipped: no CUDA device");
    return;
  }
  const std::vector<std::vector<blazeface::Detection>> expect = plain_pipeline(kWarmup + kFrames);
  std::shared_ptr<Engine> engine = load(Backend::CUDA);
  // Uploaded frames (discrete GPUs) and mapped zero-copy frames (Jetson's path, forced here).
  for (const FrameMemory memory : {FrameMemory::UPLOAD, FrameMemory::MAPPED}) {
    const bool mapped = memory == FrameMemory::MAPPED;
    CAPTURE(mapped);
    std::unique_ptr<FrameSource> source;
    REQUIRE(open_frame_source(JET_CAMERA_TEST_IMAGES, &source).ok());
    LoopOptions options;
    options.frame_memory = memory;
    std::unique_ptr<CameraLoop> loop;
    const Status created = CameraLoop::create(engine, source.get(), options, &loop);
    INFO(created.to_string());
    REQUIRE(created.ok());
    CHECK(loop->memory().zero_copy == mapped);
    const Status graph = loop->cuda_graph_status();
    INFO(graph.to_string());
    CHECK(graph.ok());
    const uint64_t runtime_before = rt::device_alloc_count();
    size_t free_before = 0, free_after = 0, total = 0;
    REQUIRE(cudaMemGetInfo(&free_before, &total) == cudaSuccess);

    std::vector<Seen> seen;
    const long allocations = run_counted(*loop, &seen);
    if (counting()) CHECK(allocations == 0);
    CHECK(rt::device_alloc_count() == runtime_before);
    REQUIRE(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
    CHECK(free_after == free_before);

    // Confident faces (score >= 0.8) on either side have a partner on the other.
    auto matched = [](const blazeface::Detection& a, const blazeface::Detection* others, size_t n) {
      for (size_t i = 0; i < n; ++i) {
        if (blazeface::iou(a, others[i]) >= 0.9f && std::abs(a.score - others[i].score) <= 0.02f) return true;
      }
      return false;
    };
    size_t confident = 0;
    for (int n = 0; n < kWarmup + kFrames; ++n) {
      CAPTURE(n);
      const Seen& s = seen[static_cast<size_t>(n)];
      const std::vector<blazeface::Detection>& e = expect[static_cast<size_t>(n)];
      for (const blazeface::Detection& d : e) {
        if (d.score >= 0.8f) {
          CHECK(matched(d, s.faces, s.count));
          ++confident;
        }
      }
      for (size_t i = 0; i < s.count; ++i) {
        if (s.faces[i].score >= 0.8f) CHECK(matched(s.faces[i], e.data(), e.size()));
      }
    }
    CHECK(confident > 0);
    for (Stage stage : {Stage::CAPTURE, Stage::UPLOAD, Stage::PREPROCESS, Stage::INFERENCE, Stage::POSTPROCESS}) {
      CAPTURE(stage_name(stage));
      const size_t want = stage == Stage::UPLOAD && mapped ? 0 : static_cast<size_t>(kWarmup + kFrames);
      CHECK(loop->times().summary(stage).count == want);
    }
  }
#else
  MESSAGE("CUDA camera loop test skipped: this build has no CUDA backend");
#endif
}
