"""The generated header: tfcompile's C++ class interface (compiled as C++11 with warnings as
errors, pedantic) and the C API (C99), driven by real programs on x86-64 and AArch64."""

import numpy as np
import pytest

import xlapy.aot as aot
import xlapy.numpy as xnp
from xlapy_tests_aot_harness import TRIPLES

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
W = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 3


def small(x, w):
    return x @ w, xnp.sum(x)


CPP = r"""
#include <cstdint>
#include <cstdio>
#include <cstring>
#include "small.h"

using test::ns::Small;

static bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

static void fill(Small& s) {
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 3; ++j) s.arg_x(i, j) = (i * 3 + j) / 4.0f;
  for (int k = 0; k < s.arg1_count(); ++k) s.arg1_data()[k] = (k - 5) / 3.0f;
}

static void print(const char* tag, const Small& s) {
  std::printf("%s", tag);
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 4; ++j) std::printf(" %.6f", s.result_y(i, j));
  std::printf(" %.6f\n", *s.result_total_data());
}

int main() {
  static_assert(Small::kNumArgs == 2 && Small::kNumResults == 2, "counts");
  static_assert(Small::kNumVariables == 0 && Small::kAlign == 64, "facts");
  if (Small::ArgSize(0) != 24 || Small::ArgSize(1) != 48 || Small::ResultSize(0) != 32 ||
      Small::ResultSize(1) != 4) return 10;
  Small s;  // owns every buffer
  if (!aligned(s.arg0_data()) || !aligned(s.arg1_data()) || !aligned(s.result0_data()) ||
      !aligned(s.result1_data()) || (Small::kTempSize && !aligned(s.temp_data()))) return 11;
  if (s.arg0_size() != 24 || s.arg0_count() != 6 || s.result_y_count() != 8) return 12;
  if (s.LookupArgIndex("w") != 1 || s.LookupResultIndex("total") != 1 ||
      s.LookupArgIndex("nope") != -1 || s.num_args() != 2 || s.arg_size(1) != 48) return 13;
  fill(s);
  if (!s.Run()) return 14;
  print("owned", s);

  // arguments set by the caller
  Small t(Small::AllocMode::RESULTS_PROFILES_AND_TEMPS_ONLY);
  if (t.Run() || std::strstr(t.error_msg().c_str(), "argument 0") == nullptr) return 15;
  t.set_arg_x_data(s.arg0_data());
  t.set_arg1_data(s.arg_w_data());
  if (!t.Run() || !t.error_msg().empty()) return 16;
  print("caller args", t);

  // every buffer the caller's
  alignas(64) static unsigned char temp[Small::kTempSize > 0 ? Small::kTempSize : 1];
  float y[8], total;
  const void* args[] = {s.arg0_data(), s.arg1_data()};
  void* results[] = {y, &total};
  Small u(args, results, temp);
  if (!u.Run() || u.result0_data() != y) return 17;
  print("caller all", u);

  // the thread count: four threads from now on
  Small::set_num_threads(4);
  if (Small::num_threads() != 4) return 18;
  if (!s.Run()) return 19;
  print("threads", s);
  Small::set_num_threads(1);
  return Small::num_threads() == 1 ? 0 : 20;
}
"""

C99 = r"""
#include <stdio.h>
#include "small.h"

int main(void) {
  float x[SMALL_ARG0_COUNT], w[SMALL_ARG1_COUNT];
  small_result0_t y[SMALL_RESULT0_COUNT];
  small_result1_t total;
  static const long dims[] = SMALL_RESULT0_DIMS;
  int k;
  const void* args[SMALL_NUM_ARGS];
  void* results[SMALL_NUM_RESULTS];
  static unsigned char temp[SMALL_TEMP_SIZE + SMALL_ALIGN];
  void* aligned_temp = temp + (SMALL_ALIGN - (size_t)temp % SMALL_ALIGN) % SMALL_ALIGN;
  for (k = 0; k < SMALL_ARG0_COUNT; ++k) x[k] = k / 4.0f;
  for (k = 0; k < SMALL_ARG1_COUNT; ++k) w[k] = (k - 5) / 3.0f;
  args[0] = x;
  args[1] = w;
  results[0] = y;
  results[1] = &total;
  small(args, results, aligned_temp);
  printf("c99 %ld %ld %d", dims[0], dims[1], SMALL_RESULT0_RANK);
  for (k = 0; k < SMALL_RESULT0_COUNT; ++k) printf(" %.6f", y[k]);
  printf(" %.6f\n", total);
  return 0;
}
"""


def _expected() -> list:
    y = X.astype(np.float64) @ W
    return list(y.ravel()) + [float(X.sum())]


def _values(line: str) -> np.ndarray:
    return np.array([float(v) for v in line.split()[-9:]])


def test_cpp_class_and_c_api(machine, tc, tmp_path):
    c = aot.compile(small, X, W, cpp_class="test::ns::Small", entry_point="small",
                    result_names=["y", "total"], target_triple=TRIPLES[machine])
    assert c.signature.args[0].name == "x" and c.signature.args[1].name == "w"
    c.write(header=tmp_path / "small.h", object=tmp_path / "small.o")
    (tmp_path / "main.cc").write_text(CPP)
    (tmp_path / "main.c").write_text(C99)
    strict = ["-I", str(tmp_path), "-Wextra", "-pedantic"]
    exe = tc.build([tmp_path / "main.cc"], [tmp_path / "small.o"], tmp_path / "cpp",
                   libraries=c.libraries, flags=strict)
    done = tc.run([exe])
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["owned", "caller", "caller", "threads"]
    for line in lines:
        np.testing.assert_allclose(_values(line), _expected(), rtol=1e-5, atol=1e-6)
    exe = tc.build([tmp_path / "main.c"], [tmp_path / "small.o"], tmp_path / "c99",
                   libraries=c.libraries, flags=strict)
    done = tc.run([exe])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[1:4] == ["2", "4", "2"]
    np.testing.assert_allclose(_values(done.stdout), _expected(), rtol=1e-5, atol=1e-6)


def test_header_facts():
    """The header states the signature, sizes and what to link, and declares the C API."""
    c = aot.compile(small, X, W, cpp_class="a::B", result_names=["y", "total"])
    h = c.header
    assert "a::B: (x: f32[2,3], w: f32[3,4]) -> (y: f32[2,4], total: f32[])" in h
    assert "void a_b(const void *const *args, void *const *results, void *temp);" in h
    assert "#define A_B_ARG1_DIMS {3, 4}" in h and "#define A_B_RESULT1_RANK 0" in h
    assert "namespace a {" in h and "class B final {" in h
    assert "void set_arg_w_data(const void* data)" in h
    assert "float& result_y(size_t dim0, size_t dim1)" in h
    assert c.entry_point == "a_b"


@pytest.mark.parametrize("max_threads", [1, 4])
def test_thread_pool_is_in_the_object_only_when_asked(max_threads):
    c = aot.compile(small, X, W, max_threads=max_threads)
    needed = c.code.info.undefined()
    assert ("pthread_create" in needed) == (max_threads > 1)
    assert ("-lpthread" in c.libraries) == (max_threads > 1)
    assert f"Threads: {'up to 4' if max_threads > 1 else 'one (no pool)'}" in c.header
