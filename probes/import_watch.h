// When the program's code imports: the marks that held-growth and the import-time classification
// (probes/import_marks.cpp) place around the modules a program loads. One watch for the process;
// probes listen to it between their before() and afterReturn().
#pragma once

namespace leakgate::probes {

class ImportListener {
  public:
    virtual ~ImportListener() = default;
    // A module starts loading (the "import" audit event, or importlib.import_module of a name not
    // yet in sys.modules) while no load was under way. `bounded`: an import statement
    // (builtins.__import__ or importlib.import_module) runs it, so importEnds() follows when the
    // outermost one returns. A load no statement started (a C extension's own import through the C
    // API) is not bounded: importEnds() comes only when the next import statement returns.
    virtual void importStarts(bool bounded) = 0;
    // The outermost import statement returned, and a load had started since the last call.
    virtual void importEnds() = 0;
};

// Starts telling `listener`; the first one wraps builtins.__import__ and importlib.import_module
// (and adds the process's one audit hook, which cannot be removed).
void watchImports(ImportListener* listener);
// Stops telling it; the last one puts the wrapped functions back.
void unwatchImports(ImportListener* listener);
// Whether a load is under way (importStarts() was called, importEnds() not yet).
bool importing();

} // namespace leakgate::probes
