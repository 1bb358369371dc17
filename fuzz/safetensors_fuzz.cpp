// libFuzzer target: arbitrary bytes into SafetensorsFile::parse. A ModelFileError is the
// expected answer to bad input. Any other exception (it reaches libFuzzer and aborts), a
// crash, a sanitizer report, or a table that breaks the parser's contract (checked below)
// is a bug. Every tensor's bytes are read and a few elements converted to float, so that a
// view outside the input is an ASan report.
// Each input is parsed twice: as it is (the framing), and with its header length rewritten
// to end at the input's last '}' (so that mutations inside the JSON, which shift its end,
// still reach the header parser instead of failing at the length).
// Thread-safety: libFuzzer calls the entry point from one thread.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "baton/model/files/model_file_error.h"
#include "baton/model/files/safetensors.h"

namespace {

constexpr std::size_t kLengthBytes = 8;

void require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "safetensors_fuzz: broken contract: %s\n", what);
  std::abort();
}

// Reads every byte of the view (ASan checks each) and returns a checksum so the reads stay.
unsigned touch(std::span<const std::byte> bytes) {
  unsigned sum = 0;
  for (const std::byte b : bytes) sum += static_cast<unsigned>(b);
  return sum;
}

void check_tensor(const baton::TensorView& tensor, std::span<const std::byte> input) {
  require(tensor.bytes.empty() ||
              (tensor.bytes.data() >= input.data() &&
               tensor.bytes.data() + tensor.bytes.size() <= input.data() + input.size()),
          "a view lies inside the input");
  require(tensor.bytes.size() == tensor.element_count() * baton::dtype_size(tensor.dtype),
          "bytes == element_count * dtype size");
  for (const std::int64_t dim : tensor.shape) require(dim >= 0, "dimensions are >= 0");
  volatile unsigned sink = touch(tensor.bytes);
  (void)sink;
  if (!baton::is_float_readable(tensor.dtype)) return;
  const std::size_t count = tensor.element_count();
  std::vector<float> out(std::min<std::size_t>(count, 4));
  baton::to_float(tensor, 0, out);
  baton::to_float(tensor, count - out.size(), out);
}

void check(std::span<const std::byte> input) {
  try {
    const baton::SafetensorsFile file = baton::SafetensorsFile::parse(input, "fuzz.safetensors");
    const auto tensors = file.tensors();
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      check_tensor(tensors[i], input);
      require(file.find(tensors[i].name) == &tensors[i], "find gives the listed tensor");
      require(i == 0 || tensors[i - 1].name < tensors[i].name, "names sorted and distinct");
    }
  } catch (const baton::ModelFileError& error) {
    require(std::string(error.what()).starts_with("fuzz.safetensors: "),
            "a message starts with the file");
  }
}

// The input with its header length set to end just after its last '}'; empty if none.
std::vector<std::byte> reframed(std::span<const std::byte> input) {
  if (input.size() <= kLengthBytes) return {};
  const auto last = std::find(input.rbegin(), input.rend() - kLengthBytes, std::byte{'}'});
  if (last == input.rend() - kLengthBytes) return {};
  const std::uint64_t length = static_cast<std::uint64_t>(input.rend() - last) - kLengthBytes;
  std::vector<std::byte> copy(input.begin(), input.end());
  for (std::size_t i = 0; i < kLengthBytes; ++i) {
    copy[i] = static_cast<std::byte>((length >> (8 * i)) & 0xff);
  }
  return copy;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data), size);
  check(input);
  const std::vector<std::byte> copy = reframed(input);
  if (!copy.empty()) check(copy);
  return 0;
}
