# cmake -DCOMPILER=<c++> -DFLAGS=<file> -DSCRATCH=<dir> -DFOLDER=<dir> -DINCLUDE=<header>
#       -DEXPECT=<compiles|fails> -P compile_probe.cmake
#
# Compiles one file placed in <SCRATCH>/<FOLDER> (as a file of that folder of the source
# tree is: core/launch, tools/plugboard) that includes <INCLUDE>, with the flags a target of
# the build compiles that folder with (FLAGS, one per line, written at generate time). With
# EXPECT=fails it passes only when the compiler cannot find the header; with
# EXPECT=compiles only when the file compiles, which shows the flags are those of a working
# build (so that a failure above is the view's doing, not a broken command).
foreach(var COMPILER FLAGS SCRATCH FOLDER INCLUDE EXPECT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "compile_probe.cmake: -D${var}=... is missing")
  endif()
endforeach()
string(MAKE_C_IDENTIFIER "${FOLDER}_${INCLUDE}_${EXPECT}" probe)
set(dir ${SCRATCH}/${probe}/${FOLDER})
file(REMOVE_RECURSE ${SCRATCH}/${probe})
file(MAKE_DIRECTORY ${dir})
file(WRITE ${dir}/probe.cc "#include \"${INCLUDE}\"\nint main() { return 0; }\n")
file(STRINGS ${FLAGS} flags)
execute_process(COMMAND ${COMPILER} ${flags} -fsyntax-only ${dir}/probe.cc
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(EXPECT STREQUAL "fails")
  if(result EQUAL 0)
    message(FATAL_ERROR "${FOLDER} includes ${INCLUDE} and it compiled: the layer rule is not enforced")
  endif()
  string(FIND "${out}" "${INCLUDE}" named)
  if(named EQUAL -1 OR NOT out MATCHES "No such file or directory|file not found")
    message(FATAL_ERROR "${FOLDER} including ${INCLUDE} failed, but not for want of the header:\n${out}")
  endif()
  message(STATUS "${FOLDER} cannot include ${INCLUDE}, as it should not:\n${out}")
elseif(EXPECT STREQUAL "compiles")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${FOLDER} including ${INCLUDE} did not compile:\n${out}")
  endif()
else()
  message(FATAL_ERROR "compile_probe.cmake: EXPECT must be compiles or fails, not '${EXPECT}'")
endif()
