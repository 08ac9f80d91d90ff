#include "lib/base/spelling.h"

#include <algorithm>

namespace leakgate::base {
namespace {

// Levenshtein distance.
size_t editDistance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

} // namespace

std::string closestName(const std::string& typed, const std::vector<std::string>& candidates) {
    std::string best;
    size_t bestDistance = std::max<size_t>(2, typed.size() / 3) + 1;
    for (const auto& candidate : candidates) {
        size_t distance = candidate.starts_with(typed) ? 1 : editDistance(typed, candidate);
        if (distance < bestDistance) {
            best = candidate;
            bestDistance = distance;
        }
    }
    return best;
}

std::string didYouMean(const std::string& typed, const std::vector<std::string>& candidates) {
    std::string hint = closestName(typed, candidates);
    return hint.empty() ? "" : " (did you mean `" + hint + "`?)";
}

} // namespace leakgate::base
