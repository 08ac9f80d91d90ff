// Strongly connected components of an ObjectGraph, by Tarjan's algorithm with an explicit stack:
// no recursion, so a chain of 1e6 objects cannot overflow the C stack; linear time.
#pragma once

#include "lib/scanner/object_graph.h"

#include <span>
#include <vector>

namespace leakgate::scanner {

using ComponentId = std::uint32_t;

class Components {
  public:
    // Components are numbered in reverse topological order: every component reachable from
    // component c has an id smaller than c (Tarjan emits sinks first).
    static Components find(const ObjectGraph& graph);

    size_t count() const { return offsets_.size() - 1; }
    ComponentId of(NodeId node) const { return componentOf_[node]; }
    std::span<const NodeId> members(ComponentId component) const {
        return {members_.data() + offsets_[component], members_.data() + offsets_[component + 1]};
    }
    // Every component's members, one run after another: members(c) starts at firstMember(c).
    std::span<const NodeId> allMembers() const { return members_; }
    std::uint32_t firstMember(ComponentId component) const { return offsets_[component]; }
    // A cycle: more than one member, or one member that refers to itself (`graph` is the one the
    // components were found in; the answer was noted then).
    bool isCyclic(const ObjectGraph& graph, ComponentId component) const;

  private:
    std::vector<ComponentId> componentOf_;
    std::vector<std::uint32_t> offsets_{0};
    std::vector<NodeId> members_;
    std::vector<bool> cyclic_; // per component
};

} // namespace leakgate::scanner
