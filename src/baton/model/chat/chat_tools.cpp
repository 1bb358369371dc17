#include "baton/model/chat/chat_tools.h"

#include <set>
#include <stdexcept>

namespace baton {
namespace {

using nlohmann::ordered_json;

constexpr std::size_t kMaxNameBytes = 64;

[[noreturn]] void refuse(const std::string& field, const std::string& problem) {
  throw std::invalid_argument("'" + field + "' " + problem);
}

bool name_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == ':';
}

std::string checked_name(const ordered_json& function, const std::string& where) {
  const std::string field = where + ".name";
  auto it = function.find("name");
  if (it == function.end() || it->is_null()) refuse(field, "is required");
  if (!it->is_string()) refuse(field, "must be a string");
  const std::string name = it->get<std::string>();
  if (name.empty()) refuse(field, "must not be empty");
  if (name.size() > kMaxNameBytes) refuse(field, "must be at most 64 characters");
  for (char c : name) {
    if (!name_character(c)) {
      refuse(field, "may hold only letters, digits, '_', '-', '.' and ':'");
    }
  }
  return name;
}

void check_parameters(const ordered_json& function, const std::string& where) {
  const std::string field = where + ".parameters";
  auto it = function.find("parameters");
  if (it == function.end() || it->is_null()) return;  // a function without arguments
  if (!it->is_object()) refuse(field, "must be a JSON Schema object");
  auto type = it->find("type");
  if (type != it->end() && *type != "object") {
    refuse(field + ".type", "must be \"object\": a function's arguments are a JSON object");
  }
}

void check_tool(const ordered_json& tool, const std::string& where) {
  if (!tool.is_object()) refuse(where, "must be an object");
  auto type = tool.find("type");
  if (type == tool.end()) refuse(where + ".type", "is required");
  if (*type != "function") refuse(where + ".type", "must be \"function\"");
  auto function = tool.find("function");
  if (function == tool.end() || !function->is_object()) {
    refuse(where + ".function", "must be an object");
  }
  checked_name(*function, where + ".function");
  auto description = function->find("description");
  if (description != function->end() && !description->is_null() && !description->is_string()) {
    refuse(where + ".function.description", "must be a string");
  }
  check_parameters(*function, where + ".function");
}

}  // namespace

void validate_tools(const ordered_json& tools) {
  if (!tools.is_array()) refuse("tools", "must be a list");
  std::set<std::string> names;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const std::string where = "tools[" + std::to_string(i) + "]";
    check_tool(tools[i], where);
    const std::string name = tools[i]["function"]["name"].get<std::string>();
    if (!names.insert(name).second) {
      refuse(where + ".function.name", "repeats the name '" + name + "' of an earlier tool");
    }
  }
}

ChatTools tools_from_json(const ordered_json& tools) {
  validate_tools(tools);
  return ChatTools(tools.begin(), tools.end());
}

std::vector<std::string> tool_names(const ChatTools& tools) {
  std::vector<std::string> names;
  for (const ordered_json& tool : tools) names.push_back(tool["function"]["name"]);
  return names;
}

void check_tool_choice(const ChatTools& tools, std::string_view name, std::string_view field) {
  for (const std::string& known : tool_names(tools)) {
    if (known == name) return;
  }
  throw std::invalid_argument("'" + std::string(field) + "' names the function '" +
                              std::string(name) + "', which is not among the tools");
}

}  // namespace baton
