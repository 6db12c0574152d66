// jet::Trainer (jet/trainer.h): reverse mode over a loaded model's forward graph, one memory plan
// for the whole step, the optimizers of jet/dnn/training.h.
//
// create():
//   1. the ops the loss output depends on ("active"), the parameters (constants in an op's
//      learnable inputs, backward.h), which of them train (patterns, last N layers);
//   2. which tensors need a gradient (a trainable parameter upstream), the backward steps (the
//      active ops whose output needs one, in reverse order) and their rules: an op without a rule
//      there is an error naming it and a parameter behind it;
//   3. the plan: every forward value the step computes keeps its own region (the backward reads
//      them); the activation gradients share regions by liveness along the backward (first fit);
//      then the trainable parameters' values, their gradients (one run, for clipping), the
//      optimizer state, batch-norm running statistics and saved batch statistics, labels or
//      targets, the loss, and the largest workspace any kernel of the step needs;
//   4. one allocation, the initial values copied from the engine's weights, every kernel argument
//      (pointers, blend factors) precomputed, so step() is kernel calls and nothing else.
#include "jet/trainer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "../cuda_util.h"
#include "../device_memory.h"
#include "../engine_impl.h"
#include "../format.h"
#include "../loader.h"
#include "../ops.h"
#include "backward.h"
#include "jet/file_io.h"
#include "jet/schema/model_generated.h"

namespace jet {

namespace {

constexpr size_t kAlign = format::kArenaAlignment;

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

Status bad(const std::string& m) { return Status(StatusCode::BAD_PARAM, "Trainer: " + m); }

// '*' any run of characters, '?' one character.
bool glob_match(const char* p, const char* s) {
  const char* star = nullptr;
  const char* resume = nullptr;
  while (*s) {
    if (*p == '?' || (*p && *p != '*' && *p == *s)) {
      ++p;
      ++s;
    } else if (*p == '*') {
      star = p++;
      resume = s;
    } else if (star) {
      p = star + 1;
      s = ++resume;
    } else {
      return false;
    }
  }
  while (*p == '*') ++p;
  return *p == 0;
}

// Copies and fills in the step's memory (host memory on CPU, device memory on CUDA).
Status copy_bytes(Backend backend, void* dst, const void* src, size_t bytes, bool from_host, bool to_host,
                  cudaStream_t stream) {
  if (bytes == 0) return Status();
  if (backend == Backend::CPU) {
    std::memcpy(dst, src, bytes);
    return Status();
  }
#if defined(JET_HAVE_CUDA)
  const cudaMemcpyKind kind = from_host ? cudaMemcpyHostToDevice : to_host ? cudaMemcpyDeviceToHost
                                                                            : cudaMemcpyDeviceToDevice;
  const cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, stream);
  if (e != cudaSuccess) return rt::cuda_error("Trainer: cudaMemcpyAsync", e);
  return Status();
#else
  (void)from_host;
  (void)to_host;
  (void)stream;
  return Status(StatusCode::NOT_SUPPORTED, "this build of jet has no CUDA backend");
#endif
}

Status zero_bytes(Backend backend, void* dst, size_t bytes) {
  if (bytes == 0) return Status();
  if (backend == Backend::CPU) {
    std::memset(dst, 0, bytes);
    return Status();
  }
#if defined(JET_HAVE_CUDA)
  const cudaError_t e = cudaMemset(dst, 0, bytes);
  if (e != cudaSuccess) return rt::cuda_error("Trainer: cudaMemset", e);
  return Status();
#else
  return Status(StatusCode::NOT_SUPPORTED, "this build of jet has no CUDA backend");
#endif
}

// The engine's CUDA device current for the scope (nothing on the CPU backend; no allocation).
#if defined(JET_HAVE_CUDA)
class DeviceScope {
 public:
  DeviceScope(Backend backend, int device) {
    if (backend != Backend::CUDA) return;
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      cudaGetLastError();
      previous_ = -1;
    }
    if (previous_ != device) cudaSetDevice(device);
  }
  ~DeviceScope() {
    int now = -1;
    if (previous_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};
#else
struct DeviceScope {
  DeviceScope(Backend, int) {}
};
#endif

Status synchronize(Backend backend, cudaStream_t stream) {
#if defined(JET_HAVE_CUDA)
  if (backend == Backend::CUDA) {
    const cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return rt::cuda_error("Trainer: cudaStreamSynchronize", e);
  }
#else
  (void)backend;
  (void)stream;
#endif
  return Status();
}

}  // namespace

struct Trainer::Impl {
  std::shared_ptr<const Engine> engine;
  const Engine::Impl* e = nullptr;
  std::vector<uint8_t> file_copy;  // the model file when the engine does not keep it (path form)
  TrainerConfig config;
  Handle handle;
  Backend backend = Backend::CPU;

  void* block = nullptr;  // the one allocation
  TrainerMemory memory;
  std::vector<TrainerParameter> params;

  // Per tensor of the engine: where the step reads its value, where its gradient goes.
  std::vector<void*> value;
  std::vector<void*> grad;

  int input_tensor = -1, loss_tensor = -1;
  int64_t batch = 0, classes = 0;
  size_t input_bytes = 0;

  // Forward: the active ops in order.
  struct Forward {
    int op = -1;
    size_t in_begin = 0;   // into in_ptrs
    void* out = nullptr;
    void* pre = nullptr;   // Conv with a fused activation, when its backward runs
    rt::PreparedOp conv_without_activation;  // then: the conv alone (the activation runs apart)
    bool batchnorm = false;
    float* running_mean = nullptr;
    float* running_var = nullptr;
    float* saved_mean = nullptr;
    float* saved_inv_std = nullptr;
  };
  std::vector<Forward> forward;
  std::vector<const void*> in_ptrs;

  // Backward: the steps in order (reverse op order).
  struct Backward {
    int forward = -1;  // index into `forward`
    size_t din_begin = 0;
    rt::BackwardPlan plan;
  };
  std::vector<Backward> backward;
  std::vector<void*> din_ptrs;
  std::vector<float> din_beta;

  // The optimizer's arguments, for every trainable parameter at once: their values, gradients
  // and optimizer states are runs laid out alike (the same order, sizes and padding; the padding
  // zero in all and left zero by the elementwise updates), so one launch updates them all (one
  // per parameter tensor took 0.19 ms of ResNet-18's step on the H200, most of it launch gaps).
  // count 0: nothing is trainable.
  struct Update {
    float* value = nullptr;
    float* grad = nullptr;
    float* state1 = nullptr;  // SGD momentum / Adam m
    float* state2 = nullptr;  // Adam v
    int64_t count = 0;
  };
  Update update;
  std::vector<float*> clip_grads;
  std::vector<int64_t> clip_counts;
  // What save() writes back: (tensor, where its current values are).
  std::vector<std::pair<int, const void*>> saved_tensors;

  int32_t* labels = nullptr;
  float* targets = nullptr;
  float* loss = nullptr;
  float* grad_norm = nullptr;
  const float* zero = nullptr;  // stays 0 (the block is cleared at create)
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  std::vector<float> host_logits;    // count_correct on CUDA: the logits copied back (sized at create)
  std::vector<int32_t> host_labels;  // and the batch's labels (from `labels`, wherever the batch was)
  int64_t steps = 0;

  // Profiling (set_profiling): a mark before the step's first part and after each part; part i
  // is timed from mark i to mark i + 1. parts holds the names from set_profiling on.
  bool profiling = false;
  bool profile_ready = false;  // a profiled step has ended
  std::vector<StepTime> parts;
  std::vector<std::chrono::steady_clock::time_point> cpu_marks;  // CPU: parts.size() + 1
#if defined(JET_HAVE_CUDA)
  std::vector<cudaEvent_t> events;  // CUDA: parts.size() + 1
#endif

  ~Impl() {
    destroy_events();
    if (!block) return;
    if (backend == Backend::CUDA) {
#if defined(JET_HAVE_CUDA)
      rt::DeviceGuard guard(e->options.device);
#endif
      rt::device_free(block);
    } else {
      rt::host_free(block);
    }
  }

  Status build(const TrainerConfig& cfg);
  // Profiling's mark i (see parts); nothing while profiling is off.
  Status mark(size_t i) {
    if (!profiling) return Status();
#if defined(JET_HAVE_CUDA)
    if (backend == Backend::CUDA) {
      const cudaError_t err = cudaEventRecord(events[i], handle.stream());
      return err == cudaSuccess ? Status() : rt::cuda_error("Trainer profiling: cudaEventRecord", err);
    }
#endif
    cpu_marks[i] = std::chrono::steady_clock::now();
    return Status();
  }
  void destroy_events() {
#if defined(JET_HAVE_CUDA)
    if (events.empty()) return;
    rt::DeviceGuard guard(e->options.device);
    for (cudaEvent_t ev : events) {
      if (ev) cudaEventDestroy(ev);
    }
    events.clear();
#endif
  }
  Status run_forward(bool training);
  Status run_loss(bool with_gradient);
  // Cross-entropy: the samples whose largest logit (the loss output as the last forward left it)
  // is their label; predictions (may be null) gets each argmax. Synchronizes the stream.
  Status count_correct(int64_t* correct, int32_t* predictions);
};

namespace {

// Region offsets handed out in order; the base is known only after the plan is complete.
struct Layout {
  size_t end = 0;
  size_t take(size_t bytes) {
    const size_t at = end;
    end += align_up(bytes);
    return at;
  }
};

}  // namespace

Status Trainer::Impl::build(const TrainerConfig& cfg) {
  config = cfg;
  handle = e->handle;
  backend = handle.backend();
  const size_t nt = e->tensors.size();
  const size_t nops = e->ops.size();
  auto tensor_name = [&](int t) { return "'" + e->tensor_infos[static_cast<size_t>(t)].name + "'"; };
  auto op_name = [&](int i) { return rt::op_label(*e, i); };

  // ---- The loss output, the input, the ops the loss depends on. -----------------------------------
  if (e->inputs.size() != 1) {
    return bad("the model has " + std::to_string(e->inputs.size()) + " inputs; the trainer takes models with one");
  }
  input_tensor = e->inputs[0];
  if (cfg.output.empty()) {
    loss_tensor = e->outputs.empty() ? -1 : e->outputs[0];
  } else {
    for (int t : e->outputs) {
      if (e->tensor_infos[static_cast<size_t>(t)].name == cfg.output) loss_tensor = t;
    }
    if (loss_tensor < 0) {
      std::string names;
      for (int t : e->outputs) names += (names.empty() ? "" : ", ") + tensor_name(t);
      return bad("the model has no output '" + cfg.output + "' (its outputs: " + names + ")");
    }
  }
  if (loss_tensor < 0) return bad("the model has no output");
  const TensorDesc& out_desc = e->tensors[static_cast<size_t>(loss_tensor)].desc;
  const TensorDesc& in_desc = e->tensors[static_cast<size_t>(input_tensor)].desc;
  batch = in_desc.dim(0);
  input_bytes = e->tensor_infos[static_cast<size_t>(input_tensor)].bytes;
  if (cfg.loss == LossKind::SOFTMAX_CROSS_ENTROPY) {
    if (out_desc.rank() != 2) {
      return bad("softmax cross-entropy reads [N, classes] logits; output " + tensor_name(loss_tensor) + " has dims " +
                 dims_text(out_desc.rank(), out_desc.dims()));
    }
    classes = out_desc.dim(1);
  } else if (cfg.loss != LossKind::MSE) {
    return bad("unknown loss " + std::to_string(static_cast<int>(cfg.loss)));
  }
  if (out_desc.dim(0) != batch) {
    return bad("output " + tensor_name(loss_tensor) + " has " + std::to_string(out_desc.dim(0)) +
               " samples but the input has " + std::to_string(batch));
  }
  switch (cfg.optimizer) {
    case OptimizerKind::SGD:
      JET_RETURN_IF_ERROR(cfg.sgd.validate());
      break;
    case OptimizerKind::ADAM:
    case OptimizerKind::ADAMW:
      JET_RETURN_IF_ERROR(cfg.adam.validate());
      break;
    default:
      return bad("unknown optimizer " + std::to_string(static_cast<int>(cfg.optimizer)));
  }
  if (!(cfg.clip_grad_norm >= 0.f)) return bad("clip_grad_norm must be >= 0 (0: no clipping)");
  if (!(cfg.batchnorm_momentum >= 0 && cfg.batchnorm_momentum <= 1)) return bad("batchnorm_momentum must be in [0, 1]");
  if (cfg.last_layers < 0) return bad("last_layers must be >= 0");

  // Cross-entropy reads logits: a model that ends in a Softmax would be trained on probabilities.
  for (size_t i = 0; i < nops && cfg.loss == LossKind::SOFTMAX_CROSS_ENTROPY; ++i) {
    if (e->ops[i].output == loss_tensor && rt::is_op(e->ops[i], fb::OpParams::SoftmaxParams)) {
      return bad("output " + tensor_name(loss_tensor) + " is a Softmax's: softmax cross-entropy takes the logits "
                 "before it (convert with --outputs naming them, or train with LossKind::MSE)");
    }
  }
  std::vector<char> active(nops, 0), tensor_needed(nt, 0);
  tensor_needed[static_cast<size_t>(loss_tensor)] = 1;
  for (size_t i = nops; i-- > 0;) {
    const rt::PreparedOp& op = e->ops[i];
    if (!tensor_needed[static_cast<size_t>(op.output)]) continue;
    active[i] = 1;
    for (int t : op.inputs) tensor_needed[static_cast<size_t>(t)] = 1;
  }
  // ---- Parameters and what trains. -----------------------------------------------------------------
  std::vector<int> param_of_tensor(nt, -1);
  std::vector<int> layer_ops;  // active ops with parameters, in order
  for (size_t i = 0; i < nops; ++i) {
    if (!active[i]) continue;
    const rt::PreparedOp& op = e->ops[i];
    const rt::BackwardRule& rule = rt::backward_rule(op);
    const uint32_t mask = rule.params ? rule.params(op) : 0u;
    bool any = false;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int t = op.inputs[k];
      if (!((mask >> k) & 1u) || !e->tensors[static_cast<size_t>(t)].constant) continue;
      if (param_of_tensor[static_cast<size_t>(t)] >= 0) continue;  // shared: checked below if it trains
      TrainerParameter p;
      p.name = e->tensor_infos[static_cast<size_t>(t)].name;
      p.tensor = t;
      p.op = static_cast<int>(i);
      p.elements = e->tensors[static_cast<size_t>(t)].desc.elements();
      param_of_tensor[static_cast<size_t>(t)] = static_cast<int>(params.size());
      params.push_back(p);
      any = true;
    }
    if (any) layer_ops.push_back(static_cast<int>(i));
  }
  if (params.empty()) return bad("the model has no parameters the trainer can train (Conv, Gemm, BatchNorm weights)");
  const bool select_all = cfg.trainable.empty() && cfg.last_layers == 0;
  for (TrainerParameter& p : params) p.trainable = select_all;
  for (const std::string& pattern : cfg.trainable) {
    bool matched = false;
    for (TrainerParameter& p : params) {
      if (glob_match(pattern.c_str(), p.name.c_str())) p.trainable = matched = true;
    }
    if (!matched) {
      std::string names;
      for (size_t i = 0; i < params.size() && i < 12; ++i) names += (i ? ", " : "") + params[i].name;
      if (params.size() > 12) names += ", ... (" + std::to_string(params.size()) + " in all)";
      return bad("the trainable pattern '" + pattern + "' matches no parameter (the parameters: " + names + ")");
    }
  }
  if (cfg.last_layers > static_cast<int>(layer_ops.size())) {
    return bad("last_layers " + std::to_string(cfg.last_layers) + ", but the model has " +
               std::to_string(layer_ops.size()) + " layers with parameters");
  }
  for (size_t l = layer_ops.size() - static_cast<size_t>(cfg.last_layers); l < layer_ops.size(); ++l) {
    for (TrainerParameter& p : params) {
      if (p.op == layer_ops[l]) p.trainable = true;
    }
  }
  // A trainable parameter must belong to one op (its update is that op's gradient), and its
  // buffer to it alone (save() writes the buffer).
  {
    std::vector<int> buffer_users;
    for (size_t t = 0; t < nt; ++t) {
      const rt::TensorRecord& r = e->tensors[t];
      if (!r.constant) continue;
      if (static_cast<size_t>(r.buffer) >= buffer_users.size()) buffer_users.resize(static_cast<size_t>(r.buffer) + 1, 0);
      ++buffer_users[static_cast<size_t>(r.buffer)];
    }
    for (const TrainerParameter& p : params) {
      if (!p.trainable) continue;
      int readers = 0;
      for (size_t i = 0; i < nops; ++i) {
        if (!active[i]) continue;
        for (int t : e->ops[i].inputs) readers += t == p.tensor;
      }
      const rt::TensorRecord& r = e->tensors[static_cast<size_t>(p.tensor)];
      if (readers != 1 || buffer_users[static_cast<size_t>(r.buffer)] != 1) {
        return Status(StatusCode::NOT_SUPPORTED, "Trainer: parameter '" + p.name +
                                                     "' is shared (read by several ops or stored in one buffer with "
                                                     "another tensor): shared parameters cannot train yet");
      }
      if (r.filter_krsc) {
        return Status(StatusCode::NOT_SUPPORTED, "Trainer: parameter '" + p.name +
                                                     "' was reordered to KRSC for the CUDA tensor cores; load the "
                                                     "model with a packed NCHW layout (jet-convert --layout nchw)");
      }
    }
  }

  // ---- Gradients: which tensors need one, the backward steps and their rules. --------------------
  std::vector<int> upstream_param(nt, -1);  // a trainable parameter this tensor depends on
  for (const TrainerParameter& p : params) {
    if (p.trainable) upstream_param[static_cast<size_t>(p.tensor)] = param_of_tensor[static_cast<size_t>(p.tensor)];
  }
  for (size_t i = 0; i < nops; ++i) {
    if (!active[i]) continue;
    const rt::PreparedOp& op = e->ops[i];
    for (int t : op.inputs) {
      if (upstream_param[static_cast<size_t>(t)] >= 0) {
        upstream_param[static_cast<size_t>(op.output)] = upstream_param[static_cast<size_t>(t)];
        break;
      }
    }
  }
  if (upstream_param[static_cast<size_t>(loss_tensor)] < 0) {
    return bad("no trainable parameter reaches output " + tensor_name(loss_tensor));
  }

  // Training is f32: every tensor a gradient passes through (the forward before the first
  // trainable parameter may hold f16 tensors).
  for (size_t t = 0; t < nt; ++t) {
    if (upstream_param[t] >= 0 && e->tensors[t].desc.dtype() != DType::F32) {
      return Status(StatusCode::NOT_SUPPORTED, "Trainer: tensor " + tensor_name(static_cast<int>(t)) + " is " +
                                                   dtype_name(e->tensors[t].desc.dtype()) +
                                                   ", and the gradient of trainable parameter '" +
                                                   params[static_cast<size_t>(upstream_param[t])].name +
                                                   "' passes through it: training runs in f32 (convert without "
                                                   "--precision fp16, or freeze the parameters before it)");
    }
  }

  // Batch norm with batch statistics needs at least 2 values per channel (PyTorch refuses the same).
  for (size_t i = 0; i < nops; ++i) {
    if (!active[i] || !rt::is_op(e->ops[i], fb::OpParams::BatchNormParams)) continue;
    const TensorDesc& x = e->ops[i].in_descs[0];
    if (x.elements() / x.dim(1) < 2) {
      return bad(op_name(static_cast<int>(i)) + " normalizes " + std::to_string(x.elements() / x.dim(1)) +
                 " value per channel in a batch: batch statistics need at least 2 (a larger batch)");
    }
  }

  // Forward records (the active ops), with their input pointers filled in after the plan.
  std::vector<int> forward_of_op(nops, -1);
  for (size_t i = 0; i < nops; ++i) {
    if (!active[i]) continue;
    forward_of_op[i] = static_cast<int>(forward.size());
    Forward f;
    f.op = static_cast<int>(i);
    f.batchnorm = rt::is_op(e->ops[i], fb::OpParams::BatchNormParams);
    forward.push_back(std::move(f));
  }
  // Backward steps, in reverse op order; each input slot's blend: 0 for the first gradient
  // written into a tensor (the last reader in op order), 1 after.
  std::vector<char> grad_written(nt, 0);
  std::vector<std::vector<char>> slot_wants;  // per backward step, per input
  for (size_t i = nops; i-- > 0;) {
    if (!active[i] || upstream_param[static_cast<size_t>(e->ops[i].output)] < 0) continue;
    const rt::PreparedOp& op = e->ops[i];
    const rt::BackwardRule& rule = rt::backward_rule(op);
    // An op the gradient cannot pass: its type has no rule, or its rule refuses this instance.
    auto refuse = [&](const std::string& why) {
      const int p = upstream_param[static_cast<size_t>(op.output)];
      return Status(StatusCode::NOT_SUPPORTED,
                    "Trainer: " + op_name(static_cast<int>(i)) + " has no backward (" + why +
                        "), and trainable parameter '" + params[static_cast<size_t>(p)].name +
                        "' is before it: freeze the parameters before this op (TrainerConfig::trainable or "
                        "last_layers)");
    };
    if (!rule.run) return refuse(rule.why_not);
    Backward b;
    b.forward = forward_of_op[i];
    b.din_begin = din_beta.size();
    uint32_t mask = 0;
    std::vector<char> wants(op.inputs.size(), 0);
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int t = op.inputs[k];
      const bool needs = upstream_param[static_cast<size_t>(t)] >= 0 &&
                         (!e->tensors[static_cast<size_t>(t)].constant ||
                          params[static_cast<size_t>(param_of_tensor[static_cast<size_t>(t)])].trainable);
      // Batch norm's running statistics are never differentiated.
      if (needs && !(rt::is_op(op, fb::OpParams::BatchNormParams) && k >= 3)) {
        wants[k] = 1;
        mask |= 1u << k;
        din_beta.push_back(grad_written[static_cast<size_t>(t)] ? 1.f : 0.f);
        grad_written[static_cast<size_t>(t)] = 1;
      } else {
        din_beta.push_back(0.f);
      }
    }
    b.plan.workspace_limit = cfg.workspace_limit;
    if (rule.plan) {
      const Status st = rule.plan(handle, op, mask, &b.plan);
      if (st.code() == StatusCode::NOT_SUPPORTED) return refuse(st.message());
      if (!st.ok()) return Status(st.code(), "Trainer: " + op_name(static_cast<int>(i)) + ": " + st.message());
    }
    backward.push_back(b);
    slot_wants.push_back(std::move(wants));
  }

  // ---- The plan. -----------------------------------------------------------------------------------
  // One timeline for the step: the batch is copied in at -1, forward step f runs at f, the loss
  // at F, backward step s at F + 1 + s. Every forward value, pre-activation buffer and activation
  // gradient is an interval on it, and they share one region by first fit: a value lives from its
  // producer to its last reader (a backward rule that reads it: backward.h's reads), a gradient
  // from its first writer to its producer's backward step. A value no backward rule reads is
  // dead once the forward is past it (a frozen prefix keeps nothing).
  Layout layout;
  std::vector<size_t> value_at(nt, SIZE_MAX), grad_at(nt, SIZE_MAX);
  auto span = [&](int t) { return e->tensors[static_cast<size_t>(t)].bytes; };
  const int F = static_cast<int>(forward.size());
  struct Interval {
    int kind;   // 0 value, 1 pre-activation (index: forward step), 2 gradient
    int index;  // tensor or forward step
    int first, last;
    size_t bytes;
  };
  std::vector<int> value_first(nt, INT32_MAX), value_last(nt, -2);
  value_first[static_cast<size_t>(input_tensor)] = -1;
  value_last[static_cast<size_t>(input_tensor)] = -1;
  for (int f = 0; f < F; ++f) {
    const rt::PreparedOp& op = e->ops[static_cast<size_t>(forward[static_cast<size_t>(f)].op)];
    for (int t : op.inputs) value_last[static_cast<size_t>(t)] = std::max(value_last[static_cast<size_t>(t)], f);
    value_first[static_cast<size_t>(op.output)] = std::min(value_first[static_cast<size_t>(op.output)], f);
    value_last[static_cast<size_t>(op.output)] = std::max(value_last[static_cast<size_t>(op.output)], f);
  }
  value_last[static_cast<size_t>(loss_tensor)] = std::max(value_last[static_cast<size_t>(loss_tensor)], F);
  std::vector<Interval> live;
  std::vector<int> first_write(nt, INT32_MAX), grad_read(nt, -1);
  first_write[static_cast<size_t>(loss_tensor)] = F;
  for (size_t s = 0; s < backward.size(); ++s) {
    const int time = F + 1 + static_cast<int>(s);
    const int f = backward[s].forward;
    const rt::PreparedOp& op = e->ops[static_cast<size_t>(forward[static_cast<size_t>(f)].op)];
    const rt::BackwardRule& rule = rt::backward_rule(op);
    const uint32_t reads = rule.reads ? rule.reads(op) : 0u;
    grad_read[static_cast<size_t>(op.output)] = time;
    if (reads & rt::kReadsOutput) value_last[static_cast<size_t>(op.output)] = time;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int t = op.inputs[k];
      if ((reads >> k) & 1u) value_last[static_cast<size_t>(t)] = std::max(value_last[static_cast<size_t>(t)], time);
      if (slot_wants[s][k] && !e->tensors[static_cast<size_t>(t)].constant) {
        first_write[static_cast<size_t>(t)] = std::min(first_write[static_cast<size_t>(t)], time);
      }
    }
    if (rt::conv_needs_pre_activation(op)) live.push_back({1, f, f, time, align_up(span(op.output))});
  }
  const int end_of_step = F + 1 + static_cast<int>(backward.size());
  for (size_t t = 0; t < nt; ++t) {
    if (e->tensors[t].constant) continue;
    if (value_first[t] != INT32_MAX) {
      live.push_back({0, static_cast<int>(t), value_first[t], value_last[t], align_up(span(static_cast<int>(t)))});
      memory.activations_unshared += align_up(span(static_cast<int>(t)));
    }
    if (first_write[t] != INT32_MAX) {
      // A gradient nobody reads back (its producer has no backward step: the graph input) still
      // needs its region while it is written.
      const int last = grad_read[t] >= 0 ? grad_read[t] : end_of_step;
      live.push_back({2, static_cast<int>(t), first_write[t], last, align_up(span(static_cast<int>(t)))});
      memory.activations_unshared += align_up(span(static_cast<int>(t)));
    }
  }
  for (const Interval& iv : live) {
    if (iv.kind == 1) memory.activations_unshared += iv.bytes;
  }
  std::sort(live.begin(), live.end(), [](const Interval& a, const Interval& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.first != b.first ? a.first < b.first : a.kind * 1000003 + a.index < b.kind * 1000003 + b.index;
  });
  std::vector<size_t> pre_at(forward.size(), SIZE_MAX);
  {
    std::vector<std::pair<size_t, const Interval*>> placed;  // offset, interval
    std::vector<std::pair<size_t, size_t>> busy;
    size_t shared_end = 0;
    for (const Interval& iv : live) {
      // The lowest offset that overlaps no placed interval live at the same time.
      busy.clear();
      for (const auto& pl : placed) {
        if (pl.second->first <= iv.last && iv.first <= pl.second->last) busy.push_back({pl.first, pl.first + pl.second->bytes});
      }
      std::sort(busy.begin(), busy.end());
      size_t at = 0;
      for (const auto& b : busy) {
        if (at + iv.bytes <= b.first) break;
        at = std::max(at, b.second);
      }
      placed.push_back({at, &iv});
      (iv.kind == 0 ? value_at : iv.kind == 1 ? pre_at : grad_at)[static_cast<size_t>(iv.index)] = at;
      shared_end = std::max(shared_end, at + iv.bytes);
    }
    layout.end = shared_end;
    memory.activations = shared_end;
  }

  // Trainable parameters: values, gradients, optimizer states, each a run of the parameters in one
  // order and padding (Impl::update).
  const size_t values_begin = layout.end;
  std::vector<size_t> param_value_at(params.size(), SIZE_MAX), param_grad_at(params.size(), SIZE_MAX);
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].trainable) param_value_at[i] = layout.take(span(params[i].tensor));
  }
  // Batch norm's running statistics, updated by the training forward.
  std::vector<size_t> running_at(forward.size(), SIZE_MAX);
  for (size_t f = 0; f < forward.size(); ++f) {
    if (!forward[f].batchnorm) continue;
    const rt::PreparedOp& op = e->ops[static_cast<size_t>(forward[f].op)];
    running_at[f] = layout.take(span(op.inputs[3]));
    layout.take(span(op.inputs[4]));
  }
  memory.parameters = layout.end - values_begin;
  const size_t param_grads_begin = layout.end;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].trainable) param_grad_at[i] = layout.take(span(params[i].tensor));
  }
  memory.gradients = layout.end - param_grads_begin;
  // SGD's momentum or Adam's m, then Adam's v: runs laid out as the gradients'.
  const int states = cfg.optimizer != OptimizerKind::SGD ? 2 : cfg.sgd.momentum != 0.f ? 1 : 0;
  const size_t state_begin = layout.end;
  for (int k = 0; k < states; ++k) layout.take(memory.gradients);
  memory.optimizer = layout.end - state_begin;
  const size_t other_begin = layout.end;
  std::vector<size_t> saved_at(forward.size(), SIZE_MAX);
  for (size_t f = 0; f < forward.size(); ++f) {
    if (!forward[f].batchnorm) continue;
    const int64_t channels = e->ops[static_cast<size_t>(forward[f].op)].in_descs[0].dim(1);
    saved_at[f] = layout.take(2 * align_up(static_cast<size_t>(channels) * 4));
  }
  const size_t labels_at = cfg.loss == LossKind::SOFTMAX_CROSS_ENTROPY ? layout.take(static_cast<size_t>(batch) * 4) : SIZE_MAX;
  const size_t targets_at = cfg.loss == LossKind::MSE ? layout.take(static_cast<size_t>(out_desc.elements()) * 4) : SIZE_MAX;
  const size_t scalars_at = layout.take(3 * sizeof(float));  // loss, gradient norm, a constant 0
  memory.other = layout.end - other_begin;

  // The workspace: the largest of the forward ops', the backward rules', the loss's, clipping's.
  size_t ws = 0;
  for (const Forward& f : forward) {
    const rt::PreparedOp& op = e->ops[static_cast<size_t>(f.op)];
    ws = std::max(ws, op.workspace_bytes);
    if (f.batchnorm) {  // the training forward's (several blocks per channel on CUDA)
      size_t bn = 0;
      JET_RETURN_IF_ERROR(batchnorm_training_workspace_size(handle, op.in_descs[0], &bn));
      ws = std::max(ws, bn);
    }
  }
  for (const Backward& b : backward) ws = std::max(ws, b.plan.workspace_bytes);
  ws = std::max(ws, cfg.loss == LossKind::SOFTMAX_CROSS_ENTROPY ? softmax_cross_entropy_workspace_size(batch)
                                                                 : elementwise_loss_workspace_size(out_desc.elements()));
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].trainable) continue;
    clip_counts.push_back(params[i].elements);
  }
  ws = std::max(ws, clip_grad_norm_workspace_size(static_cast<int>(clip_counts.size()), clip_counts.data()));
  const size_t workspace_at = layout.take(ws);
  workspace_bytes = align_up(ws);
  memory.workspace = workspace_bytes;
  memory.total = layout.end;

  // ---- One allocation; pointers; initial values. -------------------------------------------------------
  if (backend == Backend::CUDA) {
#if defined(JET_HAVE_CUDA)
    rt::DeviceGuard guard(e->options.device);
#endif
    JET_RETURN_IF_ERROR(rt::device_alloc(memory.total, &block, "the trainer's step memory"));
  } else {
    JET_RETURN_IF_ERROR(rt::host_alloc(memory.total, &block, "the trainer's step memory"));
  }
  uint8_t* base = static_cast<uint8_t*>(block);
  // Poison-free start: gradients and state are read only after they are written, but the
  // optimizer state must start at zero; zero the whole block (also keeps tools like valgrind quiet).
  JET_RETURN_IF_ERROR(zero_bytes(backend, block, memory.total));

  value.assign(nt, nullptr);
  grad.assign(nt, nullptr);
  for (size_t t = 0; t < nt; ++t) {
    if (e->tensors[t].constant) value[t] = const_cast<void*>(e->weight_ptrs[t]);
    if (value_at[t] != SIZE_MAX) value[t] = base + value_at[t];
    if (grad_at[t] != SIZE_MAX) grad[t] = base + grad_at[t];
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].trainable) continue;
    const int t = params[i].tensor;
    void* v = base + param_value_at[i];
    JET_RETURN_IF_ERROR(copy_bytes(backend, v, e->weight_ptrs[static_cast<size_t>(t)], span(t), false, false, nullptr));
    value[static_cast<size_t>(t)] = v;
    grad[static_cast<size_t>(t)] = base + param_grad_at[i];
    clip_grads.push_back(static_cast<float*>(grad[static_cast<size_t>(t)]));
    saved_tensors.push_back({t, v});
  }
  update.count = static_cast<int64_t>(memory.gradients / sizeof(float));
  update.value = reinterpret_cast<float*>(base + values_begin);
  update.grad = reinterpret_cast<float*>(base + param_grads_begin);
  update.state1 = states >= 1 ? reinterpret_cast<float*>(base + state_begin) : nullptr;
  update.state2 = states == 2 ? reinterpret_cast<float*>(base + state_begin + memory.gradients) : nullptr;
  for (size_t f = 0; f < forward.size(); ++f) {
    Forward& fw = forward[f];
    const rt::PreparedOp& op = e->ops[static_cast<size_t>(fw.op)];
    fw.out = value[static_cast<size_t>(op.output)];
    if (pre_at[f] != SIZE_MAX) {
      fw.pre = base + pre_at[f];
      fw.conv_without_activation = op;
      fw.conv_without_activation.data.as<rt::ConvPrepared>().act = ActivationDesc::identity();
    }
    if (fw.batchnorm) {
      const int mt = op.inputs[3], vt = op.inputs[4];
      fw.running_mean = reinterpret_cast<float*>(base + running_at[f]);
      fw.running_var = reinterpret_cast<float*>(base + running_at[f] + align_up(span(mt)));
      JET_RETURN_IF_ERROR(copy_bytes(backend, fw.running_mean, e->weight_ptrs[static_cast<size_t>(mt)], span(mt),
                                     false, false, nullptr));
      JET_RETURN_IF_ERROR(copy_bytes(backend, fw.running_var, e->weight_ptrs[static_cast<size_t>(vt)], span(vt),
                                     false, false, nullptr));
      saved_tensors.push_back({mt, fw.running_mean});
      saved_tensors.push_back({vt, fw.running_var});
      const size_t channels = static_cast<size_t>(op.in_descs[0].dim(1));
      fw.saved_mean = reinterpret_cast<float*>(base + saved_at[f]);
      fw.saved_inv_std = reinterpret_cast<float*>(base + saved_at[f] + align_up(channels * 4));
    }
    fw.in_begin = in_ptrs.size();
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const void* p = value[static_cast<size_t>(op.inputs[k])];
      if (fw.batchnorm && k == 3) p = fw.running_mean;
      if (fw.batchnorm && k == 4) p = fw.running_var;
      in_ptrs.push_back(p);
    }
  }
  for (size_t s = 0; s < backward.size(); ++s) {
    const rt::PreparedOp& op = e->ops[static_cast<size_t>(forward[static_cast<size_t>(backward[s].forward)].op)];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      din_ptrs.push_back(slot_wants[s][k] ? grad[static_cast<size_t>(op.inputs[k])] : nullptr);
    }
  }
  labels = labels_at != SIZE_MAX ? reinterpret_cast<int32_t*>(base + labels_at) : nullptr;
  targets = targets_at != SIZE_MAX ? reinterpret_cast<float*>(base + targets_at) : nullptr;
  loss = reinterpret_cast<float*>(base + scalars_at);
  grad_norm = loss + 1;
  zero = loss + 2;
  workspace = base + workspace_at;
  if (backend == Backend::CUDA && classes > 0) {
    host_logits.assign(static_cast<size_t>(out_desc.elements()), 0.f);
    host_labels.assign(static_cast<size_t>(batch), 0);
  }
  return synchronize(backend, nullptr);
}

Status Trainer::Impl::run_forward(bool training) {
  // Profiled steps: forward op i is part i, after mark 0 (step() sets it).
  for (size_t i = 0; i < forward.size(); ++i) {
    if (training) JET_RETURN_IF_ERROR(mark(i));
    const Forward& f = forward[i];
    const rt::PreparedOp& op = e->ops[static_cast<size_t>(f.op)];
    const void* const* in = in_ptrs.data() + f.in_begin;
    if (training && f.batchnorm) {
      JET_RETURN_IF_ERROR(batchnorm_forward_training(
          handle, 1.f, 0.f, op.in_descs[0], in[0], op.out_desc, f.out, static_cast<const float*>(in[1]),
          static_cast<const float*>(in[2]), config.batchnorm_momentum, f.running_mean, f.running_var,
          op.data.as<double>(), f.saved_mean, f.saved_inv_std, workspace, workspace_bytes));
    } else if (training && f.pre) {
      JET_RETURN_IF_ERROR(rt::execute_op(handle, f.conv_without_activation, in, f.pre, workspace, workspace_bytes));
      JET_RETURN_IF_ERROR(activation_forward(handle, op.data.as<rt::ConvPrepared>().act, 1.f, op.out_desc, f.pre, 0.f,
                                             op.out_desc, f.out));
    } else {
      JET_RETURN_IF_ERROR(rt::execute_op(handle, op, in, f.out, workspace, workspace_bytes));
    }
  }
  return Status();
}

Status Trainer::Impl::run_loss(bool with_gradient) {
  const TensorDesc& d = e->tensors[static_cast<size_t>(loss_tensor)].desc;
  const void* y = value[static_cast<size_t>(loss_tensor)];
  void* dy = with_gradient ? grad[static_cast<size_t>(loss_tensor)] : nullptr;
  const TensorDesc none;
  if (config.loss == LossKind::SOFTMAX_CROSS_ENTROPY) {
    return softmax_cross_entropy_loss(handle, d, y, labels, workspace, workspace_bytes, loss, 1.f, 0.f,
                                      dy ? d : none, dy);
  }
  const TensorDesc target = TensorDesc::packed(DType::F32, d.rank(), d.dims());
  return mse_loss(handle, d, y, target, targets, workspace, workspace_bytes, loss, 1.f, 0.f, dy ? d : none, dy);
}

Status Trainer::Impl::count_correct(int64_t* correct, int32_t* predictions) {
  const TensorDesc& d = e->tensors[static_cast<size_t>(loss_tensor)].desc;
  const float* logits = static_cast<const float*>(value[static_cast<size_t>(loss_tensor)]);
  const int32_t* label = labels;  // the plan's copy of the batch's labels
  if (backend == Backend::CUDA) {
    JET_RETURN_IF_ERROR(copy_bytes(backend, host_logits.data(), logits, d.span_bytes(), false, true, handle.stream()));
    JET_RETURN_IF_ERROR(copy_bytes(backend, host_labels.data(), labels, host_labels.size() * sizeof(int32_t), false,
                                   true, handle.stream()));
    logits = host_logits.data();
    label = host_labels.data();
  }
  JET_RETURN_IF_ERROR(synchronize(backend, handle.stream()));
  *correct = 0;
  for (int64_t n = 0; n < batch; ++n) {
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c) {
      if (logits[n * d.stride(0) + c * d.stride(1)] > logits[n * d.stride(0) + best * d.stride(1)]) best = c;
    }
    *correct += best == label[n];
    if (predictions) predictions[n] = static_cast<int32_t>(best);
  }
  return Status();
}

// ---- Public API ----------------------------------------------------------------------------------

Trainer::Trainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Trainer::~Trainer() = default;

Status Trainer::create(std::shared_ptr<const Engine> engine, const TrainerConfig& config,
                       std::unique_ptr<Trainer>* out) {
  if (!out) return bad("out is a null pointer");
  out->reset();
  if (!engine) return bad("the engine is a null pointer");
  auto impl = std::make_unique<Impl>();
  impl->engine = std::move(engine);
  impl->e = &impl->engine->impl();
  const DeviceScope scope(impl->e->handle.backend(), impl->e->options.device);
  JET_RETURN_IF_ERROR(impl->build(config));
  out->reset(new Trainer(std::move(impl)));
  return Status();
}

Status Trainer::create(const std::string& model_path, const LoadOptions& options, const TrainerConfig& config,
                       std::unique_ptr<Trainer>* out) {
  if (!out) return bad("out is a null pointer");
  out->reset();
  std::vector<uint8_t> bytes;
  JET_RETURN_IF_ERROR(read_regular_file(model_path, size_t(1) << 36, "model", &bytes));
  std::shared_ptr<Engine> engine;
  const Status st = Engine::load(bytes.data(), bytes.size(), options, &engine);
  if (!st.ok()) return Status(st.code(), "model '" + model_path + "': " + st.message());
  JET_RETURN_IF_ERROR(create(engine, config, out));
  (*out)->impl_->file_copy = std::move(bytes);
  return Status();
}

// The batch's input and labels (or targets) into the plan's buffers; `routine` names errors.
Status Trainer::upload(const TrainBatch& batch, const char* routine) {
  Impl& m = *impl_;
  if (!batch.input) return bad(std::string(routine) + ": the batch has no input");
  if (m.labels && !batch.labels)
    return bad(std::string(routine) + ": softmax cross-entropy needs the batch's labels");
  if (m.targets && !batch.targets) return bad(std::string(routine) + ": MSE needs the batch's targets");
  const cudaStream_t stream = m.handle.stream();
  const bool from_host = !batch.on_device;  // else device to device (CUDA)
  JET_RETURN_IF_ERROR(copy_bytes(m.backend, m.value[static_cast<size_t>(m.input_tensor)], batch.input, m.input_bytes,
                                 from_host, false, stream));
  if (m.labels)
    return copy_bytes(m.backend, m.labels, batch.labels, static_cast<size_t>(m.batch) * 4, from_host, false, stream);
  const size_t n = static_cast<size_t>(m.e->tensors[static_cast<size_t>(m.loss_tensor)].desc.elements()) * 4;
  return copy_bytes(m.backend, m.targets, batch.targets, n, from_host, false, stream);
}

Status Trainer::step(const TrainBatch& batch, float* loss_out, int64_t* correct) {
  Impl& m = *impl_;
  const DeviceScope scope(m.backend, m.e->options.device);
  const cudaStream_t stream = m.handle.stream();
  JET_RETURN_IF_ERROR(upload(batch, "step"));
  m.profile_ready = false;
  JET_RETURN_IF_ERROR(m.run_forward(true));  // marks 0 .. forward.size() - 1
  size_t part = m.forward.size();
  JET_RETURN_IF_ERROR(m.mark(part++));
  JET_RETURN_IF_ERROR(m.run_loss(true));
  if (correct) {
    *correct = 0;
    // The logits of this forward, before the update changes the weights.
    if (m.classes > 0) JET_RETURN_IF_ERROR(m.count_correct(correct, nullptr));
  }
  for (const Impl::Backward& b : m.backward) {
    JET_RETURN_IF_ERROR(m.mark(part++));
    const Impl::Forward& f = m.forward[static_cast<size_t>(b.forward)];
    const rt::PreparedOp& op = m.e->ops[static_cast<size_t>(f.op)];
    const rt::BackwardArgs args{m.handle,
                                op,
                                b.plan,
                                m.in_ptrs.data() + f.in_begin,
                                f.out,
                                f.pre,
                                m.grad[static_cast<size_t>(op.output)],
                                m.din_ptrs.data() + b.din_begin,
                                m.din_beta.data() + b.din_begin,
                                m.workspace,
                                m.workspace_bytes,
                                f.saved_mean,
                                f.saved_inv_std,
                                m.zero};
    const Status st = rt::backward_rule(op).run(args);
    if (!st.ok()) return Status(st.code(), "Trainer: backward of " + rt::op_label(*m.e, f.op) + ": " + st.message());
  }
  if (m.config.clip_grad_norm > 0.f) {
    JET_RETURN_IF_ERROR(m.mark(part++));
    JET_RETURN_IF_ERROR(clip_grad_norm(m.handle, static_cast<int>(m.clip_grads.size()), m.clip_grads.data(),
                                       m.clip_counts.data(), m.config.clip_grad_norm, m.workspace, m.workspace_bytes,
                                       m.grad_norm));
  }
  ++m.steps;
  JET_RETURN_IF_ERROR(m.mark(part++));
  if (m.update.count > 0) {
    const Impl::Update& u = m.update;
    if (m.config.optimizer == OptimizerKind::SGD) {
      JET_RETURN_IF_ERROR(sgd_step(m.handle, m.config.sgd, u.count, u.value, u.grad, u.state1));
    } else {
      AdamDesc adam = m.config.adam;
      adam.decoupled_weight_decay = m.config.optimizer == OptimizerKind::ADAMW;
      JET_RETURN_IF_ERROR(adam_step(m.handle, adam, m.steps, u.count, u.value, u.grad, u.state1, u.state2));
    }
  }
  JET_RETURN_IF_ERROR(m.mark(part));
  m.profile_ready = m.profiling;
  if (loss_out) {
    JET_RETURN_IF_ERROR(copy_bytes(m.backend, loss_out, m.loss, sizeof(float), false, true, stream));
    JET_RETURN_IF_ERROR(synchronize(m.backend, stream));
  }
  return Status();
}

Status Trainer::evaluate(const TrainBatch& batch, EvalResult* out, int32_t* predictions) {
  Impl& m = *impl_;
  if (!out) return bad("evaluate: out is a null pointer");
  const DeviceScope scope(m.backend, m.e->options.device);
  const cudaStream_t stream = m.handle.stream();
  JET_RETURN_IF_ERROR(upload(batch, "evaluate"));
  JET_RETURN_IF_ERROR(m.run_forward(false));
  JET_RETURN_IF_ERROR(m.run_loss(false));
  JET_RETURN_IF_ERROR(copy_bytes(m.backend, &out->loss, m.loss, sizeof(float), false, true, stream));
  out->samples = m.batch;
  out->correct = 0;
  if (m.classes > 0) {
    JET_RETURN_IF_ERROR(m.count_correct(&out->correct, predictions));
  }
  return synchronize(m.backend, stream);
}

Status Trainer::set_profiling(bool on) {
  Impl& m = *impl_;
  m.profile_ready = false;
  if (on == m.profiling) return Status();
  m.profiling = false;
  m.destroy_events();
  if (!on) return Status();
  // The parts in step()'s order.
  m.parts.clear();
  const auto add = [&](const char* phase, int op, const std::string& name, const std::string& type) {
    StepTime t;
    t.phase = phase;
    t.op = op;
    t.name = name;
    t.type = type;
    m.parts.push_back(t);
  };
  for (const Impl::Forward& f : m.forward) {
    const OpInfo& info = m.e->op_infos[static_cast<size_t>(f.op)];
    add("forward", f.op, info.name, info.type);
  }
  add("loss", -1, m.config.loss == LossKind::SOFTMAX_CROSS_ENTROPY ? "softmax cross-entropy" : "mean squared error", "");
  for (const Impl::Backward& b : m.backward) {
    const int op = m.forward[static_cast<size_t>(b.forward)].op;
    const OpInfo& info = m.e->op_infos[static_cast<size_t>(op)];
    add("backward", op, info.name, info.type);
  }
  if (m.config.clip_grad_norm > 0.f) add("clip", -1, "clip_grad_norm", "");
  add("update", -1,
      m.config.optimizer == OptimizerKind::SGD ? "sgd" : m.config.optimizer == OptimizerKind::ADAMW ? "adamw" : "adam",
      "");
  const size_t marks = m.parts.size() + 1;
  if (m.backend == Backend::CPU) {
    m.cpu_marks.assign(marks, std::chrono::steady_clock::time_point());
    m.profiling = true;
    return Status();
  }
#if defined(JET_HAVE_CUDA)
  rt::DeviceGuard guard(m.e->options.device);
  m.events.assign(marks, nullptr);
  for (cudaEvent_t& ev : m.events) {
    const cudaError_t err = cudaEventCreate(&ev);
    if (err != cudaSuccess) {
      m.destroy_events();
      return rt::cuda_error("Trainer::set_profiling: cudaEventCreate", err);
    }
  }
  m.profiling = true;
  return Status();
#else
  return Status(StatusCode::NOT_SUPPORTED, "Trainer::set_profiling: this build of jet has no CUDA backend");
#endif
}

Status Trainer::step_times(std::vector<StepTime>* out) const {
  const Impl& m = *impl_;
  if (!out) return bad("step_times: out is a null pointer");
  out->clear();
  if (!m.profiling) return bad("step_times: profiling is off (call set_profiling(true), then step())");
  if (!m.profile_ready) return bad("step_times: no profiled step has ended since profiling was turned on");
  *out = m.parts;
#if defined(JET_HAVE_CUDA)
  if (m.backend == Backend::CUDA) {
    rt::DeviceGuard guard(m.e->options.device);
    cudaError_t err = cudaEventSynchronize(m.events.back());
    if (err != cudaSuccess) return rt::cuda_error("Trainer::step_times: cudaEventSynchronize", err);
    for (size_t i = 0; i < out->size(); ++i) {
      float t = 0.f;
      err = cudaEventElapsedTime(&t, m.events[i], m.events[i + 1]);
      if (err != cudaSuccess) return rt::cuda_error("Trainer::step_times: cudaEventElapsedTime", err);
      (*out)[i].ms = t;
    }
    return Status();
  }
#endif
  for (size_t i = 0; i < out->size(); ++i)
    (*out)[i].ms = std::chrono::duration<double, std::milli>(m.cpu_marks[i + 1] - m.cpu_marks[i]).count();
  return Status();
}

Status Trainer::save(std::vector<uint8_t>* bytes) const {
  const Impl& m = *impl_;
  if (!bytes) return bad("save: bytes is a null pointer");
  const uint8_t* data = m.file_copy.empty() ? m.e->file.data() : m.file_copy.data();
  const size_t size = m.file_copy.empty() ? m.e->file.size() : m.file_copy.size();
  if (!data || size < format::kMinFileBytes) {
    return Status(StatusCode::NOT_SUPPORTED,
                  "Trainer: save: the engine no longer holds its model file (a CUDA engine drops it after the "
                  "upload): create the trainer from the model's path instead");
  }
  const DeviceScope scope(m.backend, m.e->options.device);
  const fb::Model* model = fb::GetModel(data);  // the engine checked these bytes at load
  bytes->assign(data, data + size);
  for (const auto& st : m.saved_tensors) {
    const rt::TensorRecord& r = m.e->tensors[static_cast<size_t>(st.first)];
    const size_t offset = static_cast<size_t>(model->buffers()->Get(static_cast<flatbuffers::uoffset_t>(r.buffer))->offset());
    JET_RETURN_IF_ERROR(copy_bytes(m.backend, bytes->data() + offset, st.second, r.bytes, false, true, m.handle.stream()));
  }
  JET_RETURN_IF_ERROR(synchronize(m.backend, m.handle.stream()));
  const size_t footer = size - format::kFooterBytes;
  const uint64_t sum = model_checksum(bytes->data(), footer);
  for (int i = 0; i < 8; ++i) (*bytes)[footer + static_cast<size_t>(i)] = static_cast<uint8_t>(sum >> (8 * i));
  return Status();
}

Status Trainer::save(const std::string& path) const {
  std::vector<uint8_t> bytes;
  JET_RETURN_IF_ERROR(save(&bytes));
  return write_file_atomically(path, bytes.data(), bytes.size());
}

const Engine& Trainer::engine() const { return *impl_->engine; }
const std::vector<TrainerParameter>& Trainer::parameters() const { return impl_->params; }
const TrainerMemory& Trainer::memory() const { return impl_->memory; }
int64_t Trainer::steps_done() const { return impl_->steps; }
int64_t Trainer::batch_size() const { return impl_->batch; }

namespace {

Status copy_parameter(const Trainer::Impl& m, int i, bool gradient, std::vector<float>* values) {
  if (!values) return bad("values is a null pointer");
  if (i < 0 || static_cast<size_t>(i) >= m.params.size()) return bad("no parameter " + std::to_string(i));
  const TrainerParameter& p = m.params[static_cast<size_t>(i)];
  if (!p.trainable) return Status(StatusCode::NOT_SUPPORTED, "Trainer: parameter '" + p.name + "' is frozen");
  const DeviceScope scope(m.backend, m.e->options.device);
  const void* src = gradient ? m.grad[static_cast<size_t>(p.tensor)] : m.value[static_cast<size_t>(p.tensor)];
  values->assign(static_cast<size_t>(p.elements), 0.f);
  JET_RETURN_IF_ERROR(copy_bytes(m.backend, values->data(), src, values->size() * 4, false, true, m.handle.stream()));
  return synchronize(m.backend, m.handle.stream());
}

}  // namespace

Status Trainer::parameter_values(int i, std::vector<float>* values) const {
  return copy_parameter(*impl_, i, false, values);
}
Status Trainer::parameter_gradient(int i, std::vector<float>* values) const {
  return copy_parameter(*impl_, i, true, values);
}

Status Trainer::set_parameter_values(int i, const float* values, size_t count) {
  const Impl& m = *impl_;
  if (!values) return bad("set_parameter_values: values is a null pointer");
  if (i < 0 || static_cast<size_t>(i) >= m.params.size()) return bad("no parameter " + std::to_string(i));
  const TrainerParameter& p = m.params[static_cast<size_t>(i)];
  if (!p.trainable) return Status(StatusCode::NOT_SUPPORTED, "Trainer: parameter '" + p.name + "' is frozen");
  if (count != static_cast<size_t>(p.elements)) {
    return bad("set_parameter_values: parameter '" + p.name + "' has " + std::to_string(p.elements) +
               " elements, not " + std::to_string(count));
  }
  const DeviceScope scope(m.backend, m.e->options.device);
  JET_RETURN_IF_ERROR(copy_bytes(m.backend, m.value[static_cast<size_t>(p.tensor)], values, count * 4, true, false,
                                 m.handle.stream()));
  return synchronize(m.backend, m.handle.stream());
}

}  // namespace jet
