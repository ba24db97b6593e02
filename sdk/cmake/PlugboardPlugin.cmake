# plugboard_add_plugin(<name> SOURCES <file>... [OUTPUT_DIRECTORY <dir>])
#
# Builds a plugboard plugin: a loadable module named exactly <name>.so, linked against the
# SDK, with hidden visibility and -fno-gnu-unique so that the runtime can unload it again
# (glibc never unloads a library that holds STB_GNU_UNIQUE symbols). The output goes to
# OUTPUT_DIRECTORY, else PLUGBOARD_PLUGIN_OUTPUT_DIR when set, else the usual place.
function(plugboard_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "OUTPUT_DIRECTORY" "SOURCES")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "plugboard_add_plugin(${name}): SOURCES is required")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  if(TARGET plugboard::sdk)
    target_link_libraries(${name} PRIVATE plugboard::sdk)
  else()
    target_link_libraries(${name} PRIVATE plugboard_sdk)
  endif()
  target_compile_features(${name} PRIVATE cxx_std_20)
  target_compile_options(${name} PRIVATE
    $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-fno-gnu-unique>)
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    OUTPUT_NAME ${name}
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(PLUGBOARD_PLUGIN_OUTPUT_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PLUGBOARD_PLUGIN_OUTPUT_DIR})
  endif()
endfunction()

# plugboard_add_deployer(<name> SOURCES <file>... [OUTPUT_DIRECTORY <dir>])
#
# Builds a plugboard deployer module: a plugin-shaped module (as plugboard_add_plugin()
# builds) linked with the host kit, plugboard::host (plugboard/host/*.h: the protocol,
# option parsing, loading a native plugin, spawning a child). The kit is compiled with
# hidden visibility and its symbols are kept local, so the module exports only its entry
# point (and the standard library's own template instantiations). Put the module in a
# directory given to plugboard's --deployers (docs/deployers.md).
function(plugboard_add_deployer name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "OUTPUT_DIRECTORY" "SOURCES")
  if(ARG_OUTPUT_DIRECTORY)
    plugboard_add_plugin(${name} SOURCES ${ARG_SOURCES} OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  else()
    plugboard_add_plugin(${name} SOURCES ${ARG_SOURCES})
  endif()
  if(TARGET plugboard::host)
    target_link_libraries(${name} PRIVATE plugboard::host)
  else()
    target_link_libraries(${name} PRIVATE plugboard_host)
  endif()
  # What the static libraries bring keeps out of the dynamic symbol table too, even the
  # exception types Boost.DLL declares visible.
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${name} PRIVATE "LINKER:--exclude-libs,ALL")
  endif()
endfunction()
