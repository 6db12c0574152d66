// The model writer (write_model.h): the bytes are read back through the flatc-generated API and
// flatbuffers::Verifier and compared, field by field, with the IR and the memory plan.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "ir.h"
#include "jet/runtime.h"
#include "jet/schema/model_generated.h"
#include "passes.h"
#include "plan_memory.h"
#include "write_model.h"
#include "zoo.h"

using namespace jet;
using namespace jet::ir;

namespace {

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

std::vector<int64_t> to_vec(const flatbuffers::Vector<int64_t>* v) {
  return v ? std::vector<int64_t>(v->begin(), v->end()) : std::vector<int64_t>{};
}

std::vector<int> to_ivec(const flatbuffers::Vector<int32_t>* v) {
  return v ? std::vector<int>(v->begin(), v->end()) : std::vector<int>{};
}

std::string str(const flatbuffers::String* s) { return s ? s->str() : std::string("<null>"); }

void check_activation(const fb::Activation* a, const ActivationDesc& want) {
  REQUIRE(a != nullptr);
  CHECK(a->mode() == static_cast<int32_t>(want.mode));
  CHECK(a->alpha() == want.alpha);
  CHECK(a->beta() == want.beta);
}

// The op's parameters as `Params` (REQUIREs that the op has that parameter type).
template <typename Params>
const Params* required_params(const fb::Op* op) {
  const Params* p = op->params_as<Params>();
  REQUIRE(p != nullptr);
  return p;
}

// The convolution geometry, shared by ConvParams / ConvAttrs and ConvTransposeParams /
// ConvTransposeAttrs.
template <typename Params, typename Attrs>
void check_conv_geometry(const Params* p, const Attrs& a) {
  CHECK(to_vec(p->pad_begin()) == a.pad_begin);
  CHECK(to_vec(p->pad_end()) == a.pad_end);
  CHECK(to_vec(p->strides()) == a.strides);
  CHECK(to_vec(p->dilations()) == a.dilations);
  CHECK(p->groups() == a.groups);
  CHECK(p->has_bias() == a.has_bias);
}

// One op's parameters against the IR node.
void check_params(const Graph& g, const Node& n, const fb::Op* op, const WriteOptions& opt) {
  switch (n.op) {
    case OpType::CONV: {
      const ConvAttrs& a = std::get<ConvAttrs>(n.attrs);
      const auto* p = required_params<fb::ConvParams>(op);
      check_conv_geometry(p, a);
      check_activation(p->activation(), a.act);
      CHECK(p->has_residual() == a.has_residual);
      CHECK(p->alpha1() == 1.f);
      CHECK(p->alpha2() == 1.f);
      CHECK(static_cast<int32_t>(p->fallback()) == static_cast<int32_t>(opt.conv_preference));
      CHECK(p->workspace_limit() == opt.workspace_limit);
      if (!opt.tune_handle) CHECK(p->algo() == fb::ConvAlgo::Auto);
      break;
    }
    case OpType::POOL: {
      const PoolAttrs& a = std::get<PoolAttrs>(n.attrs);
      const auto* p = required_params<fb::PoolParams>(op);
      CHECK(p->mode() == static_cast<int32_t>(a.mode));
      CHECK(to_vec(p->window()) == a.window);
      CHECK(to_vec(p->pad_begin()) == a.pad_begin);
      CHECK(to_vec(p->pad_end()) == a.pad_end);
      CHECK(to_vec(p->strides()) == a.strides);
      CHECK(p->ceil_mode() == a.ceil_mode);
      CHECK(!p->global());
      break;
    }
    case OpType::GLOBAL_POOL: {
      const auto* p = required_params<fb::PoolParams>(op);
      CHECK(p->global());
      CHECK(p->mode() == static_cast<int32_t>(std::get<GlobalPoolAttrs>(n.attrs).mode));
      break;
    }
    case OpType::ACTIVATION: {
      const auto* p = required_params<fb::ActivationParams>(op);
      check_activation(p->activation(), std::get<ActivationAttrs>(n.attrs).act);
      break;
    }
    case OpType::OP_TENSOR: {
      const auto* p = required_params<fb::OpTensorParams>(op);
      CHECK(p->op() == static_cast<int32_t>(std::get<OpTensorAttrs>(n.attrs).op));
      break;
    }
    case OpType::GEMM: {
      const GemmAttrs& a = std::get<GemmAttrs>(n.attrs);
      const auto* p = required_params<fb::GemmParams>(op);
      CHECK(p->trans_a() == a.trans_a);
      CHECK(p->trans_b() == a.trans_b);
      CHECK(p->has_bias() == a.has_bias);
      CHECK(p->alpha() == 1.f);
      CHECK(p->beta() == 1.f);
      break;
    }
    case OpType::SOFTMAX: {
      const SoftmaxAttrs& a = std::get<SoftmaxAttrs>(n.attrs);
      const auto* p = required_params<fb::SoftmaxParams>(op);
      CHECK(p->algo() == static_cast<int32_t>(a.algo));
      CHECK(p->axis() == a.axis);
      break;
    }
    case OpType::CONCAT: {
      const auto* p = required_params<fb::ConcatParams>(op);
      CHECK(p->axis() == std::get<ConcatAttrs>(n.attrs).axis);
      break;
    }
    case OpType::RESHAPE:
      CHECK(op->params_as_ReshapeParams() != nullptr);
      CHECK(g.tensors[n.outputs[0]].dims == std::get<ReshapeAttrs>(n.attrs).shape);
      break;
    case OpType::BATCHNORM: {
      const auto* p = required_params<fb::BatchNormParams>(op);
      CHECK(p->epsilon() == std::get<BatchNormAttrs>(n.attrs).epsilon);
      break;
    }
    case OpType::TRANSFORM:
      CHECK(op->params_as_TransformParams() != nullptr);
      CHECK(g.tensors[n.outputs[0]].dtype == std::get<TransformAttrs>(n.attrs).to);
      break;
    case OpType::SLICE: {
      const SliceAttrs& a = std::get<SliceAttrs>(n.attrs);
      const auto* p = required_params<fb::SliceParams>(op);
      CHECK(to_vec(p->starts()) == a.starts);
      CHECK(to_vec(p->steps()) == a.steps);
      CHECK(to_vec(p->perm()) == a.perm);
      break;
    }
    case OpType::PAD: {
      const PadAttrs& a = std::get<PadAttrs>(n.attrs);
      const auto* p = required_params<fb::PadParams>(op);
      CHECK(p->mode() == static_cast<int32_t>(a.mode));
      CHECK(to_vec(p->pad_begin()) == a.pad_begin);
      CHECK(to_vec(p->pad_end()) == a.pad_end);
      CHECK(p->value() == a.value);
      break;
    }
    case OpType::RESIZE: {
      const ResizeAttrs& a = std::get<ResizeAttrs>(n.attrs);
      const auto* p = required_params<fb::ResizeParams>(op);
      CHECK(p->mode() == static_cast<int32_t>(a.mode));
      CHECK(p->coord() == static_cast<int32_t>(a.coord));
      CHECK(p->nearest() == static_cast<int32_t>(a.nearest));
      std::vector<float> scales;
      if (p->scales()) scales.assign(p->scales()->begin(), p->scales()->end());
      CHECK(scales == a.scales);
      break;
    }
    case OpType::CONV_TRANSPOSE: {
      const ConvTransposeAttrs& a = std::get<ConvTransposeAttrs>(n.attrs);
      const auto* p = required_params<fb::ConvTransposeParams>(op);
      check_conv_geometry(p, a);
      break;
    }
    case OpType::INSTANCENORM: {
      const auto* p = required_params<fb::InstanceNormParams>(op);
      CHECK(p->epsilon() == std::get<InstanceNormAttrs>(n.attrs).epsilon);
      break;
    }
    case OpType::LRN: {
      const fb::LrnParamsT& l = std::get<fb::LrnParamsT>(n.attrs);
      const auto* p = required_params<fb::LrnParams>(op);
      CHECK(p->size() == l.size);
      CHECK(p->alpha() == l.alpha);
      CHECK(p->beta() == l.beta);
      CHECK(p->k() == l.k);
      break;
    }
    case OpType::REDUCE: {
      const auto* p = required_params<fb::ReduceParams>(op);
      CHECK(p->op() == static_cast<int32_t>(std::get<ReduceAttrs>(n.attrs).op));
      break;
    }
    default:  // a newer op type: tests/runtime/test_op_tables.cpp writes, loads and runs every one
      break;
  }
}

// Everything in `file` against the graph, the options and the plan write_model reported.
void check_file(const Graph& g, const WriteOptions& opt, const std::vector<uint8_t>& file,
                const MemoryPlan& plan) {
  REQUIRE(file.size() > 16 + 8);
  // Footer.
  const size_t body = file.size() - 16;
  CHECK(std::memcmp(file.data() + body + 8, "JETSUM01", 8) == 0);
  CHECK(get_u64(file.data() + body) == model_checksum(file.data(), body));
  // FlatBuffer.
  CHECK(std::memcmp(file.data() + 4, "JETM", 4) == 0);
  CHECK(fb::ModelBufferHasIdentifier(file.data()));
  flatbuffers::Verifier verifier(file.data(), file.size());
  REQUIRE(fb::VerifyModelBuffer(verifier));
  const fb::Model* m = fb::GetModel(file.data());
  CHECK(m->schema_major() == kSchemaMajor);
  CHECK(m->schema_minor() == kSchemaMinor);
  CHECK(m->file_size() == file.size());
  REQUIRE(m->producer() != nullptr);
  CHECK(str(m->producer()->name()) == "jet-convert");
  CHECK(str(m->producer()->version()) == opt.producer_version);
  CHECK(str(m->producer()->source_name()) == opt.source_name);
  CHECK(str(m->producer()->source_hash()) == opt.source_hash);

  // Plan.
  std::vector<int> order;
  REQUIRE(g.topological_order(&order).ok());
  const MemoryPlan expect = plan_memory(g, order, opt.planner);
  CHECK(plan.arena_bytes == expect.arena_bytes);
  REQUIRE(validate_plan(g, order, plan).ok());
  REQUIRE(m->plan() != nullptr);
  CHECK(m->plan()->arena_bytes() == plan.arena_bytes);
  CHECK(m->plan()->lower_bound_bytes() == plan.lower_bound_bytes);
  CHECK(m->plan()->planner() ==
        (opt.planner == Planner::NAIVE ? fb::Planner::Naive : fb::Planner::GreedyBestFit));
  if (!opt.tune_handle) CHECK(m->plan()->workspace_bytes() == 0);

  // Tensors, in IR index order.
  REQUIRE(m->tensors() != nullptr);
  REQUIRE(m->tensors()->size() == g.tensors.size());
  REQUIRE(m->buffers() != nullptr);
  std::vector<int> inputs, outputs;
  int constants = 0;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const Tensor& want = g.tensors[t];
    const fb::Tensor* got = m->tensors()->Get(static_cast<flatbuffers::uoffset_t>(t));
    INFO("tensor " << want.name);
    CHECK(str(got->name()) == want.name);
    CHECK(static_cast<int>(got->dtype()) == static_cast<int>(want.dtype));
    CHECK(to_vec(got->shape()) == want.dims);
    CHECK(to_vec(got->strides()) == (want.is_packed() ? std::vector<int64_t>{} : want.strides));
    const TensorPlacement& p = plan.tensors[t];
    CHECK(got->arena_offset() == (p.in_arena ? p.offset : -1));
    CHECK(got->arena_size() == (p.in_arena ? p.size : 0));
    CHECK(got->shares_with() == p.shares_with);
    switch (want.kind) {
      case TensorKind::INPUT:
        CHECK(got->kind() == fb::TensorKind::Input);
        inputs.push_back(static_cast<int>(t));
        break;
      case TensorKind::OUTPUT:
        CHECK(got->kind() == fb::TensorKind::Output);
        outputs.push_back(static_cast<int>(t));
        break;
      case TensorKind::ACTIVATION:
        CHECK(got->kind() == fb::TensorKind::Activation);
        break;
      case TensorKind::CONSTANT: {
        CHECK(got->kind() == fb::TensorKind::Constant);
        CHECK(got->arena_offset() == -1);
        REQUIRE(got->buffer() == constants);
        ++constants;
        const fb::Buffer* b = m->buffers()->Get(static_cast<flatbuffers::uoffset_t>(got->buffer()));
        CHECK(b->offset() % 64 == 0);
        CHECK(b->size() == static_cast<uint64_t>(want.elements()) * dtype_size(want.dtype));
        REQUIRE(b->offset() + b->size() <= body);
        // The values in the tensor's dtype: f32 bit-exact, f16 as jet::half rounds them.
        const uint8_t* data = file.data() + b->offset();
        size_t mismatches = 0;
        for (size_t i = 0; i < want.data.size(); ++i) {
          if (want.dtype == DType::F16) {
            const uint16_t bits = static_cast<uint16_t>(data[2 * i] | (data[2 * i + 1] << 8));
            mismatches += bits != half(want.data[i]).bits;
          } else {
            uint32_t bits = 0, expect_bits = 0;
            for (int k = 0; k < 4; ++k) bits |= static_cast<uint32_t>(data[4 * i + k]) << (8 * k);
            std::memcpy(&expect_bits, &want.data[i], 4);
            mismatches += bits != expect_bits;
          }
        }
        CHECK(mismatches == 0);
        break;
      }
    }
    if (want.kind != TensorKind::CONSTANT) CHECK(got->buffer() == -1);
  }
  CHECK(m->buffers()->size() == static_cast<flatbuffers::uoffset_t>(constants));
  CHECK(to_ivec(m->inputs()) == inputs);
  CHECK(to_ivec(m->outputs()) == outputs);
  // Buffers do not overlap each other, and the FlatBuffer verifies on the bytes before them.
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const fb::Buffer* b : *m->buffers()) spans.push_back({b->offset(), b->offset() + b->size()});
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) CHECK(spans[i - 1].second <= spans[i].first);
  if (!spans.empty()) {
    flatbuffers::Verifier head(file.data(), static_cast<size_t>(spans[0].first));
    CHECK(fb::VerifyModelBuffer(head));
  }

  // Ops in execution order.
  REQUIRE(m->ops() != nullptr);
  REQUIRE(m->ops()->size() == order.size());
  for (size_t s = 0; s < order.size(); ++s) {
    const Node& n = g.nodes[order[s]];
    const fb::Op* op = m->ops()->Get(static_cast<flatbuffers::uoffset_t>(s));
    INFO("op " << s << " '" << n.name << "'");
    CHECK(str(op->name()) == n.name);
    CHECK(to_ivec(op->inputs()) == n.inputs);
    CHECK(to_ivec(op->outputs()) == n.outputs);
    check_params(g, n, op, opt);
  }

  // Metadata.
  const fb::Metadata* md = m->metadata();
  REQUIRE(md != nullptr);
  std::vector<std::string> labels;
  if (md->labels()) {
    for (const flatbuffers::String* l : *md->labels()) labels.push_back(l->str());
  }
  CHECK(labels == opt.labels);
  const size_t nprops = md->properties() ? md->properties()->size() : 0;
  CHECK(nprops == opt.properties.size());
  for (const auto& kv : opt.properties) {
    REQUIRE(md->properties() != nullptr);
    const fb::KeyValue* found = md->properties()->LookupByKey(kv.first.c_str());
    REQUIRE(found != nullptr);
    CHECK(str(found->value()) == kv.second);
  }
  const size_t npre = md->preprocessing() ? md->preprocessing()->size() : 0;
  REQUIRE(npre == opt.preprocessing.size());
  for (size_t i = 0; i < npre; ++i) {
    const fb::Preprocessing* p = md->preprocessing()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const WriteOptions::Preprocess& w = opt.preprocessing[i];
    CHECK(p->input() == w.input);
    REQUIRE(p->mean() != nullptr);
    REQUIRE(p->std() != nullptr);
    CHECK(std::vector<float>(p->mean()->begin(), p->mean()->end()) == w.mean);
    CHECK(std::vector<float>(p->std()->begin(), p->std()->end()) == w.std);
    CHECK(p->channel_order() == (w.bgr ? fb::ChannelOrder::BGR : fb::ChannelOrder::RGB));
    CHECK(p->layout() == (w.nhwc ? fb::ImageLayout::NHWC : fb::ImageLayout::NCHW));
  }
}

WriteOptions options_with_metadata(int input) {
  WriteOptions o;
  o.producer_version = "0.1.0-test";
  o.source_name = "tiny.onnx";
  o.source_hash = "fnv64w:0123456789abcdef";
  for (int i = 0; i < 10; ++i) o.labels.push_back("class " + std::to_string(i));
  o.properties = {{"task", "classification"}, {"author", "zoo"}, {"license", "none"}};
  WriteOptions::Preprocess p;
  p.input = input;
  p.mean = {0.485f, 0.456f, 0.406f};
  p.std = {0.229f, 0.224f, 0.225f};
  p.bgr = true;
  o.preprocessing.push_back(p);
  return o;
}

int find_tensor(const Graph& g, const std::string& name) {
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (g.tensors[t].name == name) return static_cast<int>(t);
  }
  return -1;
}

Status write(const Graph& g, const WriteOptions& o, std::vector<uint8_t>* bytes, MemoryPlan* plan) {
  const Status st = write_model(g, o, bytes, plan);
  INFO(st.to_string());
  return st;
}

}  // namespace

TEST_CASE("writer: tiny_cnn with metadata, every op type, read back field by field") {
  const uint64_t seed = fresh_seed();
  MESSAGE("weight seed " << seed);
  Graph g;
  REQUIRE(tiny_cnn(tiny_cnn_options(seed), &g).ok());
  // Every op type is present.
  for (int op = 0; op <= static_cast<int>(OpType::TRANSFORM); ++op) {
    const bool found = std::any_of(g.nodes.begin(), g.nodes.end(),
                                   [&](const Node& n) { return static_cast<int>(n.op) == op; });
    INFO("op type " << op_type_name(static_cast<OpType>(op)));
    CHECK(found);
  }
  const WriteOptions opt = options_with_metadata(find_tensor(g, "image"));
  std::vector<uint8_t> bytes;
  MemoryPlan plan;
  REQUIRE(write(g, opt, &bytes, &plan).ok());
  check_file(g, opt, bytes, plan);
  MESSAGE("tiny_cnn f32: " << bytes.size() << " bytes, arena " << plan.arena_bytes << " B");

  // Deterministic: the same graph gives the same bytes.
  std::vector<uint8_t> again;
  REQUIRE(write_model(g, opt, &again).ok());
  CHECK(again == bytes);

  // NAIVE planner, no metadata, and the f16 channels-last version of the graph.
  WriteOptions naive;
  naive.planner = Planner::NAIVE;
  naive.conv_preference = ConvPreference::SPECIFY_WORKSPACE_LIMIT;
  naive.workspace_limit = 12345;
  REQUIRE(write(g, naive, &bytes, &plan).ok());
  check_file(g, naive, bytes, plan);
  Graph h = g;
  REQUIRE(convert_precision(&h, DType::F16).ok());
  REQUIRE(set_channels_last(&h).ok());
  REQUIRE(write(h, opt, &bytes, &plan).ok());
  check_file(h, opt, bytes, plan);
  const fb::Model* m = fb::GetModel(bytes.data());
  int strided = 0;
  for (const fb::Tensor* t : *m->tensors()) strided += t->strides() != nullptr;
  CHECK(strided > 5);
}

TEST_CASE("writer: ResNet-18 f32 and f16") {
  Graph g;
  ZooOptions zo;
  zo.seed = fresh_seed();
  MESSAGE("weight seed " << zo.seed);
  REQUIRE(resnet18(zo, &g).ok());
  WriteOptions opt;
  opt.producer_version = "test";
  std::vector<uint8_t> f32_bytes, f16_bytes;
  MemoryPlan plan;
  REQUIRE(write(g, opt, &f32_bytes, &plan).ok());
  check_file(g, opt, f32_bytes, plan);
  size_t weights = 0;
  for (const Tensor& t : g.tensors) {
    if (t.kind == TensorKind::CONSTANT) weights += t.bytes();
  }
  MESSAGE("ResNet-18 f32: " << f32_bytes.size() << " bytes (" << weights << " of weights), arena "
                            << plan.arena_bytes << " B, lower bound " << plan.lower_bound_bytes << " B");
  CHECK(f32_bytes.size() >= weights);
  CHECK(f32_bytes.size() < weights + weights / 50);  // alignment and the graph are small change

  Graph h = g;
  REQUIRE(convert_precision(&h, DType::F16).ok());
  REQUIRE(write(h, opt, &f16_bytes, &plan).ok());
  check_file(h, opt, f16_bytes, plan);
  MESSAGE("ResNet-18 f16: " << f16_bytes.size() << " bytes, arena " << plan.arena_bytes << " B");
  CHECK(f16_bytes.size() < f32_bytes.size() / 2 + f32_bytes.size() / 50);

  // write_model_file writes exactly those bytes.
  const std::string path = "jet_test_writer_resnet18_f16.jet";
  REQUIRE(write_model_file(h, opt, path).ok());
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> read((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(read == f16_bytes);
  std::remove(path.c_str());
}

TEST_CASE("writer: conv algorithms chosen on a tune handle") {
  Graph g;
  REQUIRE(tiny_cnn(tiny_cnn_options(fresh_seed()), &g).ok());
  const Handle cpu = Handle::cpu();
  WriteOptions opt;
  opt.tune_handle = &cpu;
  std::vector<uint8_t> bytes;
  MemoryPlan plan;
  REQUIRE(write(g, opt, &bytes, &plan).ok());
  check_file(g, opt, bytes, plan);
  const fb::Model* m = fb::GetModel(bytes.data());
  std::vector<int> order;
  REQUIRE(g.topological_order(&order).ok());
  size_t max_ws = 0;
  int convs = 0;
  for (size_t s = 0; s < order.size(); ++s) {
    const Node& n = g.nodes[order[s]];
    if (n.op != OpType::CONV) continue;
    ++convs;
    const ConvAttrs& a = std::get<ConvAttrs>(n.attrs);
    const Tensor& x = g.tensors[n.inputs[0]];
    const Tensor& w = g.tensors[n.inputs[1]];
    const ConvDesc cd = ConvDesc::make(2, a.pad_begin.data(), a.pad_end.data(), a.strides.data(), nullptr, a.groups);
    const FilterDesc wd = FilterDesc::make(w.dtype, FilterLayout::KCRS, 4, w.dims.data());
    ConvAlgo want = ConvAlgo::DIRECT;
    REQUIRE(choose_conv_forward_algo(cpu, x.desc(), wd, cd, g.tensors[n.outputs[0]].desc(),
                                     ConvPreference::PREFER_FASTEST, 0, &want).ok());
    size_t ws = 0;
    REQUIRE(conv_forward_workspace_size(cpu, x.desc(), wd, cd, g.tensors[n.outputs[0]].desc(), want, &ws).ok());
    max_ws = std::max(max_ws, ws);
    const fb::ConvParams* p = m->ops()->Get(static_cast<flatbuffers::uoffset_t>(s))->params_as_ConvParams();
    REQUIRE(p != nullptr);
    CHECK(p->algo() != fb::ConvAlgo::Auto);
    CHECK(static_cast<int>(p->algo()) == static_cast<int>(want));
  }
  CHECK(convs == 4);
  CHECK(m->plan()->workspace_bytes() == max_ws);
  MESSAGE("tiny_cnn tuned on the CPU: workspace " << max_ws << " B");
}

TEST_CASE("writer: invalid graphs, plans and metadata give BAD_PARAM naming the problem") {
  Graph good;
  REQUIRE(tiny_cnn(tiny_cnn_options(), &good).ok());
  const WriteOptions opt;
  std::vector<uint8_t> bytes = {1, 2, 3};
  auto expect_bad = [&](const Graph& g, const WriteOptions& o, const std::vector<std::string>& words) {
    const Status st = write_model(g, o, &bytes);
    INFO(st.to_string());
    CHECK(st.code() == StatusCode::BAD_PARAM);
    for (const std::string& w : words) CHECK(contains(st.message(), w));
    CHECK(bytes.empty());
  };
  CHECK(write_model(good, opt, nullptr).code() == StatusCode::BAD_PARAM);

  Graph g = good;  // a cycle
  g.nodes[0].inputs[0] = find_tensor(g, "conv2");
  expect_bad(g, opt, {"cycle"});
  g = good;  // attributes of another op
  for (Node& n : g.nodes) {
    if (n.name == "gate") n.attrs = ConcatAttrs{};
  }
  expect_bad(g, opt, {"'gate'"});
  g = good;  // a conv missing its bias input
  for (Node& n : g.nodes) {
    if (n.name == "conv1") n.inputs.pop_back();
  }
  expect_bad(g, opt, {"'conv1'", "inputs"});
  g = good;  // a constant without its values
  g.tensors[find_tensor(g, "fc.w")].data.pop_back();
  expect_bad(g, opt, {"'fc.w'", "values"});
  g = good;  // an output nobody writes
  Tensor orphan{"orphan", DType::F32, {1, 2}, TensorKind::OUTPUT, {}, {}, {}};
  g.add_tensor(orphan);
  expect_bad(g, opt, {"'orphan'", "produced"});
  g = good;  // strides under which two elements share an address
  g.tensors[find_tensor(g, "conv1")].strides = {1, 1, 1, 1};
  expect_bad(g, opt, {"'conv1'"});
  g = good;  // a strided constant
  g.tensors[find_tensor(g, "fc.w")].strides = {1, 10};
  expect_bad(g, opt, {"'fc.w'", "packed"});
  g = good;  // a transform whose `to` disagrees with its output
  for (Node& n : g.nodes) {
    if (n.name == "to_f16") n.attrs = TransformAttrs{DType::F32};
  }
  expect_bad(g, opt, {"'to_f16'"});
  g = good;  // no outputs
  for (Tensor& t : g.tensors) {
    if (t.kind == TensorKind::OUTPUT) t.kind = TensorKind::ACTIVATION;
  }
  expect_bad(g, opt, {"no OUTPUT"});

  // An in-place relu between two layouts of one tensor cannot run: the planner must not merge
  // the pair (the writer would refuse it), so the write succeeds with separate regions.
  Graph p;
  int x = -1, a = -1, r = -1;
  REQUIRE(p.add_input("x", DType::F32, {1, 4, 8, 8}, &x).ok());
  REQUIRE(p.activation("a", x, ActivationDesc::tanh(), &a).ok());
  REQUIRE(p.relu("r", a, &r).ok());
  REQUIRE(p.mark_output(r).ok());
  p.tensors[a].strides = channels_last_strides(p.tensors[a].dims);
  MemoryPlan layout_plan;
  const Status lst = write_model(p, opt, &bytes, &layout_plan);
  INFO(lst.to_string());
  CHECK(lst.ok());
  CHECK(layout_plan.tensors[r].shares_with == -1);
  CHECK(layout_plan.tensors[r].offset != layout_plan.tensors[a].offset);

  // Metadata.
  WriteOptions m = options_with_metadata(find_tensor(good, "image"));
  m.properties.push_back({"task", "again"});
  expect_bad(good, m, {"'task'"});
  m = options_with_metadata(find_tensor(good, "conv1"));  // not a graph input
  expect_bad(good, m, {"preprocessing[0]", "input"});
  m = options_with_metadata(find_tensor(good, "image"));
  m.preprocessing[0].std.pop_back();
  expect_bad(good, m, {"preprocessing[0]", "std"});
  m = options_with_metadata(find_tensor(good, "image"));
  m.preprocessing[0].std[1] = 0.f;
  expect_bad(good, m, {"preprocessing[0]", "zero"});

  // An unwritable path.
  const Status st = write_model_file(good, opt, "/nonexistent-dir/model.jet");
  CHECK(st.code() == StatusCode::BAD_PARAM);
  CHECK(contains(st.message(), "/nonexistent-dir/model.jet"));
}
