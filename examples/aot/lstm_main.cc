// Runs the ahead-of-time compiled LSTM (examples/aot/lstm.py) from C++.
//
//   lstm_main IN OUT        reads the input sequence (f32[16,60]) from IN, writes the outputs
//                           (f32[16,60]) to OUT
//   lstm_main --bench N     N calls on a fixed input: prints the time per call
//   lstm_main ... --threads T
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lstm.h"

int main(int argc, char** argv) {
  int threads = 1;
  long bench = 0;
  const char* paths[2] = {nullptr, nullptr};
  int n_paths = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--bench") && i + 1 < argc) {
      bench = std::atol(argv[++i]);
    } else if (n_paths < 2) {
      paths[n_paths++] = argv[i];
    }
  }
  examples::Lstm::set_num_threads(threads);
  examples::Lstm lstm;  // owns 64-byte aligned argument, result and temp buffers
  if (bench > 0) {
    for (int i = 0; i < lstm.arg0_count(); ++i) lstm.arg0_data()[i] = 0.01f * (i % 97);
    lstm.Run();  // warm up
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < bench; ++i) lstm.Run();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("lstm: %.2f us per call (%ld calls, %d thread%s)\n", 1e6 * s / bench, bench,
                threads, threads == 1 ? "" : "s");
    return 0;
  }
  if (n_paths != 2) {
    std::fprintf(stderr, "usage: %s IN OUT | --bench N [--threads T]\n", argv[0]);
    return 2;
  }
  FILE* in = std::fopen(paths[0], "rb");
  if (!in || std::fread(lstm.arg_xs_data(), 1, lstm.arg_xs_size(), in) !=
                 static_cast<size_t>(lstm.arg_xs_size())) {
    std::fprintf(stderr, "cannot read %d bytes from %s\n", lstm.arg_xs_size(), paths[0]);
    return 1;
  }
  std::fclose(in);
  if (!lstm.Run()) {
    std::fprintf(stderr, "%s\n", lstm.error_msg().c_str());
    return 1;
  }
  FILE* out = std::fopen(paths[1], "wb");
  std::fwrite(lstm.result0_data(), 1, lstm.result0_size(), out);
  std::fclose(out);
  // the last step's first outputs, element by element
  std::printf("lstm: y[15][0..3] = %.6f %.6f %.6f %.6f\n", lstm.result0(15, 0),
              lstm.result0(15, 1), lstm.result0(15, 2), lstm.result0(15, 3));
  return 0;
}
