// The schema parameter table of each IR op type. An op whose attributes are its table's own
// object-API struct (fb::<Params>T, schema/op_list.h's Attrs column) is stored by the generated
// Pack, nothing to write. Every other op has one write_params overload for its attribute struct,
// defined in ir.cpp right after the op's builder, so that an op's IR side (attributes checked,
// shape inferred) and what it stores in the file sit together. write_model.cpp calls
// write_op_params through schema/op_list.h; the write_params declarations below are generated from
// it too, each returning the schema table that op_list.h names for the op. So an op type with its
// own attributes but without its write_params fails to link, and one that writes another op's
// table fails to compile. (For the table-struct ops the generated declaration is never called.)
#pragma once

#include <cstddef>
#include <type_traits>

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

// True for attributes that are a schema table's object-API struct.
template <typename Attrs>
constexpr bool is_table_struct = std::is_base_of<flatbuffers::NativeTable, Attrs>::value;

// One node's parameter table, of the op's schema table Params: Pack for a table's own struct, else
// the op's write_params (a struct of another table, or a write_params returning one, does not
// compile).
template <typename Params, typename Attrs>
flatbuffers::Offset<Params> write_op_params(flatbuffers::FlatBufferBuilder& b, const Attrs& a, const ParamsContext& c) {
  static_cast<void>(c);  // read by one branch only: gcc 9 would warn (its bug 81676)
  if constexpr (is_table_struct<Attrs>) {
    static_assert(std::is_same<typename Attrs::TableType, Params>::value, "the attributes are another table's struct");
    return Params::Pack(b, &a);
  } else {
    return write_params(b, a, c);
  }
}

}  // namespace ir
}  // namespace jet
