#include "stores/remote/s3_endpoint.h"

#include <cctype>

#include "zarrkit/error.h"

namespace zarrkit::remote {
namespace {

bool is_ip_literal(std::string_view host) {
  if (host.starts_with('[')) return true;
  for (char c : host) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  }
  return true;
}

}  // namespace

S3Endpoint::S3Endpoint(std::string bucket, const std::string& region, const std::optional<std::string>& endpoint_url,
                       AddressingStyle style)
    : bucket_(std::move(bucket)) {
  if (region.empty() || region.find_first_of("/:?#@ ") != std::string::npos) {
    fail_invalid("\"{}\" is not an AWS region name", region);
  }
  custom_ = endpoint_url.has_value();
  base_ = custom_ ? parse_http_url(*endpoint_url) : parse_http_url("https://s3." + region + ".amazonaws.com");
  if (!base_.query.empty()) fail_invalid("the S3 endpoint URL \"{}\" must not have a query string", *endpoint_url);
  while (!base_.path.empty() && base_.path.back() == '/') base_.path.pop_back();
  const bool https = base_.scheme == "https";
  switch (style) {
    case AddressingStyle::kAuto:
      virtual_hosted_ = !custom_ && is_virtual_host_bucket(bucket_, https);
      break;
    case AddressingStyle::kPath:
      virtual_hosted_ = false;
      break;
    case AddressingStyle::kVirtual:
      virtual_hosted_ = is_virtual_host_bucket(bucket_, false) && !is_ip_literal(base_.host);
      break;
  }
  if (virtual_hosted_) base_.host = bucket_ + "." + base_.host;
}

S3Target S3Endpoint::target(std::string_view object_key, const QueryList& query) const {
  std::string path = base_.path;
  if (!virtual_hosted_) path += "/" + uri_encode(bucket_, false);
  path += "/" + uri_encode(object_key, /*keep_slash=*/true);
  S3Target t;
  t.host = base_.authority();
  t.canonical_uri = path;
  t.url = base_.scheme + "://" + t.host + path;
  if (!query.empty()) t.url += "?" + canonical_query_string(query);
  return t;
}

}  // namespace zarrkit::remote
