#include <fmt/ranges.h>

#include "zarrkit/error.h"
#include "zarrkit/vlen.h"

namespace zarrkit {

VarNDBuffer::VarNDBuffer(Shape shape, DataType dtype, std::vector<std::string> elements)
    : shape_(std::move(shape)), dtype_(std::move(dtype)), elements_(std::move(elements)) {
  if (!dtype_.is_variable_length()) {
    fail_invalid("a VarNDBuffer holds variable-length elements (string, bytes), not {}", dtype_.name());
  }
  const std::uint64_t n = checked_num_elements(shape_);
  if (n != elements_.size()) {
    fail_invalid("a VarNDBuffer of shape [{}] needs {} elements, got {}", fmt::join(shape_, ", "), n,
                 elements_.size());
  }
}

VarNDBuffer VarNDBuffer::filled(Shape shape, DataType dtype, std::string_view value) {
  const std::uint64_t n = checked_num_elements(shape);
  if (n > std::vector<std::string>().max_size()) fail_resource("{} elements cannot be held in memory", n);
  return VarNDBuffer(std::move(shape), std::move(dtype),
                     std::vector<std::string>(static_cast<std::size_t>(n), std::string(value)));
}

}  // namespace zarrkit
