// URL pieces the remote stores need: RFC 3986 percent-encoding (as AWS SigV4 defines it),
// http(s) URLs split into parts, and s3://bucket/prefix locations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zarrkit::remote {

// Percent-encodes every byte except the unreserved ones (A-Z a-z 0-9 - _ . ~), with
// upper-case hex digits. '/' is kept when `keep_slash` (object key paths), else encoded.
std::string uri_encode(std::string_view text, bool keep_slash);
// Decodes %XX escapes ('+' stays '+'). InvalidArgumentError on a bad escape or a NUL byte.
std::string uri_decode(std::string_view text);

struct Url {
  std::string scheme;                // "http" or "https", lower case
  std::string host;                  // lower case; an IPv6 literal keeps its brackets
  std::optional<std::uint16_t> port;  // only when the URL names one
  std::string path;                  // as written: "" or starting with '/'
  std::string query;                 // after '?', without it; "" when none

  // "host" or "host:port" (the port only when it is not the scheme's default): the Host header.
  std::string authority() const;
  // "scheme://authority".
  std::string origin() const;
};

// Parses an absolute http:// or https:// URL. User info ("user:pass@") and fragments are
// refused with InvalidArgumentError, as are other schemes and malformed hosts or ports.
Url parse_http_url(std::string_view url);

// "s3://bucket/some/prefix/" -> {"bucket", "some/prefix"}. The prefix has no leading or
// trailing '/', and must be a valid store prefix (no empty, "." or ".." segments).
struct S3Location {
  std::string bucket;
  std::string prefix;
};
S3Location parse_s3_url(std::string_view url);

// True when the bucket name can be a DNS label for virtual-hosted addressing: 3 to 63
// characters of a-z, 0-9, '-' (and '.', unless `for_https`, where dots break the
// certificate's wildcard), starting and ending with a letter or digit, not an IP address.
bool is_virtual_host_bucket(std::string_view bucket, bool for_https);

}  // namespace zarrkit::remote
