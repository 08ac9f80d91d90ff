#include "lib/report/writers/html_text.h"

#include "lib/report/writers/junit.h"
#include "lib/report/writers/text.h"

#include <fmt/format.h>

namespace leakgate::report::html {

std::string esc(std::string_view text) {
    return escapeMarkup(withoutEscapes(std::string(text)), MarkupContext::kText);
}

std::string prose(std::string_view text) {
    std::string escaped = esc(text);
    std::string out;
    out.reserve(escaped.size() + 16);
    size_t at = 0;
    while (at < escaped.size()) {
        size_t open = escaped.find('`', at);
        size_t close = open == std::string::npos ? std::string::npos : escaped.find('`', open + 1);
        if (close == std::string::npos) {
            out.append(escaped, at, std::string::npos);
            break;
        }
        out.append(escaped, at, open - at);
        out += "<code>" + escaped.substr(open + 1, close - open - 1) + "</code>";
        at = close + 1;
    }
    return out;
}

std::string svgProse(std::string_view text) {
    std::string escaped = esc(text);
    std::string out;
    bool open = false;
    for (char c : escaped) {
        if (c != '`') {
            out += c;
            continue;
        }
        out += open ? "</tspan>" : R"(<tspan font-weight="600">)";
        open = !open;
    }
    if (open) {
        size_t at = out.rfind(R"(<tspan font-weight="600">)");
        out.erase(at, std::string_view(R"(<tspan font-weight="600">)").size());
    }
    return out;
}

std::string plain(std::string_view text) {
    std::string out(text);
    std::erase(out, '`');
    return esc(out);
}

std::string foldedProse(const std::string& text, const char* what) {
    size_t end = text.find('\n');
    if (end == std::string::npos) return prose(text);
    std::string rest = text.substr(end + 1);
    while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' '))
        rest.pop_back();
    if (rest.empty()) return prose(text.substr(0, end));
    return fmt::format("{}<details><summary>{}</summary><pre>{}</pre></details>",
                       prose(text.substr(0, end)), what, esc(rest));
}

std::string badge(const char* cssClass, std::string_view text) {
    return fmt::format(R"(<span class="badge {}">{}</span>)", cssClass, esc(text));
}

std::string shorten(const std::string& text, size_t limit) {
    if (text.size() <= limit) return text;
    size_t cut = limit - 1;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
        --cut; // whole UTF-8 only
    return text.substr(0, cut) + "\xE2\x80\xA6";
}

} // namespace leakgate::report::html
