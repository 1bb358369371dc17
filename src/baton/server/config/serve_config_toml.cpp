// read_serve_config(): the TOML file into a ServeConfig. The only file that compiles
// toml++ (header-only, and slow to compile), so the rest of the server never includes it.
#include "baton/server/config/serve_config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/common/read_file.h"

namespace baton {
namespace {

// One key a table may hold and what reading it does; `key` is its full TOML path.
struct Field {
  std::string_view name;
  std::function<void(const toml::node& value, const std::string& key)> read;
};

std::string_view type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string joined(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::optional<ModelSpec::Kind> parse_kind(std::string_view name) {
  if (name == "chat") return ModelSpec::Kind::chat;
  if (name == "embedding") return ModelSpec::Kind::embedding;
  return std::nullopt;
}

std::optional<bool> parse_load(std::string_view name) {
  if (name == "startup") return false;
  if (name == "on-demand") return true;
  return std::nullopt;
}

// Errors about the address name the file's keys when the file set them (a flag resets it).
constexpr const char* kFileAddress = "host, port in the config file";
constexpr std::string_view kLoads[] = {"startup", "on-demand"};
constexpr std::string_view kPolicies[] = {"concurrent", "serialize", "partition"};
constexpr std::string_view kQuanta[] = {"burst", "layer", "op"};
constexpr std::string_view kScopes[] = {"process", "host"};
constexpr std::string_view kKinds[] = {"chat", "embedding"};
// The keys only a chat model takes; an embedding model naming one is a mistake.
constexpr std::string_view kChatOnly[] = {"max_batch",     "prefill_chunk", "step_tokens",
                                          "chat_template", "max_tokens",    "sampling",
                                          "deterministic"};

// Reads typed values; every error names the file, the line, the column and the key.
class TomlReader {
 public:
  explicit TomlReader(const std::filesystem::path& file)
      : file_(file), folder_(std::filesystem::absolute(file).parent_path()) {}

  ServeConfig read(const toml::table& root) const;

 private:
  [[noreturn]] void fail(const toml::source_region& at, const std::string& message) const {
    throw ConfigError(
        fmt::format("{}:{}:{}: {}", file_.string(), at.begin.line, at.begin.column, message));
  }
  [[noreturn]] void wrong_type(const toml::node& value, const std::string& key,
                               std::string_view expected) const {
    fail(value.source(),
         fmt::format("{} must be {}, not {}", key, expected, type_name(value.type())));
  }

  std::string string(const toml::node& value, const std::string& key) const;
  bool boolean(const toml::node& value, const std::string& key) const;
  double real(const toml::node& value, const std::string& key) const;
  template <typename T>
  T integer(const toml::node& value, const std::string& key) const;
  std::filesystem::path path(const toml::node& value, const std::string& key) const;
  template <typename E>
  E choice(const toml::node& value, const std::string& key,
           std::optional<E> (*parse)(std::string_view),
           std::span<const std::string_view> names) const;
  const toml::table& table(const toml::node& value, const std::string& key) const;
  void read_kv_budget(const toml::node& value, const std::string& key, ModelSpec& m) const;
  void read_prefill_share(const toml::node& value, const std::string& key, TurnOptions& turn) const;

  void read_fields(const toml::table& table, const std::string& prefix,
                   std::span<const Field> fields) const;
  std::vector<ModelSpec> read_models(const toml::table& models) const;
  ModelSpec read_model(const std::string& name, const toml::table& table) const;
  void read_sampling(const toml::table& table, const std::string& at, SamplingRequest& s) const;

  const std::filesystem::path file_;
  const std::filesystem::path folder_;  // where relative paths start
};

std::string TomlReader::string(const toml::node& value, const std::string& key) const {
  if (const auto* s = value.as_string()) return s->get();
  wrong_type(value, key, "a string");
}

bool TomlReader::boolean(const toml::node& value, const std::string& key) const {
  if (const auto* b = value.as_boolean()) return b->get();
  wrong_type(value, key, "a boolean (true or false)");
}

double TomlReader::real(const toml::node& value, const std::string& key) const {
  if (const auto* f = value.as_floating_point()) return f->get();
  if (const auto* i = value.as_integer()) return static_cast<double>(i->get());
  wrong_type(value, key, "a number");
}

template <typename T>
T TomlReader::integer(const toml::node& value, const std::string& key) const {
  const auto* i = value.as_integer();
  if (i == nullptr) wrong_type(value, key, "an integer");
  const std::int64_t x = i->get();
  if (std::is_unsigned_v<T> && x < 0) {
    fail(value.source(), fmt::format("{} = {}: must not be negative", key, x));
  }
  if (!std::in_range<T>(x)) {
    fail(value.source(),
         fmt::format("{} = {}: out of range (at most {})", key, x, std::numeric_limits<T>::max()));
  }
  return static_cast<T>(x);
}

std::filesystem::path TomlReader::path(const toml::node& value, const std::string& key) const {
  const std::filesystem::path p = string(value, key);
  if (p.empty()) fail(value.source(), key + " must not be empty");
  // Relative to the file, not to wherever the server happens to be started.
  return (p.is_relative() ? folder_ / p : p).lexically_normal();
}

template <typename E>
E TomlReader::choice(const toml::node& value, const std::string& key,
                     std::optional<E> (*parse)(std::string_view),
                     std::span<const std::string_view> names) const {
  const std::string name = string(value, key);
  if (const std::optional<E> parsed = parse(name)) return *parsed;
  std::string message = fmt::format("{} = \"{}\": expected one of {}", key, name, joined(names));
  if (const auto guess = closest_key(name, names)) {
    message += fmt::format(" (did you mean \"{}\"?)", *guess);
  }
  fail(value.source(), message);
}

// A number of MB (checked with the other values) or the string "auto".
void TomlReader::read_kv_budget(const toml::node& value, const std::string& key,
                                ModelSpec& m) const {
  if (const auto* s = value.as_string()) {
    if (s->get() != "auto") {
      fail(value.source(),
           fmt::format("{} = \"{}\": expected a number of MB or \"auto\"", key, s->get()));
    }
    m.kv_mode = KvBudgetMode::sized;
    return;
  }
  if (!value.is_integer()) wrong_type(value, key, "an integer (MB) or \"auto\"");
  m.kv_budget_mb = integer<std::size_t>(value, key);
  m.kv_mode = KvBudgetMode::given;
}

// A number (checked with the other values) or the string "auto" or "weights".
void TomlReader::read_prefill_share(const toml::node& value, const std::string& key,
                                    TurnOptions& turn) const {
  if (const auto* s = value.as_string()) {
    if (s->get() != "auto" && s->get() != "weights") {
      fail(value.source(),
           fmt::format("{} = \"{}\": expected a number, \"auto\" or \"weights\"", key, s->get()));
    }
    turn.prefill_share_auto = s->get() == "auto";
    turn.prefill_share.reset();
    return;
  }
  if (!value.is_number()) wrong_type(value, key, "a number, \"auto\" or \"weights\"");
  turn.prefill_share = real(value, key);
  turn.prefill_share_auto = false;
}

const toml::table& TomlReader::table(const toml::node& value, const std::string& key) const {
  if (const auto* t = value.as_table()) return *t;
  wrong_type(value, key, "a table");
}

void TomlReader::read_fields(const toml::table& table, const std::string& prefix,
                             std::span<const Field> fields) const {
  std::vector<std::string_view> names;
  for (const Field& field : fields) names.push_back(field.name);
  for (auto&& [key, value] : table) {
    const auto field = std::find_if(fields.begin(), fields.end(),
                                    [&](const Field& f) { return f.name == key.str(); });
    if (field != fields.end()) {
      field->read(value, prefix + std::string(key.str()));
      continue;
    }
    std::string message = fmt::format("unknown key \"{}{}\"", prefix, key.str());
    if (const auto guess = closest_key(key.str(), names)) {
      message += fmt::format(" (did you mean \"{}\"?)", *guess);
    } else {
      message += "; known keys: " + joined(names);
    }
    fail(key.source(), message);
  }
}

ServeConfig TomlReader::read(const toml::table& root) const {
  ServeConfig c;
  using N = const toml::node&;
  using K = const std::string&;
  const Field fields[] = {
      {.name = "host",
       .read =
           [&](N v, K k) {
             c.host = string(v, k);
             c.address_setting = kFileAddress;
           }},
      {.name = "port",
       .read =
           [&](N v, K k) {
             c.port = integer<int>(v, k);
             c.address_setting = kFileAddress;
           }},
      {.name = "backend", .read = [&](N v, K k) { c.backend = string(v, k); }},
      {.name = "policy",
       .read = [&](N v, K k) { c.turn.policy = choice(v, k, parse_turn_policy, kPolicies); }},
      {.name = "quantum",
       .read = [&](N v, K k) { c.turn.quantum = choice(v, k, parse_quantum, kQuanta); }},
      {.name = "decode_first", .read = [&](N v, K k) { c.turn.decode_first = boolean(v, k); }},
      {.name = "max_hold_ms", .read = [&](N v, K k) { c.turn.max_hold_ms = real(v, k); }},
      {.name = "turn_scope",
       .read = [&](N v, K k) { c.turn.scope = choice(v, k, parse_turn_scope, kScopes); }},
      {.name = "turn_name", .read = [&](N v, K k) { c.turn.host_name = string(v, k); }},
      {.name = "prefill_share", .read = [&](N v, K k) { read_prefill_share(v, k, c.turn); }},
      {.name = "ledger", .read = [&](N v, K k) { c.ledger = path(v, k); }},
      {.name = "no_ledger", .read = [&](N v, K k) { c.no_ledger = boolean(v, k); }},
      {.name = "gpu_sampling", .read = [&](N v, K k) { c.gpu_sampling = boolean(v, k); }},
      {.name = "api_key", .read = [&](N v, K k) { c.api_key = string(v, k); }},
      {.name = "shutdown_timeout", .read = [&](N v, K k) { c.shutdown_timeout_s = real(v, k); }},
      {.name = "max_body_bytes",
       .read = [&](N v, K k) { c.max_body_bytes = integer<std::size_t>(v, k); }},
      {.name = "http_threads", .read = [&](N v, K k) { c.http_threads = integer<int>(v, k); }},
      {.name = "cpu_threads", .read = [&](N v, K k) { c.cpu_threads = integer<int>(v, k); }},
      {.name = "watchdog_deadline", .read = [&](N v, K k) { c.watchdog_deadline_s = real(v, k); }},
      {.name = "memory_budget_mb",
       .read = [&](N v, K k) { c.memory_budget_mb = integer<std::size_t>(v, k); }},
      {.name = "gpu_memory_fraction",
       .read = [&](N v, K k) { c.gpu_memory_fraction = real(v, k); }},
      {.name = "load_timeout", .read = [&](N v, K k) { c.load_timeout_s = real(v, k); }},
      {.name = "drain_timeout", .read = [&](N v, K k) { c.drain_timeout_s = real(v, k); }},
      {.name = "models", .read = [&](N v, K k) { c.models = read_models(table(v, k)); }},
  };
  read_fields(root, "", fields);
  return c;
}

std::vector<ModelSpec> TomlReader::read_models(const toml::table& models) const {
  // toml++ keeps a table sorted by key; the keys' positions give back the file's order.
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (auto&& [key, value] : models) entries.emplace_back(&key, &value);
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const toml::source_position& x = a.first->source().begin;
    const toml::source_position& y = b.first->source().begin;
    return std::pair(x.line, x.column) < std::pair(y.line, y.column);
  });
  std::vector<ModelSpec> out;
  for (const auto& [key, value] : entries) {
    const std::string name(key->str());
    out.push_back(read_model(name, table(*value, "models." + name)));
  }
  return out;
}

ModelSpec TomlReader::read_model(const std::string& name, const toml::table& t) const {
  ModelSpec m;
  m.name = name;
  const std::string at = "models." + name + ".";
  if (const toml::node* kind = t.get("kind")) {
    m.kind = choice(*kind, at + "kind", parse_kind, kKinds);
  }
  if (m.kind == ModelSpec::Kind::embedding) {
    m.kv_budget_mb = kEmbeddingKvBudgetMb;
    for (std::string_view key : kChatOnly) {
      if (const toml::node* value = t.get(key)) {
        fail(value->source(), fmt::format("{}{}: only a chat model takes {}; this one is kind = "
                                          "\"embedding\"",
                                          at, key, key));
      }
    }
  }
  if (!t.contains("path")) {
    fail(t.source(), "models." + name + " has no path (its model directory)");
  }
  using N = const toml::node&;
  using K = const std::string&;
  const Field fields[] = {
      {.name = "kind",
       .read = [](N, K) {}},  // read first: it decides the defaults and the keys allowed
      {.name = "path", .read = [&](N v, K k) { m.dir = path(v, k); }},
      {.name = "context_length", .read = [&](N v, K k) { m.context_length = integer<int>(v, k); }},
      {.name = "kv_budget_mb", .read = [&](N v, K k) { read_kv_budget(v, k, m); }},
      {.name = "queue_limit", .read = [&](N v, K k) { m.queue_limit = integer<int>(v, k); }},
      {.name = "max_batch", .read = [&](N v, K k) { m.max_batch = integer<int>(v, k); }},
      {.name = "prefill_chunk", .read = [&](N v, K k) { m.prefill_chunk = integer<int>(v, k); }},
      {.name = "step_tokens", .read = [&](N v, K k) { m.step_tokens = integer<int>(v, k); }},
      {.name = "turn_weight", .read = [&](N v, K k) { m.turn_weight = real(v, k); }},
      {.name = "priority",
       .read =
           [&](N v, K) {
             fail(v.source(), "models." + name +
                                  ".priority was replaced by turn_weight, the model's share of "
                                  "the GPU beside the others (turn_weight = 3 beside 1 gets 3/4 of "
                                  "the device time while both want it)");
           }},
      {.name = "chat_template", .read = [&](N v, K k) { m.chat_template = string(v, k); }},
      {.name = "max_tokens", .read = [&](N v, K k) { m.max_tokens = integer<int>(v, k); }},
      {.name = "sampling",
       .read = [&](N v, K k) { read_sampling(table(v, k), k + ".", m.sampling); }},
      {.name = "load", .read = [&](N v, K k) { m.on_demand = choice(v, k, parse_load, kLoads); }},
      {.name = "idle_ttl", .read = [&](N v, K k) { m.idle_ttl_s = real(v, k); }},
      {.name = "pin", .read = [&](N v, K k) { m.pin = boolean(v, k); }},
      {.name = "deterministic", .read = [&](N v, K k) { m.deterministic = boolean(v, k); }},
      {.name = "weights",
       .read =
           [&](N v, K k) {
             const WeightsChoice w = choice(v, k, parse_weights_choice, kWeightsChoiceNames);
             m.weights = w.host;
             m.device_precision = w.device;
           }},
  };
  read_fields(t, at, fields);
  return m;
}

void TomlReader::read_sampling(const toml::table& t, const std::string& at,
                               SamplingRequest& s) const {
  using N = const toml::node&;
  using K = const std::string&;
  const Field fields[] = {
      {.name = "temperature", .read = [&](N v, K k) { s.temperature = real(v, k); }},
      {.name = "top_p", .read = [&](N v, K k) { s.top_p = real(v, k); }},
      {.name = "top_k", .read = [&](N v, K k) { s.top_k = integer<int>(v, k); }},
      {.name = "min_p", .read = [&](N v, K k) { s.min_p = real(v, k); }},
      {.name = "repetition_penalty", .read = [&](N v, K k) { s.repetition_penalty = real(v, k); }},
      {.name = "presence_penalty", .read = [&](N v, K k) { s.presence_penalty = real(v, k); }},
      {.name = "frequency_penalty", .read = [&](N v, K k) { s.frequency_penalty = real(v, k); }},
      {.name = "seed", .read = [&](N v, K k) { s.seed = integer<std::uint64_t>(v, k); }},
  };
  read_fields(t, at, fields);
}

}  // namespace

ServeConfig read_serve_config(const std::filesystem::path& file) {
  std::string text;
  try {
    text = read_file(file);
  } catch (const FileReadError& e) {
    throw ConfigError(fmt::format("config file {}: cannot read ({})", file.string(), e.reason()));
  }
  toml::table root;
  try {
    root = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}:{}: TOML syntax error: {}", file.string(),
                                  e.source().begin.line, e.source().begin.column, e.description()));
  }
  return TomlReader(file).read(root);
}

}  // namespace baton
