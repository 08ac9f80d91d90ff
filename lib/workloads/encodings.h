// What a packed scalar argument must point at (docs/definitions.md, "Encodings"): the C encoding of a
// value for each of the DSL scalar types, little-endian as the machine stores it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace leakgate::workloads {

enum class ScalarKind { kSigned, kUnsigned, kBoolean, kFloat16, kBFloat16, kFloat32, kFloat64 };

struct ScalarType {
    std::string name; // "Int32"
    ScalarKind kind;
    int bytes; // width of the packed value
};

// The 14 types leakgate knows, in report order.
const std::vector<ScalarType>& scalarTypes();
const ScalarType* findScalarType(std::string_view name);
bool isFloating(const ScalarType& type);

// Integers of N bits: the value modulo 2^N in two's complement (C's conversion to the fixed-width
// type); `valueModulo64` is the value modulo 2^64. Boolean: one byte, 0 or 1 (`valueModulo64` is
// its truth).
std::vector<std::uint8_t> encodeInteger(const ScalarType& type, std::uint64_t valueModulo64);
// Float64, Float32 and TFloat32 (passed as binary32): IEEE 754 conversion from a double, rounding
// to nearest even, overflowing to infinity. Float16: binary16, round to nearest even, straight
// from the double (no double rounding). BFloat16: the upper 16 bits of the binary32 value, round
// to nearest even, NaN kept NaN (quiet).
std::vector<std::uint8_t> encodeFloat(const ScalarType& type, double value);

std::uint16_t doubleToHalf(double value);
std::uint16_t floatToBFloat16(float value);

std::string hexBytes(const std::vector<std::uint8_t>& bytes);

} // namespace leakgate::workloads
