// libFuzzer target: arbitrary bytes as a GGUF file, into baton's GGUF header reader.
// ModelFileError is the expected answer to a bad file. A crash, a hang, a sanitizer report,
// another exception, or an accepted header whose tensors lie outside the file is a bug.
// Thread-safety: libFuzzer calls the entry point from one thread.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>

#include "baton/model/files/gguf_file.h"
#include "baton/model/files/model_file_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data), size);
  try {
    const baton::GgufHeader header = baton::read_gguf_header(file, "fuzz.gguf");
    for (const baton::GgufTensor& t : header.tensors) {
      if (t.offset > size || t.bytes > size - t.offset) {
        std::fprintf(stderr, "gguf_fuzz: tensor '%s' lies outside the file\n", t.name.c_str());
        std::abort();
      }
    }
  } catch (const baton::ModelFileError&) {
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gguf_fuzz: not a ModelFileError: %s\n", error.what());
    std::abort();
  }
  return 0;
}
