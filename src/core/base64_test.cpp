#include "core/base64.h"

#include <gtest/gtest.h>

namespace zarrkit {
namespace {

std::vector<std::byte> bytes_of(std::string_view s) {
  auto b = as_bytes(s);
  return {b.begin(), b.end()};
}

TEST(Base64, EncodesRfc4648Vectors) {
  const std::pair<const char*, const char*> cases[] = {
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"}, {"ab", "YWI="}, {"abcd", "YWJjZA=="}};
  for (auto [plain, encoded] : cases) {
    EXPECT_EQ(base64_encode(as_bytes(plain)), encoded);
    auto decoded = base64_decode(encoded);
    ASSERT_TRUE(decoded) << encoded;
    EXPECT_EQ(*decoded, bytes_of(plain));
  }
  std::vector<std::byte> all(256);
  for (int i = 0; i < 256; ++i) all[static_cast<std::size_t>(i)] = static_cast<std::byte>(i);
  EXPECT_EQ(*base64_decode(base64_encode(all)), all);
}

TEST(Base64, RefusesNonCanonicalText) {
  for (const char* bad : {"Zg", "Zg=", "Z===", "Zh==", "Zm9=", "Zm9v=", "Zm 9v", "Zm9v\n", "Zg==Zg==", "=Zg=", "Zm-v",
                          "Zm_v"}) {
    EXPECT_FALSE(base64_decode(bad)) << bad;
  }
}

}  // namespace
}  // namespace zarrkit
