# Included by the install step (tools/CMakeLists.txt) with PLUGBOARD_CLI (the plugboard
# binary), PLUGBOARD_GENERATED_DIR (<build>/generated), PLUGBOARD_DOC_DIR and
# PLUGBOARD_MAN_DIR (the installed documentation and man1 directories): writes the man pages
# citing PLUGBOARD_DOC_DIR (`plugboard __docs --doc-dir`), compresses them as Debian wants,
# and installs them with plugboard-host's page from the build.
set(staging "${PLUGBOARD_GENERATED_DIR}/installed")
file(REMOVE_RECURSE "${staging}")
execute_process(COMMAND "${PLUGBOARD_CLI}" __docs "${staging}" --doc-dir "${PLUGBOARD_DOC_DIR}"
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${PLUGBOARD_CLI} __docs failed: ${result}")
endif()
# plugboard-host's page, made from its --help (HostManPage.cmake), with what it cites of
# docs/ made the installed path (roff: a hyphen is \-).
file(READ "${PLUGBOARD_GENERATED_DIR}/man1/plugboard-host.1" host_page)
# The replacement of REGEX REPLACE reads backslashes as escapes: each of roff's is doubled
# there (a prefix with a hyphen, /tmp/x-y, gave "Unknown escape \-").
string(REPLACE "-" "\\-" doc_dir_roff "${PLUGBOARD_DOC_DIR}")
string(REPLACE "\\" "\\\\" doc_dir_replacement "${doc_dir_roff}")
string(REGEX REPLACE "(^|[^A-Za-z0-9/_-])docs/" "\\1${doc_dir_replacement}/docs/" host_page
       "${host_page}")
file(WRITE "${staging}/man1/plugboard-host.1" "${host_page}")
file(GLOB pages "${staging}/man1/*.1")
execute_process(COMMAND gzip -9nf ${pages} RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "gzip of the man pages failed: ${result}")
endif()
file(GLOB pages "${staging}/man1/*.1.gz")
file(INSTALL ${pages} DESTINATION "${PLUGBOARD_MAN_DIR}" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
