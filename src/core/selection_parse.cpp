// parse_selection / format_selection: NumPy index syntax as text, for the CLI and tests.
// Grammar, per comma-separated entry (whitespace allowed around every token):
//   entry   := integer | slice | "..."
//   slice   := [integer] ":" [integer] [":" [integer]]
//   integer := ["+" | "-"] digits        (must fit int64)
// An empty expression selects everything. One trailing comma is allowed ("3," as in NumPy).
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "zarrkit/error.h"
#include "zarrkit/selection.h"

namespace zarrkit {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

[[noreturn]] void bad_entry(std::string_view expression, std::string_view entry, std::string_view why) {
  fail_invalid("invalid selection \"{}\": \"{}\" {}", expression, entry, why);
}

// An optional integer: empty text gives nullopt.
std::optional<std::int64_t> parse_bound(std::string_view expression, std::string_view entry, std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  std::string_view digits = text;
  if (digits.front() == '+') digits.remove_prefix(1);  // from_chars takes '-' but not '+'
  if (digits.empty() || (digits.front() == '-' && text.front() == '+')) bad_entry(expression, entry, "is not an integer");
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc::result_out_of_range) bad_entry(expression, entry, "does not fit a 64-bit integer");
  if (ec != std::errc() || end != digits.data() + digits.size()) bad_entry(expression, entry, "is not an integer");
  return v;
}

AxisSelector parse_entry(std::string_view expression, std::string_view raw) {
  const std::string_view entry = trim(raw);
  if (entry.empty()) bad_entry(expression, entry, "is empty");
  if (entry == "...") return Ellipsis{};
  const auto first_colon = entry.find(':');
  if (first_colon == std::string_view::npos) return *parse_bound(expression, entry, entry);
  Slice slice;
  const std::string_view after = entry.substr(first_colon + 1);
  const auto second_colon = after.find(':');
  slice.start = parse_bound(expression, entry, entry.substr(0, first_colon));
  if (second_colon == std::string_view::npos) {
    slice.stop = parse_bound(expression, entry, after);
    return slice;
  }
  slice.stop = parse_bound(expression, entry, after.substr(0, second_colon));
  const std::string_view step_text = after.substr(second_colon + 1);
  if (step_text.find(':') != std::string_view::npos) bad_entry(expression, entry, "has more than two ':'");
  if (auto step = parse_bound(expression, entry, step_text)) {
    if (*step == 0) bad_entry(expression, entry, "has a step of zero");
    slice.step = *step;
  }
  return slice;
}

}  // namespace

Selection parse_selection(std::string_view expression) {
  Selection selection;
  if (trim(expression).empty()) return selection;
  std::string_view rest = expression;
  bool seen_ellipsis = false;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view entry = rest.substr(0, comma);
    const bool last = comma == std::string_view::npos;
    // A trailing comma after at least one entry is allowed: "3," is (3,).
    if (last && !selection.empty() && trim(entry).empty()) break;
    AxisSelector selector = parse_entry(expression, entry);
    if (std::holds_alternative<Ellipsis>(selector)) {
      if (seen_ellipsis) fail_invalid("invalid selection \"{}\": \"...\" may appear only once", expression);
      seen_ellipsis = true;
    }
    selection.push_back(selector);
    if (last) break;
    rest = rest.substr(comma + 1);
  }
  return selection;
}

std::string format_selection(const Selection& selection) {
  std::string out;
  for (std::size_t i = 0; i < selection.size(); ++i) {
    if (i > 0) out += ", ";
    const auto& s = selection[i];
    if (const auto* index = std::get_if<std::int64_t>(&s)) {
      out += std::to_string(*index);
    } else if (std::holds_alternative<Ellipsis>(s)) {
      out += "...";
    } else {
      const auto& slice = std::get<Slice>(s);
      if (slice.start) out += std::to_string(*slice.start);
      out += ':';
      if (slice.stop) out += std::to_string(*slice.stop);
      if (slice.step != 1) out += fmt::format(":{}", slice.step);
    }
  }
  return out;
}

}  // namespace zarrkit
