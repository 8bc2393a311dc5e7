// module.cpp: the Python module `eddy` (pybind11). Converts between Python
// and the front end (front.hpp), releases the GIL while the device works,
// checks for signals (Ctrl-C) between steps, and turns eddy's errors into
// Python exceptions with the core's messages.
#include "front.hpp"

#include "cl.hpp"
#include "io.hpp"
#include "profiler.hpp"
#include "shape_spec_io.hpp"
#include "session.hpp"

#include <nlohmann/json.hpp>
#include <pybind11/numpy.h>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cxxabi.h>  // abi::__forced_unwind
#include <exception>
#include <mutex>
#include <optional>
#include <sstream>

namespace py = pybind11;

namespace eddy::python {
namespace {

// The exception types, created once when the module is imported.
PyObject* gError = nullptr;
PyObject* gBlowUpError = nullptr;

// One simulation and the lock that keeps a second thread out while the
// first one steps it with the GIL released. Shared by the Simulation object
// and its params view.
struct Core {
  std::unique_ptr<Front> front;
  std::mutex mutex;
  std::vector<std::string> fieldNames;  // per-particle arrays, known after the first read
  bool fieldNamesKnown = false;
};
using CorePtr = std::shared_ptr<Core>;

// Holds the simulation for one call; a call from another thread while it is
// held (step or run_until running with the GIL released) is refused, never
// waited for: waiting with the GIL held could deadlock with the signal check.
class Busy {
 public:
  explicit Busy(Core& c) : lock_(c.mutex, std::try_to_lock) {
    if (!lock_.owns_lock())
      throw Error("the simulation is busy in another thread (step or run_until is running); "
                  "call it from one thread at a time");
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

// Runs f with the GIL released (device work: building, stepping, reading back).
// The GIL is taken back by a plain call, not a destructor: a daemon thread
// that takes it while Python shuts down is ended by pthread_exit, a forced
// unwind, which a destructor (noexcept) turned into std::terminate (an abort
// at exit while a daemon thread stepped). Unwound from here it ends the
// thread quietly (pybind11 lets a forced unwind through).
template <class F>
auto released(F&& f) {
  using R = decltype(f());
  PyThreadState* const state = PyEval_SaveThread();
  std::optional<R> result;
  std::exception_ptr failed;
  try {
    result.emplace(f());
  } catch (abi::__forced_unwind&) {
    throw;
  } catch (...) {
    failed = std::current_exception();
  }
  PyEval_RestoreThread(state);
  if (failed) std::rethrow_exception(failed);
  return std::move(*result);
}

ParamValue toParamValue(py::handle h) {
  ParamValue v;
  if (py::isinstance<py::bool_>(h)) {
    v.kind = ParamValue::Kind::Bool;
    v.boolean = h.cast<bool>();
  } else if (py::isinstance<py::str>(h)) {
    v.kind = ParamValue::Kind::Text;
    v.text = h.cast<std::string>();
  } else {
    v.kind = ParamValue::Kind::Other;
    v.text = Py_TYPE(h.ptr())->tp_name;
    if (PyNumber_Check(h.ptr())) {  // int, float, NumPy scalars, Fraction, ...
      const double d = PyFloat_AsDouble(h.ptr());
      if (d == -1.0 && PyErr_Occurred()) {
        // An int beyond a double's range is a number far out of any range;
        // anything else (complex, ...) is not a number here.
        const bool huge = PyErr_ExceptionMatches(PyExc_OverflowError) && PyLong_Check(h.ptr());
        PyErr_Clear();
        if (huge) {
          v.kind = ParamValue::Kind::Number;
          v.number = _PyLong_Sign(h.ptr()) < 0 ? -HUGE_VAL : HUGE_VAL;
        }
      } else {
        v.kind = ParamValue::Kind::Number;
        v.number = d;
      }
    }
  }
  return v;
}

// A parameter's value as Python sees it: an enum's choice, a bool, an int, a float.
py::object paramObject(const ParamDesc& d, double v) {
  if (d.isEnum()) return py::str(d.valueText(v));
  if (d.isBool()) return py::bool_(v != 0);
  if (d.integer) return py::int_(std::llround(v));
  return py::float_(v);
}

py::dict paramInfo(const ParamDesc& d) {
  py::dict o;
  o["name"] = d.name;
  o["label"] = d.label;
  o["group"] = d.group;
  o["unit"] = d.unit;
  o["default"] = paramObject(d, d.def);
  if (d.isEnum()) {
    o["choices"] = d.choices;
  } else if (!d.isBool()) {
    o["min"] = paramObject(d, d.min);
    o["max"] = paramObject(d, d.max);
  }
  o["type"] = d.typeName();
  o["rebuild"] = d.rebuild;
  o["description"] = d.description;
  return o;
}

py::dict deviceDict(const DeviceInfo& info) {
  const DeviceFields f = deviceFields(info);
  py::dict d;
  for (const auto& [k, v] : f.text) d[k.c_str()] = v;
  d["compute_units"] = f.computeUnits;
  d["global_mem_bytes"] = f.globalMemBytes;
  d["gl_sharing"] = f.glSharing;
  return d;
}

// NumPy array that owns the vector it views (no copy).
py::array floatArray(std::vector<float>&& values, size_t n, unsigned components) {
  auto* owned = new std::vector<float>(std::move(values));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  std::vector<py::ssize_t> shape{py::ssize_t(n)};
  if (components != 1) shape.push_back(py::ssize_t(components));
  return py::array_t<float>(shape, owned->data(), owner);
}

std::vector<std::string> arrayNames(const ParticleState& s) {
  std::vector<std::string> names;
  for (const auto& a : s.arrays) names.push_back(a.name);
  return names;
}

// The state read back with the GIL released; remembers the field names.
ParticleState readState(Core& c) {
  ParticleState s = released([&] { return c.front->state(); });
  c.fieldNames = arrayNames(s);
  c.fieldNamesKnown = true;
  return s;
}

py::array takeField(ParticleState& s, const std::string& name) {
  for (auto& a : s.arrays)
    if (a.name == name) return floatArray(std::move(a.values), s.size(), a.components);
  throw ArgumentError("field '" + name + "': not a per-particle field of this simulation; fields: " +
                      joinNames(arrayNames(s)));
}

// Asks Python whether a signal arrived (Ctrl-C), at most every 50 ms of wall
// clock, from the step loop that runs with the GIL released. A pending
// exception (KeyboardInterrupt) stops the loop at the next step boundary
// and is raised once the loop has ended.
class SignalCheck {
 public:
  // Made with the GIL held. Only the main thread handles signals
  // (PyErr_CheckSignals does nothing in another), so only there is the GIL
  // taken for it: a daemon thread that took it while Python shut down was
  // ended mid-step.
  SignalCheck() : mainThread_(PyThread_get_thread_ident() == mainThreadId()) {}

  bool operator()() {
    if (pending_) return true;
    if (!mainThread_) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(50)) return false;
    last_ = now;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) pending_ = std::make_unique<py::error_already_set>();
    return bool(pending_);
  }
  // With the GIL held: raises the pending exception, if any.
  void raise() {
    if (pending_) throw py::error_already_set(*pending_);
  }

 private:
  static unsigned long mainThreadId() {
    return py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  }

  bool mainThread_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::unique_ptr<py::error_already_set> pending_;
};

constexpr uint64_t kDefaultCheckEvery = 100;  // eddy-cli run --check-every's default

void advance(Core& c, uint64_t steps, std::optional<double> until, uint64_t checkEvery) {
  Busy busy(c);
  SignalCheck signals;
  released([&] {
    c.front->advance(steps, until, checkEvery, [&] { return signals(); });
    return 0;
  });
  signals.raise();
}

// ---- The params view: a dict-like window on the simulation's parameters. ----

struct ParamsView {
  CorePtr core;

  Params& params() { return core->front->sim().params(); }
  const ParamDesc& desc(const std::string& key) {
    const ParamDesc* d = params().find(key);
    if (!d)
      throw py::key_error("unknown parameter '" + key + "'; known parameters: " +
                          params().knownKeys());
    return *d;
  }
  py::object get(const std::string& key) {
    Busy busy(*core);
    const ParamDesc& d = desc(key);  // KeyError first, for an unknown key
    return paramObject(d, params().get(key));
  }
  void set(const std::string& key, py::handle value) {
    Busy busy(*core);
    const double v = paramValue(params(), key, toParamValue(value));
    Params trial = params();
    trial.set(key, v);
    checkTogether(trial);
    core->front->setParam(key, v);
  }
  // Values that contradict each other (min_dt above max_dt, min_iterations
  // above max_iterations) are refused as building a scene refuses them: the
  // solver would clamp to an empty range. update() sets a pair at once.
  void checkTogether(const Params& trial) {
    try {
      checkParamsTogether(core->front->spec().sim, trial);
    } catch (const Error& e) {
      throw ArgumentError(std::string(e.what()) + " (set both at once with params.update({...}))");
    }
  }
  std::vector<std::string> keys() {
    std::vector<std::string> k;
    for (const auto& d : params().declarations()) k.push_back(d.name);
    return k;
  }
  py::dict asDict() {
    Busy busy(*core);
    py::dict out;
    for (const auto& d : params().declarations()) out[d.name.c_str()] = paramObject(d, params().get(d.name));
    return out;
  }
};

// ---- The Simulation object. ----

struct PySimulation {
  explicit PySimulation(std::unique_ptr<Front> f) : corePtr_(std::make_shared<Core>()), made_(kMade) {
    corePtr_->front = std::move(f);
  }
  // pybind11 allocates the object with this operator new, also for
  // eddy.Simulation.__new__(eddy.Simulation) without __init__, after which a
  // method finds it unconstructed: zeroed, made_ tells (not garbage memory).
  static void* operator new(size_t n) { return std::memset(::operator new(n), 0, n); }
  static void operator delete(void* p) { ::operator delete(p); }

  Core& core() { return *shared(); }
  const CorePtr& shared() {
    if (made_ != kMade)
      throw Error("this eddy.Simulation was never made: create one with eddy.Simulation(...), "
                  "eddy.Simulation.load() or eddy.Simulation.from_config()");
    return corePtr_;
  }
  Front& front() { return *core().front; }
  bool made() const { return made_ == kMade; }

 private:
  static constexpr uint64_t kMade = 0x656464792d73696dULL;
  CorePtr corePtr_;
  uint64_t made_ = 0;
};

std::vector<std::pair<std::string, ParamValue>> paramList(const py::object& params) {
  std::vector<std::pair<std::string, ParamValue>> out;
  if (params.is_none()) return out;
  if (!py::isinstance<py::dict>(params) && !py::hasattr(params, "items"))
    throw ArgumentError(std::string("params: expected a dict of parameter: value, got ") +
                        Py_TYPE(params.ptr())->tp_name);
  for (auto item : params.attr("items")()) {
    auto kv = item.cast<py::tuple>();
    if (!py::isinstance<py::str>(kv[0]))
      throw ArgumentError(std::string("params: keys are parameter names (str), got ") +
                          Py_TYPE(kv[0].ptr())->tp_name);
    out.emplace_back(kv[0].cast<std::string>(), toParamValue(kv[1]));
  }
  return out;
}

// A whole number (int, NumPy integer: anything with __index__, not a bool)
// in [min, max]; the messages as eddy-cli's for --n / --steps.
long long wholeNumber(const py::object& o, const char* what, unsigned long long min,
                      unsigned long long max) {
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (py::isinstance<py::bool_>(o) || !PyIndex_Check(o.ptr()))
    throw ArgumentError(std::string(what) + ": expected a whole number in " + range + ", got " +
                        Py_TYPE(o.ptr())->tp_name);
  const py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(o.ptr()));
  if (!i) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow || v < 0 || static_cast<unsigned long long>(v) < min ||
      static_cast<unsigned long long>(v) > max)
    throw ArgumentError(std::string(what) + ": " + py::repr(i).cast<std::string>() +
                        " is out of range " + range);
  return v;
}

// A str or an os.PathLike (what optionalText takes).
bool isTextOrPath(const py::object& o) {
  return py::isinstance<py::str>(o) || py::isinstance(o, py::module_::import("os").attr("PathLike"));
}

std::string optionalText(const py::object& o, const char* what) {
  if (o.is_none()) return "";
  if (!isTextOrPath(o))
    throw ArgumentError(std::string(what) + ": expected a string, got " + Py_TYPE(o.ptr())->tp_name);
  const py::object text = py::module_::import("os").attr("fspath")(o);
  if (!py::isinstance<py::str>(text))
    throw ArgumentError(std::string(what) + ": expected a string, got a path of " + Py_TYPE(text.ptr())->tp_name);
  std::string out = py::str(text);
  // As the CLI's --sim '', --scene '', --ic '': "" would silently mean the default.
  if (out.empty())
    throw ArgumentError(std::string(what) + ": the string is empty; give one, or None (the default)");
  // As Python's open(): a path cut at a NUL would name another file.
  if (out.find('\0') != std::string::npos)
    throw ArgumentError(std::string(what) + ": embedded null character in " + printable(out));
  return out;
}

// A dict (a spec, a config) as JSON, converted here rather than by
// json.dumps, whose NaN/Infinity are no JSON (the parser's message then named
// neither the key nor the problem) and which refuses NumPy scalars and
// arrays. Numbers are Python's int and float and anything with __index__ or
// __float__; a sequence is a list or a tuple; anything with tolist() (NumPy
// arrays and scalars) is what that returns. Errors: "WHERE: key 'PATH': ..." as the config
// file's.
nlohmann::json toJson(py::handle h, const std::string& where, const std::string& path = "",
                      int depth = 0) {
  auto fail = [&](const std::string& why) -> ArgumentError {
    return ArgumentError(where + (path.empty() ? "" : ": key '" + path + "'") + ": " + why);
  };
  if (depth > 32) throw fail("nested deeper than 32 levels (a circular reference?)");
  if (h.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(h)) return h.cast<bool>();
  if (py::isinstance<py::str>(h)) return h.cast<std::string>();
  if (py::isinstance<py::dict>(h)) {
    nlohmann::json o = nlohmann::json::object();
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(h)) {
      if (!py::isinstance<py::str>(k))
        throw fail(std::string("keys must be strings, got ") + Py_TYPE(k.ptr())->tp_name);
      const std::string key = k.cast<std::string>();
      o[key] = toJson(v, where, path.empty() ? key : path + "." + key, depth + 1);
    }
    return o;
  }
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    nlohmann::json a = nlohmann::json::array();
    size_t i = 0;
    for (auto v : h) a.push_back(toJson(v, where, path + "[" + std::to_string(i++) + "]", depth + 1));
    return a;
  }
  // NumPy arrays and scalars (before __index__: a one-element array has one)
  if (!PyLong_Check(h.ptr()) && !PyFloat_Check(h.ptr()) && py::hasattr(h, "tolist"))
    return toJson(h.attr("tolist")(), where, path, depth + 1);
  if (PyIndex_Check(h.ptr())) {  // int and its kind
    const py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(h.ptr()));
    if (!i) throw py::error_already_set();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (!overflow) return v;
    const double d = PyLong_AsDouble(i.ptr());  // beyond 64 bits: a double, if it is one
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      throw fail(std::string(_PyLong_Sign(i.ptr()) < 0 ? "a negative" : "an") +
                 " integer beyond the range of a number (magnitude up to about 1.8e308)");
    }
    return d;
  }
  if (PyFloat_Check(h.ptr()) || (PyNumber_Check(h.ptr()) && py::hasattr(h, "__float__"))) {
    const double d = PyFloat_AsDouble(h.ptr());
    if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    if (!std::isfinite(d))
      throw fail(py::repr(h).cast<std::string>() + " is not a finite number");
    return d;
  }
  throw fail(std::string("expected a number, a string, a bool, a list or a dict, got ") +
             Py_TYPE(h.ptr())->tp_name);
}

// A list of solids or probes, each item a string in the command line's
// syntax (--obstacle / --body / --probe SPEC) or a dict of the config file's
// structure (its "obstacles" / "bodies" / "probes" entries). Errors name the
// keyword and the item: "obstacles[1]: ...".
template <class Spec, class FromText, class FromJson>
std::vector<Spec> specList(const py::object& list, const char* what, FromText fromText,
                           FromJson fromJson) {
  std::vector<Spec> out;
  if (list.is_none()) return out;
  if (py::isinstance<py::str>(list) || py::isinstance<py::dict>(list) || !py::hasattr(list, "__iter__"))
    throw ArgumentError(std::string(what) + ": expected a list of specs (strings or dicts), got " +
                        Py_TYPE(list.ptr())->tp_name);
  size_t i = 0;
  for (auto item : list) {
    const std::string where = std::string(what) + "[" + std::to_string(i++) + "]";
    try {
      if (py::isinstance<py::str>(item)) {
        out.push_back(fromText(item.cast<std::string>()));
      } else if (py::isinstance<py::dict>(item)) {
        out.push_back(fromJson(toJson(item, where), where));
      } else {
        throw ArgumentError(where + ": expected a string or a dict, got " + Py_TYPE(item.ptr())->tp_name);
      }
    } catch (const ArgumentError&) {
      throw;
    } catch (const std::exception& e) {
      const std::string msg = e.what();
      throw ArgumentError(msg.rfind(where, 0) == 0 ? msg : where + ": " + msg);
    }
  }
  return out;
}

std::vector<ShapeSpec> obstacleList(const py::object& list) {
  return specList<ShapeSpec>(
      list, "obstacles", [](const std::string& t) { return parseShapeSpec(t); },
      [](const nlohmann::json& j, const std::string& where) { return shapeSpecFromJson(j, where); });
}

std::vector<BodySpec> bodyList(const py::object& list) {
  return specList<BodySpec>(
      list, "bodies", [](const std::string& t) { return parseBodySpec(t); },
      [](const nlohmann::json& j, const std::string& where) { return bodySpecFromJson(j, where, ""); });
}

std::vector<ProbeSpec> probeList(const py::object& list) {
  return specList<ProbeSpec>(
      list, "probes", [](const std::string& t) { return parseProbeSpec(t); },
      [](const nlohmann::json& j, const std::string& where) {
        // The config file's probe objects, worded as the solids' (WHERE: key 'KEY': ...).
        return probeSpecFromJson(j, [&where](const std::string& key, const std::string& why) {
          return where + (key.empty() ? "" : ": key '" + key + "'") + ": " + why;
        });
      });
}

std::optional<unsigned long long> optionalCount(const py::object& o, const char* what) {
  if (o.is_none()) return std::nullopt;
  return static_cast<unsigned long long>(wholeNumber(o, what, kLimitEvery.min, kLimitEvery.max));
}

// A number of simulated seconds: int, float, NumPy scalars (not a bool, a
// complex or an array); any value, the caller checks the range.
double seconds(const py::object& o, const char* what) {
  auto refuse = [&] {
    return ArgumentError(std::string(what) + ": expected a number of simulated seconds, got " +
                         Py_TYPE(o.ptr())->tp_name);
  };
  if (py::isinstance<py::bool_>(o) || !PyNumber_Check(o.ptr()) || PyComplex_Check(o.ptr())) throw refuse();
  const double d = PyFloat_AsDouble(o.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    const bool huge = PyErr_ExceptionMatches(PyExc_OverflowError);
    PyErr_Clear();
    if (!huge) throw refuse();
    return _PyLong_Sign(o.ptr()) < 0 ? -HUGE_VAL : HUGE_VAL;  // an int beyond a double: out of any range
  }
  return d;
}

std::optional<double> optionalSeconds(const py::object& o, const char* what) {
  if (o.is_none()) return std::nullopt;
  return seconds(o, what);
}

std::string pathText(const py::object& o, const char* what) {
  if (o.is_none()) throw ArgumentError(std::string(what) + ": expected a path, got None");
  return optionalText(o, what);
}

}  // namespace
}  // namespace eddy::python

using namespace eddy;
using namespace eddy::python;

PYBIND11_MODULE(eddy, m) {
  m.doc() =
      "eddy: SPH fluids and gravitational N-body on OpenCL devices, from Python.\n\n"
      "The same core as eddy-cli: Simulation(sim=, scene=, n=, device=, params=) means\n"
      "`eddy-cli run --sim --scene --n --device --set`. See docs/USAGE.md, \"Python\".";
  m.attr("__version__") = EDDY_VERSION;

  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<BlowUpError> blowUp(m, "BlowUpError", error.ptr());
  gError = error.ptr();
  gBlowUpError = blowUp.ptr();
  error.doc() = "A runtime failure (device, file, simulation): eddy-cli's exit 1.";
  blowUp.doc() = "The state went non-finite (NaN or infinity): the run stopped.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const BlowUpError& e) {
      PyErr_SetString(gBlowUpError, e.what());
    } catch (const ArgumentError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ParamError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(gError, e.what());
    } catch (const cl::Error& e) {
      PyErr_SetString(gError, describe(e).c_str());
    }
  });

  m.def(
      "devices",
      [] {
        const auto all = released([] { return enumerateDevices(); });
        py::list out;
        for (const auto& d : all) out.append(deviceDict(d));
        return out;
      },
      "Every OpenCL device of every platform (as `eddy-cli devices`), as dicts.");
  m.def(
      "simulations", [] { return simulationNames(); },
      "The simulation types (`sim=`), the default first.");
  m.def(
      "scenes",
      [](const std::string& sim) {
        const auto& sims = simulationNames();
        if (std::find(sims.begin(), sims.end(), sim) == sims.end())
          throw ArgumentError("sim='" + sim + "': unknown simulation; known: " + joinNames(sims));
        return sceneNames(sim);
      },
      py::arg("sim"), "The scenes of a simulation type, the default first.");
  m.def(
      "parameters",
      [](const std::string& sim) {
        const auto& sims = simulationNames();
        if (std::find(sims.begin(), sims.end(), sim) == sims.end())
          throw ArgumentError("sim='" + sim + "': unknown simulation; known: " + joinNames(sims));
        py::dict out;
        for (const auto& d : paramDecl(sim)) out[d.name.c_str()] = paramInfo(d);
        return out;
      },
      py::arg("sim"),
      "Every declared parameter of a simulation type (as `eddy-cli params`): "
      "name -> dict(label, group, unit, default, min, max or choices, type, rebuild, description).");

  py::class_<ParamsView>(m, "Params",
                         "The simulation's parameters as a dict-like view. Reading gives the "
                         "current value (a choice as its name, a bool, an int or a float); "
                         "assigning checks it as `--set` does (ValueError with the CLI's "
                         "message) and it takes effect at the next step.")
      .def("__getitem__", &ParamsView::get)
      .def("__setitem__", &ParamsView::set)
      .def("__delitem__",
           [](ParamsView&, const std::string& key) {
             throw py::type_error("parameters cannot be deleted ('" + key + "')");
           })
      .def("__contains__", [](ParamsView& v, py::handle key) {
        return py::isinstance<py::str>(key) && v.params().find(key.cast<std::string>()) != nullptr;
      })
      .def("__len__", [](ParamsView& v) { return v.params().declarations().size(); })
      .def("__iter__", [](ParamsView& v) { return py::iter(py::cast(v.keys())); })
      .def("keys", &ParamsView::keys)
      .def("values", [](ParamsView& v) { return v.asDict().attr("values")(); })
      .def("items", [](ParamsView& v) { return v.asDict().attr("items")(); })
      .def(
          "get",
          [](ParamsView& v, const std::string& key, py::object dflt) -> py::object {
            if (!v.params().find(key)) return dflt;
            return v.get(key);
          },
          py::arg("key"), py::arg("default") = py::none())
      .def(
          "update",
          [](ParamsView& v, const py::object& values, const py::kwargs& more) {
            // Every value is checked before any is set: all or nothing.
            // As dict.update: a mapping, and/or keywords (these last).
            Busy busy(*v.core);
            std::vector<std::pair<std::string, double>> checked;
            auto given = paramList(values);
            for (auto& kv : paramList(more)) given.push_back(std::move(kv));
            for (const auto& [k, val] : given)
              checked.emplace_back(k, paramValue(v.params(), k, val));
            Params trial = v.params();
            for (const auto& [k, val] : checked) trial.set(k, val);
            v.checkTogether(trial);
            trial = v.params();
            for (const auto& [k, val] : checked) {
              const ParamDesc* d = trial.find(k);
              if (d && d->rebuild && trial.get(k) != val)
                throw ArgumentError("parameter '" + k +
                                    "' applies only when the scene is built; a running "
                                    "simulation keeps its particles: give it as "
                                    "eddy.Simulation(..., params={'" + k + "': ...})");
            }
            for (const auto& [k, val] : checked) v.core->front->setParam(k, val);
          },
          py::arg("values") = py::none(),
          "Sets several parameters, from a dict and/or keywords (as dict.update); none is set if "
          "one is refused.")
      .def("to_dict", &ParamsView::asDict, "The current values as a plain dict.")
      .def(
          "info", [](ParamsView& v, const std::string& key) { return paramInfo(v.desc(key)); },
          py::arg("key"), "The declaration: unit, range or choices, default, description.")
      .def("__repr__", [](ParamsView& v) { return "eddy.Params(" + py::repr(v.asDict()).cast<std::string>() + ")"; });

  py::class_<PySimulation>(m, "Simulation",
                           "One simulation on one OpenCL device. Keyword arguments as "
                           "`eddy-cli run`: sim (--sim), scene (--scene), n (--n), ic (--ic), "
                           "device (--device; None: a GPU, else a CPU device), params (--set).")
      .def(py::init([](const py::object& sim, const py::object& scene, const py::object& n,
                       const py::object& device, const py::object& params, const py::object& ic,
                       const py::object& obstacles, const py::object& bodies,
                       const py::object& probes, const py::object& probeEvery,
                       const py::object& probeDt) {
             BuildArgs a;
             a.sim = optionalText(sim, "sim");
             if (a.sim.empty())  // the issue's default: the desktop app's type (SPH dam break)
               for (const auto& t : simulationTypes())
                 if (t.appDefault && a.sim.empty()) a.sim = t.name;
             a.scene = optionalText(scene, "scene");
             if (!n.is_none()) a.n = wholeNumber(n, "n", kLimitN.min, kLimitN.max);
             a.device = optionalText(device, "device");
             a.ic = optionalText(ic, "ic");
             a.params = paramList(params);
             a.obstacles = obstacleList(obstacles);
             a.bodies = bodyList(bodies);
             a.probes = probeList(probes);
             a.probeEvery = optionalCount(probeEvery, "probe_every");
             a.probeDt = optionalSeconds(probeDt, "probe_dt");
             return PySimulation(released([&] { return Front::build(a); }));
           }),
           py::kw_only(), py::arg("sim") = py::none(), py::arg("scene") = py::none(),
           py::arg("n") = py::none(), py::arg("device") = py::none(),
           py::arg("params") = py::none(), py::arg("ic") = py::none(),
           py::arg("obstacles") = py::none(), py::arg("bodies") = py::none(),
           py::arg("probes") = py::none(), py::arg("probe_every") = py::none(),
           py::arg("probe_dt") = py::none())
      .def_static(
          "from_config",
          [](const py::object& config, const py::object& device) {
            // A path, or the config's structure as Python dicts and lists.
            RunConfig c;
            try {
              if (py::isinstance<py::dict>(config)) {
                c = parseConfig(toJson(config, "config").dump(), "config");
              } else if (!config.is_none() && !isTextOrPath(config)) {
                throw ArgumentError(std::string("from_config: expected a path or a dict, got ") +
                                    Py_TYPE(config.ptr())->tp_name);
              } else {
                c = loadConfig(pathText(config, "from_config"));
              }
            } catch (const ArgumentError&) {
              throw;
            } catch (const Error& e) {
              throw ArgumentError(e.what());  // eddy-cli: a --config problem is a usage error
            }
            const std::string dev = optionalText(device, "device");
            return PySimulation(released([&] { return Front::fromConfig(c, dev); }));
          },
          py::arg("config"), py::kw_only(), py::arg("device") = py::none(),
          "A simulation from a config file (eddy-cli run --config), or from a dict of the "
          "same structure. Its sim, scene, n, ic, device, params, obstacles, bodies, probes "
          "and probe cadence are used; the run keys (steps, until, outputs such as probe_out) "
          "are left to the script, in `.config`.")
      .def_static(
          "load",
          [](const py::object& path, const py::object& device, const py::object& probes,
             const py::object& probeEvery, const py::object& probeDt) {
            const std::string p = pathText(path, "load");
            const std::string dev = optionalText(device, "device");
            const auto list = probeList(probes);
            const auto every = optionalCount(probeEvery, "probe_every");
            const auto dt = optionalSeconds(probeDt, "probe_dt");
            return PySimulation(released([&] { return Front::load(p, dev, list, every, dt); }));
          },
          py::arg("path"), py::kw_only(), py::arg("device") = py::none(),
          py::arg("probes") = py::none(), py::arg("probe_every") = py::none(),
          py::arg("probe_dt") = py::none(),
          "Restores a restart snapshot (eddy-cli run --load); on the same device it continues "
          "bit-identically. A snapshot keeps its obstacles, bodies and probes; probes given here "
          "are added (a kept one given again is that one). At the saved cadence (the default) "
          "the probes go on where the saved run's left off: no sample of the restored state.")
      .def(
          "step",
          [](PySimulation& s, const py::object& n) {
            const long long v = wholeNumber(n, "step", kLimitSteps.min, kLimitSteps.max);
            advance(s.core(), uint64_t(v), std::nullopt, kDefaultCheckEvery);
          },
          py::arg("n") = 1,
          "Advances n steps (GIL released; Ctrl-C stops at a step boundary and raises "
          "KeyboardInterrupt). A NaN/inf state raises BlowUpError.")
      .def(
          "run_until",
          [](PySimulation& s, const py::object& until) {
            const double t = seconds(until, "run_until");
            if (!std::isfinite(t) || t < 0 || t > kMaxUntil) {
              std::ostringstream o;
              o << "run_until: " << formatNumber(t) << " is out of range [0, "
                << formatNumber(kMaxUntil) << "]";
              throw ArgumentError(o.str());
            }
            advance(s.core(), 0, t, kDefaultCheckEvery);
          },
          py::arg("t"),
          "Steps until the simulated time reaches t (the first step with time >= t; nothing "
          "if it already has). GIL released; Ctrl-C stops at a step boundary and raises "
          "KeyboardInterrupt.")
      .def_property_readonly(
          "time",
          [](PySimulation& s) {
            Busy busy(s.core());
            return released([&] { return s.front().sim().syncTime(); });
          },
          "Simulated time (SPH: read from the device clock).")
      .def_property_readonly(
          "steps",
          [](PySimulation& s) {
            Busy busy(s.core());
            return s.front().sim().steps();
          },
          "Steps taken since the scene was built (a loaded snapshot keeps its count).")
      .def_property_readonly(
          "n",
          [](PySimulation& s) {
            Busy busy(s.core());
            return s.front().sim().size();
          },
          "Particle count.")
      .def_property_readonly(
          "sim", [](PySimulation& s) { return s.front().spec().sim; }, "The simulation type.")
      .def_property_readonly(
          "scene", [](PySimulation& s) { return s.front().sceneName(); },
          "The scene (\"ic:FILE\" for initial conditions), as eddy-cli reports it.")
      .def_property_readonly(
          "device",
          [](PySimulation& s) { return deviceDict(s.front().sim().context().info()); },
          "The OpenCL device it runs on, as a dict (as eddy.devices()).")
      .def_property_readonly(
          "params", [](PySimulation& s) { return ParamsView{s.shared()}; },
          "The parameters, a dict-like view (eddy.Params).")
      .def_property_readonly(
          "config",
          [](PySimulation& s) -> py::object {
            const auto& c = s.front().config();
            if (!c) return py::none();
            return py::module_::import("json").attr("loads")(configToJson(*c));
          },
          "The config the simulation was made from (from_config), as a dict; else None.")
      .def(
          "positions",
          [](PySimulation& s) {
            Busy busy(s.core());
            ParticleState st = readState(s.core());
            const size_t n = st.size();
            return floatArray(std::move(st.positions), n, 3);
          },
          "Positions, shape (n, 3), float32 as stored, in particle order (as --out).")
      .def(
          "velocities",
          [](PySimulation& s) {
            Busy busy(s.core());
            ParticleState st = readState(s.core());
            return takeField(st, "velocity");
          },
          "Velocities, shape (n, 3), float32 as stored.")
      .def(
          "field",
          [](PySimulation& s, const std::string& name) {
            Busy busy(s.core());
            ParticleState st = readState(s.core());
            return takeField(st, name);
          },
          py::arg("name"),
          "One per-particle field by name (fields()): shape (n,) or (n, k), float32 as stored.")
      .def(
          "fields",
          [](PySimulation& s) {
            Busy busy(s.core());
            if (!s.core().fieldNamesKnown) readState(s.core());
            return s.core().fieldNames;
          },
          "The names of the per-particle fields (\"velocity\", then e.g. \"density\", "
          "\"pressure\" or \"mass\").")
      .def(
          "state",
          [](PySimulation& s) {
            Busy busy(s.core());
            ParticleState st = readState(s.core());
            const size_t n = st.size();
            py::dict out;
            out["step"] = st.step;
            out["time"] = st.time;
            out["positions"] = floatArray(std::move(st.positions), n, 3);
            for (auto& a : st.arrays)
              out[a.name.c_str()] = floatArray(std::move(a.values), n, a.components);
            return out;
          },
          "Everything in one read-back: {'step', 'time', 'positions', and every field}.")
      .def(
          "__getattr__",
          [](py::object self, const std::string& name) -> py::object {
            // s.density(), s.pressure(), s.mass(): the fields by name. Any
            // answer but a field is AttributeError, so that hasattr() is
            // False, never an error: on an object __init__ never made, and
            // while another thread steps it before the names are known.
            const std::string none = "'eddy.Simulation' object has no attribute '" + name + "'";
            PySimulation* s = &self.cast<PySimulation&>();
            if (!s->made()) throw py::attribute_error(none + " (this eddy.Simulation was never made)");
            if (!name.empty() && name[0] != '_') {
              if (!s->core().fieldNamesKnown) {
                std::unique_lock<std::mutex> lock(s->core().mutex, std::try_to_lock);
                if (!lock.owns_lock())
                  throw py::attribute_error(none + " (the field names are not known yet: the simulation is "
                                            "busy in another thread)");
                readState(s->core());
              }
              const auto& names = s->core().fieldNames;
              if (std::find(names.begin(), names.end(), name) != names.end())
                return py::cpp_function([self, name]() { return self.attr("field")(name); });
            }
            throw py::attribute_error(none);
          })
      .def(
          "probes",
          [](PySimulation& s) {
            Busy busy(s.core());
            const auto rows = released([&] { return s.front().probeRows(); });
            const auto& specs = s.front().probes();
            py::dict out;
            std::vector<unsigned long long> step;
            std::vector<double> time;
            std::vector<std::vector<double>> values(specs.size());
            for (const auto& r : rows) {
              step.push_back(r.step);
              time.push_back(r.time);
              for (size_t k = 0; k < specs.size(); ++k)
                values[k].push_back(k < r.values.size() ? r.values[k] : std::nan(""));
            }
            out["step"] = py::array_t<unsigned long long>(py::ssize_t(step.size()), step.data());
            out["time"] = py::array_t<double>(py::ssize_t(time.size()), time.data());
            for (size_t k = 0; k < specs.size(); ++k)
              out[specs[k].name.c_str()] = py::array_t<double>(py::ssize_t(values[k].size()), values[k].data());
            return out;
          },
          "Every probe sample since the simulation was made (the --probe-out CSV's columns): "
          "{'step', 'time', NAME: values (Pa or m), ...} as NumPy arrays, the scene's probes "
          "first; only empty step and time arrays when there are no probes.")
      .def_property_readonly(
          "probe_specs",
          [](PySimulation& s) {
            py::list out;
            for (const auto& p : s.front().probes()) out.append(probeSpecText(p));
            return out;
          },
          "The probes sampled, in column order, as their --probe text.")
      .def(
          "bodies",
          [](PySimulation& s) {
            Busy busy(s.core());
            Simulation& sim = s.front().sim();
            const auto columns = sim.objectColumns();
            const auto rows = released([&] { return sim.objectRows(); });
            py::dict out;
            for (size_t k = 0; k < columns.size(); ++k) {
              std::vector<double> col;
              for (const auto& r : rows) col.push_back(k < r.size() ? r[k] : std::nan(""));
              if (columns[k] == "body") {  // an index: integers, as the CSV writes it
                std::vector<int64_t> idx(col.begin(), col.end());
                out["body"] = py::array_t<int64_t>(py::ssize_t(idx.size()), idx.data());
              } else {
                out[columns[k].c_str()] = py::array_t<double>(py::ssize_t(col.size()), col.data());
              }
            }
            return out;
          },
          "The rigid bodies' state now (the --bodies-out CSV's columns without step,time): "
          "{'body', 'x', 'y', 'z', 'qw', ..., 'vz'} as NumPy arrays, one entry per body ('body' "
          "the index, int64; the others float64); {} without bodies.")
      .def(
          "diagnostics",
          [](PySimulation& s) {
            Busy busy(s.core());
            const auto row = released([&] { return s.front().diagnostics(); });
            py::dict out;
            for (const auto& [k, v] : row) out[k.c_str()] = v;
            return out;
          },
          "The diagnostics row of the current step, as a dict of the --diag CSV's columns.")
      .def(
          "profile",
          [](PySimulation& s, bool reset) {
            Busy busy(s.core());
            Profiler& p = s.front().sim().profiler();
            released([&] {
              p.collect(true);
              return 0;
            });
            py::dict out;
            for (const auto& st : p.stats()) {
              py::dict row;
              row["last_ms"] = st.lastMs;
              row["mean_ms"] = st.meanMs;
              row["min_ms"] = st.minMs;
              row["max_ms"] = st.maxMs;
              row["total_ms"] = st.totalMs;
              row["launches"] = st.count;
              out[st.name.c_str()] = row;
            }
            if (reset) p.reset();
            return out;
          },
          py::kw_only(), py::arg("reset") = false,
          "Device time per kernel (one phase = one kernel) from OpenCL event profiling: "
          "{phase: {last_ms, mean_ms, min_ms, max_ms (over the last 128 launches), total_ms, "
          "launches}} since the simulation was made or the last reset=True; SPH times one step in "
          "profile_every, so total_ms and launches count those steps.")
      .def(
          "save",
          [](PySimulation& s, const py::object& path) {
            const std::string p = pathText(path, "save");
            Busy busy(s.core());
            released([&] {
              s.front().save(p);
              return 0;
            });
          },
          py::arg("path"), "Writes a restart snapshot (eddy-cli run --save).")
      .def(
          "export_vtk",
          [](PySimulation& s, const py::object& dir, bool overwrite) {
            const std::string d = pathText(dir, "export_vtk");
            Busy busy(s.core());
            return released([&] { return s.front().exportVtk(d, overwrite); });
          },
          py::arg("dir"), py::kw_only(), py::arg("overwrite") = false,
          "Writes the current state as a ParaView frame DIR/step_<step>.vtp and lists it in "
          "DIR/eddy.pvd (later calls extend the series); returns the .pvd's path.")
      .def("__repr__", [](PySimulation& s) {
        std::unique_lock<std::mutex> lock(s.core().mutex, std::try_to_lock);
        if (!lock.owns_lock())
          return "<eddy.Simulation sim=" + s.front().spec().sim + " (running)>";
        std::ostringstream o;
        o << "<eddy.Simulation sim=" << s.front().spec().sim << " scene=" << s.front().sceneName()
          << " n=" << s.front().sim().size() << " steps=" << s.front().sim().steps() << " on "
          << s.front().sim().context().info().name << ">";
        return o.str();
      });

  // A second __init__ on a made simulation: pybind11 ignores it (the object
  // stays what it was, silently, whatever the arguments); here it is an
  // error. A wrapper in Python: pybind11 treats any C++ function named
  // __init__ as a constructor and would skip it the same way. The class's
  // own __init__ runs otherwise, its docstring (the signature) kept.
  m.def(
      "_made", [](py::handle self) { return self.cast<PySimulation&>().made(); },
      "Whether an eddy.Simulation was made (internal: the __init__ guard).");
  py::exec(R"(
def _checked(init):
    def __init__(self, *args, **kwargs):
        if _made(self):
            raise Error("eddy.Simulation.__init__: this simulation is already made; create a new "
                        "eddy.Simulation(...) instead of calling __init__ again")
        init(self, *args, **kwargs)
    __init__.__doc__ = init.__doc__
    __init__.__qualname__ = "Simulation.__init__"
    return __init__
Simulation.__init__ = _checked(Simulation.__init__)
del _checked
)",
           m.attr("__dict__"));
}
