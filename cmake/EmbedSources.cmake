# eddy_embed_sources(<out.cpp> <namespace> <files...>)
# Writes a C++ source that holds every file as a string, looked up by file name
# through `std::string_view <namespace>::source(std::string_view name)`.
# Kernels and shaders are thereby part of the binary: it runs from any folder.
function(eddy_embed_sources out ns)
  set(files ${ARGN})
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNS=${ns} "-DFILES=${files}"
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/EmbedSourcesScript.cmake
    DEPENDS ${files} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/EmbedSourcesScript.cmake
    COMMENT "Embedding ${ns} sources"
    VERBATIM)
endfunction()
