#include "stores/remote/url.h"

#include <gtest/gtest.h>

#include "zarrkit/error.h"

namespace zarrkit::remote {
namespace {

TEST(UriEncode, UnreservedKeptEverythingElseEscaped) {
  EXPECT_EQ(uri_encode("aZ09-_.~", false), "aZ09-_.~");
  EXPECT_EQ(uri_encode("a b/c+d$é", true), "a%20b/c%2Bd%24%C3%A9");
  EXPECT_EQ(uri_encode("a/b", false), "a%2Fb");
  EXPECT_EQ(uri_decode("a%20b/c%2Bd%24%C3%A9"), "a b/c+d$é");
  EXPECT_EQ(uri_decode("a+b"), "a+b");
  EXPECT_THROW(uri_decode("bad%2"), InvalidArgumentError);
  EXPECT_THROW(uri_decode("bad%zz"), InvalidArgumentError);
  EXPECT_THROW(uri_decode("nul%00"), InvalidArgumentError);
}

TEST(ParseHttpUrl, Parts) {
  Url u = parse_http_url("HTTPS://Example.COM:8443/data/x.zarr?sig=abc");
  EXPECT_EQ(u.scheme, "https");
  EXPECT_EQ(u.host, "example.com");
  EXPECT_EQ(u.port, 8443);
  EXPECT_EQ(u.path, "/data/x.zarr");
  EXPECT_EQ(u.query, "sig=abc");
  EXPECT_EQ(u.authority(), "example.com:8443");

  u = parse_http_url("http://127.0.0.1:80");
  EXPECT_EQ(u.path, "");
  EXPECT_EQ(u.authority(), "127.0.0.1");  // the default port is not part of the Host header
  EXPECT_EQ(u.origin(), "http://127.0.0.1");

  u = parse_http_url("http://[::1]:9000/b");
  EXPECT_EQ(u.host, "[::1]");
  EXPECT_EQ(u.port, 9000);
  EXPECT_EQ(u.authority(), "[::1]:9000");
}

TEST(ParseHttpUrl, Refusals) {
  for (const char* bad : {"example.com/x", "http://", "http:///path", "http://user:pw@host/", "http://h/#frag",
                          "http://h:0/", "http://h:65536/", "http://h:12a/", "http://h:/", "http://h a/",
                          "http://[::1/", "http://ho$t/"}) {
    EXPECT_THROW(parse_http_url(bad), InvalidArgumentError) << bad;
  }
  EXPECT_THROW(parse_http_url("ftp://h/x"), UnsupportedError);
}

TEST(ParseS3Url, BucketAndPrefix) {
  S3Location l = parse_s3_url("s3://bucket/some/prefix/");
  EXPECT_EQ(l.bucket, "bucket");
  EXPECT_EQ(l.prefix, "some/prefix");
  l = parse_s3_url("s3://bucket");
  EXPECT_EQ(l.prefix, "");
  l = parse_s3_url("s3://bucket/");
  EXPECT_EQ(l.prefix, "");
  for (const char* bad : {"s3://", "s3:///x", "s3://b/a//c", "s3://b/../x", "s3://b/x?versionId=1", "s3://b c/x",
                          "http://b/x"}) {
    EXPECT_THROW(parse_s3_url(bad), InvalidArgumentError) << bad;
  }
}

TEST(VirtualHostBucket, DnsRules) {
  EXPECT_TRUE(is_virtual_host_bucket("my-bucket", true));
  EXPECT_TRUE(is_virtual_host_bucket("my.bucket", false));
  EXPECT_FALSE(is_virtual_host_bucket("my.bucket", true));  // the TLS wildcard covers one label
  EXPECT_FALSE(is_virtual_host_bucket("ab", false));
  EXPECT_FALSE(is_virtual_host_bucket("My-Bucket", false));
  EXPECT_FALSE(is_virtual_host_bucket("under_score", false));
  EXPECT_FALSE(is_virtual_host_bucket("-leading", false));
  EXPECT_FALSE(is_virtual_host_bucket("a..b", false));
  EXPECT_FALSE(is_virtual_host_bucket("192.168.1.1", false));
  EXPECT_FALSE(is_virtual_host_bucket(std::string(64, 'a'), false));
}

}  // namespace
}  // namespace zarrkit::remote
