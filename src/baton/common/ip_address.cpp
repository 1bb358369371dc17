#include "baton/common/ip_address.h"

#include <arpa/inet.h>

#include <string>

namespace baton {

bool is_ip_address(std::string_view text) {
  const std::string copy(text);  // inet_pton reads a C string
  unsigned char buffer[16];
  return inet_pton(AF_INET, copy.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, copy.c_str(), buffer) == 1;
}

bool is_loopback_address(std::string_view text) {
  const std::string copy(text);
  unsigned char buffer[16];
  if (inet_pton(AF_INET, copy.c_str(), buffer) == 1) return buffer[0] == 127;
  if (inet_pton(AF_INET6, copy.c_str(), buffer) != 1) return false;
  for (int i = 0; i < 15; ++i) {
    if (buffer[i] != 0) return false;
  }
  return buffer[15] == 1;
}

}  // namespace baton
