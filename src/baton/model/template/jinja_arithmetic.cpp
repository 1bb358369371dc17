#include "baton/model/template/jinja_arithmetic.h"

#include <cmath>

namespace baton::jinja {
namespace {

using Kind = Value::Kind;

[[noreturn]] void overflow(const std::string& op) {
  throw TemplateError("integer overflow in '" + op + "' (integers are 64-bit)");
}

std::int64_t int_floor_div(std::int64_t x, std::int64_t y) {
  if (x == INT64_MIN && y == -1) overflow("//");
  return x / y - ((x % y != 0) && ((x < 0) != (y < 0)));
}

std::int64_t int_mod(std::int64_t x, std::int64_t y) {
  if (y == -1) return 0;  // INT64_MIN % -1 traps; every x % -1 is 0
  std::int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;  // opposite signs: the sum cannot overflow
  return r;
}

std::int64_t int_pow(std::int64_t base, std::int64_t exponent) {
  std::int64_t result = 1;
  for (;;) {
    if (exponent & 1) {
      if (__builtin_mul_overflow(result, base, &result)) overflow("**");
    }
    exponent >>= 1;
    if (exponent == 0) return result;
    if (__builtin_mul_overflow(base, base, &base)) overflow("**");
  }
}

// Python's float divmod: the remainder takes the divisor's sign.
double float_mod(double x, double y) {
  double mod = std::fmod(x, y);
  if (mod != 0) {
    if ((y < 0) != (mod < 0)) mod += y;
  } else {
    mod = std::copysign(0.0, y);
  }
  return mod;
}

double float_floor_div(double x, double y) {
  const double mod = std::fmod(x, y);
  double div = (x - mod) / y;
  if (mod != 0 && ((y < 0) != (mod < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, x / y);
  double floored = std::floor(div);
  if (div - floored > 0.5) floored += 1.0;
  return floored;
}

double float_pow(double x, double y) {
  if (x == 0 && y < 0) throw TemplateError("0.0 cannot be raised to a negative power");
  if (x < 0 && std::isfinite(x) && std::isfinite(y) && y != std::floor(y)) {
    throw TemplateError("a negative number raised to a fractional power is not a real number");
  }
  const double r = std::pow(x, y);
  if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) {
    throw TemplateError("'**' overflows a float");
  }
  return r;
}

Value int_op(const std::string& op, std::int64_t x, std::int64_t y) {
  std::int64_t r = 0;
  if (op == "+") {
    if (__builtin_add_overflow(x, y, &r)) overflow(op);
    return Value::from(r);
  }
  if (op == "-") {
    if (__builtin_sub_overflow(x, y, &r)) overflow(op);
    return Value::from(r);
  }
  if (op == "*") {
    if (__builtin_mul_overflow(x, y, &r)) overflow(op);
    return Value::from(r);
  }
  if (op == "//") return Value::from(int_floor_div(x, y));
  if (op == "%") return Value::from(int_mod(x, y));
  if (y >= 0) return Value::from(int_pow(x, y));  // op is "**"
  if (x == 0) throw TemplateError("0 cannot be raised to a negative power");
  return Value::from(float_pow(static_cast<double>(x), static_cast<double>(y)));
}

}  // namespace

Value arithmetic_op(const std::string& op, const Value& a, const Value& b) {
  if (op != "+" && op != "-" && op != "*" && op != "/" && op != "//" && op != "%" && op != "**") {
    throw TemplateError("unknown operator '" + op + "'");
  }
  if (op == "/") {
    if (b.number() == 0) throw TemplateError("division by zero");
    return Value::from(a.number() / b.number());
  }
  if ((op == "//" || op == "%") && b.number() == 0) throw TemplateError("division by zero");
  if (a.is(Kind::integer) && b.is(Kind::integer)) return int_op(op, a.integer, b.integer);
  const double x = a.number(), y = b.number();
  if (op == "+") return Value::from(x + y);
  if (op == "-") return Value::from(x - y);
  if (op == "*") return Value::from(x * y);
  if (op == "//") return Value::from(float_floor_div(x, y));
  if (op == "%") return Value::from(float_mod(x, y));
  return Value::from(float_pow(x, y));
}

Value negate(const Value& v) {
  if (v.is(Kind::real)) return Value::from(-v.real);
  if (v.integer == INT64_MIN) overflow("-");
  return Value::from(-v.integer);
}

std::int64_t to_int64(double x, const char* what) {
  // 2^63 is exact as a double; every double below it (and >= -2^63) truncates into int64.
  if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) {
    throw TemplateError(std::string(what) + ": the float " + Value::from(x).repr() +
                        " has no 64-bit integer value");
  }
  return static_cast<std::int64_t>(x);
}

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) overflow("+");
  return r;
}

}  // namespace baton::jinja
