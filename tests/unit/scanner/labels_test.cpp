#include "lib/scanner/labels.h"

#include "tests/unit/python_test_support.h"

#include <gtest/gtest.h>

namespace leakgate::scanner {
namespace {

namespace py = pybind11;

TEST(Labels, AFrameLocalHoldingItsOwnFrameIsNamed) {
    py::dict scope = testing::runPython("import sys\n"
                                        "def own_frame():\n"
                                        "    me = sys._getframe()\n"
                                        "    return me\n"
                                        "frame = own_frame()\n");
    PyObject* frame = scope["frame"].ptr();
    EdgeLabel label = labelEdge(frame, frame);
    EXPECT_EQ(label.kind, "local");
    EXPECT_EQ(label.name, "me");
    EXPECT_EQ(label.label, "local `me`");
    scope.clear();
    testing::clearGarbage();
}

TEST(Labels, FBackAndTracebackEdgesAreNamed) {
    py::dict scope = testing::runPython("import sys\n"
                                        "def inner():\n"
                                        "    return sys._getframe()\n"
                                        "def outer():\n"
                                        "    return inner(), sys._getframe()\n"
                                        "frame, caller = outer()\n"
                                        "try:\n"
                                        "    raise ValueError('x')\n"
                                        "except ValueError as e:\n"
                                        "    error = e\n"
                                        "tb = error.__traceback__\n");
    EXPECT_EQ(labelEdge(scope["frame"].ptr(), scope["caller"].ptr()).kind, "f_back");
    EXPECT_EQ(labelEdge(scope["error"].ptr(), scope["tb"].ptr()).kind, "__traceback__");
    py::object tbFrame = scope["tb"].attr("tb_frame");
    EXPECT_EQ(labelEdge(scope["tb"].ptr(), tbFrame.ptr()).kind, "tb_frame");
    tbFrame = py::none();
    scope.clear();
    testing::clearGarbage();
}

TEST(Labels, ContainersAndAttributesAreNamed) {
    py::dict scope = testing::runPython("class Box:\n"
                                        "    pass\n"
                                        "class Slotted:\n"
                                        "    __slots__ = ('held',)\n"
                                        "target = object.__new__(Box)\n"
                                        "box = Box(); box.payload = target\n"
                                        "slotted = Slotted(); slotted.held = target\n"
                                        "items = [1, 2, target]\n"
                                        "mapping = {'key': target}\n"
                                        "def make():\n"
                                        "    captured = target\n"
                                        "    def use():\n"
                                        "        return captured\n"
                                        "    return use\n"
                                        "closure = make()\n");
    PyObject* target = scope["target"].ptr();
    EXPECT_EQ(labelEdge(scope["box"].ptr(), target).label, ".payload");
    EXPECT_EQ(labelEdge(scope["slotted"].ptr(), target).label, ".held");
    EXPECT_EQ(labelEdge(scope["items"].ptr(), target).label, "[2]");
    EXPECT_EQ(labelEdge(scope["mapping"].ptr(), target).label, "['key']");
    py::object cells = scope["closure"].attr("__closure__");
    EXPECT_EQ(labelEdge(scope["closure"].ptr(), cells.ptr()).kind, "__closure__");
    EXPECT_EQ(freeVariableName(scope["closure"].ptr(), 0), "captured");
    EXPECT_EQ(labelEdge(cells[py::int_(0)].ptr(), target).kind, "cell_contents");
    EXPECT_EQ(labelEdge(scope["items"].ptr(), scope["mapping"].ptr()).kind, "ref");
}

TEST(Labels, ADefaultdictsFactoryIsNamed) {
    // Triton's JITFunction: `self.device_caches = defaultdict(self.create_binder)`, whose factory,
    // a bound method, holds the function that holds the dict.
    py::dict scope = testing::runPython("import collections\n"
                                        "class Jit:\n"
                                        "    def create_binder(self):\n"
                                        "        return None\n"
                                        "jit = Jit()\n"
                                        "factory = jit.create_binder\n"
                                        "caches = collections.defaultdict(factory)\n");
    EXPECT_EQ(labelEdge(scope["caches"].ptr(), scope["factory"].ptr()).label, "default_factory");
    EXPECT_EQ(labelEdge(scope["factory"].ptr(), scope["jit"].ptr()).label, "__self__");
}

TEST(Labels, TheCTypesADslProgramMeetsAreNamedNotReferent) {
    // Each edge is one a cycle in a DSL program's garbage can take; none may read `referent`.
    py::dict scope = testing::runPython(
        "import asyncio, collections, contextvars, ctypes, functools, weakref\n"
        "target = type('Target', (), {})()\n"
        "loop = asyncio.new_event_loop()\n"
        "future = loop.create_future()\n"
        "future.set_exception(ValueError('x'))\n"
        "future_exception = future.exception()\n"
        "raised = loop.create_future()\n"
        "try:\n"
        "    raise KeyError('y')\n"
        "except KeyError as error:\n"
        "    raised.set_exception(error)\n"
        "raised_traceback = raised.exception().__traceback__\n"
        "async def work():\n"
        "    return None\n"
        "coroutine = work()\n"
        "task = loop.create_task(coroutine)\n"
        "partial = functools.partial(print, target, key=target)\n"
        "class Owner:\n"
        "    def method(self):\n"
        "        return None\n"
        "owner = Owner()\n"
        "bound = owner.method\n"
        "queue = collections.deque([1, target])\n"
        "ordered = collections.OrderedDict(first=target)\n"
        "def callback():\n"
        "    return None\n"
        "finalizer = weakref.finalize(owner, callback)\n"
        "info = next(i for f, i in weakref.finalize._registry.items() if f is finalizer)\n"
        "reference = weakref.ref(owner, lambda r: None)\n"
        "buffer = ctypes.create_string_buffer(8)\n"
        "pointer = ctypes.pointer(ctypes.c_int(1))\n"
        "variable = contextvars.ContextVar('request')\n"
        "previous = object()\n"
        "variable.set(previous)\n"
        "token = variable.set(target)\n"
        "context = contextvars.copy_context()\n"
        "class Slotted:\n"
        "    __slots__ = ('held',)\n"
        "slotted = Slotted(); slotted.held = target\n"
        "method_type = type(bound)\n");
    auto label = [&](const char* from, PyObject* to) { return labelEdge(scope[from].ptr(), to); };
    PyObject* target = scope["target"].ptr();
    EXPECT_EQ(label("future", scope["future_exception"].ptr()).label, "._exception");
    EXPECT_EQ(label("task", scope["coroutine"].ptr()).label, "._coro");
    // The C Future keeps its exception's traceback in a field of its own (no getter shows it).
    EXPECT_EQ(label("raised", scope["raised_traceback"].ptr()).label, "._exception_tb");
    EXPECT_EQ(label("partial", scope["partial"].attr("args").ptr()).label, "args");
    EXPECT_EQ(label("partial", scope["partial"].attr("keywords").ptr()).label, "keywords");
    EXPECT_EQ(label("bound", scope["owner"].ptr()).label, "__self__");
    EXPECT_EQ(label("queue", target).label, "[1]");
    EXPECT_EQ(label("ordered", target).label, "['first']");
    EXPECT_EQ(label("info", scope["callback"].ptr()).label, "func");
    EXPECT_NE(label("reference", scope["reference"].attr("__callback__").ptr()).kind, "ref");
    EXPECT_EQ(label("pointer", scope["pointer"].attr("_objects").ptr()).label, "_objects");
    EXPECT_EQ(label("token", scope["previous"].ptr()).label, ".old_value");
    EXPECT_EQ(label("token", scope["variable"].ptr()).label, ".var");
    EXPECT_EQ(label("context", target).label, "context variable `request`");
    EXPECT_EQ(label("slotted", target).label, ".held");
    EXPECT_EQ(label("owner", scope["Owner"].ptr()).label, ".__class__");
    EXPECT_EQ(labelEdge(scope["callback"].ptr(), scope["callback"].attr("__name__").ptr()).label,
              ".__name__");
    scope["raised"].attr("exception")();
    scope["loop"].attr("run_until_complete")(scope["task"]);
    scope["loop"].attr("close")();
    scope.clear();
    testing::clearGarbage();
}

TEST(Labels, FrameInfoGivesTheQualifiedNameOnThreeElevenAndLater) {
    py::dict scope = testing::runPython("import sys\n"
                                        "class C:\n"
                                        "    def method(self):\n"
                                        "        return sys._getframe()\n"
                                        "frame = C().method()\n");
    FrameInfo info = frameInfo(scope["frame"].ptr());
#if PY_VERSION_HEX >= 0x030B0000
    EXPECT_EQ(info.function, "C.method");
#else
    EXPECT_EQ(info.function, "method"); // 3.10 has no co_qualname
#endif
    EXPECT_EQ(info.file, "<string>");
    // pybind11's exec prepends a coding line, so compare with what Python itself says.
    EXPECT_EQ(info.line, scope["frame"].attr("f_lineno").cast<int>());
    EXPECT_FALSE(isHarnessFrame(scope["frame"].ptr()));
    EXPECT_EQ(describeObject(scope["frame"].ptr()).rfind("frame of `", 0), 0u);
}

} // namespace
} // namespace leakgate::scanner
