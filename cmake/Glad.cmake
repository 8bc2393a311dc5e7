# Generates the OpenGL loader at configure time with Debian's glad 2
# (python3-glad) into the build folder; the generated code is never committed.
# Creates the static library eddy_glad (include <glad/gl.h>; <glad/egl.h> for
# the app's --offscreen EGL context: glad's own loader opens libEGL at run
# time, so nothing links against libEGL).
# No --extensions list: every GL extension is generated, which the external
# buffer path (issue 15) relies on: GL_EXT_memory_object, GL_EXT_memory_object_fd,
# GL_EXT_semaphore and GL_EXT_semaphore_fd (render/external_buffers.cpp).
find_program(EDDY_GLAD_EXECUTABLE glad REQUIRED
  DOC "glad 2 OpenGL loader generator (Debian: python3-glad)")
set(EDDY_GLAD_DIR ${CMAKE_BINARY_DIR}/glad)
set(_eddy_glad_cmd ${EDDY_GLAD_EXECUTABLE} --api gl:core=3.3,egl=1.5 --out-path ${EDDY_GLAD_DIR}
    --reproducible c --loader)
if(NOT EXISTS ${EDDY_GLAD_DIR}/src/gl.c OR NOT EXISTS ${EDDY_GLAD_DIR}/include/glad/gl.h
   OR NOT "${_eddy_glad_cmd}" STREQUAL "${EDDY_GLAD_GENERATED_WITH}")
  message(STATUS "Generating the OpenGL/EGL loader: glad --api gl:core=3.3,egl=1.5 --reproducible c --loader")
  file(REMOVE_RECURSE ${EDDY_GLAD_DIR})
  execute_process(COMMAND ${_eddy_glad_cmd}
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0 OR NOT EXISTS ${EDDY_GLAD_DIR}/src/gl.c OR NOT EXISTS ${EDDY_GLAD_DIR}/src/egl.c)
    message(FATAL_ERROR "glad failed (exit ${_rc}):\n${_out}\n${_err}")
  endif()
  set(EDDY_GLAD_GENERATED_WITH "${_eddy_glad_cmd}" CACHE INTERNAL "glad command line")
endif()
add_library(eddy_glad STATIC ${EDDY_GLAD_DIR}/src/gl.c ${EDDY_GLAD_DIR}/src/egl.c)
target_include_directories(eddy_glad SYSTEM PUBLIC ${EDDY_GLAD_DIR}/include)
target_link_libraries(eddy_glad PUBLIC ${CMAKE_DL_LIBS})
