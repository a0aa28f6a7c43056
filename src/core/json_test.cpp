#include <string>

#include <gtest/gtest.h>

#include "zarrkit/error.h"
#include "zarrkit/metadata.h"

namespace zarrkit {
namespace {

TEST(ParseJson, ParsesDocumentsAndKeepsIntegersExact) {
  auto j = parse_json(R"({"a": [1, -2, 3.5, true, null, "x"], "big": 18446744073709551615, "min": -9223372036854775808})");
  EXPECT_EQ(j["a"][0].get<int>(), 1);
  EXPECT_EQ(j["a"][1].get<int>(), -2);
  EXPECT_DOUBLE_EQ(j["a"][2].get<double>(), 3.5);
  EXPECT_TRUE(j["a"][4].is_null());
  ASSERT_TRUE(j["big"].is_number_unsigned());
  EXPECT_EQ(j["big"].get<std::uint64_t>(), 18446744073709551615ull);
  ASSERT_TRUE(j["min"].is_number_integer());
  EXPECT_EQ(j["min"].get<std::int64_t>(), INT64_MIN);
  EXPECT_EQ(parse_json("  7  ").get<int>(), 7);
  EXPECT_EQ(parse_json("\"caf\xc3\xa9 \xf0\x9f\x98\x80\"").get<std::string>(), "caf\xc3\xa9 \xf0\x9f\x98\x80");
}

TEST(ParseJson, RefusesMalformedText) {
  for (const char* text : {"", "{", "[1,]", "{\"a\":1,}", "{'a': 1}", "[1] x", "/* c */ 1", "01", "1.", ".5", "+1",
                           "[\"\\x\"]", "tru", "{\"a\" 1}", "\"\\ud800\""}) {
    EXPECT_THROW(parse_json(text), InvalidArgumentError) << text;
  }
}

TEST(ParseJson, RefusesNanInfinityAndOverflowingNumbers) {
  for (const char* text : {"NaN", "[NaN]", "Infinity", "-Infinity", "[1e400]", "-1e400", "{\"f\": 1e309}"}) {
    EXPECT_THROW(parse_json(text), InvalidArgumentError) << text;
  }
  // Integers beyond 64 bits are not silently wrapped: they become doubles.
  auto j = parse_json("18446744073709551616");
  EXPECT_TRUE(j.is_number_float());
}

TEST(ParseJson, RefusesDuplicateKeysAtAnyDepth) {
  EXPECT_THROW(parse_json(R"({"a": 1, "a": 2})"), InvalidArgumentError);
  EXPECT_THROW(parse_json(R"({"a": {"b": 1, "c": [{"d": 1, "d": 1}]}})"), InvalidArgumentError);
  EXPECT_THROW(parse_json(R"({"a": {}, "a": {}})"), InvalidArgumentError);
  // The same key in different objects is fine.
  EXPECT_NO_THROW(parse_json(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]})"));
}

TEST(ParseJson, RefusesInvalidUtf8) {
  for (std::string text : {std::string("\"\xff\""), std::string("\"\xc0\xaf\""),  // overlong '/'
                           std::string("\"\xed\xa0\x80\""),                          // UTF-16 surrogate
                           std::string("\"\xf4\x90\x80\x80\""),                      // beyond U+10FFFF
                           std::string("\"\xe2\x82\""),                              // truncated
                           std::string("{\"a\xfe\": 1}"), std::string("[1]\x80")}) {
    EXPECT_THROW(parse_json(text), InvalidArgumentError);
  }
}

TEST(ParseJson, EnforcesDepthWithoutRecursion) {
  // 100k nested arrays would overflow the stack of a recursive parser; this must be a
  // clean limit error.
  std::string deep(100000, '[');
  EXPECT_THROW(parse_json(deep), ResourceExhaustedError);
  deep += std::string(100000, ']');
  EXPECT_THROW(parse_json(deep), ResourceExhaustedError);
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  EXPECT_THROW(parse_json(objects), ResourceExhaustedError);

  MetadataLimits limits;
  limits.max_json_depth = 3;
  EXPECT_NO_THROW(parse_json("[[[1]]]", limits));
  EXPECT_NO_THROW(parse_json("{\"a\": [{}]}", limits));
  EXPECT_THROW(parse_json("[[[[1]]]]", limits), ResourceExhaustedError);
  EXPECT_THROW(parse_json("{\"a\": [{\"b\": []}]}", limits), ResourceExhaustedError);
  // Siblings do not add up.
  EXPECT_NO_THROW(parse_json("[[[1]], [[2]], [[3]]]", limits));
}

TEST(ParseJson, EnforcesSizeLimit) {
  MetadataLimits limits;
  limits.max_json_bytes = 10;
  EXPECT_NO_THROW(parse_json("[1,2,3,4]", limits));
  EXPECT_THROW(parse_json("[1,2,3,4,5]", limits), ResourceExhaustedError);
}

TEST(DumpJson, IndentsByTwoAndRoundTrips) {
  nlohmann::json j = {{"b", {1, 2}}, {"a", "x"}, {"f", 0.1}, {"e", nlohmann::json::object()}};
  const std::string text = dump_json(j);
  EXPECT_EQ(text, "{\n  \"a\": \"x\",\n  \"b\": [\n    1,\n    2\n  ],\n  \"e\": {},\n  \"f\": 0.1\n}");
  EXPECT_EQ(parse_json(text), j);
  EXPECT_EQ(dump_json(nlohmann::json(-0.0)), "-0.0");
  EXPECT_EQ(dump_json(nlohmann::json(1e300)), "1e+300");
}

TEST(DumpJson, NeverWritesBareNanOrInfinity) {
  EXPECT_THROW(dump_json(nlohmann::json(std::nan(""))), InvalidArgumentError);
  EXPECT_THROW(dump_json(nlohmann::json{{"fill", {1.0, HUGE_VAL}}}), InvalidArgumentError);
  EXPECT_THROW(dump_json(nlohmann::json(std::string("\xff"))), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit
