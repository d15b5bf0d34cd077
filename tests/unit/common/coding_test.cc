// common/coding.h and the fragment checksum: the byte layout the formats
// specify, checked against bytes written out by hand.
#define BOOST_TEST_MODULE coding
#include <boost/test/unit_test.hpp>

#include <xxhash.h>

#include <cstdint>
#include <string>

#include "common/coding.h"
#include "common/journal_format.h"

namespace guard {
namespace {

BOOST_AUTO_TEST_CASE(FixedWidthIsLittleEndian) {
  std::string out;
  PutFixed16(&out, 0x0102);
  PutFixed32(&out, 0x03040506);
  PutFixed64(&out, 0x0708090a0b0c0d0eULL);
  BOOST_TEST((out == std::string("\x02\x01"
                                 "\x06\x05\x04\x03"
                                 "\x0e\x0d\x0c\x0b\x0a\x09\x08\x07",
                                 14)));
  BOOST_TEST(DecodeFixed16(out.data()) == 0x0102u);
  BOOST_TEST(DecodeFixed32(out.data() + 2) == 0x03040506u);
  BOOST_TEST(DecodeFixed64(out.data() + 6) == 0x0708090a0b0c0d0eULL);
}

BOOST_AUTO_TEST_CASE(FixedWidthRoundTripsHighBitBytes) {
  // Every byte has its high bit set: a sign extension anywhere would show.
  char buf[8];
  EncodeFixed16(buf, 0xfffe);
  BOOST_TEST(DecodeFixed16(buf) == 0xfffeu);
  EncodeFixed32(buf, 0xfffefdfc);
  BOOST_TEST(DecodeFixed32(buf) == 0xfffefdfcu);
  EncodeFixed64(buf, 0xfffefdfcfbfaf9f8ULL);
  BOOST_TEST(DecodeFixed64(buf) == 0xfffefdfcfbfaf9f8ULL);
  BOOST_TEST(static_cast<uint8_t>(buf[0]) == 0xf8u);
  BOOST_TEST(static_cast<uint8_t>(buf[7]) == 0xffu);
}

BOOST_AUTO_TEST_CASE(FragmentChecksumCoversTypeLengthAndPayload) {
  const std::string payload(300, 'x');
  // The spec: XXH3_64bits over type, length as u16 LE, then the payload.
  std::string checked = std::string("\x01", 1) + std::string("\x2c\x01", 2) + payload;
  BOOST_TEST(journal::FragmentChecksum(journal::kFullType, payload) ==
             XXH3_64bits(checked.data(), checked.size()));
  BOOST_TEST(journal::FragmentChecksum(journal::kFullType, payload) !=
             journal::FragmentChecksum(journal::kLastType, payload));
  BOOST_TEST(journal::FragmentChecksum(journal::kFullType, "") ==
             XXH3_64bits(std::string("\x01\x00\x00", 3).data(), 3));
}

}  // namespace
}  // namespace guard
