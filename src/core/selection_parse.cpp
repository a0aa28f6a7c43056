// parse_selection / format_selection: NumPy index syntax as text, for the CLI and tests.
// Grammar, per comma-separated entry (whitespace allowed around every token):
//   entry   := integer | slice | "..." | list
//   slice   := [integer] ":" [integer] [":" [integer]]
//   list    := "[" [item ("," item)* [","]] "]"   items all integers, or all True/False
//   integer := ["+" | "-"] digits        (must fit int64)
// An empty expression selects everything. One trailing comma is allowed ("3," as in NumPy).
// Lists do not nest.
#include <charconv>
#include <string>

#include <fmt/ranges.h>

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

// "[1, 5, 9]" or "[True, False]": the list's items, comma-separated, one trailing comma allowed.
AxisSelector parse_list(std::string_view expression, std::string_view entry) {
  if (entry.back() != ']') bad_entry(expression, entry, "has text after the list's ']'");
  std::string_view rest = entry.substr(1, entry.size() - 2);
  std::vector<std::string_view> items;
  while (!trim(rest).empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (item.empty()) bad_entry(expression, entry, "has an empty list item");
    items.push_back(item);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  const bool booleans = !items.empty() && (items.front() == "True" || items.front() == "False");
  if (booleans) {
    BoolArray mask;
    for (const auto item : items) {
      if (item != "True" && item != "False") bad_entry(expression, entry, "mixes booleans with other items");
      mask.mask.push_back(item == "True" ? 1 : 0);
    }
    return mask;
  }
  IndexArray list;
  for (const auto item : items) {
    if (item == "True" || item == "False") bad_entry(expression, entry, "mixes booleans with integers");
    list.indices.push_back(*parse_bound(expression, entry, item));
  }
  return list;
}

AxisSelector parse_entry(std::string_view expression, std::string_view raw) {
  const std::string_view entry = trim(raw);
  if (entry.empty()) bad_entry(expression, entry, "is empty");
  if (entry == "...") return Ellipsis{};
  if (entry.front() == '[') return parse_list(expression, entry);
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

// The position of the first ',' outside brackets, or npos. Brackets must pair up and not nest.
std::size_t entry_end(std::string_view expression, std::string_view rest) {
  bool in_list = false;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const char c = rest[i];
    if (c == '[') {
      if (in_list) fail_invalid("invalid selection \"{}\": lists cannot be nested", expression);
      in_list = true;
    } else if (c == ']') {
      if (!in_list) fail_invalid("invalid selection \"{}\": ']' without '['", expression);
      in_list = false;
    } else if (c == ',' && !in_list) {
      return i;
    }
  }
  if (in_list) fail_invalid("invalid selection \"{}\": '[' without ']'", expression);
  return std::string_view::npos;
}

}  // namespace

Selection parse_selection(std::string_view expression) {
  Selection selection;
  if (trim(expression).empty()) return selection;
  std::string_view rest = expression;
  bool seen_ellipsis = false;
  while (true) {
    const auto comma = entry_end(expression, rest);
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
    } else if (const auto* list = std::get_if<IndexArray>(&s)) {
      out += fmt::format("[{}]", fmt::join(list->indices, ", "));
    } else if (const auto* mask = std::get_if<BoolArray>(&s)) {
      out += '[';
      for (std::size_t k = 0; k < mask->mask.size(); ++k) {
        if (k > 0) out += ", ";
        out += mask->mask[k] != 0 ? "True" : "False";
      }
      out += ']';
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
