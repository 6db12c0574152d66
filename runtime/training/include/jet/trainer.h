// jet::Trainer: fine-tunes a loaded model (the training add-on, issue 15; built and installed only
// with the CMake option JET_BUILD_TRAINING). docs/training.md is the guide.
//
//   std::shared_ptr<jet::Engine> engine;                  // a .jet model, f32, as jet-convert wrote
//   jet::Status st = jet::Engine::load("cnn.jet", {jet::Backend::CPU}, &engine);
//   jet::TrainerConfig cfg;                               // softmax cross-entropy, SGD
//   cfg.sgd.lr = 0.01f; cfg.sgd.momentum = 0.9f;
//   cfg.last_layers = 2;                                  // or cfg.trainable = {"fc*"}
//   std::unique_ptr<jet::Trainer> trainer;
//   st = jet::Trainer::create(engine, cfg, &trainer);     // the one allocation: the whole step's plan
//   float loss;
//   st = trainer->step({images, labels}, &loss);          // forward, backward, update: no allocation
//   st = trainer->save("cnn_tuned.jet");                  // a .jet the inference runtime loads
//
// The backward graph is the model's forward graph in reverse (reverse-mode differentiation over the
// ops in the file); each op type's rule is in runtime/training/backward.cpp, in a table generated
// from schema/op_list.h, whose backward column says which op types have none. create() refuses a
// model where a trainable parameter's gradient would have to pass through an op without one, naming
// the op.
//
// What is trained: the model's f32 constants that are learnable inputs of their op (convolution
// filters and biases, Gemm weights and biases, batch-norm scale and bias) and that the
// configuration selects; the rest stay frozen (no weight gradient is computed for them). Batch norm
// runs in training mode in step() (batch statistics; running mean and variance updated with
// `batchnorm_momentum`, as PyTorch's model.train()) and in inference mode (running statistics) in
// evaluate(). The batch size is the model's: convert with `--input-shape NAME=NxCxHxW` for another.
// Convert with `--disable-pass fold_batchnorm` to keep batch-norm layers trainable (folded into the
// convolutions, their statistics stay those of the original training).
//
// Threads: a Trainer belongs to one thread at a time (its engine may be shared with inference
// contexts: the trainer copies the weights it changes and never writes the engine's).
//
// Memory: create() computes one plan for the whole step (the forward values, those the backward
// reads kept until it has, the gradients, the trainable parameters' values and optimizer state, the workspace, the
// batch's labels) and makes one allocation for it (device memory on CUDA, host on CPU). step() and
// evaluate() allocate nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jet/dnn/training.h"
#include "jet/runtime.h"

namespace jet {

enum class LossKind {
  SOFTMAX_CROSS_ENTROPY,  // output [N, C] logits, one int32 label per sample
  MSE,                    // mean squared error against a target of the output's dims (f32)
};

enum class OptimizerKind { SGD, ADAM, ADAMW };

struct TrainerConfig {
  std::string output;  // the graph output the loss reads; empty: output 0
  LossKind loss = LossKind::SOFTMAX_CROSS_ENTROPY;
  OptimizerKind optimizer = OptimizerKind::SGD;
  SgdDesc sgd;    // OptimizerKind::SGD
  AdamDesc adam;  // ADAM and ADAMW (decoupled_weight_decay is set from the kind)
  // > 0: before each update, scale the trainable gradients so that their global L2 norm is at most
  // this (torch.nn.utils.clip_grad_norm_). 0: no clipping.
  float clip_grad_norm = 0.f;
  // Which parameters train. `trainable`: name patterns ('*' any run of characters, '?' one
  // character) matched against the parameters' tensor names; a pattern that matches no parameter
  // is an error naming it. `last_layers` > 0: the parameters of the last N ops that have any
  // (a layer = a Conv, Gemm, BatchNorm, ... with its weights). Both given: the union. Neither
  // given: every parameter trains.
  std::vector<std::string> trainable;
  int last_layers = 0;
  double batchnorm_momentum = 0.1;  // PyTorch's default
  // The most workspace one convolution's filter gradient may use for its GEMM lowering (im2col,
  // then gemm_forward: the faster algorithm); a layer that would need more uses the implicit
  // GEMM, which needs none. The plan's workspace is the largest any kernel of the step needs.
  size_t workspace_limit = size_t(512) << 20;
};

// One batch, in the model's layout: `input` holds the bytes of the model's one graph input
// (TensorInfo::bytes, f32); `labels` N class indices (SOFTMAX_CROSS_ENTROPY) or `targets` the
// output's elements, packed (MSE). In host memory, or with on_device in the CUDA trainer's
// device memory (frames a camera pipeline left on the GPU): step() and evaluate() then copy them
// device to device instead of uploading them (on the CPU both are host memory).
struct TrainBatch {
  const void* input = nullptr;
  const int32_t* labels = nullptr;
  const float* targets = nullptr;
  bool on_device = false;
};

struct EvalResult {
  float loss = 0.f;
  int64_t correct = 0;  // SOFTMAX_CROSS_ENTROPY: samples whose largest logit is the label
  int64_t samples = 0;
};

// One part of a profiled step (Trainer::set_profiling).
struct StepTime {
  const char* phase = "";  // "forward", "loss", "backward", "clip" or "update"
  int op = -1;             // the engine's op (forward and backward), -1 for the others
  std::string name, type;  // the op's name and type; the optimizer's name for "update"
  double ms = 0;           // GPU time between events on CUDA; steady-clock time on CPU
};

// One parameter as the trainer sees it.
struct TrainerParameter {
  std::string name;
  int tensor = -1;       // the engine's tensor index
  int op = -1;           // the op it belongs to (the first that reads it)
  int64_t elements = 0;
  bool trainable = false;
};

// What create() planned (bytes of the one allocation, by purpose).
struct TrainerMemory {
  // The batch's input, every forward value, the values before fused activations and the
  // activation gradients, in one region shared by liveness over the step (a value lives until its
  // last reader, a backward rule that needs it included); and what they would take unshared.
  size_t activations = 0;
  size_t activations_unshared = 0;
  size_t gradients = 0;    // the trainable parameters' gradients
  size_t parameters = 0;   // the trainable parameters' values and updated batch-norm statistics
  size_t optimizer = 0;    // momentum / Adam moments
  size_t workspace = 0;    // the largest kernel workspace of the step
  size_t other = 0;        // labels / targets, loss, saved batch-norm statistics
  size_t total = 0;        // the allocation (sum of the above, aligned)
};

class Trainer {
 public:
  // The engine must be f32, loaded with LoadOptions::backend CPU (or CUDA) and, for save(), still
  // hold its file (CPU engines do; a CUDA engine drops its file after upload: use the path form).
  static Status create(std::shared_ptr<const Engine> engine, const TrainerConfig& config,
                       std::unique_ptr<Trainer>* out);
  // Loads the model itself (keeping a copy of the file for save()), on options.backend.
  static Status create(const std::string& model_path, const LoadOptions& options,
                       const TrainerConfig& config, std::unique_ptr<Trainer>* out);

  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // One training step: forward (batch statistics), loss, backward, optional clipping, the
  // optimizer's update. *loss (may be null) gets the batch's mean loss before the update;
  // *correct (may be null; cross-entropy only) the samples whose largest logit was the label in
  // this forward (the training accuracy). Allocates nothing. On CUDA it synchronizes the stream
  // once when either is asked for.
  Status step(const TrainBatch& batch, float* loss, int64_t* correct = nullptr);
  // Forward in inference mode with the current weights: mean loss and, for cross-entropy, the
  // correct predictions; `predictions` (may be null; N values, host memory) gets each sample's
  // class with the largest logit. Updates nothing; allocates nothing.
  Status evaluate(const TrainBatch& batch, EvalResult* out, int32_t* predictions = nullptr);
  // Writes the model with the current weights (and batch-norm statistics) as a new .jet file that
  // Engine::load reads: the original file with its weight bytes replaced and its checksum
  // recomputed, written through write_file_atomically (a temporary file renamed over `path`: a
  // failed write leaves an existing file as it was).
  Status save(const std::string& path) const;
  // The same bytes in memory.
  Status save(std::vector<uint8_t>* bytes) const;

  const Engine& engine() const;
  const std::vector<TrainerParameter>& parameters() const;
  const TrainerMemory& memory() const;
  int64_t steps_done() const;
  int64_t batch_size() const;
  // Debugging and tests: the current values (and last gradient) of parameter i of parameters()
  // (trainable ones only; frozen ones give NOT_SUPPORTED), copied to host memory.
  Status parameter_values(int i, std::vector<float>* values) const;
  Status parameter_gradient(int i, std::vector<float>* values) const;
  // Replaces trainable parameter i's values (`count` must be its element count; host memory), e.g.
  // to start a new classifier head from other weights. Optimizer state is kept.
  Status set_parameter_values(int i, const float* values, size_t count);

  // Where a step's time goes: off by default and then free. When on, step() records a time per
  // forward op, the loss, each backward step, the clipping and the optimizer's updates (CUDA
  // events created here, not in step()); step_times() reads the last profiled step's (it
  // synchronizes the stream). It fails while profiling is off or before a profiled step ended.
  Status set_profiling(bool on);
  Status step_times(std::vector<StepTime>* out) const;

  struct Impl;

 private:
  explicit Trainer(std::unique_ptr<Impl> impl);
  Status upload(const TrainBatch& batch, const char* routine);  // step's and evaluate's input
  std::unique_ptr<Impl> impl_;
};

}  // namespace jet
