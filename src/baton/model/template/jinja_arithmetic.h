// Python's arithmetic on the Jinja engine's numbers, without undefined behaviour: integers
// are 64-bit where Python's are unbounded, so a result that leaves int64 (INT64_MIN // -1,
// 2 ** 64, -INT64_MIN, a sum past the range) is a TemplateError, as is a float that cannot
// become an integer (inf, nan, 1e88). Floats follow Python: floor division and modulo
// take the divisor's sign, and a float power that overflows is an error.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "baton/model/template/jinja_value.h"

namespace baton::jinja {

// a op b for op in + - * / // % ** on numbers (integers and floats).
Value arithmetic_op(const std::string& op, const Value& a, const Value& b);
// -v for a number.
Value negate(const Value& v);
// The integer a float truncates to (Python's int(x)); TemplateError when it has none in
// int64 (inf, nan, |x| >= 2^63). `what` names the caller for the error.
std::int64_t to_int64(double x, const char* what);
// Checked integer sum, for filters that add (sum).
std::int64_t checked_add(std::int64_t a, std::int64_t b);

}  // namespace baton::jinja
