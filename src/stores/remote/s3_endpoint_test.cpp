#include "stores/remote/s3_endpoint.h"

#include <gtest/gtest.h>

#include "zarrkit/error.h"

namespace zarrkit::remote {
namespace {

TEST(S3Endpoint, AwsVirtualHostedByDefault) {
  S3Endpoint e("my-bucket", "eu-west-1", std::nullopt, AddressingStyle::kAuto);
  EXPECT_TRUE(e.virtual_hosted());
  S3Target t = e.target("data.zarr/c/0 1", {});
  EXPECT_EQ(t.url, "https://my-bucket.s3.eu-west-1.amazonaws.com/data.zarr/c/0%201");
  EXPECT_EQ(t.host, "my-bucket.s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(t.canonical_uri, "/data.zarr/c/0%201");
  // Bucket-level requests: "/" and a sorted, encoded query.
  t = e.target("", {{"prefix", "a b/"}, {"list-type", "2"}});
  EXPECT_EQ(t.url, "https://my-bucket.s3.eu-west-1.amazonaws.com/?list-type=2&prefix=a%20b%2F");
  EXPECT_EQ(t.canonical_uri, "/");
}

TEST(S3Endpoint, PathStyleWhenTheBucketIsNotADnsLabel) {
  S3Endpoint dots("my.bucket", "us-east-1", std::nullopt, AddressingStyle::kAuto);
  EXPECT_FALSE(dots.virtual_hosted());  // dots break the TLS wildcard certificate
  EXPECT_EQ(dots.target("k", {}).url, "https://s3.us-east-1.amazonaws.com/my.bucket/k");
  S3Endpoint upper("Legacy_Bucket", "us-east-1", std::nullopt, AddressingStyle::kVirtual);
  EXPECT_FALSE(upper.virtual_hosted());
  S3Endpoint path("my-bucket", "us-east-1", std::nullopt, AddressingStyle::kPath);
  EXPECT_EQ(path.target("a/b", {{"uploads", ""}}).url, "https://s3.us-east-1.amazonaws.com/my-bucket/a/b?uploads=");
}

TEST(S3Endpoint, CustomEndpointsArePathStyleUnlessAsked) {
  S3Endpoint local("bucket", "us-east-1", "http://127.0.0.1:9000/", AddressingStyle::kAuto);
  EXPECT_TRUE(local.custom());
  S3Target t = local.target("x.zarr/zarr.json", {});
  EXPECT_EQ(t.url, "http://127.0.0.1:9000/bucket/x.zarr/zarr.json");
  EXPECT_EQ(t.host, "127.0.0.1:9000");
  EXPECT_EQ(t.canonical_uri, "/bucket/x.zarr/zarr.json");
  // Virtual-hosted on an IP address is impossible: path-style.
  EXPECT_FALSE(S3Endpoint("bucket", "r", "http://127.0.0.1:9000", AddressingStyle::kVirtual).virtual_hosted());
  S3Endpoint named("bucket", "r", "https://minio.example.com:443/base", AddressingStyle::kVirtual);
  t = named.target("k", {});
  EXPECT_EQ(t.url, "https://bucket.minio.example.com/base/k");
  EXPECT_EQ(t.host, "bucket.minio.example.com");
  EXPECT_EQ(t.canonical_uri, "/base/k");
}

TEST(S3Endpoint, Refusals) {
  EXPECT_THROW(S3Endpoint("b", "", std::nullopt, AddressingStyle::kAuto), InvalidArgumentError);
  EXPECT_THROW(S3Endpoint("b", "us-east-1/x", std::nullopt, AddressingStyle::kAuto), InvalidArgumentError);
  EXPECT_THROW(S3Endpoint("b", "r", "127.0.0.1:9000", AddressingStyle::kAuto), InvalidArgumentError);
  EXPECT_THROW(S3Endpoint("b", "r", "http://h:9000/?x=1", AddressingStyle::kAuto), InvalidArgumentError);
}

}  // namespace
}  // namespace zarrkit::remote
