#include "lib/workloads/encodings.h"

#include <Python.h>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

namespace leakgate::workloads {
namespace {

// CPython's own binary16 packer (struct 'e'), for every value it accepts.
std::uint16_t cpythonHalf(double value) {
    unsigned char out[2];
#if PY_VERSION_HEX >= 0x030B0000
    int status = PyFloat_Pack2(value, reinterpret_cast<char*>(out), 1);
#else
    int status = _PyFloat_Pack2(value, out, 1);
#endif
    if (status != 0) {
        PyErr_Clear();
        return 0xFFFF; // out of range for struct: leakgate's rule (overflow to inf) applies
    }
    return static_cast<std::uint16_t>(out[0] | (out[1] << 8));
}

TEST(Encodings, HalfMatchesCPythonOnEveryValueStructAccepts) {
    const double samples[] = {0.0,
                              -0.0,
                              1.0,
                              -2.5,
                              65504.0,
                              65519.0,
                              6.103515625e-05,
                              5.960464477539063e-08,
                              2.98e-08,
                              1.0 + std::ldexp(1.0, -11),
                              1.0 + 3 * std::ldexp(1.0, -11),
                              0.1,
                              1e-7,
                              3.0e-5,
                              std::numeric_limits<double>::infinity()};
    for (double value : samples)
        EXPECT_EQ(doubleToHalf(value), cpythonHalf(value)) << value;
}

TEST(Encodings, HalfRoundsTiesToEvenAndOverflowsToInfinity) {
    EXPECT_EQ(doubleToHalf(1.0 + std::ldexp(1.0, -11)), 0x3C00);     // tie: down to even
    EXPECT_EQ(doubleToHalf(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02); // tie: up to even
    EXPECT_EQ(doubleToHalf(65520.0), 0x7C00);                        // rounds past the max
    EXPECT_EQ(doubleToHalf(-1e300), 0xFC00);
    EXPECT_EQ(doubleToHalf(-0.0), 0x8000);
    EXPECT_EQ(doubleToHalf(std::ldexp(1.0, -25)), 0x0000); // half the min subnormal: to even
    EXPECT_EQ(doubleToHalf(std::ldexp(1.5, -25)), 0x0001);
    EXPECT_EQ(doubleToHalf(std::ldexp(1023.5, -24)), 0x0400); // carries into the min normal
    EXPECT_TRUE((doubleToHalf(std::nan("")) & 0x7C00) == 0x7C00 &&
                (doubleToHalf(std::nan("")) & 0x3FF) != 0);
}

TEST(Encodings, BFloat16KeepsTheUpperHalfRoundedToEven) {
    EXPECT_EQ(floatToBFloat16(1.0f), 0x3F80);
    EXPECT_EQ(floatToBFloat16(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie, even stays
    EXPECT_EQ(floatToBFloat16(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie, odd rounds up
    EXPECT_EQ(floatToBFloat16(std::bit_cast<float>(0x7F7FFFFFu)), 0x7F80);  // max float rounds to inf
    std::uint16_t nan = floatToBFloat16(std::bit_cast<float>(0x7F800001u)); // payload only in low bits
    EXPECT_EQ(nan & 0x7F80, 0x7F80);
    EXPECT_NE(nan & 0x007F, 0); // still a NaN, not inf
}

TEST(Encodings, IntegersWrapModuloTwoToTheN) {
    const ScalarType& int8 = *findScalarType("Int8");
    const ScalarType& uint16 = *findScalarType("Uint16");
    EXPECT_EQ(encodeInteger(int8, static_cast<std::uint64_t>(-1)), (std::vector<std::uint8_t>{0xFF}));
    EXPECT_EQ(encodeInteger(int8, 200), (std::vector<std::uint8_t>{0xC8})); // -56 as Int8
    EXPECT_EQ(encodeInteger(uint16, 0x12345), (std::vector<std::uint8_t>{0x45, 0x23}));
    EXPECT_EQ(encodeInteger(*findScalarType("Boolean"), 7), (std::vector<std::uint8_t>{1}));
}

TEST(Encodings, FloatsKeepSignedZeroAndOverflowToInfinity) {
    const ScalarType& float32 = *findScalarType("Float32");
    EXPECT_EQ(hexBytes(encodeFloat(float32, -0.0)), "0x80000000");
    EXPECT_EQ(hexBytes(encodeFloat(float32, 1e300)), "0x7f800000");
    EXPECT_EQ(hexBytes(encodeFloat(*findScalarType("Float64"), 1.0)), "0x3ff0000000000000");
    EXPECT_EQ(hexBytes(encodeFloat(*findScalarType("TFloat32"), 1.5)), "0x3fc00000");
    EXPECT_EQ(hexBytes(encodeFloat(*findScalarType("BFloat16"), 1.0)), "0x3f80");
    EXPECT_EQ(scalarTypes().size(), 14u);
}

} // namespace
} // namespace leakgate::workloads
