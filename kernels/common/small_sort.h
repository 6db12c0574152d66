// A stable insertion sort for the handful of elements the routines order (tensor dims by stride,
// find's algorithm results). std::stable_sort may allocate a temporary buffer, and routines must
// never allocate (the runtime's zero-allocation test counts every malloc during run()).
#pragma once

namespace jet {

// Sorts [first, first + n) so that less(a, b) holds for no b placed before a; equal elements
// keep their order. O(n^2): for n up to a few dozen.
template <class T, class Less>
void small_stable_sort(T* first, int n, Less less) {
  for (int i = 1; i < n; ++i) {
    T v = first[i];
    int j = i;
    for (; j > 0 && less(v, first[j - 1]); --j) first[j] = first[j - 1];
    first[j] = v;
  }
}

}  // namespace jet
