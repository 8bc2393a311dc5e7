// body_spec.hpp: rigid bodies as users declare them (issue 12): a shape spec
// (sim/geometry/shape_spec_io.hpp) plus a density or a mass and a motion, on
// the command line (`--body SPEC`, repeatable) and in config files ("bodies":
// [ {...} ]). Host only; the device side is sim/sph/bodies.hpp. Syntax in
// docs/USAGE.md, "Rigid bodies".
#pragma once

#include "shape.hpp"

#include "eddy_shared.h"

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace eddy {

enum class BodyMotion : unsigned {
  Floating = EDDY_BODY_FLOATING,
  Piston = EDDY_BODY_PISTON,
  Rotate = EDDY_BODY_ROTATE,
};
std::string bodyMotionName(BodyMotion m);  // "floating", "piston", "rotate"

// x(t) = x0 + amplitude sin(2 pi t / period + phase) along `axis`; x0 = the
// body's declared centroid; the orientation stays as declared.
struct PistonLaw {
  Vec3d axis{1, 0, 0};
  double amplitude = 0, period = 1, phase = 0;  // m, s, rad
  bool operator==(const PistonLaw&) const = default;
};
// Rotation at `speed` rad/s (right-handed about `axis`) about the axis
// through `point`; at t = 0 the body is where it was declared.
struct RotateLaw {
  Vec3d axis{0, 0, 1}, point{0, 0, 0};
  double speed = 0;
  bool operator==(const RotateLaw&) const = default;
};

struct BodySpec {
  ShapeSpec shape;       // shape, size, pose (position of the shape's origin, rotation)
  double density = 0;    // kg/m^3; 0 = from mass
  double mass = 0;       // kg; 0 = from density (one of the two for a floating body)
  BodyMotion motion = BodyMotion::Floating;
  PistonLaw piston;
  RotateLaw rotate;
};
bool operator==(const BodySpec& a, const BodySpec& b);

// The mass of a body of this volume (m^3): mass, else density x volume; a
// kinematic body without either gets the density of water (its mass only
// scales the contact impulses it never receives).
double bodyMass(const BodySpec& b, double volume);

// The highest speed a kinematic body's points reach while they lie in
// `box` (world frame): a piston's 2 pi |amplitude| / period; a rotating
// body's |speed| times the farthest corner of `box` from its axis (the
// distance to a line is convex, so a box's farthest point is a corner; a
// zero axis counts the distance to `point`); 0 for a floating body. With
// the body's own bounds it is the body's peak speed; with the tank's, a
// bound on it for any body in the tank. `arm`, if given, gets that corner's
// distance (0 unless rotating).
double kinematicPeakSpeed(const BodySpec& b, const Aabb& box, double* arm = nullptr);

// Command-line syntax: a shape spec with the extra keys
//   density=RHO | mass=M                  (floating: one of them)
//   motion=floating (default) | piston | rotate
//   piston:  amplitude=A, period=T [, phase=RAD] [, axis=X,Y,Z (default 1,0,0)]
//   rotate:  speed=OMEGA (rad/s) [, axis=X,Y,Z (default 0,0,1)] [, point=X,Y,Z (default pos)]
// e.g. box:size=0.1,0.05,0.1:pos=0.5,0.2,0.15:density=500
//      box:size=0.02,0.3,0.28:pos=0.05,0.15,0.15:motion=piston:amplitude=0.03:period=1
// Throws eddy::Error naming the spec and the problem.
BodySpec parseBodySpec(std::string_view text);
std::string bodySpecToString(const BodySpec& b);

// Config syntax: a shape object (shapeSpecFromJson) with "density" or "mass"
// and "motion": "floating" | {"piston": {"amplitude": A, "period": T,
// "phase": RAD, "axis": [X, Y, Z]}} | {"rotate": {"speed": OMEGA, "axis":
// [X, Y, Z], "point": [X, Y, Z]}}. Errors "WHERE: key 'KEY': ...".
BodySpec bodySpecFromJson(const nlohmann::json& j, const std::string& where,
                          const std::string& baseDir = {});
nlohmann::json bodySpecToJson(const BodySpec& b);
// A body as a restart snapshot stores it (bodySpecToJson): bodySpecFromJson,
// except that a kinematic (piston, rotate) body's density or mass is dropped
// instead of refused. Snapshots written before eddy refused them hold such
// bodies, and the value never had an effect (the snapshot's body state
// holds the mass the run used).
BodySpec bodySpecFromSnapshotJson(const nlohmann::json& j, const std::string& where);

}  // namespace eddy
