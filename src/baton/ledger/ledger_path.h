// Where the ledger lives when no --ledger is given: $BATON_LEDGER if set, else
// $XDG_STATE_HOME/baton/ledger.db, else ~/.local/state/baton/ledger.db (the XDG base
// directory rule for state that outlives a restart). Documented in docs/analysis.md.
// Thread-safety: reads the environment only.
#pragma once

#include <filesystem>

namespace baton {

// Throws std::runtime_error when neither BATON_LEDGER, XDG_STATE_HOME nor HOME is set.
std::filesystem::path default_ledger_path();

}  // namespace baton
