// Where S3 requests for one bucket go: the endpoint (AWS's regional one, or a custom
// S3-compatible server) and the addressing style.
//
//   virtual-hosted  https://BUCKET.s3.REGION.amazonaws.com/KEY
//   path-style      https://s3.REGION.amazonaws.com/BUCKET/KEY   (and every custom endpoint
//                   unless virtual-hosted is asked for: http://127.0.0.1:9000/BUCKET/KEY)
//
// "auto" (boto3's default) is virtual-hosted on AWS when the bucket name is a DNS label
// (no dots over https), else path-style; with a custom endpoint it is path-style. Asking for
// virtual-hosted with an endpoint that is an IP address falls back to path-style.
#pragma once

#include <optional>
#include <string>

#include "stores/remote/aws_config.h"
#include "stores/remote/sigv4.h"
#include "stores/remote/url.h"

namespace zarrkit::remote {

struct S3Target {
  std::string url;            // with the query string
  std::string host;           // the Host header
  std::string canonical_uri;  // the encoded path, for the signature
};

class S3Endpoint {
 public:
  S3Endpoint(std::string bucket, const std::string& region, const std::optional<std::string>& endpoint_url,
             AddressingStyle style);

  // An object key ("" for a request on the bucket itself) and its query parameters.
  S3Target target(std::string_view object_key, const QueryList& query) const;

  const std::string& bucket() const { return bucket_; }
  bool virtual_hosted() const { return virtual_hosted_; }
  bool custom() const { return custom_; }

 private:
  std::string bucket_;
  Url base_;             // scheme, host (with the bucket when virtual-hosted), port, path prefix
  bool virtual_hosted_ = false;
  bool custom_ = false;
};

}  // namespace zarrkit::remote
