// shape_spec_io.hpp: shape specs as users write them (issue 12): on the
// command line (`--obstacle SPEC`) and in config files (JSON objects). The
// syntax is documented in docs/USAGE.md, "Obstacles and bodies (issue 12)".
#pragma once

#include "shape.hpp"

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace eddy {

// Command-line syntax: KIND followed by ":KEY=VALUE[,VALUE...]" groups.
//   box:size=X,Y,Z        (one value: a cube)
//   sphere:d=D
//   cylinder:d=D:h=H      (axis along local y)
//   mesh:file=PATH[:scale=S | :scale=SX,SY,SZ]
// and for every kind pos=X,Y,Z (m, default 0) and rot=A,B,C (degrees,
// default 0; R = Rz(C) Ry(B) Rx(A)). Long names are accepted too: diameter,
// height, position, rotation. Example:
//   box:size=0.161,0.161,0.403:pos=0.744,0.0805,0.4965:rot=0,30,0
// Throws eddy::Error naming the spec and the problem (unknown kind or key, a
// key given twice, a missing key, a wrong number of values, a value that is
// not a finite number, a size <= 0). The mesh file is not opened here.
ShapeSpec parseShapeSpec(std::string_view text);
// A mesh spec whose relative file path is made absolute from the current
// folder (anything else as it is): a snapshot records the path, and a --load
// from another folder must still find the file. eddy-cli's --obstacle and
// --body and the Python module's solids.
ShapeSpec withAbsoluteMeshPath(ShapeSpec s);
// The same, also accepting the caller's own keys (e.g. "density" for a body):
// their raw values are returned in `extras` (key -> text after '=').
ShapeSpec parseShapeSpec(std::string_view text, const std::vector<std::string>& extraKeys,
                         std::map<std::string, std::string>& extras);
// A spec in the command-line syntax (shortest round-trip numbers):
// parseShapeSpec(shapeSpecToString(s)) == s for a spec from parseShapeSpec.
std::string shapeSpecToString(const ShapeSpec& spec);

// Config-file syntax: a JSON object
//   {"shape": "box", "size": [X, Y, Z], "position": [X, Y, Z], "rotation": [A, B, C]}
//   {"shape": "sphere", "diameter": D, ...}
//   {"shape": "cylinder", "diameter": D, "height": H, ...}
//   {"shape": "mesh", "file": "PATH", "scale": S or [SX, SY, SZ], ...}
// position and rotation (degrees) are optional. An unknown key, a key the
// kind does not use, a wrong type, a non-finite number or a size <= 0 throws
// eddy::Error "WHERE: key 'KEY': ...". A relative mesh path is resolved
// against `baseDir` (the config file's folder) when that is not empty.
// `extraKeys` are keys the caller reads itself from the same object (e.g.
// "density"): they are allowed and left alone.
ShapeSpec shapeSpecFromJson(const nlohmann::json& j, const std::string& where, const std::string& baseDir = {},
                            const std::vector<std::string>& extraKeys = {});
// The object shapeSpecFromJson reads (only the keys of the spec's kind);
// shapeSpecFromJson(shapeSpecToJson(s), ...) == s for a spec it produced.
nlohmann::json shapeSpecToJson(const ShapeSpec& spec);

}  // namespace eddy
