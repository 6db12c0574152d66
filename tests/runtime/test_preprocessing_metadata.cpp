// Metadata.preprocessing (schema 1.3): written by the converter, read back by the loader into
// ModelSummary::preprocessing, and every inconsistent entry refused naming it (jet-run relies on
// them to turn an image into an input). Files before schema 1.3 have no size or resize fields:
// the size then comes from the input's dims.
#include <doctest/doctest.h>

#include "model_util.h"

using namespace jet;
using namespace jet::test;

namespace {

// tiny_cnn at batch 1 (input [1, 3, 17, 19]) with one preprocessing entry.
Bytes model_with(const ImagePreprocessing& pre) {
  ir::Graph g;
  ZooOptions opt = tiny_cnn_options(static_cast<uint64_t>(uniform_int(1, 1 << 30)));
  opt.batch = 1;
  REQUIRE_OK(tiny_cnn(opt, &g));
  WriteOptions wo;
  wo.producer_version = "test";
  wo.preprocessing.push_back(pre);
  for (int t = 0; t < static_cast<int>(g.tensors.size()); ++t) {
    if (g.tensors[t].kind == ir::TensorKind::INPUT) wo.preprocessing.back().input = t;
  }
  Bytes bytes;
  REQUIRE_OK(write_model(g, wo, &bytes));
  return bytes;
}

ImagePreprocessing imagenet() {
  ImagePreprocessing p;
  p.height = 17;
  p.width = 19;
  p.resize = ImagePreprocessing::Resize::CENTER_CROP;
  p.crop_fraction = 0.875f;
  p.mean = {0.485f, 0.456f, 0.406f};
  p.std = {0.229f, 0.224f, 0.225f};
  return p;
}

}  // namespace

TEST_CASE("preprocessing metadata round-trips through the writer and the loader") {
  ImagePreprocessing want = imagenet();
  want.bgr = true;
  const Bytes bytes = model_with(want);
  std::shared_ptr<Engine> e;
  REQUIRE_OK(load_cpu(bytes, true, &e));
  REQUIRE(e->summary().preprocessing.size() == 1);
  const ImagePreprocessing& got = e->summary().preprocessing[0];
  CHECK(got.input == e->input(0));
  CHECK(got.height == 17);
  CHECK(got.width == 19);
  CHECK(got.resize == ImagePreprocessing::Resize::CENTER_CROP);
  CHECK(got.crop_fraction == 0.875f);
  CHECK(got.mean == want.mean);
  CHECK(got.std == want.std);
  CHECK(got.bgr);
  CHECK_FALSE(got.nhwc);
}

TEST_CASE("inconsistent preprocessing metadata is refused naming the entry") {
  const Bytes good = model_with(imagenet());
  auto edited = [&](const std::function<void(fb::PreprocessingT&)>& edit) {
    return rebuild_model(good, [&](fb::ModelT& m) {
      REQUIRE(m.metadata);
      REQUIRE(m.metadata->preprocessing.size() == 1);
      edit(*m.metadata->preprocessing[0]);
    });
  };
  expect_rejected(edited([](fb::PreprocessingT& p) { p.input = 0x7fff; }), "metadata.preprocessing[0]: tensor 32767 is not a graph input");
  expect_rejected(edited([](fb::PreprocessingT& p) { p.height = 16; }), "is not input");
  expect_rejected(edited([](fb::PreprocessingT& p) { p.layout = fb::ImageLayout::NHWC; }), "channels");
  expect_rejected(edited([](fb::PreprocessingT& p) { p.std[1] = 0.0f; }), "std non-zero");
  expect_rejected(edited([](fb::PreprocessingT& p) { p.mean.pop_back(); }), "2 means and 3 stds");
  expect_rejected(edited([](fb::PreprocessingT& p) { p.crop_fraction = 1.5f; }), "crop_fraction");
  expect_rejected(edited([](fb::PreprocessingT& p) { p.pad_value = -1.0f; }), "pad_value");
  expect_rejected(edited([](fb::PreprocessingT& p) { p.resize = static_cast<fb::ResizeMode>(9); }), "unknown resize mode 9");
  // A file before schema 1.3: no size, no resize fields; the size comes from the input's dims.
  std::shared_ptr<Engine> e;
  REQUIRE_OK(load_cpu(edited([](fb::PreprocessingT& p) {
                        p.height = 0;
                        p.width = 0;
                      }),
                      true, &e));
  CHECK(e->summary().preprocessing.at(0).height == 17);
  CHECK(e->summary().preprocessing.at(0).width == 19);
}
