#include "write_model.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "jet/file_io.h"
#include "jet/runtime.h"
#include "jet/schema/model_generated.h"
#include "op_params.h"

namespace jet {

namespace {

constexpr size_t kWeightAlignment = 64;  // every weight buffer starts at a multiple of this
constexpr size_t kFooterBytes = 16;      // u64 checksum + 8 magic bytes
constexpr char kFooterMagic[] = "JETSUM01";

Status bad(const std::string& what) { return Status(StatusCode::BAD_PARAM, "write_model: " + what); }

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

std::string tensor_label(const ir::Graph& g, int t) {
  return std::string(ir::tensor_kind_name(g.tensors[t].kind)) + " tensor '" + g.tensors[t].name + "'";
}

// Everything about the tensors that the IR's structure does not already guarantee.
Status check_tensors(const ir::Graph& g) {
  std::vector<int> producer(g.tensors.size(), -1);
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) producer[g.nodes[i].outputs[0]] = i;
  bool has_output = false;
  for (int t = 0; t < static_cast<int>(g.tensors.size()); ++t) {
    const ir::Tensor& tt = g.tensors[t];
    const std::string label = tensor_label(g, t);
    if (!dtype_is_valid(static_cast<int64_t>(tt.dtype))) {
      return bad(label + " has unknown dtype " + std::to_string(static_cast<int>(tt.dtype)));
    }
    if (tt.dims.empty() || static_cast<int>(tt.dims.size()) > kMaxRank) {
      return bad(label + " has rank " + std::to_string(tt.dims.size()));
    }
    for (int64_t d : tt.dims) {
      if (d < 1) return bad(label + " has a dim < 1");
    }
    if (!tt.strides.empty() && tt.strides.size() != tt.dims.size()) {
      return bad(label + " has " + std::to_string(tt.strides.size()) + " strides for rank " +
                 std::to_string(tt.dims.size()));
    }
    const Status st = tt.desc().validate_any_dtype(tt.name.c_str());
    if (!st.ok()) return bad(label + ": " + st.message());
    switch (tt.kind) {
      case ir::TensorKind::CONSTANT:
        if (!tt.is_packed()) return bad(label + " is strided; constants must be packed");
        if (dtype_is_float(tt.dtype) ? static_cast<int64_t>(tt.data.size()) != tt.elements() || !tt.int_data.empty()
                                     : static_cast<int64_t>(tt.int_data.size()) != tt.elements() || !tt.data.empty()) {
          return bad(label + " has " + std::to_string(tt.data.size()) + " float and " +
                     std::to_string(tt.int_data.size()) + " integer values, expected " + std::to_string(tt.elements()) +
                     (dtype_is_float(tt.dtype) ? " float values" : " integer values"));
        }
        if (tt.dtype == DType::BOOL) {
          for (int64_t v : tt.int_data) {
            if (v != 0 && v != 1) return bad(label + " is bool but holds the value " + std::to_string(v));
          }
        }
        if (producer[t] >= 0) return bad(label + " is written by node '" + g.nodes[producer[t]].name + "'");
        break;
      case ir::TensorKind::INPUT:
        if (producer[t] >= 0) return bad(label + " is written by node '" + g.nodes[producer[t]].name + "'");
        break;
      case ir::TensorKind::OUTPUT:
        has_output = true;
        if (producer[t] < 0) return bad(label + " is not produced by any node");
        break;
      case ir::TensorKind::ACTIVATION:
        if (producer[t] < 0) return bad(label + " is not produced by any node");
        break;
      default:
        return bad("tensor '" + tt.name + "' has unknown kind " + std::to_string(static_cast<int>(tt.kind)));
    }
  }
  if (!has_output) return bad("the graph has no OUTPUT tensor");
  return Status::success();
}

// Kernels run an in-place op only when x and y have one layout; the planner merges by byte size.
Status check_in_place_layouts(const ir::Graph& g, const ir::MemoryPlan& plan) {
  for (int t = 0; t < static_cast<int>(g.tensors.size()); ++t) {
    const int x = plan.tensors[t].shares_with;
    if (x < 0) continue;
    const ir::Tensor& a = g.tensors[x];
    const ir::Tensor& b = g.tensors[t];
    const bool same = a.dtype == b.dtype &&
                      ((a.is_packed() && b.is_packed()) || (a.dims == b.dims && a.strides == b.strides));
    if (!same) {
      return bad("in-place pair '" + a.name + "' -> '" + b.name + "' has two different layouts");
    }
  }
  return Status::success();
}

Status check_metadata(const ir::Graph& g, const WriteOptions& o) {
  std::set<std::string> keys;
  for (const auto& kv : o.properties) {
    if (!keys.insert(kv.first).second) return bad("property key '" + kv.first + "' appears twice");
  }
  for (size_t i = 0; i < o.preprocessing.size(); ++i) {
    const WriteOptions::Preprocess& p = o.preprocessing[i];
    const std::string label = "preprocessing[" + std::to_string(i) + "]";
    if (p.input < 0 || p.input >= static_cast<int>(g.tensors.size()) ||
        g.tensors[p.input].kind != ir::TensorKind::INPUT) {
      return bad(label + ": input " + std::to_string(p.input) + " is not a graph input's tensor index");
    }
    if (p.mean.size() != p.std.size()) {
      return bad(label + ": " + std::to_string(p.mean.size()) + " means but " +
                 std::to_string(p.std.size()) + " stds");
    }
    for (float s : p.std) {
      if (!(s != 0.f)) return bad(label + ": std has a zero (or NaN)");
    }
    if (p.height < 0 || p.width < 0) return bad(label + ": negative image size");
    if (!(p.crop_fraction > 0.f && p.crop_fraction <= 1.f)) return bad(label + ": crop_fraction must be in (0, 1]");
    if (!(p.pad_value >= 0.f && p.pad_value <= 255.f)) return bad(label + ": pad_value must be in [0, 255]");
  }
  return Status::success();
}

// The algorithm written for each conv node (Auto without a tune handle) and the largest workspace.
Status choose_algorithms(const ir::Graph& g, const WriteOptions& o, std::vector<fb::ConvAlgo>* algo,
                         size_t* workspace) {
  algo->assign(g.nodes.size(), fb::ConvAlgo::Auto);
  *workspace = 0;
  if (!o.tune_handle) return Status::success();
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    const ir::Node& n = g.nodes[i];
    if (n.op != ir::OpType::CONV) continue;
    const ir::ConvAttrs& a = std::get<ir::ConvAttrs>(n.attrs);
    const ir::Tensor& x = g.tensors[n.inputs[0]];
    const ir::Tensor& w = g.tensors[n.inputs[1]];
    const ir::Tensor& y = g.tensors[n.outputs[0]];
    const int rank = static_cast<int>(x.dims.size());
    const int sr = rank - 2;
    auto ptr = [](const std::vector<int64_t>& v) { return v.empty() ? nullptr : v.data(); };
    const bool lengths_ok = (a.pad_begin.empty() || static_cast<int>(a.pad_begin.size()) == sr) &&
                            (a.pad_end.empty() || static_cast<int>(a.pad_end.size()) == sr) &&
                            (a.strides.empty() || static_cast<int>(a.strides.size()) == sr) &&
                            (a.dilations.empty() || static_cast<int>(a.dilations.size()) == sr);
    if (rank < 3 || rank > 5 || static_cast<int>(w.dims.size()) != rank || !lengths_ok) {
      return bad("Conv '" + n.name + "': inconsistent ranks of x, w and the attributes");
    }
    const ConvDesc cd = ConvDesc::make(sr, ptr(a.pad_begin), ptr(a.pad_end), ptr(a.strides),
                                       ptr(a.dilations), a.groups);
    const FilterDesc wd = FilterDesc::make(w.dtype, FilterLayout::KCRS, rank, w.dims.data());
    ConvAlgo chosen = ConvAlgo::DIRECT;
    Status st = choose_conv_forward_algo(*o.tune_handle, x.desc(), wd, cd, y.desc(),
                                         o.conv_preference, o.workspace_limit, &chosen);
    size_t bytes = 0;
    if (st.ok()) st = conv_forward_workspace_size(*o.tune_handle, x.desc(), wd, cd, y.desc(), chosen, &bytes);
    if (!st.ok()) return Status(st.code(), "write_model: Conv '" + n.name + "': " + st.message());
    (*algo)[i] = static_cast<fb::ConvAlgo>(static_cast<int32_t>(chosen));
    *workspace = std::max(*workspace, bytes);
  }
  return Status::success();
}

fb::DType to_fb(DType t) {
  static_assert(static_cast<int>(fb::DType::F32) == static_cast<int>(DType::F32) &&
                    static_cast<int>(fb::DType::F16) == static_cast<int>(DType::F16) &&
                    static_cast<int>(fb::DType::I32) == static_cast<int>(DType::I32) &&
                    static_cast<int>(fb::DType::I64) == static_cast<int>(DType::I64) &&
                    static_cast<int>(fb::DType::Bool) == static_cast<int>(DType::BOOL),
                "the schema's DType values are jet::DType's");
  return static_cast<fb::DType>(static_cast<int>(t));
}

fb::TensorKind to_fb(ir::TensorKind k) {
  switch (k) {
    case ir::TensorKind::INPUT: return fb::TensorKind::Input;
    case ir::TensorKind::OUTPUT: return fb::TensorKind::Output;
    case ir::TensorKind::CONSTANT: return fb::TensorKind::Constant;
    case ir::TensorKind::ACTIVATION: return fb::TensorKind::Activation;
  }
  return fb::TensorKind::Activation;
}

// Where each weight buffer goes in the file, given where the FlatBuffer ends.
struct FileLayout {
  size_t flatbuffer_bytes = 0;
  std::vector<size_t> offsets;  // one per constant, in tensor index order
  std::vector<size_t> sizes;
  size_t footer_offset = 0;
  size_t file_size = 0;
};

FileLayout layout_for(size_t flatbuffer_bytes, const std::vector<size_t>& sizes) {
  FileLayout l;
  l.flatbuffer_bytes = flatbuffer_bytes;
  l.sizes = sizes;
  size_t end = flatbuffer_bytes;
  for (size_t s : sizes) {
    const size_t off = align_up(end, kWeightAlignment);
    l.offsets.push_back(off);
    end = off + s;
  }
  l.footer_offset = align_up(end, 8);  // the checksum word stays 8-byte aligned
  l.file_size = l.footer_offset + kFooterBytes;
  return l;
}

using VecI64 = flatbuffers::Offset<flatbuffers::Vector<int64_t>>;

// One op's parameter table: Pack of its table struct or the op's write_params (ir.cpp, next to
// its builder), chosen by the switch schema/op_list.h generates; the union member is the one
// op_list.h names for the op.
std::pair<fb::OpParams, flatbuffers::Offset<void>> op_params(flatbuffers::FlatBufferBuilder& b,
                                                             const ir::Node& n, fb::ConvAlgo algo,
                                                             const WriteOptions& o) {
  ir::ParamsContext c;
  c.conv_algo = algo;
  c.conv_preference = o.conv_preference;
  c.workspace_limit = o.workspace_limit;
  switch (n.op) {
#define JET_WRITE_OP_PARAMS(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) \
  case ir::OpType::ENUM:                                                                                           \
    return {fb::OpParams::Params,                                                                                \
            ir::write_op_params<fb::Params>(b, std::get<static_cast<size_t>(ir::OpType::ENUM)>(n.attrs), c).Union()};
    JET_OPS(JET_WRITE_OP_PARAMS)
#undef JET_WRITE_OP_PARAMS
    case ir::OpType::COUNT:
      break;
  }
  return {fb::OpParams::NONE, 0};  // unreachable: check_node rejected unknown ops
}

// Builds the whole FlatBuffer for one file layout. ForceDefaults keeps every scalar field in the
// buffer whatever its value, so the size does not depend on the offsets written into it.
void build_flatbuffer(const ir::Graph& g, const std::vector<int>& order, const ir::MemoryPlan& plan,
                      const std::vector<fb::ConvAlgo>& algo, size_t workspace, const WriteOptions& o,
                      const FileLayout& layout, flatbuffers::FlatBufferBuilder* out) {
  flatbuffers::FlatBufferBuilder& b = *out;
  b.Clear();
  b.ForceDefaults(true);

  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  std::vector<int32_t> inputs, outputs;
  int next_buffer = 0;
  for (int t = 0; t < static_cast<int>(g.tensors.size()); ++t) {
    const ir::Tensor& tt = g.tensors[t];
    const ir::TensorPlacement& p = plan.tensors[t];
    const auto name = b.CreateString(tt.name);
    const auto shape = b.CreateVector(tt.dims);
    const VecI64 strides = tt.is_packed() ? VecI64() : b.CreateVector(tt.strides);
    const bool constant = tt.kind == ir::TensorKind::CONSTANT;
    const int32_t buffer = constant ? next_buffer++ : -1;
    tensors.push_back(fb::CreateTensor(b, name, to_fb(tt.dtype), shape, strides, to_fb(tt.kind),
                                       p.in_arena ? p.offset : -1,
                                       p.in_arena ? static_cast<uint64_t>(p.size) : 0, buffer,
                                       p.shares_with));
    if (tt.kind == ir::TensorKind::INPUT) inputs.push_back(t);
    if (tt.kind == ir::TensorKind::OUTPUT) outputs.push_back(t);
  }
  const auto tensors_vec = b.CreateVector(tensors);

  std::vector<flatbuffers::Offset<fb::Op>> ops;
  for (int i : order) {
    const ir::Node& n = g.nodes[i];
    const auto name = b.CreateString(n.name);
    const auto params = op_params(b, n, algo[i], o);
    const auto ins = b.CreateVector(n.inputs);
    const auto outs = b.CreateVector(n.outputs);
    ops.push_back(fb::CreateOp(b, name, params.first, params.second, ins, outs));
  }
  const auto ops_vec = b.CreateVector(ops);
  const auto inputs_vec = b.CreateVector(inputs);
  const auto outputs_vec = b.CreateVector(outputs);

  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  for (size_t i = 0; i < layout.offsets.size(); ++i) {
    buffers.push_back(fb::CreateBuffer(b, layout.offsets[i], layout.sizes[i]));
  }
  const auto buffers_vec = b.CreateVector(buffers);

  const auto mem = fb::CreateMemoryPlan(
      b, plan.arena_bytes, workspace, plan.lower_bound_bytes,
      plan.kind == ir::Planner::NAIVE ? fb::Planner::Naive : fb::Planner::GreedyBestFit);
  const auto producer = fb::CreateProducer(b, b.CreateString("jet-convert"), b.CreateString(o.producer_version),
                                           b.CreateString(o.source_name), b.CreateString(o.source_hash));

  std::vector<flatbuffers::Offset<fb::Preprocessing>> pre;
  for (const WriteOptions::Preprocess& p : o.preprocessing) {
    const auto mean = b.CreateVector(p.mean);
    const auto stdv = b.CreateVector(p.std);
    const fb::ResizeMode resize = p.resize == ImagePreprocessing::Resize::CENTER_CROP ? fb::ResizeMode::CenterCrop
                                  : p.resize == ImagePreprocessing::Resize::LETTERBOX ? fb::ResizeMode::Letterbox
                                                                                       : fb::ResizeMode::Stretch;
    pre.push_back(fb::CreatePreprocessing(b, p.input, mean, stdv,
                                          p.bgr ? fb::ChannelOrder::BGR : fb::ChannelOrder::RGB,
                                          p.nhwc ? fb::ImageLayout::NHWC : fb::ImageLayout::NCHW, p.height,
                                          p.width, resize, p.crop_fraction, p.pad_value));
  }
  std::vector<flatbuffers::Offset<flatbuffers::String>> labels;
  for (const std::string& l : o.labels) labels.push_back(b.CreateString(l));
  std::vector<flatbuffers::Offset<fb::KeyValue>> props;
  for (const auto& kv : o.properties) {
    const auto k = b.CreateString(kv.first);
    const auto v = b.CreateString(kv.second);
    props.push_back(fb::CreateKeyValue(b, k, v));
  }
  const auto pre_vec = b.CreateVector(pre);
  const auto labels_vec = b.CreateVector(labels);
  const auto props_vec = b.CreateVectorOfSortedTables(&props);
  const auto metadata = fb::CreateMetadata(b, pre_vec, labels_vec, props_vec);

  const auto model = fb::CreateModel(b, kSchemaMajor, kSchemaMinor, producer, tensors_vec, ops_vec,
                                     inputs_vec, outputs_vec, buffers_vec, mem, metadata,
                                     layout.file_size);
  fb::FinishModelBuffer(b, model);
}

void put_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// A constant's values in its dtype, little-endian.
void write_values(const ir::Tensor& t, uint8_t* dst) {
  for (size_t i = 0; i < t.int_data.size(); ++i) {  // integer and bool constants
    const int64_t v = t.int_data[i];
    switch (t.dtype) {
      case DType::I64: put_u64(dst + 8 * i, static_cast<uint64_t>(v)); break;
      case DType::I32: put_u32(dst + 4 * i, static_cast<uint32_t>(static_cast<uint64_t>(v))); break;
      case DType::BOOL: dst[i] = v != 0 ? 1 : 0; break;
      case DType::F32:
      case DType::F16: break;  // float constants hold `data` (check_tensors)
    }
  }
  for (size_t i = 0; i < t.data.size(); ++i) {
    if (t.dtype == DType::F16) {
      put_u16(dst + 2 * i, half(t.data[i]).bits);
    } else {
      uint32_t bits = 0;
      std::memcpy(&bits, &t.data[i], 4);
      put_u32(dst + 4 * i, bits);
    }
  }
}

}  // namespace

Status write_model(const ir::Graph& g, const WriteOptions& opts, std::vector<uint8_t>* file,
                   ir::MemoryPlan* plan_out) {
  if (!file) return bad("file is null");
  file->clear();
  std::vector<int> order;
  Status st = ir::check_graph(g, &order);
  if (!st.ok()) return Status(st.code(), "write_model: " + st.message());
  st = check_tensors(g);
  if (!st.ok()) return st;
  st = check_metadata(g, opts);
  if (!st.ok()) return st;
  const ir::MemoryPlan plan = ir::plan_memory(g, order, opts.planner);
  st = ir::validate_plan(g, order, plan);
  if (!st.ok()) return Status(st.code(), "write_model: " + st.message());
  st = check_in_place_layouts(g, plan);
  if (!st.ok()) return st;
  std::vector<fb::ConvAlgo> algo;
  size_t workspace = 0;
  st = choose_algorithms(g, opts, &algo, &workspace);
  if (!st.ok()) return st;

  std::vector<size_t> sizes;
  for (const ir::Tensor& t : g.tensors) {
    if (t.kind == ir::TensorKind::CONSTANT) sizes.push_back(static_cast<size_t>(t.elements()) * dtype_size(t.dtype));
  }
  // Offsets and file_size live inside the FlatBuffer but depend on its size. With ForceDefaults
  // the size does not depend on those values, so building with the layout of the previous build's
  // size settles on the second build; the loop checks that rather than trusting it.
  flatbuffers::FlatBufferBuilder builder(1 << 16);
  FileLayout layout = layout_for(0, sizes);
  bool settled = false;
  for (int attempt = 0; attempt < 4 && !settled; ++attempt) {
    build_flatbuffer(g, order, plan, algo, workspace, opts, layout, &builder);
    const size_t built = builder.GetSize();
    settled = built == layout.flatbuffer_bytes;
    if (!settled) layout = layout_for(built, sizes);
  }
  if (!settled) return Status(StatusCode::INTERNAL_ERROR, "write_model: the file layout did not settle");

  file->assign(layout.file_size, 0);
  std::memcpy(file->data(), builder.GetBufferPointer(), layout.flatbuffer_bytes);
  size_t buffer = 0;
  for (const ir::Tensor& t : g.tensors) {
    if (t.kind != ir::TensorKind::CONSTANT) continue;
    write_values(t, file->data() + layout.offsets[buffer++]);
  }
  uint8_t* footer = file->data() + layout.footer_offset;
  put_u64(footer, model_checksum(file->data(), layout.footer_offset));
  std::memcpy(footer + 8, kFooterMagic, 8);
  if (plan_out) *plan_out = plan;
  return Status::success();
}

Status write_model_file(const ir::Graph& g, const WriteOptions& opts, const std::string& path) {
  std::vector<uint8_t> bytes;
  Status st = write_model(g, opts, &bytes);
  if (!st.ok()) return st;
  return write_file_atomically(path, bytes.data(), bytes.size());
}

}  // namespace jet
