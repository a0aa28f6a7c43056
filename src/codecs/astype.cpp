// The numcodecs "astype" codec (array->array): stores the chunk converted to
// `encode_dtype` and converts it back to `decode_dtype` (the array's type) when reading,
// with NumPy's casting rules (numpy_support.h): a narrower or integer type loses what does
// not fit, as numcodecs warns. Registered as v2 "astype" and v3 "numcodecs.astype"; the v3
// form may leave out decode_dtype, which is then the array's type.
#include <fmt/ranges.h>

#include "codecs/numpy_support.h"
#include "codecs/register.h"
#include "zarrkit/codec_registry.h"
#include "zarrkit/error.h"

namespace zarrkit {
namespace {

namespace np = numpy_support;

bool same_element_type(const DataType& a, const DataType& b) { return a.kind() == b.kind() && a.size() == b.size(); }

DataType castable(const nlohmann::json& value, const char* key) {
  DataType t = np::parse_dtype(value, "astype", key);
  if (!np::is_castable(t)) {
    fail_invalid("astype codec: \"{}\" {} must be a bool, integer or float type", key, value.dump());
  }
  return t;
}

class AsTypeCodec final : public ArrayToArrayCodec {
 public:
  AsTypeCodec(nlohmann::json encode_json, nlohmann::json decode_json, const DataType& array_dtype)
      : encode_json_(std::move(encode_json)), decode_json_(std::move(decode_json)) {
    encode_dtype_ = castable(encode_json_, "encode_dtype");
    decode_dtype_ = decode_json_.is_null() ? array_dtype : castable(decode_json_, "decode_dtype");
  }

  std::string_view name() const override { return "numcodecs.astype"; }

  nlohmann::json to_json() const override {
    nlohmann::json config = {{"encode_dtype", encode_json_}};
    if (!decode_json_.is_null()) config["decode_dtype"] = decode_json_;
    return codec_json(name(), std::move(config));
  }

  std::optional<nlohmann::json> to_v2_json() const override {
    return nlohmann::json{{"id", "astype"}, {"encode_dtype", encode_json_}, {"decode_dtype", decode_json_}};
  }

  ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
    if (!same_element_type(decoded.dtype, decode_dtype_)) {
      fail_invalid("astype codec with decode_dtype {} cannot work on {} chunks", decode_dtype_.name(),
                   decoded.dtype.name());
    }
    return ChunkSpec{decoded.shape, encode_dtype_, FillValue::zero(encode_dtype_)};
  }

  NDBuffer encode(const NDBuffer& decoded, const ChunkSpec& decoded_spec) const override {
    check_input(decoded, decoded_spec.shape, decode_dtype_, "encode");
    NDBuffer out = NDBuffer::allocate(decoded.shape(), encode_dtype_);
    np::cast_elements(decoded.data(), decode_dtype_, out.data(), encode_dtype_, decoded.num_elements());
    return out;
  }

  NDBuffer decode(const NDBuffer& encoded, const ChunkSpec& decoded_spec) const override {
    encoded_spec(decoded_spec);
    check_input(encoded, decoded_spec.shape, encode_dtype_, "decode");
    NDBuffer out = NDBuffer::allocate(decoded_spec.shape, decoded_spec.dtype);
    np::cast_elements(encoded.data(), encode_dtype_, out.data(), decode_dtype_, encoded.num_elements());
    return out;
  }

 private:
  static void check_input(const NDBuffer& array, const Shape& shape, const DataType& dtype, const char* what) {
    if (!is_host_accessible(array.kind())) {
      fail_unsupported("astype codec cannot {} {} memory", what, memory_kind_name(array.kind()));
    }
    if (array.shape() != shape || !same_element_type(array.dtype(), dtype)) {
      fail_invalid("astype codec cannot {} a {} array of shape [{}]: expected {} of shape [{}]", what,
                   array.dtype().name(), fmt::join(array.shape(), ","), dtype.name(), fmt::join(shape, ","));
    }
  }

  nlohmann::json encode_json_;
  nlohmann::json decode_json_;  // null when absent (v3)
  DataType encode_dtype_;
  DataType decode_dtype_;
};

std::shared_ptr<const Codec> make_astype(const nlohmann::json& config, const CodecContext& context, bool v2) {
  if (!config.is_object()) fail_invalid("astype codec: configuration must be an object, got {}", config.dump());
  for (const auto& [key, value] : config.items()) {
    if (key == "encode_dtype" || key == "decode_dtype") continue;
    if (key == "id" && value == "astype") continue;
    fail_invalid("astype codec: unexpected configuration key \"{}\"", key);
  }
  auto encode = config.find("encode_dtype");
  if (encode == config.end()) fail_invalid("astype codec needs \"encode_dtype\"");
  auto decode = config.find("decode_dtype");
  if (decode == config.end() && v2) fail_invalid("astype codec needs \"decode_dtype\"");
  nlohmann::json decode_json = decode == config.end() ? nlohmann::json(nullptr) : *decode;
  return std::make_shared<AsTypeCodec>(*encode, std::move(decode_json), context.dtype);
}

}  // namespace

void register_astype_codec(CodecRegistry& registry) {
  registry.add_v2("astype", [](const nlohmann::json& c, const CodecContext& x) { return make_astype(c, x, true); });
  registry.add_v3("numcodecs.astype",
                  [](const nlohmann::json& c, const CodecContext& x) { return make_astype(c, x, false); });
}

}  // namespace zarrkit
