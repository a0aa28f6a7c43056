#include "stores/remote/s3_xml.h"

#include <pugixml.hpp>

#include <sstream>

#include "stores/remote/url.h"
#include "zarrkit/error.h"

namespace zarrkit::remote {
namespace {

// Parses `body`; the document element when it is named `root`, else an empty node.
pugi::xml_node load(pugi::xml_document& doc, ByteView body, const char* root) {
  if (body.empty()) return {};
  const pugi::xml_parse_result ok = doc.load_buffer(body.data(), body.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!ok) return {};
  pugi::xml_node element = doc.document_element();
  if (std::string_view(element.name()) != root) return {};
  return element;
}

std::string text(const pugi::xml_node& node, const char* child) { return node.child(child).text().as_string(); }

std::string to_string(const pugi::xml_document& doc) {
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw | pugi::format_no_declaration);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>" + out.str();
}

constexpr const char* kNamespace = "http://s3.amazonaws.com/doc/2006-03-01/";

}  // namespace

std::optional<S3Error> parse_s3_error(ByteView body) {
  pugi::xml_document doc;
  pugi::xml_node error = load(doc, body, "Error");
  if (!error) return std::nullopt;
  return S3Error{text(error, "Code"), text(error, "Message"), text(error, "Region")};
}

std::optional<S3ListPage> parse_list_page(ByteView body) {
  pugi::xml_document doc;
  pugi::xml_node result = load(doc, body, "ListBucketResult");
  if (!result) return std::nullopt;
  const bool url_encoded = text(result, "EncodingType") == "url";
  auto decode = [&](std::string value) { return url_encoded ? uri_decode(value) : value; };
  S3ListPage page;
  for (pugi::xml_node contents : result.children("Contents")) page.keys.push_back(decode(text(contents, "Key")));
  for (pugi::xml_node common : result.children("CommonPrefixes")) {
    page.prefixes.push_back(decode(text(common, "Prefix")));
  }
  page.truncated = text(result, "IsTruncated") == "true";
  page.next_token = text(result, "NextContinuationToken");
  return page;
}

std::optional<std::string> parse_upload_id(ByteView body) {
  pugi::xml_document doc;
  pugi::xml_node result = load(doc, body, "InitiateMultipartUploadResult");
  std::string id = text(result, "UploadId");
  if (id.empty()) return std::nullopt;
  return id;
}

std::string delete_objects_xml(const std::vector<std::string>& keys) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("Delete");
  root.append_attribute("xmlns") = kNamespace;
  root.append_child("Quiet").text() = "true";
  for (const std::string& key : keys) root.append_child("Object").append_child("Key").text() = key.c_str();
  return to_string(doc);
}

std::optional<std::vector<S3DeleteFailure>> parse_delete_result(ByteView body) {
  pugi::xml_document doc;
  pugi::xml_node result = load(doc, body, "DeleteResult");
  if (!result) return std::nullopt;
  std::vector<S3DeleteFailure> failures;
  for (pugi::xml_node e : result.children("Error")) {
    failures.push_back({text(e, "Key"), text(e, "Code"), text(e, "Message")});
  }
  return failures;
}

std::string complete_multipart_xml(const std::vector<std::string>& etags) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("CompleteMultipartUpload");
  root.append_attribute("xmlns") = kNamespace;
  for (std::size_t i = 0; i < etags.size(); ++i) {
    pugi::xml_node part = root.append_child("Part");
    part.append_child("PartNumber").text() = static_cast<unsigned long long>(i + 1);
    part.append_child("ETag").text() = etags[i].c_str();
  }
  return to_string(doc);
}

}  // namespace zarrkit::remote
