// A store over an S3 bucket (AWS or an S3-compatible server): key "a/c/0" of the store
// s3://bucket/prefix is the object "prefix/a/c/0".
//
// Settings come from the environment and the AWS files as boto3 reads them (credentials,
// profile, region, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, addressing style; see
// docs/remote-stores.md), and S3Options overrides them. Requests are signed with AWS
// Signature Version 4, or sent unsigned when there are no credentials.
//
//   get        GET (byte ranges: Range requests, checked against Content-Range; get_ranges
//              sends them together and merges nearby ones). Whole-value reads verify the
//              x-amz-checksum-sha256 the server returns for objects written with one.
//   set        PUT with Content-MD5 and a SHA-256 checksum, so the server refuses a body
//              damaged on the way; values above multipart_threshold go up as a multipart
//              upload (parts in parallel), which is aborted on failure. Either way the object
//              appears whole or not at all.
//   erase      DELETE; erase_prefix lists and deletes in DeleteObjects batches of 1000.
//   copy       CopyObject (a PUT naming the source object in x-amz-copy-source).
//   list       ListObjectsV2 with pagination; list_dir uses the '/' delimiter. Objects whose
//              names are not valid store keys ("a//b", "dir/" markers) are skipped.
//
// Failures that may pass (5xx, 503 SlowDown, throttling, timeouts, resets, truncated
// bodies) are retried with backoff (RemoteOptions); other failures are IoError naming the
// URL, the HTTP status and S3's error code and message. A missing bucket is NotFoundError.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "zarrkit/store.h"
#include "zarrkit/stores/remote_options.h"

namespace zarrkit {

namespace remote {
class HttpTransport;
}

struct S3Options {
  RemoteOptions remote;
  bool read_only = false;
  // Overrides of what the environment and the AWS files say.
  std::optional<std::string> region;
  std::optional<std::string> endpoint_url;  // "http://127.0.0.1:9000"
  enum class Addressing { kAuto, kPath, kVirtual };
  std::optional<Addressing> addressing;
  bool anonymous = false;  // send unsigned requests even when credentials are configured
  // Values larger than this are written as multipart uploads of part_size bytes (at least
  // 5 MiB, S3's minimum; more when 10000 parts would not hold the value). Unset:
  // Config::remote's s3_multipart_threshold_bytes and s3_part_size_bytes (64 MiB and 16 MiB,
  // or ZARRKIT_S3_MULTIPART_THRESHOLD and ZARRKIT_S3_PART_SIZE).
  std::optional<std::uint64_t> multipart_threshold;
  std::optional<std::uint64_t> part_size;
  // Keys per ListObjectsV2 page (max-keys; S3 never sends more than 1000).
  std::size_t list_page_size = 1000;
};

// What S3 says about one object.
struct S3ObjectInfo {
  std::uint64_t size = 0;
  std::string etag;  // as the server sends it, quotes included
};

class S3Store : public Store {
 public:
  // `url`: "s3://bucket" or "s3://bucket/prefix". Sends no request.
  static std::shared_ptr<S3Store> open(std::string_view url, const S3Options& options = {});
  // Tests: a given transport instead of libcurl.
  static std::shared_ptr<S3Store> open(std::string_view url, const S3Options& options,
                                       std::shared_ptr<remote::HttpTransport> transport);
  ~S3Store() override;

  StoreCapabilities capabilities() const override;
  std::string describe() const override;
  // The endpoint (or AWS and the region), the bucket and the prefix.
  std::string cache_identity() const override;
  std::optional<Buffer> get(std::string_view key, const BufferPrototype& prototype = BufferPrototype::host(),
                            std::optional<ByteRange> range = std::nullopt) override;
  std::vector<std::optional<Buffer>> get_many(std::span<const std::string> keys,
                                              const BufferPrototype& prototype = BufferPrototype::host()) override;
  void get_each(std::span<const std::string> keys, const BufferPrototype& prototype,
                const ValueHandler& on_value) override;
  std::optional<std::vector<Buffer>> get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                const BufferPrototype& prototype = BufferPrototype::host()) override;
  bool exists(std::string_view key) override;
  std::optional<std::uint64_t> size(std::string_view key) override;
  void set(std::string_view key, ByteView value) override;
  void erase(std::string_view key) override;
  void erase_prefix(std::string_view prefix) override;
  std::vector<std::string> list(std::string_view prefix = "") override;
  DirListing list_dir(std::string_view prefix) override;

  // Copies the value of `from` to `to` on the server (CopyObject: the bytes do not pass
  // through this process), replacing what `to` held; NotFoundError when `from` is absent.
  // S3 copies objects of at most 5 GiB this way (kMaxCopyBytes); larger ones need get and set.
  void copy(std::string_view from, std::string_view to);
  static constexpr std::uint64_t kMaxCopyBytes = std::uint64_t{5} << 30;

  // ---- Conditional writes (optimistic concurrency) ----
  // HEAD: size and ETag, or nullopt when absent.
  std::optional<S3ObjectInfo> head(std::string_view key);
  // The value and its ETag, read in one request so that they belong together.
  std::optional<std::pair<Buffer, std::string>> get_with_etag(std::string_view key);
  // Writes only if the key does not exist (If-None-Match: *). False when it exists.
  bool set_if_absent(std::string_view key, ByteView value);
  // Writes only if the object's ETag is still `etag` (If-Match). False when it changed or
  // is gone. Together with get_with_etag: read, modify, write back, retry on false.
  bool set_if_match(std::string_view key, ByteView value, std::string_view etag);
  // Store::update with the two above: read the value and its ETag, write back only if the
  // ETag is unchanged (or, where it was absent, only if it still is), else again with the
  // newer value, up to kUpdateAttempts times with growing, jittered pauses. A change to an
  // empty value deletes unconditionally (S3 has no conditional DELETE for general buckets).
  void update(std::string_view key, const UpdateFunction& change) override;
  static constexpr int kUpdateAttempts = 64;

  struct Impl;

 private:
  explicit S3Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zarrkit
