#include "baton/model/output/pooling.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "baton/common/read_file.h"
#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& file) {
  try {
    return nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw ModelFileError(file.string(), std::string("not valid JSON: ") + e.what());
  }
}

bool flag(const nlohmann::json& config, const char* key, const fs::path& file) {
  if (!config.contains(key)) return false;
  if (!config[key].is_boolean()) {
    throw ModelFileError(file.string(), std::string("'") + key + "' must be true or false");
  }
  return config[key].get<bool>();
}

PoolingMode read_mode(const fs::path& file) {
  const nlohmann::json config = read_json(file);
  if (!config.is_object()) throw ModelFileError(file.string(), "expected a JSON object");
  if (config.contains("pooling_mode") && config["pooling_mode"].is_string()) {
    try {
      return parse_pooling_mode(config["pooling_mode"].get<std::string>());
    } catch (const std::invalid_argument& e) {
      throw ModelFileError(file.string(), e.what());
    }
  }
  for (const char* unsupported : {"pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens",
                                  "pooling_mode_weightedmean_tokens"}) {
    if (flag(config, unsupported, file)) {
      throw ModelFileError(
          file.string(), std::string(unsupported) + " is not supported (mean, last token or cls)");
    }
  }
  const bool mean = flag(config, "pooling_mode_mean_tokens", file);
  const bool last = flag(config, "pooling_mode_lasttoken", file);
  const bool cls = flag(config, "pooling_mode_cls_token", file);
  if (mean + last + cls != 1) {
    throw ModelFileError(file.string(),
                         "exactly one of pooling_mode_mean_tokens, pooling_mode_lasttoken and "
                         "pooling_mode_cls_token must be true");
  }
  return mean ? PoolingMode::mean : last ? PoolingMode::last_token : PoolingMode::cls;
}

}  // namespace

std::string_view to_string(PoolingMode mode) {
  switch (mode) {
    case PoolingMode::mean:
      return "mean";
    case PoolingMode::last_token:
      return "last";
    case PoolingMode::cls:
      return "cls";
  }
  return "last";
}

PoolingMode parse_pooling_mode(std::string_view name) {
  if (name == "mean") return PoolingMode::mean;
  if (name == "last" || name == "lasttoken") return PoolingMode::last_token;
  if (name == "cls") return PoolingMode::cls;
  throw std::invalid_argument("pooling '" + std::string(name) +
                              "' is not supported (mean, last or cls)");
}

Pooling read_pooling(const ModelSource& source) {
  const fs::path modules_file = source.file("modules.json");
  if (!fs::exists(modules_file)) return Pooling{};
  const nlohmann::json modules = read_json(modules_file);
  if (!modules.is_array()) throw ModelFileError(modules_file.string(), "expected a JSON array");
  Pooling pooling;
  pooling.from_sentence_transformers = true;
  pooling.normalize = false;
  bool pooled = false;
  for (const nlohmann::json& module : modules) {
    const std::string type = module.value("type", "");
    const std::string path = module.value("path", "");
    const auto kind = type.substr(type.rfind('.') + 1);  // the class name
    if (kind == "Transformer") continue;
    if (kind == "Pooling") {
      pooling.mode = read_mode(source.file(path) / "config.json");
      pooled = true;
    } else if (kind == "Normalize") {
      pooling.normalize = true;
    } else {
      throw ModelFileError(modules_file.string(),
                           "module '" + type +
                               "' is not supported (Transformer, Pooling and "
                               "Normalize are)");
    }
  }
  if (!pooled) throw ModelFileError(modules_file.string(), "no Pooling module");
  return pooling;
}

std::vector<float> pool(const Pooling& pooling, std::span<const float> hidden, int tokens,
                        int width) {
  if (tokens < 1 || hidden.size() != static_cast<std::size_t>(tokens) * width) {
    throw std::invalid_argument("pool: hidden states must be [tokens x width], tokens >= 1");
  }
  std::vector<double> sum(static_cast<std::size_t>(width), 0.0);
  const auto row = [&](int t) {
    return hidden.subspan(static_cast<std::size_t>(t) * width, width);
  };
  if (pooling.mode == PoolingMode::mean) {
    for (int t = 0; t < tokens; ++t) {
      for (int i = 0; i < width; ++i) sum[i] += row(t)[i];
    }
    for (double& x : sum) x /= tokens;
  } else {
    const auto chosen = row(pooling.mode == PoolingMode::cls ? 0 : tokens - 1);
    for (int i = 0; i < width; ++i) sum[i] = chosen[i];
  }
  double norm = 1.0;
  if (pooling.normalize) {
    double squares = 0.0;
    for (const double x : sum) squares += x * x;
    norm = std::sqrt(squares);
    if (norm < 1e-12) norm = 1e-12;  // as torch's normalize: a zero vector stays zero
  }
  std::vector<float> out(static_cast<std::size_t>(width));
  for (int i = 0; i < width; ++i) out[i] = static_cast<float>(sum[i] / norm);
  return out;
}

}  // namespace baton
