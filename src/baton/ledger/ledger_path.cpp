#include "baton/ledger/ledger_path.h"

#include <cstdlib>
#include <stdexcept>

namespace baton {
namespace {

const char* non_empty_env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

std::filesystem::path default_ledger_path() {
  if (const char* explicit_path = non_empty_env("BATON_LEDGER")) return explicit_path;
  if (const char* state = non_empty_env("XDG_STATE_HOME")) {
    return std::filesystem::path(state) / "baton" / "ledger.db";
  }
  if (const char* home = non_empty_env("HOME")) {
    return std::filesystem::path(home) / ".local" / "state" / "baton" / "ledger.db";
  }
  throw std::runtime_error("no ledger location: set BATON_LEDGER, XDG_STATE_HOME or HOME");
}

}  // namespace baton
