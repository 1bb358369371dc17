#include "baton/engine/output/output_grammars.h"

#include <stdexcept>

#include "baton/grammar/json_schema.h"
#include "baton/grammar/tool_call_grammar.h"

namespace baton {
namespace {

using nlohmann::ordered_json;
namespace g = baton::grammar;

// At most one byte of whitespace between JSON tokens: json.dumps' ", " and ": " pass, and a
// model cannot drift into runs of newlines (small models do: vLLM added
// disable-any-whitespace for it); pretty-printed JSON does not.
constexpr g::JsonLayout kLayout{.max_whitespace = 1};

struct Callable {
  std::vector<g::ToolSchema> tools;
  std::vector<std::size_t> index;  // each one's place in the request's tools
};

// The tools a call may name: all of them, or the named one.
Callable callable(const ToolUse& tools) {
  Callable out;
  for (std::size_t i = 0; i < tools.tools.size(); ++i) {
    const ordered_json& function = tools.tools[i].at("function");
    const std::string name = function.at("name").get<std::string>();
    if (tools.choice == ToolUse::Choice::named && name != tools.function) continue;
    const auto parameters = function.find("parameters");
    out.tools.push_back(
        {.name = name, .parameters = parameters == function.end() ? ordered_json() : *parameters});
    out.index.push_back(i);
  }
  if (out.tools.empty()) {
    throw std::invalid_argument("tool_choice names '" + tools.function +
                                "', which is not one of the tools");
  }
  return out;
}

// One call's body: {"name": N, "arguments": {...}}, or N <name_end> {...}.
g::Expr call_body(g::Grammar& grammar, const ToolCallSyntax& syntax,
                  const std::vector<g::ToolSchema>& tools) {
  if (syntax.body == ToolCallBody::json_object) {
    return g::tool_call_object(grammar, tools,
                               {.name_key = syntax.name_key, .arguments_key = syntax.arguments_key},
                               kLayout);
  }
  std::vector<g::Expr> calls;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const ordered_json none = {{"type", "object"}, {"properties", ordered_json::object()}};
    g::Expr arguments;
    try {
      arguments = g::json_schema_value(
          grammar, tools[i].parameters.is_null() ? none : tools[i].parameters, kLayout);
    } catch (const g::SchemaError& e) {
      const std::string what = e.what();
      throw g::SchemaError(e.keyword(), "/" + std::to_string(i) + e.path(),
                           "tool '" + tools[i].name + "': " + what.substr(what.find(": ") + 2));
    }
    calls.push_back(g::sequence(
        {g::literal(tools[i].name), g::literal(syntax.name_end), std::move(arguments)}));
  }
  return g::choice(std::move(calls));
}

// A tool's schema error, named by the tool's place in the request: its path starts "/k/".
OutputSchemaError tool_schema_error(const g::SchemaError& e, const Callable& tools) {
  const std::string& path = e.path();
  std::size_t k = 0;
  std::size_t i = 1;
  for (; i < path.size() && path[i] >= '0' && path[i] <= '9'; ++i) k = k * 10 + (path[i] - '0');
  const std::size_t index = k < tools.index.size() ? tools.index[k] : 0;
  return OutputSchemaError("tools[" + std::to_string(index) + "].function.parameters",
                           "JSON Schema keyword '" + e.keyword() + "' at '" + path.substr(i) +
                               "' of " +
                               std::string(e.what()).substr(std::string(e.what()).find("tool '")));
}

// The calls in the format's canonical syntax: block_begin, call (separator call)*, block_end.
g::Expr tool_calls(g::Grammar& grammar, const ToolCallSyntax& syntax, const ToolUse& tools) {
  const Callable named = callable(tools);
  g::Expr bodies;
  try {
    bodies = call_body(grammar, syntax, named.tools);
  } catch (const g::SchemaError& e) {
    throw tool_schema_error(e, named);
  }
  const g::RuleId body = grammar.add_rule("tool_call", std::move(bodies));
  const g::Expr call =
      g::sequence({g::literal(syntax.call_begin), g::ref(body), g::literal(syntax.call_end)});
  const g::Expr more = g::sequence({g::literal(syntax.separator), call});
  g::Expr block = g::sequence({g::literal(syntax.block_begin), call,
                               g::repeat(more, 0, tools.parallel ? g::kUnbounded : 0),
                               g::literal(syntax.block_end)});
  if (syntax.other_triggers.empty()) return block;
  std::vector<g::Expr> openers;
  for (const std::string& t : syntax.other_triggers) openers.push_back(g::literal(t));
  return g::sequence({g::optional(g::choice(std::move(openers))), std::move(block)});
}

constexpr const char* kSchemaField = "response_format.json_schema.schema";

g::Expr json_answer(g::Grammar& grammar, const ResponseFormat& format) {
  g::JsonGrammar json(grammar, kLayout);
  g::Expr value;
  try {
    value = format.kind == ResponseFormat::Kind::json_object
                ? json.object()
                : g::json_schema_value(grammar, format.schema, kLayout);
  } catch (const g::SchemaError& e) {
    throw OutputSchemaError(kSchemaField, e.what());
  }
  return g::sequence({json.ws(), std::move(value), json.ws()});
}

std::string key_of(const ToolUse& tools, const ResponseFormat& format) {
  ordered_json key = {{"tools", tools.tools},
                      {"choice", static_cast<int>(tools.choice)},
                      {"function", tools.function},
                      {"parallel", tools.parallel},
                      {"format", static_cast<int>(format.kind)},
                      {"schema", format.schema}};
  return key.dump();
}

// One grammar's compile on its model's compile thread: the automata, then a mask cache over
// the model's vocabulary (built by the first compile). The outcome goes to the promise.
class CompileJob final : public Job {
 public:
  CompileJob(g::Grammar grammar, g::Expr root, std::string field, OutputGrammars& grammars,
             std::promise<std::shared_ptr<g::MaskCache>> done)
      : grammar_(std::move(grammar)),
        root_(std::move(root)),
        field_(std::move(field)),
        grammars_(grammars),
        done_(std::move(done)) {}

  void run(std::stop_token) noexcept override {
    try {
      done_.set_value(grammars_.masks_of(compile()));
    } catch (...) {
      done_.set_exception(std::current_exception());
    }
  }
  void cancel() noexcept override {
    done_.set_exception(std::make_exception_ptr(
        std::runtime_error("the model is being unloaded: its grammar was not compiled")));
  }

 private:
  std::shared_ptr<const g::CompiledGrammar> compile() {
    try {
      return g::CompiledGrammar::compile_expr(std::move(grammar_), std::move(root_),
                                              &grammars_.rule_automata());
    } catch (const g::GrammarError& e) {  // a size bound, or left recursion from a $ref cycle
      const bool cycle =
          std::string_view(e.what()).find("left recursion") != std::string_view::npos;
      throw OutputSchemaError(
          field_, cycle ? "JSON Schema keyword '$ref': " + std::string(e.what()) : e.what());
    }
  }

  g::Grammar grammar_;
  g::Expr root_;
  const std::string field_;
  OutputGrammars& grammars_;
  std::promise<std::shared_ptr<g::MaskCache>> done_;
};

}  // namespace

std::shared_ptr<const grammar::TokenVocabulary> output_vocabulary(
    const BpeTokenizer& tokenizer, const std::vector<TokenId>& end_tokens,
    const std::vector<std::string>& markers) {
  std::vector<std::string> bytes(tokenizer.vocab_size());
  for (std::size_t id = 0; id < bytes.size(); ++id) {
    const auto token = static_cast<TokenId>(id);
    std::string text = tokenizer.decode({token}, false, BpeTokenizer::Decoding::continuation);
    if (tokenizer.is_special(token)) {
      bool marker = false;
      for (const std::string& m : markers)
        marker = marker || (!text.empty() && m.find(text) != std::string::npos);
      if (!marker) text.clear();
    }
    bytes[id] = std::move(text);
  }
  std::vector<grammar::TokenIndex> ends;
  for (const TokenId t : end_tokens) {
    if (t >= 0 && static_cast<std::size_t>(t) < bytes.size()) {
      bytes[static_cast<std::size_t>(t)].clear();
      ends.push_back(static_cast<grammar::TokenIndex>(t));
    }
  }
  return std::make_shared<const grammar::TokenVocabulary>(std::move(bytes), std::move(ends));
}

OutputGrammars::OutputGrammars(const BpeTokenizer& tokenizer, std::vector<TokenId> end_tokens,
                               ToolCallFormat format)
    : tokenizer_(tokenizer), end_tokens_(std::move(end_tokens)), format_(format) {}

const std::shared_ptr<const grammar::TokenVocabulary>& OutputGrammars::vocabulary() {
  std::call_once(vocabulary_once_, [this] {
    vocabulary_ =
        output_vocabulary(tokenizer_, end_tokens_, tool_call_markers(tool_call_syntax(format_)));
  });
  return vocabulary_;
}

std::shared_ptr<const OutputGrammar> OutputGrammars::for_request(const ToolUse& tools,
                                                                 const ResponseFormat& format) {
  const bool calls = tools.calls_possible();
  if (!calls && format.kind == ResponseFormat::Kind::text) return nullptr;
  const std::string key = key_of(tools, format);
  {
    std::lock_guard lock(mu_);
    if (const auto found = by_key_.find(key); found != by_key_.end()) {
      recent_.splice(recent_.begin(), recent_, found->second);
      return found->second->second;
    }
  }
  std::shared_ptr<const OutputGrammar> built = build(tools, format);
  std::lock_guard lock(mu_);
  if (by_key_.contains(key)) return built;  // another request built it meanwhile
  recent_.emplace_front(key, built);
  by_key_[key] = recent_.begin();
  if (recent_.size() > kKept) {
    by_key_.erase(recent_.back().first);
    recent_.pop_back();
  }
  return built;
}

std::size_t OutputGrammars::kept() const {
  std::lock_guard lock(mu_);
  return recent_.size();
}

std::shared_ptr<const OutputGrammar> OutputGrammars::build(const ToolUse& tools,
                                                           const ResponseFormat& format) {
  const ToolCallSyntax& syntax = tool_call_syntax(format_);
  const bool calls = tools.calls_possible();
  const bool json = format.kind != ResponseFormat::Kind::text;
  g::Grammar grammar;
  g::Expr root;
  std::vector<std::string> triggers;
  if (calls && tools.choice != ToolUse::Choice::automatic) {
    root = tool_calls(grammar, syntax, tools);
  } else if (calls && !json) {
    root = tool_calls(grammar, syntax, tools);
    triggers = syntax.other_triggers;
    triggers.push_back(syntax.trigger);
  } else if (calls) {
    root = g::choice({json_answer(grammar, format), tool_calls(grammar, syntax, tools)});
  } else {
    root = json_answer(grammar, format);
  }
  // The automata compile on the model's compile thread while the prompt is prefilled.
  std::promise<std::shared_ptr<g::MaskCache>> done;
  auto grammar_ptr = std::make_shared<const OutputGrammar>(
      OutputGrammar{.masks = done.get_future().share(), .triggers = std::move(triggers)});
  compiler_.post(std::make_unique<CompileJob>(
      std::move(grammar), std::move(root), calls ? "tools" : kSchemaField, *this, std::move(done)));
  return grammar_ptr;
}

std::shared_ptr<grammar::MaskCache> OutputGrammars::masks_of(
    std::shared_ptr<const grammar::CompiledGrammar> compiled) {
  return std::make_shared<g::MaskCache>(std::move(compiled), vocabulary(), shared_);
}

}  // namespace baton
