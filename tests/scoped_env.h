// ScopedEnv: an environment variable set for a scope and removed at its end (switches that
// code reads from the environment when an object is made, e.g. the CUDA runner's).
// Thread-safety: setenv is not; use it only while no other thread reads the environment.
#pragma once

#include <cstdlib>

namespace baton::testing {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

}  // namespace baton::testing
