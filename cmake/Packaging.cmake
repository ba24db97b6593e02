# Debian packages made by CPack's DEB generator, one per install component:
#   plugboard     (component runtime): the CLI, plugboard-host, the deployers in
#                 <prefix>/lib/plugboard/deployers, the bundled example plugins in the system
#                 plugin directory <prefix>/lib/plugboard/plugins (core/base/defaults.h,
#                 kSystemPluginDir), the man pages and the completions, the README, docs/,
#                 examples/ and plugins/ (the sources, and the Python, Arcaflow and Argo
#                 plugins examples/registry.toml names) in <prefix>/share/doc/plugboard, the
#                 configuration /etc/plugboard/plugboard.toml (a conffile) and
#                 plugboard.service (serve, installed disabled), with maintainer scripts
#                 that leave nothing behind (cmake/debian/runtime/);
#   plugboard-dev (component sdk): the SDK and host kit headers, the host kit library, the
#                 CMake package, and the Python SDK in /usr/lib/python3/dist-packages.
# tools/package.sh configures a build for /usr and runs cpack; docs/decisions.md says why
# the packages look like this.

# The example plugins the system plugin directory holds: those examples/*.toml use (sleep
# for pipeline.toml), and fail, the plugin that fails on request.
set(PLUGBOARD_PACKAGED_PLUGINS hello echo fail multi legacy sleep)
install(TARGETS ${PLUGBOARD_PACKAGED_PLUGINS}
        LIBRARY DESTINATION lib/plugboard/plugins COMPONENT runtime)

# The documentation and the examples, laid out as in the source tree so that the README's
# and the docs' links hold and examples/registry.toml's paths (../plugins/python/...) reach
# the example Python, Arcaflow and Argo plugins: plugboard run
# /usr/share/doc/plugboard/examples/pipeline.toml works from the package alone. The man
# pages cite <prefix>/share/doc/plugboard/docs (tools/CMakeLists.txt).
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
foreach(dir docs examples plugins)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/${dir}
          COMPONENT runtime PATTERN __pycache__ EXCLUDE)
endforeach()

# The configuration the service runs with (an absolute destination: CPack's DEB generator
# installs with DESTDIR, so it lands in the package's /etc), and the service, in
# /usr/lib/systemd/system (where lintian wants units; systemd reads it on Debian 12 too).
# The configuration is the package's only: CPack installs component by component, so it
# is there, but a whole install (`cmake --install build --prefix DIR`) leaves it out, where
# its absolute path wrote this machine's /etc/plugboard as root and failed as a user.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/plugboard.toml DESTINATION /etc/plugboard
        COMPONENT runtime EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/plugboard.service
        DESTINATION lib/systemd/system COMPONENT runtime)

# The Python SDK where Debian's python3 imports modules from (for /usr: /usr/lib/python3/
# dist-packages); the runtime keeps its own copy next to the python deployer.
file(GLOB plugboard_python_sdk_files ${PROJECT_SOURCE_DIR}/sdk/python/plugboard_sdk/*.py)
install(FILES ${plugboard_python_sdk_files}
        DESTINATION lib/python3/dist-packages/plugboard_sdk COMPONENT sdk)

# Each package's copyright and changelog (compressed, as Debian policy wants) in
# share/doc/<package>. The version has no Debian revision: a native package's
# changelog.gz.
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog
               ${CMAKE_BINARY_DIR}/debian/changelog @ONLY)
execute_process(COMMAND gzip -9nf ${CMAKE_BINARY_DIR}/debian/changelog
                RESULT_VARIABLE plugboard_gzip_result)
if(NOT plugboard_gzip_result EQUAL 0)
  message(FATAL_ERROR "gzip of the Debian changelog failed: ${plugboard_gzip_result}")
endif()
foreach(component_package runtime:plugboard sdk:plugboard-dev)
  string(REPLACE ":" ";" pair ${component_package})
  list(GET pair 0 component)
  list(GET pair 1 package)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright ${CMAKE_BINARY_DIR}/debian/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component})
endforeach()

# lintian's overrides of the runtime package, each with its reason in the file.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME plugboard COMPONENT runtime)

# Everything the two packages install, so that tools/package.sh builds only that (not the
# benchmarks or tests).
add_custom_target(plugboard_packaged)
add_dependencies(plugboard_packaged plugboard plugboard-host plugboard_docs plugboard_host
                 plugboard_python_sdk ${PLUGBOARD_PACKAGED_PLUGINS} ${PLUGBOARD_DEPLOYER_TARGETS})
if(TARGET plugboard_python_embedded)
  add_dependencies(plugboard_packaged plugboard_python_embedded)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME plugboard)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "plugboard maintainers <maintainers@users.noreply.a-seed-24805e09.example>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime sdk)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME plugboard)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "python3, podman")
# Maintainer scripts (mode 0755 in the package) and the conffile list.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/cmake/debian/runtime/conffiles ${PROJECT_SOURCE_DIR}/cmake/debian/runtime/postinst
    ${PROJECT_SOURCE_DIR}/cmake/debian/runtime/prerm ${PROJECT_SOURCE_DIR}/cmake/debian/runtime/postrm)
set(CPACK_DEBIAN_SDK_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/debian/sdk/prerm)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "runtime for workflow executor plugins
plugboard hosts workflow executor plugins (shared objects built against its
SDK), routes workflow steps to them, runs workflow files, and serves Argo's
executor-plugin protocol. Python and container plugins are reached through
the bundled deployer modules.")
set(CPACK_DEBIAN_SDK_PACKAGE_NAME plugboard-dev)
set(CPACK_DEBIAN_SDK_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_SDK_PACKAGE_DEPENDS "nlohmann-json3-dev (>= 3.10), libboost-dev (>= 1.74)")
set(CPACK_DEBIAN_SDK_PACKAGE_RECOMMENDS "plugboard (= ${PROJECT_VERSION}), cmake (>= 3.25), python3")
set(CPACK_DEBIAN_SDK_DESCRIPTION "SDK for plugboard plugins and deployers
The headers of the plugboard plugin SDK and of the host kit for deployers, the
host kit library, the CMake package (find_package(plugboard),
plugboard_add_plugin()), and the Python SDK for Python plugins.")
include(CPack)
