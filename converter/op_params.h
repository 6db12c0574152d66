// The schema parameter table of each IR op type: one write_params overload per attribute struct,
// defined in ir.cpp right after the op's builder, so that an op's IR side (attributes checked,
// shape inferred) and what it stores in the file sit together. write_model.cpp calls them through
// schema/op_list.h; the declarations below are generated from it too, each returning the schema
// table that op_list.h names for the op. So an op type without its write_params fails to link,
// and one that writes another op's table fails to compile.
#pragma once

#include <cstddef>

#include "ir.h"
#include "jet/schema/model_generated.h"

namespace jet {
namespace ir {

// What a parameter table needs beyond the node's attributes (only ConvParams reads it): the
// algorithm write_model chose and the fallback policy of WriteOptions.
struct ParamsContext {
  fb::ConvAlgo conv_algo = fb::ConvAlgo::Auto;
  ConvPreference conv_preference = ConvPreference::PREFER_FASTEST;
  size_t workspace_limit = 0;
};

#define JET_IR_WRITE_PARAMS(ENUM, fn, Attrs, Params, name, in_place, layout, f32_params, dtypes, backward, inputs) \
  flatbuffers::Offset<fb::Params> write_params(flatbuffers::FlatBufferBuilder& b, const Attrs& a,                  \
                                               const ParamsContext& c);
JET_OPS(JET_IR_WRITE_PARAMS)
#undef JET_IR_WRITE_PARAMS

}  // namespace ir
}  // namespace jet
