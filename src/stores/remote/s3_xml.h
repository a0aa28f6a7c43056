// The XML documents of the S3 API that the store reads and writes (pugixml underneath).
// Parsers never trust the document's shape: missing elements become typed errors or empty
// results, never crashes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zarrkit/buffer.h"

namespace zarrkit::remote {

// <Error><Code/><Message/><Region/></Error>; nullopt when the body is not such a document.
struct S3Error {
  std::string code;
  std::string message;
  std::string region;  // for wrong-region errors
};
std::optional<S3Error> parse_s3_error(ByteView body);

// ListObjectsV2 (ListBucketResult). Keys and prefixes are URL-decoded when the response
// says EncodingType url. nullopt when the body is not a ListBucketResult.
struct S3ListPage {
  std::vector<std::string> keys;
  std::vector<std::string> prefixes;  // CommonPrefixes, with their trailing delimiter
  bool truncated = false;
  std::string next_token;
};
std::optional<S3ListPage> parse_list_page(ByteView body);

// InitiateMultipartUploadResult's UploadId; nullopt when absent.
std::optional<std::string> parse_upload_id(ByteView body);

// <Delete><Quiet>true</Quiet><Object><Key>k</Key></Object>...</Delete>
std::string delete_objects_xml(const std::vector<std::string>& keys);
// DeleteResult's <Error> entries (Quiet mode lists only failures).
struct S3DeleteFailure {
  std::string key;
  std::string code;
  std::string message;
};
std::optional<std::vector<S3DeleteFailure>> parse_delete_result(ByteView body);

// <CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"..."</ETag></Part>...
std::string complete_multipart_xml(const std::vector<std::string>& etags);

}  // namespace zarrkit::remote
