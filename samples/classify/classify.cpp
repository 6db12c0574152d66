// classify: any image classifier (.jet) on image files: the top-5 classes with probabilities.
//
//   classify MODEL.jet IMAGE... [--labels FILE] [--device cpu|cuda] [--top-k K]
//            [--normalize imagenet|unit|signed|raw] [--fit stretch|letterbox]
//
// The model's input is an image batch [N, C, H, W] or [N, H, W, C] (C = 1: the images are read
// as grey; C = 3: RGB). Each image is preprocessed with jet::image_preprocess on the engine's
// device straight into its slot of the input; N images go through each run (a batched model's
// spare slots repeat the last image and are not reported). The output is [N, classes]: logits
// (a softmax gives the probabilities) or, when every row already sums to 1, probabilities.
// Class names come from --labels (one per line), else from the model's metadata
// (jet-convert --labels), else the class index is printed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#if JET_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "command_line.h"
#include "image_io.h"
#include "jet/dnn.h"
#include "jet/runtime.h"
#include "model_io.h"

using namespace jet;

namespace {

const char* kUsage =
    "usage: classify MODEL.jet IMAGE... [--labels FILE] [--device cpu|cuda] [--top-k K]\n"
    "                [--normalize imagenet|unit|signed|raw] [--fit stretch|letterbox]\n"
    "  --labels     class names, one per line (default: the model's own, else indices)\n"
    "  --device     cpu or cuda (default: cuda when this build has it, else cpu)\n"
    "  --top-k      classes printed per image (default 5)\n"
    "  --normalize  pixel values the model expects: imagenet (torchvision's mean/std, default),\n"
    "               unit [0, 1], signed [-1, 1], raw [0, 255]\n"
    "  --fit        stretch to the input size (default) or letterbox (black borders)\n";

int fail(const std::string& message) {
  std::fprintf(stderr, "classify: %s\n", message.c_str());
  return 1;
}

struct Args {
  std::string model, labels;
  std::vector<std::string> images;
  Backend backend = built_with_cuda() ? Backend::CUDA : Backend::CPU;
  int top_k = 5;
  std::string normalize = "imagenet";
  ImageFit fit = ImageFit::STRETCH;
};

bool parse_args(int argc, char** argv, Args* a, std::string* error) {
  samples::CommandLine cl;
  if (!samples::parse_command_line(argc, argv, kUsage, {"--labels", "--top-k", "--normalize", "--fit"}, {}, &cl,
                                   error))
    return false;
  a->backend = cl.backend;
  if (const std::string* v = cl.find("--labels")) a->labels = *v;
  if (!cl.whole_number("--top-k", 1, 1000000, &a->top_k, error)) return false;
  if (const std::string* v = cl.find("--normalize")) {
    if (*v != "imagenet" && *v != "unit" && *v != "signed" && *v != "raw")
      return *error = "--normalize must be imagenet, unit, signed or raw, not '" + *v + "'", false;
    a->normalize = *v;
  }
  if (const std::string* v = cl.find("--fit")) {
    if (*v == "stretch") a->fit = ImageFit::STRETCH;
    else if (*v == "letterbox") a->fit = ImageFit::LETTERBOX;
    else return *error = "--fit must be stretch or letterbox, not '" + *v + "'", false;
  }
  if (cl.positional.size() < 2) return *error = "expected MODEL.jet and at least one IMAGE", false;
  a->model = cl.positional[0];
  a->images.assign(cl.positional.begin() + 1, cl.positional.end());
  return true;
}

bool read_labels(const std::string& path, std::vector<std::string>* labels, std::string* error) {
  std::ifstream in(path);
  if (!in) return *error = path + ": cannot open the labels file", false;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    labels->push_back(line);
  }
  return true;
}

ImagePreprocessDesc preprocessing(const std::string& normalize, ImageFit fit) {
  ImagePreprocessDesc d;
  d.fit = fit;
  d.resize = ImageResize::BILINEAR;
  for (int c = 0; c < 3; ++c) {
    if (normalize == "raw") d.scale[c] = 1.f, d.offset[c] = 0.f;
    if (normalize == "unit") d.scale[c] = 1.f / 255.f, d.offset[c] = 0.f;
    if (normalize == "signed") d.scale[c] = 2.f / 255.f, d.offset[c] = -1.f;
  }
  if (normalize == "imagenet") {
    const float mean[3] = {0.485f, 0.456f, 0.406f}, stddev[3] = {0.229f, 0.224f, 0.225f};
    d.set_mean_std(mean, stddev);
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  std::string error;
  if (!parse_args(argc, argv, &args, &error)) {
    std::fprintf(stderr, "classify: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  std::shared_ptr<Engine> engine;
  Status st = samples::load_model(args.model, args.backend, &engine);
  if (!st.ok()) return fail(st.to_string());
  if (engine->num_inputs() != 1 || engine->num_outputs() != 1)
    return fail(args.model + ": a classifier has one input (the images) and one output (the scores)");
  const int input = engine->input(0), output = engine->output(0);
  const TensorInfo& in_info = engine->tensor(input);
  // The batch [N, ...] seen as N images [1, C, H, W]: image_input_desc on dims with N = 1.
  if (in_info.dims.size() != 4)
    return fail(args.model + ": the input has " + std::to_string(in_info.dims.size()) +
                " dims; an image batch has 4");
  const int64_t batch = in_info.dims[0];
  TensorInfo one = in_info;
  one.dims[0] = 1;
  TensorDesc slot_desc;
  st = samples::image_input_desc(one, &slot_desc);
  if (!st.ok()) return fail(args.model + ": " + st.message());
  const int channels = static_cast<int>(slot_desc.dim(1));
  const TensorInfo& out_info = engine->tensor(output);
  if (out_info.dims.size() != 2 || out_info.dims[0] != batch)
    return fail(args.model + ": the output must be [N, classes] with the input's N");
  const int64_t classes = out_info.dims[1];

  std::vector<std::string> labels;
  if (!args.labels.empty()) {
    if (!read_labels(args.labels, &labels, &error)) return fail(error);
  } else {
    labels = engine->summary().labels;
  }
  if (!labels.empty() && static_cast<int64_t>(labels.size()) != classes)
    return fail("the labels (" + std::to_string(labels.size()) + ") do not match the model's " +
                std::to_string(classes) + " classes");

  std::unique_ptr<ExecutionContext> ctx;
  st = engine->create_context(&ctx);
  if (!st.ok()) return fail(st.to_string());
  cudaStream_t stream = nullptr;
  Handle handle = Handle::cpu();
#if JET_HAVE_CUDA
  if (args.backend == Backend::CUDA) {
    st = Handle::cuda(engine->device(), nullptr, &handle);
    if (!st.ok()) return fail(st.to_string());
  }
#endif
  const ImagePreprocessDesc pre = preprocessing(args.normalize, args.fit);
  const size_t element = dtype_size(slot_desc.dtype());
  std::printf("classify: %s, input %s [%lld images of %lldx%lld, %d channel%s], %lld classes, device %s\n",
              args.model.c_str(), in_info.name.c_str(), static_cast<long long>(batch),
              static_cast<long long>(slot_desc.dim(3)), static_cast<long long>(slot_desc.dim(2)),
              channels, channels == 1 ? "" : "s", static_cast<long long>(classes),
              args.backend == Backend::CUDA ? "cuda" : "cpu");

  std::vector<samples::Image> images(static_cast<size_t>(batch));
  std::vector<samples::ImageBuffer> buffers(static_cast<size_t>(batch));
  std::vector<float> scores;
  const size_t count = args.images.size();
  for (size_t first = 0; first < count; first += static_cast<size_t>(batch)) {
    const size_t in_pass = std::min(count - first, static_cast<size_t>(batch));
    for (int64_t slot = 0; slot < batch; ++slot) {
      // Spare slots of a batched model repeat the pass's last image.
      const size_t which = first + std::min(static_cast<size_t>(slot), in_pass - 1);
      const size_t s = static_cast<size_t>(slot);
      if (static_cast<size_t>(slot) < in_pass) {
        if (!samples::load_image(args.images[which], channels, &images[s], &error)) return fail(error);
        st = buffers[s].upload(args.backend, images[s], stream);
        if (!st.ok()) return fail(st.to_string());
      }
      const samples::ImageBuffer& source = buffers[std::min(s, in_pass - 1)];
      // Slot n of the batch: the input's memory offset by n batch strides.
      char* y = static_cast<char*>(ctx->tensor_data(input)) +
                static_cast<size_t>(slot * in_info.strides[0]) * element;
      st = image_preprocess(handle, pre, source.desc(), source.data(), 1.f, 0.f, slot_desc, y, nullptr);
      if (!st.ok()) return fail(args.images[which] + ": " + st.to_string());
    }
    st = ctx->run(stream);
    if (st.ok()) st = samples::synchronize(args.backend, stream);
    if (st.ok()) st = samples::read_tensor(*ctx, output, &scores);
    if (!st.ok()) return fail(st.to_string());

    for (size_t i = 0; i < in_pass; ++i) {
      const float* row = scores.data() + i * static_cast<size_t>(classes);
      // Probabilities as given when the row already is a distribution, else softmax.
      std::vector<double> p(row, row + classes);
      double sum = 0;
      bool distribution = true;
      for (double v : p) {
        sum += v;
        distribution = distribution && v >= 0 && v <= 1;
      }
      if (!distribution || std::fabs(sum - 1.0) > 1e-3) {
        const double top = *std::max_element(p.begin(), p.end());
        sum = 0;
        for (double& v : p) sum += (v = std::exp(v - top));
        for (double& v : p) v /= sum;
      }
      std::vector<int64_t> order(static_cast<size_t>(classes));
      for (int64_t c = 0; c < classes; ++c) order[static_cast<size_t>(c)] = c;
      const size_t k = std::min(static_cast<size_t>(args.top_k), order.size());
      std::partial_sort(order.begin(), order.begin() + static_cast<long>(k), order.end(),
                        [&](int64_t a, int64_t b) {
                          return p[static_cast<size_t>(a)] != p[static_cast<size_t>(b)]
                                     ? p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)]
                                     : a < b;
                        });
      const samples::Image& im = images[i];
      std::printf("%s (%dx%d):\n", args.images[first + i].c_str(), im.width, im.height);
      for (size_t r = 0; r < k; ++r) {
        const int64_t c = order[r];
        const std::string name = labels.empty() ? "class " + std::to_string(c) : labels[static_cast<size_t>(c)];
        std::printf("  %zu. %-24s %8.4f  (class %lld)\n", r + 1, name.c_str(), p[static_cast<size_t>(c)],
                    static_cast<long long>(c));
      }
    }
  }
  return 0;
}
