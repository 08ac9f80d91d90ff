// A set of addresses, open-addressed in one array: what a set of a million objects' addresses
// costs without a node per entry (std::unordered_set allocates one per insert, and at a million
// entries that allocation is most of a scan's added time). Insert and look up only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace leakgate::base {

class PointerSet {
  public:
    void insert(const void* pointer) {
        if (!pointer) return;
        if ((size_ + 1) * 2 > slots_.size()) grow();
        if (place(slots_, pointer)) ++size_;
    }
    bool contains(const void* pointer) const {
        if (slots_.empty() || !pointer) return false;
        const size_t mask = slots_.size() - 1;
        for (size_t at = slot(pointer, mask);; at = (at + 1) & mask) {
            if (slots_[at] == pointer) return true;
            if (!slots_[at]) return false;
        }
    }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    void clear() {
        slots_.clear();
        size_ = 0;
    }

  private:
    static size_t slot(const void* pointer, size_t mask) {
        // Objects are 16-byte aligned: the low bits say nothing; a multiplicative hash mixes the rest.
        const auto bits = reinterpret_cast<std::uintptr_t>(pointer) >> 4;
        return static_cast<size_t>((bits * 0x9E3779B97F4A7C15ull) >> 17) & mask;
    }
    static bool place(std::vector<const void*>& slots, const void* pointer) {
        const size_t mask = slots.size() - 1;
        for (size_t at = slot(pointer, mask);; at = (at + 1) & mask) {
            if (slots[at] == pointer) return false;
            if (!slots[at]) {
                slots[at] = pointer;
                return true;
            }
        }
    }
    void grow() {
        std::vector<const void*> bigger(slots_.empty() ? 64 : slots_.size() * 2, nullptr);
        for (const void* pointer : slots_)
            if (pointer) place(bigger, pointer);
        slots_.swap(bigger);
    }

    std::vector<const void*> slots_; // a power of two long, at most half full
    size_t size_ = 0;
};

} // namespace leakgate::base
