#include "lib/commands/builtin_targets.h"

namespace leakgate::commands {

namespace {

// Run each DSL's target with --python in a venv that has the package (bisect makes one per release).
constexpr BuiltinTarget kBuiltinTargets[] = {
    {"reference", "leakgate_reference", nullptr, nullptr, nullptr},
    {"cute", nullptr, "lib/data/targets/cute.py", "nvidia-cutlass-dsl", "nvidia_cutlass_dsl"},
    {"triton", nullptr, "lib/data/targets/triton_dsl.py", "triton", "triton"},
    {"cupy", nullptr, "lib/data/targets/cupy_dsl.py", "cupy-cuda13x", "cupy"},
    {"jax", nullptr, "lib/data/targets/jax_dsl.py", "jax", "jax"},
    {"warp", nullptr, "lib/data/targets/warp_dsl.py", "warp-lang", "warp"},
    {"numba-cuda", nullptr, "lib/data/targets/numba_cuda_dsl.py", "numba-cuda", "numba_cuda"},
    {"taichi", nullptr, "lib/data/targets/taichi_dsl.py", "taichi", "taichi"},
    {"cuda-tile", nullptr, "lib/data/targets/cuda_tile_dsl.py", "cuda-tile", "cuda/tile"},
    {"torch", nullptr, "lib/data/targets/torch_dsl.py", "torch", "torch"},
};

} // namespace

std::span<const BuiltinTarget> builtinTargets() {
    return kBuiltinTargets;
}

const BuiltinTarget* findBuiltinTarget(std::string_view name) {
    for (const BuiltinTarget& target : kBuiltinTargets) {
        if (name == target.name) return &target;
    }
    return nullptr;
}

std::string builtinTargetNames(bool dslsOnly) {
    std::string names;
    for (const BuiltinTarget& target : kBuiltinTargets) {
        if (dslsOnly && !target.pypiPackage) continue;
        names += (names.empty() ? "" : ", ") + std::string(target.name);
    }
    return names;
}

} // namespace leakgate::commands
