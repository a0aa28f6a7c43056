#include <gtest/gtest.h>

#include "zarrkit/error.h"
#include "zarrkit/selection.h"

namespace zarrkit {
namespace {

Slice slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop, std::int64_t step = 1) {
  return Slice{start, stop, step};
}

TEST(ParseSelection, NumPySyntax) {
  EXPECT_EQ(parse_selection(""), Selection{});
  EXPECT_EQ(parse_selection("  "), Selection{});
  EXPECT_EQ(parse_selection("3"), (Selection{std::int64_t{3}}));
  EXPECT_EQ(parse_selection("-1"), (Selection{std::int64_t{-1}}));
  EXPECT_EQ(parse_selection("+2"), (Selection{std::int64_t{2}}));
  EXPECT_EQ(parse_selection(":"), (Selection{Slice::all()}));
  EXPECT_EQ(parse_selection("::"), (Selection{Slice::all()}));
  EXPECT_EQ(parse_selection("3, 0:10, ::2, ..."),
            (Selection{std::int64_t{3}, slice(0, 10), slice(std::nullopt, std::nullopt, 2), Ellipsis{}}));
  EXPECT_EQ(parse_selection(" 1 : -1 : -3 ,..., 5:"),
            (Selection{slice(1, -1, -3), Ellipsis{}, slice(5, std::nullopt)}));
  EXPECT_EQ(parse_selection(":7"), (Selection{slice(std::nullopt, 7)}));
  EXPECT_EQ(parse_selection("::-1"), (Selection{slice(std::nullopt, std::nullopt, -1)}));
  EXPECT_EQ(parse_selection("2:5:"), (Selection{slice(2, 5)}));
  EXPECT_EQ(parse_selection("3,"), (Selection{std::int64_t{3}}));  // NumPy's (3,)
  EXPECT_EQ(parse_selection("-9223372036854775808:9223372036854775807"),
            (Selection{slice(INT64_MIN, INT64_MAX)}));
}

TEST(ParseSelection, RefusesAnythingElseNamingTheText) {
  for (const char* bad : {",", "1,,2", ",1", "1, ,", "a", "1.5", "1e3", "::0", "1:2:3:4", "...,...", "..", "....",
                          "1 2", "- 1", "+-1", "--1", "9223372036854775808", "1:x", "0x10", "1;2", "(1,2)"}) {
    try {
      parse_selection(bad);
      ADD_FAILURE() << "'" << bad << "' parsed";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(ParseSelection, IntegerAndBooleanLists) {
  EXPECT_EQ(parse_selection("[1,5,9],:,::-1"),
            (Selection{IndexArray{{1, 5, 9}}, Slice::all(), slice(std::nullopt, std::nullopt, -1)}));
  EXPECT_EQ(parse_selection(" [ -1 , +2 ,] , ..."), (Selection{IndexArray{{-1, 2}}, Ellipsis{}}));
  EXPECT_EQ(parse_selection("[]"), (Selection{IndexArray{}}));
  EXPECT_EQ(parse_selection("[ ]"), (Selection{IndexArray{}}));
  EXPECT_EQ(parse_selection("[7]"), (Selection{IndexArray{{7}}}));
  EXPECT_EQ(parse_selection("[True, False,True]"), (Selection{BoolArray{{1, 0, 1}}}));
  EXPECT_EQ(parse_selection("2, [3, 3, 0]"), (Selection{std::int64_t{2}, IndexArray{{3, 3, 0}}}));
}

TEST(ParseSelection, RefusesBadListsNamingTheText) {
  for (const char* bad : {"[1", "1]", "[1,,2]", "[,]", "[1, True]", "[True, 1]", "[[1]]", "[1][2]", "[1] 2",
                          "[1.5]", "[a]", "[true]", "[1:2]", "[...]", "[9223372036854775808]"}) {
    try {
      parse_selection(bad);
      ADD_FAILURE() << "'" << bad << "' parsed";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(FormatSelection, RoundTrips) {
  const Selection s{std::int64_t{-3}, Slice::all(), slice(1, std::nullopt), slice(std::nullopt, 4),
                    slice(2, 8, 3), slice(std::nullopt, std::nullopt, -1), Ellipsis{}};
  EXPECT_EQ(format_selection(s), "-3, :, 1:, :4, 2:8:3, ::-1, ...");
  EXPECT_EQ(parse_selection(format_selection(s)), s);
  EXPECT_EQ(format_selection({}), "");
  const Selection lists{IndexArray{{1, -5, 9}}, BoolArray{{1, 0}}, IndexArray{}};
  EXPECT_EQ(format_selection(lists), "[1, -5, 9], [True, False], []");
  EXPECT_EQ(parse_selection(format_selection(lists)), lists);
}

}  // namespace
}  // namespace zarrkit
