// Counting the heap allocations of one thread, for the zero-allocation tests
// (tests/runtime/test_zero_alloc.cpp, tests/samples/test_camera_loop_alloc.cpp). alloc_counter.cpp
// replaces malloc/calloc/realloc/memalign/aligned_alloc/posix_memalign and every operator new with
// counting versions that forward to glibc; compile it into the test executable itself (not a
// library), so that the interposition is scoped to that executable.
//
// Under AddressSanitizer, ThreadSanitizer or MemorySanitizer (which own malloc) nothing is
// interposed and alloc_counting_available() is false: the tests say so and skip the counting.
// It is false as well with JET_TEST_NO_ALLOC_COUNT set (gpu-check's compute-sanitizer runs: the
// tool allocates inside the CUDA calls it intercepts, on the calling thread).
#pragma once

namespace jet {
namespace test {

bool alloc_counting_available();
// Starts counting the calling thread's allocations from 0 (other threads' are never counted:
// driver threads allocate on their own schedule).
void arm_alloc_counter();
// Stops counting; returns how many allocations the thread made since arm_alloc_counter().
long disarm_alloc_counter();

}  // namespace test
}  // namespace jet
