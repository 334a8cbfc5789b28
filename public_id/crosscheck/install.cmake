# Copies the cross-check from SRC to DEST and runs `npm ci` there (the pinned lock file).
file(MAKE_DIRECTORY ${DEST})
file(COPY ${SRC}/package.json ${SRC}/package-lock.json ${SRC}/check.mjs DESTINATION ${DEST})
execute_process(COMMAND ${NPM} ci --no-audit --no-fund WORKING_DIRECTORY ${DEST} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "npm ci failed (${rc})")
endif()
