#include "stores/remote/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <libdeflate.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>

#include <fmt/format.h>

#include "stores/remote/url.h"
#include "zarrkit/error.h"

namespace zarrkit::remote {
namespace {

using Digest = std::array<std::byte, 32>;

Digest hmac_sha256(ByteView key, std::string_view message) {
  Digest out{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(),
           reinterpret_cast<unsigned char*>(out.data()), &length) == nullptr ||
      length != out.size()) {
    throw InternalError("HMAC-SHA256 failed in OpenSSL");
  }
  return out;
}

Digest sha256(ByteView data) {
  Digest out{};
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Header values are trimmed and runs of spaces become one space (SigV4's Trimall).
std::string trim_all(std::string_view value) {
  std::string out;
  bool pending_space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

// Sorted (name, comma-joined values); names lower case.
std::vector<std::pair<std::string, std::string>> canonical_headers(const HeaderList& headers) {
  std::vector<std::pair<std::string, std::string>> sorted;
  for (const auto& [name, value] : headers) sorted.emplace_back(lower(name), trim_all(value));
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<std::string, std::string>> merged;
  for (auto& [name, value] : sorted) {
    if (!merged.empty() && merged.back().first == name) {
      merged.back().second += "," + value;
    } else {
      merged.emplace_back(std::move(name), std::move(value));
    }
  }
  return merged;
}

std::string signed_header_names(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string out;
  for (const auto& [name, value] : headers) {
    if (!out.empty()) out += ';';
    out += name;
  }
  return out;
}

std::string credential_date(const SigningScope& scope) {
  if (scope.amz_date.size() != 16 || scope.amz_date[8] != 'T' || scope.amz_date.back() != 'Z') {
    throw InternalError(fmt::format("SigV4: malformed request date \"{}\"", scope.amz_date));
  }
  return scope.amz_date.substr(0, 8);
}

std::string credential_scope(const SigningScope& scope) {
  return fmt::format("{}/{}/{}/aws4_request", credential_date(scope), scope.region, scope.service);
}

}  // namespace

std::string hex_encode(ByteView data) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(data.size() * 2);
  for (std::byte b : data) {
    out += kHex[static_cast<unsigned>(b) >> 4];
    out += kHex[static_cast<unsigned>(b) & 0xf];
  }
  return out;
}

std::string base64_encode(ByteView data) {
  std::string out(4 * ((data.size() + 2) / 3), '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
  out.resize(static_cast<std::size_t>(std::max(written, 0)));
  return out;
}

std::string sha256_hex(ByteView data) {
  const Digest digest = sha256(data);
  return hex_encode(digest);
}

namespace {

std::array<std::byte, 16> md5(ByteView data) {
  std::array<std::byte, 16> digest{};
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(digest.data()), &length, EVP_md5(),
                 nullptr) != 1) {
    throw InternalError("MD5 failed in OpenSSL");
  }
  return digest;
}

}  // namespace

std::string md5_base64(ByteView data) { return base64_encode(md5(data)); }

PayloadDigests payload_digests(ByteView data) {
  const Digest sha = sha256(data);
  const auto md = md5(data);
  return {hex_encode(sha), base64_encode(sha), base64_encode(md), hex_encode(md)};
}

std::string object_checksum(std::string_view algorithm, ByteView data) {
  if (algorithm == "SHA-256") return base64_encode(sha256(data));
  if (algorithm == "SHA-1") {
    std::array<std::byte, 20> digest{};
    SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), reinterpret_cast<unsigned char*>(digest.data()));
    return base64_encode(digest);
  }
  if (algorithm == "CRC32") {
    // libdeflate's CRC-32 (the same polynomial as zlib's) runs several times faster than
    // zlib's on this path, which checks every whole-object GET of boto3-uploaded objects.
    const std::uint32_t crc = libdeflate_crc32(0, data.data(), data.size());
    const std::array<std::byte, 4> bytes{std::byte(crc >> 24), std::byte(crc >> 16), std::byte(crc >> 8),
                                         std::byte(crc)};
    return base64_encode(bytes);
  }
  throw InternalError(fmt::format("object_checksum: unknown algorithm \"{}\"", algorithm));
}

std::string canonical_query_string(const QueryList& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [name, value] : query) encoded.emplace_back(uri_encode(name, false), uri_encode(value, false));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

std::string canonical_request(const SigningInput& input) {
  const auto headers = canonical_headers(input.headers);
  std::string out = input.method + "\n" + (input.canonical_uri.empty() ? "/" : input.canonical_uri) + "\n" +
                    canonical_query_string(input.query) + "\n";
  for (const auto& [name, value] : headers) out += name + ":" + value + "\n";
  out += "\n" + signed_header_names(headers) + "\n" + input.payload_sha256;
  return out;
}

std::string string_to_sign(const SigningInput& input, const SigningScope& scope) {
  const std::string request = canonical_request(input);
  return "AWS4-HMAC-SHA256\n" + scope.amz_date + "\n" + credential_scope(scope) + "\n" + sha256_hex(as_bytes(request));
}

std::string authorization_header(const SigningInput& input, const SigningScope& scope,
                                 const AwsCredentials& credentials) {
  const std::string secret = "AWS4" + credentials.secret_access_key;
  Digest key = hmac_sha256(as_bytes(secret), credential_date(scope));
  key = hmac_sha256(key, scope.region);
  key = hmac_sha256(key, scope.service);
  key = hmac_sha256(key, "aws4_request");
  const Digest signature = hmac_sha256(key, string_to_sign(input, scope));
  return fmt::format("AWS4-HMAC-SHA256 Credential={}/{}, SignedHeaders={}, Signature={}", credentials.access_key_id,
                     credential_scope(scope), signed_header_names(canonical_headers(input.headers)),
                     hex_encode(signature));
}

std::string amz_date(std::chrono::system_clock::time_point when) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  const std::size_t n = std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return std::string(text, n);
}

}  // namespace zarrkit::remote
