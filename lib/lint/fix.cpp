#include "lib/lint/fix.h"

#include "leakgate/errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <tuple>
#include <utility>

namespace leakgate::lint {
namespace {

// The byte offset of (line, column) in `text`, columns counted in code points (UTF-8), as
// Python's str indices count them. The column may point at the line's end (its '\n' or the end of
// the text), not past it.
size_t byteOffset(const std::string& text, int line, int column, const FixEdit& edit) {
    auto outside = [&] {
        return Error(fmt::format("fix edit {}:{}:{} is outside the file", edit.file, line, column));
    };
    if (line < 1 || column < 1) throw outside();
    size_t at = 0;
    for (int i = 1; i < line; ++i) {
        at = text.find('\n', at);
        if (at == std::string::npos) throw outside();
        ++at;
    }
    for (int i = 1; i < column; ++i) {
        if (at >= text.size() || text[at] == '\n') throw outside();
        ++at;
        while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80)
            ++at; // the continuation bytes of this code point
    }
    return at;
}

std::vector<std::string_view> linesOf(std::string_view text) {
    std::vector<std::string_view> lines;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        end = end == std::string_view::npos ? text.size() : end + 1;
        lines.push_back(text.substr(at, end - at)); // with its '\n', where it has one
        at = end;
    }
    return lines;
}

enum class Op { kSame, kRemoved, kAdded };

// Myers' O(ND) difference of two line lists, as a list of (op, index into a or b).
std::vector<std::pair<Op, size_t>> lineDifference(const std::vector<std::string_view>& a,
                                                  const std::vector<std::string_view>& b) {
    const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size()), max = n + m;
    std::vector<long> v(2 * max + 3, 0);
    const long offset = max + 1;
    std::vector<std::vector<long>> trace; // v over [-d, d] after step d
    for (long d = 0; d <= max; ++d) {
        bool done = false;
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                         ? v[offset + k + 1]
                         : v[offset + k - 1] + 1;
            long y = x - k;
            while (x < n && y < m && a[x] == b[y]) {
                ++x;
                ++y;
            }
            v[offset + k] = x;
            if (x >= n && y >= m) done = true;
        }
        trace.emplace_back(v.begin() + offset - d, v.begin() + offset + d + 1);
        if (done) break;
    }
    std::vector<std::pair<Op, size_t>> ops;
    long x = n, y = m;
    for (long d = static_cast<long>(trace.size()) - 1; d > 0; --d) {
        const std::vector<long>& previous = trace[d - 1]; // index k + (d - 1)
        auto at = [&](long k) { return previous[k + d - 1]; };
        long k = x - y;
        long previousK = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
        long previousX = at(previousK), previousY = previousX - previousK;
        while (x > previousX && y > previousY) {
            --y;
            ops.emplace_back(Op::kSame, --x);
        }
        if (x == previousX) {
            ops.emplace_back(Op::kAdded, --y);
        } else {
            ops.emplace_back(Op::kRemoved, --x);
        }
        x = previousX;
        y = previousY;
    }
    while (x > 0 && y > 0) {
        --y;
        ops.emplace_back(Op::kSame, --x);
    }
    std::reverse(ops.begin(), ops.end());
    return ops;
}

void appendLine(std::string& out, char mark, std::string_view line) {
    out += mark;
    out += line;
    if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

} // namespace

std::string applyFixEdits(const std::string& source, const std::vector<FixEdit>& edits) {
    struct Span {
        size_t begin, end;
        const FixEdit* edit;
    };
    std::vector<Span> spans;
    for (const FixEdit& edit : edits) {
        size_t begin = byteOffset(source, edit.startLine, edit.startColumn, edit);
        size_t end = byteOffset(source, edit.endLine, edit.endColumn, edit);
        if (end < begin)
            throw Error(fmt::format("fix edit {}:{} ends before it starts", edit.file, edit.startLine));
        spans.push_back({begin, end, &edit});
    }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
    });
    std::string out;
    size_t at = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
        const Span& span = spans[i];
        if (i > 0 && span.begin == spans[i - 1].begin && span.end == spans[i - 1].end &&
            span.edit->text == spans[i - 1].edit->text)
            continue; // the same edit, given by several findings
        if (span.begin < at)
            throw Error(fmt::format("fix edits overlap in {} at line {}", span.edit->file,
                                    span.edit->startLine));
        out.append(source, at, span.begin - at);
        out += span.edit->text;
        at = span.end;
    }
    out.append(source, at, std::string::npos);
    return out;
}

std::string unifiedDiff(const std::string& before, const std::string& after, const std::string& label) {
    if (before == after) return "";
    const std::vector<std::string_view> a = linesOf(before), b = linesOf(after);
    const std::vector<std::pair<Op, size_t>> ops = lineDifference(a, b);
    constexpr size_t kContext = 3;
    std::string out = fmt::format("--- a/{}\n+++ b/{}\n", label, label);
    size_t i = 0;
    while (i < ops.size()) {
        if (ops[i].first == Op::kSame) {
            ++i;
            continue;
        }
        // A hunk: from kContext lines before this change to kContext after the last change that
        // is no more than 2 * kContext unchanged lines from the one before it.
        size_t first = i >= kContext ? i - kContext : 0;
        while (first < i && ops[first].first != Op::kSame)
            ++first;
        size_t last = i;
        for (size_t j = i; j < ops.size(); ++j) {
            if (ops[j].first != Op::kSame) {
                last = j;
            } else if (j - last > 2 * kContext) {
                break;
            }
        }
        size_t end = std::min(ops.size(), last + 1 + kContext);
        // Where the hunk starts in each file: the lines of each side before `first`.
        size_t aStart = 0, bStart = 0;
        for (size_t j = 0; j < first; ++j) {
            if (ops[j].first != Op::kAdded) ++aStart;
            if (ops[j].first != Op::kRemoved) ++bStart;
        }
        size_t aCount = 0, bCount = 0;
        std::string body;
        for (size_t j = first; j < end; ++j) {
            auto [op, index] = ops[j];
            if (op == Op::kSame) {
                appendLine(body, ' ', a[index]);
                ++aCount;
                ++bCount;
            } else if (op == Op::kRemoved) {
                appendLine(body, '-', a[index]);
                ++aCount;
            } else {
                appendLine(body, '+', b[index]);
                ++bCount;
            }
        }
        out += fmt::format("@@ -{},{} +{},{} @@\n", aCount ? aStart + 1 : aStart, aCount,
                           bCount ? bStart + 1 : bStart, bCount);
        out += body;
        i = end;
    }
    return out;
}

} // namespace leakgate::lint
