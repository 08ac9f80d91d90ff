#include "lib/scanner/components.h"

#include "lib/base/check.h"

#include <algorithm>
#include <limits>

namespace leakgate::scanner {

Components Components::find(const ObjectGraph& graph) {
    // One word of state per node, which becomes the node's component: unvisited, then its
    // discovery index while it is open (on Tarjan's stack), then its component with kDone set.
    // The low link lives in the call frame: a node's is read only while it is on the call stack
    // (its children's come back through their frames), so no array of it, nor of discovery
    // indices, is kept beside the result (8 bytes per node fewer at the peak of a scan).
    constexpr std::uint32_t kUnvisited = std::numeric_limits<std::uint32_t>::max();
    constexpr std::uint32_t kDone = std::uint32_t{1} << 31;
    const size_t count = graph.size();
    LEAKGATE_CHECK(count < kDone);
    Components result;
    std::vector<std::uint32_t>& state = result.componentOf_;
    state.assign(count, kUnvisited);
    result.members_.reserve(count);

    // Nodes that refer to themselves: a component of one such node is a cycle. Noted on the way,
    // as the walk meets every edge, so that isCyclic reads a bit.
    std::vector<bool> selfLoop(count, false);
    std::vector<NodeId> stack; // Tarjan's stack of open nodes
    // A call keeps its node's edges as a span, read once when the node opens: the graph's edge
    // offsets are packed (ObjectGraph::Runs), and decoding them at every step of the walk doubled
    // its time at 1e7 nodes. The call stack is as deep as the walk, not as long as the graph.
    struct Call {
        NodeId node;
        std::uint32_t low;
        const NodeId* nextEdge;
        const NodeId* endEdge;
    };
    std::vector<Call> calls; // the explicit recursion
    std::uint32_t nextOrder = 0;
    auto open = [&](NodeId node) {
        state[node] = nextOrder;
        const auto successors = graph.successors(node);
        calls.push_back({node, nextOrder, successors.data(), successors.data() + successors.size()});
        stack.push_back(node);
        ++nextOrder;
    };

    for (NodeId root = 0; root < count; ++root) {
        if (state[root] != kUnvisited) continue;
        open(root);
        while (!calls.empty()) {
            Call& call = calls.back();
            if (call.nextEdge != call.endEdge) {
                NodeId next = *call.nextEdge++;
                if (next == call.node) selfLoop[next] = true;
                if (state[next] == kUnvisited) {
                    open(next); // `call` is not used after this
                } else if ((state[next] & kDone) == 0) {
                    call.low = std::min(call.low, state[next]); // still on the stack
                }
                continue;
            }
            const Call finished = call;
            calls.pop_back();
            if (!calls.empty()) calls.back().low = std::min(calls.back().low, finished.low);
            if (finished.low != state[finished.node]) continue;
            // `finished.node` roots a component: pop its members.
            auto component = static_cast<ComponentId>(result.offsets_.size() - 1);
            NodeId member;
            do {
                member = stack.back();
                stack.pop_back();
                state[member] = kDone | component;
                result.members_.push_back(member);
            } while (member != finished.node);
            const std::uint32_t size =
                static_cast<std::uint32_t>(result.members_.size()) - result.offsets_.back();
            result.cyclic_.push_back(size > 1 || selfLoop[finished.node]);
            result.offsets_.push_back(static_cast<std::uint32_t>(result.members_.size()));
        }
    }
    for (std::uint32_t& word : state)
        word &= ~kDone;
    return result;
}

bool Components::isCyclic(const ObjectGraph& graph, ComponentId component) const {
    (void)graph;
    return cyclic_[component];
}

} // namespace leakgate::scanner
