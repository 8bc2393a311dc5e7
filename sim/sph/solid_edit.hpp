// solid_edit.hpp: editing the solids of a running SPH simulation (issue 12,
// the desktop app's "Solids" panel and shift + double-click drops).
//
// The mechanism is the restart snapshot's: the running simulation's exact
// state (SphSim::saveState, in memory) is decoded (decodeSphState), its
// solids are replaced by the edited list here, and a new SphSim is built from
// it and restored (SphSim::withSolids, sim/sph/solid_edit.cpp). Everything a
// snapshot carries survives the edit bit for bit: fluid positions and
// velocities, the clock, the solver's state, the bodies' poses and momenta.
// Fluid particles that a new or moved solid would enclose are removed.
#pragma once

#include "sph.hpp"

#include <vector>

namespace eddy {

// Host only: edits a decoded state in place.
//  - the static solids become `obstacles` (in that order), the old bodies'
//    solids follow unchanged, then one solid per body of `addBodies`
//    (setup.bodies grows; st.bodies, the device records, is left to the caller:
//    the new bodies' records come from building the simulation);
//  - every fluid particle whose centre lies inside, or closer than
//    `clearance` (more beside a part too thin for the boundary `inset`:
//    dropInsideSolids), to a solid that is new (an obstacle not among the old
//    static solids, or an added body) is removed from every per-particle
//    array (setup.particles, pos, vel, ids, kdiv, kden, rho); the ids of the
//    kept particles are renumbered 0 .. n'-1 keeping their order.
// Returns the number of particles removed. Throws eddy::Error (the state
// unchanged) when a shape cannot be built or no fluid particle would be left.
size_t editSphSolids(SphState& st, const std::vector<ShapeSpec>& obstacles,
                     const std::vector<BodySpec>& addBodies, double clearance, double inset);

}  // namespace eddy
