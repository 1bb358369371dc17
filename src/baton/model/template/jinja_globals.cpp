// The global functions of transformers' chat templates (jinja_builtins.h).
#include <chrono>
#include <ctime>

#include "baton/model/template/jinja_builtin_support.h"
#include "baton/model/template/jinja_builtins.h"

namespace baton::jinja {

Dict make_globals() {
  using namespace builtin;
  Dict globals;
  globals.emplace_back(Value::from("range"), Value::from(Function([](const CallArgs& args) {
                         std::int64_t start = 0, stop = 0, step = 1;
                         const auto& p = args.positional;
                         if (p.size() == 1) {
                           stop = as_int(p[0], "range");
                         } else if (p.size() >= 2) {
                           start = as_int(p[0], "range");
                           stop = as_int(p[1], "range");
                           if (p.size() > 2) step = as_int(p[2], "range");
                         }
                         if (step == 0) fail("range() step must not be zero");
                         List out;
                         for (std::int64_t i = start; step > 0 ? i < stop : i > stop;) {
                           if (out.size() >= 100'000) fail("range() of more than 100,000 items");
                           out.push_back(Value::from(i));
                           if (__builtin_add_overflow(i, step, &i)) break;  // past stop
                         }
                         return Value::from(std::move(out));
                       })));
  globals.emplace_back(Value::from("namespace"), Value::from(Function([](const CallArgs& args) {
                         Dict attributes;
                         if (!args.positional.empty() && args.positional[0].is(Kind::dict)) {
                           attributes = *args.positional[0].dict;
                         }
                         for (const auto& [key, v] : args.named) {
                           attributes.emplace_back(Value::from(key), v);
                         }
                         Value ns = Value::from(std::move(attributes));
                         ns.is_namespace = true;
                         return ns;
                       })));
  globals.emplace_back(Value::from("dict"), Value::from(Function([](const CallArgs& args) {
                         Dict items;
                         for (const auto& [key, v] : args.named) {
                           items.emplace_back(Value::from(key), v);
                         }
                         return Value::from(std::move(items));
                       })));
  globals.emplace_back(Value::from("raise_exception"),
                       Value::from(Function([](const CallArgs& args) -> Value {
                         throw TemplateRaised(args.positional.empty() ? "raise_exception"
                                                                      : args.positional[0].str());
                       })));
  globals.emplace_back(
      Value::from("strftime_now"), Value::from(Function([](const CallArgs& args) {
        const std::time_t now =
            std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
        std::tm local{};
        localtime_r(&now, &local);
        char buffer[256];
        const std::string format = args.positional.empty() ? "" : args.positional[0].str();
        const std::size_t n = std::strftime(buffer, sizeof buffer, format.c_str(), &local);
        return Value::from(std::string(buffer, n));
      })));
  return globals;
}

}  // namespace baton::jinja
