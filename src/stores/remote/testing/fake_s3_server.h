// Tests only: an HttpTransport that behaves like a small S3 server for one endpoint
// (path-style URLs "http://fake-s3/BUCKET/KEY?QUERY"): objects, Range GETs, HEAD, DELETE,
// ListObjectsV2 (prefix, delimiter, max-keys, continuation tokens, encoding-type=url),
// DeleteObjects, multipart uploads, CopyObject, If-None-Match / If-Match. It checks what a real server
// checks on uploads (Content-MD5, x-amz-content-sha256, the checksum header) and records
// every request, and lets a test answer chosen requests with a failure instead.
#pragma once

#include <charconv>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "stores/remote/http_transport.h"
#include "stores/remote/sigv4.h"
#include "stores/remote/url.h"

namespace zarrkit::remote::testing {

class FakeS3Server final : public HttpTransport {
 public:
  static constexpr const char* kEndpoint = "http://fake-s3";

  std::set<std::string> buckets{"bucket"};
  std::map<std::string, std::string> objects;  // "bucket/key" -> value
  std::map<std::string, std::string> etags;
  std::map<std::string, std::map<int, std::string>> uploads;  // upload id -> part number -> bytes
  std::vector<HttpRequest> log;
  // Called first for every request; a response it returns is sent instead of the real one.
  std::function<std::optional<HttpResponse>(const HttpRequest&)> intercept;

  std::vector<HttpResponse> perform(std::span<const HttpRequest> requests) override {
    std::lock_guard lock(mutex_);
    std::vector<HttpResponse> out;
    for (const HttpRequest& r : requests) {
      log.push_back(r);
      if (intercept) {
        if (auto replaced = intercept(r)) {
          out.push_back(std::move(*replaced));
          continue;
        }
      }
      out.push_back(answer(r));
    }
    return out;
  }

  static HttpResponse respond(int status, std::string_view body = "",
                              std::vector<std::pair<std::string, std::string>> headers = {}) {
    HttpResponse r;
    r.status = status;
    r.headers = std::move(headers);
    if (!body.empty()) r.body = Buffer::copy_of(as_bytes(body));
    return r;
  }
  static HttpResponse error(int status, std::string_view code) {
    return respond(status, "<Error><Code>" + std::string(code) + "</Code><Message>fake " + std::string(code) +
                               "</Message></Error>");
  }

  static std::string header(const HttpRequest& r, std::string_view name) {
    for (const auto& [n, v] : r.headers) {
      std::string lower = n;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == name) return v;
    }
    return "";
  }

 private:
  using Query = std::map<std::string, std::string>;

  static Query parse_query(std::string_view q) {
    Query out;
    while (!q.empty()) {
      const std::size_t amp = q.find('&');
      std::string_view item = q.substr(0, amp);
      const std::size_t eq = item.find('=');
      out[uri_decode(item.substr(0, eq))] = eq == std::string_view::npos ? "" : uri_decode(item.substr(eq + 1));
      if (amp == std::string_view::npos) break;
      q.remove_prefix(amp + 1);
    }
    return out;
  }

  static std::string xml_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
      if (c == '&') out += "&amp;";
      else if (c == '<') out += "&lt;";
      else if (c == '>') out += "&gt;";
      else out += c;
    }
    return out;
  }

  // Uploads must carry a body that matches their digests, as S3 checks.
  static std::optional<HttpResponse> check_upload(const HttpRequest& r) {
    const std::string md5 = header(r, "content-md5");
    if (md5.empty() && header(r, "x-amz-checksum-sha256").empty()) return error(400, "MissingContentMD5");
    if (!md5.empty() && md5 != md5_base64(r.body)) return error(400, "BadDigest");
    const std::string sha = header(r, "x-amz-content-sha256");
    if (!sha.empty() && sha != sha256_hex(r.body)) return error(400, "XAmzContentSHA256Mismatch");
    const std::string checksum = header(r, "x-amz-checksum-sha256");
    if (!checksum.empty() && checksum != object_checksum("SHA-256", r.body)) return error(400, "BadDigest");
    return std::nullopt;
  }

  std::optional<HttpResponse> check_conditions(const HttpRequest& r, const std::string& name) {
    const bool exists = objects.contains(name);
    if (header(r, "if-none-match") == "*" && exists) return error(412, "PreconditionFailed");
    const std::string if_match = header(r, "if-match");
    if (!if_match.empty()) {
      if (!exists) return error(404, "NoSuchKey");
      if (if_match != etags[name]) return error(412, "PreconditionFailed");
    }
    return std::nullopt;
  }

  void store(const std::string& name, std::string value, std::string etag) {
    objects[name] = std::move(value);
    etags[name] = std::move(etag);
  }

  HttpResponse answer(const HttpRequest& r) {
    const Url url = parse_http_url(r.url);
    std::string path = uri_decode(url.path.substr(1));  // "bucket/key"
    const std::size_t slash = path.find('/');
    const std::string bucket = path.substr(0, slash);
    const std::string key = slash == std::string::npos ? "" : path.substr(slash + 1);
    const Query query = parse_query(url.query);
    if (!buckets.contains(bucket)) return error(404, "NoSuchBucket");
    if (key.empty()) return bucket_request(r, bucket, query);
    const std::string name = bucket + "/" + key;

    if (r.method == "PUT" && query.contains("partNumber")) {
      if (!uploads.contains(query.at("uploadId"))) return error(404, "NoSuchUpload");
      if (auto bad = check_upload(r)) return *bad;
      uploads[query.at("uploadId")][std::stoi(query.at("partNumber"))] = std::string(as_chars(r.body));
      return respond(200, "", {{"etag", "\"" + payload_digests(r.body).md5_hex + "\""}});
    }
    if (r.method == "PUT" && !header(r, "x-amz-copy-source").empty()) {  // CopyObject
      const std::string source = uri_decode(header(r, "x-amz-copy-source").substr(1));  // "/bucket/key"
      auto from = objects.find(source);
      if (from == objects.end()) return error(404, "NoSuchKey");
      store(name, from->second, etags[source]);
      return respond(200, "<CopyObjectResult><ETag>" + xml_escape(etags[source]) + "</ETag></CopyObjectResult>");
    }
    if (r.method == "PUT") {
      if (auto bad = check_upload(r)) return *bad;
      if (auto failed = check_conditions(r, name)) return *failed;
      const std::string etag = "\"" + payload_digests(r.body).md5_hex + "\"";
      store(name, std::string(as_chars(r.body)), etag);
      return respond(200, "", {{"etag", etag}});
    }
    if (r.method == "POST" && query.contains("uploads")) {
      const std::string id = "upload-" + std::to_string(next_upload_++);
      uploads[id];
      return respond(200, "<InitiateMultipartUploadResult><UploadId>" + id + "</UploadId></InitiateMultipartUploadResult>");
    }
    if (r.method == "POST" && query.contains("uploadId")) {
      auto upload = uploads.find(query.at("uploadId"));
      if (upload == uploads.end()) return error(404, "NoSuchUpload");
      if (auto failed = check_conditions(r, name)) return *failed;
      std::string value;
      for (const auto& [number, bytes] : upload->second) value += bytes;
      store(name, value, "\"multipart-" + std::to_string(upload->second.size()) + "\"");
      uploads.erase(upload);
      return respond(200, "<CompleteMultipartUploadResult><ETag>x</ETag></CompleteMultipartUploadResult>");
    }
    if (r.method == "DELETE" && query.contains("uploadId")) {
      uploads.erase(query.at("uploadId"));
      return respond(204);
    }
    if (r.method == "DELETE") {
      objects.erase(name);
      return respond(204);
    }
    auto object = objects.find(name);
    if (object == objects.end()) return r.method == "HEAD" ? respond(404) : error(404, "NoSuchKey");
    const std::string& value = object->second;
    std::vector<std::pair<std::string, std::string>> headers{{"etag", etags[name]}};
    if (r.method == "HEAD") {
      headers.emplace_back("content-length", std::to_string(value.size()));
      return respond(200, "", headers);
    }
    const std::string range = header(r, "range");
    if (range.empty()) {
      if (header(r, "x-amz-checksum-mode") == "ENABLED") {
        headers.emplace_back("x-amz-checksum-sha256", object_checksum("SHA-256", as_bytes(value)));
      }
      return respond(200, value, headers);
    }
    std::string_view spec = std::string_view(range).substr(6);
    const std::size_t dash = spec.find('-');
    auto number = [](std::string_view s) {
      std::uint64_t n = 0;
      std::from_chars(s.data(), s.data() + s.size(), n);
      return n;
    };
    std::uint64_t begin = 0;
    std::uint64_t end = value.size();
    if (dash == 0) {
      begin = value.size() - std::min<std::uint64_t>(number(spec.substr(1)), value.size());
    } else {
      begin = number(spec.substr(0, dash));
      if (dash + 1 < spec.size()) end = std::min<std::uint64_t>(number(spec.substr(dash + 1)) + 1, value.size());
    }
    if (begin >= value.size()) return error(416, "InvalidRange");
    headers.emplace_back("content-range", "bytes " + std::to_string(begin) + "-" + std::to_string(end - 1) + "/" +
                                              std::to_string(value.size()));
    return respond(206, std::string_view(value).substr(begin, end - begin), headers);
  }

  HttpResponse bucket_request(const HttpRequest& r, const std::string& bucket, const Query& query) {
    if (r.method == "POST" && query.contains("delete")) {
      if (header(r, "content-md5") != md5_base64(r.body)) return error(400, "BadDigest");
      std::string_view body = as_chars(r.body);
      for (std::size_t at = body.find("<Key>"); at != std::string_view::npos; at = body.find("<Key>", at + 1)) {
        const std::size_t end = body.find("</Key>", at);
        std::string key(body.substr(at + 5, end - at - 5));
        for (auto [from, to] : {std::pair{"&lt;", "<"}, std::pair{"&gt;", ">"}, std::pair{"&amp;", "&"}}) {
          for (std::size_t p = key.find(from); p != std::string::npos; p = key.find(from, p + 1)) {
            key.replace(p, std::string_view(from).size(), to);
          }
        }
        objects.erase(bucket + "/" + key);
      }
      return respond(200, "<DeleteResult></DeleteResult>");
    }
    if (r.method != "GET" || !query.contains("list-type")) return error(400, "NotImplemented");
    const std::string prefix = query.contains("prefix") ? query.at("prefix") : "";
    const std::string delimiter = query.contains("delimiter") ? query.at("delimiter") : "";
    const std::size_t max_keys = query.contains("max-keys") ? std::stoul(query.at("max-keys")) : 1000;
    const std::string after = query.contains("continuation-token") ? query.at("continuation-token") : "";
    const bool url = query.contains("encoding-type");
    std::string contents;
    std::set<std::string> common;
    std::size_t count = 0;
    std::string last;
    bool truncated = false;
    for (const auto& [name, value] : objects) {
      if (!name.starts_with(bucket + "/")) continue;
      const std::string key = name.substr(bucket.size() + 1);
      if (!key.starts_with(prefix) || (!after.empty() && key <= after)) continue;
      if (count == max_keys) {
        truncated = true;
        break;
      }
      const std::size_t cut = delimiter.empty() ? std::string::npos : key.find(delimiter, prefix.size());
      if (cut != std::string::npos) {
        const std::string p = key.substr(0, cut + 1);
        if (common.insert(p).second) ++count;
      } else {
        contents += "<Contents><Key>" + xml_escape(url ? uri_encode(key, true) : key) + "</Key><Size>" +
                    std::to_string(value.size()) + "</Size></Contents>";
        ++count;
      }
      last = key;
    }
    std::string xml = "<ListBucketResult>";
    if (url) xml += "<EncodingType>url</EncodingType>";
    xml += std::string("<IsTruncated>") + (truncated ? "true" : "false") + "</IsTruncated>";
    if (truncated) xml += "<NextContinuationToken>" + xml_escape(last) + "</NextContinuationToken>";
    xml += contents;
    for (const std::string& p : common) {
      xml += "<CommonPrefixes><Prefix>" + xml_escape(url ? uri_encode(p, true) : p) + "</Prefix></CommonPrefixes>";
    }
    return respond(200, xml + "</ListBucketResult>");
  }

  std::mutex mutex_;
  int next_upload_ = 1;
};

}  // namespace zarrkit::remote::testing
