// Runs the ahead-of-time compiled MNIST softmax model (examples/aot/mnist.py) from C++:
// classifies test digits one at a time.
//
//   mnist_main IMAGES LABELS OUT   IMAGES: N x 784 f32, LABELS: N int32; writes the N x 10
//                                  probabilities to OUT and prints the accuracy
//   mnist_main --bench N           N calls on one image: prints the time per call
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mnist.h"

static std::vector<char> read_file(const char* path) {
  std::vector<char> data;
  FILE* f = std::fopen(path, "rb");
  if (!f) return data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + n);
  std::fclose(f);
  return data;
}

int main(int argc, char** argv) {
  examples::Mnist model;
  if (argc == 3 && !std::strcmp(argv[1], "--bench")) {
    long calls = std::atol(argv[2]);
    for (int i = 0; i < model.arg_image_count(); ++i) model.arg_image_data()[i] = (i % 7) / 7.0f;
    model.Run();
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) model.Run();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("mnist: %.3f us per call (%ld calls)\n", 1e6 * s / calls, calls);
    return 0;
  }
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s IMAGES LABELS OUT | --bench N\n", argv[0]);
    return 2;
  }
  std::vector<char> images = read_file(argv[1]), labels = read_file(argv[2]);
  const size_t n = labels.size() / sizeof(int32_t);
  if (n == 0 || images.size() != n * model.arg_image_size()) {
    std::fprintf(stderr, "expected N x 784 floats and N labels\n");
    return 1;
  }
  FILE* out = std::fopen(argv[3], "wb");
  size_t correct = 0;
  for (size_t k = 0; k < n; ++k) {
    // the caller's buffer: no copy of the image
    model.set_arg_image_data(images.data() + k * model.arg_image_size());
    if (!model.Run()) {
      std::fprintf(stderr, "%s\n", model.error_msg().c_str());
      return 1;
    }
    int best = 0;
    for (int c = 1; c < 10; ++c)
      if (model.result_probabilities(0, c) > model.result_probabilities(0, best)) best = c;
    int32_t label;
    std::memcpy(&label, labels.data() + k * sizeof(int32_t), sizeof label);
    correct += best == label;
    std::fwrite(model.result_probabilities_data(), 1, model.result_probabilities_size(), out);
  }
  std::fclose(out);
  std::printf("mnist: %zu of %zu test digits right (accuracy %.4f)\n", correct, n,
              static_cast<double>(correct) / n);
  return 0;
}
