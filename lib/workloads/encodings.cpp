#include "lib/workloads/encodings.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>

namespace leakgate::workloads {
namespace {

template <typename T> std::vector<std::uint8_t> bytesOf(T value) {
    std::vector<std::uint8_t> bytes(sizeof(T));
    std::memcpy(bytes.data(), &value, sizeof(T));
    return bytes;
}

} // namespace

const std::vector<ScalarType>& scalarTypes() {
    static const std::vector<ScalarType> types = {
        {"Int8", ScalarKind::kSigned, 1},       {"Int16", ScalarKind::kSigned, 2},
        {"Int32", ScalarKind::kSigned, 4},      {"Int64", ScalarKind::kSigned, 8},
        {"Uint8", ScalarKind::kUnsigned, 1},    {"Uint16", ScalarKind::kUnsigned, 2},
        {"Uint32", ScalarKind::kUnsigned, 4},   {"Uint64", ScalarKind::kUnsigned, 8},
        {"Boolean", ScalarKind::kBoolean, 1},   {"Float16", ScalarKind::kFloat16, 2},
        {"BFloat16", ScalarKind::kBFloat16, 2}, {"TFloat32", ScalarKind::kFloat32, 4},
        {"Float32", ScalarKind::kFloat32, 4},   {"Float64", ScalarKind::kFloat64, 8},
    };
    return types;
}

const ScalarType* findScalarType(std::string_view name) {
    for (const auto& type : scalarTypes()) {
        if (type.name == name) return &type;
    }
    return nullptr;
}

bool isFloating(const ScalarType& type) {
    return type.kind != ScalarKind::kSigned && type.kind != ScalarKind::kUnsigned &&
           type.kind != ScalarKind::kBoolean;
}

std::vector<std::uint8_t> encodeInteger(const ScalarType& type, std::uint64_t valueModulo64) {
    if (type.kind == ScalarKind::kBoolean) return {static_cast<std::uint8_t>(valueModulo64 != 0)};
    // Little-endian: the low `bytes` bytes of the value modulo 2^64 are the value modulo 2^N.
    std::vector<std::uint8_t> bytes(static_cast<size_t>(type.bytes));
    for (int i = 0; i < type.bytes; ++i)
        bytes[static_cast<size_t>(i)] = static_cast<std::uint8_t>(valueModulo64 >> (8 * i));
    return bytes;
}

std::uint16_t doubleToHalf(double value) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(value);
    const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 48) & 0x8000);
    if (std::isnan(value)) {
        // Keep the top payload bits; a NaN stays a (quiet) NaN.
        return static_cast<std::uint16_t>(sign | 0x7C00 | 0x0200 | ((bits >> 42) & 0x03FF));
    }
    double magnitude = std::fabs(value);
    if (std::isinf(value)) return static_cast<std::uint16_t>(sign | 0x7C00);
    if (magnitude == 0.0) return sign;
    int exponent;
    std::frexp(magnitude, &exponent); // magnitude = f * 2^exponent, f in [0.5, 1)
    const int unitExponent = std::max(exponent - 1, -14) - 10; // exponent of one unit in the last place
    // Scaling by a power of two is exact; nearbyint rounds to nearest even in the default mode.
    double units = std::nearbyint(std::ldexp(magnitude, -unitExponent));
    if (exponent - 1 < -14)
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(units)); // subnormal
    int field = unitExponent + 25;                                                   // biased exponent
    if (units == 2048.0) { // rounding carried into the next binade
        units = 1024.0;
        ++field;
    }
    if (field >= 31) return static_cast<std::uint16_t>(sign | 0x7C00); // overflow
    return static_cast<std::uint16_t>(sign | (field << 10) | (static_cast<int>(units) - 1024));
}

std::uint16_t floatToBFloat16(float value) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x0040);
    const std::uint32_t rounded = bits + 0x7FFF + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>(rounded >> 16);
}

std::vector<std::uint8_t> encodeFloat(const ScalarType& type, double value) {
    switch (type.kind) {
    case ScalarKind::kFloat64:
        return bytesOf(value);
    case ScalarKind::kFloat32:
        return bytesOf(static_cast<float>(value));
    case ScalarKind::kFloat16:
        return bytesOf(doubleToHalf(value));
    case ScalarKind::kBFloat16:
        return bytesOf(floatToBFloat16(static_cast<float>(value)));
    default:
        return {};
    }
}

std::string hexBytes(const std::vector<std::uint8_t>& bytes) {
    std::string text;
    for (auto it = bytes.rbegin(); it != bytes.rend(); ++it)
        text += fmt::format("{:02x}", *it); // most significant first
    return "0x" + text;
}

} // namespace leakgate::workloads
