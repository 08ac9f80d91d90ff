#include "lib/lint/fix.h"

#include "leakgate/errors.h"

#include <gtest/gtest.h>

#include <string>

namespace leakgate::lint {
namespace {

FixEdit edit(int startLine, int startColumn, int endLine, int endColumn, std::string text) {
    return FixEdit{"f.py", startLine, startColumn, endLine, endColumn, std::move(text)};
}

TEST(LintFix, EditsReplaceTheirRegionsCountingColumnsInCharacters) {
    std::string source = "a = 1\nb = \"é\" + x\nc = 3\n";
    // Columns are code points: "x" is the 11th character of line 2, the 12th byte.
    std::string fixed = applyFixEdits(source, {edit(2, 11, 2, 12, "y"), edit(1, 1, 1, 6, "a = 2")});
    EXPECT_EQ(fixed, "a = 2\nb = \"é\" + y\nc = 3\n");
}

TEST(LintFix, TheSameEditFromTwoFindingsIsMadeOnce) {
    std::string source = "x\ny\n";
    EXPECT_EQ(applyFixEdits(source, {edit(1, 1, 1, 2, "z"), edit(1, 1, 1, 2, "z")}), "z\ny\n");
}

TEST(LintFix, OverlappingOrOutOfRangeEditsAreRefused) {
    std::string source = "abc\ndef\n";
    EXPECT_THROW(applyFixEdits(source, {edit(1, 1, 2, 2, "x"), edit(1, 3, 1, 4, "y")}), Error);
    EXPECT_THROW(applyFixEdits(source, {edit(1, 1, 1, 9, "x")}), Error);
    EXPECT_THROW(applyFixEdits(source, {edit(7, 1, 7, 1, "x")}), Error);
}

TEST(LintFix, UnifiedDiffHasHunksWithThreeLinesOfContext) {
    std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
    std::string after = "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n";
    EXPECT_EQ(unifiedDiff(before, after, "f.py"), "--- a/f.py\n+++ b/f.py\n"
                                                  "@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n"
                                                  "@@ -10,3 +10,4 @@\n 10\n 11\n 12\n+13\n");
    EXPECT_EQ(unifiedDiff(before, before, "f.py"), "");
}

TEST(LintFix, UnifiedDiffMarksALastLineWithoutNewline) {
    EXPECT_EQ(unifiedDiff("a\nb", "a\nc", "f.py"),
              "--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
              "+c\n\\ No newline at end of file\n");
}

} // namespace
} // namespace leakgate::lint
