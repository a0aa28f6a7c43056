// GdsStore's planning on the host: the path a mode and a cuFile probe give, and how
// requests are cut into pieces.
#include "stores/gds_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "zarrkit/error.h"

namespace zarrkit::detail {
namespace {

TEST(GdsPlan, ParsesModes) {
  EXPECT_EQ(parse_gds_mode("auto", "x"), GdsMode::kAuto);
  EXPECT_EQ(parse_gds_mode("CUFILE", "x"), GdsMode::kCufile);
  EXPECT_EQ(parse_gds_mode("Compat", "x"), GdsMode::kCompat);
  try {
    parse_gds_mode("posix", "ZARRKIT_GDS_MODE");
    FAIL() << "accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("ZARRKIT_GDS_MODE is \"posix\""), std::string::npos) << e.what();
  }
  EXPECT_EQ(gds_mode_name(GdsMode::kCufile), "cufile");
}

TEST(GdsPlan, AutoWithoutCufileTakesTheCompatPathAndSaysWhy) {
  CufileProbe missing;
  missing.reason = "cuFile is not installed (libcufile.so.0: cannot open shared object file)";
  const GdsPathReport report = choose_gds_path(GdsMode::kAuto, missing);
  EXPECT_EQ(report.path, GdsPath::kCompat);
  EXPECT_EQ(report.name(), "compat");
  EXPECT_NE(report.detail.find("libcufile.so.0"), std::string::npos) << report.detail;

  CufileProbe no_driver;  // the library loads, its driver does not open
  no_driver.loaded = true;
  no_driver.reason = "cuFileDriverOpen failed: GPUDirect Storage not supported on current platform";
  EXPECT_EQ(choose_gds_path(GdsMode::kAuto, no_driver).path, GdsPath::kCompat);
}

TEST(GdsPlan, ForcedCufileWithoutItIsAClearError) {
  CufileProbe missing;
  missing.reason = "cuFile is not installed (no libcufile.so.0)";
  try {
    choose_gds_path(GdsMode::kCufile, missing);
    FAIL() << "a forced cuFile was replaced";
  } catch (const UnsupportedError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("mode cufile"), std::string::npos) << m;
    EXPECT_NE(m.find("no libcufile.so.0"), std::string::npos) << m;
  }
}

TEST(GdsPlan, CufileReportsItsMode) {
  CufileProbe compat_mode{.loaded = true, .driver_opened = true, .gds_driver = false, .version = "1.15", .reason = ""};
  // auto leaves cuFile's compatibility mode alone: the compat path does its work faster.
  GdsPathReport report = choose_gds_path(GdsMode::kAuto, compat_mode);
  EXPECT_EQ(report.path, GdsPath::kCompat);
  EXPECT_NE(report.detail.find("no nvidia-fs driver"), std::string::npos) << report.detail;
  report = choose_gds_path(GdsMode::kCufile, compat_mode);
  EXPECT_EQ(report.path, GdsPath::kCufile);
  EXPECT_TRUE(report.cufile_compat_mode);
  EXPECT_EQ(report.name(), "cufile-compat");
  EXPECT_NE(report.detail.find("cuFile 1.15 in its compatibility mode"), std::string::npos) << report.detail;

  CufileProbe gds = compat_mode;
  gds.gds_driver = true;
  report = choose_gds_path(GdsMode::kAuto, gds);
  EXPECT_EQ(report.name(), "cufile");
  EXPECT_NE(report.detail.find("nvidia-fs"), std::string::npos);

  // Forced compat never uses cuFile, even where it works.
  report = choose_gds_path(GdsMode::kCompat, gds);
  EXPECT_EQ(report.path, GdsPath::kCompat);
  EXPECT_NE(report.detail.find("mode compat"), std::string::npos);
}

// Every byte of every read is in exactly one segment, at the right place of its piece,
// and pieces stay within the size.
void check_cover(const std::vector<PlannedRead>& reads, const std::vector<Piece>& pieces, std::uint64_t piece_bytes) {
  std::map<std::uint32_t, std::uint64_t> covered;
  for (const Piece& p : pieces) {
    ASSERT_GT(p.length, 0u);
    ASSERT_LE(p.length, piece_bytes);
    ASSERT_FALSE(p.segments.empty());
    for (const PieceSegment& s : p.segments) {
      const PlannedRead& r = reads.at(s.read);
      ASSERT_GE(s.file_offset, r.file_offset);
      const std::uint64_t within = s.file_offset - r.file_offset;
      ASSERT_LE(within + s.length, r.length);
      EXPECT_EQ(p.dest + s.staging_offset, r.dest + within) << "segment lands elsewhere";
      ASSERT_LE(s.staging_offset + s.length, p.length);
      EXPECT_EQ(covered[s.read], within) << "segments of read " << s.read << " out of order or overlapping";
      covered[s.read] += s.length;
    }
  }
  for (std::uint32_t i = 0; i < reads.size(); ++i) {
    EXPECT_EQ(covered[i], reads[i].length) << "read " << i;
  }
}

TEST(GdsPlan, LongReadsAreSplitIntoFullPiecesAndARest) {
  const std::vector<PlannedRead> reads = {{100, 10, 0}};
  auto pieces = plan_pieces(reads, 4, 0);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].length, 4u);
  EXPECT_EQ(pieces[1].segments[0].file_offset, 104u);
  EXPECT_EQ(pieces[2].length, 2u);
  EXPECT_EQ(pieces[2].dest, 8u);
  check_cover(reads, pieces, 4);
}

TEST(GdsPlan, SmallValuesShareAPieceAcrossTheirPadding) {
  // Three values of 100 bytes packed at 256-byte steps: one piece with its padding.
  const std::vector<PlannedRead> reads = {{0, 100, 0}, {0, 100, 256}, {0, 100, 512}};
  auto pieces = plan_pieces(reads, 4096, 255);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].length, 612u);
  ASSERT_EQ(pieces[0].segments.size(), 3u);
  EXPECT_EQ(pieces[0].segments[2].staging_offset, 512u);
  check_cover(reads, pieces, 4096);
  // Without leave to write the gaps, each is its own piece; adjacent ones still share.
  EXPECT_EQ(plan_pieces(reads, 4096, 0).size(), 3u);
  const std::vector<PlannedRead> adjacent = {{0, 100, 0}, {50, 28, 100}};
  EXPECT_EQ(plan_pieces(adjacent, 4096, 0).size(), 1u);
  // A piece is never longer than the size, gaps included.
  EXPECT_EQ(plan_pieces(reads, 400, 255).size(), 2u);
  check_cover(reads, plan_pieces(reads, 400, 255), 400);
}

TEST(GdsPlan, ZeroLengthReadsNeedNoPiece) {
  const std::vector<PlannedRead> reads = {{0, 0, 0}, {5, 0, 64}, {0, 3, 128}, {0, 0, 256}};
  auto pieces = plan_pieces(reads, 16, 255);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].segments.size(), 1u);
  EXPECT_EQ(pieces[0].segments[0].read, 2u);
  EXPECT_TRUE(plan_pieces(std::vector<PlannedRead>{}, 16, 0).empty());
  EXPECT_THROW(plan_pieces(reads, 0, 0), InvalidArgumentError);
}

TEST(GdsPlan, DestinationsGoingBackwardsOrOverlappingStartNewPieces) {
  const std::vector<PlannedRead> reads = {{0, 10, 1000}, {0, 10, 0}, {0, 10, 5}};
  auto pieces = plan_pieces(reads, 4096, 4096);
  EXPECT_EQ(pieces.size(), 3u);
  check_cover(reads, pieces, 4096);
}

TEST(GdsPlan, RandomRequestsAreCoveredExactly) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 300; ++round) {
    const std::uint64_t piece = 1 + rng() % 5000;
    const std::uint64_t gap = rng() % 3 == 0 ? 0 : rng() % 600;
    std::vector<PlannedRead> reads;
    std::uint64_t dest = 0;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t length = rng() % 4 == 0 ? 0 : rng() % 12000;
      dest += rng() % 2 == 0 ? 0 : rng() % 700;
      reads.push_back({rng() % 100000, length, dest});
      dest += length;
    }
    const auto pieces = plan_pieces(reads, piece, gap);
    check_cover(reads, pieces, piece);
    if (HasFailure()) {
      ADD_FAILURE() << "round " << round << " piece " << piece << " gap " << gap;
      return;
    }
  }
}

TEST(GdsPlan, PacksValuesAtAlignedOffsets) {
  const std::vector<std::uint64_t> sizes = {0, 1, 256, 257, 0};
  EXPECT_EQ(pack_values(sizes, 256), (std::vector<std::uint64_t>{0, 0, 256, 512, 1024, 1024}));
  EXPECT_EQ(pack_values(std::vector<std::uint64_t>{}, 256), (std::vector<std::uint64_t>{0}));
}

}  // namespace
}  // namespace zarrkit::detail
