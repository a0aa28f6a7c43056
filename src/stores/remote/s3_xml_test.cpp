#include "stores/remote/s3_xml.h"

#include <gtest/gtest.h>

#include "zarrkit/error.h"

namespace zarrkit::remote {
namespace {

TEST(S3Xml, Errors) {
  auto e = parse_s3_error(as_bytes(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request "
      "rate.</Message><RequestId>1</RequestId></Error>"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, "SlowDown");
  EXPECT_EQ(e->message, "Please reduce your request rate.");
  e = parse_s3_error(as_bytes("<Error><Code>AuthorizationHeaderMalformed</Code><Region>eu-west-1</Region></Error>"));
  EXPECT_EQ(e->region, "eu-west-1");
  EXPECT_FALSE(parse_s3_error(as_bytes("")));
  EXPECT_FALSE(parse_s3_error(as_bytes("<html>502 Bad Gateway</html>")));
  EXPECT_FALSE(parse_s3_error(as_bytes("<Error><Code>trunc")));
}

TEST(S3Xml, ListPages) {
  auto page = parse_list_page(as_bytes(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name><Prefix>p/</Prefix>"
      "<KeyCount>3</KeyCount><MaxKeys>1000</MaxKeys><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>"
      "<NextContinuationToken>tok/+=</NextContinuationToken>"
      "<Contents><Key>p/a%20b</Key><Size>3</Size></Contents><Contents><Key>p/c%26d</Key></Contents>"
      "<CommonPrefixes><Prefix>p/sub%2F/</Prefix></CommonPrefixes></ListBucketResult>"));
  ASSERT_TRUE(page);
  EXPECT_EQ(page->keys, (std::vector<std::string>{"p/a b", "p/c&d"}));
  EXPECT_EQ(page->prefixes, (std::vector<std::string>{"p/sub//"}));
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_token, "tok/+=");
  // Without EncodingType the keys are as written (XML entities decoded).
  page = parse_list_page(as_bytes("<ListBucketResult><Contents><Key>a%20&amp;b</Key></Contents>"
                                  "<IsTruncated>false</IsTruncated></ListBucketResult>"));
  EXPECT_EQ(page->keys, (std::vector<std::string>{"a%20&b"}));
  EXPECT_FALSE(page->truncated);
  EXPECT_FALSE(parse_list_page(as_bytes("<Error><Code>NoSuchBucket</Code></Error>")));
  EXPECT_FALSE(parse_list_page(as_bytes("<ListBucketResult><Contents>")));
  // A key that decodes to a NUL byte is refused, not truncated.
  EXPECT_THROW(parse_list_page(as_bytes("<ListBucketResult><EncodingType>url</EncodingType><Contents><Key>a%00"
                                        "</Key></Contents></ListBucketResult>")),
               InvalidArgumentError);
}

TEST(S3Xml, MultipartAndDelete) {
  EXPECT_EQ(parse_upload_id(as_bytes("<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
                                     "<UploadId>abc-123</UploadId></InitiateMultipartUploadResult>")),
            "abc-123");
  EXPECT_FALSE(parse_upload_id(as_bytes("<InitiateMultipartUploadResult/>")));
  EXPECT_EQ(complete_multipart_xml({"\"e1\"", "\"e2\""}),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUpload "
            "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part><PartNumber>1</PartNumber><ETag>\"e1\"</ETag>"
            "</Part><Part><PartNumber>2</PartNumber><ETag>\"e2\"</ETag></Part></CompleteMultipartUpload>");
  EXPECT_EQ(delete_objects_xml({"a&b", "c<d"}),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            "<Quiet>true</Quiet><Object><Key>a&amp;b</Key></Object><Object><Key>c&lt;d</Key></Object></Delete>");
  auto result = parse_delete_result(as_bytes("<DeleteResult><Error><Key>k</Key><Code>AccessDenied</Code>"
                                             "<Message>no</Message></Error></DeleteResult>"));
  ASSERT_TRUE(result);
  ASSERT_EQ(result->size(), 1u);
  EXPECT_EQ((*result)[0].key, "k");
  EXPECT_EQ((*result)[0].code, "AccessDenied");
  EXPECT_TRUE(parse_delete_result(as_bytes("<DeleteResult/>"))->empty());
  EXPECT_FALSE(parse_delete_result(as_bytes("garbage")));
}

}  // namespace
}  // namespace zarrkit::remote
