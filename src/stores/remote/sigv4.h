// AWS Signature Version 4 (header-based), as the AWS General Reference and the S3 API
// Reference ("Authenticating Requests: Using the Authorization Header") define it. The
// hashes and HMACs come from OpenSSL's libcrypto.
//
// The canonical URI is the path exactly as sent: S3 wants each segment URI-encoded once
// and no normalisation, so callers pass the already-encoded path.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zarrkit/buffer.h"

namespace zarrkit::remote {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // temporary credentials only

  bool anonymous() const { return access_key_id.empty(); }
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;
// Query parameters, not encoded; a parameter without a value ("?uploads") has an empty value.
using QueryList = std::vector<std::pair<std::string, std::string>>;

struct SigningInput {
  std::string method;          // "GET", "PUT", ...
  std::string canonical_uri;   // the encoded path as sent, "/" at least
  QueryList query;
  HeaderList headers;          // every header to sign, "host" included; names in any case
  std::string payload_sha256;  // hex, or "UNSIGNED-PAYLOAD"
};

struct SigningScope {
  std::string region;   // "us-east-1"
  std::string service;  // "s3"
  std::string amz_date;  // "20150830T123600Z"
};

// The pieces of the signature, exposed so that tests can check each step.
std::string canonical_query_string(const QueryList& query);
std::string canonical_request(const SigningInput& input);
std::string string_to_sign(const SigningInput& input, const SigningScope& scope);
// The value of the Authorization header.
std::string authorization_header(const SigningInput& input, const SigningScope& scope,
                                 const AwsCredentials& credentials);

// "YYYYMMDDTHHMMSSZ" in UTC.
std::string amz_date(std::chrono::system_clock::time_point when);

std::string sha256_hex(ByteView data);
// The digests an upload sends: SHA-256 (hex for the signature, base64 for
// x-amz-checksum-sha256) and MD5 (base64 for Content-MD5, hex to compare with an ETag).
struct PayloadDigests {
  std::string sha256_hex;
  std::string sha256_base64;
  std::string md5_base64;
  std::string md5_hex;
};
PayloadDigests payload_digests(ByteView data);
// An S3 object checksum as the x-amz-checksum-* headers carry it (base64 of the big-endian
// digest): algorithm "SHA-256", "SHA-1" or "CRC32".
std::string object_checksum(std::string_view algorithm, ByteView data);
std::string md5_base64(ByteView data);
std::string base64_encode(ByteView data);
std::string hex_encode(ByteView data);

}  // namespace zarrkit::remote
