// The tests' committed data (tests/data): where it lies, reading its JSON, and the
// synthetic prompts the model tests feed its test models.
// Thread-safety: constants and pure functions.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "baton/model/tokenizer/token_id.h"

namespace baton::testing {

inline const std::filesystem::path kTestData = BATON_TEST_DATA;
inline const std::filesystem::path kModels = kTestData / "models";

inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return nlohmann::json::parse(in);
}

// `count` ids within every test model's vocabulary (3..252), a different run per salt.
inline std::vector<TokenId> tokens_of(int count, int salt) {
  std::vector<TokenId> t;
  for (int i = 0; i < count; ++i) t.push_back((i * 37 + salt * 11) % 250 + 3);
  return t;
}

}  // namespace baton::testing
