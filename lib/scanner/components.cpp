#include "lib/scanner/components.h"

#include <algorithm>
#include <limits>

namespace leakgate::scanner {

Components Components::find(const ObjectGraph& graph) {
    constexpr std::uint32_t kUnvisited = std::numeric_limits<std::uint32_t>::max();
    const size_t count = graph.size();
    Components result;
    result.componentOf_.assign(count, kUnvisited);
    result.members_.reserve(count);

    std::vector<std::uint32_t> order(count, kUnvisited); // discovery index
    std::vector<std::uint32_t> low(count, 0);
    std::vector<NodeId> stack; // Tarjan's stack of open nodes
    struct Call {
        NodeId node;
        std::uint32_t nextEdge;
    };
    std::vector<Call> calls; // the explicit recursion
    std::uint32_t nextOrder = 0;

    for (NodeId root = 0; root < count; ++root) {
        if (order[root] != kUnvisited) continue;
        calls.push_back({root, 0});
        order[root] = low[root] = nextOrder++;
        stack.push_back(root);
        while (!calls.empty()) {
            Call& call = calls.back();
            auto successors = graph.successors(call.node);
            if (call.nextEdge < successors.size()) {
                NodeId next = successors[call.nextEdge++];
                if (order[next] == kUnvisited) {
                    order[next] = low[next] = nextOrder++;
                    stack.push_back(next);
                    calls.push_back({next, 0});
                } else if (result.componentOf_[next] == kUnvisited) {
                    low[call.node] = std::min(low[call.node], order[next]); // still on the stack
                }
                continue;
            }
            NodeId node = call.node;
            calls.pop_back();
            if (!calls.empty()) low[calls.back().node] = std::min(low[calls.back().node], low[node]);
            if (low[node] != order[node]) continue;
            // `node` roots a component: pop its members.
            auto component = static_cast<ComponentId>(result.offsets_.size() - 1);
            NodeId member;
            do {
                member = stack.back();
                stack.pop_back();
                result.componentOf_[member] = component;
                result.members_.push_back(member);
            } while (member != node);
            result.offsets_.push_back(static_cast<std::uint32_t>(result.members_.size()));
        }
    }
    return result;
}

bool Components::isCyclic(const ObjectGraph& graph, ComponentId component) const {
    auto nodes = members(component);
    if (nodes.size() > 1) return true;
    auto successors = graph.successors(nodes[0]);
    return std::find(successors.begin(), successors.end(), nodes[0]) != successors.end();
}

} // namespace leakgate::scanner
