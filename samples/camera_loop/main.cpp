// camera_loop: the robotics loop as a program. Frames from a camera, an image directory or a
// synthetic pattern; BlazeFace on each; detections printed (or a JSON report), annotated frames
// saved on request; per-stage latency percentiles, FPS, jitter and memory at the end.
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "camera_loop.h"
#include "image_io.h"

#if defined(JET_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

namespace {

using jet::Status;
using jet::StatusCode;
using namespace jet::camera;

const char kUsage[] =
    "usage: camera_loop --model blazeface.jet [--source SPEC] [--device cpu|cuda] [--frames N]\n"
    "                   [--warmup N] [--no-graph] [--frames-memory M] [--save DIR] [--json]\n"
    "                   [--quiet] [--bench]\n"
    "  --source   /dev/videoN[:WxH]  a V4L2 camera (YUYV or MJPEG)\n"
    "             DIR | 'PATTERN'    the images of a directory or a glob pattern, in a loop\n"
    "             synthetic[:WxH]    a moving test pattern (default 1280x720)\n"
    "             (default: synthetic)\n"
    "  --device   backend (default: cuda when built with CUDA, else cpu)\n"
    "  --frames   frames to time after the warm-up (default 0: until Ctrl-C)\n"
    "  --warmup   frames run before timing starts (default 10)\n"
    "  --no-graph CUDA: run the ops one by one instead of replaying a CUDA graph\n"
    "  --frames-memory auto|upload|mapped  CUDA: pinned frames uploaded, or mapped zero-copy\n"
    "             frames (auto: mapped on integrated GPUs such as Jetson, uploaded otherwise)\n"
    "  --save     write every timed frame with its detections drawn to DIR/frame_NNNNNN.png\n"
    "  --json     print the report as one JSON object (no per-frame lines)\n"
    "  --quiet    no per-frame lines\n"
    "  --bench    the benchmark: --source synthetic:1280x720 --frames 2000 --warmup 50 --quiet\n"
    "             (options after --bench override it)\n";

CameraLoop* g_loop = nullptr;

extern "C" void on_sigint(int) {
  if (g_loop != nullptr) g_loop->stop();  // an atomic store: async-signal-safe
}

struct Options {
  std::string model;
  std::string source = "synthetic";
  jet::Backend backend = jet::built_with_cuda() ? jet::Backend::CUDA : jet::Backend::CPU;
  int64_t frames = 0;
  int64_t warmup = 10;
  bool graph = true;
  FrameMemory frame_memory = FrameMemory::AUTO;
  std::string save_dir;
  bool json = false;
  bool quiet = false;
};

int usage_error(const std::string& message) {
  std::fprintf(stderr, "camera_loop: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int fail(const Status& st) {
  std::fprintf(stderr, "camera_loop: error: %s\n", st.to_string().c_str());
  return 1;
}

bool parse_count(const std::string& text, int64_t* out) {
  if (text.empty() || text.size() > 12) return false;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string num(double v, int decimals = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// ---- Annotated frames (samples/common/image_io: boxes, key points, PNG through a temporary file).

Status save_annotated(const std::string& dir, const FrameResult& r, jet::samples::Image* canvas) {
  canvas->width = r.size.width;
  canvas->height = r.size.height;
  canvas->channels = 3;
  canvas->pixels.assign(r.rgb, r.rgb + static_cast<size_t>(r.size.width) * static_cast<size_t>(r.size.height) * 3);
  const uint8_t green[3] = {0, 255, 0}, red[3] = {255, 0, 0};
  for (size_t i = 0; i < r.detection_count; ++i) {
    const jet::blazeface::Detection& d = r.detections[i];
    jet::samples::draw_box(canvas, d.xmin, d.ymin, d.xmax, d.ymax, green, 2);
    for (int k = 0; k < jet::blazeface::kKeypoints; ++k) {
      jet::samples::draw_dot(canvas, d.keypoints[k][0], d.keypoints[k][1], 1, red);
    }
  }
  char name[64];
  std::snprintf(name, sizeof name, "/frame_%06llu.png", static_cast<unsigned long long>(r.index));
  std::string error;
  if (!jet::samples::write_image(dir + name, *canvas, &error)) return Status(StatusCode::BAD_PARAM, error);
  return Status::success();
}

// ---- GPU memory, from the driver's view. --------------------------------------------------------

struct DeviceMemory {
  bool valid = false;
  size_t free = 0, total = 0;
};

DeviceMemory device_memory(jet::Backend backend) {
  DeviceMemory m;
#if defined(JET_HAVE_CUDA)
  if (backend == jet::Backend::CUDA && cudaFree(nullptr) == cudaSuccess &&  // the context exists
      cudaMemGetInfo(&m.free, &m.total) == cudaSuccess) {
    m.valid = true;
  }
#else
  (void)backend;
#endif
  return m;
}

// ---- The report. -------------------------------------------------------------------------------

struct Report {
  std::string source, model, device;
  int64_t frames = 0, warmup = 0;
  double seconds = 0;
  size_t faces = 0;
  Status graph;
  LoopMemory memory;
  DeviceMemory before, after_create, after_run;
};

void print_report(const Report& r, const CameraLoop& loop, bool json) {
  const StageTimes& t = loop.times();
  const double fps = r.seconds > 0 ? static_cast<double>(r.frames) / r.seconds : 0;
  const StageSummary e2e = t.summary(Stage::END_TO_END);
  const StageSummary interval = t.summary(Stage::FRAME_INTERVAL);
  const bool graph = r.graph.ok();
  if (json) {
    std::string s = "{\"source\": " + json_string(r.source) + ", \"model\": " + json_string(r.model) +
                    ", \"device\": " + json_string(r.device) + ", \"frames\": " + std::to_string(r.frames) +
                    ", \"warmup_frames\": " + std::to_string(r.warmup) + ", \"seconds\": " + num(r.seconds, 4) +
                    ", \"fps\": " + num(fps, 2) + ", \"faces\": " + std::to_string(r.faces) +
                    ", \"cuda_graph\": " + (graph ? "true" : "false");
    if (!graph) s += ", \"cuda_graph_note\": " + json_string(r.graph.message());
    s += ", \"stages_ms\": {";
    bool first = true;
    for (int i = 0; i < kStageCount; ++i) {
      const StageSummary x = t.summary(static_cast<Stage>(i));
      if (x.count == 0) continue;
      s += std::string(first ? "" : ", ") + "\"" + stage_name(static_cast<Stage>(i)) + "\": {\"count\": " +
           std::to_string(x.count) + ", \"p50\": " + num(x.p50, 4) + ", \"p90\": " + num(x.p90, 4) +
           ", \"p99\": " + num(x.p99, 4) + ", \"mean\": " + num(x.mean, 4) + ", \"max\": " + num(x.max, 4) + "}";
      first = false;
    }
    s += "}, \"jitter_ms\": {\"frame_interval_stddev\": " + num(interval.stddev, 4) +
         ", \"end_to_end_p99_minus_p50\": " + num(e2e.p99 - e2e.p50, 4) + "}";
    s += ", \"memory_bytes\": {\"weights\": " + std::to_string(r.memory.weight_bytes) +
         ", \"context\": " + std::to_string(r.memory.context_bytes) +
         ", \"frames_device\": " + std::to_string(r.memory.frame_device_bytes) +
         ", \"frames_and_outputs_host\": " + std::to_string(r.memory.frame_host_bytes) +
         ", \"zero_copy\": " + (r.memory.zero_copy ? "true" : "false");
    if (r.before.valid && r.after_create.valid && r.after_run.valid) {
      s += ", \"cudaMemGetInfo_free_before\": " + std::to_string(r.before.free) +
           ", \"cudaMemGetInfo_free_after_create\": " + std::to_string(r.after_create.free) +
           ", \"cudaMemGetInfo_free_after_run\": " + std::to_string(r.after_run.free) +
           ", \"cudaMemGetInfo_total\": " + std::to_string(r.before.total);
    }
    s += "}}";
    std::printf("%s\n", s.c_str());
    return;
  }
  std::printf("camera loop: %s -> %s on %s\n", r.source.c_str(), r.model.c_str(), r.device.c_str());
  std::printf("%lld frames (after %lld warm-up) in %.3f s: %.1f FPS, %zu faces\n",
              static_cast<long long>(r.frames), static_cast<long long>(r.warmup), r.seconds, fps, r.faces);
  std::printf("%-15s %9s %9s %9s %9s %9s\n", "stage (ms)", "p50", "p90", "p99", "mean", "max");
  for (int i = 0; i < kStageCount; ++i) {
    const StageSummary x = t.summary(static_cast<Stage>(i));
    if (x.count == 0) continue;
    std::printf("%-15s %9.3f %9.3f %9.3f %9.3f %9.3f\n", stage_name(static_cast<Stage>(i)), x.p50, x.p90, x.p99,
                x.mean, x.max);
  }
  std::printf("jitter: frame interval stddev %.3f ms, end-to-end p99 - p50 %.3f ms\n", interval.stddev,
              e2e.p99 - e2e.p50);
  if (graph) {
    std::printf("CUDA graph: every inference is a graph replay\n");
  } else {
    std::printf("CUDA graph: not used (%s)\n", r.graph.message().c_str());
  }
  const double mib = 1024.0 * 1024.0;
  std::printf("memory (jetinfer's accounting): weights %.2f MiB, context %.2f MiB, device frames %.2f MiB, "
              "host frames + outputs %.2f MiB%s\n",
              r.memory.weight_bytes / mib, r.memory.context_bytes / mib, r.memory.frame_device_bytes / mib,
              r.memory.frame_host_bytes / mib, r.memory.zero_copy ? " (mapped zero-copy)" : "");
  if (r.before.valid && r.after_create.valid && r.after_run.valid) {
    std::printf("memory (cudaMemGetInfo): %.2f MiB taken by engine + loop, %.2f MiB more after the run, "
                "of %.0f MiB\n",
                (static_cast<double>(r.before.free) - static_cast<double>(r.after_create.free)) / mib,
                (static_cast<double>(r.after_create.free) - static_cast<double>(r.after_run.free)) / mib,
                r.before.total / mib);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_inline_value = false;
    const size_t eq = arg.find('=');
    if (arg.compare(0, 2, "--") == 0 && eq != std::string::npos) {  // --opt=value as --opt value
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_inline_value = true;
    }
    auto next = [&](std::string* out) {
      if (has_inline_value) {
        *out = value;
        return true;
      }
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "-h" || arg == "--help") {
      std::printf("%s", kUsage);
      return 0;
    } else if (arg == "--model") {
      if (!next(&o.model)) return usage_error("--model needs a file");
    } else if (arg == "--source") {
      if (!next(&o.source)) return usage_error("--source needs a value");
    } else if (arg == "--device") {
      if (!next(&v) || (v != "cpu" && v != "cuda")) return usage_error("--device takes cpu or cuda");
      o.backend = v == "cpu" ? jet::Backend::CPU : jet::Backend::CUDA;
    } else if (arg == "--frames") {
      if (!next(&v) || !parse_count(v, &o.frames)) return usage_error("--frames takes a count (0: until Ctrl-C)");
    } else if (arg == "--warmup") {
      if (!next(&v) || !parse_count(v, &o.warmup)) return usage_error("--warmup takes a count");
    } else if (arg == "--frames-memory") {
      if (!next(&v) || (v != "auto" && v != "upload" && v != "mapped")) {
        return usage_error("--frames-memory takes auto, upload or mapped");
      }
      o.frame_memory = v == "auto" ? FrameMemory::AUTO : v == "upload" ? FrameMemory::UPLOAD : FrameMemory::MAPPED;
    } else if (arg == "--save") {
      if (!next(&o.save_dir)) return usage_error("--save needs a directory");
    } else if (arg == "--no-graph" && !has_inline_value) {
      o.graph = false;
    } else if (arg == "--json" && !has_inline_value) {
      o.json = true;
    } else if (arg == "--quiet" && !has_inline_value) {
      o.quiet = true;
    } else if (arg == "--bench" && !has_inline_value) {
      o.source = "synthetic:1280x720";
      o.frames = 2000;
      o.warmup = 50;
      o.quiet = true;
    } else {
      return usage_error("unknown argument " + std::string(argv[i]));
    }
  }
  if (o.model.empty()) return usage_error("--model is required");
  if (!o.save_dir.empty() && ::mkdir(o.save_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return fail(Status(StatusCode::BAD_PARAM, o.save_dir + ": cannot create the directory: " + std::strerror(errno)));
  }

  Report report;
  report.before = device_memory(o.backend);  // before the engine: the baseline
  std::unique_ptr<FrameSource> source;
  Status st = open_frame_source(o.source, &source);
  if (!st.ok()) return fail(st);
  std::shared_ptr<jet::Engine> engine;
  jet::LoadOptions load;
  load.backend = o.backend;
  st = jet::Engine::load(o.model, load, &engine);
  if (!st.ok() && o.backend == jet::Backend::CUDA) {
    return fail(Status(st.code(), st.message() + " (no usable GPU? try --device cpu)"));
  }
  if (!st.ok()) return fail(st);
  LoopOptions loop_options;
  loop_options.use_cuda_graph = o.graph;
  loop_options.frame_memory = o.frame_memory;
  std::unique_ptr<CameraLoop> loop;
  st = CameraLoop::create(engine, source.get(), loop_options, &loop);
  if (!st.ok()) return fail(st);
  report.after_create = device_memory(o.backend);

  g_loop = loop.get();
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESETHAND | SA_RESTART;  // a second Ctrl-C ends the program at once
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  st = loop->run(o.warmup, nullptr);
  if (!st.ok()) return fail(st);
  loop->times().clear();

  const bool per_frame = !o.quiet && !o.json;
  jet::samples::Image canvas;
  Status callback_status;
  size_t faces = 0;
  const FrameCallback callback = [&](const FrameResult& r) {
    faces += r.detection_count;
    if (per_frame) {
      std::printf("frame %llu %dx%d: %zu face%s", static_cast<unsigned long long>(r.index), r.size.width,
                  r.size.height, r.detection_count, r.detection_count == 1 ? "" : "s");
      for (size_t i = 0; i < r.detection_count; ++i) {
        const jet::blazeface::Detection& d = r.detections[i];
        std::printf(" [%.0f %.0f %.0f %.0f %.2f]", d.xmin, d.ymin, d.xmax, d.ymax, d.score);
      }
      std::printf("\n");
    }
    if (!o.save_dir.empty() && callback_status.ok()) {
      callback_status = save_annotated(o.save_dir, r, &canvas);
      if (!callback_status.ok()) loop->stop();
    }
  };
  const auto start = std::chrono::steady_clock::now();
  const uint64_t first = loop->frames_done();
  st = loop->run(o.frames, callback);
  const auto end = std::chrono::steady_clock::now();
  signal(SIGINT, SIG_DFL);
  g_loop = nullptr;
  if (!st.ok()) return fail(st);
  if (!callback_status.ok()) return fail(callback_status);
  report.after_run = device_memory(o.backend);

  report.source = source->describe();
  report.model = o.model;
  report.device = o.backend == jet::Backend::CUDA ? "cuda" : "cpu";
  report.frames = static_cast<int64_t>(loop->frames_done() - first);
  report.warmup = o.warmup;
  report.seconds = std::chrono::duration<double>(end - start).count();
  report.faces = faces;
  report.graph = loop->cuda_graph_status();
  report.memory = loop->memory();
  print_report(report, *loop, o.json);
  return 0;
}
