include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(snowid_installed_targets snowid_core snowid_testing)
if(TARGET snowid_etcd)
  list(APPEND snowid_installed_targets snowid_etcd)
  set(SNOWID_WITH_ETCD ON)
else()
  set(SNOWID_WITH_ETCD OFF)
endif()
if(TARGET snowid_public_id)
  list(APPEND snowid_installed_targets snowid_public_id)
  set(SNOWID_WITH_PUBLIC_ID ON)
else()
  set(SNOWID_WITH_PUBLIC_ID OFF)
endif()
if(TARGET snowid_sqlite AND TARGET snowid_postgres)
  list(APPEND snowid_installed_targets snowid_sqlite snowid_postgres)
  set(SNOWID_WITH_SEQUENCES ON)
else()
  set(SNOWID_WITH_SEQUENCES OFF)
endif()
install(TARGETS ${snowid_installed_targets} EXPORT snowidTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/snowid DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT snowidTargets NAMESPACE snowid:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/snowid)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/snowidConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/snowidConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/snowid)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/snowidConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/snowidConfig.cmake ${PROJECT_BINARY_DIR}/snowidConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/snowid)

# The .pc file finds its prefix relative to itself, so the install tree can move.
file(RELATIVE_PATH SNOWID_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file(${PROJECT_SOURCE_DIR}/cmake/snowid.pc.in ${PROJECT_BINARY_DIR}/snowid.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/snowid.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(TARGET snowid_cli)
  install(TARGETS snowid_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET snowidd)
  install(TARGETS snowidd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
