// check_graph and check_arena_overlaps: the semantic checks of a verified FlatBuffer. After them
// every index is in range, every tensor's bytes lie inside its buffer or arena region, the ops
// are in execution order and no two live tensors share memory (except in-place pairs), so run()
// cannot touch memory outside the weights, the arena or the caller's bound buffers.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "format.h"
#include "loader.h"
#include "ops.h"

namespace jet {
namespace rt {

namespace {

Status bad(const std::string& m) { return Status(StatusCode::BAD_PARAM, m); }

// Sizes beyond this are rejected outright: no device has that much memory, and keeping every
// size below 2^48 lets the sums and alignments below stay far from overflow.
constexpr uint64_t kMaxBytes = uint64_t(1) << 48;

const char* kind_name(fb::TensorKind k) {
  switch (k) {
    case fb::TensorKind::Input: return "Input";
    case fb::TensorKind::Output: return "Output";
    case fb::TensorKind::Constant: return "Constant";
    case fb::TensorKind::Activation: return "Activation";
  }
  return "?";
}

TensorRole role_of(fb::TensorKind k) {
  switch (k) {
    case fb::TensorKind::Input: return TensorRole::INPUT;
    case fb::TensorKind::Output: return TensorRole::OUTPUT;
    case fb::TensorKind::Constant: return TensorRole::CONSTANT;
    case fb::TensorKind::Activation: return TensorRole::ACTIVATION;
  }
  return TensorRole::ACTIVATION;
}

// Shape, dtype and strides of one tensor -> a validated descriptor. Packed strides are computed
// here with overflow checks before any TensorDesc helper multiplies the dims.
Status check_tensor_shape(const std::string& label, const fb::Tensor& t, TensorDesc* desc,
                          size_t* bytes) {
  const int dt = static_cast<int>(t.dtype());
  if (!dtype_is_valid(dt)) {
    return bad(label + " has unknown dtype " + std::to_string(dt));
  }
  const DType dtype = static_cast<DType>(dt);
  const auto* shape = t.shape();
  const size_t rank = shape ? shape->size() : 0;
  if (rank < 1 || rank > static_cast<size_t>(kMaxRank)) {
    return bad(label + " has rank " + std::to_string(rank) + ", expected 1.." +
               std::to_string(kMaxRank));
  }
  int64_t dims[kMaxRank];
  const int64_t kLimit = std::numeric_limits<int64_t>::max() / 16;
  int64_t elements = 1;
  for (size_t i = 0; i < rank; ++i) {
    dims[i] = read_i64(shape, static_cast<flatbuffers::uoffset_t>(i));
    if (dims[i] < 1) {
      return bad(label + " has dim " + std::to_string(i) + " = " + std::to_string(dims[i]) +
                 "; dims must be >= 1");
    }
    if (elements > kLimit / dims[i]) return bad(label + ": element count overflows");
    elements *= dims[i];
  }
  int64_t strides[kMaxRank];
  const auto* st = t.strides();
  if (st && st->size() > 0) {
    if (st->size() != rank) {
      return bad(label + " has " + std::to_string(st->size()) + " strides for rank " +
                 std::to_string(rank));
    }
    for (size_t i = 0; i < rank; ++i) strides[i] = read_i64(st, static_cast<flatbuffers::uoffset_t>(i));
  } else {
    int64_t s = 1;  // cannot overflow: s <= elements
    for (size_t i = rank; i-- > 0;) {
      strides[i] = s;
      s *= dims[i];
    }
  }
  *desc = TensorDesc::strided(dtype, static_cast<int>(rank), dims, strides);
  const Status vs = desc->validate_any_dtype(label.c_str());  // strides well-formed, span fits int64 / 16
  if (!vs.ok()) return vs;
  *bytes = static_cast<size_t>(desc->span()) * dtype_size(dtype);
  return Status();
}

}  // namespace

std::string tensor_label(const Engine::Impl& impl, int t) {
  std::string s = "tensor " + std::to_string(t);
  if (t >= 0 && t < static_cast<int>(impl.tensor_infos.size())) {
    s += " '" + impl.tensor_infos[t].name + "'";
  }
  return s;
}

std::string op_label(const Engine::Impl& impl, int op) {
  std::string s = "op " + std::to_string(op);
  if (op >= 0 && op < static_cast<int>(impl.op_infos.size())) {
    s += " '" + impl.op_infos[op].name + "' (" + impl.op_infos[op].type + ")";
  }
  return s;
}

Status check_graph(const fb::Model& m, const uint8_t* file_data, size_t file_size, Engine::Impl* impl) {
  const size_t payload_end = file_size - format::kFooterBytes;  // weights must end before it

  // ---- Buffers: inside the file, 64-aligned. -------------------------------------------------
  const auto* buffers = m.buffers();
  const size_t num_buffers = buffers ? buffers->size() : 0;
  for (size_t b = 0; b < num_buffers; ++b) {
    const fb::Buffer* buf = buffers->Get(static_cast<flatbuffers::uoffset_t>(b));
    const uint64_t off = buf->offset(), size = buf->size();
    const std::string label = "buffer " + std::to_string(b);
    if (off % format::kBufferAlignment != 0) {
      return bad(label + " starts at file offset " + std::to_string(off) +
                 ", not a multiple of " + std::to_string(format::kBufferAlignment));
    }
    if (off > payload_end || size > payload_end - off) {
      return bad(label + " (weights at file bytes " + std::to_string(off) + " + " +
                 std::to_string(size) + ") lies outside the file's " +
                 std::to_string(payload_end) + " bytes before the footer");
    }
  }

  // ---- Buffers: disjoint, and all behind the FlatBuffer. ----------------------------------------
  // A constant reading another constant's bytes, or the FlatBuffer's own tables, loads nonsense
  // weights; like arena regions, weight buffers are checked not to overlap. Empty buffers hold no
  // bytes and are skipped.
  {
    std::vector<std::pair<uint64_t, size_t>> spans;  // (offset, buffer index) of non-empty buffers
    for (size_t b = 0; b < num_buffers; ++b) {
      const fb::Buffer* buf = buffers->Get(static_cast<flatbuffers::uoffset_t>(b));
      if (buf->size() > 0) spans.emplace_back(buf->offset(), b);
    }
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      const fb::Buffer* prev = buffers->Get(static_cast<flatbuffers::uoffset_t>(spans[i - 1].second));
      if (prev->offset() + prev->size() > spans[i].first) {
        return bad("weight buffers overlap: buffer " + std::to_string(spans[i - 1].second) + " (file bytes " +
                   std::to_string(prev->offset()) + " + " + std::to_string(prev->size()) + ") and buffer " +
                   std::to_string(spans[i].second) + " (from file byte " + std::to_string(spans[i].first) + ")");
      }
    }
    // The FlatBuffer must lie wholly before the first weight byte: verified again over only that
    // prefix, any table, vector or string reaching into the weights fails.
    if (!spans.empty()) {
      const size_t first = static_cast<size_t>(spans[0].first);
      bool fits = first >= 8;  // root offset and identifier
      if (fits) {
        flatbuffers::Verifier prefix(file_data, std::min<size_t>(first, FLATBUFFERS_MAX_BUFFER_SIZE - 1),
                                     format::kVerifierMaxDepth, format::kVerifierMaxTables);
        fits = fb::VerifyModelBuffer(prefix);
      }
      if (!fits) {
        return bad("buffer " + std::to_string(spans[0].second) + " (weights from file byte " + std::to_string(first) +
                   ") overlaps the FlatBuffer part of the file");
      }
    }
  }

  // ---- Tensors. ----------------------------------------------------------------------------
  const auto* tensors = m.tensors();
  const size_t nt = tensors ? tensors->size() : 0;
  if (nt == 0) return bad("the model has no tensors");
  if (nt > format::kMaxTensors) {
    return bad("the model has " + std::to_string(nt) + " tensors, more than the runtime's limit of " +
               std::to_string(format::kMaxTensors));
  }
  const fb::MemoryPlan* plan = m.plan();
  if (!plan) return bad("the model has no memory plan");
  if (plan->arena_bytes() > kMaxBytes || plan->workspace_bytes() > kMaxBytes) {
    return bad("the memory plan's arena (" + std::to_string(plan->arena_bytes()) +
               " bytes) or workspace (" + std::to_string(plan->workspace_bytes()) +
               " bytes) is implausibly large");
  }
  impl->tensor_infos.resize(nt);
  impl->tensors.resize(nt);
  for (size_t i = 0; i < nt; ++i) {
    const fb::Tensor* t = tensors->Get(static_cast<flatbuffers::uoffset_t>(i));
    TensorInfo& info = impl->tensor_infos[i];
    TensorRecord& rec = impl->tensors[i];
    info.name = t->name() ? t->name()->str() : std::string();
    const std::string label = tensor_label(*impl, static_cast<int>(i));
    const int kind = static_cast<int>(t->kind());
    if (kind < static_cast<int>(fb::TensorKind::MIN) || kind > static_cast<int>(fb::TensorKind::MAX)) {
      return bad(label + " has unknown kind " + std::to_string(kind));
    }
    Status st = check_tensor_shape(label, *t, &rec.desc, &rec.bytes);
    if (!st.ok()) return st;
    info.dtype = rec.desc.dtype();
    info.dims.assign(rec.desc.dims(), rec.desc.dims() + rec.desc.rank());
    info.strides.assign(rec.desc.strides(), rec.desc.strides() + rec.desc.rank());
    info.role = role_of(t->kind());
    info.bytes = rec.bytes;
    rec.constant = t->kind() == fb::TensorKind::Constant;
    if (rec.constant) {
      const int b = t->buffer();
      if (b < 0 || static_cast<size_t>(b) >= num_buffers) {
        return bad(label + " is a constant referring to buffer " + std::to_string(b) +
                   ", but the model has " + std::to_string(num_buffers) + " buffers");
      }
      if (!rec.desc.is_packed()) return bad(label + " is a constant with strides; constants must be packed");
      const uint64_t size = buffers->Get(static_cast<flatbuffers::uoffset_t>(b))->size();
      if (size != rec.bytes) {
        return bad(label + " needs " + std::to_string(rec.bytes) + " bytes but its buffer " +
                   std::to_string(b) + " holds " + std::to_string(size));
      }
      rec.buffer = b;
    }
    impl->tensor_by_name.emplace(info.name, static_cast<int>(i));  // keeps the first
  }

  // ---- Graph inputs and outputs. -------------------------------------------------------------
  std::vector<int> listed(nt, 0);
  const auto* ins = m.inputs();
  for (flatbuffers::uoffset_t k = 0; ins && k < ins->size(); ++k) {
    const int t = ins->Get(k);
    if (t < 0 || static_cast<size_t>(t) >= nt) {
      return bad("graph input " + std::to_string(k) + " is tensor index " + std::to_string(t) +
                 ", out of range (the model has " + std::to_string(nt) + " tensors)");
    }
    const fb::TensorKind kind = tensors->Get(static_cast<flatbuffers::uoffset_t>(t))->kind();
    if (kind != fb::TensorKind::Input) {
      return bad("graph input " + std::to_string(k) + " is " + tensor_label(*impl, t) +
                 " of kind " + kind_name(kind) + ", expected Input");
    }
    if (listed[t]++) return bad(tensor_label(*impl, t) + " is listed twice as a graph input");
    impl->inputs.push_back(t);
  }
  const auto* outs = m.outputs();
  for (flatbuffers::uoffset_t k = 0; outs && k < outs->size(); ++k) {
    const int t = outs->Get(k);
    if (t < 0 || static_cast<size_t>(t) >= nt) {
      return bad("graph output " + std::to_string(k) + " is tensor index " + std::to_string(t) +
                 ", out of range (the model has " + std::to_string(nt) + " tensors)");
    }
    const fb::TensorKind kind = tensors->Get(static_cast<flatbuffers::uoffset_t>(t))->kind();
    if (kind != fb::TensorKind::Output) {
      return bad("graph output " + std::to_string(k) + " is " + tensor_label(*impl, t) +
                 " of kind " + kind_name(kind) + ", expected Output");
    }
    if (listed[t]++) return bad(tensor_label(*impl, t) + " is listed twice as a graph output");
    impl->outputs.push_back(t);
  }
  if (impl->outputs.empty()) return bad("the model has no graph outputs");
  for (size_t i = 0; i < nt; ++i) {
    const fb::TensorKind kind = tensors->Get(static_cast<flatbuffers::uoffset_t>(i))->kind();
    if ((kind == fb::TensorKind::Input || kind == fb::TensorKind::Output) && !listed[i]) {
      return bad(tensor_label(*impl, static_cast<int>(i)) + " has kind " + kind_name(kind) +
                 " but is not in the model's " + (kind == fb::TensorKind::Input ? "inputs" : "outputs"));
    }
  }

  // ---- Ops: known types, indices in range, execution order, one producer per tensor. --------
  const auto* ops = m.ops();
  const size_t nops = ops ? ops->size() : 0;
  if (nops == 0) return bad("the model has no ops");
  if (nops > format::kMaxOps) {
    return bad("the model has " + std::to_string(nops) + " ops, more than the runtime's limit of " +
               std::to_string(format::kMaxOps));
  }
  impl->ops.resize(nops);
  impl->op_infos.resize(nops);
  for (size_t s = 0; s < nops; ++s) {
    const fb::Op* op = ops->Get(static_cast<flatbuffers::uoffset_t>(s));
    OpInfo& info = impl->op_infos[s];
    PreparedOp& prep = impl->ops[s];
    info.name = op->name() ? op->name()->str() : std::string();
    const std::string unnamed = "op " + std::to_string(s) + " '" + info.name + "'";
    if (op->params_type() == fb::OpParams::NONE || !op->params()) {
      return bad(unnamed + " has no parameters (its type is unknown)");
    }
    const OpEntry* type = find_op_entry(op->params_type());
    if (!type) {
      return Status(StatusCode::NOT_SUPPORTED,
                    unnamed + " has op type " + std::to_string(static_cast<int>(op->params_type())) +
                        ", unknown to this runtime (written by a newer converter?)");
    }
    info.type = type->name;
    prep.type = type;
    const std::string label = op_label(*impl, static_cast<int>(s));
    const auto* oins = op->inputs();
    const auto* oouts = op->outputs();
    const size_t n_in = oins ? oins->size() : 0;
    const size_t n_out = oouts ? oouts->size() : 0;
    if (n_in > format::kMaxOpInputs) {
      return bad(label + " has " + std::to_string(n_in) + " inputs, more than the limit of " +
                 std::to_string(format::kMaxOpInputs));
    }
    if (n_out != 1) return bad(label + " has " + std::to_string(n_out) + " outputs, expected 1");
    for (size_t k = 0; k < n_in; ++k) {
      const int t = oins->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (t < 0 || static_cast<size_t>(t) >= nt) {
        return bad(label + " input " + std::to_string(k) + " is tensor index " + std::to_string(t) +
                   ", out of range (the model has " + std::to_string(nt) + " tensors)");
      }
      const TensorRole role = impl->tensor_infos[t].role;
      if ((role == TensorRole::ACTIVATION || role == TensorRole::OUTPUT) &&
          impl->tensors[t].producer < 0) {
        return bad(label + " reads " + tensor_label(*impl, t) +
                   " before any earlier op produces it (ops must be in execution order; a "
                   "cycle or a use before definition)");
      }
      prep.inputs.push_back(t);
    }
    const int y = oouts->Get(0);
    if (y < 0 || static_cast<size_t>(y) >= nt) {
      return bad(label + " output is tensor index " + std::to_string(y) +
                 ", out of range (the model has " + std::to_string(nt) + " tensors)");
    }
    const TensorRole yrole = impl->tensor_infos[y].role;
    if (yrole == TensorRole::INPUT || yrole == TensorRole::CONSTANT) {
      return bad(label + " writes " + tensor_label(*impl, y) + ", which is a graph input or a "
                 "constant");
    }
    if (impl->tensors[y].producer >= 0) {
      return bad(tensor_label(*impl, y) + " is produced twice (by op " +
                 std::to_string(impl->tensors[y].producer) + " and " + label + ")");
    }
    impl->tensors[y].producer = static_cast<int>(s);
    prep.output = y;
    info.inputs = prep.inputs;
    info.outputs = {y};
  }
  for (int t : impl->outputs) {
    if (impl->tensors[t].producer < 0) return bad("graph output " + tensor_label(*impl, t) + " is never produced");
  }

  // ---- Liveness, as the converter's planner computes it (converter/plan_memory.h). ------------
  const int last_step = static_cast<int>(nops) - 1;
  for (int t : impl->inputs) impl->tensors[t].first_step = impl->tensors[t].last_step = 0;
  for (size_t s = 0; s < nops; ++s) {
    const int step = static_cast<int>(s);
    for (int t : impl->ops[s].inputs) {
      TensorRecord& r = impl->tensors[t];
      if (!r.constant) r.last_step = std::max(r.last_step, step);
    }
    TensorRecord& y = impl->tensors[impl->ops[s].output];
    y.first_step = step;
    y.last_step = std::max(y.last_step, step);
  }
  // Graph inputs and outputs live for the whole pass: outputs must survive to the end, and inputs
  // are never overwritten, so a second run (a graph replay, a benchmark loop) reads the same input
  // without the caller writing it again. A plan that reuses an input's bytes is rejected below.
  for (int t : impl->outputs) impl->tensors[t].last_step = last_step;
  for (int t : impl->inputs) impl->tensors[t].last_step = last_step;

  // ---- Arena regions of every tensor some step touches. --------------------------------------
  const uint64_t arena = plan->arena_bytes();
  uint64_t regions_end = 0;
  for (size_t i = 0; i < nt; ++i) {
    TensorRecord& r = impl->tensors[i];
    TensorInfo& info = impl->tensor_infos[i];
    if (r.constant || r.first_step < 0) continue;  // info keeps arena_offset -1
    const fb::Tensor* t = tensors->Get(static_cast<flatbuffers::uoffset_t>(i));
    const std::string label = tensor_label(*impl, static_cast<int>(i));
    const int64_t off = t->arena_offset();
    const uint64_t size = t->arena_size();
    if (off < 0) return bad(label + " is used but has no arena region (arena_offset " + std::to_string(off) + ")");
    if (static_cast<uint64_t>(off) % format::kArenaAlignment != 0) {
      return bad(label + " arena offset " + std::to_string(off) + " is not a multiple of " +
                 std::to_string(format::kArenaAlignment));
    }
    if (size < r.bytes) {
      return bad(label + " arena region of " + std::to_string(size) + " bytes is smaller than its " +
                 std::to_string(r.bytes) + " bytes");
    }
    if (static_cast<uint64_t>(off) > arena || size > arena - static_cast<uint64_t>(off)) {
      return bad(label + " arena region (bytes " + std::to_string(off) + " + " + std::to_string(size) +
                 ") ends past the arena of " + std::to_string(arena) + " bytes");
    }
    r.in_arena = true;
    r.arena_offset = static_cast<size_t>(off);
    r.arena_size = static_cast<size_t>(size);
    info.arena_offset = off;
    info.arena_size = r.arena_size;
    regions_end = std::max<uint64_t>(regions_end, static_cast<uint64_t>(off) + size);
  }
  // The planner's arena ends with its last region. A larger one is not unsafe, but it is memory
  // every context would allocate for nothing, and the sign of a damaged plan.
  const uint64_t needed = (regions_end + format::kArenaAlignment - 1) / format::kArenaAlignment * format::kArenaAlignment;
  if (arena > needed) {
    return bad("the memory plan's arena of " + std::to_string(arena) + " bytes is larger than its regions need (" +
               std::to_string(needed) + " bytes): a damaged plan");
  }
  return Status();
}

Status check_arena_overlaps(const Engine::Impl& impl) {
  const std::vector<TensorRecord>& T = impl.tensors;
  std::vector<int> placed;
  for (size_t i = 0; i < T.size(); ++i) {
    if (T[i].in_arena) placed.push_back(static_cast<int>(i));
  }
  std::sort(placed.begin(), placed.end(), [&](int a, int b) {
    return T[a].arena_offset != T[b].arena_offset ? T[a].arena_offset < T[b].arena_offset : a < b;
  });
  // The only legal sharing: y = op(x, ...) in place, x an activation dying at that op, both at
  // one offset with one byte size and one layout (the kernels work in place only then).
  auto in_place_pair = [&](int x, int y) {
    const TensorRecord& rx = T[x];
    const TensorRecord& ry = T[y];
    const int s = ry.first_step;
    if (impl.tensor_infos[x].role != TensorRole::ACTIVATION || rx.last_step != s ||
        ry.producer != s || rx.arena_offset != ry.arena_offset) {
      return false;
    }
    const PreparedOp& op = impl.ops[s];
    if (!op.type->allows_in_place) return false;
    if (std::find(op.inputs.begin(), op.inputs.end(), x) == op.inputs.end()) return false;
    if (rx.desc.elements() * static_cast<int64_t>(dtype_size(rx.desc.dtype())) !=
        ry.desc.elements() * static_cast<int64_t>(dtype_size(ry.desc.dtype()))) {
      return false;
    }
    if (is_op(op, fb::OpParams::ReshapeParams)) return true;  // both packed (prepare_ops checked)
    return rx.desc.same_layout(ry.desc);
  };
  for (size_t i = 0; i < placed.size(); ++i) {
    const int a = placed[i];
    const size_t a_end = T[a].arena_offset + T[a].arena_size;
    for (size_t j = i + 1; j < placed.size() && T[placed[j]].arena_offset < a_end; ++j) {
      const int b = placed[j];
      const bool live_together = T[a].first_step <= T[b].last_step && T[b].first_step <= T[a].last_step;
      if (!live_together || in_place_pair(a, b) || in_place_pair(b, a)) continue;
      return bad("arena regions overlap: " + tensor_label(impl, a) + " (steps " +
                 std::to_string(T[a].first_step) + ".." + std::to_string(T[a].last_step) +
                 ", bytes " + std::to_string(T[a].arena_offset) + ".." + std::to_string(a_end) +
                 ") and " + tensor_label(impl, b) + " (steps " + std::to_string(T[b].first_step) +
                 ".." + std::to_string(T[b].last_step) + ", bytes " +
                 std::to_string(T[b].arena_offset) + ".." +
                 std::to_string(T[b].arena_offset + T[b].arena_size) +
                 ") are live at the same time");
    }
  }
  return Status();
}

}  // namespace rt
}  // namespace jet
