// parse_json and dump_json: JSON text <-> nlohmann::json with the limits untrusted metadata
// needs. The parser is nlohmann's iterative SAX parser feeding a DOM builder of our own,
// so that depth is checked as containers open (no recursion anywhere, and no pre-pass),
// duplicate object keys are refused instead of silently keeping the last one, and every
// failure becomes a typed zarrkit error.
#include <cmath>
#include <string>
#include <vector>

#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

using json = nlohmann::json;

class LimitedDomBuilder {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  explicit LimitedDomBuilder(std::size_t max_depth) : max_depth_(max_depth) {}

  json take_result() { return std::move(root_); }

  bool null() { return add(json(nullptr)); }
  bool boolean(bool v) { return add(json(v)); }
  bool number_integer(number_integer_t v) { return add(json(v)); }
  bool number_unsigned(number_unsigned_t v) { return add(json(v)); }
  bool number_float(number_float_t v, const string_t& text) {
    // nlohmann already refuses out-of-range floats; keep the invariant local as well.
    if (!std::isfinite(v)) fail_invalid("invalid JSON: number {} does not fit a double", text);
    return add(json(v));
  }
  bool string(string_t& v) { return add(json(std::move(v))); }
  bool binary(binary_t&) { fail_invalid("invalid JSON: binary values are not JSON"); }

  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& k) {
    json& object = *stack_.back();
    if (object.contains(k)) fail_invalid("invalid JSON: duplicate object key \"{}\"", k);
    pending_key_ = std::move(k);
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    fail_invalid("invalid JSON: {}", e.what());
  }

 private:
  // Places `value` in the current container (or as the root) and returns where it lives.
  json* place(json&& value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    auto [it, inserted] = parent.emplace(std::move(pending_key_), std::move(value));
    (void)inserted;  // key() refused duplicates already
    return &it.value();
  }

  bool add(json&& value) {
    place(std::move(value));
    return true;
  }

  bool open(json&& container) {
    if (stack_.size() + 1 > max_depth_) {
      fail_resource("JSON nesting deeper than the limit of {} levels", max_depth_);
    }
    // Pointers into the parent stay valid: nothing is added to a container while one of
    // its children is open.
    stack_.push_back(place(std::move(container)));
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  std::size_t max_depth_;
  json root_;
  std::vector<json*> stack_;
  std::string pending_key_;
};

}  // namespace

nlohmann::json parse_json(std::string_view text, const MetadataLimits& limits) {
  if (text.size() > limits.max_json_bytes) {
    fail_resource("JSON document of {} bytes exceeds the limit of {} bytes", text.size(), limits.max_json_bytes);
  }
  LimitedDomBuilder builder(limits.max_json_depth);
  // nlohmann's lexer checks UTF-8 inside strings (RFC 3629: no overlong forms, no
  // surrogates) and refuses any other non-ASCII byte, NaN/Infinity tokens and comments.
  try {
    json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, /*strict=*/true,
                    /*ignore_comments=*/false);
  } catch (const nlohmann::json::exception& e) {
    fail_invalid("invalid JSON: {}", e.what());
  }
  return builder.take_result();
}

std::string dump_json(const nlohmann::json& value) {
  // nlohmann would print a non-finite double as `null`, which silently changes a fill value
  // (zarrita.js #352). Refuse instead; fill values have string forms for these.
  std::vector<const json*> pending{&value};
  while (!pending.empty()) {
    const json* node = pending.back();
    pending.pop_back();
    if (node->is_number_float() && !std::isfinite(node->get<double>())) {
      fail_invalid("cannot write JSON: a number is {} (use the \"NaN\"/\"Infinity\" string forms)", node->get<double>());
    }
    if (node->is_structured()) {
      for (const auto& child : *node) pending.push_back(&child);
    }
  }
  try {
    return value.dump(2, ' ', /*ensure_ascii=*/false, json::error_handler_t::strict);
  } catch (const nlohmann::json::exception& e) {
    fail_invalid("cannot write JSON: {}", e.what());
  }
}

}  // namespace zarrkit
