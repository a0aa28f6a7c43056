// A reader for the small subset of Python literal syntax that .npy headers use. The header
// is untrusted, so nesting depth is bounded and integers are range-checked.
#include <charconv>
#include <cstdint>

#include "zarrkit/error.h"
#include "zarrkit/npy_header.h"

namespace zarrkit::cli {
namespace {

constexpr int kMaxDepth = 32;

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) fail_invalid("invalid code point U+{:X}", cp);
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : text_(text) {}

  nlohmann::json parse_document() {
    nlohmann::json value = parse_value(0);
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the literal");
    return value;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    fail_invalid("bad Python literal at offset {}: {}", pos_, what);
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool consume_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  nlohmann::json parse_value(int depth) {
    if (depth > kMaxDepth) fail("nested too deeply");
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    char c = text_[pos_];
    if (c == '{') return parse_dict(depth);
    if (c == '[') return parse_sequence(depth, ']');
    if (c == '(') return parse_sequence(depth, ')');
    if (c == '\'' || c == '"') return parse_string();
    if (c == '-' || (c >= '0' && c <= '9')) return parse_int();
    if (consume_word("True")) return true;
    if (consume_word("False")) return false;
    if (consume_word("None")) return nullptr;
    fail(fmt::format("unexpected character '{}'", c));
  }

  nlohmann::json parse_dict(int depth) {
    ++pos_;  // '{'
    nlohmann::json dict = nlohmann::json::object();
    while (!consume('}')) {
      skip_space();
      if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) fail("dict keys must be strings");
      std::string key = parse_string();
      if (dict.contains(key)) fail(fmt::format("duplicate key '{}'", key));
      if (!consume(':')) fail("expected ':'");
      dict[key] = parse_value(depth + 1);
      if (!consume(',')) {
        if (!consume('}')) fail("expected ',' or '}'");
        break;
      }
    }
    return dict;
  }

  // Lists and tuples both become JSON arrays ("(3,)" is a one-element tuple).
  nlohmann::json parse_sequence(int depth, char close) {
    ++pos_;
    nlohmann::json items = nlohmann::json::array();
    while (!consume(close)) {
      items.push_back(parse_value(depth + 1));
      if (!consume(',')) {
        if (!consume(close)) fail(fmt::format("expected ',' or '{}'", close));
        break;
      }
    }
    return items;
  }

  std::uint32_t parse_hex(std::size_t digits) {
    if (pos_ + digits > text_.size()) fail("truncated escape");
    std::uint32_t value = 0;
    auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + pos_ + digits, value, 16);
    if (ec != std::errc() || end != text_.data() + pos_ + digits) fail("bad hex escape");
    pos_ += digits;
    return value;
  }

  std::string parse_string() {
    const char quote = text_[pos_++];
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("unterminated string");
      char c = text_[pos_++];
      if (c == quote) return out;
      if (c == '\n') fail("newline in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("unterminated string");
      char e = text_[pos_++];
      switch (e) {
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '0': out += '\0'; break;
        case 'x': append_utf8(out, parse_hex(2)); break;
        case 'u': append_utf8(out, parse_hex(4)); break;
        case 'U': append_utf8(out, parse_hex(8)); break;
        default: fail(fmt::format("unknown escape '\\{}'", e));
      }
    }
  }

  nlohmann::json parse_int() {
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), value);
    if (ec == std::errc::result_out_of_range) fail("integer out of range");
    if (ec != std::errc()) fail("bad integer");
    pos_ = static_cast<std::size_t>(end - text_.data());
    if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')) {
      fail("only integers are allowed");
    }
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long suffix
    return value;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

nlohmann::json parse_python_literal(std::string_view text) {
  if (text.size() > kMaxNpyHeaderBytes) fail_invalid("Python literal of {} bytes is too long", text.size());
  return LiteralParser(text).parse_document();
}

}  // namespace zarrkit::cli
