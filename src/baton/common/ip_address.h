// is_ip_address(): whether text is an IPv4 or IPv6 address literal, the form `baton serve
// --host` listens on, checked before the server loads any model; is_loopback_address(),
// whether only this machine can reach it (else serving without an API key is a warning).
// Thread-safety: a pure function.
#pragma once

#include <string_view>

namespace baton {

bool is_ip_address(std::string_view text);

// Whether an address literal reaches only this machine (127.0.0.0/8, ::1).
bool is_loopback_address(std::string_view text);

}  // namespace baton
