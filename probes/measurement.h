// The three reads (docs/definitions.md, "Reads") around code run under gc.disable(): a
// Measurement owns the collector from begin() to finish() and calls every probe at each read
// (probes/probe.h). The workloads of a worker measure a callable (measure()); the Python
// package's region measures the body of a `with` statement, so the two halves are separate.
#pragma once

#include "leakgate/report.h"
#include "probes/probe.h"

#include <chrono>
#include <functional>
#include <string>

namespace leakgate::probes {

// Which reads finish() does: all three, or only the first, for a workload that measures nothing
// after its code returned (the soak reads RSS while it runs) and should not pay for a collection.
enum class Reads { kAll, kAfterReturn };

// The collections a measurement makes, each gc.collect(generation). By default each examines
// the whole heap. The Python package's region examines the young generations only, which is
// what the body could have made: begin() collects generations 0 and 1, which moves everything
// alive into the oldest, and under gc.disable() every object made after that stays in generation
// 0 until read 2 moves its survivors (and what it saved) to generation 1.
struct Collections {
    int earlier = 2; // begin(): what was garbage before the measured code; -1: none (the caller
                     // keeps what was there out of the reads another way)
    int saved = 2;   // read 2, with DEBUG_SAVEALL
    int last = 2;    // read 3
};

class Measurement {
  public:
    // Check names get `checkPrefix`. `result` and `probes` must outlive the measurement.
    Measurement(WorkloadResult& result, ProbeList& probes, std::string checkPrefix = "",
                Reads reads = Reads::kAll, Collections collections = {});

    // Disables the collector, collects what was garbage before (not the measured code's doing),
    // and calls the probes' `before`. The gc watch (watchGc) must be running.
    void begin();
    // The three reads, then: every check a probe did not decide becomes `error` when a probe (the
    // gc guard) invalidated the measurement; names get the prefix; the seconds are set. The
    // collector stays disabled. Measured code that raised reports it in `result.error` first:
    // the probes still read, and what they find is kept.
    void finish();
    // The collections of the reads to come (a region that had another begin inside it reads the
    // whole heap: the inner one's collections moved the outer body's objects to older generations).
    void setCollections(Collections collections) { collections_ = collections; }

  private:
    WorkloadResult& result_;
    ProbeList& probes_;
    std::string checkPrefix_;
    Reads reads_;
    Collections collections_;
    std::chrono::steady_clock::time_point started_;
};

// begin(), `body`, finish().
void measure(WorkloadResult& result, ProbeList& probes, const std::function<void()>& body,
             const std::string& checkPrefix = "", Reads reads = Reads::kAll);

} // namespace leakgate::probes
