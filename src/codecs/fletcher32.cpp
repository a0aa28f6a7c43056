// The numcodecs "fletcher32" codec (bytes->bytes): HDF5's Fletcher-32 of the data appended
// as 4 bytes, little-endian. The sums run over big-endian 16-bit words (an odd last byte
// is the high half of a word), folded every 360 words, as in HDF5's H5_checksum_fletcher32.
// Registered as v2 "fletcher32" and v3 "numcodecs.fletcher32"; it has no configuration.
#include "codecs/checksum32_support.h"
#include "codecs/register.h"

namespace zarrkit {
namespace {

std::uint32_t fold(std::uint32_t sum) { return (sum & 0xFFFFu) + (sum >> 16); }

std::uint32_t fletcher32_of(ByteView data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t words = data.size() / 2;
  std::uint32_t sum1 = 0;
  std::uint32_t sum2 = 0;
  // 360 words is the most that cannot overflow the 32-bit sums between folds.
  while (words != 0) {
    std::size_t block = words < 360 ? words : 360;
    words -= block;
    for (; block != 0; --block, p += 2) {
      sum1 += static_cast<std::uint32_t>(p[0]) << 8 | p[1];
      sum2 += sum1;
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
  }
  if (data.size() % 2 != 0) {
    sum1 += static_cast<std::uint32_t>(p[0]) << 8;
    sum2 += sum1;
    sum1 = fold(sum1);
    sum2 = fold(sum2);
  }
  sum1 = fold(sum1);
  sum2 = fold(sum2);
  return sum2 << 16 | sum1;
}

const checksum32_support::ChecksumKind kFletcher32{"fletcher32", fletcher32_of, checksum32_support::Location::kEnd,
                                                   false};

}  // namespace

void register_fletcher32_codec(CodecRegistry& registry) {
  checksum32_support::register_checksum_codec(registry, kFletcher32);
}

}  // namespace zarrkit
