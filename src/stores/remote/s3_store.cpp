#include "zarrkit/stores/s3_store.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "stores/remote/aws_config.h"
#include "stores/remote/object_reader.h"
#include "stores/remote/s3_endpoint.h"
#include "stores/remote/s3_xml.h"
#include "stores/remote/sigv4.h"
#include "stores/remote/url.h"
#include "zarrkit/config.h"
#include "zarrkit/error.h"

namespace zarrkit {

using namespace remote;

namespace {

constexpr std::uint64_t kMinPartSize = 5 * 1024 * 1024;
constexpr std::uint64_t kMaxParts = 10000;
constexpr std::size_t kDeleteBatch = 1000;
constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// S3 error codes that mean "try again later".
bool retryable_code(std::string_view code) {
  return code == "SlowDown" || code == "RequestTimeout" || code == "InternalError" || code == "ServiceUnavailable" ||
         code == "Throttling" || code == "ThrottlingException" || code == "RequestLimitExceeded" ||
         code == "ConditionalRequestConflict" || code == "OperationAborted";
}

// Whole-object GETs with x-amz-checksum-mode: ENABLED come with the checksum the server
// keeps for the object, if it was uploaded with one: SHA-256 (zarrkit's uploads), CRC32
// (boto3's and s3fs's default), SHA-1. Composite checksums of multipart uploads ("...-N")
// and algorithms without a library here (CRC32C, CRC64NVME) are not checked.
std::optional<std::string> checksum_mismatch(const HttpResponse& r) {
  const std::string type(r.header("x-amz-checksum-type").value_or("FULL_OBJECT"));
  if (type != "FULL_OBJECT") return std::nullopt;
  const ByteView body = r.body.empty() ? ByteView() : r.body.view();
  for (const auto& [algorithm, header] : {std::pair{"SHA-256", "x-amz-checksum-sha256"},
                                          std::pair{"CRC32", "x-amz-checksum-crc32"},
                                          std::pair{"SHA-1", "x-amz-checksum-sha1"}}) {
    auto stored = r.header(header);
    if (!stored || stored->find('-') != std::string_view::npos) continue;
    const std::string actual = object_checksum(algorithm, body);
    if (actual != *stored) {
      return fmt::format("the body's {} {} does not match the {} the server stored", algorithm, actual, *stored);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

bool error_is(const std::optional<S3Error>& error, std::string_view code) { return error && error->code == code; }

// A precondition header for a write, or none.
using Precondition = std::optional<std::pair<std::string, std::string>>;

}  // namespace

struct S3Store::Impl final : ObjectProtocol {
  S3Options options;
  std::uint64_t multipart_threshold = 0;
  std::uint64_t part_size = 0;
  AwsSettings aws;
  std::optional<S3Endpoint> endpoint;
  std::string prefix;  // "" or "a/b", without slashes at either end
  std::string description;
  RemoteSettings settings;
  ObjectReader reader{*this, settings, description};

  std::string object_key(std::string_view key) const {
    return prefix.empty() ? std::string(key) : prefix + "/" + std::string(key);
  }
  // The ListObjectsV2 prefix for the store directory `dir` (normalized): "prefix/dir/".
  std::string list_prefix(std::string_view dir) const {
    std::string full = join_key(prefix, dir);
    return full.empty() ? full : full + "/";
  }

  HttpRequest make(std::string method, std::string_view key, const QueryList& query, HeaderList headers = {},
                   ByteView body = {}, std::string payload_sha256 = "") const {
    const S3Target target = endpoint->target(key, query);
    HttpRequest r;
    r.method = std::move(method);
    r.url = target.url;
    r.body = body;
    r.follow_redirects = false;  // a redirect means a wrong region: report it
    headers.emplace_back("Host", target.host);
    if (!aws.credentials.anonymous()) {
      if (payload_sha256.empty()) payload_sha256 = body.empty() ? kEmptySha256 : sha256_hex(body);
      const std::string date = amz_date(std::chrono::system_clock::now());
      headers.emplace_back("x-amz-date", date);
      headers.emplace_back("x-amz-content-sha256", payload_sha256);
      if (!aws.credentials.session_token.empty()) {
        headers.emplace_back("x-amz-security-token", aws.credentials.session_token);
      }
      const SigningInput input{r.method, target.canonical_uri, query, headers, payload_sha256};
      headers.emplace_back("Authorization",
                           authorization_header(input, {aws.region, "s3", date}, aws.credentials));
    }
    r.headers = std::move(headers);
    return r;
  }

  // "HTTP 503 SlowDown: Please reduce your request rate."
  static std::string failure_text(const HttpResponse& r) {
    auto error = parse_s3_error(r.body.empty() ? ByteView() : r.body.view());
    if (!error || error->code.empty()) return fmt::format("HTTP {}", r.status);
    if (error->message.empty()) return fmt::format("HTTP {} {}", r.status, error->code);
    return fmt::format("HTTP {} {}: {}", r.status, error->code, error->message);
  }

  // The verdict on everything but the successes and the answers each operation judges
  // itself (404 on objects, 412, 416): nullopt for those.
  std::optional<Verdict> verdict(const HttpResponse& r) const override {
    if (auto v = transport_verdict(r)) return v;
    if (r.status >= 200 && r.status < 300) return std::nullopt;
    auto error = parse_s3_error(r.body.empty() ? ByteView() : r.body.view());
    const std::string code = error ? error->code : "";
    if (r.status == 404) {
      if (code == "NoSuchBucket") {
        return Verdict::fail(fmt::format("the bucket \"{}\" does not exist", endpoint->bucket()), ErrorCode::kNotFound);
      }
      if (code == "NoSuchUpload") return Verdict::fail(failure_text(r));
      return std::nullopt;
    }
    if (r.status == 412 || r.status == 416) return std::nullopt;
    if (retryable_status(r.status) || retryable_code(code)) return Verdict::retry(failure_text(r));
    std::string region(r.header("x-amz-bucket-region").value_or(""));
    if (region.empty() && error) region = error->region;
    if (!region.empty() && region != aws.region) {
      return Verdict::fail(fmt::format("{}: the bucket \"{}\" is in region {}, not {}; set AWS_REGION={}",
                                       failure_text(r), endpoint->bucket(), region, aws.region, region));
    }
    if (r.status == 401 || r.status == 403) {
      return Verdict::fail(fmt::format("{} (credentials: {})", failure_text(r), aws.credentials_source));
    }
    return Verdict::fail(failure_text(r));
  }

  std::vector<HttpResponse> run(std::span<const HttpRequest> requests, const Judge& judge) const {
    return perform_with_retries(settings.transport->get(), requests, judge, settings.retry);
  }

  HttpResponse run_one(const HttpRequest& request, const Judge& judge) const {
    return std::move(run(std::span(&request, 1), judge).front());
  }

  void require_writable(std::string_view what, std::string_view key) const {
    if (options.read_only) fail_invalid("{}: cannot {} \"{}\": the store is open read-only", description, what, key);
  }

  // ---- reads (ObjectReader) ----

  HttpRequest head_request(std::string_view key) const override { return make("HEAD", object_key(key), {}); }
  // Whole values come with the checksum S3 keeps for objects uploaded with one.
  HttpRequest get_request(std::string_view key, const std::optional<std::string>& range) const override {
    if (!range) return make("GET", object_key(key), {}, {{"x-amz-checksum-mode", "ENABLED"}});
    return make("GET", object_key(key), {}, {{"Range", *range}});
  }
  bool absent(const HttpResponse& r) const override { return r.status == 404; }
  Verdict unexpected(const HttpResponse& r) const override { return Verdict::fail(failure_text(r)); }
  std::optional<Verdict> check_whole(const HttpResponse& r) const override {
    if (auto mismatch = checksum_mismatch(r)) return Verdict::retry(*mismatch, ErrorCode::kDataLoss);
    return std::nullopt;
  }
  bool head_needs_length() const override { return true; }

  std::optional<S3ObjectInfo> head(std::string_view key) const {
    const std::optional<ObjectHead> info = reader.head(key);
    if (!info) return std::nullopt;
    return S3ObjectInfo{*info->size, info->etag};
  }

  // ---- writes ----

  // One PUT. False when the precondition failed.
  bool put_single(std::string_view key, ByteView value, const Precondition& precondition) const {
    const PayloadDigests digests = payload_digests(value);
    HeaderList headers{{"Content-MD5", digests.md5_base64},
                       {"Content-Type", "application/octet-stream"},
                       {"x-amz-checksum-sha256", digests.sha256_base64},
                       {"x-amz-sdk-checksum-algorithm", "SHA256"}};
    if (precondition) headers.push_back(*precondition);
    int tries = 0;
    HttpResponse r = run_one(make("PUT", object_key(key), {}, headers, value, digests.sha256_hex),
                             [&](std::size_t, HttpResponse& response) {
                               ++tries;
                               if (auto v = verdict(response)) return *v;
                               // 412, or 404 for If-Match on a missing object: not written.
                               if ((response.status == 412 || response.status == 404) && precondition) {
                                 return Verdict::accept();
                               }
                               if (response.status != 200) return Verdict::fail(failure_text(response));
                               return Verdict::accept();
                             });
    if (r.status == 200) return true;
    // A retried conditional write may find its own earlier try, whose answer was lost: the
    // object then holds exactly this value (S3's ETag of a single-part upload is its MD5).
    if (tries > 1) {
      auto info = head(key);
      if (info && info->size == value.size() && info->etag == "\"" + digests.md5_hex + "\"") return true;
    }
    return false;
  }

  bool put_multipart(std::string_view key, ByteView value, const Precondition& precondition) const {
    const std::string object = object_key(key);
    HttpResponse created = run_one(
        make("POST", object, {{"uploads", ""}}, {{"Content-Type", "application/octet-stream"}}),
        [&](std::size_t, HttpResponse& r) {
          if (auto v = verdict(r)) return *v;
          if (r.status != 200) return Verdict::fail(failure_text(r));
          if (!parse_upload_id(r.body.empty() ? ByteView() : r.body.view())) {
            return Verdict::retry("CreateMultipartUpload answered without an UploadId");
          }
          return Verdict::accept();
        });
    const std::string upload_id = *parse_upload_id(created.body.view());
    try {
      return upload_parts(key, object, upload_id, value, precondition);
    } catch (...) {
      abort_upload(object, upload_id);
      throw;
    }
  }

  bool upload_parts(std::string_view store_key, const std::string& object, const std::string& upload_id, ByteView value,
                    const Precondition& precondition) const {
    const std::uint64_t part_bytes =
        std::max({part_size, kMinPartSize, (value.size() + kMaxParts - 1) / kMaxParts});
    const std::size_t parts = static_cast<std::size_t>((value.size() + part_bytes - 1) / part_bytes);
    std::vector<HttpRequest> requests;
    requests.reserve(parts);
    for (std::size_t i = 0; i < parts; ++i) {
      const std::size_t begin = static_cast<std::size_t>(i * part_bytes);
      const ByteView body = value.subspan(begin, std::min<std::size_t>(static_cast<std::size_t>(part_bytes),
                                                                         value.size() - begin));
      const PayloadDigests digests = payload_digests(body);
      requests.push_back(make("PUT", object, {{"partNumber", std::to_string(i + 1)}, {"uploadId", upload_id}},
                              {{"Content-MD5", digests.md5_base64}}, body, digests.sha256_hex));
    }
    auto responses = run(requests, [&](std::size_t, HttpResponse& r) {
      if (auto v = verdict(r)) return *v;
      if (r.status != 200) return Verdict::fail(failure_text(r));
      if (!r.header("etag")) return Verdict::retry("UploadPart answered without an ETag");
      return Verdict::accept();
    });
    std::vector<std::string> etags;
    for (const HttpResponse& r : responses) etags.emplace_back(*r.header("etag"));

    const std::string xml = complete_multipart_xml(etags);
    HeaderList headers{{"Content-Type", "application/xml"}};
    if (precondition) headers.push_back(*precondition);
    int tries = 0;
    bool finished_earlier = false;
    HttpResponse done = run_one(
        make("POST", object, {{"uploadId", upload_id}}, headers, as_bytes(xml)), [&](std::size_t, HttpResponse& r) {
          ++tries;
          auto error = parse_s3_error(r.body.empty() ? ByteView() : r.body.view());
          // A retry of a Complete whose answer was lost finds the upload already finished.
          if (r.status == 404 && error_is(error, "NoSuchUpload") && tries > 1) {
            finished_earlier = true;
            return Verdict::accept();
          }
          if (auto v = verdict(r)) return *v;
          if ((r.status == 412 || (r.status == 404 && !error_is(error, "NoSuchUpload"))) && precondition) {
            return Verdict::accept();
          }
          if (r.status != 200) return Verdict::fail(failure_text(r));
          // S3 may answer 200 and report the failure in the body.
          if (error) {
            if (retryable_code(error->code)) return Verdict::retry("CompleteMultipartUpload: " + error->code);
            return Verdict::fail(fmt::format("CompleteMultipartUpload failed: {}: {}", error->code, error->message));
          }
          return Verdict::accept();
        });
    if (finished_earlier) {
      auto info = head(store_key);
      if (!info || info->size != value.size()) {
        fail_io("{}: the multipart upload of \"{}\" vanished before it completed", description, object);
      }
      return true;
    }
    return done.status == 200;
  }

  void abort_upload(const std::string& object, const std::string& upload_id) const noexcept {
    try {
      run_one(make("DELETE", object, {{"uploadId", upload_id}}), [&](std::size_t, HttpResponse& r) {
        if (auto v = transport_verdict(r)) return *v;
        return Verdict::accept();  // best effort: S3 lifecycle rules clean up what remains
      });
    } catch (...) {
    }
  }

  bool write(std::string_view key, ByteView value, const Precondition& precondition) const {
    validate_key(key);
    require_writable("write", key);
    if (value.size() > multipart_threshold) return put_multipart(key, value, precondition);
    return put_single(key, value, precondition);
  }

  // ---- listing ----

  // Every object under `query_prefix` (raw object keys), and with a delimiter the common
  // prefixes too.
  S3ListPage list_objects(const std::string& query_prefix, bool delimited) const {
    S3ListPage all;
    std::string token;
    std::set<std::string> seen_tokens;
    for (;;) {
      QueryList query{{"list-type", "2"},
                      {"encoding-type", "url"},
                      {"prefix", query_prefix},
                      {"max-keys", std::to_string(std::clamp<std::size_t>(options.list_page_size, 1, 1000))}};
      if (delimited) query.emplace_back("delimiter", "/");
      if (!token.empty()) query.emplace_back("continuation-token", token);
      std::optional<S3ListPage> page;
      run_one(make("GET", "", query), [&](std::size_t, HttpResponse& r) {
        if (auto v = verdict(r)) return *v;
        if (r.status != 200) return Verdict::fail(failure_text(r));
        page = parse_list_page(r.body.empty() ? ByteView() : r.body.view());
        if (!page) return Verdict::retry("a malformed ListObjectsV2 answer");
        return Verdict::accept();
      });
      for (auto& key : page->keys) all.keys.push_back(std::move(key));
      for (auto& p : page->prefixes) all.prefixes.push_back(std::move(p));
      if (!page->truncated) break;
      if (page->next_token.empty() || !seen_tokens.insert(page->next_token).second) {
        fail_io("{}: listing \"{}\": the server says the list continues but gives no new continuation token",
                description, query_prefix);
      }
      token = page->next_token;
    }
    return all;
  }
};

S3Store::S3Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
S3Store::~S3Store() = default;

std::shared_ptr<S3Store> S3Store::open(std::string_view url, const S3Options& options) {
  return open(url, options, nullptr);
}

std::shared_ptr<S3Store> S3Store::open(std::string_view url, const S3Options& options,
                                       std::shared_ptr<HttpTransport> transport) {
  const S3Location location = parse_s3_url(url);
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  const RemoteConfig& settings = current_config().remote;
  impl->multipart_threshold = options.multipart_threshold.value_or(settings.s3_multipart_threshold_bytes);
  impl->part_size = options.part_size.value_or(settings.s3_part_size_bytes);
  impl->aws = resolve_aws_settings();
  if (options.region) impl->aws.region = *options.region;
  if (options.endpoint_url) impl->aws.endpoint_url = *options.endpoint_url;
  if (options.addressing) {
    impl->aws.addressing = *options.addressing == S3Options::Addressing::kPath      ? AddressingStyle::kPath
                           : *options.addressing == S3Options::Addressing::kVirtual ? AddressingStyle::kVirtual
                                                                                    : AddressingStyle::kAuto;
  }
  if (options.anonymous) {
    impl->aws.credentials = {};
    impl->aws.credentials_source = "anonymous (requested)";
  }
  impl->endpoint.emplace(location.bucket, impl->aws.region, impl->aws.endpoint_url, impl->aws.addressing);
  impl->prefix = location.prefix;
  impl->description = "s3://" + location.bucket + (location.prefix.empty() ? "" : "/" + location.prefix);
  impl->settings = resolve_remote_settings(options.remote, std::move(transport));
  return std::shared_ptr<S3Store>(new S3Store(std::move(impl)));
}

StoreCapabilities S3Store::capabilities() const {
  return {.writable = !impl_->options.read_only,
          .listable = true,
          .partial_reads = true,
          .batched_gets = true,
          .requests_in_flight = impl_->settings.concurrency};
}

std::string S3Store::describe() const { return impl_->description; }

std::string S3Store::cache_identity() const {
  const std::string server = impl_->aws.endpoint_url ? *impl_->aws.endpoint_url : "aws:" + impl_->aws.region;
  return "s3://" + server + "|" + impl_->endpoint->bucket() + "/" + (impl_->prefix.empty() ? "" : impl_->prefix + "/");
}

std::optional<Buffer> S3Store::get(std::string_view key, const BufferPrototype& prototype,
                                   std::optional<ByteRange> range) {
  return impl_->reader.get(key, prototype, range);
}

std::vector<std::optional<Buffer>> S3Store::get_many(std::span<const std::string> keys,
                                                    const BufferPrototype& prototype) {
  return impl_->reader.get_many(keys, prototype);
}

void S3Store::get_each(std::span<const std::string> keys, const BufferPrototype& prototype,
                       const ValueHandler& on_value) {
  impl_->reader.get_each(keys, prototype, on_value);
}

std::optional<std::vector<Buffer>> S3Store::get_ranges(std::string_view key, std::span<const ByteRange> ranges,
                                                       const BufferPrototype& prototype) {
  return impl_->reader.get_ranges(key, ranges, prototype);
}

bool S3Store::exists(std::string_view key) { return impl_->reader.exists(key); }

std::optional<std::uint64_t> S3Store::size(std::string_view key) { return impl_->reader.size(key); }

void S3Store::set(std::string_view key, ByteView value) {
  const WriteScope written(*this, key);
  impl_->write(key, value, std::nullopt);
}

void S3Store::erase(std::string_view key) {
  validate_key(key);
  impl_->require_writable("erase", key);
  const WriteScope erased(*this, key);
  impl_->run_one(impl_->make("DELETE", impl_->object_key(key), {}), [&](std::size_t, HttpResponse& r) {
    if (auto v = impl_->verdict(r)) return *v;
    return Verdict::accept();  // 204, or 404: absent already
  });
}

void S3Store::erase_prefix(std::string_view prefix) {
  const std::string_view dir = normalize_prefix(prefix);
  impl_->require_writable("erase", prefix);
  const WriteScope erased(*this, dir, /*below=*/true);
  // Raw object names, so that objects whose names are not valid keys go too.
  const std::string query_prefix = impl_->list_prefix(dir);
  std::vector<std::string> objects = impl_->list_objects(query_prefix, false).keys;
  std::vector<std::string> bodies;
  for (std::size_t begin = 0; begin < objects.size(); begin += kDeleteBatch) {
    const std::size_t end = std::min(objects.size(), begin + kDeleteBatch);
    bodies.push_back(delete_objects_xml({objects.begin() + static_cast<std::ptrdiff_t>(begin),
                                         objects.begin() + static_cast<std::ptrdiff_t>(end)}));
  }
  std::vector<HttpRequest> requests;
  for (const std::string& body : bodies) {
    requests.push_back(impl_->make("POST", "", {{"delete", ""}},
                                   {{"Content-MD5", md5_base64(as_bytes(body))}, {"Content-Type", "application/xml"}},
                                   as_bytes(body)));
  }
  impl_->run(requests, [&](std::size_t, HttpResponse& r) {
    if (auto v = impl_->verdict(r)) return *v;
    if (r.status != 200) return Verdict::fail(Impl::failure_text(r));
    auto failures = parse_delete_result(r.body.empty() ? ByteView() : r.body.view());
    if (!failures) return Verdict::retry("a malformed DeleteObjects answer");
    if (!failures->empty()) {
      const S3DeleteFailure& f = failures->front();
      return Verdict::fail(fmt::format("{} of the objects could not be deleted; \"{}\": {}: {}", failures->size(),
                                       f.key, f.code, f.message));
    }
    return Verdict::accept();
  });
}

std::vector<std::string> S3Store::list(std::string_view prefix) {
  const std::string_view dir = normalize_prefix(prefix);
  const std::string query_prefix = impl_->list_prefix(dir);
  const std::size_t strip = impl_->prefix.empty() ? 0 : impl_->prefix.size() + 1;
  std::vector<std::string> keys;
  for (const std::string& object : impl_->list_objects(query_prefix, false).keys) {
    if (object.size() <= strip || !object.starts_with(query_prefix)) continue;
    std::string key = object.substr(strip);
    try {
      validate_key(key);
    } catch (const InvalidArgumentError&) {
      continue;  // not a store key ("a//b", a "dir/" marker)
    }
    keys.push_back(std::move(key));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

DirListing S3Store::list_dir(std::string_view prefix) {
  const std::string_view dir = normalize_prefix(prefix);
  const std::string query_prefix = impl_->list_prefix(dir);
  const S3ListPage page = impl_->list_objects(query_prefix, true);
  auto usable_name = [&](std::string_view full, bool is_prefix) -> std::optional<std::string> {
    if (!full.starts_with(query_prefix)) return std::nullopt;
    std::string_view name = full.substr(query_prefix.size());
    if (is_prefix) {
      if (!name.ends_with('/')) return std::nullopt;
      name.remove_suffix(1);
    }
    if (name.empty() || name.find('/') != std::string_view::npos) return std::nullopt;
    try {
      validate_key(name);
    } catch (const InvalidArgumentError&) {
      return std::nullopt;
    }
    return std::string(name);
  };
  DirListing listing;
  for (const std::string& key : page.keys) {
    if (auto name = usable_name(key, false)) listing.keys.push_back(std::move(*name));
  }
  for (const std::string& p : page.prefixes) {
    if (auto name = usable_name(p, true)) listing.prefixes.push_back(std::move(*name));
  }
  // Sorted, and each name once even if a server repeats a common prefix across pages.
  for (auto* names : {&listing.keys, &listing.prefixes}) {
    std::sort(names->begin(), names->end());
    names->erase(std::unique(names->begin(), names->end()), names->end());
  }
  return listing;
}

void S3Store::copy(std::string_view from, std::string_view to) {
  validate_key(from);
  validate_key(to);
  impl_->require_writable("copy to", to);
  const std::string source = "/" + impl_->endpoint->bucket() + "/" + uri_encode(impl_->object_key(from), true);
  bool missing = false;
  impl_->run_one(impl_->make("PUT", impl_->object_key(to), {}, {{"x-amz-copy-source", source}}),
                 [&](std::size_t, HttpResponse& r) {
                   if (auto v = impl_->verdict(r)) return *v;
                   if (r.status == 404) {
                     missing = true;
                     return Verdict::accept();
                   }
                   if (r.status != 200) return Verdict::fail(Impl::failure_text(r));
                   // S3 may answer 200 and report the failure in the body.
                   if (auto error = parse_s3_error(r.body.empty() ? ByteView() : r.body.view())) {
                     if (retryable_code(error->code)) return Verdict::retry("CopyObject: " + error->code);
                     return Verdict::fail(fmt::format("CopyObject failed: {}: {}", error->code, error->message));
                   }
                   return Verdict::accept();
                 });
  if (missing) fail_not_found("{}: cannot copy \"{}\" to \"{}\": there is no such object", describe(), from, to);
}

std::optional<S3ObjectInfo> S3Store::head(std::string_view key) {
  validate_key(key);
  return impl_->head(key);
}

std::optional<std::pair<Buffer, std::string>> S3Store::get_with_etag(std::string_view key) {
  validate_key(key);
  return impl_->reader.get_with_etag(key);
}

bool S3Store::set_if_absent(std::string_view key, ByteView value) {
  const WriteScope written(*this, key);
  return impl_->write(key, value, std::pair<std::string, std::string>("If-None-Match", "*"));
}

void S3Store::update(std::string_view key, const UpdateFunction& change) {
  std::minstd_rand jitter(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    auto current = get_with_etag(key);
    std::optional<Buffer> next = change(current ? std::optional<Buffer>(current->first) : std::nullopt);
    if (!next) {
      erase(key);
      return;
    }
    bool written = false;
    if (!current) {
      written = set_if_absent(key, next->view());
    } else if (current->second.empty()) {
      set(key, next->view());  // a server that sends no ETag cannot be asked for a condition
      written = true;
    } else {
      written = set_if_match(key, next->view(), current->second);
    }
    if (written) return;
    if (attempt == kUpdateAttempts) {
      fail_io("{}: \"{}\" changed under each of {} read-modify-write attempts (other writers keep updating it); "
              "nothing was written",
              describe(), key, kUpdateAttempts);
    }
    // Another writer got in between: back off (1 ms doubling to 128 ms, jittered) and retry.
    const int ms = 1 << std::min(attempt - 1, 7);
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(ms * 500, ms * 1000)(jitter)));
  }
}

bool S3Store::set_if_match(std::string_view key, ByteView value, std::string_view etag) {
  if (etag.empty()) fail_invalid("{}: set_if_match on \"{}\" needs an ETag", describe(), key);
  const WriteScope written(*this, key);
  return impl_->write(key, value, std::pair<std::string, std::string>("If-Match", std::string(etag)));
}

}  // namespace zarrkit
