#include "demo.hpp"

#include "defaults.hpp"
#include "factory.hpp"
#include "session.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <optional>
#include <sstream>
#include <vector>

namespace eddy {

namespace {

long column(const std::vector<std::string>& cols, const std::string& name) {
  const auto it = std::find(cols.begin(), cols.end(), name);
  return it == cols.end() ? -1 : long(it - cols.begin());
}

std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

struct Mark {
  double time, wall;
  std::optional<double> front;
};

}  // namespace

int runHeadlessDemo(std::ostream& out, std::ostream& err, const DemoOptions& o) {
  try {
    Context ctx(o.device);
    const bool gpu = (ctx.info().type & CL_DEVICE_TYPE_GPU) != 0;
    DemoRun run = headlessDemoRun(gpu);
    if (o.until > 0) run.until = o.until;
    Params params(paramDecl(run.spec.sim));
    for (const auto& s : run.sets) params.setAssignment(s);
    std::vector<std::string> args = headlessDemoArgs(gpu);
    if (o.until > 0) {
      const auto u = std::find(args.begin(), args.end(), "--until");
      std::ostringstream v;
      v << o.until;
      if (u != args.end() && u + 1 != args.end()) *(u + 1) = v.str();
    }
    auto sim = makeSimulation(ctx, run.spec, params);
    const std::string solver = params.find("solver") ? " (" + params.getChoice("solver") + ")" : "";
    err << "eddy: headless demo on " << ctx.info().name << " (" << ctx.info().platformName << "): the "
        << run.spec.sim << solver << " scene '" << run.spec.scene << "', " << sim->size()
        << " particles, to t = " << run.until << " s\n"
        << "eddy: the same run: eddy-cli " << joined(args) << '\n';

    SessionSettings ss;
    if (run.until > 0) ss.until = run.until;
    else ss.steps = run.steps;
    ss.checkEvery = 100;
    Session session(*sim, ss);
    const auto cols = sim->diagColumns();
    const long frontCol = column(cols, "front_x");
    auto frontOf = [&](const std::vector<double>& row) -> std::optional<double> {
      if (frontCol < 0 || size_t(frontCol) >= row.size()) return std::nullopt;
      return row[size_t(frontCol)];
    };
    session.begin();
    const double t0 = sim->syncTime();
    std::vector<Mark> marks{{t0, 0.0, frontOf(session.firstRow())}};
    // Progress every tenth of the run: a diagnostics row (one read-back) for the front.
    const double every = run.until > 0 ? run.until / 10 : 0;
    double next = t0 + every;
    auto progress = [&](uint64_t step) {
      if (every <= 0 || sim->time() + 1e-12 < next) return;  // time(): no device read
      const std::vector<double> row = sim->diagRow();
      const double t = sim->time();
      const double wall = std::chrono::duration<double>(Session::Clock::now() - session.started()).count();
      marks.push_back({t, wall, frontOf(row)});
      err << std::fixed << std::setprecision(2) << "  t = " << t << " s  step " << step;
      if (marks.back().front) err << std::setprecision(3) << "  front x = " << *marks.back().front << " m";
      err << std::setprecision(1) << "  " << 100.0 * (t - t0) / (run.until - t0) << "% done, "
          << wall << " s" << std::defaultfloat << '\n';
      next = t0 + every * (std::floor((t - t0) / every + 1e-9) + 1);
    };
    const SessionEnd end = session.run({}, progress);
    const std::vector<double>& last = session.end();
    const double t1 = sim->syncTime(), simulated = t1 - t0, wall = end.wallSeconds;
    const uint64_t steps = session.stepsRun();
    const std::optional<double> front = frontOf(last);
    if (front) marks.push_back({t1, wall, front});

    out << "eddy headless demo: the " << run.spec.sim << solver << " scene '" << run.spec.scene
        << "', " << sim->size() << " particles, t = " << t0 << " to " << std::setprecision(4) << t1
        << " s\n";
    if (front && marks.front().front) {
      // The SPH dam break: where the surge front went, and when it reached the far wall.
      const auto dom = sim->domain();
      const double far = dom ? double(dom->hi[0]) : 0.0;
      const double slack = 3.0 * double(sim->particleRadius());  // 1.5 spacings
      std::optional<double> hit;
      for (const auto& m : marks)
        if (!hit && m.front && dom && *m.front >= far - slack) hit = m.time;
      out << std::setprecision(3) << "what happened: the water column collapsed; its surge front ran from x = "
          << *marks.front().front << " m to x = " << *front << " m";
      if (dom) out << " of the " << far << " m tank";
      if (hit) out << ", reaching the far wall by t = " << std::setprecision(2) << *hit << " s";
      out << ".\n  front x (m) at t (s):";
      for (const auto& m : marks)
        if (m.front) out << std::fixed << std::setprecision(2) << "  " << m.time << ": " << std::setprecision(3) << *m.front;
      out << std::defaultfloat << '\n';
    }
    out << std::setprecision(3) << "real time: " << simulated << " simulated s in " << wall
        << " s of wall time = " << (wall > 0 ? simulated / wall : 0.0) << "x real time ("
        << steps << " steps, " << (wall > 0 ? double(steps) / wall : 0.0) << " steps/s, mean dt "
        << (steps ? simulated / double(steps) : 0.0) << " s) on " << ctx.info().name << '\n';
    for (const auto& w : sim->runWarnings(last)) out << "warning: " << w << '\n';
    std::vector<std::string> exportArgs = args;
    exportArgs.insert(exportArgs.end(), {"--export", "eddy-demo", "--export-every", "10"});
    out << "to see it:\n"
        << "  eddy                 on a machine with a display: the desktop app opens this scene\n"
        << "                       and runs it in real time (as fast as the device allows)\n"
        << "  eddy-cli " << joined(exportArgs) << "\n"
        << "                       writes eddy-demo/eddy.pvd: open it in ParaView and press Play\n";
    return 0;
  } catch (const BlowUpError& e) {
    err << "eddy: error: " << e.what() << '\n';
  } catch (const Error& e) {
    err << "eddy: error: " << e.what() << '\n';
  } catch (const cl::Error& e) {
    err << "eddy: OpenCL error: " << describe(e) << '\n';
  }
  return 1;
}

}  // namespace eddy
