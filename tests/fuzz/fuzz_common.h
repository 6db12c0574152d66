// What the fuzz targets share: how a finding is reported. A finding prints "FINDING:" (which
// scripts/fuzz.sh counts) and aborts, so that libFuzzer saves the input as a crash-* artifact.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "jet/dnn/common.h"

namespace jet {
namespace fuzz {

[[noreturn]] inline void finding(const char* target, const char* what, const Status& st) {
  std::fprintf(stderr, "%s: FINDING: %s: %s\n", target, what, st.to_string().c_str());
  std::abort();
}

// INTERNAL_ERROR is jet's "this is a bug": a finding wherever it comes back.
inline void check_not_internal(const char* target, const char* what, const Status& st) {
  if (st.code() == StatusCode::INTERNAL_ERROR) finding(target, what, st);
}

}  // namespace fuzz
}  // namespace jet
