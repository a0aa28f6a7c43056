// SigV4 against AWS's published examples: the Signature Version 4 test suite (service
// "service", 2015-08-30) and the worked examples of the S3 API Reference, "Signature
// Calculations for the Authorization Header: Transferring Payload in a Single Chunk".
#include "stores/remote/sigv4.h"

#include "stores/remote/url.h"

#include <gtest/gtest.h>

namespace zarrkit::remote {
namespace {

constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const AwsCredentials kSuiteCredentials{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
const SigningScope kSuiteScope{"us-east-1", "service", "20150830T123600Z"};
const AwsCredentials kS3Credentials{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
const SigningScope kS3Scope{"us-east-1", "s3", "20130524T000000Z"};

SigningInput suite_request(std::string method, QueryList query = {}) {
  return {std::move(method), "/", std::move(query),
          {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}}, kEmptySha256};
}

std::string suite_authorization(const std::string& signature) {
  return "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
         "SignedHeaders=host;x-amz-date, Signature=" +
         signature;
}

TEST(SigV4, TestSuiteGetVanilla) {
  const SigningInput input = suite_request("GET");
  EXPECT_EQ(canonical_request(input),
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" +
                std::string(kEmptySha256));
  EXPECT_EQ(string_to_sign(input, kSuiteScope),
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
  EXPECT_EQ(authorization_header(input, kSuiteScope, kSuiteCredentials),
            suite_authorization("5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"));
}

TEST(SigV4, TestSuiteQueryOrderAndPost) {
  EXPECT_EQ(authorization_header(suite_request("GET", {{"Param2", "value2"}, {"Param1", "value1"}}), kSuiteScope,
                                 kSuiteCredentials),
            suite_authorization("b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"));
  EXPECT_EQ(authorization_header(suite_request("POST"), kSuiteScope, kSuiteCredentials),
            suite_authorization("5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"));
}

TEST(SigV4, S3GetObjectWithRange) {
  const SigningInput input{"GET",
                           "/test.txt",
                           {},
                           {{"Host", "examplebucket.s3.amazonaws.com"},
                            {"Range", "bytes=0-9"},
                            {"x-amz-content-sha256", kEmptySha256},
                            {"x-amz-date", "20130524T000000Z"}},
                           kEmptySha256};
  EXPECT_EQ(string_to_sign(input, kS3Scope),
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(authorization_header(input, kS3Scope, kS3Credentials),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4, S3PutObjectWithEncodedKeyAndDateHeader) {
  const std::string payload = "Welcome to Amazon S3.";
  const std::string payload_hash = sha256_hex(as_bytes(payload));
  EXPECT_EQ(payload_hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  const SigningInput input{"PUT",
                           "/" + uri_encode("test$file.text", true),
                           {},
                           {{"Host", "examplebucket.s3.amazonaws.com"},
                            {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                            {"x-amz-date", "20130524T000000Z"},
                            {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                            {"x-amz-content-sha256", payload_hash}},
                           payload_hash};
  EXPECT_EQ(input.canonical_uri, "/test%24file.text");
  EXPECT_EQ(authorization_header(input, kS3Scope, kS3Credentials),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
            "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

SigningInput s3_bucket_get(QueryList query) {
  return {"GET",
          "/",
          std::move(query),
          {{"Host", "examplebucket.s3.amazonaws.com"},
           {"x-amz-date", "20130524T000000Z"},
           {"x-amz-content-sha256", kEmptySha256}},
          kEmptySha256};
}

TEST(SigV4, S3BucketSubresourceAndListObjects) {
  // "?lifecycle": a parameter without a value signs as "lifecycle=".
  const SigningInput lifecycle = s3_bucket_get({{"lifecycle", ""}});
  EXPECT_NE(canonical_request(lifecycle).find("\n/\nlifecycle=\n"), std::string::npos);
  EXPECT_EQ(authorization_header(lifecycle, kS3Scope, kS3Credentials),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
            "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  EXPECT_EQ(authorization_header(s3_bucket_get({{"prefix", "J"}, {"max-keys", "2"}}), kS3Scope, kS3Credentials),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
            "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4, CanonicalFormsOfHeadersAndQueries) {
  // Values are trimmed and inner runs of spaces collapse; repeated names join with ','.
  const SigningInput input{"GET", "/", {}, {{"My-Header1", "  a   b   c  "}, {"my-header1", "d"}, {"Host", "h"}}, "x"};
  EXPECT_EQ(canonical_request(input), "GET\n/\n\nhost:h\nmy-header1:a b c,d\n\nhost;my-header1\nx");
  // Names and values are encoded, then sorted by name and value; '/' and ' ' are escaped.
  EXPECT_EQ(canonical_query_string({{"prefix", "a b/c"}, {"list-type", "2"}, {"a", "2"}, {"a", "1"}}),
            "a=1&a=2&list-type=2&prefix=a%20b%2Fc");
}

TEST(SigV4, HashesAndDates) {
  EXPECT_EQ(sha256_hex({}), kEmptySha256);
  EXPECT_EQ(md5_base64(as_bytes("")), "1B2M2Y8AsgTpgAmY7PhCfg==");
  EXPECT_EQ(md5_base64(as_bytes("Welcome to Amazon S3.")), "1EfQ6PKJ8WoS/2AnznfCWA==");
  EXPECT_EQ(base64_encode(as_bytes("ab")), "YWI=");
  // S3's x-amz-checksum-* forms: base64 of the big-endian digest.
  EXPECT_EQ(object_checksum("CRC32", as_bytes("123456789")), "y/Q5Jg==");  // 0xCBF43926
  EXPECT_EQ(object_checksum("SHA-1", as_bytes("abc")), "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=");
  EXPECT_EQ(object_checksum("SHA-256", {}), "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
  EXPECT_EQ(amz_date(std::chrono::system_clock::from_time_t(1440938160)), "20150830T123600Z");
}

}  // namespace
}  // namespace zarrkit::remote
