// The syntax tree of a Jinja template (jinja_parser.h builds it, jinja_template.h runs it):
// expressions and statement nodes, each with its source line for errors.
// Thread-safety: immutable after parsing.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/model/template/jinja_value.h"

namespace baton::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
using NamedExprs = std::vector<std::pair<std::string, ExprPtr>>;

struct Expr {
  enum class Kind {
    literal,
    name,
    attr,
    index,
    slice,
    call,
    filter,
    test,
    unary,
    binary,
    cond,
    list,
    dict
  };
  Kind kind;
  int line = 0;
  Value literal;     // literal
  std::string name;  // name, attr, filter, test; the operator of unary and binary
  // unary: operand; binary: left, right; attr, index: target (, key); cond: then, test,
  // else (may be null); slice: target, start, stop, step (each may be null); call: callee,
  // then positional arguments; filter, test: operand, then arguments; list: items;
  // dict: key, value, key, value...
  std::vector<ExprPtr> items;
  NamedExprs named;      // call, filter, test: keyword arguments
  bool negated = false;  // test: "is not"
  int depth = 1;         // of the tree below: bounded, so evaluating it cannot overflow
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
  enum class Kind { text, print, if_, for_, set, set_block, macro, break_, continue_, block };
  Kind kind;
  int line = 0;
  std::string text;                  // text; set, set_block, macro: the name
  std::string attribute;             // set: the namespace attribute (ns.attribute = ...)
  ExprPtr expr;                      // print; set: the value; for: the iterable
  std::vector<std::string> targets;  // for: the loop variables
  ExprPtr condition;                 // for: the loop filter (may be null)
  std::vector<std::pair<ExprPtr, Body>> branches;  // if / elif
  Body body;                                       // for, set_block, macro, block; if: else
  Body else_body;                                  // for: else
  NamedExprs params;  // macro: parameter names and defaults (may be null)
};

}  // namespace baton::jinja
