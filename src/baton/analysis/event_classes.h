// The classes of fault events, as the ledger's events table names them: hang, timeout,
// submissions_ignored, other and slowdown (FaultKind). CSV logs of another server and
// `--class` may spell them in any case ("Hang"); they mean the same class. A word that is
// no class is refused rather than kept, because nothing would ever count it and the
// analysis would quietly report zero hangs.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace baton {

// The ledger's name of the class `text` names, in any case; nullopt for an unknown word.
std::optional<std::string_view> event_class(std::string_view text);

// "hang, timeout, submissions_ignored, other or slowdown", for messages.
std::string known_event_classes();

}  // namespace baton
