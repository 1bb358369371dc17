// The serve config file: reading every key, the defaults, relative paths, and an error
// that names the key (and its line) for each way a file can be wrong.
#include "baton/server/config/serve_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <functional>

#include "baton/errors/error_kind.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test for config files and model directories, removed at the end.
class ServeConfigTest : public ::testing::Test {
 protected:
  ServeConfigTest()
      : root_(fs::temp_directory_path() / ("baton-serve-config-" + std::to_string(::getpid()) +
                                           "-" + std::to_string(counter_++))) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~ServeConfigTest() override { fs::remove_all(root_); }

  // A model directory that validate() accepts: it holds a config.json.
  fs::path model_dir(const fs::path& relative) const {
    const fs::path dir = root_ / relative;
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << "{}";
    return dir;
  }
  fs::path write(const fs::path& relative, const std::string& text) const {
    const fs::path file = root_ / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file;
  }
  // A file with one valid chat model ("chat" in models/chat) after `top` and whose model
  // table ends with `model_keys`.
  fs::path one_model(const std::string& top, const std::string& model_keys = "") const {
    model_dir("models/chat");
    return write("baton.toml",
                 top + "\n[models.chat]\npath = \"models/chat\"\n" + model_keys + "\n");
  }
  // The message of the ConfigError that `f` throws (a test failure if it throws none).
  static std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const ConfigError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no ConfigError";
    return "";
  }
  std::string read_error(const std::string& top, const std::string& model_keys = "") const {
    const fs::path file = one_model(top, model_keys);
    return error_of([&] { read_serve_config(file); });
  }
  std::string validate_error(const std::string& top, const std::string& model_keys = "") const {
    const ServeConfig config = read_serve_config(one_model(top, model_keys));
    return error_of([&] { validate(config); });
  }

  fs::path root_;

 private:
  static inline std::atomic<int> counter_{0};
};

TEST_F(ServeConfigTest, FullFileRoundTrip) {
  const fs::path chat = model_dir("qwen");
  const fs::path embed = model_dir("e5");
  const fs::path file = write("baton.toml", R"(
host = "0.0.0.0"
port = 9000
backend = "cuda"
policy = "serialize"
quantum = "layer"
decode_first = false
max_hold_ms = 0.75
prefill_share = 0.25
ledger = "/var/lib/baton/ledger.db"
api_key = "sekrit"
shutdown_timeout = 12.5
max_body_bytes = 1048576
http_threads = 4
cpu_threads = 3
watchdog_deadline = 90
gpu_sampling = false

[models.chat]
kind = "chat"
path = "qwen"
context_length = 4096
kv_budget_mb = 512
max_batch = 8
prefill_chunk = 128
turn_weight = 2.5
queue_limit = 64
chat_template = "chatml"
max_tokens = 512
[models.chat.sampling]
temperature = 0.7
top_p = 0.9
top_k = 40
min_p = 0.05
repetition_penalty = 1.1
presence_penalty = 0.0
frequency_penalty = 0
seed = 7

[models.embed]
kind = "embedding"
path = "e5"
context_length = 512
kv_budget_mb = 32
queue_limit = 10
)");
  const ServeConfig c = read_serve_config(file);
  EXPECT_EQ(c.host, "0.0.0.0");
  EXPECT_EQ(c.port, 9000);
  EXPECT_EQ(c.backend, "cuda");
  EXPECT_EQ(c.turn.policy, TurnPolicy::serialize);
  EXPECT_EQ(c.turn.quantum, Quantum::layer);
  EXPECT_FALSE(c.turn.decode_first);
  EXPECT_EQ(c.turn.max_hold_ms, 0.75);
  EXPECT_EQ(c.turn.prefill_share, 0.25);
  EXPECT_EQ(c.ledger, "/var/lib/baton/ledger.db");
  EXPECT_FALSE(c.no_ledger);
  EXPECT_FALSE(c.gpu_sampling);
  EXPECT_EQ(c.api_key, "sekrit");
  EXPECT_EQ(c.shutdown_timeout_s, 12.5);
  EXPECT_EQ(c.max_body_bytes, 1048576u);
  EXPECT_EQ(c.http_threads, 4);
  EXPECT_EQ(c.cpu_threads, 3);
  EXPECT_EQ(c.watchdog_deadline_s, 90.0);
  ASSERT_EQ(c.models.size(), 2u);

  const ModelSpec& m = c.models[0];
  EXPECT_EQ(m.name, "chat");
  EXPECT_EQ(m.kind, ModelSpec::Kind::chat);
  EXPECT_EQ(m.dir, chat);
  EXPECT_EQ(m.context_length, 4096);
  EXPECT_EQ(m.kv_budget_mb, 512u);
  EXPECT_EQ(m.max_batch, 8);
  EXPECT_EQ(m.prefill_chunk, 128);
  EXPECT_EQ(m.turn_weight, 2.5);
  EXPECT_EQ(m.queue_limit, 64);
  EXPECT_EQ(m.chat_template, "chatml");
  EXPECT_EQ(m.max_tokens, 512);
  EXPECT_EQ(m.sampling.temperature, 0.7);
  EXPECT_EQ(m.sampling.top_p, 0.9);
  EXPECT_EQ(m.sampling.top_k, 40);
  EXPECT_EQ(m.sampling.min_p, 0.05);
  EXPECT_EQ(m.sampling.repetition_penalty, 1.1);
  EXPECT_EQ(m.sampling.seed, 7u);

  const ModelSpec& e = c.models[1];
  EXPECT_EQ(e.name, "embed");
  EXPECT_EQ(e.kind, ModelSpec::Kind::embedding);
  EXPECT_EQ(e.dir, embed);
  EXPECT_EQ(e.context_length, 512);
  EXPECT_EQ(e.kv_budget_mb, 32u);
  EXPECT_EQ(e.queue_limit, 10);
  EXPECT_NO_THROW(validate(c));
}

TEST_F(ServeConfigTest, Defaults) {
  model_dir("m");
  model_dir("e");
  const ServeConfig c = read_serve_config(write("baton.toml", R"(
[models.m]
path = "m"
[models.e]
kind = "embedding"
path = "e"
)"));
  const ServeConfig d;
  EXPECT_EQ(c.host, "127.0.0.1");
  EXPECT_EQ(c.port, 8080);
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_EQ(c.turn.policy, d.turn.policy);
  EXPECT_EQ(c.turn.quantum, Quantum::op);  // serialize's pieces of at most max_hold_ms
  EXPECT_TRUE(c.turn.decode_first);
  EXPECT_EQ(c.turn.max_hold_ms, kDefaultMaxHoldMs);
  EXPECT_EQ(c.turn.prefill_share, std::nullopt);  // partition splits by the turn weights
  EXPECT_TRUE(c.ledger.empty());  // resolve() fills in default_ledger_path()
  EXPECT_FALSE(c.no_ledger);
  EXPECT_TRUE(c.gpu_sampling);
  EXPECT_TRUE(c.api_key.empty());
  EXPECT_EQ(c.shutdown_timeout_s, 30.0);
  EXPECT_EQ(c.max_body_bytes, std::size_t{8} << 20);
  EXPECT_EQ(c.http_threads, 2);
  EXPECT_EQ(c.cpu_threads, 0);
  EXPECT_EQ(c.watchdog_deadline_s, 60.0);
  EXPECT_FALSE(c.faults.any());
  EXPECT_TRUE(c.fault_engine.empty());
  ASSERT_EQ(c.models.size(), 2u);

  const ModelSpec& m = c.models[0];
  EXPECT_EQ(m.kind, ModelSpec::Kind::chat);
  EXPECT_EQ(m.context_length, 0);
  EXPECT_EQ(m.kv_budget_mb, 256u);
  EXPECT_FALSE(m.max_batch.has_value());  // the backend's (batch_defaults)
  EXPECT_FALSE(m.prefill_chunk.has_value());
  EXPECT_EQ(m.queue_limit, 256);
  EXPECT_TRUE(m.chat_template.empty());
  EXPECT_FALSE(m.max_tokens);
  EXPECT_FALSE(m.sampling.temperature || m.sampling.top_p || m.sampling.min_p ||
               m.sampling.repetition_penalty || m.sampling.top_k || m.sampling.seed);
  EXPECT_EQ(c.models[1].kind, ModelSpec::Kind::embedding);
  EXPECT_EQ(c.models[1].kv_budget_mb, kEmbeddingKvBudgetMb);
  EXPECT_NO_THROW(validate(c));
}

TEST_F(ServeConfigTest, RelativePathsAreRelativeToTheFilesFolder) {
  const fs::path model = model_dir("models/qwen");
  const fs::path absolute = model_dir("elsewhere/abs");
  const fs::path file = write("etc/baton/baton.toml",
                              "ledger = \"state/ledger.db\"\n"
                              "[models.a]\npath = \"../../models/qwen\"\n"
                              "[models.b]\npath = \"" +
                                  absolute.string() + "\"\n");
  const ServeConfig c = read_serve_config(file);
  EXPECT_EQ(c.ledger, root_ / "etc/baton/state/ledger.db");
  ASSERT_EQ(c.models.size(), 2u);
  EXPECT_EQ(c.models[0].dir, model);
  EXPECT_EQ(c.models[1].dir, absolute);
  EXPECT_NO_THROW(validate(c));
}

TEST_F(ServeConfigTest, ModelsKeepTheFilesOrder) {
  for (const char* name : {"zeta", "alpha", "mid"}) model_dir(name);
  const ServeConfig c = read_serve_config(write("baton.toml", R"(
[models.zeta]
path = "zeta"
[models.alpha]
path = "alpha"
[models.mid]
path = "mid"
)"));
  ASSERT_EQ(c.models.size(), 3u);
  EXPECT_EQ(c.models[0].name, "zeta");
  EXPECT_EQ(c.models[1].name, "alpha");
  EXPECT_EQ(c.models[2].name, "mid");
}

TEST_F(ServeConfigTest, IntegersAreFineWhereFloatsAreExpected) {
  const ServeConfig c =
      read_serve_config(one_model("shutdown_timeout = 30\nprefill_share = 1\nwatchdog_deadline = 5",
                                  "[models.chat.sampling]\ntemperature = 1\ntop_p = 1"));
  EXPECT_EQ(c.shutdown_timeout_s, 30.0);
  EXPECT_EQ(c.turn.prefill_share, 1.0);
  EXPECT_EQ(c.watchdog_deadline_s, 5.0);
  EXPECT_EQ(c.models[0].sampling.temperature, 1.0);
  EXPECT_EQ(c.models[0].sampling.top_p, 1.0);
}

TEST_F(ServeConfigTest, SyntaxErrorShowsTheFileAndLine) {
  const fs::path file = write("baton.toml", "host = \"a\"\nport = 80\nhttp_threads = = 2\n");
  const std::string error = error_of([&] { read_serve_config(file); });
  EXPECT_NE(error.find(file.string() + ":3:"), std::string::npos) << error;
  EXPECT_NE(error.find("syntax"), std::string::npos) << error;
}

TEST_F(ServeConfigTest, ADuplicateTableIsASyntaxError) {
  const std::string error = read_error("", "[models.chat]\npath = \"x\"");
  EXPECT_NE(error.find("syntax"), std::string::npos) << error;
  EXPECT_NE(error.find("baton.toml:4:1:"), std::string::npos) << error;
}

TEST_F(ServeConfigTest, MissingFileIsAConfigError) {
  const std::string error = error_of([&] { read_serve_config(root_ / "nope.toml"); });
  EXPECT_NE(error.find("nope.toml"), std::string::npos) << error;
  EXPECT_NE(error.find("cannot read"), std::string::npos) << error;
}

TEST_F(ServeConfigTest, UnknownTopLevelKeySuggestsTheClosest) {
  const std::string error = read_error("host = \"h\"\npolcy = \"serialize\"");
  EXPECT_NE(error.find("baton.toml:2:1: unknown key \"polcy\" (did you mean \"policy\"?)"),
            std::string::npos)
      << error;
}

TEST_F(ServeConfigTest, UnknownModelKeySuggestsTheClosest) {
  const std::string error = read_error("", "max_bach = 4");
  EXPECT_NE(error.find(":4:1: unknown key \"models.chat.max_bach\" (did you mean \"max_batch\"?)"),
            std::string::npos)
      << error;
}

TEST_F(ServeConfigTest, UnknownSamplingKeySuggestsTheClosest) {
  const std::string error = read_error("", "[models.chat.sampling]\ntemprature = 0.5");
  EXPECT_NE(error.find("unknown key \"models.chat.sampling.temprature\" (did you mean "
                       "\"temperature\"?)"),
            std::string::npos)
      << error;
}

TEST_F(ServeConfigTest, UnknownKeyFarFromAnyListsTheKnownOnes) {
  const std::string error = read_error("completely_unrelated = 1");
  EXPECT_NE(error.find("unknown key \"completely_unrelated\"; known keys: host, port"),
            std::string::npos)
      << error;
}

TEST_F(ServeConfigTest, PrefillShareIsANumberAutoOrWeights) {
  EXPECT_TRUE(read_serve_config(one_model("prefill_share = \"auto\"")).turn.prefill_share_auto);
  EXPECT_FALSE(read_serve_config(one_model("prefill_share = 0.3")).turn.prefill_share_auto);
  EXPECT_EQ(read_serve_config(one_model("prefill_share = 0.3")).turn.prefill_share, 0.3);
  const ServeConfig weights = read_serve_config(one_model("prefill_share = \"weights\""));
  EXPECT_FALSE(weights.turn.prefill_share_auto);
  EXPECT_EQ(weights.turn.prefill_share, std::nullopt);
  EXPECT_NE(
      read_error("prefill_share = \"half\"").find("expected a number, \"auto\" or \"weights\""),
      std::string::npos);
  EXPECT_NE(read_error("prefill_share = true").find("must be a number, \"auto\" or \"weights\""),
            std::string::npos);
}

// A config of the days of priorities is told what replaced them, not that the key is unknown.
TEST_F(ServeConfigTest, APriorityIsToldItWasReplacedByTheTurnWeight) {
  const std::string error = read_error("", "priority = 1");
  EXPECT_NE(error.find("models.chat.priority was replaced by turn_weight"), std::string::npos)
      << error;
}

TEST_F(ServeConfigTest, KvBudgetIsANumberOrAutoAndAutoNeedsAGpu) {
  const ModelSpec preset = read_serve_config(one_model("")).models[0];
  EXPECT_EQ(preset.kv_mode, KvBudgetMode::preset);
  const ModelSpec given = read_serve_config(one_model("", "kv_budget_mb = 512")).models[0];
  EXPECT_EQ(given.kv_mode, KvBudgetMode::given);
  EXPECT_EQ(given.kv_budget_mb, 512u);
  const ServeConfig sized =
      read_serve_config(one_model("backend = \"cuda\"\ngpu_memory_fraction = 0.5",
                                  "kv_budget_mb = \"auto\""));
  EXPECT_EQ(sized.models[0].kv_mode, KvBudgetMode::sized);
  EXPECT_DOUBLE_EQ(sized.gpu_memory_fraction, 0.5);
  EXPECT_NO_THROW(validate(sized));
  EXPECT_NE(read_error("", "kv_budget_mb = \"half\"")
                .find("models.chat.kv_budget_mb = \"half\": expected a number of MB or \"auto\""),
            std::string::npos);
  EXPECT_NE(read_error("", "kv_budget_mb = 1.5").find("must be an integer (MB) or \"auto\""),
            std::string::npos);
  EXPECT_NE(validate_error("", "kv_budget_mb = \"auto\"")
                .find("models.chat.kv_budget_mb = \"auto\": sizes the KV cache from a GPU's "
                      "free memory; backend = \"cpu\" needs a number of MB"),
            std::string::npos);
  EXPECT_NE(validate_error("backend = \"cuda\"", "kind = \"embedding\"\nkv_budget_mb = \"auto\"")
                .find("only a chat model's KV cache is sized from free memory"),
            std::string::npos);
  EXPECT_NE(validate_error("gpu_memory_fraction = 0").find("gpu_memory_fraction = 0: must be in "
                                                           "[0.05, 1]"),
            std::string::npos);
}

TEST_F(ServeConfigTest, WrongTypeNamesTheKeyAndTheExpectedType) {
  EXPECT_NE(read_error("", "max_batch = 16.5")
                .find(":4:13: models.chat.max_batch must be an integer, not a floating-point "
                      "number"),
            std::string::npos);
  EXPECT_NE(read_error("port = \"8080\"").find("port must be an integer, not a string"),
            std::string::npos);
  EXPECT_NE(read_error("decode_first = 1").find("decode_first must be a boolean"),
            std::string::npos);
  EXPECT_NE(read_error("shutdown_timeout = \"30s\"")
                .find("shutdown_timeout must be a number, not a string"),
            std::string::npos);
  EXPECT_NE(read_error("", "sampling = 1").find("models.chat.sampling must be a table"),
            std::string::npos);
  // A file of its own: one_model() sets path and models already.
  const auto error_in = [&](const std::string& text) {
    const fs::path file = write("typed.toml", text);
    return error_of([&] { read_serve_config(file); });
  };
  EXPECT_NE(error_in("[models.chat]\npath = 3\n")
                .find("models.chat.path must be a string, not an integer"),
            std::string::npos);
  EXPECT_NE(error_in("models = 3\n").find("models must be a table, not an integer"),
            std::string::npos);
  EXPECT_NE(error_in("models.chat = \"dir\"\n").find("models.chat must be a table, not a string"),
            std::string::npos);
}

TEST_F(ServeConfigTest, IntegersThatDoNotFitAreErrors) {
  EXPECT_NE(read_error("port = 99999999999").find("port = 99999999999: out of range"),
            std::string::npos);
  EXPECT_NE(read_error("", "kv_budget_mb = -1")
                .find("models.chat.kv_budget_mb = -1: must not be negative"),
            std::string::npos);
  EXPECT_NE(read_error("", "[models.chat.sampling]\nseed = -3")
                .find("models.chat.sampling.seed = -3: must not be negative"),
            std::string::npos);
}

TEST_F(ServeConfigTest, AModelNeedsAPath) {
  write("baton.toml", "[models.chat]\nmax_batch = 4\n");
  const std::string error = error_of([&] { read_serve_config(root_ / "baton.toml"); });
  EXPECT_NE(error.find("models.chat has no path"), std::string::npos) << error;
}

TEST_F(ServeConfigTest, MissingDirectoryNamesTheModelAndThePath) {
  const fs::path file = write("baton.toml", "[models.qwen]\npath = \"gone\"\n");
  const ServeConfig c = read_serve_config(file);
  const std::string error = error_of([&] { validate(c); });
  EXPECT_NE(error.find("models.qwen.path"), std::string::npos) << error;
  EXPECT_NE(error.find((root_ / "gone").string() + " is not a directory"), std::string::npos)
      << error;
}

TEST_F(ServeConfigTest, ADirectoryWithoutConfigJsonIsNoModel) {
  fs::create_directories(root_ / "empty");
  const ServeConfig c = read_serve_config(write("baton.toml", "[models.m]\npath = \"empty\"\n"));
  const std::string error = error_of([&] { validate(c); });
  EXPECT_NE(error.find("models.m.path"), std::string::npos) << error;
  EXPECT_NE(error.find("no config.json"), std::string::npos) << error;
}

TEST_F(ServeConfigTest, DuplicateAndInvalidNames) {
  ServeConfig c = read_serve_config(one_model(""));
  c.models.push_back(c.models[0]);
  EXPECT_NE(error_of([&] { validate(c); }).find("two models are named \"chat\""),
            std::string::npos);

  c.models.pop_back();
  for (const char* bad : {"", "has space", "a/b", "é"}) {
    c.models[0].name = bad;
    EXPECT_NE(error_of([&] { validate(c); }).find("model name \"" + std::string(bad) + "\""),
              std::string::npos)
        << bad;
  }
  c.models[0].name = "Qwen2.5-0.5B_instruct:q8";
  EXPECT_NO_THROW(validate(c));

  model_dir("m");
  const ServeConfig spaced =
      read_serve_config(write("spaced.toml", "[models.\"bad name\"]\npath = \"m\"\n"));
  EXPECT_NE(error_of([&] { validate(spaced); }).find("model name \"bad name\""), std::string::npos);
}

TEST_F(ServeConfigTest, OutOfRangeNumbersNameTheKey) {
  const std::pair<std::string, std::string> top[] = {
      {"port = 65536", "port = 65536: must be in 0..65535"},
      {"port = -1", "port = -1: must be in 0..65535"},
      {"http_threads = 0", "http_threads = 0: must be in 1..64"},
      {"http_threads = 65", "http_threads = 65: must be in 1..64"},
      {"shutdown_timeout = -1", "shutdown_timeout = -1: must be >= 0"},
      {"shutdown_timeout = nan", "shutdown_timeout = nan"},
      {"max_body_bytes = 0", "max_body_bytes = 0: must be >= 1"},
      {"cpu_threads = -2", "cpu_threads = -2"},
      {"prefill_share = 0", "prefill_share = 0: must be in [0.01, 1]"},
      {"max_hold_ms = 0", "max_hold_ms = 0: must be in [0.05, 10000]"},
      {"watchdog_deadline = 0", "watchdog_deadline = 0"},
      {"watchdog_deadline = inf", "watchdog_deadline = inf"},
      {"host = \"999.1.1.1\"", "host = \"999.1.1.1\": must be an IPv4 or IPv6 address"},
      {"host = \"\"", "host = \"\": must be an IPv4 or IPv6 address"},
  };
  for (const auto& [line, expected] : top) {
    EXPECT_NE(validate_error(line).find(expected), std::string::npos) << line;
  }
  const std::pair<std::string, std::string> model[] = {
      {"max_batch = 0", "models.chat.max_batch = 0: must be >= 1"},
      {"prefill_chunk = 0", "models.chat.prefill_chunk = 0: must be >= 1"},
      {"turn_weight = 101", "models.chat.turn_weight: a turn weight must be a number in 0.01..100"},
      {"turn_weight = 0", "models.chat.turn_weight: a turn weight must be a number in 0.01..100"},
      {"queue_limit = -1", "models.chat.queue_limit = -1: must be >= 0"},
      {"kv_budget_mb = 0", "models.chat.kv_budget_mb = 0: must be in 1..1048576"},
      {"context_length = -1", "models.chat.context_length = -1: must be >= 0"},
      {"max_tokens = 0", "models.chat.max_tokens = 0: must be >= 1"},
      {"[models.chat.sampling]\ntemperature = -0.5",
       "sampling.temperature = -0.5: must be in [0, 2] (as in a request)"},
      // A request's temperature is at most 2; the file's default is no different.
      {"[models.chat.sampling]\ntemperature = 5", "sampling.temperature = 5: must be in [0, 2]"},
      {"[models.chat.sampling]\ntop_p = 0", "models.chat.sampling.top_p = 0: must be in (0, 1]"},
      {"[models.chat.sampling]\ntop_p = 1.5", "sampling.top_p = 1.5"},
      {"[models.chat.sampling]\nmin_p = 2", "sampling.min_p = 2: must be in [0, 1]"},
      {"[models.chat.sampling]\ntop_k = -1", "sampling.top_k = -1: must be >= 0"},
      {"[models.chat.sampling]\nrepetition_penalty = 0",
       "repetition_penalty = 0: must be in [0.01, 100]"},
      {"[models.chat.sampling]\nrepetition_penalty = 150", "repetition_penalty = 150"},
  };
  for (const auto& [line, expected] : model) {
    EXPECT_NE(validate_error("", line).find(expected), std::string::npos) << line;
  }
}

TEST_F(ServeConfigTest, PresenceAndFrequencyPenaltiesWithinTwo) {
  EXPECT_NE(validate_error("", "[models.chat.sampling]\npresence_penalty = 3")
                .find("models.chat.sampling.presence_penalty = 3: must be in [-2, 2]"),
            std::string::npos);
  EXPECT_NE(validate_error("", "[models.chat.sampling]\nfrequency_penalty = -2.5")
                .find("models.chat.sampling.frequency_penalty = -2.5: must be in [-2, 2]"),
            std::string::npos);
  const ServeConfig c = read_serve_config(
      one_model("", "[models.chat.sampling]\npresence_penalty = 0.5\nfrequency_penalty = -1"));
  EXPECT_EQ(c.models.at(0).sampling.presence_penalty, 0.5);
  EXPECT_EQ(c.models.at(0).sampling.frequency_penalty, -1.0);
}

TEST_F(ServeConfigTest, UnknownChatTemplate) {
  const std::string error = validate_error("", "chat_template = \"vicuna\"");
  EXPECT_NE(error.find("models.chat.chat_template: unknown chat template 'vicuna'"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("chatml"), std::string::npos) << error;
  EXPECT_NO_THROW(validate(read_serve_config(one_model("", "chat_template = \"llama3\""))));
}

TEST_F(ServeConfigTest, UnknownPolicyQuantumAndKind) {
  std::string error = read_error("policy = \"serialise\"");
  EXPECT_NE(error.find(":1:10: policy = \"serialise\": expected one of concurrent, serialize, "
                       "partition (did you mean \"serialize\"?)"),
            std::string::npos)
      << error;
  error = read_error("quantum = \"token\"");
  EXPECT_NE(error.find("quantum = \"token\": expected one of burst, layer, op"), std::string::npos)
      << error;
  error = read_error("", "kind = \"embeding\"");
  EXPECT_NE(error.find("models.chat.kind = \"embeding\": expected one of chat, embedding (did you "
                       "mean \"embedding\"?)"),
            std::string::npos)
      << error;
}

TEST_F(ServeConfigTest, UnknownBackend) {
  EXPECT_NE(validate_error("backend = \"rocm\"").find("backend = \"rocm\": must be cpu or cuda"),
            std::string::npos);
}

TEST_F(ServeConfigTest, AnEmbeddingModelTakesNoChatKeys) {
  const std::string error = read_error("", "kind = \"embedding\"\nmax_tokens = 5");
  EXPECT_NE(error.find("models.chat.max_tokens: only a chat model takes max_tokens"),
            std::string::npos)
      << error;
}

TEST_F(ServeConfigTest, LedgerAndNoLedgerExclude) {
  EXPECT_NE(validate_error("ledger = \"l.db\"\nno_ledger = true").find("no_ledger"),
            std::string::npos);
  EXPECT_NO_THROW(validate(read_serve_config(one_model("no_ledger = true"))));
}

TEST_F(ServeConfigTest, NoModelsAndAFaultEngineThatNamesNone) {
  ServeConfig c;
  EXPECT_NE(error_of([&] { validate(c); }).find("no models"), std::string::npos);
  c = read_serve_config(one_model(""));
  c.fault_engine = "chta";
  EXPECT_NE(error_of([&] { validate(c); }).find("fault engine \"chta\""), std::string::npos);
  c.fault_engine = "chat";
  EXPECT_NO_THROW(validate(c));
}

TEST_F(ServeConfigTest, TheExampleFileParses) {
  // docs/baton.example.toml names model directories that do not exist here: read only.
  const fs::path example = fs::path(BATON_TEST_DATA) / "../../docs/baton.example.toml";
  const ServeConfig c = read_serve_config(example);
  EXPECT_EQ(c.turn.policy, TurnPolicy::serialize);
  EXPECT_FALSE(c.models.empty());
}

TEST(ServeConfig, ConfigErrorIsAUsageError) {
  EXPECT_EQ(classify(ConfigError("port = 1e9")), ErrorKind::usage);
}

TEST(ServeConfig, ClosestKey) {
  const std::string_view known[] = {"policy", "port", "quantum", "max_batch", "prefill_chunk"};
  EXPECT_EQ(closest_key("polcy", known), "policy");
  EXPECT_EQ(closest_key("max_bach", known), "max_batch");
  EXPECT_EQ(closest_key("qunatum", known), "quantum");
  EXPECT_EQ(closest_key("port", known), "port");
  EXPECT_EQ(closest_key("prt", known), "port");
  EXPECT_EQ(closest_key("prefil_chnk", known), "prefill_chunk");
  EXPECT_EQ(closest_key("zzzzzz", known), std::nullopt);
  EXPECT_EQ(closest_key("xyz", std::span<const std::string_view>{}), std::nullopt);
  // A long key allows size/3 edits: 13 letters, 4 edits.
  EXPECT_EQ(closest_key("prxxxxl_chunk", known), "prefill_chunk");
  EXPECT_EQ(closest_key("pxxxxxl_chunk", known), std::nullopt);
}

// The server's address errors name what set the address: the file's keys, or the flags.
TEST_F(ServeConfigTest, TheAddressIsNamedByTheKeysThatSetIt) {
  EXPECT_EQ(read_serve_config(one_model("")).address_setting, "--host, --port");
  EXPECT_EQ(read_serve_config(one_model("port = 9000")).address_setting,
            "host, port in the config file");
  EXPECT_EQ(read_serve_config(one_model("host = \"::1\"")).address_setting,
            "host, port in the config file");
}

}  // namespace
}  // namespace baton
