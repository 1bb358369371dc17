// The experiment's TOML file into an ExperimentPlan. The only file of the module that compiles
// toml++ (header-only, and slow to compile).
#include "baton/experiment/experiment_plan.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>

#include "baton/common/duration.h"
#include "baton/common/read_file.h"

namespace baton {
namespace {

// The block length's range: below 10 ms the runner would do little but switch, and a block
// longer than the day cannot be balanced over the day.
constexpr double kMinBlockS = 0.01;
constexpr double kMaxBlockS = 86400.0;

std::string joined(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

// One key a table may hold and what reading it does.
struct Field {
  std::string_view name;
  std::function<void(const toml::node& value, const std::string& key)> read;
};

// Typed values; every error names the file and the key.
class PlanReader {
 public:
  explicit PlanReader(std::string_view file) : file_(file) {}

  ExperimentPlan read(const toml::table& root, const TurnOptions& base) const;

 private:
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw std::invalid_argument(fmt::format("{}: {}: {}", file_, key, message));
  }
  std::string text(const toml::node& value, const std::string& key) const;
  bool boolean(const toml::node& value, const std::string& key) const;
  double number(const toml::node& value, const std::string& key) const;
  double duration(const toml::node& value, const std::string& key) const;
  std::uint64_t seed(const toml::node& value, const std::string& key) const;
  void read_fields(const toml::table& table, const std::string& prefix,
                   std::span<const Field> fields) const;
  std::vector<ExperimentArm> read_arms(const toml::node& value, const TurnOptions& base) const;
  ExperimentArm read_arm(const toml::node& value, const std::string& at,
                         const TurnOptions& base) const;
  TurnPolicy policy(const toml::node& value, const std::string& key) const;
  Quantum quantum(const toml::node& value, const std::string& key) const;
  PrefillShare prefill_share(const toml::node& value, const std::string& key) const;
  void check_arms(const ExperimentPlan& plan) const;

  std::string file_;
};

std::string PlanReader::text(const toml::node& value, const std::string& key) const {
  if (const auto* s = value.as_string()) return s->get();
  fail(key, "must be a string");
}

bool PlanReader::boolean(const toml::node& value, const std::string& key) const {
  if (const auto* b = value.as_boolean()) return b->get();
  fail(key, "must be a boolean (true or false)");
}

double PlanReader::number(const toml::node& value, const std::string& key) const {
  double x = 0.0;
  if (const auto* f = value.as_floating_point()) {
    x = f->get();
  } else if (const auto* i = value.as_integer()) {
    x = static_cast<double>(i->get());
  } else {
    fail(key, "must be a number");
  }
  if (!std::isfinite(x)) fail(key, fmt::format("{} is not a finite number", x));
  return x;
}

double PlanReader::duration(const toml::node& value, const std::string& key) const {
  if (!value.is_string()) fail(key, "must be a duration string such as \"45m\", \"90s\" or \"1h\"");
  const std::string given = text(value, key);
  const std::optional<double> seconds = parse_duration_seconds(given);
  if (!seconds) {
    fail(key, fmt::format("'{}' is not a duration (a number with s, m, h or d: \"45m\")", given));
  }
  return *seconds;
}

std::uint64_t PlanReader::seed(const toml::node& value, const std::string& key) const {
  const auto* i = value.as_integer();
  if (i == nullptr) fail(key, "must be an integer");
  if (i->get() < 0) fail(key, fmt::format("{} is negative", i->get()));
  return static_cast<std::uint64_t>(i->get());
}

void PlanReader::read_fields(const toml::table& table, const std::string& prefix,
                             std::span<const Field> fields) const {
  std::vector<std::string_view> names;
  for (const Field& field : fields) names.push_back(field.name);
  for (auto&& [key, value] : table) {
    const std::string name = prefix + std::string(key.str());
    const auto field = std::find_if(fields.begin(), fields.end(),
                                    [&](const Field& f) { return f.name == key.str(); });
    if (field == fields.end()) fail(name, "unknown key (known: " + joined(names) + ")");
    field->read(value, name);
  }
}

TurnPolicy PlanReader::policy(const toml::node& value, const std::string& key) const {
  const std::string name = text(value, key);
  if (const auto parsed = parse_turn_policy(name)) return *parsed;
  fail(key, fmt::format("'{}' is not a policy (concurrent, serialize, partition)", name));
}

Quantum PlanReader::quantum(const toml::node& value, const std::string& key) const {
  const std::string name = text(value, key);
  if (const auto parsed = parse_quantum(name)) return *parsed;
  fail(key, fmt::format("'{}' is not a quantum (burst, layer, op)", name));
}

// "auto", "weights", or a share in [0.01, 1], as the server's flag and config take it.
PrefillShare PlanReader::prefill_share(const toml::node& value, const std::string& key) const {
  const std::string given =
      value.is_string() ? text(value, key) : fmt::format("{}", number(value, key));
  if (const auto parsed = parse_prefill_share(given)) return *parsed;
  fail(key, fmt::format("'{}' is not a prefill share (a number in [0.01, 1], \"auto\" or "
                        "\"weights\")",
                        given));
}

ExperimentArm PlanReader::read_arm(const toml::node& value, const std::string& at,
                                   const TurnOptions& base) const {
  const auto* table = value.as_table();
  if (table == nullptr) fail(at, "must be a table ([[arm]])");
  ExperimentArm arm{.name = "", .turn = base};
  TurnOptions& t = arm.turn;
  using N = const toml::node&;
  using K = const std::string&;
  const Field fields[] = {
      {.name = "name", .read = [&](N v, K k) { arm.name = text(v, k); }},
      {.name = "policy", .read = [&](N v, K k) { t.policy = policy(v, k); }},
      {.name = "quantum", .read = [&](N v, K k) { t.quantum = quantum(v, k); }},
      {.name = "max_hold_ms", .read = [&](N v, K k) { t.max_hold_ms = number(v, k); }},
      {.name = "decode_first", .read = [&](N v, K k) { t.decode_first = boolean(v, k); }},
      {.name = "prefill_share", .read = [&](N v, K k) { apply(t, prefill_share(v, k)); }},
  };
  read_fields(*table, at + ".", fields);
  if (arm.name.empty()) fail(at + ".name", "missing or empty (each arm needs a name)");
  if (!table->contains("policy")) fail(at + ".policy", "missing (each arm needs a policy)");
  if (!(t.max_hold_ms >= kMinMaxHoldMs && t.max_hold_ms <= kMaxMaxHoldMs)) {
    fail(at + ".max_hold_ms",
         fmt::format("{} is not in [{}, {}]", t.max_hold_ms, kMinMaxHoldMs, kMaxMaxHoldMs));
  }
  return arm;
}

std::vector<ExperimentArm> PlanReader::read_arms(const toml::node& value,
                                                 const TurnOptions& base) const {
  const auto* array = value.as_array();
  if (array == nullptr) fail("arm", "must be an array of tables ([[arm]])");
  if (array->size() != 2) {
    fail("arm", fmt::format("{} arms; an experiment compares exactly two", array->size()));
  }
  std::vector<ExperimentArm> arms;
  for (std::size_t i = 0; i < array->size(); ++i) {
    arms.push_back(read_arm(*array->get(i), fmt::format("arm[{}]", i), base));
  }
  return arms;
}

void PlanReader::check_arms(const ExperimentPlan& plan) const {
  if (plan.arms.size() != 2) {
    fail("arm", fmt::format("{} arms; an experiment compares exactly two ([[arm]] tables)",
                            plan.arms.size()));
  }
  if (plan.arms[0].name == plan.arms[1].name) {
    fail("arm[1].name",
         fmt::format("'{}' names arm[0] too (names must differ)", plan.arms[1].name));
  }
}

}  // namespace

namespace {

// The design's ranges, as messages naming the key; shared by the file's reader and validate().
std::optional<std::string> range_error(std::string_view key, double x) {
  if (!std::isfinite(x)) return fmt::format("{} is not a finite number", x);
  if (key == "block_seconds" && !(x >= kMinBlockS && x <= kMaxBlockS)) {
    return fmt::format("{} is not in [{}, {}] seconds", x, kMinBlockS, kMaxBlockS);
  }
  if (key == "block_minutes" && !(x * 60.0 >= kMinBlockS && x * 60.0 <= kMaxBlockS)) {
    return fmt::format("{} is not in (0, {}] minutes (at least {} s)", x, kMaxBlockS / 60.0,
                       kMinBlockS);
  }
  if (key == "planned_hours" && x < 0.0) return fmt::format("{} is negative", x);
  if (key == "reduction" && !(x > 1.0)) return fmt::format("{} is not above 1", x);
  if (key == "alpha" && !(x > 0.0 && x < 0.5)) return fmt::format("{} is not in (0, 0.5)", x);
  if (key == "cluster_window" && x < 0.0) return fmt::format("{} s is negative", x);
  return std::nullopt;
}

ExperimentPlan PlanReader::read(const toml::table& root, const TurnOptions& base) const {
  ExperimentPlan plan;
  std::optional<std::string> block_key;
  std::optional<std::string> end_on;
  using N = const toml::node&;
  using K = const std::string&;
  // A number checked against its range where it is read, so the message names its key.
  const auto checked = [&](N v, K k, double scale = 1.0) {
    const double x = number(v, k);
    if (const auto error = range_error(k, x)) fail(k, *error);
    return x * scale;
  };
  const auto block = [&](N v, K k, double scale) {
    if (block_key) fail(k, fmt::format("give one of {} and {}, not both", *block_key, k));
    block_key = k;
    plan.block_s = checked(v, k, scale);
  };
  const Field fields[] = {
      {.name = "name", .read = [&](N v, K k) { plan.name = text(v, k); }},
      {.name = "block_minutes", .read = [&](N v, K k) { block(v, k, 60.0); }},
      {.name = "block_seconds", .read = [&](N v, K k) { block(v, k, 1.0); }},
      {.name = "planned_hours", .read = [&](N v, K k) { plan.planned_hours = checked(v, k); }},
      {.name = "reduction", .read = [&](N v, K k) { plan.reduction = checked(v, k); }},
      {.name = "alpha", .read = [&](N v, K k) { plan.alpha = checked(v, k); }},
      {.name = "cluster_window", .read = [&](N v, K k) { plan.cluster_window_s = duration(v, k); }},
      {.name = "seed", .read = [&](N v, K k) { plan.seed = seed(v, k); }},
      {.name = "end_on", .read = [&](N v, K k) { end_on = text(v, k); }},
      {.name = "arm", .read = [&](N v, K) { plan.arms = read_arms(v, base); }},
  };
  read_fields(root, "", fields);
  if (plan.name.empty() && root.contains("name")) fail("name", "must not be empty");
  check_arms(plan);
  if (end_on) {
    const auto named = std::find_if(plan.arms.begin(), plan.arms.end(),
                                    [&](const ExperimentArm& a) { return a.name == *end_on; });
    if (named == plan.arms.end()) {
      fail("end_on", fmt::format("'{}' is not an arm ({}, {})", *end_on, plan.arms[0].name,
                                 plan.arms[1].name));
    }
    plan.end_arm = static_cast<std::size_t>(named - plan.arms.begin());
  }
  return plan;
}

}  // namespace

ExperimentPlan parse_experiment_plan(std::string_view toml_text, std::string_view file,
                                     const TurnOptions& base) {
  toml::table root;
  try {
    root = toml::parse(toml_text, file);
  } catch (const toml::parse_error& e) {
    throw std::invalid_argument(fmt::format("{}:{}:{}: {}", file, e.source().begin.line,
                                            e.source().begin.column, e.description()));
  }
  ExperimentPlan plan = PlanReader(file).read(root, base);
  if (plan.name.empty()) plan.name = std::filesystem::path(file).stem().string();
  if (plan.name.empty()) plan.name = "experiment";
  return plan;
}

ExperimentPlan read_experiment_plan(const std::filesystem::path& file, const TurnOptions& base) {
  std::string text;
  try {
    text = read_file(file);
  } catch (const FileReadError& e) {
    throw std::invalid_argument(e.what());
  }
  return parse_experiment_plan(text, file.string(), base);
}

void validate(const ExperimentPlan& plan) {
  const auto check = [](std::string_view key, double x) {
    if (const auto error = range_error(key, x)) {
      throw std::invalid_argument(fmt::format("ExperimentPlan: {}: {}", key, *error));
    }
  };
  check("block_seconds", plan.block_s);
  check("planned_hours", plan.planned_hours);
  check("reduction", plan.reduction);
  check("alpha", plan.alpha);
  check("cluster_window", plan.cluster_window_s);
  if (plan.arms.size() != 2) {
    throw std::invalid_argument(fmt::format(
        "ExperimentPlan: {} arms; an experiment compares exactly two", plan.arms.size()));
  }
  if (plan.arms[0].name.empty() || plan.arms[1].name.empty() ||
      plan.arms[0].name == plan.arms[1].name) {
    throw std::invalid_argument("ExperimentPlan: the arms need two different, non-empty names");
  }
  if (plan.end_arm >= plan.arms.size()) {
    throw std::invalid_argument("ExperimentPlan: end_arm is not an arm (0 or 1)");
  }
}

nlohmann::json to_json(const ExperimentPlan& plan) {
  nlohmann::json arms = nlohmann::json::array();
  for (const ExperimentArm& arm : plan.arms) {
    nlohmann::json turn = {{"policy", to_string(arm.turn.policy)},
                           {"quantum", to_string(arm.turn.quantum)},
                           {"decode_first", arm.turn.decode_first},
                           {"max_hold_ms", arm.turn.max_hold_ms},
                           {"prefill_share_auto", arm.turn.prefill_share_auto},
                           {"prefill_share", nullptr}};
    if (arm.turn.prefill_share) turn["prefill_share"] = *arm.turn.prefill_share;
    arms.push_back({{"name", arm.name}, {"describe", describe(arm.turn)}, {"turn", turn}});
  }
  return {{"name", plan.name},
          {"arms", arms},
          {"block_s", plan.block_s},
          {"planned_hours", plan.planned_hours},
          {"reduction", plan.reduction},
          {"alpha", plan.alpha},
          {"cluster_window_s", plan.cluster_window_s},
          {"seed", plan.seed},
          {"end_arm", plan.end_arm < plan.arms.size() ? plan.arms[plan.end_arm].name : ""}};
}

}  // namespace baton
